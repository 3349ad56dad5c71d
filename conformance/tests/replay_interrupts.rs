//! Issue 12, item 3, on a real server: under 2026-07-28 HTTP a closed response stream is a
//! cancellation, and a SEP-3182 server that records its key after the effect and lets a
//! cancellation interrupt its handler loses the record with no crash at all. The model's 8-step
//! counterexample (`sep-3182 / http / retry-any / per-call / key-after-effect / --cancel
//! interrupts / crashes 0`) is replayed on the Rust fixture started with `--cancel interrupts`:
//! the runner closes the first attempt's stream once its effect is in the ledger, sees the
//! handler stop before its key record, and the retry runs the effect a second time. The same
//! trace on the fixture started with `--cancel ignores` is not reproduced (the record is written
//! after the close), and the model says that cell holds. Real processes, the real ledger and
//! key files; every process group the runner started is gone after each replay.

mod common;

use common::{counterexample, durable_key_cell, run};
use mcp_once_conformance::replay::interrupt_point::{keys_file, INTERRUPTED_LOG};
use mcp_once_conformance::replay::sdk_fixtures::{FixtureError, Sdk};
use mcp_once_conformance::replay::ReplayVerdict as Verdict;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Cancellation, Config, Profile, ServerImpl};
use mcp_once_testkit::jsonl::{read as read_objects, read_or_empty};
use mcp_once_testkit::scratch;

/// The cell: SEP-3182 over HTTP, a client that retries on any failure with one key per call, a
/// server that records its key after the effect, handling cancellation as `cancel`.
fn cell(cancel: Cancellation) -> (Config, Profile) {
    let (config, profile) = durable_key_cell();
    (Config { server: ServerImpl::KeyAfterEffect, cancel: Some(cancel), ..config }, profile)
}

/// The interrupting cell's counterexample, checked to be the 8 steps the issue names.
fn interrupted_trace() -> (TraceFile, Profile) {
    let (config, profile) = cell(Cancellation::Interrupts);
    let trace = counterexample(&config, &profile).expect("the model finds the cell violated");
    assert_eq!(trace.actions.len(), 8, "{:?}", trace.actions);
    let at = |a: Action| trace.actions.iter().position(|x| *x == a).unwrap_or_else(|| panic!("no {a}"));
    let commit = at(Action::ServerCommit { call: 0, attempt: 0 });
    assert!(
        at(Action::ServerReceiveCancel { call: 0, attempt: 0 }) > commit,
        "the cancellation is read after the effect"
    );
    assert!(!trace.actions.contains(&Action::ServerCrash { instance: 0 }), "no crash");
    (trace, profile)
}

#[test]
fn a_stream_closed_between_effect_and_key_record_is_confirmed_on_the_rust_fixture() {
    let (trace, profile) = interrupted_trace();
    let (fixture, _) = cell(Cancellation::Interrupts);
    let dir = scratch!("replay-interrupts", "interrupts");
    let result = run(&trace, &fixture, &profile, &dir, "interrupts");
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    assert_eq!(result.observed_effects, Some(2), "{}", result.to_json());
    let ledger = read_objects(&dir.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 2, "two effects in the ledger: {ledger:?}");
    assert_eq!(ledger[0]["idempotency_key"], ledger[1]["idempotency_key"], "one key, the same call");
    // The first attempt's record was never written: a record there is, is the retry's (the
    // replay ends at the retry's commit, and the server may be stopped before it records it).
    let keys = read_or_empty(&keys_file(&dir.join("ledger.jsonl")));
    assert!(keys.len() <= 1, "{keys:?}");
    assert!(keys.iter().all(|k| k["request_id"] == ledger[1]["request_id"]), "only the retry's record: {keys:?}");
    assert_ne!(ledger[0]["request_id"], ledger[1]["request_id"]);
    let step = &result.steps[5];
    let note = step.note.clone().unwrap_or_default();
    assert!(step.action.starts_with("ServerReceiveCancel"), "{}", step.action);
    assert!(note.contains("closed at once") && note.contains(INTERRUPTED_LOG), "{note}");
}

#[test]
fn the_same_trace_on_a_fixture_that_ignores_the_close_is_not_reproduced_and_the_cell_holds() {
    let (config, profile) = cell(Cancellation::Ignores);
    assert!(counterexample(&config, &profile).is_none(), "with --cancel ignores the cell holds");
    let (trace, profile) = interrupted_trace();
    let dir = scratch!("replay-interrupts", "ignores");
    let result = run(&trace, &config, &profile, &dir, "ignores");
    assert_eq!(result.verdict, Verdict::NotReproduced, "{}", result.to_json());
    assert!(result.reason.contains("wrote the key record anyway"), "{}", result.reason);
    assert_eq!(result.observed_effects, Some(1), "{}", result.to_json());
    assert_eq!(read_objects(&dir.join("ledger.jsonl")).len(), 1, "one effect");
}

#[test]
fn only_the_rust_fixture_takes_the_cell_s_cancellation() {
    let (config, _) = cell(Cancellation::Interrupts);
    assert_eq!(Sdk::Rust.cancel_option(config.server, config.cancel).unwrap(), Some("interrupts".into()));
    for sdk in [Sdk::Python, Sdk::TypeScript, Sdk::TypeScriptV2] {
        let why = sdk.cancel_option(config.server, config.cancel).unwrap_err();
        assert!(matches!(why, FixtureError::Cannot(_)), "{why:?}");
        assert!(why.to_string().contains("takes no --cancel"), "{why}");
        assert_eq!(sdk.cancel_option(config.server, None).unwrap(), None, "a preset needs no option");
    }
}
