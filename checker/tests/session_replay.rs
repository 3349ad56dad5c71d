//! `mcp-once replay` of a trace in which the server ends the HTTP session (2025-11-25
//! `SessionTerminated {}`): no runner can make a server do that, so the replay stops there as
//! inconclusive, saying why, against the real Rust fixture over HTTP; never a pass, never a
//! crash.

use mcp_once_testkit::{mcp_once, scratch, text, trace_in};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// A port nothing listens on now (the runner checks again before it launches the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[test]
fn a_session_the_trace_ends_is_inconclusive_on_a_real_server_with_the_reason() {
    let dir = scratch!("session-replay", "inconclusive");
    let property = "success-implies-effect";
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "http", "--client", "no-retry"])
        .args(["--server", "dedup-by-id", "--calls", "2", "--crashes", "0", "--session-terminations", "1"])
        .args(["--property", property, "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let trace = trace_in(&dir, property);
    let port = free_port();
    let ledger = dir.join("ledger.jsonl");
    let launch = format!(
        "{BIN} fixture --sdk rust --variant dedup-by-id --transport http --port {port} --ledger {}",
        ledger.display()
    );
    let out = mcp_once!()
        .arg("replay")
        .arg(&trace)
        .args(["--http", &format!("http://127.0.0.1:{port}/mcp"), "--launch", &launch])
        .args(["--args", r#"{"amount":42}"#, "--observe", &format!("ledger:{}", ledger.display())])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "inconclusive exits 2: {stdout}{}", text(&out.stderr));
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["verdict"], "inconclusive", "{v}");
    let steps = v["steps"].as_array().unwrap();
    // Steps 1 to 3 (call 0 sent, read, committed) are made; step 4 is the termination.
    let failed = steps.iter().find(|s| s["status"] == "failed").expect("the termination step is marked");
    assert_eq!(failed["action"], "SessionTerminated", "{v}");
    let note = failed["note"].as_str().unwrap();
    assert!(note.contains("cannot make a server do that") && !note.contains("  "), "{note}");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 1, "call 0 ran once, nothing after");
}
