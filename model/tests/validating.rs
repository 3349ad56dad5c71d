//! SEP-1686's validating receiver: under `outcome-query`, a receiver MAY
//! reject a task id already associated with one of its tasks (§4.2.3, error -32602 in §7.1),
//! and the `validates-task-id` server does. Its record exists from receipt and survives a
//! crash. These tests pin what a user checking it finds: at-most-once (and exactly-once) hold
//! with one task id per call where the recording server charges twice, the caller can still be
//! told "failed" for a call that took effect, a rejected duplicate leaves the caller only the
//! query, and a task lost with its process can be neither retried nor completed.

use mcp_once_model::catalogue::matrix_bounds;
use mcp_once_model::state::{Failure, Phase, ServerSide};
use mcp_once_model::*;
use stateright::Model;

use ClientPolicy::*;
use PropertyKind::*;
use ServerImpl as S;
use Transport::*;

fn config(
    profile: &str,
    transport: Transport,
    client: ClientPolicy,
    key: KeyLifetime,
    server: ServerImpl,
    bounds: Bounds,
) -> Config {
    Config::builder(profile).transport(transport).client(client).key(key).server(server).bounds(bounds).build()
}

fn model(transport: Transport, client: ClientPolicy, server: ServerImpl, bounds: Bounds) -> McpModel {
    let c = config("outcome-query", transport, client, KeyLifetime::PerCall, server, bounds);
    McpModel::new(c, Profile::load("outcome-query").unwrap()).unwrap()
}

/// The shortest counterexample's length, or `None` where the property holds.
fn shortest(m: &McpModel, p: PropertyKind) -> Option<usize> {
    let r = check_property(m, p);
    match r.verdict {
        Verdict::Holds => None,
        Verdict::Violated => Some(r.counterexample.unwrap().len()),
        other => panic!("{p} undecided under {}: {other:?}", m.config),
    }
}

/// The state after `actions` from the initial state, each of which must be enabled.
fn walk(m: &McpModel, actions: &[Action]) -> State {
    let mut s = m.init_states().remove(0);
    for a in actions {
        let mut offered = Vec::new();
        m.actions(&s, &mut offered);
        assert!(offered.contains(a), "{a} not offered under {}: {offered:?}", m.config);
        s = m.next_state(&s, *a).unwrap_or_else(|| panic!("{a} leads nowhere"));
    }
    s
}

fn offered(m: &McpModel, s: &State) -> Vec<Action> {
    let mut out = Vec::new();
    m.actions(s, &mut out);
    out
}

#[test]
fn one_task_id_per_call_keeps_at_most_once_where_the_recording_server_charges_twice() {
    // (transport, client, key-durable's shortest at-most-once counterexample) on the default
    // matrix's bounds: two calls, one retry (two framework re-runs), one crash.
    let rows = [
        (Stdio, RetryOnTimeout, None),
        (Stdio, RetryOnDisconnect, None),
        (Stdio, RetryAny, None),
        (Stdio, FrameworkRetry, Some(8)),
        (Http, RetryOnTimeout, Some(9)),
        (Http, RetryOnDisconnect, Some(8)),
        (Http, RetryAny, Some(8)),
        (Http, FrameworkRetry, Some(7)),
    ];
    for (transport, client, recording) in rows {
        let b = matrix_bounds(client);
        let recorder = model(transport, client, S::KeyDurable, b);
        assert_eq!(shortest(&recorder, AtMostOnce), recording, "{}", recorder.config);
        let validating = model(transport, client, S::ValidatesTaskId, b);
        assert_eq!(shortest(&validating, AtMostOnce), None, "{}", validating.config);
        assert_eq!(shortest(&validating, ExactlyOnce), None, "{}", validating.config);
        assert_eq!(shortest(&validating, SuccessImpliesEffect), None, "{}", validating.config);
        assert_eq!(worst_case(&validating).effects, 1, "{}", validating.config);
    }
}

#[test]
fn a_caller_can_still_be_told_failed_for_a_call_that_took_effect() {
    // No-silent-effect is violated as on the recording server, at the same lengths.
    let rows = [
        (Stdio, NoRetry, 5),
        (Stdio, RetryOnTimeout, 5),
        (Stdio, RetryOnDisconnect, 5),
        (Stdio, RetryAny, 10),
        (Stdio, FrameworkRetry, 9),
        (Http, NoRetry, 4),
        (Http, RetryOnTimeout, 4),
        (Http, RetryOnDisconnect, 5),
        (Http, RetryAny, 7),
        (Http, FrameworkRetry, 8),
    ];
    for (transport, client, len) in rows {
        let b = matrix_bounds(client);
        let m = model(transport, client, S::ValidatesTaskId, b);
        assert_eq!(shortest(&m, NoSilentEffect), Some(len), "{}", m.config);
        let recorder = model(transport, client, S::KeyDurable, b);
        assert_eq!(shortest(&recorder, NoSilentEffect), Some(len), "{}", recorder.config);
    }
    // The user's cell: HTTP, retry-any, one call, one retry, one crash.
    let m = model(Http, RetryAny, S::ValidatesTaskId, Bounds { calls: 1, retries: 1, crashes: 1 });
    assert_eq!(
        [AtMostOnce, NoSilentEffect, SuccessImpliesEffect, ExactlyOnce].map(|p| shortest(&m, p)),
        [None, Some(7), None, None]
    );
}

/// The retry overtakes nothing: the query, over HTTP a request of its own, finds no task
/// (the first request is still in transit), the client retries, the first request creates the
/// task and takes the effect, and the retry is rejected.
fn rejected_retry() -> Vec<Action> {
    vec![
        Action::ClientCall { call: 0 },
        Action::StreamBreak { call: 0, attempt: 0 },
        Action::ClientQueryOutcome { call: 0 },
        Action::ClientRetry { call: 0, attempt: 1 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ServerCommit { call: 0, attempt: 0 },
        Action::ServerReceive { call: 0, attempt: 1, instance: 0 },
    ]
}

#[test]
fn a_rejected_duplicate_leaves_the_caller_only_the_query() {
    let two_retries = Bounds { calls: 1, retries: 2, crashes: 0 };
    let m = model(Http, RetryAny, S::ValidatesTaskId, two_retries);
    let s = walk(&m, &rejected_retry());
    assert_eq!(s.attempts[0][1].server, ServerSide::RespondedError);
    assert_eq!(s.ledger[0], 1);
    let last = Action::ServerReceive { call: 0, attempt: 1, instance: 0 };
    let cites: Vec<KnobId> = rules::citations(&m, &s, &last).into_iter().map(|(k, ..)| k).collect();
    assert!(cites.contains(&KnobId::TaskIdValidation), "{cites:?}");
    let before = walk(&m, &rejected_retry()[..6]);
    assert!(rules::describe(&m, &before, &last, &s).contains("-32602"));
    let mut all = rejected_retry();
    all.push(Action::ClientReceive { call: 0, attempt: 1 });
    let s = walk(&m, &all);
    assert_eq!((s.calls[0].phase, s.calls[0].failure), (Phase::Failed, Failure::ErrorReply));
    // With a retry left, the client asks before it retries; the query finds the completed task.
    assert!(offered(&m, &s).contains(&Action::ClientQueryOutcome { call: 0 }));
    let done = m.next_state(&s, Action::ClientQueryOutcome { call: 0 }).unwrap();
    assert_eq!(done.calls[0].phase, Phase::Succeeded);
    assert!(NoSilentEffect.holds(&m, &done) && ExactlyOnce.holds(&m, &done));
    // With none left, the rejection is the caller's answer: failed, though the call took effect.
    let m = model(Http, RetryAny, S::ValidatesTaskId, Bounds { calls: 1, retries: 1, crashes: 0 });
    let s = walk(&m, &all);
    assert!(m.finally_failed(&s, 0) && !NoSilentEffect.holds(&m, &s) && AtMostOnce.holds(&m, &s));
    // The recording server runs the same retry: a second effect.
    let m = model(Http, RetryAny, S::KeyDurable, two_retries);
    let mut all = rejected_retry();
    all.push(Action::ServerCommit { call: 0, attempt: 1 });
    let s = walk(&m, &all);
    assert_eq!(s.ledger[0], 2);
}

#[test]
fn a_task_lost_with_its_process_can_be_neither_retried_nor_completed() {
    let path = [
        Action::ClientCall { call: 0 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ServerCrash { instance: 0 },
        Action::ClientSeesDisconnect { call: 0, attempt: 0 },
        Action::ServerRestart { instance: 0 },
    ];
    let b = Bounds { calls: 1, retries: 1, crashes: 1 };
    let m = model(Stdio, RetryOnDisconnect, S::ValidatesTaskId, b);
    let s = walk(&m, &path);
    assert_ne!(s.keys_running[0][0], 0, "the created task's record survives the crash");
    // The query answers "not completed" (no step), and no retry is offered before it.
    assert_eq!(offered(&m, &s), [Action::ClientQueryOutcome { call: 0 }], "no retry before the query");
    assert!(m.next_state(&s, Action::ClientQueryOutcome { call: 0 }).is_none(), "the task has not completed");
    assert!(!m.finally_failed(&s, 0));
    // The recording server lost its running mark: the query says unknown and the retry runs.
    let m = model(Stdio, RetryOnDisconnect, S::KeyDurable, b);
    let s = walk(&m, &path);
    let s = m.next_state(&s, Action::ClientQueryOutcome { call: 0 }).unwrap();
    assert!(s.calls[0].queried);
    assert!(offered(&m, &s).contains(&Action::ClientRetry { call: 0, attempt: 1 }));
}

#[test]
fn the_validating_receiver_is_refused_where_it_has_no_meaning() {
    let b = Bounds { calls: 1, retries: 1, crashes: 1 };
    let why = |profile: &str, key: KeyLifetime, instances: u8| {
        let mut c = config(profile, Http, RetryAny, key, S::ValidatesTaskId, b);
        c.deployment.instances = instances;
        c.applicable(&Profile::load(profile).unwrap()).unwrap_err()
    };
    let said = |w: NotApplicable, kind: &str, text: &str| w.kind() == kind && w.to_string().contains(text);
    assert!(said(why("sep-3182", KeyLifetime::PerCall, 1), "outside-profile", "task_id_validation = none"));
    assert!(said(why("mcp-2026-07-28", KeyLifetime::None, 1), "outside-profile", "defines no idempotency key"));
    assert!(said(why("outcome-query", KeyLifetime::None, 1), "meaningless", "--key none there is no id to validate"));
    assert!(said(why("outcome-query", KeyLifetime::PerCall, 2), "not-modelled", "several instances is not modelled"));
    let p = Profile::load("outcome-query").unwrap();
    let k = &p.knobs.task_id_validation;
    assert_eq!(k.value.as_str(), "may-reject");
    assert_eq!((k.cite.path.as_str(), k.cite.revision.as_str()), ("seps/1686-tasks.md", "SEP-1686"));
    assert!(k.cite.quote.contains("**MAY** validate that the provided task ID has not already been associated"));
    // The rule needs an outcome query: a dedup proposal cannot state it.
    let text = format!(
        "{}\n[knobs.task_id_validation]\nvalue = \"may-reject\"\n[knobs.task_id_validation.cite]\nrevision = \"X\"\npath = \"x.md\"\nsection = \"S\"\nquote = \"q\"\n",
        include_str!("../../specs/proposals/sep-3182.toml")
    );
    let err = Profile::parse("dedup-validating.toml", &text, None).unwrap_err().to_string();
    assert!(err.contains("`task_id_validation`") && err.contains("status-query"), "{err}");
}
