//! What a replay reads and never changes: the trace, its path through the model, the profile,
//! the names the runner gives the calls, and which step is being realised. Every step reads it;
//! only the driver's loop moves [`Script::at`] on.

use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Profile, State, Tasks};

/// The trace being replayed and what follows from it.
pub(crate) struct Script<'t> {
    /// The trace.
    pub trace: &'t TraceFile,
    /// Its name in reports.
    pub name: String,
    /// The trace's states as the model has them (empty if the trace is not a path of the model).
    pub path: Vec<State>,
    /// Index of the first state of `path` where the trace's property fails.
    pub first_violation: Option<usize>,
    /// The profile the trace was checked under.
    pub profile: Profile,
    /// What makes this run's call tags and keys its own.
    nonce: String,
    /// Index of the step being realised (the number of steps done).
    pub at: usize,
}

impl<'t> Script<'t> {
    /// The script of `trace` (named `name`) under `profile`.
    pub fn new(trace: &'t TraceFile, name: &str, profile: Profile) -> Script<'t> {
        let nonce = format!(
            "mcp-once-{:x}-{:x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        );
        let valid = trace.validate(name, &profile).ok();
        let first_violation = valid
            .as_ref()
            .and_then(|v| crate::replay::judge::first_violation(&v.model, trace.property, &v.path.states));
        let path = valid.map(|v| v.path.states).unwrap_or_default();
        Script { trace, name: name.into(), path, first_violation, profile, nonce, at: 0 }
    }

    /// The tag of logical call `call` (what `{{call}}` in the arguments becomes).
    pub fn call_tag(&self, call: u8) -> String {
        format!("{}-c{call}", self.nonce)
    }

    /// The idempotency key the runner sends for key number `key` of `call` (the model's key
    /// counter, from 1): also the outcome query's `taskId` and what the ledger records.
    pub fn key_name(&self, call: u8, key: u8) -> String {
        format!("{}-k{key}", self.call_tag(call))
    }

    /// Whether `action` is among the trace's steps before the one being realised (all of them
    /// once the last is done).
    pub fn done_in_trace(&self, action: &Action) -> bool {
        self.trace.actions[..self.at.min(self.trace.actions.len())].contains(action)
    }

    /// Whether the trace's calls are task-augmented (`--tasks augmented`).
    pub fn task_calls(&self) -> bool {
        self.trace.config.tasks == Tasks::Augmented
    }

    /// Whether the trace's server read attempt `(call, attempt)`'s request (on any instance)
    /// before the step being realised.
    pub fn received_in_trace(&self, call: u8, attempt: u8) -> bool {
        self.trace.actions[..self.at.min(self.trace.actions.len())]
            .iter()
            .any(|x| matches!(*x, Action::ServerReceive { call: c, attempt: t, .. } if (c, t) == (call, attempt)))
    }

    /// The step being realised (none once the last is done).
    pub fn realising(&self) -> Option<&Action> {
        self.trace.actions.get(self.at)
    }

    /// Whether `action` is among the trace's steps after the one being realised.
    pub fn later_in_trace(&self, action: &Action) -> bool {
        self.trace.actions.get(self.at + 1..).is_some_and(|rest| rest.contains(action))
    }

    /// Whether the trace's step after the one being realised is `action`.
    pub fn next_in_trace(&self, action: &Action) -> bool {
        self.trace.actions.get(self.at + 1) == Some(action)
    }

    /// Whether call `c` was told its outcome by the outcome query: the trace's last answer to it
    /// is a query, not a response to an attempt.
    pub fn told_by_query(&self, c: usize) -> bool {
        let call = c as u8;
        let last = self.trace.actions.iter().rev().find(|a| {
            matches!(a, Action::ClientQueryOutcome { call: x } | Action::ClientReceive { call: x, .. } if *x == call)
        });
        matches!(last, Some(Action::ClientQueryOutcome { .. }))
    }
}
