//! Issue 12, item 1, on a real server: under 2026-07-28 a tool that needs input answers with an
//! input-required result, the client sends `tools/call` again under a new id with
//! `inputResponses` and the `requestState` it was given, and the handler runs from the start.
//! SEP-3182 leaves such continuations outside the key's scope, so with a durable key store a
//! handler that charges before it asks charges again on its continuation, with no fault at all.
//! The model's counterexamples are replayed on the Rust and Python fixtures started with the
//! cell's `--handler`: the runner reads the input request, answers it, echoes the state, and the
//! ledger shows the effects. A handler that carries "effect done" in `requestState` skips the
//! effect on the same continuation (the model says that cell holds; a replay of a holding cell
//! proves nothing, so the test shows the fixture's skip in the ledger instead). Real processes;
//! every process group the runner started is gone after each replay.

mod common;

use common::{counterexample, durable_key_cell, run_on};
use mcp_once_conformance::replay::sdk_fixtures::{FixtureError, Sdk};
use mcp_once_conformance::replay::{ReplayResult, ReplayVerdict as Verdict};
use mcp_once_model::search::check_property;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{
    Action, Config, Handler, HandlerKind, McpModel, Profile, PropertyKind, Transport, Verdict as ModelVerdict,
};
use mcp_once_testkit::jsonl::read as read_objects;
use mcp_once_testkit::scratch;
use serde_json::Value;

/// The cell: SEP-3182 over HTTP, a client that retries on any failure with one key per call, a
/// durable key store, no crash, the tool's handler of `kind` (one input round).
fn cell(kind: HandlerKind) -> (Config, Profile) {
    let (config, profile) = durable_key_cell();
    (Config { handler: Handler::new(kind, None), ..config }, profile)
}

fn note(result: &ReplayResult, action: &str) -> String {
    let step = result.steps.iter().find(|s| s.action.starts_with(action));
    step.unwrap_or_else(|| panic!("no {action}: {}", result.to_json())).note.clone().unwrap_or_default()
}

/// The input-after-effect cell's counterexample, checked to be the 8 steps, no fault.
fn charges_first_trace() -> (TraceFile, Profile) {
    let (config, profile) = cell(HandlerKind::InputAfterEffect);
    let trace = counterexample(&config, &profile).expect("the model finds the cell violated");
    assert_eq!(trace.actions.len(), 8, "{:?}", trace.actions);
    assert!(trace.actions.contains(&Action::ClientContinue { call: 0, attempt: 1 }), "{:?}", trace.actions);
    (trace, profile)
}

/// The input-after-effect counterexample replayed on `sdk`'s fixture started with that handler:
/// confirmed, two ledger lines for one logical call, the first with the key, the continuation's
/// under a new id with none; the runner read the input request and answered it.
fn charges_again_on(sdk: Sdk) {
    let (trace, profile) = charges_first_trace();
    let (fixture, _) = cell(HandlerKind::InputAfterEffect);
    let name = format!("after-effect-{}", sdk.as_str());
    let dir = scratch!("replay-mrtr", &name);
    let result = run_on(sdk, &trace, &fixture, &profile, &dir, &name);
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    assert_eq!(result.observed_effects, Some(2), "{}", result.to_json());
    let ledger = read_objects(&dir.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 2, "two effects for one logical call: {ledger:?}");
    assert!(ledger.iter().all(|l| l["sdk"] == sdk.as_str()), "{ledger:?}");
    assert_eq!(ledger[0]["arguments"]["order"], ledger[1]["arguments"]["order"], "one logical call: {ledger:?}");
    assert!(ledger[0]["idempotency_key"].is_string(), "the first request carries the key: {ledger:?}");
    assert_eq!(ledger[1]["idempotency_key"], Value::Null, "the continuation carries none: {ledger:?}");
    assert_ne!(ledger[0]["request_id"], ledger[1]["request_id"], "a new id for the continuation");
    assert!(note(&result, "ClientReceive").starts_with("input required (asks [confirm_1]"), "{}", result.to_json());
    let cont = note(&result, "ClientContinue");
    assert!(
        cont.contains("continues attempt 0")
            && cont.contains("inputResponses for [confirm_1]")
            && cont.contains("requestState echoed"),
        "{cont}"
    );
}

#[test]
fn a_continuation_that_charges_again_under_a_durable_key_is_confirmed_on_the_rust_fixture() {
    charges_again_on(Sdk::Rust);
}

#[test]
fn a_continuation_that_charges_again_under_a_durable_key_is_confirmed_on_the_python_fixture() {
    charges_again_on(Sdk::Python);
}

/// The input-after-effect cell over stdio: the model's counterexample (the same continuation, on
/// one pipe) replayed on `sdk`'s fixture is confirmed with two ledger lines for one call.
fn charges_again_over_stdio_on(sdk: Sdk) {
    let (config, profile) = cell(HandlerKind::InputAfterEffect);
    let config = Config { transport: Transport::Stdio, ..config };
    let trace = counterexample(&config, &profile).expect("the model finds the stdio cell violated");
    assert!(trace.actions.contains(&Action::ClientContinue { call: 0, attempt: 1 }), "{:?}", trace.actions);
    let name = format!("after-effect-stdio-{}", sdk.as_str());
    let dir = scratch!("replay-mrtr", &name);
    let result = run_on(sdk, &trace, &config, &profile, &dir, &name);
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    let ledger = read_objects(&dir.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 2, "two effects for one logical call: {ledger:?}");
    assert!(ledger.iter().all(|l| l["transport"] == "stdio" && l["sdk"] == sdk.as_str()), "{ledger:?}");
    assert_eq!(ledger[1]["idempotency_key"], Value::Null, "the continuation carries none: {ledger:?}");
}

#[test]
fn the_continuation_charges_again_over_stdio_on_the_rust_fixture() {
    charges_again_over_stdio_on(Sdk::Rust);
}

#[test]
fn the_continuation_charges_again_over_stdio_on_the_python_fixture() {
    charges_again_over_stdio_on(Sdk::Python);
}

/// The input-before-effect counterexample (the continuation's stream breaks, the client
/// retries it, both charge) on `sdk`'s fixture: confirmed, both effects continuations'.
fn asks_first_on(sdk: Sdk) {
    let (config, profile) = cell(HandlerKind::InputBeforeEffect);
    let trace = counterexample(&config, &profile).expect("the model finds the cell violated");
    assert_eq!(trace.actions.len(), 11, "{:?}", trace.actions);
    let name = format!("before-effect-{}", sdk.as_str());
    let dir = scratch!("replay-mrtr", &name);
    let result = run_on(sdk, &trace, &config, &profile, &dir, &name);
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    let ledger = read_objects(&dir.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert!(ledger.iter().all(|l| l["idempotency_key"].is_null()), "both effects are continuations': {ledger:?}");
    let retry = note(&result, "ClientRetry");
    assert!(retry.contains("continues attempt 0") && retry.contains("requestState echoed"), "{retry}");
}

#[test]
fn a_handler_that_asks_first_is_replayed_as_the_model_has_it() {
    asks_first_on(Sdk::Rust);
}

#[test]
fn a_handler_that_asks_first_is_replayed_as_the_model_has_it_on_the_python_fixture() {
    asks_first_on(Sdk::Python);
}

/// The input-after-effect trace on `sdk`'s fixture started with the stateful handler, which
/// keeps "effect done" in `requestState`: not reproduced, the continuation answered with no
/// second ledger line.
fn skips_on(sdk: Sdk) {
    let (stateful, _) = cell(HandlerKind::InputAfterEffectStateful);
    let (trace, profile) = charges_first_trace();
    let name = format!("stateful-{}", sdk.as_str());
    let dir = scratch!("replay-mrtr", &name);
    let result = run_on(sdk, &trace, &stateful, &profile, &dir, &name);
    assert_eq!(result.verdict, Verdict::NotReproduced, "{}", result.to_json());
    assert!(result.reason.contains("did not run the side effect"), "{}", result.reason);
    assert_eq!(read_objects(&dir.join("ledger.jsonl")).len(), 1, "one effect, in the first round");
    let commit = note(&result, "ClientContinue");
    assert!(commit.contains("requestState echoed"), "{commit}");
}

#[test]
fn a_stateful_handler_skips_its_effect_on_the_continuation_and_the_cell_holds() {
    let (stateful, profile) = cell(HandlerKind::InputAfterEffectStateful);
    for crashes in [0, 1] {
        let mut c = stateful.clone();
        c.bounds.crashes = crashes;
        let model = McpModel::new(c, profile.clone()).unwrap();
        let r = check_property(&model, PropertyKind::AtMostOnce);
        assert_eq!(r.verdict, ModelVerdict::Holds, "the model says the stateful cell holds (crashes {crashes})");
    }
    // The same continuation as the violating trace's, on a fixture that keeps its progress in
    // requestState: the continuation is answered without a second effect.
    skips_on(Sdk::Rust);
}

#[test]
fn a_stateful_handler_skips_its_effect_on_the_continuation_on_the_python_fixture() {
    skips_on(Sdk::Python);
}

#[test]
fn the_rust_and_python_fixtures_run_a_tool_that_asks_for_input() {
    let handler = Handler::new(HandlerKind::InputAfterEffect, None);
    for sdk in [Sdk::Rust, Sdk::Python] {
        assert_eq!(
            sdk.handler_options(handler).unwrap(),
            vec!["--handler".to_string(), "input-after-effect".into(), "--rounds".into(), "1".into()]
        );
    }
    for sdk in [Sdk::TypeScript, Sdk::TypeScriptV2] {
        let why = sdk.handler_options(handler).unwrap_err();
        assert!(matches!(why, FixtureError::Cannot(_)), "{why:?}");
        assert!(why.to_string().contains("no tool that asks for input"), "{why}");
        assert!(sdk.handler_options(Handler::default()).unwrap().is_empty(), "the default needs no option");
    }
}

#[test]
fn the_single_use_handler_is_the_rust_fixture_that_enforces_single_use() {
    let handler = Handler::new(HandlerKind::InputBeforeEffectSingleUse, None);
    assert_eq!(
        Sdk::Rust.handler_options(handler).unwrap(),
        vec![
            "--handler".to_string(),
            "input-before-effect".into(),
            "--rounds".into(),
            "1".into(),
            "--single-use-request-state".into()
        ]
    );
    let why = Sdk::Python.handler_options(handler).unwrap_err();
    assert!(why.to_string().contains("does not enforce the single use of a requestState"), "{why}");
}

/// SEP-3182 with its continuations inside the key's scope, a key of their own per round (the
/// SEP's author, in its pull request thread: the first request and each continuation "would
/// naturally use different idempotency keys").
fn keyed_continuations() -> Profile {
    let text = "name = \"keyed-continuations\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n[knobs.idempotency_continuations]\nvalue = \"included\"\n[knobs.idempotency_continuations.cite]\nrevision = \"SEP-3182\"\npath = \"pull request thread\"\nsection = \"FAQ\"\nquote = \"would naturally use different idempotency keys\"\n";
    Profile::parse("keyed-continuations.toml", text, None).unwrap()
}

/// With a key per round, the input-after-effect handler still charges on its continuation:
/// the round's new key is one the server has not seen, and the handler runs from the start. The
/// model's counterexample, replayed on `sdk`'s fixture, is confirmed with both ledger lines
/// keyed, under different keys.
fn keyed_round_charges_again_on(sdk: Sdk) {
    let profile = keyed_continuations();
    let (config, _) = cell(HandlerKind::InputAfterEffect);
    let config = Config { profile: profile.name.clone(), ..config };
    let trace = counterexample(&config, &profile).expect("a new round's key runs the handler again");
    assert_eq!(trace.actions.len(), 8, "{:?}", trace.actions);
    let name = format!("keyed-round-{}", sdk.as_str());
    let dir = scratch!("replay-mrtr", &name);
    let result = run_on(sdk, &trace, &config, &profile, &dir, &name);
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    let ledger = read_objects(&dir.join("ledger.jsonl"));
    assert_eq!(ledger.len(), 2, "two effects for one logical call: {ledger:?}");
    let keys: Vec<&Value> = ledger.iter().map(|l| &l["idempotency_key"]).collect();
    assert!(keys.iter().all(|k| k.is_string()) && keys[0] != keys[1], "a key of its own per round: {ledger:?}");
    let cont = note(&result, "ClientContinue");
    assert!(cont.contains("requestState echoed") && cont.contains(", key "), "{cont}");
}

#[test]
fn a_continuation_under_a_key_of_its_own_still_charges_again_on_the_rust_fixture() {
    keyed_round_charges_again_on(Sdk::Rust);
}

#[test]
fn a_continuation_under_a_key_of_its_own_still_charges_again_on_the_python_fixture() {
    keyed_round_charges_again_on(Sdk::Python);
}
