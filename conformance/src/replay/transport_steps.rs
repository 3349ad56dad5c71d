//! The driver's transport steps (an `impl` of [`Driver`] apart from its dispatch): the events
//! the client has done that the server reads later (a deferred `notifications/cancelled`, a
//! closed response stream), delivered where the trace has the server read them, and a broken
//! response stream.

use crate::replay::driver::{Deferred, Driver};
use crate::replay::pacing::AttemptId;
use crate::replay::step::{stop, Done, Sent, Stop};
use crate::replay::types::ReplayVerdict;
use mcp_once_model::Transport;
use serde_json::json;
use tokio::time::Instant;

impl Driver<'_> {
    pub(crate) async fn await_headers(&mut self, a: AttemptId, s: &Sent) -> Result<(), Stop> {
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

    /// Deliver the deferred transport events of `only` (or all of them).
    pub(crate) async fn deliver_deferred(&mut self, only: Option<AttemptId>) -> Result<Vec<String>, Stop> {
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.deferred).into_iter().partition(|(a, _)| only.is_none_or(|o| o == *a));
        self.deferred = later;
        let mut done = Vec::new();
        for (a, how) in now {
            let s = self.attempt(a)?;
            // With several instances, the event goes to the instance holding the request.
            if let Some(instance) = self.routes.get(&a).copied() {
                self.session.select(instance).map_err(|e| stop(ReplayVerdict::Diverged, e))?;
            }
            if self.held_requests.contains_key(&a) {
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

    pub(crate) async fn stream_break(&mut self, a: AttemptId) -> Result<Done, Stop> {
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
}
