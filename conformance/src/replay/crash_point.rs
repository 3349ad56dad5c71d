//! The driver's crash steps (an `impl` of [`Driver`] apart from its other steps): a crash point between an attempt's effect and its response, made on
//! any server (by the tool's delay arguments where it has them, else by holding the response's
//! write under strace over stdio, else by an emulated loss), the kill, the client seeing the
//! connection break, and the restart. Each crash point is logged with its method and with
//! whether the response had left the server before the kill.

use crate::replay::driver::Driver;
use crate::replay::evidence::Event;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{answer, summarize, Done, StepError};
use crate::replay::types::CrashMethod;
use mcp_once_model::{Action, Transport};
use tokio::time::Instant;

/// Whether the trace kills the server after attempt `a`'s commit and before its response (or
/// with no response at all).
pub fn crash_after_commit(actions: &[Action], a: AttemptId) -> bool {
    let commit = Action::ServerCommit { call: a.0, attempt: a.1 };
    let respond = Action::ServerRespond { call: a.0, attempt: a.1 };
    let Some(m) = actions.iter().position(|x| *x == commit) else { return false };
    let end = actions[m..].iter().position(|x| *x == respond).map_or(actions.len(), |i| i + m);
    actions[m..end].iter().any(|x| matches!(x, Action::ServerCrash { .. }))
}

impl Driver<'_> {
    /// Before attempt `a` is sent: if the trace kills the server between its effect and its
    /// response, choose how that crash point is made (and hold the response's write if it can).
    pub(crate) async fn arm_crash_point(&mut self, a: AttemptId) {
        if !crash_after_commit(&self.script.trace.actions, a) {
            return;
        }
        let method = if self.session.pace_args {
            CrashMethod::DelayArgs
        } else if !self.session.opts.observer.outside_server() {
            self.note("crash point: a tool observer is read through the server's own stdout, which a held write would block; the loss is emulated".into());
            CrashMethod::EmulatedLoss
        } else {
            let hold = self.session.opts.step_timeout + self.session.opts.window;
            match self.session.hold_responses(hold).await {
                Ok(()) => {
                    self.note(format!("crash point: call {} attempt {}: the server's writes to stdout are held by strace at the syscall's entry, so the kill lands after the effect and before the response leaves the process", a.0, a.1));
                    CrashMethod::Ptrace
                }
                Err(e) => {
                    self.note(format!("crash point: the response cannot be held ({e}); the loss is emulated: the group is killed once the observer shows the effect, and a response that reached the runner first is treated as lost"));
                    CrashMethod::EmulatedLoss
                }
            }
        };
        self.attempts.crash_points.push((a, method, None));
    }

    /// Whether attempt `a`'s response, if it arrives, is treated as lost (a crash point not
    /// made by delay arguments).
    fn response_lost(&self, a: AttemptId) -> bool {
        self.attempts.crash_points.iter().any(|(x, m, _)| *x == a && *m != CrashMethod::DelayArgs)
    }

    /// Whether a crash point let the response reach the runner before the kill (an emulated
    /// loss, which can hide a violation on a server that records its key only as it replies).
    pub(crate) fn emulated_loss(&self) -> bool {
        self.attempts.crash_points.iter().any(|(_, _, written)| *written == Some(true))
    }

    pub(crate) async fn client_sees_disconnect(&mut self, a: AttemptId) -> Result<Done, StepError> {
        let s = self.attempt(a)?;
        let bound = self.session.opts.step_timeout;
        let lost = self.response_lost(a);
        // An answer that comes before the break the trace loses it to is a fault not made (the
        // runner's timing, or a CreateTaskResult the tool gave it no way to hold), never a
        // server that differs from the trace.
        let unheld_task_result = self.task_calls()
            && !self.holds_task(a)
            && self.attempts.holds.get(&a).is_some_and(|h| h.before_task_result)
            && !self.session.task_result_arg;
        let sent = &self.attempts.sent;
        let seen = self
            .session
            .wait_until(Instant::now() + bound, async |session| {
                if let Some(r) = answer(sent, session, a) {
                    if lost {
                        return Some(Ok(Done::observed(format!("the connection broke; the response the server had written before the kill ({}) is treated as lost (emulated crash point)", summarize(&r)))));
                    }
                    if unheld_task_result {
                        return Some(Err(StepError::fault_not_made(format!("call {} attempt {}: the server wrote its CreateTaskResult ({}) before the connection broke, and the tool takes no delay_task_result_ms to hold it: the loss the trace needs was not made", a.0, a.1, summarize(&r)))));
                    }
                    return Some(Err(StepError::fault_not_made(format!("call {} attempt {}: the server answered before the connection broke ({}), though asked to hold its answer: the pacing window was too short, so the loss the trace needs was not made", a.0, a.1, summarize(&r)))));
                }
                // A request that failed as it was sent (the server down) is the break the
                // client sees; otherwise stdio's is the closed stdout.
                let why = match session.opts.target.transport() {
                    Transport::Stdio => session.failure_for(s.gen, &s.id).or_else(|| session.closed(s.gen)),
                    Transport::Http => session.failure_for(s.gen, &s.id),
                };
                why.map(|w| Ok(Done::observed(w)))
            })
            .await;
        seen.unwrap_or_else(|| {
            Err(StepError::cannot_tell(format!(
                "call {} attempt {}: the connection did not break within {} ms",
                a.0,
                a.1,
                bound.as_millis()
            )))
        })
    }

    pub(crate) async fn server_crash(&mut self) -> Result<Done, StepError> {
        if !self.session.can_restart() {
            return Err(StepError::diverged(
                "ServerCrash: the runner did not start this HTTP server; give --launch so it can kill and restart it",
            ));
        }
        if !self.session.opts.observer.outside_server() {
            self.pre_crash = Some(self.effects_now().await.map_err(StepError::cannot_tell)?);
        }
        self.session.kill().await.map_err(|e| StepError::diverged(format!("ServerCrash: {e}")))?;
        // What the server wrote before it died is read to the end: did the response get out?
        self.session.await_closed(self.session.generation(), std::time::Duration::from_secs(1)).await;
        self.session.drain().await;
        let mut notes = Vec::new();
        for i in 0..self.attempts.crash_points.len() {
            let (a, method, _) = self.attempts.crash_points[i];
            let Some(s) = self.attempts.sent.get(&a) else { continue };
            if s.gen != self.session.generation() || self.attempts.crash_points[i].2.is_some() {
                continue;
            }
            let written = answer(&self.attempts.sent, &self.session, a).is_some();
            self.attempts.crash_points[i].2 = Some(written);
            self.session.evidence.record(Event::CrashPoint {
                attempt: format!("call {} attempt {}", a.0, a.1),
                method,
                response_written: written,
            });
            notes.push(match (method, written) {
                (CrashMethod::Ptrace, false) => "killed while strace held the response's write: it never left the server".to_string(),
                (CrashMethod::DelayArgs, false) => "killed while the tool's delay held the response".to_string(),
                (_, false) => "killed before the server wrote the response".to_string(),
                (CrashMethod::DelayArgs, true) => "the server had written the response before the kill, though its delay was to hold it".to_string(),
                (_, true) => "the server had written the response before the kill; the runner treats it as lost (emulated crash point)".to_string(),
            });
        }
        let mut done = "SIGKILL to the server's process group; reaped".to_string();
        if !notes.is_empty() {
            done = format!("{done} ({})", notes.join("; "));
        }
        Ok(Done::driven(done))
    }

    pub(crate) async fn server_restart(&mut self) -> Result<Done, StepError> {
        self.session
            .start()
            .await
            .map_err(|e| StepError::diverged(format!("ServerRestart: the server did not come back: {e}")))?;
        if let Some(before) = self.pre_crash.take() {
            let after = self.effects_now().await.map_err(StepError::cannot_tell)?;
            if before == 0 {
                return Err(StepError::cannot_tell("the tool observer had no effect to show before the crash, so it cannot show that effects survive a restart"));
            }
            if after < before {
                return Err(StepError::cannot_tell(format!("the observer lost state across the restart ({before} effects before, {after} after): it cannot see effects across a restart")));
            }
        }
        Ok(Done::driven("restarted and handshake answered"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    #[test]
    fn a_kill_between_commit_and_response_is_a_crash_point() {
        let t = [
            ClientCall { call: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerCrash { instance: 0 },
            ClientSeesDisconnect { call: 0, attempt: 0 },
            ServerRestart { instance: 0 },
            ClientRetry { call: 0, attempt: 1 },
            ServerReceive { call: 0, attempt: 1, instance: 0 },
            ServerCommit { call: 0, attempt: 1 },
        ];
        assert!(crash_after_commit(&t, (0, 0)));
        assert!(!crash_after_commit(&t, (0, 1)), "the retry is not killed");
        let answered = [
            ClientCall { call: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerRespond { call: 0, attempt: 0 },
            ServerCrash { instance: 0 },
        ];
        assert!(!crash_after_commit(&answered, (0, 0)), "the kill comes after the response");
    }
}
