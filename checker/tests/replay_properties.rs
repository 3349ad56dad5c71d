//! Replay judges the trace's own property, from evidence: what the client was told for each
//! call against the ledger. The id-reuse finding (a durable JSON-RPC id table answers a NEW
//! call that reuses id 1 after a restart with the OLD call's result) is a success-implies-effect
//! counterexample: written by `mcp-once check`, replayed by `mcp-once replay` on the Rust
//! fixture, as a user runs them. Real processes, real SIGKILL; waits are the runner's own,
//! bounded, on events.

use mcp_once_testkit::{jsonl, mcp_once, scratch, text, trace_in, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn temp(name: &str) -> Scratch {
    scratch!("replay-properties", name)
}

/// `mcp-once check` of the id-reuse cell writes its success-implies-effect trace into `dir`.
fn id_reuse_trace(dir: &Path) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-disconnect"])
        .args(["--server", "dedup-by-id-durable", "--calls", "2", "--retries", "1", "--crashes", "1"])
        .args(["--property", "success-implies-effect", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "violated exits 1: {}", text(&out.stderr));
    trace_in(dir, "success-implies-effect")
}

/// `mcp-once replay` of `trace` on the Rust fixture of `variant`; the JSON result and the ledger.
fn replay(dir: &Path, trace: &Path, variant: &str) -> (Value, Vec<Value>, Option<i32>) {
    let ledger = dir.join(format!("{variant}.jsonl"));
    let fixture = format!("{BIN} fixture --sdk rust --variant {variant} --ledger {}", ledger.display());
    let out = mcp_once!()
        .arg("replay")
        .arg(trace)
        .args(["--stdio", &fixture, "--args", r#"{"amount": 42, "order": "{{call}}"}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .arg("--evidence")
        .arg(dir.join(format!("evidence-{variant}")))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    (v, jsonl::read(&ledger), out.status.code())
}

#[test]
fn the_id_reuse_counterexample_is_confirmed_on_a_durable_id_table_and_not_on_a_plain_server() {
    let dir = temp("id-reuse");
    let trace = id_reuse_trace(&dir);

    let (v, ledger, code) = replay(&dir, &trace, "dedup-by-id-durable");
    assert_eq!(v["verdict"], "confirmed", "{v:#}");
    assert_eq!(code, Some(1), "confirmed exits 1");
    assert_eq!(v["property"], "success-implies-effect");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("call 1 was told success"), "{reason}");
    // The evidence a user checks: one ledger line, the first call's (id 1, its tag), and the
    // second call (also id 1, after the restart) answered with that line's result.
    assert_eq!(ledger.len(), 1, "{ledger:?}");
    assert_eq!(ledger[0]["request_id"], 1);
    let tag = ledger[0]["arguments"]["order"].as_str().unwrap();
    assert!(tag.ends_with("-c0"), "the only effect is call 0's: {tag}");
    let records = jsonl::evidence(&dir.join("evidence-dedup-by-id-durable"));
    let events: Vec<&str> = jsonl::of_kind(&records, "process").filter_map(|r| r["event"].as_str()).collect();
    assert_eq!(events.iter().filter(|e| **e == "start").count(), 2, "a restart: {events:?}");
    assert!(events.contains(&"killed"), "a SIGKILL: {events:?}");
    let steps = v["steps"].as_array().unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["action"], "ClientReceive(call 1, attempt 0)");
    assert!(last["note"].as_str().unwrap().contains("charged 42"), "{last}");

    // The same trace on a server without an id table: the reused id runs, so the second call
    // has its own effect and the property holds there.
    let (v, ledger, code) = replay(&dir, &trace, "plain");
    assert_eq!(v["verdict"], "not-reproduced", "{v:#}");
    assert_eq!(code, Some(0));
    assert_eq!(ledger.len(), 2, "{ledger:?}");
    assert!(ledger[1]["arguments"]["order"].as_str().unwrap().ends_with("-c1"));
}
