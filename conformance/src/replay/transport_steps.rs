//! The transport steps (an `impl` of [`Link`]: the session and the attempts): the events
//! the client has done that the server reads later (a deferred `notifications/cancelled`, a
//! closed response stream), delivered where the trace has the server read them, and a broken
//! response stream.

use crate::replay::attempts::Deferred;
use crate::replay::link::Link;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{summarize, Done, Sent, StepError};
use mcp_once_model::{Action, Transport};
use serde_json::json;
use tokio::time::Instant;

impl Link<'_, '_> {
    pub(crate) async fn await_headers(&mut self, a: AttemptId, s: &Sent) -> Result<(), StepError> {
        let bound = self.session.opts.step_timeout;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if session.has_headers(s.gen, &s.id) {
                    return Some(Ok(()));
                }
                let f = session.failure_for(s.gen, &s.id)?;
                Some(Err(StepError::diverged(format!("call {} attempt {}: the request failed: {f}", a.0, a.1))))
            })
            .await;
        seen.unwrap_or_else(|| {
            Err(StepError::cannot_tell(format!(
                "call {} attempt {}: no HTTP response headers within {} ms",
                a.0,
                a.1,
                bound.as_millis()
            )))
        })
    }

    /// Close attempt `a`'s response stream as the trace's break or cancellation has it, once the
    /// server has the request: its commit, earlier in the trace, was seen; else its response
    /// headers arrive. A response already in when the trace's server has not answered yet means
    /// the stream cannot be broken before the reply (a server that sends its headers only with
    /// its result, or answers before the runner comes to the close): the fault the trace needs
    /// is not made, and the replay is inconclusive, never a verdict named after that fault.
    /// Returns whether the stream was still open. After the last step (`strict` false) the
    /// close is past the trace, which has the server read it later: it is made however the
    /// stream stands.
    pub(crate) async fn close_before_reply(&mut self, a: AttemptId, s: &Sent, strict: bool) -> Result<bool, StepError> {
        let (call, attempt) = a;
        let committing = self.script.realising() == Some(&Action::ServerCommit { call, attempt });
        if !committing && !self.script.done_in_trace(&Action::ServerCommit { call, attempt }) {
            self.await_headers(a, s).await?;
        }
        // Every event already read counts: a response taken in after the close was in before it.
        self.session.drain().await;
        if strict {
            self.reply_not_in_yet(a)?;
        }
        if let Some(open) = self.session.closed_at_headers(s.gen, &s.id) {
            // Closed already, the moment its event stream opened.
            return Ok(open);
        }
        let open = self.session.close_stream(&s.id);
        if !open && strict {
            self.session.drain().await;
            self.reply_not_in_yet(a)?;
        }
        Ok(open)
    }

    /// `Err` (inconclusive: the fault was not made) when attempt `a`'s response is in and the
    /// trace's server has not answered it yet. A task-augmented call's `CreateTaskResult` is
    /// written, in the model, as the server reads the request: once the trace's server has read
    /// it, that answer arriving is the trace's own, lost with the stream the client broke.
    fn reply_not_in_yet(&self, a: AttemptId) -> Result<(), StepError> {
        let (call, attempt) = a;
        let task_result_written = |r: &serde_json::Value| {
            self.script.task_calls()
                && crate::replay::task_wire::task_id_of(self.session.revision, r).is_some()
                && self.script.received_in_trace(call, attempt)
        };
        match self.response(a) {
            Some(r)
                if !self.script.done_in_trace(&Action::ServerRespond { call, attempt }) && !task_result_written(&r) =>
            {
                Err(StepError::fault_not_made(
                format!(
                    "call {call} attempt {attempt}: its response ({}) had arrived when the runner came to close its stream, and the trace's server has not answered yet: the stream could not be broken before the reply, so the fault the trace needs was not made",
                    summarize(&r)
                ),
            ))
            }
            _ => Ok(()),
        }
    }

    /// After attempt `a`'s commit (`done`, its step): a stream the client broke, or closed to
    /// cancel, that the trace's server never reads as a cancellation is closed now, before the
    /// reply. The model keeps such a close in flight past the trace's end, so the server seeing
    /// it after its commit is the trace's own order; the commit is what shows the server has the
    /// request when it sends no headers before its result. The commit's note says what was done.
    pub(crate) async fn close_unread_after_commit(&mut self, a: AttemptId, mut done: Done) -> Result<Done, StepError> {
        let (call, attempt) = a;
        // Left for its own step: a close the server reads later, or a stream the server still
        // answers on later in the trace.
        let later = self.script.later_in_trace(&Action::ServerReceiveCancel { call, attempt })
            || self.script.later_in_trace(&Action::ServerRespond { call, attempt });
        let pending = self.attempts.deferred.iter().position(|(x, how)| *x == a && *how == Deferred::CloseStream);
        let (Some(at), false) = (pending, later) else { return Ok(done) };
        self.attempts.deferred.remove(at);
        let s = self.attempt(a)?;
        let open = self.close_before_reply(a, &s, true).await?;
        let how = if open { " before the reply" } else { " (it had already ended)" };
        done.note =
            format!("{}; then the response stream of id {} closed{how}, as the client broke it", done.note, s.id);
        Ok(done)
    }

    /// Deliver the deferred transport events of `only` (or all of them).
    pub(crate) async fn deliver_deferred(&mut self, only: Option<AttemptId>) -> Result<Vec<String>, StepError> {
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.attempts.deferred).into_iter().partition(|(a, _)| only.is_none_or(|o| o == *a));
        self.attempts.deferred = later;
        let mut done = Vec::new();
        for (a, how) in now {
            let s = self.attempt(a)?;
            // With several instances, the event goes to the instance holding the request.
            if let Some(instance) = self.attempts.routes.get(&a).copied() {
                self.session.select(instance).map_err(StepError::diverged)?;
            }
            if self.attempts.held_requests.contains_key(&a) {
                done.push(format!("call {} attempt {}: nothing to deliver (its request was never written)", a.0, a.1));
                continue;
            }
            if s.gen != self.session.generation() || self.session.check_exit().is_some() {
                done.push(format!("call {} attempt {}: dropped (its connection is gone)", a.0, a.1));
                continue;
            }
            match how {
                Deferred::CancelNotification => {
                    let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
                    self.session
                        .send(&msg)
                        .await
                        .map_err(|e| StepError::diverged(format!("cannot send notifications/cancelled: {e}")))?;
                    done.push(format!("notifications/cancelled for id {} delivered", s.id));
                }
                Deferred::CloseStream => {
                    let open = self.close_before_reply(a, &s, only.is_some()).await?;
                    done.push(format!(
                        "response stream of id {} closed{}",
                        s.id,
                        if open { " before the reply" } else { " (it had already ended)" }
                    ));
                }
            }
        }
        Ok(done)
    }

    pub(crate) async fn stream_break(&mut self, a: AttemptId) -> Result<Done, StepError> {
        self.attempt(a)?;
        if self.session.opts.target.transport() != Transport::Http {
            return Err(StepError::diverged("StreamBreak needs an HTTP response stream"));
        }
        self.attempts.sent.get_mut(&a).expect("sent").stream_closed = true;
        let committed = self.script.done_in_trace(&Action::ServerCommit { call: a.0, attempt: a.1 });
        if !self.script.profile.knobs.http_disconnect_is_cancel.value && !committed {
            // A disconnect is no cancellation here: the close matters to the client, which loses
            // the reply. Made once the server's commit shows it has the request, before the reply
            // (a server that sends its headers only with its result shows nothing earlier).
            let s = self.attempt(a)?;
            self.session.close_once_accepted(s.gen, &s.id);
            self.attempts.deferred.push((a, Deferred::CloseStream));
            return Ok(Done::driven("the client's response stream breaks; under this revision a disconnect is not a cancellation, so the runner closes it once the server has the request (its event stream opens, or its commit shows), before the reply"));
        }
        if !self.script.profile.knobs.http_disconnect_is_cancel.value {
            // After the commit: closed now, before the reply.
            let s = self.attempt(a)?;
            let open = self.close_before_reply(a, &s, true).await?;
            let how = if open { "closed now, before the reply" } else { "closed now (it had already ended)" };
            return Ok(Done::driven(format!(
                "the client's response stream breaks: {how}; under this revision a disconnect is not a cancellation"
            )));
        }
        self.attempts.deferred.push((a, Deferred::CloseStream));
        Ok(Done::driven("the client's response stream breaks; the server sees the connection close where the trace has it read the cancellation, or after the last step"))
    }
}
