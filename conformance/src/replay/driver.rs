//! The driver: one method per model action (as quint-connect's drivers), over a [`Session`]
//! with a real server. Driven steps (the client's, the transport's, the environment's) are
//! performed; server steps are awaited with a bound and observed (a response frame, the
//! observer's count, a process exit), never assumed.

use crate::replay::evidence::{self, Event, Evidence, VerdictEffects};
use crate::replay::judge;
use crate::replay::message::Logical;
use crate::replay::pacing::{self, AttemptId, Hold};
use crate::replay::session::Session;
use crate::replay::step::{answer, commit_seen, commit_timeout, stop, summarize, Commit, Done, Sent, Stop};
use crate::replay::types::{
    revision_for, CrashMethod, ReplayOptions, ReplayResult, ReplayVerdict, StepRecord, StepStatus,
};
use mcp_once_model::profile::HttpCancel;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Profile, State, Transport};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::time::Instant;

/// Replays one trace against a session.
pub struct Driver<'t> {
    /// The session (server, connection, observer).
    pub session: Session,
    pub(crate) trace: &'t TraceFile,
    /// The trace's states as the model has them (empty if the trace is not a path of the model).
    path: Vec<State>,
    /// Index of the first state of `path` where the trace's property fails.
    first_violation: Option<usize>,
    pub(crate) profile: Profile,
    holds: BTreeMap<AttemptId, Hold>,
    pub(crate) sent: BTreeMap<AttemptId, Sent>,
    nonce: String,
    pub(crate) baseline: f64,
    has_baseline: bool,
    pub(crate) pre_crash: Option<i64>,
    steps: Vec<StepRecord>,
    notes: Vec<String>,
    pub(crate) trace_name: String,
    deferred: Vec<(AttemptId, Deferred)>,
    /// The crash points armed: the attempt, how, and (after the kill) whether its response
    /// had been written.
    pub(crate) crash_points: Vec<(AttemptId, CrashMethod, Option<bool>)>,
}

/// A transport event the client has done but the server has not seen yet (HTTP): the model
/// keeps it in flight until the server reads it, so the runner delivers it then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deferred {
    /// A `notifications/cancelled` POST.
    CancelNotification,
    /// Closing the attempt's response stream.
    CloseStream,
}

fn expected_effects(state: &State) -> u64 {
    state.ledger.iter().map(|n| u64::from(*n)).sum()
}

impl<'t> Driver<'t> {
    /// A driver for `trace` (named `trace_name` in reports) under `profile`.
    pub fn new(session: Session, trace: &'t TraceFile, trace_name: &str, profile: Profile) -> Driver<'t> {
        let nonce = format!(
            "mcp-once-{:x}-{:x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        );
        let valid = trace.validate(trace_name, &profile).ok();
        let first_violation =
            valid.as_ref().and_then(|v| judge::first_violation(&v.model, &trace.property, &v.path.states));
        let path = valid.map(|v| v.path.states).unwrap_or_default();
        Driver {
            first_violation,
            session,
            holds: pacing::holds(&trace.actions),
            trace,
            path,
            profile,
            sent: BTreeMap::new(),
            nonce,
            baseline: 0.0,
            has_baseline: false,
            pre_crash: None,
            steps: Vec::new(),
            notes: Vec::new(),
            trace_name: trace_name.into(),
            deferred: Vec::new(),
            crash_points: Vec::new(),
        }
    }

    /// The tag of logical call `call` (what `{{call}}` in the arguments becomes).
    pub(crate) fn call_tag(&self, call: u8) -> String {
        format!("{}-c{call}", self.nonce)
    }

    pub(crate) fn note(&mut self, text: String) {
        self.session.evidence.note(text.clone());
        self.notes.push(text);
    }

    /// Run the whole trace and reach a verdict. The server is always stopped at the end.
    pub async fn run(mut self) -> ReplayResult {
        let expected = self.path.last().map_or(0, expected_effects);
        let outcome = self.run_steps().await;
        let (verdict, reason, observed) = match outcome {
            // Effects count from the baseline: none was taken if the server never started.
            Err(s) if !self.has_baseline => (s.verdict, s.reason, None),
            Err(s) => (s.verdict, s.reason, self.effects_now().await.ok()),
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
                        let how =
                            if n > expected as i64 { "more than the trace's" } else { "as the model's trace has" };
                        let reason = format!(
                            "the server ran the side effect {n} times, {how} {expected} ({})",
                            self.trace.property
                        );
                        (ReplayVerdict::Confirmed, reason, Some(n))
                    }
                },
            },
        };
        let can_settle = self.session.opts.observer.outside_server();
        self.session.shutdown().await;
        // `not-reproduced` says the server behaved; one that broke JSON-RPC on the way (a
        // duplicated response, an id never sent, non-JSON output) cannot support that, and a
        // divergence names the breach first. Its output has been read to the end by now
        // (shutdown waits for it).
        self.session.drain().await;
        let (verdict, reason) = match (verdict, self.session.garbage.first().cloned()) {
            (ReplayVerdict::Diverged, Some(_)) if reason.contains("broke the protocol") => (verdict, reason),
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
        self.session.evidence.record(Event::Verdict {
            verdict,
            reason: reason.clone(),
            effects: Some(VerdictEffects { expected_effects: expected, observed_effects: observed }),
        });
        ReplayResult {
            verdict,
            property: self.trace.property.clone(),
            expected_effects: expected,
            observed_effects: observed,
            settled_effects: settled,
            reason,
            evidence: self.session.evidence.path().map(Into::into),
            trace: self.trace_name.clone(),
            target: self.session.opts.target.describe(),
            revision: self.session.revision,
            observer: self.session.opts.observer.describe(),
            steps: std::mem::take(&mut self.steps),
            notes: std::mem::take(&mut self.notes),
            wall_ms: self.session.evidence.elapsed_ms(),
        }
    }

    pub(crate) async fn effects_now(&mut self) -> Result<i64, String> {
        let r = self.session.read_stable().await?;
        self.session.opts.observer.effects(self.baseline, r)
    }

    async fn run_steps(&mut self) -> Result<(), Stop> {
        if self.path.len() != self.trace.actions.len() + 1 {
            return Err(stop(ReplayVerdict::Diverged, "the trace is not a path of the model"));
        }
        if self.trace.config.transport != self.session.opts.target.transport() {
            return Err(stop(
                ReplayVerdict::Diverged,
                format!(
                    "the trace is for {} and the server is given over {}",
                    self.trace.config.transport.as_str(),
                    self.session.opts.target.transport().as_str()
                ),
            ));
        }
        self.session
            .start()
            .await
            .map_err(|e| stop(ReplayVerdict::Diverged, format!("the server did not start: {e}")))?;
        self.baseline =
            self.session.read_stable().await.map_err(|e| {
                stop(ReplayVerdict::Inconclusive, format!("the observer could not take a baseline: {e}"))
            })?;
        self.has_baseline = true;
        self.session.evidence.record(Event::Baseline { reading: self.baseline });
        let needs_hold = self.holds.values().any(|h| h.before_commit || h.before_respond);
        if needs_hold && !self.session.pace_args {
            self.note("the trace needs server steps held back, and the tool has no delay arguments: the replay can only take the server's own timing".into());
        }
        let actions = self.trace.actions.clone();
        for (i, action) in actions.iter().enumerate() {
            let state = self.path[i + 1].clone();
            self.session
                .evidence
                .record(Event::Step(evidence::Step::Begin { step: i + 1, action: action.to_string() }));
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
        }
        if !self.deferred.is_empty() {
            let done = self.deliver_deferred(None).await?;
            self.note(format!("after the last step: {}", done.join("; ")));
        }
        Ok(())
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
    }

    async fn step(&mut self, action: &Action, state: &State) -> Result<Done, Stop> {
        let result = match *action {
            Action::ClientCall { call } => self.client_send(call, 0, state).await,
            Action::ClientRetry { call, attempt } | Action::FrameworkRetry { call, attempt } => {
                self.client_send(call, attempt, state).await
            }
            Action::ClientTimeout { call, attempt } => self.client_timeout((call, attempt)),
            Action::ClientCancel { call, attempt } => self.client_cancel((call, attempt)).await,
            Action::ClientReceive { call, attempt } => self.client_receive((call, attempt)).await,
            Action::ClientSeesDisconnect { call, attempt } => self.client_sees_disconnect((call, attempt)).await,
            Action::StreamBreak { call, attempt } => self.stream_break((call, attempt)).await,
            Action::StepFails { .. } => {
                Ok(Done::driven("the framework step fails after the call returned (client-side)"))
            }
            Action::ClientQueryOutcome { call } => self.client_query_outcome(call, state).await,
            Action::ServerReceive { call, attempt } => self.server_receive((call, attempt)).await,
            Action::ServerReceiveCancel { call, attempt } => {
                let done = self.deliver_deferred(Some((call, attempt))).await;
                done.map(|d| {
                    Done::delivered(if d.is_empty() {
                        "the cancellation was written to the server".to_string()
                    } else {
                        d.join("; ")
                    })
                })
            }
            Action::ServerCommit { call, attempt } => {
                self.server_commit((call, attempt), expected_effects(state)).await
            }
            Action::ServerStoreKey { .. } => Ok(Done::unobserved(
                "the key store is internal to the server; its effect shows in how the server answers later attempts",
            )),
            Action::ServerRespond { call, attempt } => self.server_respond((call, attempt)).await,
            Action::ServerCrash => self.server_crash().await,
            Action::ServerRestart => self.server_restart().await,
            Action::KeyExpires { .. } => {
                Err(stop(ReplayVerdict::Diverged, "KeyExpires: the runner cannot make a server's key record expire"))
            }
        };
        if let Err(s) = &result {
            self.failed_step(action, &s.reason.clone());
        }
        result
    }

    pub(crate) fn attempt(&self, a: AttemptId) -> Result<Sent, Stop> {
        self.sent
            .get(&a)
            .cloned()
            .ok_or_else(|| stop(ReplayVerdict::Diverged, format!("call {} attempt {} was never sent", a.0, a.1)))
    }

    /// The response to an attempt: responses to one id on one connection are matched to its
    /// attempts in the order they were sent.
    fn response(&self, a: AttemptId) -> Option<Value> {
        answer(&self.sent, &self.session, a)
    }

    async fn client_send(&mut self, call: u8, attempt: u8, state: &State) -> Result<Done, Stop> {
        if self.session.check_exit().is_some() {
            return Err(stop(ReplayVerdict::Diverged, "the server is not running when the trace sends a request"));
        }
        let rec = state.attempts.get(call as usize).and_then(|row| row.get(attempt as usize)).ok_or_else(|| {
            stop(ReplayVerdict::Diverged, format!("the trace's state has no call {call} attempt {attempt}"))
        })?;
        let id = Value::from(rec.id);
        let key = Some(rec.key).filter(|k| *k > 0).map(|k| format!("{}-c{call}-k{k}", self.nonce));
        let hold = self.holds.get(&(call, attempt)).copied().unwrap_or_default();
        // Held commits end in the trace's commit order, a quarter window apart: two attempts
        // held alike would otherwise commit within a millisecond of each other, in either order.
        let rank = self
            .trace
            .actions
            .iter()
            .filter(|x| matches!(x, Action::ServerCommit { .. }))
            .position(|x| *x == Action::ServerCommit { call, attempt })
            .unwrap_or(0);
        let stagger = if hold.before_commit { self.session.opts.window / 4 * rank as u32 } else { Duration::ZERO };
        self.arm_crash_point((call, attempt)).await;
        let tag = self.call_tag(call);
        let msg = self.session.call_message(&id, Logical { key: key.as_deref(), tag: &tag }, hold, stagger);
        self.session
            .send(&msg)
            .await
            .map_err(|e| stop(ReplayVerdict::Diverged, format!("cannot send call {call} attempt {attempt}: {e}")))?;
        let order = self.sent.len();
        self.sent.insert(
            (call, attempt),
            Sent { id: id.clone(), gen: self.session.generation(), order, cancelled: false, stream_closed: false },
        );
        let mut note = format!("tools/call id {id}");
        if let Some(k) = key {
            note.push_str(&format!(", key {k}"));
        }
        if self.session.pace_args && (hold.before_commit || hold.before_respond) {
            let what = match (hold.before_commit, hold.before_respond) {
                (true, true) => "before the commit and before the response",
                (true, false) => "before the commit",
                _ => "before the response",
            };
            note.push_str(&format!(", held {} ms {what}", (self.session.opts.window + stagger).as_millis()));
        }
        Ok(Done::driven(note))
    }

    fn client_timeout(&mut self, a: AttemptId) -> Result<Done, Stop> {
        self.attempt(a)?;
        let note = match self.response(a) {
            Some(_) => "the client stops waiting; a response had already arrived unread".to_string(),
            None => "the client stops waiting".to_string(),
        };
        Ok(Done::driven(note))
    }

    async fn await_headers(&mut self, a: AttemptId, s: &Sent) -> Result<(), Stop> {
        let bound = self.session.opts.step_timeout;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if session.has_headers(s.gen, &s.id) {
                    return Some(Ok(()));
                }
                let f = session.failure_for(s.gen, &s.id)?;
                Some(Err(stop(
                    ReplayVerdict::Diverged,
                    format!("call {} attempt {}: the request failed: {f}", a.0, a.1),
                )))
            })
            .await;
        seen.unwrap_or_else(|| {
            Err(stop(
                ReplayVerdict::Inconclusive,
                format!("call {} attempt {}: no HTTP response headers within {} ms", a.0, a.1, bound.as_millis()),
            ))
        })
    }

    async fn client_cancel(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let s = self.attempt(a)?;
        self.sent.get_mut(&a).expect("sent").cancelled = true;
        if self.session.opts.target.transport() == Transport::Http {
            let knob = &self.profile.knobs.http_cancel;
            let (how, what) = match knob.value {
                HttpCancel::CloseStream => (Deferred::CloseStream, "closing the response stream"),
                _ => (Deferred::CancelNotification, "notifications/cancelled"),
            };
            if how == Deferred::CloseStream {
                self.sent.get_mut(&a).expect("sent").stream_closed = true;
            }
            self.deferred.push((a, how));
            let cite = format!("{} § {}", knob.cite.revision, knob.cite.section);
            return Ok(Done::driven(format!("{what} ({cite}); on HTTP it travels apart from the request, so it reaches the server where the trace has it read (ServerReceiveCancel), or after the last step")));
        }
        let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
        self.session
            .send(&msg)
            .await
            .map_err(|e| stop(ReplayVerdict::Diverged, format!("cannot send notifications/cancelled: {e}")))?;
        Ok(Done::driven(format!("notifications/cancelled for id {}", s.id)))
    }

    /// Deliver the deferred transport events of `only` (or all of them).
    async fn deliver_deferred(&mut self, only: Option<AttemptId>) -> Result<Vec<String>, Stop> {
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.deferred).into_iter().partition(|(a, _)| only.is_none_or(|o| o == *a));
        self.deferred = later;
        let mut done = Vec::new();
        for (a, how) in now {
            let s = self.attempt(a)?;
            if s.gen != self.session.generation() || self.session.check_exit().is_some() {
                done.push(format!("call {} attempt {}: dropped (its connection is gone)", a.0, a.1));
                continue;
            }
            match how {
                Deferred::CancelNotification => {
                    let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
                    self.session.send(&msg).await.map_err(|e| {
                        stop(ReplayVerdict::Diverged, format!("cannot send notifications/cancelled: {e}"))
                    })?;
                    done.push(format!("notifications/cancelled for id {} delivered", s.id));
                }
                Deferred::CloseStream => {
                    // The server must have the request before its stream can be closed on it.
                    self.await_headers(a, &s).await?;
                    let open = self.session.close_stream(&s.id);
                    done.push(format!(
                        "response stream of id {} closed{}",
                        s.id,
                        if open { "" } else { " (it had already ended)" }
                    ));
                }
            }
        }
        Ok(done)
    }

    async fn client_receive(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let resp = self.await_response(a).await?;
        Ok(Done::observed(summarize(&resp)))
    }

    async fn await_response(&mut self, a: AttemptId) -> Result<Value, Stop> {
        let s = self.attempt(a)?;
        if s.stream_closed {
            return Err(stop(
                ReplayVerdict::Diverged,
                format!("call {} attempt {}: its response stream was closed, so a response cannot be seen", a.0, a.1),
            ));
        }
        let bound = self.session.opts.step_timeout + self.session.opts.window * 2;
        let sent = &self.sent;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if let Some(r) = answer(sent, session, a) {
                    return Some(Ok(r));
                }
                if let Some(f) = session.failure_for(s.gen, &s.id) {
                    return Some(Err(stop(
                        ReplayVerdict::Diverged,
                        format!("call {} attempt {}: expected a response, the request failed: {f}", a.0, a.1),
                    )));
                }
                let c = session.closed(s.gen)?;
                Some(Err(stop(
                    ReplayVerdict::Diverged,
                    format!("call {} attempt {}: expected a response, {c}", a.0, a.1),
                )))
            })
            .await;
        seen.unwrap_or_else(|| {
            let reason = self.session.stall_note();
            Err(stop(
                ReplayVerdict::Inconclusive,
                format!("call {} attempt {}: no response within {} ms{reason}", a.0, a.1, bound.as_millis()),
            ))
        })
    }

    async fn stream_break(&mut self, a: AttemptId) -> Result<Done, Stop> {
        self.attempt(a)?;
        if self.session.opts.target.transport() != Transport::Http {
            return Err(stop(ReplayVerdict::Diverged, "StreamBreak needs an HTTP response stream"));
        }
        self.sent.get_mut(&a).expect("sent").stream_closed = true;
        if !self.profile.knobs.http_disconnect_is_cancel.value {
            // A disconnect is no cancellation here: nothing waits for the server to read it, so
            // the stream is closed now (once the server has the request).
            let s = self.attempt(a)?;
            self.await_headers(a, &s).await?;
            let open = self.session.close_stream(&s.id);
            let how = if open { "closed now" } else { "closed now (it had already ended: the response was in)" };
            return Ok(Done::driven(format!(
                "the client's response stream breaks: {how}; under this revision a disconnect is not a cancellation"
            )));
        }
        self.deferred.push((a, Deferred::CloseStream));
        Ok(Done::driven("the client's response stream breaks; the server sees the connection close where the trace has it read the cancellation, or after the last step"))
    }

    async fn server_receive(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let s = self.attempt(a)?;
        match self.session.opts.target.transport() {
            Transport::Stdio => {
                if self.session.closed(s.gen).is_some() || self.session.check_exit().is_some() {
                    return Err(stop(
                        ReplayVerdict::Diverged,
                        format!("call {} attempt {}: the server is gone before it could read the request", a.0, a.1),
                    ));
                }
                Ok(Done::delivered("written to the live server's stdin; its commit or response confirms it"))
            }
            Transport::Http => {
                if s.stream_closed {
                    return Ok(Done::delivered("the server had accepted the request before its stream was closed"));
                }
                self.await_headers(a, &s).await?;
                Ok(Done::observed("the server accepted the POST (response headers)"))
            }
        }
    }

    async fn server_commit(&mut self, a: AttemptId, expected: u64) -> Result<Done, Stop> {
        let s = self.attempt(a)?;
        let held = self.holds.get(&a).is_some_and(|h| h.before_commit) && self.session.pace_args;
        let bound = self.session.opts.step_timeout + if held { self.session.opts.window } else { Duration::ZERO };
        let (sent, baseline) = (&self.sent, self.baseline);
        // The violating step: the first commit at or past the state where the trace's property
        // fails (for the worst case: where a call first has two effects); that commit and any
        // after it may be refused by a server that does better, the ones before it must happen.
        let here = self.trace.actions.iter().position(|x| *x == Action::ServerCommit { call: a.0, attempt: a.1 });
        let violating = match (here, self.first_violation) {
            (Some(i), Some(v)) => i + 1 >= v,
            _ => true,
        };
        let want = Commit { expected, violating };
        let mut n = 0;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                commit_seen(session, sent, baseline, a, &s, want, &mut n).await.transpose()
            })
            .await;
        if let Some(done) = seen {
            return done;
        }
        Err(commit_timeout(&self.session, a, &s, bound, n, expected))
    }

    async fn server_respond(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let resp = self.await_response(a).await?;
        Ok(Done::observed(summarize(&resp)))
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
