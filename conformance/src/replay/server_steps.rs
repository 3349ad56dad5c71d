//! The driver's server steps (an `impl` of [`Driver`] apart from its dispatch): awaited with
//! a bound and observed (the request read, the effect counted, the response seen), never
//! assumed.

use crate::replay::driver::Driver;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{commit_seen, commit_timeout, stop, summarize, Commit, Done, Stop};
use crate::replay::types::ReplayVerdict;
use mcp_once_model::{Action, Transport};
use std::time::Duration;
use tokio::time::Instant;

impl Driver<'_> {
    pub(crate) async fn server_receive(&mut self, a: AttemptId) -> Result<Done, Stop> {
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

    pub(crate) async fn server_commit(&mut self, a: AttemptId, expected: u64) -> Result<Done, Stop> {
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

    pub(crate) async fn server_respond(&mut self, a: AttemptId) -> Result<Done, Stop> {
        let resp = self.await_response(a).await?;
        Ok(Done::observed(summarize(&resp)))
    }
}
