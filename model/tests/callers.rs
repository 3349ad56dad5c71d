//! Two callers presenting one idempotency key (`--callers 2`) against a key store whose records
//! are one per key (`--key-scope global`) or scoped per caller (SEP-3182 § Security
//! Implications' MUST, the profile's `idempotency_key_scope = per-caller`): the first answers the
//! second caller from the first caller's record (`no-foreign-replay`), the second runs it.

use mcp_once_model::conformance::{breaches_at, Keyword};
use mcp_once_model::*;

fn config(server: ServerImpl, scope: Option<KeyScope>, callers: u8, calls: u8) -> Config {
    Config::builder("sep-3182")
        .transport(Transport::Http)
        .client(ClientPolicy::RetryOnTimeout)
        .server(server)
        .callers(callers)
        .key_scope(scope)
        .bounds(Bounds { calls, retries: 1, crashes: 1 })
        .build()
}

fn model(server: ServerImpl, scope: Option<KeyScope>, callers: u8, calls: u8) -> McpModel {
    McpModel::new(config(server, scope, callers, calls), Profile::load("sep-3182").unwrap()).unwrap()
}

/// The shortest trace of `no-foreign-replay` under the global scope: caller 0's call runs and
/// its record is stored; caller 1's request with the same key is answered from it (never run),
/// the step flagged as breaking SEP-3182's MUST on the records' scope.
#[test]
fn a_global_store_answers_the_second_caller_from_the_first_callers_record() {
    let m = model(ServerImpl::KeyDurable, Some(KeyScope::Global), 2, 2);
    let cex = check_property(&m, PropertyKind::NoForeignReplay).counterexample.expect("violated");
    // Call 0, its request read, its effect (and record), call 1, its request read and answered
    // from call 0's record.
    assert_eq!(cex.actions.len(), 5, "{:?}", cex.actions);
    let last = cex.actions.len() - 1;
    assert_eq!(cex.actions[last], Action::ServerReceive { call: 1, attempt: 0, instance: 0 });
    let end = &cex.states[last + 1];
    let answered = end.attempts[1][0];
    assert_eq!(answered.server, state::ServerSide::RespondedReplay);
    assert!(answered.foreign, "caller 1's request is answered from caller 0's record");
    assert_eq!((end.ledger[0], end.ledger[1]), (1, 0), "caller 1's tool never ran");
    assert_eq!((m.caller(0), m.caller(1)), (0, 1));
    let flagged = breaches_at(&m, &cex.states, &cex.actions, last);
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    assert_eq!((flagged[0].knob, flagged[0].keyword), (KnobId::IdempotencyKeyScope, Keyword::Must));
    assert!(flagged[0].what.contains("caller 1's call 1") && flagged[0].what.contains("Servers MUST scope"));
    for i in 0..last {
        assert!(breaches_at(&m, &cex.states, &cex.actions, i).is_empty(), "step {i} flagged");
    }
    let text = rules::describe(&m, &cex.states[last], &cex.actions[last], &cex.states[last + 1]);
    assert!(text.contains("caller 0"), "{text}");
    // The cell itself is marked, and its conformant twin is the per-caller scope.
    assert!(conformance::cell_breaches(&m.config, &m.profile).iter().any(|b| b.knob == KnobId::IdempotencyKeyScope));
    let twins = conformance::conformant_variants(&m.config, &m.profile);
    assert_eq!(twins.len(), 1);
    assert_eq!(McpModel::new(twins[0].clone(), m.profile.clone()).unwrap().key_scope(), KeyScope::PerCaller);
}

/// Scoped per caller (the profile's own value, and given as a flag), and on every key store:
/// caller 1's request is new to its own scope and runs; no answer is another caller's.
#[test]
fn records_scoped_per_caller_never_answer_the_other_caller() {
    for server in [ServerImpl::KeyDurable, ServerImpl::KeyVolatile, ServerImpl::KeyAfterEffect] {
        for scope in [None, Some(KeyScope::PerCaller)] {
            let m = model(server, scope, 2, 2);
            assert_eq!(m.key_scope(), KeyScope::PerCaller);
            let e = explore(&m, &[PropertyKind::NoForeignReplay, PropertyKind::AtMostOnce]);
            assert_eq!(e.results[0].verdict, Verdict::Holds, "{}", m.config);
            assert!(e.stats.states > 0);
        }
        let global = model(server, Some(KeyScope::Global), 2, 2);
        let e = explore(&global, &[PropertyKind::NoForeignReplay]);
        assert_eq!(e.results[0].verdict, Verdict::Violated, "{}", global.config);
    }
}

/// With one caller no record is another caller's: the property is not searched for (no
/// result), and where it is evaluated it holds in every reachable state of every default-matrix
/// key-store cell (at one call, to keep the test short; with two calls a key of one call never
/// meets another call's record either).
#[test]
fn one_caller_never_meets_another_callers_record() {
    let mut cells = 0;
    for config in catalogue::matrix(&catalogue::builtin_profiles()) {
        let profile = Profile::load(&config.profile).unwrap();
        let Ok(m) = McpModel::new(config.clone(), profile.clone()) else { continue };
        assert!(!PropertyKind::NoForeignReplay.checked_in(&m.config));
        if !m.config.server.uses_keys() {
            continue;
        }
        let one_call = Config { bounds: Bounds { calls: 1, ..config.bounds }, ..config };
        let m = McpModel::new(one_call, profile).unwrap();
        let r = check_property(&m, PropertyKind::NoForeignReplay);
        assert_eq!(r.verdict, Verdict::Holds, "{}", m.config);
        cells += 1;
    }
    assert!(cells > 10, "{cells}");
    let one = model(ServerImpl::KeyDurable, None, 1, 2);
    let e = explore(&one, PropertyKind::ALL);
    assert!(e.results.iter().all(|r| r.property != PropertyKind::NoForeignReplay));
    assert_eq!(e.results.len(), PropertyKind::ALL.len() - 1);
}

/// Where two callers apply, and the one-line reason where they do not.
#[test]
fn two_callers_need_two_calls_a_key_store_and_a_profile_with_keys() {
    let refuse = |c: Config, profile: &str| c.applicable(&Profile::load(profile).unwrap()).unwrap_err();
    let e = refuse(config(ServerImpl::KeyDurable, None, 2, 1), "sep-3182");
    assert_eq!(e.to_string(), "--callers 2 needs --calls 2 or more (call i is caller i mod 2's)");
    let plain = Config::builder("mcp-2026-07-28").callers(2).calls(2).build();
    let e = refuse(plain, "mcp-2026-07-28");
    assert_eq!(e.kind(), "outside-profile");
    assert!(e.to_string().contains("defines no idempotency key"), "{e}");
    let e = refuse(config(ServerImpl::Plain, None, 2, 2), "sep-3182");
    assert_eq!(e.kind(), "meaningless");
    let e = refuse(config(ServerImpl::KeyDurable, None, 3, 2), "sep-3182");
    assert_eq!(e.to_string(), "--callers 3 is out of range (1 to 2)");
    let e = refuse(config(ServerImpl::KeyDurable, Some(KeyScope::Global), 1, 2), "sep-3182");
    assert!(e.to_string().starts_with("--key-scope global applies to two callers"), "{e}");
    let shown = config(ServerImpl::KeyDurable, Some(KeyScope::Global), 2, 2).to_string();
    assert!(shown.ends_with("--callers 2 --key-scope global"), "{shown}");
    // The profile's own scope is the profile's cell.
    assert_eq!(model(ServerImpl::KeyDurable, Some(KeyScope::PerCaller), 2, 2).config.key_scope, None);
}
