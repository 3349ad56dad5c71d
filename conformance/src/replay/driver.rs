//! The driver: one method per model action (as quint-connect's drivers), over a [`Session`]
//! with a real server. Driven steps (the client's, the transport's, the environment's) are
//! performed; server steps are awaited with a bound and observed (a response frame, the
//! observer's count, a process exit), never assumed. This file holds the driver, its run and
//! the dispatch of each action. The steps live in files by job ([`crate::replay::client_steps`],
//! [`crate::replay::server_steps`], [`crate::replay::transport_steps`],
//! [`crate::replay::crash_point`], [`crate::replay::interrupt_point`],
//! [`crate::replay::continuation`], [`crate::replay::query`], [`crate::replay::session_end`]), and each takes the borrow it
//! needs: the whole driver only where it writes the replay's notes or counts effects against
//! the baseline (a send, a held request's read, a crash and restart, a continuation); every
//! other step a [`Link`], the session and the attempts with the [`Script`] to read.
use crate::replay::attempts::Attempts;
use crate::replay::evidence::{self, Event, Evidence, VerdictEffects};
use crate::replay::link::Link;
use crate::replay::observed::{Counted, Observed};
use crate::replay::pacing::{self, AttemptId};
use crate::replay::script::Script;
use crate::replay::session::Session;
use crate::replay::step::{answer, Done, Sent, StepError};
use crate::replay::task_wire;
use crate::replay::types::{revision_for, ReplayOptions, ReplayResult, ReplayVerdict, StepRecord, StepStatus};
use mcp_once_model::state::ServerSide;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Profile, State, Tasks};
use serde_json::Value;

/// Replays one trace against a session.
pub struct Driver<'t> {
    /// The session (server, connection, observer).
    pub session: Session,
    /// The trace and what follows from it (read by every step, changed by none).
    pub(crate) script: Script<'t>,
    /// What the runner knows and does per attempt (holds, sends, deferred events, crash
    /// points, routes).
    pub(crate) attempts: Attempts,
    /// The observer's reading before the first step.
    pub(crate) baseline: f64,
    /// Whether the baseline was taken (the server started).
    has_baseline: bool,
    /// The effects counted just before the last crash.
    pub(crate) pre_crash: Option<i64>,
    steps: Vec<StepRecord>,
    notes: Vec<String>,
}

fn expected_effects(state: &State) -> u64 {
    state.ledger.iter().map(|n| u64::from(*n)).sum()
}

impl<'t> Driver<'t> {
    /// A driver for `trace` (named `trace_name` in reports) under `profile`.
    pub fn new(mut session: Session, trace: &'t TraceFile, trace_name: &str, profile: Profile) -> Driver<'t> {
        // A tool that asks for input is answered: the client says it can be asked.
        if trace.config.handler.asks_input(0) {
            session.capabilities = crate::replay::message::input_capabilities();
        }
        // Task-augmented calls: the client declares the tasks extension.
        let tasks = trace.config.tasks == Tasks::Augmented;
        if tasks {
            session.capabilities = task_wire::client_capabilities(&session.capabilities);
        }
        Driver {
            session,
            attempts: Attempts::new(pacing::holds_over(&trace.actions, trace.config.transport, tasks)),
            script: Script::new(trace, trace_name, profile),
            baseline: 0.0,
            has_baseline: false,
            pre_crash: None,
            steps: Vec::new(),
            notes: Vec::new(),
        }
    }

    pub(crate) fn note(&mut self, text: String) {
        self.session.evidence.note(text.clone());
        self.notes.push(text);
    }

    /// Run the whole trace and reach a verdict. The server is always stopped at the end.
    pub async fn run(mut self) -> ReplayResult {
        let expected = self.script.path.last().map_or(0, expected_effects);
        let outcome = self.run_steps().await;
        let fault_not_made = match &outcome {
            Err(StepError::FaultNotMade(why)) => Some(why.clone()),
            _ => None,
        };
        let (verdict, reason, observed) = match outcome {
            // Effects count from the baseline: none was taken if the server never started.
            Err(s) if !self.has_baseline => (s.verdict(), s.into_reason(), None),
            Err(s) => (s.verdict(), s.into_reason(), self.effects_now().await.ok()),
            Ok(()) => match self.effects_now().await {
                Err(e) => (ReplayVerdict::Inconclusive, format!("the observer could not tell at the end: {e}"), None),
                Ok(n) if n < expected as i64 => (
                    ReplayVerdict::Inconclusive,
                    format!(
                        "the observer counts {n} effects at the end, fewer than the {expected} it saw step by step"
                    ),
                    Some(n),
                ),
                Ok(n) => match self.judge_property(n).await {
                    Some(judged) => (judged.verdict, judged.reason, Some(n)),
                    None => {
                        let facts = self.observed(n).await;
                        let (verdict, reason) = self.judge_by_count(n, expected, facts.as_ref());
                        (verdict, reason, Some(n))
                    }
                },
            },
        };
        let can_settle = self.session.opts.observer.outside_server();
        self.session.shutdown_all().await;
        // `not-reproduced` says the server behaved; one that broke JSON-RPC on the way (a
        // duplicated response, an id never sent, non-JSON output) cannot support that, and a
        // divergence names the breach first. Its output has been read to the end by now
        // (shutdown waits for it).
        self.session.drain().await;
        let (verdict, reason) = match (verdict, self.session.conduct.breaches.first().cloned()) {
            (ReplayVerdict::Diverged, Some(_)) if self.session.conduct.breach_named() => (verdict, reason),
            (ReplayVerdict::NotReproduced | ReplayVerdict::Diverged, Some(g)) => {
                (ReplayVerdict::Diverged, format!("the server broke the protocol: {g} (otherwise: {reason})"))
            }
            (ReplayVerdict::Confirmed, Some(g)) => {
                self.note(format!("the server also broke the protocol: {g}"));
                (verdict, reason)
            }
            _ => (verdict, reason),
        };
        let reason = if verdict == ReplayVerdict::NotReproduced && self.emulated_loss() {
            format!("{reason}; the crash point was emulated (the server wrote its response before the kill, and the runner discarded it), which can hide a violation on a server that records a call only as it replies")
        } else {
            reason
        };
        let mut settled = None;
        if can_settle {
            if let (Ok(reading), Some(obs)) = (self.session.read_stable().await, observed) {
                if let Ok(n) = self.session.opts.observer.effects(self.baseline, reading) {
                    if n != obs {
                        settled = Some(n);
                        self.note(format!("{} more effect(s) after the last step, from attempts still running when the server was stopped", n - obs));
                    }
                }
            }
        }
        let (verdict, reason) = match settled.or(observed) {
            Some(n) => {
                let when = if settled.is_some() { "after the server stopped" } else { "at the end" };
                let facts = self.observed(n).await;
                self.weigh_observed(verdict, reason, facts.as_ref(), when)
            }
            None => (verdict, reason),
        };
        self.session.evidence.record(Event::Verdict {
            verdict,
            reason: reason.clone(),
            effects: Some(VerdictEffects { expected_effects: expected, observed_effects: observed }),
        });
        ReplayResult {
            verdict,
            property: self.script.trace.property,
            expected_effects: expected,
            observed_effects: observed,
            settled_effects: settled,
            reason,
            fault_not_made,
            evidence: self.session.evidence.path().map(Into::into),
            trace: self.script.name.clone(),
            cell: Some(self.script.trace.config.clone()),
            target: self.session.opts.target.describe(),
            revision: self.session.revision,
            observer: self.session.opts.observer.describe(),
            steps: std::mem::take(&mut self.steps),
            notes: std::mem::take(&mut self.notes),
            wall_ms: self.session.evidence.elapsed_ms(),
            command: self.session.opts.command.clone(),
        }
    }

    /// The verdict of a trace judged by its effects (the worst case; at-most-once when its
    /// ledger lines carry no call tag), once every step was realised with `n` effects counted
    /// where the trace has `expected`: a duplicate the facts show is confirmed; a worst case of
    /// at most one effect per call shows none to confirm (`ran`); effects counted in all that may
    /// be one per call leave it `inconclusive`.
    fn judge_by_count(&self, n: i64, expected: u64, facts: Option<&Observed>) -> (ReplayVerdict, String) {
        let worst = self.script.path.last().map_or(0, State::worst_effects);
        let how = if n > expected as i64 { "more than the trace's" } else { "as the trace has" };
        let property = &self.script.trace.property;
        match facts.and_then(Observed::duplicate) {
            Some(d) if worst >= 2 => {
                (ReplayVerdict::Confirmed, format!("{d} ({property}; the model's has {worst} for one call)"))
            }
            Some(d) => (ReplayVerdict::Confirmed, format!("{d} ({property})")),
            None if worst <= 1 && property.property().is_none() => (
                ReplayVerdict::Ran,
                format!("the server ran the side effect {n} time(s), {how} {expected}, at most one effect per call: the model's worst case here shows no duplicate to confirm"),
            ),
            None => match facts.map(|f| &f.counted) {
                Some(Counted::PerCall(counts)) => (
                    ReplayVerdict::NotReproduced,
                    format!("the server ran the side effect {n} time(s), {how} {expected} ({property}), but no call more than once (per call: {counts:?})"),
                ),
                _ => {
                    let calls = self.script.trace.config.bounds.calls;
                    (ReplayVerdict::Inconclusive, format!("the server ran the side effect {n} time(s), {how} {expected} ({property}), and the observer cannot tell them apart by call: with {calls} calls they may be one each (a ledger observer with `{{{{call}}}}` in --args tells them apart)"))
                }
            },
        }
    }

    /// The verdict once what was observed at the end (`when`) is weighed: a violation the facts
    /// show is confirmed whatever the steps gave, with the steps' own verdict kept in the
    /// reason as what was or was not seen on the way; otherwise the steps' verdict stands.
    fn weigh_observed(
        &mut self,
        verdict: ReplayVerdict,
        reason: String,
        facts: Option<&Observed>,
        when: &str,
    ) -> (ReplayVerdict, String) {
        if matches!(verdict, ReplayVerdict::Confirmed | ReplayVerdict::Interrupted) {
            return (verdict, reason);
        }
        let property = self.script.trace.property.property();
        match facts.and_then(|f| f.violation(property)) {
            Some(seen) => (
                ReplayVerdict::Confirmed,
                format!("{seen}, as the observer counted {when}; the trace's steps alone gave {verdict}: {reason}"),
            ),
            None => (verdict, reason),
        }
    }

    pub(crate) async fn effects_now(&mut self) -> Result<i64, String> {
        let r = self.session.read_stable().await?;
        self.session.opts.observer.effects(self.baseline, r)
    }

    async fn run_steps(&mut self) -> Result<(), StepError> {
        if self.script.path.len() != self.script.trace.actions.len() + 1 {
            return Err(StepError::diverged("the trace is not a path of the model"));
        }
        // One runner plays one client: it cannot present one key as two callers.
        if self.script.trace.config.callers > 1 {
            return Err(StepError::cannot_tell(format!(
                "the trace's calls come from {} callers presenting one key (--callers {}), and the runner plays one caller",
                self.script.trace.config.callers, self.script.trace.config.callers
            )));
        }
        if self.script.trace.config.transport != self.session.opts.target.transport() {
            return Err(StepError::diverged(format!(
                "the trace is for {} and the server is given over {}",
                self.script.trace.config.transport.as_str(),
                self.session.opts.target.transport().as_str()
            )));
        }
        let instances = usize::from(self.script.trace.config.deployment.instances);
        if instances != self.session.instances() {
            return Err(StepError::cannot_tell(format!(
                "the trace's deployment has {instances} server instance(s) and the runner was given {}",
                self.session.instances()
            )));
        }
        self.session.start().await.map_err(|e| StepError::diverged(e.sentence()))?;
        self.session.start_others().await.map_err(|e| StepError::diverged(format!("the server did not start: {e}")))?;
        // A trace of task-augmented calls is never replayed with plain ones.
        if self.task_calls() {
            if let Some(why) = task_wire::refusal(self.session.revision, &self.session.server_capabilities) {
                return Err(StepError::cannot_tell(why));
            }
        }
        self.baseline = self
            .session
            .read_stable()
            .await
            .map_err(|e| StepError::cannot_tell(format!("the observer could not take a baseline: {e}")))?;
        self.has_baseline = true;
        self.session.evidence.record(Event::Baseline { reading: self.baseline });
        let needs_hold = self.attempts.holds.values().any(|h| h.before_commit || h.before_respond);
        if needs_hold && !self.session.pace_args {
            self.note("the trace needs server steps held back, and the tool has no delay arguments: the replay can only take the server's own timing".into());
        }
        if self.attempts.holds.values().any(|h| h.before_task_result) && !self.session.task_result_arg {
            self.note("the trace needs a CreateTaskResult held back, and the tool takes no delay_task_result_ms: the replay can only take the server's own timing, and an answer that comes first is a fault not made".into());
        }
        let actions = self.script.trace.actions.clone();
        for (i, action) in actions.iter().enumerate() {
            let state = self.script.path[i + 1].clone();
            self.session
                .evidence
                .record(Event::Step(evidence::Step::Begin { step: i + 1, action: action.to_string() }));
            self.route(i, action, &state)?;
            let done = self.step(action, &state).await?;
            let rec = StepRecord {
                step: i + 1,
                action: action.to_string(),
                status: done.status,
                t_ms: self.session.evidence.elapsed_ms(),
                note: Some(done.note),
            };
            self.session.evidence.record(Event::Step(evidence::Step::Done {
                step: rec.step,
                action: rec.action.clone(),
                status: rec.status,
                note: rec.note.clone(),
            }));
            self.steps.push(rec);
            self.script.at = self.steps.len();
        }
        if !self.attempts.deferred.is_empty() {
            let done = self.link().deliver_deferred(None).await?;
            self.note(format!("after the last step: {}", done.join("; ")));
        }
        for (call, attempt) in self.attempts.held_requests.keys().copied().collect::<Vec<_>>() {
            self.note(format!("call {call} attempt {attempt}: its request was never written (the trace's server never reads it: to the server, it was still on the network when the trace ended)"));
        }
        Ok(())
    }

    /// With several server instances, select the one `action` (step `i + 1`) acts on: the
    /// instance a server step or a fault names; for a send, the instance whose `ServerReceive`
    /// of that attempt comes later in the trace (the load balancer chooses as the request
    /// leaves, so the runner looks ahead); for a request the trace never has read, the first
    /// instance up (the model leaves it on the network, where any choice is the model's); for
    /// any other step of an attempt, the instance it was sent to.
    fn route(&mut self, i: usize, action: &Action, state: &State) -> Result<(), StepError> {
        let count = self.session.instances();
        if count == 1 {
            return Ok(());
        }
        let first_up = (0..count as u8).find(|n| state.server.up[usize::from(*n)]).unwrap_or(0);
        let instance = match *action {
            Action::ServerReceive { call, attempt, instance } => {
                self.attempts.routes.insert((call, attempt), instance);
                instance
            }
            Action::ServerCrash { instance } | Action::ServerRestart { instance } => instance,
            ref send if pacing::is_send(send) => {
                let a = pacing::attempt_of(send).expect("a send names its attempt");
                let read_by = self.script.trace.actions[i + 1..].iter().find_map(|x| match *x {
                    Action::ServerReceive { call, attempt, instance } if (call, attempt) == a => Some(instance),
                    _ => None,
                });
                let instance = read_by.unwrap_or(first_up);
                self.attempts.routes.insert(a, instance);
                instance
            }
            ref other => {
                pacing::attempt_of(other).and_then(|a| self.attempts.routes.get(&a).copied()).unwrap_or(first_up)
            }
        };
        self.session.select(instance).map_err(StepError::diverged)
    }

    fn failed_step(&mut self, action: &Action, why: &str) {
        let rec = StepRecord {
            step: self.steps.len() + 1,
            action: action.to_string(),
            status: StepStatus::Failed,
            t_ms: self.session.evidence.elapsed_ms(),
            note: Some(why.into()),
        };
        self.steps.push(rec);
        self.script.at = self.steps.len();
    }

    async fn step(&mut self, action: &Action, state: &State) -> Result<Done, StepError> {
        let result = match *action {
            Action::ClientCall { call } => self.client_send(call, 0, state).await,
            // A retry of a continuation repeats it: the same input responses and requestState.
            Action::ClientRetry { call, attempt }
                if state.attempts[usize::from(call)][usize::from(attempt)].round > 0 =>
            {
                self.client_continue(call, attempt, state).await
            }
            Action::ClientRetry { call, attempt } | Action::FrameworkRetry { call, attempt } => {
                self.client_send(call, attempt, state).await
            }
            Action::ClientTimeout { call, attempt } => self.link().client_timeout((call, attempt)),
            Action::ClientCancel { call, attempt } => self.link().client_cancel((call, attempt)).await,
            Action::ClientReceive { call, attempt } if self.task_calls() => {
                self.task_receive((call, attempt), state).await
            }
            Action::ClientReceive { call, attempt } => self.link().client_receive((call, attempt), state).await,
            Action::ClientSeesDisconnect { call, attempt } if self.holds_task((call, attempt)) => {
                self.task_gone((call, attempt)).await
            }
            Action::ClientSeesDisconnect { call, attempt } => self.client_sees_disconnect((call, attempt)).await,
            Action::StreamBreak { call, attempt } => self.link().stream_break((call, attempt)).await,
            Action::StepFails { .. } => {
                Ok(Done::driven("the framework step fails after the call returned (client-side)"))
            }
            Action::ClientQueryOutcome { call } => self.link().client_query_outcome(call, state).await,
            Action::ServerReceive { call, attempt, .. } => self.server_receive((call, attempt)).await,
            Action::ServerReceiveCancel { call, attempt }
                if state.attempts[usize::from(call)][usize::from(attempt)].server == ServerSide::Interrupted =>
            {
                self.link().interrupt_after_commit((call, attempt)).await
            }
            Action::ServerReceiveCancel { call, attempt } => {
                let done = self.link().deliver_deferred(Some((call, attempt))).await;
                done.map(|d| {
                    Done::delivered(if d.is_empty() {
                        "the cancellation was written to the server".to_string()
                    } else {
                        d.join("; ")
                    })
                })
            }
            Action::ServerCommit { call, attempt } => {
                let baseline = self.baseline;
                let done = self.link().server_commit((call, attempt), expected_effects(state), baseline).await?;
                self.link().close_unread_after_commit((call, attempt), done).await
            }
            Action::ServerStoreKey { .. } => Ok(Done::unobserved(
                "the key store is internal to the server; its effect shows in how the server answers later attempts",
            )),
            Action::ServerRespond { call, attempt } if self.task_calls() => self.task_completes((call, attempt)).await,
            Action::ServerRespond { call, attempt } => self.link().server_respond((call, attempt), state).await,
            Action::ServerCrash { .. } => self.server_crash().await,
            Action::ServerRestart { .. } => self.server_restart().await,
            Action::KeyExpires { call, key } => self.link().key_expires(call, key).await,
            Action::ClientContinue { call, attempt } => self.client_continue(call, attempt, state).await,
            // Made by the client's DELETE, standing in for the server (`session_end.rs`).
            Action::SessionTerminated {} => {
                let before = self.script.path[self.script.at].clone();
                self.session_terminated(&before, state).await
            }
        };
        if let Err(s) = &result {
            self.failed_step(action, s.reason());
        }
        result
    }

    pub(crate) fn attempt(&self, a: AttemptId) -> Result<Sent, StepError> {
        self.attempts.sent_as(a)
    }

    /// The narrow borrow of a step that neither writes notes nor counts effects: the session
    /// and the attempts, with the script to read.
    pub(crate) fn link(&mut self) -> Link<'_, 't> {
        Link { script: &self.script, session: &mut self.session, attempts: &mut self.attempts }
    }

    /// The response to an attempt: responses to one id on one connection are matched to its
    /// attempts in the order they were sent.
    pub(crate) fn response(&self, a: AttemptId) -> Option<Value> {
        answer(&self.attempts.sent, &self.session, a)
    }
}

/// Replay `trace` against the server in `options`, logging to `evidence`.
pub async fn replay(
    trace: &TraceFile,
    name: &str,
    profile: Profile,
    options: ReplayOptions,
    evidence: Evidence,
) -> ReplayResult {
    let revision = revision_for(&options, &profile);
    let session = Session::new(options, revision, evidence);
    Driver::new(session, trace, name, profile).run().await
}
