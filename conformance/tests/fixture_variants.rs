//! The model's server behaviours that are fixture variants on every SDK that allows them:
//! `honours-cancel` (a call cancelled before its commit is dropped), `dedup-by-id` (a table of
//! JSON-RPC ids in memory) and `dedup-by-id-durable` (that table on disk, surviving SIGKILL and
//! restart). Real processes over stdio, raw JSON-RPC frames, the real ledger file, real
//! SIGKILLs; every wait is bounded and waits for an event (a frame, a stderr line, a ledger
//! line), never a fixed time.

use std::path::Path;
use std::time::Duration;

use mcp_once_testkit::fixtures::Server;
use mcp_once_testkit::jsonl::read_or_empty as read_objects;
use mcp_once_testkit::stdio::Peer;
use mcp_once_testkit::wait::wait_until;
use mcp_once_testkit::{scratch, Scratch};
use serde_json::{json, Value};

/// Upper bound for any single wait.
const BOUND: Duration = Duration::from_secs(20);
const BIN: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

fn temp(name: &str) -> Scratch {
    scratch!("fixture-variants", name)
}

/// `server`'s fixture of `variant` on `ledger` over stdio, past the handshake.
fn start(server: Server, variant: &str, ledger: &Path) -> Peer {
    let argv = server.argv(Path::new(BIN), ledger, "stdio", &["--variant", variant]);
    let mut peer = Peer::spawn(&argv, BOUND);
    peer.initialize("fixture-variants-test");
    peer
}

fn charge_message(id: Value, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "charge", "arguments": arguments}})
}

fn charge(peer: &mut Peer, id: Value, arguments: Value) -> Value {
    peer.send(&charge_message(id.clone(), arguments));
    peer.response(&id)
}

/// The success result of a response (a panic shows anything else).
fn success(response: &Value) -> &Value {
    assert!(response.get("error").is_none(), "an error: {response}");
    assert_ne!(response["result"]["isError"], json!(true), "a tool error: {response}");
    &response["result"]
}

/// Whether a response refuses the call as a duplicate still in progress: a JSON-RPC error with
/// `data.type` (rmcp) or a tool error whose text starts with it (the TypeScript and Python SDKs
/// turn a handler's error into a tool result with `isError`).
fn in_progress(response: &Value) -> bool {
    let typed = response["error"]["data"]["type"] == "request_id_in_progress";
    let text = response["result"]["content"][0]["text"].as_str().unwrap_or("");
    typed || (response["result"]["isError"] == json!(true) && text.starts_with("request_id_in_progress"))
}

fn wait_lines(path: &Path, n: usize) -> Vec<Value> {
    wait_until(&format!("{}: {n} line(s)", path.display()), BOUND, || {
        let lines = read_objects(path);
        (lines.len() >= n).then_some(lines)
    })
}

// ---------------------------------------------------------------------------------------------
// honours-cancel

/// A call held before its commit and cancelled meanwhile leaves no ledger line and gets no
/// response; the next call runs as usual.
fn cancelled_before_commit(server: Server) {
    let dir = temp(&format!("cancel-{}", server.name()));
    let ledger = dir.ledger();
    let mut f = start(server, "honours-cancel", &ledger);
    f.send(&charge_message(json!(2), json!({"amount": 7, "delay_before_ms": 15000})));
    f.stderr_line("holding 15000 ms before the commit");
    f.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}),
    );
    f.stderr_line("cancelled before its commit, dropped");
    let next = charge(&mut f, json!(3), json!({"amount": 8}));
    success(&next);
    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 1, "only the uncancelled call committed: {lines:?}");
    assert_eq!(lines[0]["request_id"], json!(3));
    let frames = f.kill_and_collect();
    assert!(frames.iter().all(|m| m["id"] != json!(2)), "the dropped call got a response: {frames:?}");
}

#[test]
fn honours_cancel_rust() {
    cancelled_before_commit(Server::Rust);
}

#[test]
fn honours_cancel_typescript() {
    cancelled_before_commit(Server::TypeScript);
}

#[test]
fn honours_cancel_python() {
    cancelled_before_commit(Server::Python);
}

/// The contrast that makes the test above mean something: the plain Rust fixture (rmcp runs a
/// cancelled handler on) commits the cancelled call.
#[test]
fn plain_rust_commits_a_cancelled_call() {
    let dir = temp("cancel-plain");
    let ledger = dir.ledger();
    let mut f = start(Server::Rust, "plain", &ledger);
    f.send(&charge_message(json!(2), json!({"amount": 7, "delay_before_ms": 1500})));
    f.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}));
    let lines = wait_lines(&ledger, 1);
    assert_eq!(lines[0]["request_id"], json!(2));
}

// ---------------------------------------------------------------------------------------------
// dedup-by-id

/// A repeated id gets the stored result and runs nothing, whatever its arguments; an id whose
/// request has not committed is refused; a restart empties the table.
fn dedup_in_memory(server: Server) {
    let dir = temp(&format!("dedup-{}", server.name()));
    let ledger = dir.ledger();
    let mut f = start(server, "dedup-by-id", &ledger);
    let first = charge(&mut f, json!(2), json!({"amount": 1}));
    let again = charge(&mut f, json!(2), json!({"amount": 2, "currency": "eur"}));
    assert_eq!(success(&again), success(&first), "the stored result of id 2");
    assert_eq!(read_objects(&ledger).len(), 1, "the repeat ran nothing");

    // Committed and holding its reply: the entry is done at the commit, so the same id gets
    // the stored result before the first request has its own.
    f.send(&charge_message(json!(3), json!({"amount": 3, "delay_after_ms": 15000})));
    wait_lines(&ledger, 2);
    let early = charge(&mut f, json!(3), json!({"amount": 30}));
    assert_eq!(success(&early)["structuredContent"]["charged"], json!(3), "{early}");
    // Received and not committed: the same id is refused.
    f.send(&charge_message(json!(4), json!({"amount": 4, "delay_before_ms": 15000})));
    f.stderr_line("charge 4: new id, entered as running");
    let dup = charge(&mut f, json!(4), json!({"amount": 4}));
    assert!(in_progress(&dup), "{dup}");
    assert_eq!(read_objects(&ledger).len(), 2);

    // SIGKILL and restart: the in-memory table is gone, id 2 runs again.
    f.kill();
    let mut f = start(server, "dedup-by-id", &ledger);
    let after = charge(&mut f, json!(2), json!({"amount": 5}));
    assert_eq!(success(&after)["structuredContent"]["charged"], json!(5), "{after}");
    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[2]["arguments"]["amount"], json!(5));
}

#[test]
fn dedup_by_id_rust() {
    dedup_in_memory(Server::Rust);
}

#[test]
fn dedup_by_id_typescript() {
    dedup_in_memory(Server::TypeScript);
}

#[test]
fn dedup_by_id_python() {
    dedup_in_memory(Server::Python);
}

// ---------------------------------------------------------------------------------------------
// dedup-by-id-durable

/// The id-reuse finding: after SIGKILL and restart, a NEW call that reuses id 1 is answered
/// with the OLD call's result and runs nothing. An id received but never committed before the
/// kill stays in progress for good.
fn dedup_durable(server: Server) {
    let dir = temp(&format!("durable-{}", server.name()));
    let ledger = dir.ledger();
    let mut f = start(server, "dedup-by-id-durable", &ledger);
    let old = charge(&mut f, json!(1), json!({"amount": 1, "currency": "usd"}));
    success(&old);
    // Id 2 arrives and holds before its commit; the kill comes first.
    f.send(&charge_message(json!(2), json!({"amount": 2, "delay_before_ms": 15000})));
    let ids = std::path::PathBuf::from(format!("{}.ids", ledger.display()));
    wait_lines(&ids, 2);
    f.kill();

    let mut f = start(server, "dedup-by-id-durable", &ledger);
    let new = charge(&mut f, json!(1), json!({"amount": 99, "currency": "chf"}));
    assert_eq!(success(&new), success(&old), "the new call got the old call's result");
    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 1, "one ledger line, the old call's: {lines:?}");
    assert_eq!(lines[0]["arguments"]["amount"], json!(1));
    assert_eq!(
        lines[0]["record"]["structuredContent"], old["result"]["structuredContent"],
        "the stored result is in the effect's own line"
    );
    let lost = charge(&mut f, json!(2), json!({"amount": 2}));
    assert!(in_progress(&lost), "{lost}");
    let fresh = charge(&mut f, json!(3), json!({"amount": 3}));
    success(&fresh);
    assert_eq!(read_objects(&ledger).len(), 2);
}

#[test]
fn dedup_by_id_durable_rust() {
    dedup_durable(Server::Rust);
}

#[test]
fn dedup_by_id_durable_typescript() {
    dedup_durable(Server::TypeScript);
}

#[test]
fn dedup_by_id_durable_python() {
    dedup_durable(Server::Python);
}
