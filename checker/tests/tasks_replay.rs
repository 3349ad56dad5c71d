//! Traces of task-augmented `tools/call` (`--tasks augmented`) on real servers: `confirm
//! --tasks` takes the task cells and only them, and a replay of a task trace on a server that
//! does not declare task-augmented `tools/call` (the plain Rust fixture, over HTTP and stdio)
//! is inconclusive, naming the capability, never confirmed with plain calls.

use mcp_once_testkit::{mcp_once, scratch, text, trace_in};
use serde_json::Value;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// A port nothing listens on now (the runner checks again before it launches the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The exactly-once counterexample of the task cell that loses a `CreateTaskResult` (one call,
/// one retry, no crash) over `transport`, written into `dir`: 7 steps, two tasks.
fn duplicate_task_trace(dir: &Path, transport: &str) -> std::path::PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", transport, "--client", "retry-any"])
        .args(["--server", "plain", "--tasks", "augmented", "--calls", "1", "--retries", "1", "--crashes", "0"])
        .args(["--property", "exactly-once", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, "exactly-once")
}

/// `mcp-once replay TRACE` on the plain Rust fixture over `transport`, as JSON, with its exit
/// code, and the lines in the fixture's ledger afterwards.
fn replay_on_plain_fixture(dir: &Path, trace: &Path, transport: &str) -> (Value, i32, usize) {
    let ledger = dir.join("ledger.jsonl");
    let fixture = format!("{BIN} fixture --sdk rust --variant plain --ledger {}", ledger.display());
    let target: Vec<String> = match transport {
        "http" => {
            let port = free_port();
            vec![
                "--http".into(),
                format!("http://127.0.0.1:{port}/mcp"),
                "--launch".into(),
                format!("{fixture} --transport http --port {port}"),
            ]
        }
        _ => vec!["--stdio".into(), fixture],
    };
    let out = mcp_once!()
        .arg("replay")
        .arg(trace)
        .args(&target)
        .args(["--args", r#"{"amount":42}"#, "--observe", &format!("ledger:{}", ledger.display())])
        .args(["--format", "json"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{}", text(&out.stderr)));
    let lines = std::fs::read_to_string(&ledger).map_or(0, |s| s.lines().count());
    (v, out.status.code().expect("an exit code"), lines)
}

#[test]
fn a_task_trace_on_a_server_without_task_calls_is_inconclusive_naming_the_capability() {
    for transport in ["http", "stdio"] {
        let dir = scratch!("tasks-replay", &format!("no-capability-{transport}"));
        let trace = duplicate_task_trace(&dir, transport);
        let (v, code, lines) = replay_on_plain_fixture(&dir, &trace, transport);
        assert_eq!(v["verdict"], "inconclusive", "{transport}: {v:#}");
        assert_eq!(code, 2, "inconclusive exits 2 ({transport})");
        let reason = v["reason"].as_str().unwrap();
        assert!(
            reason.contains("task-augmented") && reason.contains("capabilities.tasks.requests.tools.call is absent"),
            "{transport}: {reason}"
        );
        // No plain tools/call was sent: the fixture's tool never ran.
        assert_eq!(lines, 0, "{transport}: no effect");
        assert!(v["steps"].as_array().unwrap().is_empty(), "{transport}: no step driven: {v:#}");
    }
}

#[test]
fn confirm_tasks_replays_only_task_cells() {
    let dir = scratch!("tasks-replay", "confirm");
    let out = mcp_once!()
        .args(["confirm", "--profile", "mcp-2025-11-25", "--transport", "http", "--client", "retry-any"])
        .args(["--server", "plain", "--tasks", "augmented", "--sdk", "rust", "--format", "json", "--evidence"])
        .arg(dir.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{v:#}");
    for r in results {
        let cell = r["cell"].as_str().unwrap();
        assert!(cell.contains("-tasks-augmented"), "a plain cell replayed under --tasks augmented: {r}");
        // Each task cell is driven with tasks (confirmed) or says why it cannot be (inconclusive).
        match r["verdict"].as_str().unwrap() {
            "confirmed" | "ran" => {}
            "inconclusive" => assert!(r["reason"].as_str().unwrap().contains("task"), "{r}"),
            other => panic!("{other}: {r}"),
        }
    }
    // `--task-records` narrows the cells the same way; alone it selects none, and says so.
    for (args, named) in [
        (&["--task-records", "volatile"][..], "--task-records volatile"),
        (&["--profile", "mcp-2025-11-25", "--rounds", "2"][..], "--rounds 2"),
    ] {
        let out = mcp_once!().arg("confirm").args(args).arg("--evidence").arg(dir.path()).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.lines().any(|l| l.contains(named)), "{args:?}: {err}");
    }
}
