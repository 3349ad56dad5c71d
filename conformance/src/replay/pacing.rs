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
    /// Task-augmented calls: the `CreateTaskResult` must wait (the model writes it as the
    /// server reads the request, and other steps come before the client reads it: a crash,
    /// a broken stream or a timeout that loses it, or steps of other attempts).
    pub before_task_result: bool,
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

/// Whether step `x` comes between two steps of attempt `id`: every step does but the server's
/// own for that same attempt (reading its request, storing its key, taking its effect).
fn comes_between(x: &Action, id: AttemptId) -> bool {
    x.actor() != Actor::Server || attempt_of(x) != Some(id)
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
        let between = |x: &Action| comes_between(x, id);
        let commit = find(s + 1, Action::ServerCommit { call: id.0, attempt: id.1 });
        let decision = commit.or_else(|| find(s + 1, Action::ServerRespond { call: id.0, attempt: id.1 }));
        let before_commit = actions[s + 1..decision.unwrap_or(actions.len())].iter().any(between);
        let before_respond = commit.is_some_and(|m| {
            let respond = find(m + 1, Action::ServerRespond { call: id.0, attempt: id.1 });
            actions[m + 1..respond.unwrap_or(actions.len())].iter().any(between)
        });
        out.insert(id, Hold { before_commit, before_respond, before_task_result: false });
    }
    out
}

/// [`holds`] over `transport`, with `tasks` (task-augmented calls) the holds of each
/// `CreateTaskResult` ([`task_result_holds`]) too. Over Streamable HTTP, an attempt whose
/// response stream the client breaks (or closes to cancel) and whose server never reads that
/// close nor answers in the trace also has its response held, so that the runner can close the
/// stream after the commit and before the reply (`transport_steps.rs`).
pub fn holds_over(actions: &[Action], transport: Transport, tasks: bool) -> BTreeMap<AttemptId, Hold> {
    let mut out = holds(actions);
    if tasks {
        task_result_holds(actions, &mut out);
    }
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

/// Task-augmented calls: the model's server writes an attempt's `CreateTaskResult` in the step
/// that reads its request (`ServerReceive`), and the client reads it at its next `ClientReceive`
/// of that attempt. A step between the two that is not the server's own work on that attempt
/// (a kill, a broken stream, a timeout, another attempt's step), or no read at all, needs the
/// write held, or the answer would reach the client before the trace lets it.
pub fn task_result_holds(actions: &[Action], out: &mut BTreeMap<AttemptId, Hold>) {
    for (r, a) in actions.iter().enumerate() {
        let Action::ServerReceive { call, attempt, .. } = *a else { continue };
        let id = (call, attempt);
        let read = actions[r + 1..]
            .iter()
            .position(|x| *x == Action::ClientReceive { call, attempt })
            .map_or(actions.len(), |i| i + r + 1);
        if actions[r + 1..read].iter().any(|x| comes_between(x, id)) || read == actions.len() {
            out.entry(id).or_default().before_task_result = true;
        }
    }
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
        assert_eq!(h[&(0, 0)], Hold { before_commit: true, before_respond: true, before_task_result: false });
        assert_eq!(h[&(0, 1)], Hold { before_commit: true, before_respond: false, before_task_result: false });

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
        assert_eq!(h[&(0, 0)], Hold { before_commit: false, before_respond: true, before_task_result: false });
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
        assert_eq!(holds(&t)[&(0, 0)], Hold { before_commit: true, before_respond: false, before_task_result: false });
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
        assert!(holds_over(&trace, Transport::Http, false)[&(0, 0)].before_respond, "the close must precede the reply");
        assert!(!holds_over(&trace, Transport::Stdio, false)[&(0, 0)].before_respond);
    }

    #[test]
    fn a_create_task_result_is_held_where_the_trace_loses_it_or_puts_steps_before_its_read() {
        // A kill after the task's effect loses the CreateTaskResult written at ServerReceive.
        let killed = [
            ClientCall { call: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerCrash { instance: 0 },
            ClientSeesDisconnect { call: 0, attempt: 0 },
        ];
        assert!(holds_over(&killed, Transport::Stdio, true)[&(0, 0)].before_task_result);
        assert!(!holds_over(&killed, Transport::Stdio, false)[&(0, 0)].before_task_result, "only task calls");
        // Read at once, with only the task's own effect between: nothing held.
        let read = [
            ClientCall { call: 0 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ClientReceive { call: 0, attempt: 0 },
        ];
        assert!(!holds_over(&read, Transport::Http, true)[&(0, 0)].before_task_result);
        // Another attempt read between, and the first never read: both held.
        let broken = [
            ClientCall { call: 0 },
            StreamBreak { call: 0, attempt: 0 },
            ClientRetry { call: 0, attempt: 1 },
            ServerReceive { call: 0, attempt: 0, instance: 0 },
            ServerReceive { call: 0, attempt: 1, instance: 0 },
            ServerCommit { call: 0, attempt: 0 },
            ServerCommit { call: 0, attempt: 1 },
        ];
        let h = holds_over(&broken, Transport::Http, true);
        assert!(h[&(0, 0)].before_task_result && h[&(0, 1)].before_task_result);
    }
}
