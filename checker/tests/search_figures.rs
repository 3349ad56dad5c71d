//! What a search says about its own trustworthiness: the width of the fingerprints it
//! remembered states by and, past a million states, the estimated chance that two states shared
//! one (so that one was never explored), as TLC prints after every run.

use mcp_once_testkit::{mcp_once, text};
use serde_json::Value;

/// `check` of the safe SEP-3182 cell at 3 calls, 2 retries and `crashes` crashes, in `format`.
fn check_safe_cell(crashes: &str, format: &str) -> std::process::Output {
    mcp_once!()
        .args(["check", "--profile", "sep-3182", "--transport", "http", "--client", "retry-any"])
        .args(["--key", "per-call", "--server", "key-durable", "--calls", "3", "--retries", "2"])
        .args(["--crashes", crashes, "--format", format])
        .output()
        .unwrap()
}

/// The birthday bound for `n` distinct states and 128-bit fingerprints, computed here apart
/// from the checker's own code.
fn birthday_128(n: f64) -> f64 {
    n * (n - 1.0) / 2.0 / 2f64.powi(128)
}

#[test]
fn a_small_search_names_its_fingerprint_width_and_no_estimate() {
    let out = check_safe_cell("1", "text");
    let stdout = text(&out.stdout);
    let line = stdout.lines().find(|l| l.starts_with("explored ")).expect("an explored line");
    // Under a million states: the width, and no estimate (it would be below 3×10^-8 even at 64 bits).
    assert!(line.ends_with("; 128-bit fingerprints"), "{line}");
}

#[test]
fn a_search_past_a_million_states_prints_the_collision_estimate_for_its_count() {
    let out = check_safe_cell("2", "json");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let mut stats = Vec::new();
    collect_stats(&v, &mut stats);
    assert!(!stats.is_empty(), "no stats in {v}");
    for s in stats {
        let states = s["states"].as_u64().unwrap();
        assert!(states >= 1_000_000, "the cell is meant to pass a million states: {s}");
        assert_eq!(s["fingerprint_bits"], 128, "{s}");
        let p = s["collision_probability"].as_f64().unwrap_or_else(|| panic!("no estimate: {s}"));
        let expected = birthday_128(states as f64);
        assert!((p - expected).abs() <= expected * 1e-6, "{p} against {expected} for {states} states");
    }
    let text_out = text(&check_safe_cell("2", "text").stdout);
    let line = text_out.lines().find(|l| l.starts_with("explored ")).expect("an explored line");
    assert!(line.contains("; 128-bit fingerprints, estimated chance of a collision "), "{line}");
}

/// Every `stats` object anywhere in a JSON report.
fn collect_stats<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == "stats" && x.is_object() {
                    out.push(x);
                } else {
                    collect_stats(x, out);
                }
            }
        }
        Value::Array(xs) => xs.iter().for_each(|x| collect_stats(x, out)),
        _ => {}
    }
}
