//! Room for proposals: the variants SEP discussions raise are expressible
//! as profile files and checked: a dedup proposal with no in-progress rule (a concurrent
//! duplicate runs), a blocking wait-then-replay, a key scoped per instance, MRTR continuations
//! inside the key's scope (a key per round), and the client half of a proposal (clients must
//! reuse their key). A knob that contradicts another names where the other was set.

use mcp_once_model::state::{ServerSide, State};
use mcp_once_model::*;
use stateright::Model;
use std::collections::{HashSet, VecDeque};

/// A proposal on SEP-3182 that overrides the knobs in `knobs` (TOML tables).
fn proposal(name: &str, knobs: &str) -> Profile {
    let text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n{knobs}"
    );
    Profile::parse(&format!("{name}.toml"), &text, None).unwrap()
}

/// A knob table citing a made-up SEP.
fn knob(name: &str, value: &str) -> String {
    format!(
        "[knobs.{name}]\nvalue = \"{value}\"\n[knobs.{name}.cite]\nrevision = \"SEP-0\"\npath = \"seps/0.md\"\nsection = \"S\"\nquote = \"q\"\n"
    )
}

fn cell(profile: &Profile, key: KeyLifetime, client: ClientPolicy, bounds: Bounds) -> Config {
    Config::builder(&profile.name)
        .transport(Transport::Http)
        .client(client)
        .key(key)
        .server(ServerImpl::KeyDurable)
        .bounds(bounds)
        .build()
}

fn no_crash() -> Bounds {
    Bounds { calls: 1, retries: 1, crashes: 0 }
}

/// Whether some state within `depth` steps of the start satisfies `want`.
fn reachable(m: &McpModel, depth: usize, want: impl Fn(&State) -> bool) -> bool {
    let mut seen = HashSet::new();
    let mut queue: VecDeque<(State, usize)> = m.init_states().into_iter().map(|s| (s, 0)).collect();
    while let Some((s, d)) = queue.pop_front() {
        if want(&s) {
            return true;
        }
        if d == depth || !seen.insert(s.clone()) {
            continue;
        }
        let mut actions = Vec::new();
        m.actions(&s, &mut actions);
        queue.extend(actions.into_iter().filter_map(|a| m.next_state(&s, a)).map(|n| (n, d + 1)));
    }
    false
}

#[test]
fn a_dedup_proposal_with_no_in_progress_rule_runs_a_concurrent_duplicate() {
    // The proposal author's first try: SEP-3182 with no in-progress rule. It loads now.
    let p = proposal("no-in-progress", &knob("idempotency_in_progress", "none"));
    let m = McpModel::new(cell(&p, KeyLifetime::PerCall, ClientPolicy::RetryAny, no_crash()), p.clone()).unwrap();
    let r = check_property(&m, PropertyKind::AtMostOnce);
    assert_eq!(r.verdict, Verdict::Violated, "a duplicate of a running request runs");
    let cex = r.counterexample.unwrap();
    assert!(!cex.actions.iter().any(|a| matches!(a, Action::ServerCrash { .. })), "no fault: {:?}", cex.actions);
    let words: Vec<String> =
        (0..cex.len()).map(|i| rules::describe(&m, &cex.states[i], &cex.actions[i], &cex.states[i + 1])).collect();
    assert!(words.iter().any(|w| w.contains("not recognised")), "{words:#?}");
    // SEP-3182 itself rejects the duplicate: the same cell holds.
    let sep = Profile::load("sep-3182").unwrap();
    let m = McpModel::new(cell(&sep, KeyLifetime::PerCall, ClientPolicy::RetryAny, no_crash()), sep).unwrap();
    assert_eq!(check_property(&m, PropertyKind::AtMostOnce).verdict, Verdict::Holds);
}

#[test]
fn a_waiting_duplicate_replays_the_result_of_the_request_it_waited_on() {
    let p = proposal("wait", &knob("idempotency_in_progress", "wait"));
    let bounds = Bounds { calls: 1, retries: 2, crashes: 1 };
    let m = McpModel::new(cell(&p, KeyLifetime::PerCall, ClientPolicy::RetryAny, bounds), p.clone()).unwrap();
    let r = explore(&m, &[PropertyKind::AtMostOnce]);
    assert_eq!(r.results[0].verdict, Verdict::Holds, "a waiting duplicate runs nothing while the first runs");
    // The verdict covers the wait: a duplicate is held, and later answered with the replay.
    let waiting = |s: &State| s.attempts[0].iter().any(|t| t.server == ServerSide::Waiting);
    assert!(reachable(&m, 6, waiting), "some duplicate waits");
    // A retry that waits on its key is answered in the step that stores the key's record, and
    // the words of that step say so.
    let mut s = m.init_states().remove(0);
    let step = |s: &State, a: Action| m.next_state(s, a).unwrap_or_else(|| panic!("{a:?} not enabled"));
    let path = [
        Action::ClientCall { call: 0 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ClientTimeout { call: 0, attempt: 0 },
        Action::ClientRetry { call: 0, attempt: 1 },
        Action::ServerReceive { call: 0, attempt: 1, instance: 0 },
    ];
    for a in path {
        s = step(&s, a);
    }
    assert_eq!(s.attempts[0][1].server, ServerSide::Waiting);
    let commit = Action::ServerCommit { call: 0, attempt: 0 };
    let after = step(&s, commit);
    assert_eq!(after.attempts[0][1].server, ServerSide::RespondedReplay);
    assert_eq!(after.ledger[0], 1);
    let words = rules::describe(&m, &s, &commit, &after);
    assert!(words.contains("which waited on the same key, now replays the stored result"), "{words}");
}

#[test]
fn a_waiting_duplicate_runs_when_the_request_it_waited_on_dies_with_its_process() {
    let p = proposal("wait", &knob("idempotency_in_progress", "wait"));
    let mut config =
        cell(&p, KeyLifetime::PerCall, ClientPolicy::RetryAny, Bounds { calls: 1, retries: 1, crashes: 1 });
    config.deployment = Deployment { instances: 2, store: None };
    let m = McpModel::new(config, p).unwrap();
    let step = |s: &State, a: Action| m.next_state(s, a).unwrap_or_else(|| panic!("{a:?} not enabled"));
    let mut s = m.init_states().remove(0);
    for a in [
        Action::ClientCall { call: 0 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ClientTimeout { call: 0, attempt: 0 },
        Action::ClientRetry { call: 0, attempt: 1 },
        Action::ServerReceive { call: 0, attempt: 1, instance: 1 },
    ] {
        s = step(&s, a);
    }
    assert_eq!(s.attempts[0][1].server, ServerSide::Waiting, "the shared store shows the key in progress");
    let s = step(&s, Action::ServerCrash { instance: 0 });
    assert_eq!(s.attempts[0][0].server, ServerSide::Lost);
    assert_eq!(s.attempts[0][1].server, ServerSide::Pending, "the waiting retry takes the key and runs");
}

#[test]
fn a_client_rule_to_reuse_the_key_rules_out_new_keys_per_retry_and_per_rerun() {
    let retry = proposal("reuse", &knob("idempotency_key_reuse", "every-retry"));
    let rerun = proposal("reuse", &knob("idempotency_key_reuse", "every-rerun"));
    let sep = Profile::load("sep-3182").unwrap();
    let fw = ClientPolicy::FrameworkRetry;
    let applies = |p: &Profile, key| cell(p, key, fw, no_crash()).applicable(p);
    assert!(applies(&sep, KeyLifetime::PerAttempt).is_ok() && applies(&sep, KeyLifetime::PerStep).is_ok());
    let why = applies(&retry, KeyLifetime::PerAttempt).unwrap_err();
    assert_eq!(why.kind(), "outside-profile", "{why}");
    let why = why.to_string();
    assert!(why.contains("idempotency_key_reuse = every-retry") && why.contains("--key per-attempt"), "{why}");
    assert!(applies(&retry, KeyLifetime::PerStep).is_ok(), "a re-run may start a new key under every-retry");
    assert!(applies(&rerun, KeyLifetime::PerStep).unwrap_err().to_string().contains("framework re-run"));
    assert!(applies(&rerun, KeyLifetime::PerCall).is_ok());
    // The default matrix has the cells such a rule rules out.
    let cells = catalogue::matrix(std::slice::from_ref(&rerun));
    let ruled_out =
        cells.iter().filter(|c| c.applicable(&rerun).is_err_and(|e| e.to_string().contains("reuse its key"))).count();
    assert!(ruled_out > 0);
    // A retry carrying the key cites the client rule.
    let m = McpModel::new(cell(&retry, KeyLifetime::PerCall, ClientPolicy::RetryAny, no_crash()), retry).unwrap();
    let mut s = m.init_states().remove(0);
    for a in [Action::ClientCall { call: 0 }, Action::ClientTimeout { call: 0, attempt: 0 }] {
        s = m.next_state(&s, a).unwrap();
    }
    let retry_step = Action::ClientRetry { call: 0, attempt: 1 };
    let after = m.next_state(&s, retry_step).expect("the client retries after its timeout");
    assert_eq!(after.attempts[0][1].key, after.attempts[0][0].key);
    let knobs = rules::knobs_for(&m, &after, &retry_step);
    assert!(knobs.contains(&KnobId::IdempotencyKeyReuse), "{knobs:?}");
}

#[test]
fn a_key_scoped_per_instance_is_cited_as_the_proposal_s_rule() {
    let p = proposal("per-instance", &knob("idempotency_store", "per-instance"));
    let mut config = cell(&p, KeyLifetime::PerCall, ClientPolicy::RetryAny, no_crash());
    config.deployment = Deployment { instances: 2, store: Some(StoreScope::PerInstance) };
    let m = McpModel::new(config, p).unwrap();
    let r = check_property(&m, PropertyKind::AtMostOnce);
    let cex = r.counterexample.expect("violated: a retry on the other instance runs again");
    let at = cex.actions.iter().rposition(|a| matches!(a, Action::ServerReceive { .. })).unwrap();
    let cites = rules::citations(&m, &cex.states[at + 1], &cex.actions[at]);
    let store = cites.iter().find(|(k, ..)| *k == KnobId::IdempotencyStore).expect("the store rule is cited");
    assert_eq!(store.1, "per-instance");
    assert_eq!(store.2.revision, "SEP-0");
}

#[test]
fn a_retention_window_is_compared_with_the_clients_retry_horizon() {
    let with = |retention: &str| {
        let knobs = knob("idempotency_retention", retention) + &knob("retry_horizon", "1h");
        let p = proposal("window", &knobs);
        let mut config = cell(&p, KeyLifetime::PerCall, ClientPolicy::RetryOnTimeout, no_crash());
        config.server = ServerImpl::KeyExpiring;
        McpModel::new(config, p).unwrap()
    };
    // A window that outlives every retry: no record expires, and the cell holds as a durable
    // store does.
    let long = with("24h");
    let r = check_property(&long, PropertyKind::AtMostOnce);
    assert_eq!(r.verdict, Verdict::Holds, "a 24h window outlives a 1h horizon");
    // A shorter one: a record leaves before a retry, and the step cites both knobs.
    let short = with("300s");
    let cex = check_property(&short, PropertyKind::AtMostOnce).counterexample.expect("a 5 min window does not");
    let at = cex.actions.iter().position(|a| matches!(a, Action::KeyExpires { .. })).expect("a record expires");
    let cites = rules::citations(&short, &cex.states[at + 1], &cex.actions[at]);
    let named: Vec<(KnobId, &str)> = cites.iter().map(|(k, v, _)| (*k, v.as_str())).collect();
    assert_eq!(named, [(KnobId::IdempotencyRetention, "5m"), (KnobId::RetryHorizon, "1h")]);
    // Left open (`bounded`, SEP-3182's own text), a record may leave before any retry.
    let sep = Profile::load("sep-3182").unwrap();
    let mut config = cell(&sep, KeyLifetime::PerCall, ClientPolicy::RetryOnTimeout, no_crash());
    config.server = ServerImpl::KeyExpiring;
    let open = McpModel::new(config, sep).unwrap();
    assert!(check_property(&open, PropertyKind::AtMostOnce).counterexample.is_some());
    assert_ne!(long.behaviour_key(), open.behaviour_key(), "the matrix must not share their searches");
    // A duration that is not one is refused with the file, line and the values it takes.
    let text = "name = \"w\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n"
        .to_string()
        + &knob("retry_horizon", "soon");
    let err = Profile::parse("w.toml", &text, None).unwrap_err().to_string();
    assert!(err.starts_with("w.toml:7:") && err.contains("unknown value `soon`") && err.contains("`24h`"), "{err}");
}

#[test]
fn a_contradiction_points_at_the_knob_and_names_the_file_that_set_the_other() {
    let text = format!(
        "name = \"q\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n{}",
        knob("idempotency_semantics", "status-query")
    );
    let err = Profile::parse("q.toml", &text, None).unwrap_err().to_string();
    // The file's own knob is the one pointed at (line 7: its `value`), and the message says
    // which profile and file set the knob it contradicts.
    assert!(err.starts_with("q.toml:7:"), "{err}");
    assert!(err.contains("`knobs.idempotency_in_progress = \"reject\"`, set by profile sep-3182"), "{err}");
    assert!(err.contains("specs/proposals/sep-3182.toml"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

/// SEP-3182 with its continuations inside the key's scope, one key per round (the SEP's author,
/// in its pull request: the first request and each continuation "would naturally use different
/// idempotency keys"): handler `kind`, key `key`, the client retrying any failure.
fn keyed_continuations(kind: HandlerKind, key: KeyLifetime, crashes: u8) -> McpModel {
    let p = proposal("keyed-continuations", &knob("idempotency_continuations", "included"));
    let mut config = cell(&p, key, ClientPolicy::RetryAny, Bounds { calls: 1, retries: 1, crashes });
    config.handler = Handler::new(kind, None);
    McpModel::new(config, p).unwrap()
}

#[test]
fn continuations_inside_the_keys_scope_are_deduplicated_round_by_round() {
    use HandlerKind as H;
    // A handler that asks before it charges: the lost final answer is retried under its
    // round's key, and the durable record replays it. SEP-3182 as written sends that retry
    // with no key, and it charges again.
    for crashes in [0, 1] {
        let m = keyed_continuations(H::InputBeforeEffect, KeyLifetime::PerCall, crashes);
        assert_eq!(check_property(&m, PropertyKind::AtMostOnce).verdict, Verdict::Holds, "crashes {crashes}");
        let sep = Profile::load("sep-3182").unwrap();
        let mut config = m.config.clone();
        config.profile = sep.name.clone();
        let excluded = McpModel::new(config, sep).unwrap();
        assert_eq!(check_property(&excluded, PropertyKind::AtMostOnce).verdict, Verdict::Violated);
        assert_ne!(m.behaviour_key(), excluded.behaviour_key(), "the matrix must not share their searches");
    }
    // The replay is there: a retried continuation finds its round's record.
    let m = keyed_continuations(H::InputBeforeEffect, KeyLifetime::PerCall, 0);
    let replayed = |s: &State| s.attempts[0].iter().any(|t| t.round == 1 && t.server == ServerSide::RespondedReplay);
    assert!(reachable(&m, 14, replayed), "a retried continuation is answered from its round's record");

    // Each round has a key of its own, and a retry of a round reuses that round's key.
    let cex =
        check_property(&keyed_continuations(H::InputAfterEffect, KeyLifetime::PerCall, 0), PropertyKind::AtMostOnce)
            .counterexample
            .expect("a handler that charges before it asks charges on every round");
    let last = cex.states.last().unwrap();
    let (first, second) = (last.attempts[0][0], last.attempts[0][1]);
    assert_eq!((first.round, second.round), (0, 1));
    assert!(first.key != 0 && second.key != 0 && first.key != second.key, "{first:?} {second:?}");
    assert_eq!(cex.len(), 8, "no fault: the second round's new key runs the handler from the start");
    let knobs: Vec<KnobId> = rules::citations(
        &keyed_continuations(H::InputAfterEffect, KeyLifetime::PerCall, 0),
        &cex.states[7],
        &cex.actions[6],
    )
    .into_iter()
    .map(|(k, ..)| k)
    .collect();
    assert!(
        knobs.contains(&KnobId::IdempotencyContinuations),
        "the continuation's read cites the scope rule: {knobs:?}"
    );

    // Its own matrix (`check --profile FILE` alone) takes every handler kind but the single-use
    // one (left to --handler); SEP-3182's, none.
    let own: Vec<HandlerKind> =
        HandlerKind::ALL.iter().copied().filter(|k| *k != HandlerKind::InputBeforeEffectSingleUse).collect();
    assert_eq!(catalogue::own_handlers(&m.profile), own);
    assert!(catalogue::own_handlers(&Profile::load("sep-3182").unwrap()).is_empty());

    // A key per attempt gives a retried continuation a new key: nothing matches it.
    let per_attempt = keyed_continuations(H::InputBeforeEffect, KeyLifetime::PerAttempt, 0);
    assert_eq!(check_property(&per_attempt, PropertyKind::AtMostOnce).verdict, Verdict::Violated);
}
