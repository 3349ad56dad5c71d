//! The verdict table: what the model must find for the configurations the project is about.
//! Each test asserts the verdict, the exact length of the shortest counterexample and, where it
//! matters, the steps that make the case (a crash, a restart, a repeated id).

use mcp_once_model::catalogue::scenarios;
use mcp_once_model::*;

fn cfg(
    profile: &str,
    transport: Transport,
    client: ClientPolicy,
    key: KeyLifetime,
    server: ServerImpl,
    b: (u8, u8, u8),
) -> McpModel {
    let config = Config::builder(profile)
        .transport(transport)
        .client(client)
        .key(key)
        .server(server)
        .bounds(Bounds { calls: b.0, retries: b.1, crashes: b.2 })
        .build();
    McpModel::new(config, Profile::load(profile).unwrap()).unwrap()
}

fn violated(m: &McpModel, p: PropertyKind) -> Counterexample {
    let r = check_property(m, p);
    assert_eq!(r.verdict, Verdict::Violated, "{p} should be violated under {}", m.config);
    r.counterexample.unwrap()
}

fn holds(m: &McpModel, p: PropertyKind) -> CheckResult {
    let r = check_property(m, p);
    assert_eq!(
        r.verdict,
        Verdict::Holds,
        "{p} should hold under {}: {:?}",
        m.config,
        r.counterexample.map(|c| c.actions)
    );
    r
}

fn names(c: &Counterexample) -> Vec<&'static str> {
    c.actions.iter().map(|a| a.name()).collect()
}

use ClientPolicy::*;
use KeyLifetime as K;
use PropertyKind::*;
use ServerImpl as S;
use Transport::*;

#[test]
fn the_four_observed_scenarios_are_counterexamples_with_the_observed_worst_case() {
    let expected_len = [8, 9, 8, 8];
    for (scenario, len) in scenarios().into_iter().zip(expected_len) {
        let m = McpModel::new(scenario.config.clone(), Profile::load(&scenario.config.profile).unwrap()).unwrap();
        let cex = violated(&m, AtMostOnce);
        assert_eq!(cex.len(), len, "{}: {:?}", scenario.name, names(&cex));
        let worst = worst_case(&m);
        assert_eq!(worst.effects, scenario.observed_effects, "{}", scenario.name);
        assert_eq!(worst.trace.unwrap().effects(), scenario.observed_effects);
    }
}

#[test]
fn scenario_one_is_timeout_cancel_retry_racing_the_first_attempt() {
    let m = cfg("mcp-2025-11-25", Stdio, RetryOnTimeout, K::None, S::Plain, (1, 1, 0));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(
        names(&cex),
        [
            "ClientCall",
            "ClientTimeout",
            "ClientCancel",
            "ClientRetry",
            "ServerReceive",
            "ServerReceive",
            "ServerCommit",
            "ServerCommit"
        ]
    );
    assert_eq!(cex.effects(), 2);
}

#[test]
fn scenario_two_under_2025_11_25_gives_both_requests_id_1_and_under_2026_07_28_a_new_id() {
    for (profile, retry_id) in [("mcp-2025-11-25", 1), ("mcp-2026-07-28", 2)] {
        let m = cfg(profile, Stdio, RetryOnDisconnect, K::None, S::Plain, (1, 1, 1));
        let cex = violated(&m, AtMostOnce);
        assert_eq!(
            names(&cex),
            [
                "ClientCall",
                "ServerReceive",
                "ServerCommit",
                "ServerCrash",
                "ClientSeesDisconnect",
                "ServerRestart",
                "ClientRetry",
                "ServerReceive",
                "ServerCommit"
            ]
        );
        let last = cex.states.last().unwrap();
        assert_eq!(last.attempts[0][0].id, 1, "{profile}");
        assert_eq!(last.attempts[0][1].id, retry_id, "{profile}");
    }
}

#[test]
fn honouring_cancellation_does_not_close_the_race() {
    for t in [Stdio, Http] {
        let m = cfg("mcp-2026-07-28", t, RetryOnTimeout, K::None, S::HonoursCancel, (1, 1, 0));
        assert_eq!(violated(&m, AtMostOnce).len(), 8, "{t}");
    }
}

#[test]
fn naive_dedup_by_json_rpc_id_fails_across_a_restart() {
    let m = cfg("mcp-2025-11-25", Stdio, RetryOnDisconnect, K::None, S::DedupById, (1, 1, 1));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(cex.len(), 9);
    assert!(names(&cex).contains(&"ServerCrash") && names(&cex).contains(&"ServerRestart"));
    let last = cex.states.last().unwrap();
    assert_eq!((last.attempts[0][0].id, last.attempts[0][1].id), (1, 1), "the retry carries the same id 1");
    // Within one session a retry carries a new id, so the id table does not see a duplicate.
    let m = cfg("mcp-2025-11-25", Stdio, RetryOnTimeout, K::None, S::DedupById, (1, 1, 0));
    assert_eq!(violated(&m, AtMostOnce).len(), 8);
}

#[test]
fn ids_are_no_dedup_key_ids_restart_with_the_process_under_2025_11_25() {
    // A durable id table survives the crash, and the next logical call gets id 1 again: the
    // server answers it with the stored result of another call, and nothing runs.
    let m = cfg("mcp-2025-11-25", Stdio, NoRetry, K::None, S::DedupByIdDurable, (2, 0, 1));
    holds(&m, AtMostOnce);
    let cex = violated(&m, SuccessImpliesEffect);
    assert_eq!(cex.len(), 8);
    assert_eq!(names(&cex)[3..5], ["ServerCrash", "ServerRestart"]);
    let last = cex.states.last().unwrap();
    assert_eq!((last.attempts[0][0].id, last.attempts[1][0].id), (1, 1));
    assert_eq!(last.ledger[1], 0);
}

#[test]
fn ids_are_no_dedup_key_ids_may_be_reused_under_2026_07_28() {
    // No crash needed: once call 0 is answered its id may be used again by call 1.
    for server in [S::DedupById, S::DedupByIdDurable] {
        let m = cfg("mcp-2026-07-28", Http, NoRetry, K::None, server, (2, 0, 0));
        let cex = violated(&m, SuccessImpliesEffect);
        assert_eq!(cex.len(), 8);
        assert!(!names(&cex).contains(&"ServerCrash"));
        let last = cex.states.last().unwrap();
        assert_eq!((last.attempts[0][0].id, last.attempts[1][0].id), (1, 1));
    }
    // The same configuration under 2025-11-25 (ids unique per session) holds.
    let m = cfg("mcp-2025-11-25", Http, NoRetry, K::None, S::DedupByIdDurable, (2, 0, 0));
    holds(&m, SuccessImpliesEffect);
}

#[test]
fn sep_3182_with_a_volatile_store_fails_after_a_restart() {
    let m = cfg("sep-3182", Stdio, RetryOnDisconnect, K::PerCall, S::KeyVolatile, (1, 1, 1));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(cex.len(), 9);
    let n = names(&cex);
    let crash = n.iter().position(|a| *a == "ServerCrash").unwrap();
    let restart = n.iter().position(|a| *a == "ServerRestart").unwrap();
    assert!(n[..crash].contains(&"ServerCommit") && n[restart..].contains(&"ServerCommit"));
    // Without a crash the volatile store deduplicates.
    let m = cfg("sep-3182", Stdio, RetryOnDisconnect, K::PerCall, S::KeyVolatile, (1, 1, 0));
    holds(&m, AtMostOnce);
}

#[test]
fn sep_3182_with_the_key_stored_after_the_effect_fails_on_a_crash_between_them() {
    let m = cfg("sep-3182", Stdio, RetryAny, K::PerCall, S::KeyAfterEffect, (1, 1, 1));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(cex.len(), 9);
    let n = names(&cex);
    let commit = n.iter().position(|a| *a == "ServerCommit").unwrap();
    assert_eq!(n[commit + 1], "ServerCrash", "the crash falls between the effect and the key record");
    assert!(!n.contains(&"ServerStoreKey"));
    let m = cfg("sep-3182", Stdio, RetryAny, K::PerCall, S::KeyAfterEffect, (1, 1, 0));
    holds(&m, AtMostOnce);
}

#[test]
fn an_expired_retention_window_lets_a_late_retry_run_again() {
    let m = cfg("sep-3182", Stdio, RetryOnTimeout, K::PerCall, S::KeyExpiring, (1, 1, 0));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(cex.len(), 9);
    let n = names(&cex);
    let expiry = n.iter().position(|a| *a == "KeyExpires").unwrap();
    assert_eq!(&n[expiry + 1..], ["ServerReceive", "ServerCommit"]);
}

#[test]
fn sep_3182_durable_and_atomic_holds_at_most_once_exhaustively() {
    for calls in [1, 2] {
        for t in [Stdio, Http] {
            for (client, key) in [
                (RetryAny, K::PerCall),
                (RetryOnTimeout, K::PerCall),
                (RetryOnDisconnect, K::PerCall),
                (FrameworkRetry, K::PerCall),
            ] {
                let m = cfg("sep-3182", t, client, key, S::KeyDurable, (calls, 2, 1));
                let r = holds(&m, AtMostOnce);
                holds(&m, ExactlyOnce);
                assert!(r.stats.states > 10, "explored {} states", r.stats.states);
                assert_eq!(worst_case(&m).effects, 1);
            }
        }
    }
}

#[test]
fn a_framework_rerun_with_a_new_key_per_step_defeats_the_fix() {
    let m = cfg("sep-3182", Stdio, FrameworkRetry, K::PerStep, S::KeyDurable, (1, 2, 0));
    assert_eq!(violated(&m, AtMostOnce).len(), 8);
    assert_eq!(worst_case(&m).effects, 3);
    let m = cfg("sep-3182", Stdio, FrameworkRetry, K::PerAttempt, S::KeyDurable, (1, 2, 0));
    assert_eq!(worst_case(&m).effects, 3);
}

#[test]
fn a_client_that_never_retries_holds_at_most_once_but_fails_no_silent_effect() {
    for (t, len) in [(Stdio, 5), (Http, 4)] {
        for profile in ["mcp-2025-11-25", "mcp-2026-07-28"] {
            let m = cfg(profile, t, NoRetry, K::None, S::Plain, (2, 0, 1));
            holds(&m, AtMostOnce);
            assert_eq!(violated(&m, NoSilentEffect).len(), len, "{profile} {t}");
        }
    }
}

#[test]
fn an_outcome_query_alone_does_not_stop_a_duplicate_racing_the_first_request() {
    let m = cfg("outcome-query", Http, RetryAny, K::PerCall, S::KeyDurable, (1, 1, 0));
    let cex = violated(&m, AtMostOnce);
    assert_eq!(cex.len(), 8);
    assert!(names(&cex).contains(&"ClientQueryOutcome"));
    // With a query that can find the completed operation, a retry after a lost response is
    // avoided: no violation needs fewer steps than the race above.
    let m = cfg("outcome-query", Stdio, RetryOnDisconnect, K::PerCall, S::KeyDurable, (1, 1, 1));
    holds(&m, AtMostOnce);
}

#[test]
fn every_step_of_a_counterexample_carries_its_citations() {
    let m = cfg("mcp-2026-07-28", Stdio, RetryOnDisconnect, K::None, S::Plain, (1, 1, 1));
    let cex = violated(&m, AtMostOnce);
    let at = cex.actions.iter().position(|a| a.name() == "ServerRestart").unwrap();
    let cites = rules::citations(&m, &cex.states[at + 1], &cex.actions[at]);
    assert_eq!(cites.len(), 1);
    assert_eq!(cites[0].0, KnobId::StdioRestart);
    assert_eq!(cites[0].0.as_str(), "stdio_restart");
    assert!(cites[0].2.quote.contains("the client **SHOULD** restart it"));
    assert_eq!(cites[0].2.path, "docs/specification/2026-07-28/basic/transports/stdio.mdx");
}

/// Each scenario's check is named for its fault, so its trace must contain that fault: a crash
/// scenario's trace has a `ServerCrash` before its violating commit on every transport (over
/// HTTP a stream break alone is a shorter counterexample, and must not stand in for it, nor a
/// crash appended after the violation), and the stream-break scenario has a `StreamBreak` and no
/// crash.
#[test]
fn every_catalogue_trace_has_the_fault_its_check_is_named_for() {
    use mcp_once_model::catalogue::{KEYED_RETRY, PROBE_SCENARIOS};
    let plain = Profile::load("mcp-2025-11-25").unwrap();
    let keyed = Profile::load("sep-3182").unwrap();
    let mut checked = 0;
    for (scenario, profile) in PROBE_SCENARIOS.iter().map(|s| (s, &plain)).chain([(&KEYED_RETRY, &keyed)]) {
        for &transport in scenario.transports {
            for &server in scenario.servers {
                let Some(trace) = scenario.trace(profile, transport, server).unwrap() else { continue };
                let has = |name: &str| trace.actions.iter().any(|a| a.name() == name);
                let label = format!("{} over {} ({})", scenario.check_id, transport.as_str(), server.as_str());
                assert_eq!(has("ServerCrash"), scenario.needs_crash, "{label}: {:?}", trace.actions);
                if scenario.check_id.contains("stream-break") {
                    assert!(has("StreamBreak"), "{label}: {:?}", trace.actions);
                }
                if scenario.needs_crash {
                    // The crash comes before the violating commit (the last step), not after it.
                    let crash = trace.actions.iter().position(|a| a.name() == "ServerCrash").unwrap();
                    assert!(crash + 1 < trace.actions.len(), "{label}: {:?}", trace.actions);
                    assert_eq!(trace.actions.last().map(|a| a.name()), Some("ServerCommit"), "{label}");
                    assert!(!has("StreamBreak"), "{label}: the client learns of the crash itself");
                }
                checked += 1;
            }
        }
    }
    // 3 two-transport scenarios x 2 servers, the stream break over HTTP x 2, the keyed x 2 x 2.
    assert_eq!(checked, 3 * 2 * 2 + 2 + 2 * 2);
}
