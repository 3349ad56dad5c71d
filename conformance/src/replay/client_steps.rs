//! The driver's client steps (an `impl` of [`Driver`] apart from its dispatch): sending an
//! attempt (a call, a retry, a framework re-run), the client's timeout and cancellation, and
//! reading a response.

use crate::replay::driver::{Deferred, Driver};
use crate::replay::message::Logical;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{answer, stop, summarize, Done, Sent, Stop};
use crate::replay::types::ReplayVerdict;
use mcp_once_model::profile::HttpCancel;
use mcp_once_model::{Action, State, Transport};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

impl Driver<'_> {
    pub(crate) async fn client_send(&mut self, call: u8, attempt: u8, state: &State) -> Result<Done, Stop> {
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

    pub(crate) fn client_timeout(&mut self, a: AttemptId) -> Result<Done, Stop> {
        self.attempt(a)?;
        let note = match self.response(a) {
            Some(_) => "the client stops waiting; a response had already arrived unread".to_string(),
            None => "the client stops waiting".to_string(),
        };
        Ok(Done::driven(note))
    }

    pub(crate) async fn client_cancel(&mut self, a: AttemptId) -> Result<Done, Stop> {
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

    pub(crate) async fn client_receive(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let resp = self.await_response(a).await?;
        Ok(Done::observed(summarize(&resp)))
    }

    pub(crate) async fn await_response(&mut self, a: AttemptId) -> Result<Value, Stop> {
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
}
