//! The Rust fixture's key variants as the `outcome-query` proposal's server (`--outcome-query`):
//! a key names a run, every request runs (no stored result replayed, no duplicate refused), and
//! `tasks/get` with the key as `taskId` answers from the record: `working` while a run is in
//! progress, `completed` with the stored result, `-32602` for a task it has no record of.
//! Real processes over stdio speaking 2026-07-28, raw JSON-RPC frames, the real ledger file and
//! a real SIGKILL; every wait is bounded and waits for an event.

use std::path::Path;
use std::time::Duration;

use mcp_once_testkit::jsonl::read_or_empty as read_objects;
use mcp_once_testkit::stdio::Peer;
use mcp_once_testkit::{scratch, Scratch};
use serde_json::{json, Value};

const BOUND: Duration = Duration::from_secs(20);
const BIN: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

fn temp(name: &str) -> Scratch {
    scratch!("fixture-outcome-query", name)
}

/// The 2026-07-28 per-request `_meta`, declaring the tasks extension rmcp asks of a client
/// that sends `tasks/get`.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "fixture-outcome-query-test", "version": "0"}
    })
}

fn start(variant: &str, ledger: &Path, extra: &[&str]) -> Peer {
    let mut argv: Vec<String> = vec![BIN.into(), "--ledger".into(), ledger.display().to_string()];
    argv.extend(["--variant".to_string(), variant.to_string()]);
    argv.extend(extra.iter().map(|s| s.to_string()));
    Peer::spawn(&argv, BOUND)
}

fn call(id: i64, key: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "charge", "arguments": arguments, "idempotencyKey": key, "_meta": meta()}})
}

fn get_task(peer: &mut Peer, id: &str, task_id: &str) -> Value {
    peer.request(json!(id), "tasks/get", json!({"taskId": task_id, "_meta": meta()}))
}

fn assert_unknown(answer: &Value) {
    assert_eq!(answer["error"]["code"], json!(-32602), "a nonexistent task is Invalid params: {answer}");
}

/// The whole life of one key on `variant`: unknown, working, completed with the result; a
/// second run with the same key runs again (two ledger lines), even while the first runs.
fn answers_from_the_record(variant: &str) {
    let dir = temp(variant);
    let ledger = dir.ledger();
    let mut f = start(variant, &ledger, &["--outcome-query"]);
    assert_unknown(&get_task(&mut f, "q0", "k"));

    f.send(&call(1, "k", json!({"amount": 42, "delay_before_ms": 3000})));
    f.stderr_line("charge 1: key \"k\" recorded as running");
    let working = get_task(&mut f, "q1", "k");
    assert_eq!(working["result"]["status"], "working", "{working}");
    assert_eq!(working["result"]["taskId"], "k", "{working}");

    // A duplicate while the first runs is not refused: it runs and commits.
    f.send(&call(2, "k", json!({"amount": 42})));
    let second = f.response(&json!(2));
    assert!(second.get("error").is_none(), "not refused: {second}");
    let first = f.response(&json!(1));
    assert!(first.get("error").is_none(), "{first}");
    assert_eq!(read_objects(&ledger).len(), 2, "both runs took effect");

    let done = get_task(&mut f, "q2", "k");
    assert_eq!(done["result"]["status"], "completed", "{done}");
    let stored = &done["result"]["result"];
    assert_eq!(stored["content"][0]["text"], "charged 42", "the stored CallToolResult: {done}");
    assert!(stored["structuredContent"]["ledger_line"].is_number(), "{done}");

    // After it completed, the same key runs again too: no stored result is replayed.
    f.send(&call(3, "k", json!({"amount": 42})));
    let third = f.response(&json!(3));
    assert_eq!(third["result"]["structuredContent"]["ledger_line"], 3, "ran again: {third}");
    assert_unknown(&get_task(&mut f, "q3", "other"));
    f.kill();
    assert_eq!(read_objects(&ledger).len(), 3, "every request ran");
}

#[test]
fn key_volatile_answers_tasks_get_and_does_not_deduplicate() {
    answers_from_the_record("key-volatile");
}

#[test]
fn key_durable_answers_tasks_get_and_does_not_deduplicate() {
    answers_from_the_record("key-durable");
}

/// What survives SIGKILL is the variant's record: `key-durable` still answers `completed`
/// after a restart, `key-volatile` answers unknown.
#[test]
fn records_after_a_restart_follow_the_variant() {
    for (variant, survives) in [("key-durable", true), ("key-volatile", false)] {
        let dir = temp(&format!("restart-{variant}"));
        let ledger = dir.ledger();
        let mut f = start(variant, &ledger, &["--outcome-query"]);
        f.send(&call(1, "k", json!({"amount": 5})));
        assert!(f.response(&json!(1)).get("result").is_some());
        f.kill();
        let mut g = start(variant, &ledger, &["--outcome-query"]);
        let answer = get_task(&mut g, "q", "k");
        if survives {
            assert_eq!(answer["result"]["status"], "completed", "{variant}: {answer}");
        } else {
            assert_unknown(&answer);
        }
        g.kill();
    }
}

/// Without `--outcome-query` the key variants are SEP-3182's: `tasks/get` is not a method of
/// theirs, and a repeated key is answered with the stored result, not run again.
#[test]
fn without_the_flag_the_key_store_deduplicates() {
    let dir = temp("sep-3182");
    let ledger = dir.ledger();
    let mut f = start("key-volatile", &ledger, &[]);
    assert_eq!(get_task(&mut f, "q", "k")["error"]["code"], json!(-32601), "no tasks/get");
    f.send(&call(1, "k", json!({"amount": 42})));
    assert!(f.response(&json!(1)).get("result").is_some());
    f.send(&call(2, "k", json!({"amount": 42})));
    let second = f.response(&json!(2));
    assert_eq!(second["result"]["structuredContent"]["ledger_line"], 1, "the stored result: {second}");
    f.kill();
    assert_eq!(read_objects(&ledger).len(), 1, "the repeat did not run");
}
