//! The driver's `SessionTerminated` step (2025-11-25 § Session Management): the trace's server
//! ends the client's HTTP session, while its process and memory run on.
//!
//! No runner can make a server end a session of its own accord, but a client can ask for it: "Clients that no
//! longer need a particular session ... **SHOULD** send an HTTP DELETE to the MCP endpoint with
//! the `MCP-Session-Id` header, to explicitly terminate the session" (item 5). The runner sends
//! that DELETE, standing in for the server, and then observes the end rather than assuming it:
//! a `ping` under the old session id must be answered 404 (item 3: "after which it **MUST**
//! respond to requests containing that session ID with HTTP 404 Not Found"). The requests the
//! trace has in transit (held back until now) are written under the old id, and each must be
//! answered 404 without running, as the model has them; cancellations in transit go the same
//! way. Then the client starts a new session (item 4): `initialize` with no session id and
//! `notifications/initialized`, on a new connection; the trace's states give the request ids,
//! which start over. What else ends the step, each inconclusive with what was seen: no
//! session id at initialization (nothing to end), the DELETE refused (405, which the same item
//! lets a server answer) or answered otherwise, the old id still answered after the DELETE (a
//! breach of item 3's MUST, observed), or no answer within the bound.

use crate::replay::attempts::Deferred;
use crate::replay::driver::Driver;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{Done, StepError};
use mcp_once_model::state::{ClientSide, ServerSide};
use mcp_once_model::{State, Transport};
use serde_json::{json, Value};
use tokio::time::Instant;

/// What the step says it stands for, in every note.
const STANDS_IN: &str = "the runner ended the session with the client's DELETE (2025-11-25 § Session Management, item 5), standing in for the server ending it on its own (item 3)";

/// Why a DELETE answered `status` (with `body`) did not end the session, or `None` when it did
/// (a 2xx status).
pub fn delete_refused(status: u16, body: &str) -> Option<String> {
    let said = if body.is_empty() { String::new() } else { format!(" ({})", clip(body)) };
    match status {
        200..=299 => None,
        405 => Some(format!("the server answered the client's DELETE of its session with HTTP 405 Method Not Allowed{said}: it does not let clients end sessions, which 2025-11-25 § Session Management, item 5, allows; the runner has no other way to end a session, so the trace's termination cannot be made")),
        _ => Some(format!("the server answered the client's DELETE of its session with HTTP {status}{said}, not a success: the session was not ended, so the trace's termination cannot be made")),
    }
}

/// Why a request under the old session id answered `status` shows the session did not end,
/// or `None` for the 404 the spec requires.
pub fn still_open(what: &str, status: u16) -> Option<String> {
    (status != 404).then(|| format!("after the DELETE was accepted, {what} under the old session id was answered HTTP {status}, not 404: the server breaks 2025-11-25 § Session Management, item 3 (\"after which it **MUST** respond to requests containing that session ID with HTTP 404 Not Found\"), observed; the session did not end, so the steps after it cannot be realised"))
}

fn clip(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    let mut cut = line.len().min(120);
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    line[..cut].to_string()
}

/// The attempts the step turns away: sent, unread by the server before it, lost after it.
fn in_transit(before: &State, after: &State) -> Vec<AttemptId> {
    let mut out = Vec::new();
    for (c, attempts) in after.attempts.iter().enumerate() {
        for (a, t) in attempts.iter().enumerate() {
            let was = &before.attempts[c][a];
            if t.server == ServerSide::Lost && was.server == ServerSide::Unseen && was.client != ClientSide::Unsent {
                out.push((c as u8, a as u8));
            }
        }
    }
    out
}

impl Driver<'_> {
    /// `SessionTerminated`, from the state `before` it to the state `after` it.
    pub(crate) async fn session_terminated(&mut self, before: &State, after: &State) -> Result<Done, StepError> {
        if self.session.opts.target.transport() != Transport::Http {
            return Err(StepError::diverged("SessionTerminated: only a Streamable HTTP server has a session to end"));
        }
        let Some(session_id) = self.session.connection().session_id() else {
            return Err(StepError::fault_not_made("the server gave no MCP-Session-Id at initialization (2025-11-25 § Session Management, item 1: it MAY assign one), so there is no session for the runner to end; the trace's termination cannot be made"));
        };
        let lost = in_transit(before, after);
        if let Some(a) = lost.iter().find(|a| !self.attempts.held_requests.contains_key(a)) {
            return Err(StepError::fault_not_made(format!("call {} attempt {}: its request was written before the session ended, so the server may have read it, and the trace has it in transit then (answered 404, never run)", a.0, a.1)));
        }
        let bound = self.session.opts.step_timeout;
        let (status, body) = self.session.connection().delete_session(bound).await.map_err(|e| {
            StepError::cannot_tell(format!(
                "the client's DELETE of session {session_id} got no answer within {} ms: {e}",
                bound.as_millis()
            ))
        })?;
        if let Some(why) = delete_refused(status, &body) {
            return Err(StepError::fault_not_made(why));
        }
        let mut seen = vec![format!("DELETE with MCP-Session-Id {session_id} answered HTTP {status}")];
        // The end observed with a request that runs no tool.
        let ping = json!({"jsonrpc": "2.0", "id": self.session.own_id(), "method": "ping"});
        let status = self.status_of(&ping).await?;
        if let Some(why) = still_open("a ping", status) {
            return Err(StepError::cannot_tell(why));
        }
        seen.push("a ping under the old session id answered HTTP 404".into());
        for a in lost {
            let msg = self.attempts.held_requests.remove(&a).expect("held, checked above");
            let status = self.status_of(&msg).await?;
            if let Some(why) = still_open(&format!("call {} attempt {}'s tools/call", a.0, a.1), status) {
                return Err(StepError::cannot_tell(why));
            }
            seen.push(format!(
                "call {} attempt {} (id {}), in transit, answered HTTP 404 and not run",
                a.0, a.1, msg["id"]
            ));
        }
        let gen = self.session.generation();
        let cancels: Vec<_> =
            self.attempts.deferred.iter().filter(|(_, how)| *how == Deferred::CancelNotification).copied().collect();
        self.attempts.deferred.retain(|(_, how)| *how != Deferred::CancelNotification);
        for (a, _) in cancels {
            let s = self.attempt(a)?;
            if s.gen == gen {
                let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
                self.session
                    .send(&msg)
                    .await
                    .map_err(|e| StepError::diverged(format!("cannot send notifications/cancelled: {e}")))?;
                seen.push(format!(
                    "the cancellation of id {} in transit, written under the old session id, never read",
                    s.id
                ));
            }
        }
        self.session.open_new_session().await.map_err(|e| {
            StepError::diverged(format!("the client's new session (initialize without a session id) failed: {e}"))
        })?;
        let new_id = self.session.connection().session_id().unwrap_or_else(|| "none".into());
        let same = "the server process and what it holds in memory run on, and the client's request ids start over in the new session";
        let note = format!("{STANDS_IN}: {}; then a new session: initialize without a session id, notifications/initialized (new MCP-Session-Id {new_id}); {same}", seen.join("; "));
        self.note(format!("SessionTerminated: {note}"));
        Ok(Done::observed(note))
    }

    /// Write `msg` on the current connection (under its session id) and wait, bounded, for the
    /// HTTP status of its answer.
    async fn status_of(&mut self, msg: &Value) -> Result<u16, StepError> {
        let id = msg["id"].clone();
        let gen = self.session.generation();
        self.session
            .send(msg)
            .await
            .map_err(|e| StepError::diverged(format!("cannot write under the old session id: {e}")))?;
        let bound = self.session.opts.step_timeout;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |s| {
                if let Some(status) = s.status_for(gen, &id) {
                    return Some(Ok(status));
                }
                s.failure_for(gen, &id).map(|f| Err(f.to_string()))
            })
            .await;
        match seen {
            Some(Ok(status)) => Ok(status),
            Some(Err(f)) => Err(StepError::cannot_tell(format!(
                "request {id} under the old session id failed before any answer: {f}"
            ))),
            None => Err(StepError::cannot_tell(format!(
                "request {id} under the old session id: no answer within {} ms",
                bound.as_millis()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delete_refused_or_a_session_still_open_says_what_was_seen() {
        assert_eq!(delete_refused(200, ""), None);
        assert_eq!(delete_refused(202, "Accepted"), None);
        let refused = delete_refused(405, "Method Not Allowed").unwrap();
        assert!(
            refused.contains("HTTP 405 Method Not Allowed (Method Not Allowed)") && refused.contains("item 5"),
            "{refused}"
        );
        assert!(delete_refused(400, "Bad Request: no session\nmore")
            .unwrap()
            .contains("HTTP 400 (Bad Request: no session)"));
        assert_eq!(still_open("a ping", 404), None);
        let open = still_open("a ping", 200).unwrap();
        assert!(open.contains("answered HTTP 200, not 404") && open.contains("**MUST**"), "{open}");
    }
}
