//! The server steps (reading a held request is the driver's, as it writes a note; the rest
//! are a [`Link`]'s, the session and the attempts only): awaited with
//! a bound and observed (the request read, the effect counted, the response seen), never
//! assumed; and a key record's expiry, waited out on the server's retention.

use crate::replay::driver::Driver;
use crate::replay::link::Link;
use crate::replay::observer::{read_ledger_lines, Source};
use crate::replay::pacing::AttemptId;
use crate::replay::step::{commit_seen, commit_timeout, summarize, Commit, Done, StepError};
use mcp_once_model::{Action, State, Transport};
use serde_json::Value;
use std::time::Duration;
use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;
use tokio::time::Instant;

impl Driver<'_> {
    pub(crate) async fn server_receive(&mut self, a: AttemptId) -> Result<Done, StepError> {
        let s = self.attempt(a)?;
        if let Some(msg) = self.attempts.held_requests.remove(&a) {
            let sent = self.session.send(&msg).await;
            sent.map_err(|e| StepError::diverged(format!("cannot send call {} attempt {}: {e}", a.0, a.1)))?;
            self.note(format!(
                "call {} attempt {}: its request written now, as the trace has the server read it",
                a.0, a.1
            ));
        }
        match self.session.opts.target.transport() {
            Transport::Stdio => {
                if self.session.closed(s.gen).is_some() || self.session.check_exit().is_some() {
                    return Err(StepError::diverged(format!(
                        "call {} attempt {}: the server is gone before it could read the request",
                        a.0, a.1
                    )));
                }
                Ok(Done::delivered("written to the live server's stdin; its commit or response confirms it"))
            }
            Transport::Http => {
                if s.stream_closed {
                    return Ok(Done::delivered(
                        "POSTed before the client broke its stream; its commit or answer confirms the server read it",
                    ));
                }
                // A server may send its headers only with its result; when the trace's next step
                // is this attempt's commit, that commit confirms the read instead.
                let commit = Action::ServerCommit { call: a.0, attempt: a.1 };
                if !self.session.has_headers(s.gen, &s.id) && self.script.next_in_trace(&commit) {
                    return Ok(Done::delivered(
                        "POSTed, no response headers yet; its commit, next, confirms the server read it",
                    ));
                }
                self.link().await_headers(a, &s).await?;
                Ok(Done::observed("the server accepted the POST (response headers)"))
            }
        }
    }
}

impl Link<'_, '_> {
    pub(crate) async fn server_commit(
        &mut self,
        a: AttemptId,
        expected: u64,
        baseline: f64,
    ) -> Result<Done, StepError> {
        let s = self.attempt(a)?;
        let held = self.attempts.holds.get(&a).is_some_and(|h| h.before_commit) && self.session.pace_args;
        let bound = self.session.opts.step_timeout + if held { self.session.opts.window } else { Duration::ZERO };
        let sent = &self.attempts.sent;
        // The violating step: the first commit at or past the state where the trace's property
        // fails (for the worst case: where a call first has two effects); that commit and any
        // after it may be refused by a server that does better, the ones before it must happen.
        let here =
            self.script.trace.actions.iter().position(|x| *x == Action::ServerCommit { call: a.0, attempt: a.1 });
        let violating = match (here, self.script.first_violation) {
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
        Err(commit_timeout(self.session, a, &s, bound, n, expected))
    }

    pub(crate) async fn server_respond(&mut self, a: AttemptId, state: &State) -> Result<Done, StepError> {
        let resp = self.await_response(a).await?;
        self.check_answer_kind(a, state, &resp, false)?;
        Ok(Done::observed(summarize(&resp)))
    }

    /// `KeyExpires`: the record of `call`'s key `key` leaves the server's retention window. The
    /// runner cannot touch the server's clock; it knows the retention it started the fixture
    /// with, and when the record was written (the time on the ledger line that carries it, the
    /// fixture writing record and effect in one line), so it waits, bounded, until the retention
    /// has passed since then, plus a margin. Whether the record really expired shows in how the
    /// server answers the attempts after it.
    pub(crate) async fn key_expires(&mut self, call: u8, key: u8) -> Result<Done, StepError> {
        let Some(retention) = self.session.opts.key_retention else {
            return Err(StepError::diverged("KeyExpires: the runner cannot make a server's key record expire (no key retention was set; the Rust fixture's key-expiring variant has one)"));
        };
        let Source::Ledger { path, filter } = &self.session.opts.observer.source else {
            return Err(StepError::diverged(
                "KeyExpires: the record's time is read from the ledger, and the observer is not one",
            ));
        };
        let name = self.script.key_name(call, key);
        let lines = read_ledger_lines(path, filter.as_ref()).await.map_err(StepError::cannot_tell)?;
        let line = lines.iter().rev().find(|l| l.get("idempotency_key").and_then(Value::as_str) == Some(name.as_str()));
        let Some(time) = line.and_then(|l| l.get("time")).and_then(Value::as_str).map(str::to_string) else {
            return Err(StepError::diverged(format!(
                "KeyExpires: no ledger line carries key {name}, so the server holds no record of it to expire"
            )));
        };
        let written = OffsetDateTime::parse(&time, &Rfc3339)
            .map_err(|e| StepError::cannot_tell(format!("KeyExpires: the ledger line's time `{time}`: {e}")))?;
        let expires = written + retention + EXPIRY_MARGIN;
        let wait = expires - OffsetDateTime::now_utc();
        if wait > retention + EXPIRY_MARGIN {
            return Err(StepError::cannot_tell(format!(
                "KeyExpires: the record of {name} is dated {time}, in the future of the runner's clock"
            )));
        }
        let waited = wait.max(time::Duration::ZERO);
        tokio::time::sleep(waited.unsigned_abs()).await;
        Ok(Done::driven(format!(
            "the record of key {name} was written at {time} and the server keeps records {} ms: waited {} ms, until {} ms after it",
            retention.as_millis(),
            waited.whole_milliseconds(),
            (retention + EXPIRY_MARGIN).as_millis()
        )))
    }
}

/// How long past the retention a `KeyExpires` waits: the server counts a record expired only
/// once strictly more than the retention has passed, on a clock read in whole milliseconds.
const EXPIRY_MARGIN: Duration = Duration::from_millis(200);
