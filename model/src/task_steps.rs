//! The steps of a task-augmented `tools/call` (`tasks.rs` says what the model takes and why):
//! which attempt the client can read a task id of, the client polling, a crash's loss of a
//! volatile task's result, where `--tasks` applies, and the steps in words and knobs.

use crate::action::Action;
use crate::applicable::NotApplicable;
use crate::attempt::{ClientSide, Failure, ServerSide};
use crate::config::{HandlerKind, KeyLifetime, TaskRecords, Tasks};
use crate::model::McpModel;
use crate::profile::{KeySemantics, KnobId, Profile, TaskCreation};
use crate::state::{State, MAX_CALLS};

/// Server sides of an attempt that ran as a task: its `CreateTaskResult` is written.
fn has_task(server: ServerSide) -> bool {
    matches!(server, ServerSide::Pending | ServerSide::Effected | ServerSide::Committed | ServerSide::RespondedOk)
}

impl McpModel {
    /// Whether `tools/call` is task-augmented here.
    pub(crate) fn augmented(&self) -> bool {
        self.config.tasks == Tasks::Augmented
    }

    /// Whether the client can read the `CreateTaskResult` of attempt `(c, a)` now: it waits for
    /// it, holds no task id yet, and the server created the task.
    pub(crate) fn task_handle_readable(&self, s: &State, c: usize, a: usize) -> bool {
        let t = s.attempts[c][a];
        self.augmented() && t.client == ClientSide::Waiting && !t.task && has_task(t.server)
    }

    /// Whether the client holds the task id of attempt `(c, a)` and polls it (no timeout, no
    /// stream to break).
    pub(crate) fn polls_task(&self, s: &State, c: usize, a: usize) -> bool {
        self.augmented() && s.attempts[c][a].task
    }

    /// `ClientReceive` of attempt `(c, a)` under tasks: the client reads the `CreateTaskResult`
    /// and holds the task id (true), or this is an answer as without tasks (false).
    pub(crate) fn read_task_handle(&self, s: &mut State, c: usize, a: usize) -> bool {
        if !self.task_handle_readable(s, c, a) {
            return false;
        }
        s.attempts[c][a].task = true;
        true
    }

    /// The failure a client sees when its request is lost: a poll finding the task's work gone
    /// (or, with volatile records, no task) is an error answer; else a disconnect.
    pub(crate) fn lost_failure(&self, s: &State, c: usize, a: usize) -> Failure {
        if self.polls_task(s, c, a) {
            Failure::ErrorReply
        } else {
            Failure::Disconnect
        }
    }

    /// What a crash of `instance` does to its tasks beyond ending their work (done with every
    /// request the process held): with volatile records, a completed task's stored result is
    /// lost too.
    pub(crate) fn crash_tasks(&self, s: &mut State, instance: u8) {
        if !self.augmented() || self.config.task_records != TaskRecords::Volatile {
            return;
        }
        for c in 0..MAX_CALLS {
            for a in 0..s.calls[c].sent as usize {
                let t = &mut s.attempts[c][a];
                if t.server == ServerSide::RespondedOk && t.instance == instance {
                    t.server = ServerSide::Lost;
                }
            }
        }
    }
}

impl crate::config::Config {
    /// Whether `--tasks` and `--task-records` make sense here: tasks under a profile that has
    /// them, with what the model's tasks are written for (one instance, the effect-only
    /// handler, no outcome query, no key of the requestor's own naming the task, no session
    /// termination).
    pub(crate) fn tasks_applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        use NotApplicable::{Meaningless, NotModelled};
        if self.tasks == Tasks::None {
            return match self.task_records {
                TaskRecords::Durable => Ok(()),
                r => Err(Meaningless(format!("--task-records {r} needs --tasks augmented: no call creates a task"))),
            };
        }
        if profile.knobs.task_creation.value == TaskCreation::None {
            return Err(NotApplicable::OutsideProfile {
                profile: profile.name.clone(),
                reason:
                    "has no task-augmented requests (knob task_creation = none), so --tasks augmented does not arise"
                        .into(),
            });
        }
        let not_modelled = |what: String| Err(NotModelled(format!("--tasks augmented with {what} is not modelled")));
        if self.server.validates_ids() {
            return not_modelled(format!("--server {} (a task id of the requestor's own)", self.server));
        }
        if profile.knobs.idempotency_semantics.value == KeySemantics::StatusQuery && self.key != KeyLifetime::None {
            return not_modelled("an outcome query (idempotency_semantics = status-query)".into());
        }
        if self.handler.kind != HandlerKind::EffectOnly {
            return not_modelled(format!("--handler {}", self.handler.kind));
        }
        if self.deployment.instances > 1 {
            return not_modelled(format!("--instances {}", self.deployment.instances));
        }
        if self.session_terminations > 0 {
            return not_modelled("--session-terminations".into());
        }
        Ok(())
    }
}

/// A task's name in a trace: `task c.a`, for the task created for attempt `a` of call `c`.
fn task(call: u8, attempt: u8) -> String {
    format!("task t{call}.{attempt}")
}

/// What a step did, in words, where tasks change its meaning (`None`: as without tasks).
pub(crate) fn describe(model: &McpModel, before: &State, action: &Action, after: &State) -> Option<String> {
    if !model.augmented() {
        return None;
    }
    let volatile = model.config.task_records == TaskRecords::Volatile;
    let at = |s: &State, c: u8, a: u8| s.attempts[c as usize][a as usize];
    Some(match *action {
        Action::ServerReceive { call, attempt, .. } if at(after, call, attempt).server == ServerSide::Pending => {
            let record = if volatile { "in memory only" } else { "durably" };
            let t = at(after, call, attempt);
            let lost = match t.client {
                ClientSide::Waiting => "",
                ClientSide::Broken => {
                    " (its stream is broken: the CreateTaskResult is lost, the client has no task id)"
                }
                _ => " (the client stopped waiting: the CreateTaskResult is lost, the client has no task id)",
            };
            format!(
                "server reads tools/call id {} and creates {} ({record}), answers CreateTaskResult with its id{lost}, \
                 and starts the tool in the task",
                t.id,
                task(call, attempt)
            )
        }
        Action::ClientReceive { call, attempt } if at(after, call, attempt).client == ClientSide::Waiting => format!(
            "client reads the CreateTaskResult of id {}: it holds the id of {} and polls it from now on (it no longer \
             times out or retries the tools/call)",
            at(after, call, attempt).id,
            task(call, attempt)
        ),
        Action::ClientReceive { call, attempt } if at(before, call, attempt).task => format!(
            "client's poll finds {} completed and reads its result; logical call {call} is now {:?}",
            task(call, attempt),
            after.calls[call as usize].phase
        ),
        Action::ClientSeesDisconnect { call, attempt } if at(before, call, attempt).task => {
            let how = if volatile {
                "finds no such task (its record died with the process)"
            } else {
                "finds it failed (its record survived the crash, its work did not, and is not resumed)"
            };
            format!("client polls {}: the poll {how}; logical call {call} fails", task(call, attempt))
        }
        Action::ServerCommit { call, attempt } => format!(
            "{} takes the side effect of id {} (logical call {call} now has {} in the ledger)",
            task(call, attempt),
            at(after, call, attempt).id,
            after.ledger[call as usize]
        ),
        Action::ServerRespond { call, attempt } => {
            let kept = if volatile { "in memory" } else { "durably" };
            format!("{} completes: its result is stored with it, {kept}", task(call, attempt))
        }
        _ => return None,
    })
}

/// The knobs behind a step under tasks, beyond those it has without: the profile's task rule
/// allows a task's creation and every step of the client's handle on it.
pub(crate) fn knobs(model: &McpModel, after: &State, action: &Action) -> Vec<KnobId> {
    if !model.augmented() {
        return vec![];
    }
    let at = |s: &State, c: u8, a: u8| s.attempts[c as usize][a as usize];
    match *action {
        Action::ServerReceive { call, attempt, .. } if at(after, call, attempt).server == ServerSide::Pending => {
            vec![KnobId::TaskCreation]
        }
        // The client's `task` flag, once set, stays set.
        Action::ClientReceive { call, attempt } | Action::ClientSeesDisconnect { call, attempt }
            if at(after, call, attempt).task =>
        {
            vec![KnobId::TaskCreation]
        }
        _ => vec![],
    }
}
