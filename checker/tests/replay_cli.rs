//! `mcp-once replay`, `probe` and `explain --evidence` as a user runs them, against the bundled
//! Rust ledger fixture (`mcp-once fixture`): real processes, real SIGKILL, real signals to the
//! runner. Waits are bounded and wait for events (a process exit, a line in the evidence log).

use mcp_once_testkit::process::{assert_groups_gone, Reap};
use mcp_once_testkit::wait::{child_exit, wait_file};
use mcp_once_testkit::{jsonl, mcp_once, scratch, text, trace_in, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn temp(name: &str) -> Scratch {
    scratch!("replay-cli", name)
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

fn fixture(ledger: &Path, extra: &str) -> String {
    format!("{BIN} fixture --sdk rust --ledger {} {extra}", ledger.display())
}

#[test]
fn replay_json_confirms_scenario_1_and_the_report_folds_in_the_evidence() {
    let dir = temp("json");
    let t = trace(
        &dir,
        &[
            "--profile",
            "mcp-2025-11-25",
            "--transport",
            "stdio",
            "--client",
            "retry-on-timeout",
            "--server",
            "plain",
            "--retries",
            "1",
        ],
    );
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args([
            "--stdio",
            &fixture(&ledger, ""),
            "--args",
            r#"{"amount":42}"#,
            "--observe",
            &format!("ledger:{}", ledger.display()),
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "confirmed exits 1: {}{}", text(&out.stdout), text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verdict"], "confirmed");
    assert_eq!(v["expected_effects"], 2);
    assert_eq!(v["observed_effects"], 2);
    assert!(!v["reason"].as_str().unwrap().is_empty());
    assert_eq!(PathBuf::from(v["evidence"].as_str().unwrap()), evidence.join("evidence.jsonl"));
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 2, "the ledger has two lines");

    let records = jsonl::evidence(&evidence);
    let frames = |dir: &str, method: &str| {
        records.iter().filter(|r| r["kind"] == "frame" && r["dir"] == dir && r["frame"]["method"] == method).count()
    };
    assert_eq!(frames("out", "tools/call"), 2, "both attempts are in the log");
    assert_eq!(frames("out", "notifications/cancelled"), 1);
    assert!(records.iter().any(|r| r["kind"] == "frame" && r["dir"] == "in"), "server frames are in the log");
    assert!(records.iter().all(|r| r["t_ms"].is_number()), "every record is timestamped");
    assert_groups_gone(&records, "replay");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(evidence.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["verdict"], "confirmed");

    let out = mcp_once!().arg("explain").arg(&t).arg("--evidence").arg(&evidence).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    assert!(report.contains("## Replay on a real server"), "{report}");
    assert!(report.contains("**Verdict: confirmed.**"), "{report}");
    assert!(report.contains("client -> server [stdio]") && report.contains("notifications/cancelled"), "{report}");
}

#[test]
fn a_durable_key_store_does_not_reproduce_the_volatile_store_trace() {
    let dir = temp("durable");
    let t = trace(
        &dir,
        &[
            "--profile",
            "sep-3182",
            "--transport",
            "stdio",
            "--client",
            "retry-on-disconnect",
            "--server",
            "key-volatile",
            "--key",
            "per-call",
            "--retries",
            "1",
            "--crashes",
            "1",
        ],
    );
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args([
            "--stdio",
            &fixture(&ledger, "--variant key-durable"),
            "--args",
            r#"{"amount":42}"#,
            "--observe",
            &format!("ledger:{}", ledger.display()),
        ])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "not reproduced exits 0: {stdout}{}", text(&out.stderr));
    assert!(stdout.starts_with("NOT-REPRODUCED: "), "{stdout}");
    assert_eq!(std::fs::read_to_string(&ledger).unwrap().lines().count(), 1);
}

#[test]
fn bad_runner_input_gets_one_line_naming_it_and_exit_2() {
    let dir = temp("bad");
    let t = trace(
        &dir,
        &[
            "--profile",
            "mcp-2025-11-25",
            "--transport",
            "stdio",
            "--client",
            "retry-on-timeout",
            "--server",
            "plain",
            "--retries",
            "1",
        ],
    );
    let t = t.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["replay", t, "--stdio", "x", "--observe", "disk:/tmp/x"], "--observe"),
        (&["replay", t, "--stdio", "x", "--observe", "ledger:l", "--args", "{amount"], "--args"),
        (&["replay", t, "--stdio", "x", "--http", "http://127.0.0.1:1/mcp", "--observe", "ledger:l"], "not both"),
        (&["replay", t, "--stdio", "node 'unclosed", "--observe", "ledger:l"], "unbalanced quotes"),
        (&["replay", t, "--http", "ftp://host/x", "--observe", "ledger:l"], "--http"),
        (
            &["replay", "/nonexistent/trace.itf.json", "--stdio", "x", "--observe", "ledger:l"],
            "/nonexistent/trace.itf.json",
        ),
        (&["replay", t, "--stdio", "x", "--observe", "ledger:l", "--key-at", "header:x"], "--key-at"),
        (&["probe", "--stdio", "x", "--observe", "tool:"], "tool name"),
        (&["probe", "--stdio", "x", "--observe", "cmd:wc -l l", "--observe-filter", "a=1"], "--observe-filter"),
        (&["probe", "--stdio", "x", "--observe", "ledger:l", "--observe-step", "0"], "--observe-step"),
        (&["probe", "--http", "http://127.0.0.1:1/mcp", "--launch", "node 'x", "--observe", "ledger:l"], "--launch"),
        (&["probe", "--stdio", "x", "--observe", "ledger:l", "--checks", "no-such-check"], "--checks: no check"),
    ];
    for (args, names) in cases {
        let out = mcp_once!().args(*args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line, got {err}");
        assert!(err.contains(names), "{args:?}: {err} should name {names}");
    }
    // A server command that cannot start is a diverged replay (exit 2) that says why.
    let out = mcp_once!()
        .args(["replay", t, "--stdio", "/nonexistent/server --flag", "--observe", "ledger:/nonexistent/l"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("DIVERGED: the server did not start: cannot start `/nonexistent/server --flag`"),
        "{stdout}"
    );
    // A server that starts and lists no such tool is named as such, not as one that did not start.
    let dir = temp("no-tool");
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .args(["replay", t, "--stdio", &fixture(&ledger, ""), "--tool", "refund"])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("DIVERGED: the server has no tool `refund` (it lists: "), "{stdout}");
    assert!(stdout.contains("charge") && stdout.contains("with --tool"), "{stdout}");
    assert!(!stdout.contains("did not start"), "{stdout}");
    // A port that already answers before the launch: the runner would reach whatever listens
    // there, not the server it starts, so it starts nothing and says why.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let dir = temp("port-taken");
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .args(["probe", "--http", &format!("http://127.0.0.1:{port}/mcp")])
        .args(["--launch", &fixture(&ledger, &format!("--transport http --port {port}"))])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(&format!("something already listens on 127.0.0.1:{port} before the launch")), "{stdout}");
    assert!(!ledger.exists(), "no fixture ran");
    drop(taken);
}

/// Start a replay that holds its first commit for a minute, wait until it is waiting for that
/// commit (its evidence log says so), then send `signal`; it must stop at once with an
/// `interrupted` result, evidence kept, and no server left.
fn interrupt_with(signal: nix::sys::signal::Signal, name: &str) {
    let dir = temp(name);
    let t = trace(
        &dir,
        &[
            "--profile",
            "mcp-2025-11-25",
            "--transport",
            "stdio",
            "--client",
            "retry-on-timeout",
            "--server",
            "plain",
            "--retries",
            "1",
        ],
    );
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let mut child = Reap(
        std::process::Command::new(BIN)
            .arg("replay")
            .arg(&t)
            .args([
                "--stdio",
                &fixture(&ledger, ""),
                "--args",
                r#"{"amount":42}"#,
                "--observe",
                &format!("ledger:{}", ledger.display()),
                "--window-ms",
                "60000",
                "--step-timeout-ms",
                "60000",
            ])
            .arg("--evidence")
            .arg(&evidence)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // The replay holds its first commit for a minute; its log says when it waits for it.
    wait_file(&evidence.join("evidence.jsonl"), Duration::from_secs(30), |log| {
        assert!(child.0.try_wait().unwrap().is_none(), "the replay ended early: {log}");
        log.contains("\"action\":\"ServerCommit(call 0, attempt 0)\"")
    });
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.0.id() as i32), signal).unwrap();
    let status = child_exit(&mut child.0, Duration::from_secs(10))
        .unwrap_or_else(|| panic!("the runner did not stop within 10 s of {signal}"));
    assert_eq!(status.code(), Some(2), "interrupted exits 2");
    let result: Value = serde_json::from_str(&std::fs::read_to_string(evidence.join("result.json")).unwrap()).unwrap();
    assert_eq!(result["verdict"], "interrupted");
    let records = jsonl::evidence(&evidence);
    assert!(
        records.iter().any(|r| r["kind"] == "frame" && r["frame"]["method"] == "tools/call"),
        "the evidence so far is kept"
    );
    assert!(records.iter().any(|r| r["kind"] == "verdict" && r["verdict"] == "interrupted"));
    assert_groups_gone(&records, "replay");
}

#[test]
fn sigint_mid_replay_kills_the_server_group_and_reports_interrupted() {
    interrupt_with(nix::sys::signal::Signal::SIGINT, "sigint");
}

#[test]
fn sigterm_mid_replay_kills_the_server_group_and_reports_interrupted() {
    interrupt_with(nix::sys::signal::Signal::SIGTERM, "sigterm");
}

#[test]
fn probe_json_has_the_conformance_suite_check_shape() {
    let dir = temp("probe");
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .args([
            "probe",
            "--stdio",
            &fixture(&ledger, "--variant key-durable"),
            "--args",
            r#"{"amount":42}"#,
            "--observe",
            &format!("ledger:{}", ledger.display()),
            "--key-at",
            "params",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed check exits 1: {}{}", text(&out.stdout), text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let status =
        |id: &str| checks.iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("no check {id}"))["status"].clone();
    for c in checks {
        for field in ["id", "name", "description", "status", "timestamp"] {
            assert!(c[field].is_string(), "{field} in {c}");
        }
        assert!(["SUCCESS", "FAILURE", "WARNING"].contains(&c["status"].as_str().unwrap()));
        assert_ne!(c["details"]["untestable"], true, "nothing is untestable on the fixture: {c}");
        assert!(c["details"].is_object());
        for r in c["specReferences"].as_array().unwrap() {
            assert!(r["id"].is_string() && r["url"].as_str().unwrap().starts_with("https://"), "{r}");
        }
    }
    // The preflight saw one call take one effect (plain and keyed); plain retries run twice on
    // any server; the durable key store holds every SEP-3182 check.
    assert_eq!(status("mcp-once-preflight"), "SUCCESS");
    assert_eq!(status("mcp-once-retry-after-timeout"), "FAILURE");
    assert_eq!(status("mcp-once-retry-after-restart"), "FAILURE");
    assert_eq!(status("mcp-once-framework-rerun"), "FAILURE");
    for id in [
        "sep-3182-retry-with-key-after-restart",
        "sep-3182-completed-key-replay",
        "sep-3182-in-progress-rejected",
        "sep-3182-key-conflict",
        "sep-3182-survives-restart",
    ] {
        assert_eq!(status(id), "SUCCESS", "{id}: {}", serde_json::to_string_pretty(checks).unwrap());
    }
    assert!(!checks.iter().find(|c| c["id"] == "mcp-once-retry-after-timeout").unwrap()["specReferences"]
        .as_array()
        .unwrap()
        .is_empty());
}

#[test]
fn probe_reports_a_volatile_key_store_that_loses_its_records_on_restart() {
    let dir = temp("probe-volatile");
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .args([
            "probe",
            "--stdio",
            &fixture(&ledger, "--variant key-volatile"),
            "--args",
            r#"{"amount":42}"#,
            "--observe",
            &format!("ledger:{}", ledger.display()),
            "--key-at",
            "params",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = |id: &str| v["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap().clone();
    assert_eq!(check("sep-3182-survives-restart")["status"], "FAILURE");
    assert!(check("sep-3182-survives-restart")["errorMessage"]
        .as_str()
        .unwrap()
        .contains("does not survive a restart"));
    assert_eq!(check("sep-3182-retry-with-key-after-restart")["status"], "FAILURE");
    assert_eq!(check("sep-3182-completed-key-replay")["status"], "SUCCESS");
}

/// A server that refuses every call (here: the fixture without its required `amount`) took no
/// effect, so it has shown nothing about retries: the preflight says why, every check is
/// untestable (never a SUCCESS), and the probe exits 2 at once, without replaying anything.
#[test]
fn a_server_that_refuses_every_call_gets_no_success() {
    let dir = temp("probe-refuses");
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .args(["probe", "--stdio", &fixture(&ledger, ""), "--observe", &format!("ledger:{}", ledger.display())])
        .args(["--evidence", evidence.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}{}", text(&out.stdout), text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(checks[0]["id"], "mcp-once-preflight");
    assert!(checks[0]["errorMessage"].as_str().unwrap().contains("was refused"), "{}", checks[0]);
    assert_eq!(checks.len(), 4, "the preflight and the three stdio checks");
    for c in checks {
        assert_eq!((c["status"].as_str(), c["details"]["untestable"].as_bool()), (Some("FAILURE"), Some(true)), "{c}");
        assert!(c["errorMessage"].as_str().unwrap().starts_with("Not testable: "), "{c}");
    }
    // Only the preflight ran: one server start, no replay.
    let dirs: Vec<String> =
        std::fs::read_dir(&evidence).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(dirs, ["mcp-once-preflight"]);
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(evidence.join("mcp-once-preflight/result.json")).unwrap())
            .unwrap();
    assert_eq!(saved["id"], "mcp-once-preflight", "every evidence folder has its result.json");
}

/// A stdio server that takes no delay arguments (the fixture with pacing off) still gets its
/// crash point: strace holds the response's write, the kill lands after the effect and before
/// the response, and the retry after the restart runs the call again. The evidence says how.
#[test]
fn a_crash_point_without_delay_arguments_is_made_by_holding_the_write() {
    let dir = temp("probe-ptrace");
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .args(["probe", "--stdio", &fixture(&ledger, ""), "--args", r#"{"amount":7}"#, "--no-pace"])
        .args(["--observe", &format!("ledger:{}", ledger.display()), "--checks", "mcp-once-retry-after-restart"])
        .args(["--evidence", evidence.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "mcp-once-retry-after-restart").unwrap();
    assert_eq!(check["status"], "FAILURE", "{check}");
    assert_eq!(check["details"]["replays"][0]["observed_effects"], 2, "{check}");
    let records = jsonl::evidence_under(&evidence);
    let points: Vec<&Value> = records.iter().filter(|r| r["kind"] == "crashpoint").collect();
    assert_eq!(points.len(), 1, "{points:?}");
    assert_eq!((points[0]["method"].as_str(), points[0]["response_written"].as_bool()), (Some("ptrace"), Some(false)));
    // strace attached to the server before the call (its lines after that, the held write
    // among them, may be cut off by the kill: strace buffers them).
    let attached = |r: &&Value| r["channel"] == "strace" && r["line"].as_str().unwrap().contains(" attached");
    assert!(records.iter().any(|r| attached(&r)), "{records:?}");
}

/// A crash point the tool was asked to hold with no time to hold it (`--window-ms 0`): the
/// answer leaves before the kill, so the loss the trace needs was not made. That is the runner's
/// timing, not a server that differs from the trace: inconclusive, never diverged.
#[test]
fn an_answer_that_beats_its_crash_point_is_a_fault_not_made() {
    let dir = temp("window-zero");
    let cell = ["--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-disconnect"];
    let t = trace(&dir, &[&cell[..], &["--server", "plain", "--retries", "1", "--crashes", "1"]].concat());
    let ledger = dir.join("ledger.jsonl");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args(["--stdio", &fixture(&ledger, ""), "--args", r#"{"amount":42}"#, "--window-ms", "0"])
        .args(["--observe", &format!("ledger:{}", ledger.display()), "--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(v["verdict"], "inconclusive", "{v:#}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("answered before the connection broke") && reason.contains("was not made"), "{reason}");
}

/// The in-progress key check on a tool without delay arguments (the fixture with pacing off):
/// untestable until `--hold-args` names arguments that keep the call running after its effect;
/// with them the durable key store rejects the duplicate; arguments the tool does not declare
/// are named, since the SDK would drop them.
#[test]
fn the_in_progress_key_check_holds_the_call_with_hold_args() {
    let dir = temp("probe-hold-args");
    let ledger = dir.join("ledger.jsonl");
    let probe = |hold: Option<&str>| {
        let mut cmd = mcp_once!();
        cmd.args(["probe", "--stdio", &fixture(&ledger, "--variant key-durable"), "--args", r#"{"amount":5}"#])
            .args(["--no-pace", "--key-at", "params", "--observe", &format!("ledger:{}", ledger.display())])
            .args(["--checks", "sep-3182-in-progress-rejected", "--format", "json"]);
        if let Some(h) = hold {
            cmd.args(["--hold-args", h]);
        }
        let out = cmd.output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
        let check =
            v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "sep-3182-in-progress-rejected").cloned();
        (out.status.code(), check.expect("the in-progress check"))
    };
    let (code, check) = probe(None);
    assert_eq!((code, check["details"]["untestable"].as_bool()), (Some(2), Some(true)), "{check}");
    assert!(check["errorMessage"].as_str().unwrap().contains("--hold-args"), "{check}");

    let (code, check) = probe(Some(r#"{"sleep_after_s":2}"#));
    assert_eq!((code, check["details"]["untestable"].as_bool()), (Some(2), Some(true)), "{check}");
    assert!(check["errorMessage"].as_str().unwrap().contains("sleep_after_s"), "{check}");

    let (code, check) = probe(Some(r#"{"delay_after_ms":1500}"#));
    assert_eq!((code, check["status"].as_str()), (Some(0), Some("SUCCESS")), "{check}");
    assert_eq!(
        (check["details"]["held_by"].as_str(), check["details"]["effects"].as_i64()),
        (Some("--hold-args"), Some(1))
    );
    assert!(is_refusal(&check["details"]["duplicate"]), "the duplicate was rejected: {check}");
}

/// Whether a JSON-RPC response is a refusal (an error, or a result with `isError`).
fn is_refusal(response: &Value) -> bool {
    response.get("error").is_some() || response["result"]["isError"] == true
}

#[test]
fn a_probe_that_cannot_start_its_checks_names_why_once() {
    // A tool the server does not list: the preflight is not testable, and says so once.
    let dir = temp("probe-no-tool");
    let ledger = dir.join("ledger.jsonl");
    let server = format!("{BIN} fixture --sdk rust --ledger {}", ledger.display());
    let out = mcp_once!()
        .args(["probe", "--stdio", &server, "--tool", "nosuch", "--args", r#"{"amount":1}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "no verdict: {stdout}{}", text(&out.stderr));
    assert_eq!(stdout.matches("has no tool `nosuch`").count(), 1, "named once: {stdout}");
    assert!(stdout.contains("it lists: charge"), "{stdout}");
}
