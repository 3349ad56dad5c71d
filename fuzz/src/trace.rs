//! Invariants of `TraceFile::parse` and `TraceFile::validate` on arbitrary input.
//!
//! - A trace that parses has one action fewer than states; each action re-serialises to the
//!   tag and fields of the recorded `mbt::actionTaken` and back to itself; its configuration
//!   re-serialises to itself.
//! - Validation (under the built-in profile the trace names, else `mcp-2025-11-25`) either
//!   returns the typed path (one action per recorded action) or an error; a trace that
//!   validates re-serialises: written again with `to_itf`, it parses to the same configuration,
//!   property and actions, to what `TraceFile::from_counterexample` builds from the same path,
//!   and validates again to the same path.
//! - Every error displays as one line `FILE: step N: REASON`, with N within the trace.

use mcp_once_model::trace::{to_itf, TraceError, TraceFile, ValidTrace};
use mcp_once_model::{Action, Config, Profile};
use serde_json::{json, Value};

const FILE: &str = "fuzz.itf.json";

/// Check every invariant on one input; panics on a violation.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let trace = match TraceFile::parse(FILE, text) {
        Ok(t) => t,
        Err(e) => return check_error(&e, None),
    };
    assert_eq!(trace.actions.len() + 1, trace.states.len(), "one action per step");
    for (a, state) in trace.actions.iter().zip(&trace.states[1..]) {
        let mut recorded = state["mbt::actionTaken"].clone();
        if recorded.get("value") == Some(&json!({"#tup": []})) {
            recorded.as_object_mut().expect("object").remove("value");
        }
        // Written back, the action says what was read (fields the vocabulary does not know
        // are ignored on reading, so only the known ones are compared).
        let written = serde_json::to_value(a).expect("an action serialises");
        assert_eq!(written["tag"], recorded["tag"], "action {a} changes its tag");
        if let Some(fields) = written.get("value").and_then(Value::as_object) {
            for (k, v) in fields {
                assert_eq!(Some(v), recorded["value"].get(k), "action {a}: field {k} changes");
            }
        }
        let back: Action = serde_json::from_value(written).expect("an action reads back");
        assert_eq!(&back, a);
    }
    let config: Config = serde_json::from_value(serde_json::to_value(&trace.config).expect("config serialises"))
        .expect("config reads back");
    assert_eq!(config, trace.config);

    let name = if Profile::builtin_names().contains(&trace.config.profile.as_str()) {
        trace.config.profile.as_str()
    } else {
        "mcp-2025-11-25"
    };
    let profile = Profile::load(name).expect("built-in profiles load");
    match trace.validate(FILE, &profile) {
        Ok(valid) => {
            assert_eq!(valid.steps(), trace.actions.len());
            assert_eq!(valid.path.actions, trace.actions);
            assert_eq!(valid.path.states.len(), trace.states.len());
            check_rewrite(&trace, profile, &valid);
        }
        Err(e) => check_error(&e, Some(trace.actions.len())),
    }
}

fn check_rewrite(trace: &TraceFile, profile: Profile, valid: &ValidTrace) {
    let kind = trace.property;
    let text = serde_json::to_string_pretty(&to_itf(&valid.model, kind, &valid.path, false)).expect("ITF serialises");
    let again = TraceFile::parse("rewrite.itf.json", &text)
        .unwrap_or_else(|e| panic!("the rewritten trace does not parse: {e}"));
    assert_eq!(again.config, trace.config);
    assert_eq!(again.property, trace.property);
    assert_eq!(again.actions, trace.actions);
    let built = TraceFile::from_counterexample(&valid.model, kind, &valid.path, false);
    assert_eq!(
        (&built.config, &built.property, &built.actions, &built.states, &built.meta),
        (&again.config, &again.property, &again.actions, &again.states, &again.meta),
        "the trace built in process differs from the one written and read back"
    );
    let valid_again = again
        .validate("rewrite.itf.json", &profile)
        .unwrap_or_else(|e| panic!("the rewritten trace does not validate: {e}"));
    assert_eq!(valid_again.path, valid.path);
}

fn check_error(e: &TraceError, actions: Option<usize>) {
    let shown = e.to_string();
    assert!(!shown.contains(['\n', '\r']), "error is not one line: {shown:?}");
    assert!(shown.starts_with(&format!("{FILE}: step {}: ", e.step)), "{shown:?}");
    assert!(!e.reason.trim().is_empty(), "empty reason: {shown:?}");
    match actions {
        None => {}
        Some(n) => assert!(e.step <= n, "step {} outside 0..={n}: {shown:?}", e.step),
    }
}
