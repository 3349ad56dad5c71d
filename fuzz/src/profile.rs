//! Invariants of `Profile::parse` on arbitrary input.
//!
//! - Parsing is deterministic.
//! - A profile that parses renders its knob table: one row per knob of `KnobId::ALL`, in order,
//!   each with a value and a citation that display; it serialises to JSON (as reports do).
//! - Written back as a flat profile file (every knob, no `extends`), it parses to the same
//!   knob values and citations.
//! - An error is `ProfileError::Invalid`, displays as one line
//!   `FILE:LINE:COLUMN: MESSAGE`, and LINE/COLUMN lie inside the input (or one past its end).
//!
//! Inputs whose `extends` names an existing file (not a built-in) are skipped: following them
//! would make the target read whatever file the fuzzer names.

use std::path::Path;

use mcp_once_model::{KnobId, Profile, ProfileError};
use serde_json::Value;

const FILE: &str = "fuzz.toml";

/// Check every invariant on one input; panics on a violation.
pub fn check(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if names_an_existing_file(text) {
        return;
    }
    let first = Profile::parse(FILE, text, None);
    let again = Profile::parse(FILE, text, None);
    match (&first, &again) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "parsing is not deterministic"),
        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "parsing is not deterministic"),
        _ => panic!("parsing is not deterministic: {first:?} then {again:?}"),
    }
    match first {
        Ok(profile) => check_profile(&profile),
        Err(e) => check_error(text, &e),
    }
}

fn names_an_existing_file(text: &str) -> bool {
    let Ok(table) = toml::from_str::<toml::Table>(text) else { return false };
    match table.get("extends").and_then(toml::Value::as_str) {
        Some(name) => !Profile::builtin_names().contains(&name) && Path::new(name).exists(),
        None => false,
    }
}

fn check_profile(profile: &Profile) {
    let table = profile.knob_table();
    let names: Vec<KnobId> = table.iter().map(|row| row.0).collect();
    assert_eq!(names, KnobId::ALL, "knob table rows");
    for (name, value, cite, set_by) in &table {
        assert!(!value.is_empty(), "knob {name} renders an empty value");
        assert!(!set_by.is_empty(), "knob {name} has no setter");
        let _ = cite.to_string();
    }
    let json = serde_json::to_value(profile).expect("a profile serialises to JSON");

    // Flat rewrite: every knob with its value and citation, no `extends`.
    let mut knobs = serde_json::Map::new();
    for (name, knob) in json["knobs"].as_object().expect("knobs object") {
        let mut knob = knob.clone();
        knob.as_object_mut().expect("knob object").remove("set_by");
        knobs.insert(name.clone(), knob);
    }
    let mut flat = serde_json::Map::new();
    for field in ["name", "title", "kind", "revision", "source"] {
        if !json[field].is_null() {
            flat.insert(field.into(), json[field].clone());
        }
    }
    flat.insert("knobs".into(), Value::Object(knobs));
    let text = toml::to_string(&Value::Object(flat)).expect("a profile renders as TOML");
    let reparsed = Profile::parse("flat.toml", &text, None)
        .unwrap_or_else(|e| panic!("the flat rewrite does not parse: {e}\n{text}"));
    let values = |p: &Profile| p.knob_table().into_iter().map(|(n, v, c, _)| (n, v, c.clone())).collect::<Vec<_>>();
    assert_eq!(values(profile), values(&reparsed), "the flat rewrite changes knobs");
    assert_eq!(
        (&profile.name, &profile.title, profile.kind, &profile.revision, &profile.source),
        (&reparsed.name, &reparsed.title, reparsed.kind, &reparsed.revision, &reparsed.source)
    );
}

fn check_error(text: &str, e: &ProfileError) {
    let shown = e.to_string();
    assert!(!shown.contains(['\n', '\r']), "error is not one line: {shown:?}");
    let ProfileError::Invalid { file, line, column, message } = e else {
        panic!("parse gave a non-location error: {shown:?}");
    };
    assert_eq!(file, FILE);
    assert!(!message.trim().is_empty(), "empty message: {shown:?}");
    assert!(shown.starts_with(&format!("{FILE}:{line}:{column}: ")), "{shown:?}");
    let lines = text.split('\n').count();
    assert!((1..=lines).contains(line), "line {line} outside 1..={lines}: {shown:?}");
    let width = text.split('\n').nth(line - 1).map_or(0, str::len);
    assert!((1..=width + 1).contains(column), "column {column} outside 1..={}: {shown:?}", width + 1);
}
