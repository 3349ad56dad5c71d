//! Pacing: which server-internal steps a replay must hold back so that they happen where the
//! trace puts them. The runner drives the client's and the environment's steps at once, but the
//! server runs a tool at its own speed; when the trace puts other steps between an attempt's
//! request and its commit (a cancellation, a kill, another attempt), the commit must wait, and
//! likewise between its commit and its response. A server that offers delay arguments (the
//! ledger fixtures' `delay_before_ms` / `delay_after_ms`) is asked to wait for a window; the
//! runner then checks that the order really happened and never assumes it.

use mcp_once_model::{Action, Actor, Transport};
use std::collections::BTreeMap;

/// An attempt: (logical call, attempt index).
pub type AttemptId = (u8, u8);

/// What one attempt needs held.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Hold {
    /// The commit must wait (other steps come between the request and the commit, or the
    /// attempt never commits in the trace).
    pub before_commit: bool,
    /// The response must wait (other steps come between the commit and the response, or the
    /// attempt commits but never responds in the trace).
    pub before_respond: bool,
}

/// The attempt an action belongs to, if any (a `ClientCall` starts attempt 0).
pub fn attempt_of(a: &Action) -> Option<AttemptId> {
    match *a {
        Action::ClientCall { call } => Some((call, 0)),
        _ => a.attempt(),
    }
}

/// Whether an action sends a new attempt (an MRTR continuation is one too).
pub fn is_send(a: &Action) -> bool {
    matches!(
        a,
        Action::ClientCall { .. }
            | Action::ClientRetry { .. }
            | Action::FrameworkRetry { .. }
            | Action::ClientContinue { .. }
    )
}

/// The holds each attempt of a trace needs. A step of the same attempt that the server does
/// for that same attempt (reading the request, storing its key) does not count as coming between.
/// An attempt that never commits but is answered (an MRTR handler asking for input before its
/// effect) is held, if at all, before that answer: the fixture's `delay_before_ms` holds the
/// point where its handler either takes the effect or answers without it.
pub fn holds(actions: &[Action]) -> BTreeMap<AttemptId, Hold> {
    let mut out = BTreeMap::new();
    for (s, a) in actions.iter().enumerate() {
        if !is_send(a) {
            continue;
        }
        let id = attempt_of(a).expect("a send has an attempt");
        let find = |from: usize, want: Action| actions[from..].iter().position(|x| *x == want).map(|i| i + from);
        // A step comes between unless the server does it for this same attempt.
        let between = |x: &Action| x.actor() != Actor::Server || attempt_of(x) != Some(id);
        let commit = find(s + 1, Action::ServerCommit { call: id.0, attempt: id.1 });
        let decision = commit.or_else(|| find(s + 1, Action::ServerRespond { call: id.0, attempt: id.1 }));
        let before_commit = actions[s + 1..decision.unwrap_or(actions.len())].iter().any(between);
        let before_respond = commit.is_some_and(|m| {
            let respond = find(m + 1, Action::ServerRespond { call: id.0, attempt: id.1 });
            actions[m + 1..respond.unwrap_or(actions.len())].iter().any(between)
        });
        out.insert(id, Hold { before_commit, before_respond });
    }
    out
}

/// [`holds`] over `transport`: over Streamable HTTP, an attempt whose response stream the client
/// breaks (or closes to cancel) and whose server never reads that close nor answers in the trace
/// also has its response held, so that the runner can close the stream after the commit and
/// before the reply (`transport_steps.rs`).
pub fn holds_over(actions: &[Action], transport: Transport) -> BTreeMap<AttemptId, Hold> {
    let mut out = holds(actions);
    if transport == Transport::Http {
        for (&(call, attempt), hold) in out.iter_mut() {
            let has = |a: Action| actions.contains(&a);
            let closed = has(Action::StreamBreak { call, attempt }) || has(Action::ClientCancel { call, attempt });
            let later =
                has(Action::ServerReceiveCancel { call, attempt }) || has(Action::ServerRespond { call, attempt });
            if closed && !later && has(Action::ServerCommit { call, attempt }) {
                hold.before_respond = true;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Action::*;

    #[test]
    fn a_commit_after_a_cancel_and_a_response_after_a_kill_are_held() {
        // Scenario 1's shortest trace: the commit of attempt 0 comes after the timeout, the
        // cancellation and the retry; attempt 1 commits after attempt 0 did.
        let t = [
            ClientCall { call: 0 },
            ClientTimeout { call: 0, attempt: 0 },
            ClientCancel { call: 0, attempt: 0 },
            ClientRetry { call: 0, attempt: 1 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerReceive { call: 0, attempt: 1, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerCommit { call: 0, attempt: 1 },
        ];
        let h = holds(&t);
        assert_eq!(h[&(0, 0)], Hold { before_commit: true, before_respond: true });
        assert_eq!(h[&(0, 1)], Hold { before_commit: true, before_respond: false });

        // Scenario 2: commit at once, then the kill must come before the response.
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
        let h = holds(&t);
        assert_eq!(h[&(0, 0)], Hold { before_commit: false, before_respond: true });
        assert_eq!(h[&(0, 1)], Hold::default());

        // A call that runs straight through needs nothing held.
        let t = [
            ClientCall { call: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerRespond { call: 0, attempt: 0 },
            ClientReceive { call: 0, attempt: 0 },
        ];
        assert_eq!(holds(&t)[&(0, 0)], Hold::default());
    }

    #[test]
    fn an_answer_without_an_effect_is_held_only_when_steps_come_before_it() {
        // MRTR, asking before the effect: the first request is answered with no commit, the
        // client reads it and continues; nothing comes between request and answer.
        let t = [
            ClientCall { call: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerRespond { call: 0, attempt: 0 },
            ClientReceive { call: 0, attempt: 0 },
            ClientContinue { call: 0, attempt: 1 },
            ServerReceive { call: 0, attempt: 1, instance: 0 },
            ServerCommit { call: 0, attempt: 1 },
        ];
        let h = holds(&t);
        assert_eq!(h[&(0, 0)], Hold::default(), "the answer comes at once");
        assert_eq!(h[&(0, 1)], Hold::default(), "a continuation is a send like any other");
        // The other call's request comes between: the answer is held.
        let t = [
            ClientCall { call: 0 },
            ClientCall { call: 1 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerRespond { call: 0, attempt: 0 },
        ];
        assert_eq!(holds(&t)[&(0, 0)], Hold { before_commit: true, before_respond: false });
    }

    #[test]
    fn a_broken_stream_with_no_answer_in_the_trace_holds_the_response_over_http() {
        let trace = [
            ClientCall { call: 0 },
            StreamBreak { call: 0, attempt: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
        ];
        assert!(!holds(&trace)[&(0, 0)].before_respond, "nothing comes after the commit");
        assert!(holds_over(&trace, Transport::Http)[&(0, 0)].before_respond, "the close must precede the reply");
        assert!(!holds_over(&trace, Transport::Stdio)[&(0, 0)].before_respond);
    }
}
