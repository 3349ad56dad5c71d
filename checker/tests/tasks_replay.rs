//! Traces of task-augmented `tools/call` (`--tasks augmented`) on real servers: the duplicate
//! task (a lost `CreateTaskResult`, a retry, a second task) confirmed on the Rust fixture with
//! tasks (`--tasks augmented`, rmcp's tasks extension, 2026-07-28) over HTTP and stdio, two
//! tasks and two effects observed; a replay of a task trace on a server that does not declare
//! task-augmented `tools/call` (the plain Rust fixture; the tasks fixture under 2025-11-25,
//! where rmcp has no such capability) inconclusive, naming the capability, never confirmed
//! with plain calls; a `CreateTaskResult` the trace loses to a kill or a broken stream held by
//! the runner (the fixture's `delay_task_result_ms`) so that the loss is real; and
//! `confirm --tasks` taking the task cells and only them.

use mcp_once_testkit::{mcp_once, scratch, text, trace_in};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// A port nothing listens on now (the runner checks again before it launches the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The `property` counterexample of the `plain` task cell `[profile, transport, client]` (one
/// call, one retry, `crashes` kills), written into `dir`.
fn task_trace(
    dir: &Path,
    [profile, transport, client]: [&str; 3],
    crashes: &str,
    property: &str,
) -> std::path::PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", profile, "--transport", transport, "--client", client])
        .args(["--server", "plain", "--tasks", "augmented", "--calls", "1", "--retries", "1", "--crashes", crashes])
        .args(["--property", property, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, property)
}

/// The exactly-once counterexample of the task cell that loses a `CreateTaskResult` (one call,
/// one retry, no crash) over `transport`, written into `dir`: 7 steps, two tasks.
fn duplicate_task_trace(dir: &Path, profile: &str, transport: &str) -> std::path::PathBuf {
    task_trace(dir, [profile, transport, "retry-any"], "0", "exactly-once")
}

/// `mcp-once replay TRACE` on the Rust fixture started with `options` over `transport`, as
/// JSON, with its exit code, and the lines in the fixture's ledger afterwards.
fn replay_on_fixture(dir: &Path, trace: &Path, transport: &str, options: &str) -> (Value, i32, usize) {
    let ledger = dir.join("ledger.jsonl");
    let fixture = format!("{BIN} fixture --sdk rust --variant plain {options} --ledger {}", ledger.display());
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
        .args(["--format", "json", "--evidence"])
        .arg(dir.join("evidence"))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    let v: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}{}", text(&out.stderr)));
    let lines = std::fs::read_to_string(&ledger).map_or(0, |s| s.lines().count());
    (v, out.status.code().expect("an exit code"), lines)
}

#[test]
fn the_duplicate_task_is_confirmed_on_the_tasks_fixture_with_two_tasks_and_two_effects() {
    for transport in ["http", "stdio"] {
        let dir = scratch!("tasks-replay", &format!("confirmed-{transport}"));
        let trace = duplicate_task_trace(&dir, "mcp-2026-07-28", transport);
        let (v, code, lines) = replay_on_fixture(&dir, &trace, transport, "--tasks augmented");
        assert_eq!(v["verdict"], "confirmed", "{transport}: {v:#}");
        assert_eq!(code, 1, "confirmed exits 1 ({transport})");
        assert_eq!(v["observed_effects"], 2, "{transport}: {v:#}");
        assert_eq!(lines, 2, "{transport}: two ledger lines, one per task");
        // Two tasks were created: each tools/call was answered with a CreateTaskResult of its
        // own task (the fixture's durable records name them).
        let records = std::fs::read_to_string(dir.join("ledger.jsonl.task-records")).unwrap();
        let tasks: BTreeSet<String> = records
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["taskId"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(tasks.len(), 2, "{transport}: {records}");
        // The wire log has both CreateTaskResults, each naming one of them.
        let evidence = std::fs::read_to_string(dir.join("evidence/evidence.jsonl")).unwrap();
        for task in &tasks {
            let answered = format!(r#""resultType":"task","status":"working","taskId":"{task}""#);
            assert!(evidence.contains(&answered), "{transport}: no CreateTaskResult of {task} in the wire log");
        }
    }
}

/// The at-most-once counterexample of the 2026-07-28 task cell with a client that retries on a
/// disconnect (one call, one retry, `crashes` kills), written into `dir`.
fn lost_task_result_trace(dir: &Path, transport: &str, crashes: &str) -> std::path::PathBuf {
    task_trace(dir, ["mcp-2026-07-28", transport, "retry-on-disconnect"], crashes, "at-most-once")
}

#[test]
fn a_create_task_result_lost_to_a_kill_or_a_broken_stream_is_held_and_the_duplicate_confirmed() {
    // Over stdio the kill comes after the first task's effect and before its CreateTaskResult
    // leaves the server; over HTTP the client breaks the stream before the server answers. The
    // fixture writes a CreateTaskResult as soon as the task exists unless the runner holds it.
    for (transport, crashes) in [("stdio", "1"), ("http", "0")] {
        let dir = scratch!("tasks-replay", &format!("lost-result-{transport}"));
        let trace = lost_task_result_trace(&dir, transport, crashes);
        let (v, code, lines) = replay_on_fixture(&dir, &trace, transport, "--tasks augmented");
        assert_eq!(v["verdict"], "confirmed", "{transport}: {v:#}");
        assert_eq!(code, 1, "{transport}");
        assert_eq!((v["observed_effects"].as_u64(), lines), (Some(2), 2), "{transport}: {v:#}");
        let evidence = std::fs::read_to_string(dir.join("evidence/evidence.jsonl")).unwrap();
        assert!(evidence.contains("holding its CreateTaskResult"), "{transport}: the fixture held no CreateTaskResult");
        if transport == "stdio" {
            // The first process was killed holding its answer, and the trace ends before the
            // client reads the retry's: no CreateTaskResult reached the runner.
            let created = evidence.matches(r#""resultType":"task","status":"working""#).count();
            assert_eq!(created, 0, "stdio: no CreateTaskResult on the wire");
        }
    }
}

#[test]
fn a_task_trace_on_a_server_without_task_calls_is_inconclusive_naming_the_capability() {
    let cases = [
        ("mcp-2025-11-25", "http", "", "capabilities.tasks.requests.tools.call is absent"),
        ("mcp-2025-11-25", "stdio", "", "capabilities.tasks.requests.tools.call is absent"),
        // rmcp 3.11's tasks are the 2026-07-28 extension: under 2025-11-25 it has no capability.
        ("mcp-2025-11-25", "http", "--tasks augmented", "capabilities.tasks.requests.tools.call is absent"),
        ("mcp-2026-07-28", "stdio", "", r#"capabilities.extensions["io.modelcontextprotocol/tasks"] is absent"#),
    ];
    for (profile, transport, options, named) in cases {
        let dir = scratch!("tasks-replay", &format!("no-capability-{profile}-{transport}-{}", options.len()));
        let trace = duplicate_task_trace(&dir, profile, transport);
        let (v, code, lines) = replay_on_fixture(&dir, &trace, transport, options);
        let case = format!("{profile} {transport} {options:?}");
        assert_eq!(v["verdict"], "inconclusive", "{case}: {v:#}");
        assert_eq!(code, 2, "inconclusive exits 2 ({case})");
        let reason = v["reason"].as_str().unwrap();
        assert!(reason.contains("task-augmented") && reason.contains(named), "{case}: {reason}");
        // No plain tools/call was sent: the fixture's tool never ran.
        assert_eq!(lines, 0, "{case}: no effect");
        assert!(v["steps"].as_array().unwrap().is_empty(), "{case}: no step driven: {v:#}");
    }
}

#[test]
fn confirm_tasks_replays_only_task_cells() {
    let dir = scratch!("tasks-replay", "confirm");
    for profile in ["mcp-2026-07-28", "mcp-2025-11-25"] {
        let out = mcp_once!()
            .args(["confirm", "--profile", profile, "--transport", "http", "--client", "retry-any"])
            .args(["--server", "plain", "--tasks", "augmented", "--sdk", "rust", "--format", "json", "--evidence"])
            .arg(dir.join(profile))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
        let results = v["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{v:#}");
        for r in results {
            let cell = r["cell"].as_str().unwrap();
            assert!(cell.contains("-tasks-augmented"), "a plain cell replayed under --tasks augmented: {r}");
            if profile == "mcp-2026-07-28" {
                // Driven as tasks on the fixture with tasks: every counterexample confirmed.
                assert_eq!(r["verdict"], "confirmed", "{r}");
            } else {
                // rmcp has no 2025-11-25 task capability: each task cell says so, and none is
                // confirmed with plain calls.
                assert_eq!(r["verdict"], "inconclusive", "{r}");
                let reason = r["reason"].as_str().unwrap();
                assert!(reason.contains("capabilities.tasks.requests.tools.call is absent"), "{r}");
            }
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
