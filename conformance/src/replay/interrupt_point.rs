//! The interrupt point (an `impl` of [`Link`]: the session and the attempts): a trace
//! whose server reads an attempt's cancellation after its effect and before its key record, and
//! stops there (`--cancel interrupts`, the model's `Interrupted` stage), so the record is never
//! written and a retry runs the effect again with no crash at all.
//!
//! The usual delivery of a closed stream waits for the response headers first (the server must
//! have the request before its stream can be closed on it); rmcp sends those only once the
//! handler is done, after the key record, so the close would land too late. Here the commit the
//! previous step observed (the effect's ledger line) already proves the server has the request:
//! the cancellation is delivered at once (the stream's connection dropped, or the
//! `notifications/cancelled` written), inside the hold the runner asked for after the commit.
//! Then the runner waits, bounded, for the server to show what it did: the ledger fixtures log
//! `charge ID: interrupted after its commit, before its key record`, and write key records to
//! `<ledger>.keys` with the request's id. A record written by the attempt is the server not interrupted
//! (`not-reproduced`). Neither within the bound (any server that is not a ledger fixture) leaves
//! the step unobserved and the replay goes on: the retry after it, and the effects counted at the
//! end, show whether the handler stopped.

use crate::replay::attempts::Deferred;
use crate::replay::link::Link;
use crate::replay::observer::Source;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{Done, StepError};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use tokio::time::Instant;

/// What a ledger fixture logs when its handler stops between its effect and its key record
/// (after `charge ID: `).
pub const INTERRUPTED_LOG: &str = "interrupted after its commit, before its key record";

/// Where a ledger fixture keeps key records written after the effect: `<ledger>.keys`.
pub fn keys_file(ledger: &Path) -> PathBuf {
    let mut name = ledger.as_os_str().to_owned();
    name.push(".keys");
    PathBuf::from(name)
}

/// The key record written by `id`'s request among the lines of a keys file (a record another
/// attempt of the call writes, a retry already running, is that attempt's, not this one's).
fn record_for(text: &str, id: &Value) -> Option<Value> {
    text.lines().filter_map(|l| serde_json::from_str::<Value>(l).ok()).find(|l| l.get("request_id") == Some(id))
}

impl Link<'_, '_> {
    /// `ServerReceiveCancel` of attempt `a` where the trace's handler is interrupted between
    /// its effect and its key record: deliver the cancellation now, then see the server stop.
    pub(crate) async fn interrupt_after_commit(&mut self, a: AttemptId) -> Result<Done, StepError> {
        let s = self.attempt(a)?;
        // A ledger fixture's key file sits beside its ledger; with another observer there is none.
        let keys = match &self.session.opts.observer.source {
            Source::Ledger { path, .. } => Some(keys_file(path)),
            _ => None,
        };
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.attempts.deferred).into_iter().partition(|(x, _)| *x == a);
        self.attempts.deferred = later;
        let from = self.session.server_log().position();
        let mut delivered = Vec::new();
        for (_, how) in now {
            match how {
                Deferred::CloseStream => {
                    // The effect seen proves the server has the request: no headers awaited.
                    let open = self.close_before_reply(a, &s, true).await?;
                    delivered.push(format!(
                        "response stream of id {} closed at once, its effect seen and no headers awaited{}",
                        s.id,
                        if open { "" } else { " (it had already ended)" }
                    ));
                }
                Deferred::CancelNotification => {
                    let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
                    self.session
                        .send(&msg)
                        .await
                        .map_err(|e| StepError::diverged(format!("cannot send notifications/cancelled: {e}")))?;
                    delivered.push(format!("notifications/cancelled for id {} delivered", s.id));
                }
            }
        }
        if delivered.is_empty() && (s.cancelled || s.stream_closed) {
            // Over stdio a held cancellation is written before any later send on the same pipe.
            delivered.push(format!(
                "the cancellation of id {} was written earlier (before a later send on the same pipe)",
                s.id
            ));
        } else if delivered.is_empty() {
            return Err(StepError::diverged(format!(
                "call {} attempt {}: the trace's server reads a cancellation the client never sent",
                a.0, a.1
            )));
        }
        let needle = format!("charge {}: {INTERRUPTED_LOG}", s.id);
        let bound = self.session.opts.step_timeout;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if let Some(keys) = &keys {
                    let text = tokio::fs::read_to_string(keys).await.unwrap_or_default();
                    if let Some(record) = record_for(&text, &s.id) {
                        return Some(Err(record));
                    }
                }
                session.server_log().find_since(from, &needle).map(Ok)
            })
            .await;
        let delivered = delivered.join("; ");
        match seen {
            Some(Ok(line)) => Ok(Done::observed(format!(
                "{delivered}; the server logged `{}` and wrote no key record for call {}",
                line.trim(),
                a.0
            ))),
            Some(Err(record)) => Err(StepError::no_effect(format!(
                    "call {} attempt {}: {delivered}, and the server wrote the key record anyway ({record}): its handler was not interrupted between its effect and its record",
                    a.0, a.1
                ),
            )),
            // A server that is not one of the ledger fixtures gives neither sign: the replay goes
            // on, and what its handler did shows in the attempts after it (a retry that takes
            // effect again, or one answered from the key's record) and in the effects counted.
            None => Ok(Done::unobserved(format!(
                "{delivered}; within {} ms the server gave no sign the runner can read of whether its handler stopped before its key record (the ledger fixtures log `{INTERRUPTED_LOG}` or write `<ledger>.keys`): the attempts after it show it",
                bound.as_millis()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_is_the_attempt_s_own_by_request_id() {
        let text = "{\"idempotency_key\":\"n-c0-k1\",\"request_id\":2}\nnot json\n";
        assert!(record_for(text, &json!(2)).is_some(), "by request id");
        assert!(record_for(text, &json!(1)).is_none(), "the retry's record is not the first attempt's");
        assert!(record_for(text, &json!("2")).is_none(), "ids compare as JSON");
        assert!(record_for("", &json!(1)).is_none());
        assert_eq!(keys_file(Path::new("/x/ledger.jsonl")), PathBuf::from("/x/ledger.jsonl.keys"));
    }
}
