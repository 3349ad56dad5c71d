//! Verdicts from what was observed, on servers that are not the ledger fixtures: `mcp-once
//! replay` as a user runs it against a server that gives none of the fixtures' signals (no delay
//! arguments, no log line naming what its handler did, no key file), its effects counted in the
//! file it writes. A call the observer counts taking effect twice is `confirmed`, whatever step
//! the replay reached and whether or not the runner could see the mechanism.
//!
//! The server is `servers/pay_after_effect.py` on the official Python SDK (the fixtures' venv,
//! `conformance/fixtures/install.sh`): it records its idempotency key after an awaited effect, so
//! a cancellation in that await loses the record.

use mcp_once_testkit::process::assert_groups_gone;
use mcp_once_testkit::{fixtures, jsonl, mcp_once, scratch, text, trace_in};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn server_script(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers").join(name);
    let p = p.canonicalize().unwrap().display().to_string();
    assert!(!p.contains(char::is_whitespace), "the runner splits commands on spaces; this path has one: {p}");
    p
}

/// Write the at-most-once trace of a configuration into `dir`; its path.
fn trace(dir: &Path, args: &[&str]) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--property", "at-most-once", "--calls", "1"])
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, "at-most-once")
}

/// SEP-3182 over stdio, a client that retries on a timeout with one key per call, a server that
/// records its key after the effect and whose handler a cancellation interrupts: the model's
/// counterexample has the server read the cancellation between the effect and the record. On a
/// server that logs nothing about it, the runner cannot see the interruption; the retry's second
/// payment under the same key is what it sees, and that confirms the violation (the replay was
/// inconclusive before, waiting for a fixture's log line).
#[test]
fn an_interruption_no_log_line_shows_is_confirmed_by_the_effects_counted() {
    let dir = scratch!("foreign-servers", "interrupt");
    let t = trace(
        &dir,
        &[
            "--profile",
            "sep-3182",
            "--transport",
            "stdio",
            "--client",
            "retry-on-timeout",
            "--server",
            "key-after-effect",
            "--key",
            "per-call",
            "--cancel",
            "interrupts",
            "--retries",
            "1",
            "--crashes",
            "0",
        ],
    );
    let trace_text = std::fs::read_to_string(&t).unwrap();
    assert!(trace_text.contains("ServerReceiveCancel"), "the trace has the server read the cancellation");
    let payments = dir.join("payments.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args([
            "--stdio",
            &format!(
                "{} {} {} 2",
                fixtures::python("python"),
                server_script("pay_after_effect.py"),
                payments.display()
            ),
            "--tool",
            "pay",
            "--args",
            r#"{"order":"{{call}}"}"#,
            "--key-at",
            "arg:idempotency_key",
            "--observe",
            &format!("ledger:{}", payments.display()),
            "--step-timeout-ms",
            "4000",
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let lines = jsonl::read(&payments);
    assert_eq!(lines.len(), 2, "the server paid twice: {lines:?}");
    assert_eq!(lines[0]["idempotency_key"], lines[1]["idempotency_key"], "under one key: {lines:?}");
    assert_eq!(v["verdict"], "confirmed", "two payments under one key are a confirmed violation: {v:#}");
    assert_eq!(out.status.code(), Some(1), "confirmed exits 1");
    let steps = v["steps"].as_array().unwrap();
    let cancel = steps.iter().find(|s| s["action"].as_str().unwrap().starts_with("ServerReceiveCancel")).unwrap();
    assert_eq!(cancel["status"], "unobserved", "the runner saw no sign of the interruption itself: {cancel}");
    assert!(cancel["note"].as_str().unwrap().contains("no sign"), "{cancel}");
    assert_groups_gone(&jsonl::evidence(&evidence), "replay");
}
