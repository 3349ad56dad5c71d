//! The Rust fixture's `--cancel interrupts`: a key-after-effect `charge`
//! cancelled between its effect and its key record stops there, so the record is never written
//! and a retry with the same key runs the effect again, with no crash. Real process over stdio,
//! raw JSON-RPC frames, the real ledger and key files; every wait is bounded and waits for an
//! event (a stderr line, a response), never a fixed time.

use std::path::Path;
use std::time::Duration;

use mcp_once_testkit::fixtures::Server;
use mcp_once_testkit::jsonl::read_or_empty as read_objects;
use mcp_once_testkit::scratch;
use mcp_once_testkit::stdio::Peer;
use serde_json::{json, Value};

const BOUND: Duration = Duration::from_secs(20);
const BIN: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

fn charge(id: u64, extra: Value) -> Value {
    let mut arguments = json!({"amount": 5});
    arguments.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "charge", "arguments": arguments, "idempotencyKey": "k-interrupted"}})
}

#[test]
fn key_after_effect_interrupted_between_effect_and_record_runs_the_retry_again() {
    let dir = scratch!("fixture-cancel", "interrupts");
    let ledger = dir.ledger();
    let args = ["--variant", "key-after-effect", "--cancel", "interrupts"];
    let mut f = Peer::spawn(&Server::Rust.argv(Path::new(BIN), &ledger, "stdio", &args), BOUND);
    f.initialize("fixture-cancel-test");
    f.send(&charge(2, json!({"delay_after_ms": 15000})));
    f.stderr_line("committed (key");
    f.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}),
    );
    f.stderr_line("interrupted after its commit, before its key record");
    f.send(&charge(3, json!({})));
    let retry = f.response(&json!(3));
    assert!(retry.get("error").is_none() && retry["result"]["isError"] != json!(true), "{retry}");
    let keys = Path::new(&format!("{}.keys", ledger.display())).to_path_buf();
    assert_eq!(read_objects(&ledger).len(), 2, "the effect ran twice");
    let records = read_objects(&keys);
    assert_eq!(records.len(), 1, "only the retry's record: {records:?}");
    assert!(records[0]["request_id"] == json!(3) || records[0]["request_id"] == json!("3"), "{records:?}");
    let frames = f.kill_and_collect();
    assert!(frames.iter().all(|m| m["id"] != json!(2) || m.get("error").is_some()), "{frames:?}");
}
