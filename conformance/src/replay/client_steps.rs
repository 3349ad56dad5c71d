//! The client steps: sending an attempt (the driver's: it writes notes and arms crash points),
//! and, on a [`Link`] (the session and the attempts only), the client's timeout, cancellation
//! and reading a response. Sending an
//! attempt (a call, a retry, a framework re-run), the client's timeout and cancellation, and
//! reading a response.

use crate::replay::attempts::Deferred;
use crate::replay::driver::Driver;
use crate::replay::link::Link;
use crate::replay::message::Logical;
use crate::replay::pacing::{attempt_of, is_send, AttemptId, Hold};
use crate::replay::step::{answer, summarize, Done, Sent, StepError};
use mcp_once_model::profile::HttpCancel;
use mcp_once_model::state::ServerSide;
use mcp_once_model::{Action, State, Transport};
use serde_json::{Map, Value};
use std::time::Duration;
use tokio::time::Instant;

/// `msg`'s params with `extra` added (an MRTR continuation's fields).
fn with_extra(msg: &mut Value, extra: Option<&Map<String, Value>>) {
    if let (Some(extra), Some(params)) = (extra, msg.get_mut("params").and_then(Value::as_object_mut)) {
        params.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

impl Driver<'_> {
    /// Send attempt `attempt` of `call` (a call, a retry, a framework re-run). With the server
    /// down, as the model has it too, the send is an attempt that fails at once
    /// ([`Driver::send_while_down`]).
    pub(crate) async fn client_send(&mut self, call: u8, attempt: u8, state: &State) -> Result<Done, StepError> {
        self.send_attempt(call, attempt, state, None).await
    }

    /// [`Driver::client_send`], with `extra` params added to the `tools/call` (an MRTR
    /// continuation's `inputResponses` and `requestState`).
    pub(crate) async fn send_attempt(
        &mut self,
        call: u8,
        attempt: u8,
        state: &State,
        extra: Option<&Map<String, Value>>,
    ) -> Result<Done, StepError> {
        let rec =
            state.attempts.get(call as usize).and_then(|row| row.get(attempt as usize)).ok_or_else(|| {
                StepError::diverged(format!("the trace's state has no call {call} attempt {attempt}"))
            })?;
        let id = Value::from(rec.id);
        let key = Some(rec.key).filter(|k| *k > 0).map(|k| self.script.key_name(call, k));
        // A stdio pipe keeps the client's order: a cancellation held back is written before
        // anything the client sends after it (it may be late, never overtaken).
        if self.session.opts.target.transport() == Transport::Stdio && !self.attempts.deferred.is_empty() {
            let delivered = self.link().deliver_deferred(None).await?;
            if !delivered.is_empty() {
                self.note(format!("before this send, over the same pipe: {}", delivered.join("; ")));
            }
        }
        if let Some(why) = self.session.check_exit() {
            if state.server.up[usize::from(self.session.active())] || rec.server != ServerSide::Lost {
                return Err(StepError::diverged(format!(
                    "the server is not running when the trace sends a request ({why}), and the model's server is up"
                )));
            }
            return self.send_while_down((call, attempt), id, key, extra).await;
        }
        let hold = self.attempts.holds.get(&(call, attempt)).copied().unwrap_or_default();
        // Held commits end in the trace's commit order, a quarter window apart: two attempts
        // held alike would otherwise commit within a millisecond of each other, in either order.
        let rank = self
            .script
            .trace
            .actions
            .iter()
            .filter(|x| matches!(x, Action::ServerCommit { .. }))
            .position(|x| *x == Action::ServerCommit { call, attempt })
            .unwrap_or(0);
        let stagger = if hold.before_commit { self.session.opts.window / 4 * rank as u32 } else { Duration::ZERO };
        self.arm_crash_point((call, attempt)).await;
        let tag = self.script.call_tag(call);
        let mut msg = self.session.call_message(&id, Logical { key: key.as_deref(), tag: &tag }, hold, stagger);
        with_extra(&mut msg, extra);
        if self.task_calls() {
            crate::replay::task_wire::augment(self.session.revision, &mut msg);
        }
        let late = self.read_late((call, attempt));
        if late.is_some() {
            self.attempts.held_requests.insert((call, attempt), msg);
        } else {
            self.session
                .send(&msg)
                .await
                .map_err(|e| StepError::diverged(format!("cannot send call {call} attempt {attempt}: {e}")))?;
        }
        let order = self.attempts.sent.len();
        self.attempts.sent.insert(
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
        if self.session.task_result_arg && hold.before_task_result {
            note.push_str(&format!(", its CreateTaskResult held {} ms", self.session.opts.window.as_millis()));
        }
        if let Some(why) = late {
            note.push_str(&format!("; its write waits for the trace's ServerReceive of it: {why}"));
        }
        Ok(Done::driven(note))
    }

    /// Why attempt `a`'s request is written only at the trace's `ServerReceive` of it (or not
    /// at all), if it is: a key record expires between the client's send and the server's read
    /// (on either transport; a server reads a request as it arrives), or, over HTTP, where each
    /// request travels on its own POST, the trace's server does something else first (reads
    /// another request, commits, answers an outcome query): to the server, a request late on
    /// the network, or still on it when the trace ends if the trace never has it read. A pipe
    /// keeps the client's order, so over stdio only the expiry holds a request, and a crash that
    /// loses a request the trace never has read (below). Never otherwise when a
    /// crash follows the send and loses the request on its way (one instance, or a request the
    /// trace never has read; with two, the other instance reads it), nor over HTTP when its stream
    /// must exist first: closed at once (a break that is no cancellation) or its cancellation
    /// read.
    fn read_late(&self, a: AttemptId) -> Option<&'static str> {
        let actions = &self.script.trace.actions;
        let sent = actions.iter().position(|x| is_send(x) && attempt_of(x) == Some(a))?;
        let receive = |x: &Action| matches!(*x, Action::ServerReceive { call, attempt, .. } if (call, attempt) == a);
        let read = actions[sent..].iter().position(receive);
        let between = &actions[sent + 1..read.map_or(actions.len(), |r| sent + r)];
        let http = self.session.opts.target.transport() == Transport::Http;
        let closes_at_once = !self.script.profile.knobs.http_disconnect_is_cancel.value;
        let needs_stream = |x: &Action| {
            http && (*x == Action::ServerReceiveCancel { call: a.0, attempt: a.1 }
                || (closes_at_once && *x == Action::StreamBreak { call: a.0, attempt: a.1 }))
        };
        // A crash loses a request on its way only where no other instance can take it: with one
        // instance, or when the trace never has it read. With two, a request the trace has read
        // after a crash went to the instance still running, and is held like any other.
        // Over stdio a pipe hands a request to the server at once. One the trace never has read,
        // lost with a crash, is held back: written, a server that records a request on receipt
        // (the validating receiver) could keep a trace of it before the kill lands.
        if !http && read.is_none() && between.iter().any(|x| matches!(x, Action::ServerCrash { .. })) {
            return Some("a crash losing it unread (a pipe would hand it to the server at once)");
        }
        // A request unread when the session ends is in transit then: written at the termination,
        // under the old session id, which the server must answer 404 (`session_end.rs`).
        let ends = between.iter().find(|x| matches!(x, Action::ServerCrash { .. } | Action::SessionTerminated {}));
        if http && read.is_none() && ends == Some(&Action::SessionTerminated {}) {
            return Some(
                "the session ending before the server reads it (it is written then, under the old session id)",
            );
        }
        let crash_loses_it = read.is_none() || self.session.instances() == 1;
        let crash = |x: &Action| crash_loses_it && matches!(x, Action::ServerCrash { .. });
        if between.iter().any(|x| crash(x) || needs_stream(x)) {
            return None;
        }
        if read.is_some() && between.iter().any(|x| matches!(x, Action::KeyExpires { .. })) {
            return Some("a key record expiring before the server reads it (a server reads a request as it arrives)");
        }
        let server_first = |x: &Action| x.internal() || matches!(x, Action::ClientQueryOutcome { .. });
        if !http || !between.iter().any(server_first) {
            return None;
        }
        Some(match read {
            Some(_) => "the server reading another request, committing or answering a query first (over HTTP each request has its own POST: to the server, this one is late on the network)",
            None => "the trace's server never reads it, and does other things after it was sent (over HTTP each request has its own POST: to the server, this one is still on the network when the trace ends)",
        })
    }

    /// A send while the server is down (killed by the trace, not restarted yet): the model's
    /// attempt is lost at once, and a real client's is too. The request is really written: over
    /// stdio into the dead server's stdin, where the write fails at once (EPIPE: no process
    /// reads the pipe); over HTTP as a POST to a port nobody listens on, which is refused. The
    /// failure is the request's, kept for the client's `ClientSeesDisconnect` of this attempt.
    async fn send_while_down(
        &mut self,
        a: AttemptId,
        id: Value,
        key: Option<String>,
        extra: Option<&Map<String, Value>>,
    ) -> Result<Done, StepError> {
        let tag = self.script.call_tag(a.0);
        let logical = Logical { key: key.as_deref(), tag: &tag };
        let mut msg = self.session.call_message(&id, logical, Hold::default(), Duration::ZERO);
        with_extra(&mut msg, extra);
        if self.task_calls() {
            crate::replay::task_wire::augment(self.session.revision, &mut msg);
        }
        let gen = self.session.generation();
        let written = self.session.send(&msg).await;
        let order = self.attempts.sent.len();
        self.attempts.sent.insert(a, Sent { id: id.clone(), gen, order, cancelled: false, stream_closed: false });
        let mut note = format!("tools/call id {id}");
        if let Some(k) = key {
            note.push_str(&format!(", key {k}"));
        }
        let how = match (written, self.session.opts.target.transport()) {
            (Err(e), _) => {
                let failure = format!("the request could not be written, the server being down: {e}");
                self.session.fail_request(gen, &id, failure.clone());
                format!("{note}, to a server that is down: {failure}")
            }
            (Ok(()), Transport::Http) => {
                format!("{note}, POSTed to a server that is down: its failure (refused) is the client's to see")
            }
            (Ok(()), Transport::Stdio) => format!(
                "{note}, written to the pipe of a server that is down (the write did not fail; its closed stdout is the client's to see)"
            ),
        };
        self.note(format!("call {} attempt {}: {how}", a.0, a.1));
        Ok(Done::driven(how))
    }
}

impl Link<'_, '_> {
    pub(crate) fn client_timeout(&mut self, a: AttemptId) -> Result<Done, StepError> {
        self.attempt(a)?;
        let note = match self.response(a) {
            Some(_) => "the client stops waiting; a response had already arrived unread".to_string(),
            None => "the client stops waiting".to_string(),
        };
        Ok(Done::driven(note))
    }

    /// The client cancels attempt `a`. The model keeps the cancellation in flight until the
    /// server reads it (`ServerReceiveCancel`), on either transport, so the runner delivers it
    /// then (or after the last step): over HTTP it travels apart from the request; over stdio
    /// its write is held, which to the server is a client that cancels late.
    pub(crate) async fn client_cancel(&mut self, a: AttemptId) -> Result<Done, StepError> {
        self.attempt(a)?;
        self.attempts.sent.get_mut(&a).expect("sent").cancelled = true;
        if self.session.opts.target.transport() == Transport::Http {
            let knob = &self.script.profile.knobs.http_cancel;
            let (how, what) = match knob.value {
                HttpCancel::CloseStream => (Deferred::CloseStream, "closing the response stream"),
                _ => (Deferred::CancelNotification, "notifications/cancelled"),
            };
            if how == Deferred::CloseStream {
                self.attempts.sent.get_mut(&a).expect("sent").stream_closed = true;
            }
            self.attempts.deferred.push((a, how));
            let cite = format!("{} § {}", knob.cite.revision, knob.cite.section);
            return Ok(Done::driven(format!("{what} ({cite}); on HTTP it travels apart from the request, so it reaches the server where the trace has it read (ServerReceiveCancel), or after the last step")));
        }
        self.attempts.deferred.push((a, Deferred::CancelNotification));
        Ok(Done::driven("notifications/cancelled; over stdio its write is held until the trace has the server read it (ServerReceiveCancel), or after the last step: to the server, a client that cancels late"))
    }

    pub(crate) async fn client_receive(&mut self, a: AttemptId, state: &State) -> Result<Done, StepError> {
        let resp = self.await_response(a).await?;
        self.check_answer_kind(a, state, &resp, true)?;
        Ok(Done::observed(summarize(&resp)))
    }

    pub(crate) async fn await_response(&mut self, a: AttemptId) -> Result<Value, StepError> {
        let s = self.attempt(a)?;
        if s.stream_closed {
            return Err(StepError::diverged(format!(
                "call {} attempt {}: its response stream was closed, so a response cannot be seen",
                a.0, a.1
            )));
        }
        let bound = self.session.opts.step_timeout + self.session.opts.window * 2;
        let sent = &self.attempts.sent;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if let Some(r) = answer(sent, session, a) {
                    return Some(Ok(r));
                }
                if let Some(f) = session.failure_for(s.gen, &s.id) {
                    return Some(Err(StepError::diverged(format!(
                        "call {} attempt {}: expected a response, the request failed: {f}",
                        a.0, a.1
                    ))));
                }
                let c = session.closed(s.gen)?;
                Some(Err(StepError::diverged(format!("call {} attempt {}: expected a response, {c}", a.0, a.1))))
            })
            .await;
        seen.unwrap_or_else(|| {
            let reason = self.session.stall_note();
            Err(StepError::cannot_tell(format!(
                "call {} attempt {}: no response within {} ms{reason}",
                a.0,
                a.1,
                bound.as_millis()
            )))
        })
    }
}
