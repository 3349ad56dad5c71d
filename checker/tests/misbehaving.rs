//! `mcp-once replay` and `mcp-once probe` against servers that misbehave, each in one way
//! (`conformance/tests/misbehaving/server.py`): they exit at start, never answer, answer the
//! wrong id or twice, print garbage or megabytes, trickle an answer a byte a second, close
//! stdout, leave a child outside their group holding it, ignore SIGTERM, fail to come back after
//! a restart, or (HTTP) answer 500, reset the connection, stream forever. The
//! handshake and HTTP faults are run again with the runner at 2026-07-28 (`server/discover`),
//! against servers that speak only 2025-11-25 or do not list 2026-07-28.
//!
//! For each: the run ends within a sanity limit derived from its bounds, with one verdict,
//! `diverged` or `inconclusive` (the child holding stdout: `confirmed`, as for a well-behaved
//! server), pinned per fault (probe: WARNING, never SUCCESS), a reason naming the fault, and no process
//! group left behind (checked against every `process start` pid in the evidence log). The
//! ledger the observer reads is one the broken server never writes (or writes one line).

use mcp_once_testkit::process::{assert_groups_gone, pid_gone_within};
use mcp_once_testkit::{jsonl, mcp_once, scratch, text, trace_in, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Bound on each awaited step and on each server start, passed to the runner.
const STEP_MS: u64 = 3000;
const START_MS: u64 = 3000;
/// The runner's SIGTERM grace before SIGKILL when it stops a server (`--stop-grace-ms`).
const GRACE_MS: u64 = 1000;

fn temp(name: &str) -> Scratch {
    scratch!("misbehaving", name)
}

fn server_py() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/tests/misbehaving/server.py")
}

/// Which model trace to replay.
#[derive(Clone, Copy, Debug)]
enum Trace {
    /// Scenario 1: retry after a timeout (no crash).
    Timeout,
    /// A SIGKILL, a restart and a retry on the same line.
    Restart,
}

/// The wire revision the runner speaks and the server under test is built for. `runner` also
/// picks the profile whose trace is replayed.
#[derive(Clone, Copy, Debug)]
struct Revisions {
    server: &'static str,
    runner: &'static str,
}

const R2025: Revisions = Revisions { server: "2025-11-25", runner: "2025-11-25" };
const R2026: Revisions = Revisions { server: "2026-07-28", runner: "2026-07-28" };

fn trace(dir: &Path, which: Trace, transport: &str, rev: Revisions) -> PathBuf {
    let profile = format!("mcp-{}", rev.runner);
    let mut args = vec![
        "check",
        "--property",
        "at-most-once",
        "--calls",
        "1",
        "--profile",
        &profile,
        "--transport",
        transport,
        "--server",
        "plain",
        "--retries",
        "1",
    ];
    match which {
        Trace::Timeout => args.extend(["--client", "retry-on-timeout"]),
        Trace::Restart => args.extend(["--client", "retry-on-disconnect", "--crashes", "1"]),
    }
    let out = mcp_once!().args(&args).arg("--out").arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, "at-most-once")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The target options for a fault: `--stdio CMD`, or `--http URL --launch CMD` for `http-*`.
fn target(fault: &str, dir: &Path, rev: Revisions) -> Vec<String> {
    let ledger = dir.join("ledger.jsonl");
    let state = dir.join("starts.txt");
    let server_fault = fault.trim_end_matches("-over-http");
    let cmd = format!(
        "python3 {} --fault {server_fault} --ledger {} --state {} --revision {}",
        server_py().display(),
        ledger.display(),
        state.display(),
        rev.server
    );
    let mut args = if is_http(fault) {
        let port = free_port();
        vec!["--http".into(), format!("http://127.0.0.1:{port}/mcp"), "--launch".into(), format!("{cmd} --port {port}")]
    } else {
        vec!["--stdio".into(), cmd]
    };
    args.extend([
        "--args".into(),
        r#"{"amount":42}"#.into(),
        "--observe".into(),
        format!("ledger:{}", ledger.display()),
        "--step-timeout-ms".into(),
        STEP_MS.to_string(),
        "--start-timeout-ms".into(),
        START_MS.to_string(),
        "--window-ms".into(),
        "100".into(),
        "--stop-grace-ms".into(),
        GRACE_MS.to_string(),
        "--revision".into(),
        rev.runner.into(),
    ]);
    args
}

/// Whether the fault is tested over Streamable HTTP (`http-*`, and `*-over-http` names, which
/// are the handshake faults run on HTTP; the server is given the fault without that suffix).
fn is_http(fault: &str) -> bool {
    fault.starts_with("http-") || fault.ends_with("-over-http")
}

/// A replay's sanity limit: its bounds (starts, one step, the stop grace), times 3, plus 10 s.
/// Only a limit against hangs, far from what a run takes, so it cannot make the test flaky.
fn sanity_limit(starts: u64) -> Duration {
    let bound = starts * START_MS + 2 * STEP_MS + GRACE_MS;
    Duration::from_millis(bound * 3 + 10_000)
}

/// Run `mcp-once` (`command` adds `replay TRACE` or `probe`) against the server with `fault`,
/// evidence in `evidence`, JSON out; the output and the wall time. An HTTP server must bind the
/// port the runner is given in `--http URL`, found free just before: should another process
/// take it in between, the server records a bind conflict next to its state file and exits, and
/// the run is repeated on a new port (at most 5 runs in all).
fn run(
    fault: &str,
    dir: &Path,
    rev: Revisions,
    evidence: &Path,
    limit: Duration,
    command: impl Fn(&mut assert_cmd::Command) -> &mut assert_cmd::Command,
) -> (std::process::Output, Duration) {
    let conflict = dir.join("starts.txt.bind-conflict");
    for _ in 0..5 {
        let _ = std::fs::remove_dir_all(evidence);
        let started = Instant::now();
        let mut cmd = mcp_once!();
        command(&mut cmd).args(target(fault, dir, rev)).arg("--evidence").arg(evidence);
        let out = cmd.args(["--format", "json"]).timeout(limit).output().unwrap();
        let wall = started.elapsed();
        if std::fs::remove_file(&conflict).is_err() {
            return (out, wall);
        }
        eprintln!("{fault}: the HTTP port was taken before the server bound it; running again on another");
    }
    panic!("{fault}: 5 runs in a row lost their HTTP port to another process")
}

/// Replay `which` against the server with `fault`; assert the verdict is one of `verdicts`, the
/// reason names every word of `words`, the bound held and no process is left. Returns the
/// result and the evidence records.
fn replay(fault: &str, which: Trace, verdicts: &[&str], words: &[&str]) -> (Value, Vec<Value>) {
    replay_at(R2025, fault, which, verdicts, words)
}

/// [`replay`] with the server and the runner at the given revisions.
fn replay_at(rev: Revisions, fault: &str, which: Trace, verdicts: &[&str], words: &[&str]) -> (Value, Vec<Value>) {
    let name = format!("{fault}-{which:?}-{}-{}", rev.server, rev.runner).to_lowercase();
    let dir = temp(&name);
    let transport = if is_http(fault) { "http" } else { "stdio" };
    let t = trace(&dir, which, transport, rev);
    let evidence = dir.join("evidence");
    let (out, wall) = run(fault, &dir, rev, &evidence, Duration::from_secs(300), |c| c.arg("replay").arg(&t));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: no JSON result ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    let reason = v["reason"].as_str().unwrap();
    assert!(verdicts.contains(&v["verdict"].as_str().unwrap()), "{name}: verdict {} ({reason})", v["verdict"]);
    assert_eq!(out.status.code(), Some(2), "{name}: diverged and inconclusive exit 2");
    assert_eq!(reason.lines().count(), 1, "{name}: one-line reason: {reason}");
    for w in words {
        assert!(reason.contains(w), "{name}: the reason should say `{w}`: {reason}");
    }
    let starts = match which {
        Trace::Timeout => 1,
        Trace::Restart => 2,
    };
    assert!(wall < sanity_limit(starts), "{name}: took {wall:?}, over the sanity limit {:?}", sanity_limit(starts));
    let records = jsonl::evidence_under(&evidence);
    let groups = assert_groups_gone(&records, &name);
    eprintln!(
        "FIGURE replay {name}: {} in {} ms, {groups} process group(s) started, 0 left: {reason}",
        v["verdict"].as_str().unwrap(),
        wall.as_millis()
    );
    (v, records)
}

/// Probe the server with `fault`: no check may pass; each is untestable (a FAILURE whose message
/// is `Not testable: …`, `details.untestable`, as the conformance suite reports it), one of them
/// names every word of `words`; bounds held, no process left.
fn probe(fault: &str, words: &[&str]) {
    probe_at(R2025, fault, words)
}

/// [`probe`] with the server and the runner at the given revisions.
fn probe_at(rev: Revisions, fault: &str, words: &[&str]) {
    let name = format!("{fault}-probe-{}-{}", rev.server, rev.runner);
    let dir = temp(&name);
    let evidence = dir.join("evidence");
    let (out, wall) = run(fault, &dir, rev, &evidence, Duration::from_secs(600), |c| c.arg("probe"));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: no JSON ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    let checks = v["checks"].as_array().unwrap();
    assert!(!checks.is_empty());
    for c in checks {
        let msg = c["errorMessage"].as_str().unwrap_or("");
        assert_eq!(c["status"], "FAILURE", "{name}: {} is {} ({msg})", c["id"], c["status"]);
        assert!(msg.starts_with("Not testable: ") && c["details"]["untestable"] == true, "{name}: {c}");
    }
    assert!(
        checks.iter().any(|c| words.iter().all(|w| c["errorMessage"].as_str().unwrap().contains(w))),
        "{name}: no check names {words:?}: {}",
        serde_json::to_string_pretty(checks).unwrap()
    );
    assert_eq!(out.status.code(), Some(2), "{name}: untestable checks exit 2");
    let records = jsonl::evidence_under(&evidence);
    // Each run has its own start(s); the limit is per run, summed.
    let runs = records.iter().filter(|r| r["kind"] == "verdict").count().max(1) as u32;
    let limit = sanity_limit(2) * runs;
    assert!(wall < limit, "{name}: took {wall:?} for {runs} runs, over the sanity limit {limit:?}");
    let groups = assert_groups_gone(&records, &name);
    eprintln!(
        "FIGURE probe {name}: {} checks not testable, {runs} runs in {} ms, {groups} process group(s) started, 0 left",
        checks.len(),
        wall.as_millis()
    );
}

#[test]
fn exit_at_start() {
    replay("exit-at-start", Trace::Timeout, &["diverged"], &["did not start", "initialize"]);
    probe("exit-at-start", &["did not start"]);
}

#[test]
fn never_answers_initialize() {
    replay("silent-initialize", Trace::Timeout, &["diverged"], &["did not start", "initialize", "no answer within"]);
    probe("silent-initialize", &["did not start", "initialize"]);
}

#[test]
fn never_answers_tools_call() {
    replay("silent-call", Trace::Timeout, &["inconclusive"], &["no effect and no answer within"]);
    probe("silent-call", &["no effect and no answer"]);
}

#[test]
fn answers_a_wrong_id() {
    // Inconclusive, never diverged: the server answers id 1000001 instead of 1 and writes no
    // ledger line, so at the commit the trace has next the runner sees neither the effect nor
    // an answer to its own id within the step bound. Nothing it sees is a divergence (no request
    // failed, stdout stays open, the process lives); the breach is noted in the reason (it
    // turns only a `not-reproduced` into `diverged`).
    let (v, _) = replay("wrong-id", Trace::Timeout, &["inconclusive"], &["broke the protocol", "never sent"]);
    assert_eq!(
        v["reason"],
        format!(
            "call 0 attempt 0: no effect and no answer within {STEP_MS} ms (0 of 1 effects); it was cancelled, and \
             the server may have honoured that (the runner cannot tell a stopped call from a hung one); the server \
             broke the protocol: a response to id 1000001, which the runner never sent"
        )
    );
    probe("wrong-id", &["never sent"]);
}

/// A server that prints a banner and a log line to stdout before it serves (the official
/// clients skip such lines): named for what it is, the first lines quoted and the stdio
/// transport's rule cited, exit 2; with `--skip-non-json` the probe runs past them and reports
/// them as a WARNING check.
#[test]
fn prints_a_banner_before_serving() {
    let dir = temp("banner");
    let evidence = dir.join("evidence");
    let (out, _) = run("banner", &dir, R2025, &evidence, Duration::from_secs(300), |c| c.arg("probe"));
    assert_eq!(out.status.code(), Some(2), "{}{}", text(&out.stdout), text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let msg = v["checks"][0]["errorMessage"].as_str().unwrap().to_string();
    assert!(msg.contains("not JSON to its stdout"), "{msg}");
    assert!(msg.contains("`Pay server 1.0 starting (stdio)`, `INFO loaded 3 tools`"), "the first lines quoted: {msg}");
    assert!(msg.contains("MUST NOT write anything to its stdout") && msg.contains("--skip-non-json"), "{msg}");
    assert!(!msg.contains("did not start") && !msg.contains("initialize: initialize"), "{msg}");

    let evidence = dir.join("evidence-skipping");
    let (out, _) =
        run("banner", &dir, R2025, &evidence, Duration::from_secs(600), |c| c.args(["probe", "--skip-non-json"]));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(checks[0]["status"], "SUCCESS", "the preflight passes past the banner: {:#}", checks[0]);
    let warning = checks.iter().find(|c| c["id"] == "mcp-once-stdout-non-json").expect("a stdout check");
    assert_eq!(warning["status"], "WARNING", "{warning}");
    assert_eq!(warning["details"]["lines"], 2, "{warning}");
    assert!(warning["errorMessage"].as_str().unwrap().contains("`INFO loaded 3 tools`"), "{warning}");
    let failed = checks.iter().filter(|c| c["status"] == "FAILURE").count();
    assert!(failed > 0, "a server with no dedup fails the retry checks once it can be probed: {v:#}");
    assert_eq!(out.status.code(), Some(1), "a failing check exits 1");
    assert_groups_gone(&jsonl::evidence_under(&evidence), "banner");
}

/// Over 2026-07-28 Streamable HTTP, a server that answers a `tools/call` POST with JSON at once
/// sends its headers only with its result, so the runner cannot break the response stream before
/// the reply. Each stream-closing check either shows in its evidence a stream closed before the
/// reply, or says the fault could not be made: untestable, or, when the retry the trace had
/// already sent took effect too, a FAILURE that says the duplicate did not come through its fault.
#[test]
fn a_stream_the_runner_cannot_break_before_the_reply_is_said_not_made() {
    let dir = temp("close-before-reply");
    let evidence = dir.join("evidence");
    let ids = ["mcp-once-retry-after-stream-break", "mcp-once-retry-after-timeout"];
    let (out, _) = run("none-over-http", &dir, R2026, &evidence, Duration::from_secs(600), |c| {
        c.args(["probe", "--checks", &ids.join(",")])
    });
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    for id in ids {
        let c = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).unwrap_or_else(|| panic!("{id}: {v:#}"));
        let untestable = c["details"]["untestable"] == true;
        let msg = c["errorMessage"].as_str().unwrap_or("");
        if untestable {
            assert!(msg.contains("could not be broken before the reply"), "{id}: {msg}");
            continue;
        }
        for r in c["details"]["replays"].as_array().unwrap().iter().filter(|r| r["verdict"] == "confirmed") {
            // A duplicate counted without the fault (the reply came before the runner could
            // break the stream) still fails the check, which then says the fault was not made.
            if let Some(why) = r["fault_not_made"].as_str() {
                assert!(why.contains("could not be broken before the reply"), "{id}: {r}");
                assert!(msg.contains("not through this check's fault"), "{id}: {msg}");
                continue;
            }
            let result = Path::new(r["evidence"].as_str().unwrap()).with_file_name("result.json");
            let result: Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
            let closes: Vec<&Value> = result["steps"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["note"].as_str().is_some_and(|n| n.contains("response stream of id")))
                .collect();
            assert!(!closes.is_empty(), "{id}: a confirmed stream-closing replay closes a stream: {result:#}");
            for s in closes {
                assert!(s["note"].as_str().unwrap().contains("before the reply"), "{id}: {s}");
            }
        }
    }
    assert_groups_gone(&jsonl::evidence_under(&evidence), "close-before-reply");
}

#[test]
fn answers_one_request_twice() {
    replay("duplicate-id", Trace::Timeout, &["diverged"], &["broke the protocol", "duplicated response"]);
    probe("duplicate-id", &["duplicated response"]);
}

#[test]
fn prints_garbage() {
    replay("garbage", Trace::Timeout, &["inconclusive"], &["broke the protocol", "stdout"]);
    probe("garbage", &["broke the protocol"]);
}

#[test]
fn prints_a_partial_frame_and_exits() {
    // The server exits as soon as it reads the first attempt, which a pipe delivers at once; the
    // trace has it read both attempts before the first effect. So the runner finds it gone at the
    // retry's send, at the second read or while it waits for the first effect, as the two
    // processes' timing falls. Each time the reason names the broken frame too.
    let (v, _) = replay("partial-frame", Trace::Timeout, &["diverged"], &["inside a frame"]);
    let reason = v["reason"].as_str().unwrap();
    let seen = [
        "the server is not running when the trace sends a request",
        "gone before it could read the request",
        "before its effect was seen",
    ];
    assert!(seen.iter().any(|w| reason.contains(w)), "the reason should say where the server was found gone: {reason}");
    probe("partial-frame", &["inside a frame"]);
}

#[test]
fn prints_20_mb_without_a_newline() {
    replay("flood-no-newline", Trace::Timeout, &["inconclusive"], &["without a newline"]);
}

#[test]
fn prints_40_mb_of_notifications_and_never_answers() {
    let (_, records) = replay(
        "flood-lines",
        Trace::Timeout,
        &["inconclusive"],
        &["no effect and no answer", "notification(s) meanwhile"],
    );
    // The server blocks on a full pipe while the runner logs; what was read is in the file.
    let frames_in = records.iter().filter(|r| r["kind"] == "frame" && r["dir"] == "in").count();
    assert!(frames_in > 1000, "the frames read are in the evidence file ({frames_in})");
    eprintln!("FIGURE flood-lines: {frames_in} frames read and logged within the step bound");
}

#[test]
fn closes_stdout_and_stays_alive() {
    replay("close-stdout", Trace::Timeout, &["diverged"], &["closed its stdout", "before its effect was seen"]);
    probe("close-stdout", &["closed its stdout"]);
}

#[test]
fn ignores_sigterm() {
    for which in [Trace::Timeout, Trace::Restart] {
        let (_, records) = replay("ignore-sigterm", which, &["inconclusive"], &["no effect and no answer"]);
        let stop = records
            .iter()
            .find(|r| r["kind"] == "process" && r["event"] == "stop")
            .expect("the runner stopped the server");
        let stopped = records
            .iter()
            .find(|r| r["kind"] == "process" && r["event"] == "stopped")
            .expect("the runner stopped the server");
        assert_eq!(stop["grace_ms"], GRACE_MS, "the grace given is --stop-grace-ms");
        assert!(
            stopped["status"].as_str().unwrap().contains("SIGKILL"),
            "SIGTERM was ignored, so SIGKILL ended it: {stopped}"
        );
        let waited = stopped["t_ms"].as_f64().unwrap() - stop["t_ms"].as_f64().unwrap();
        assert!(
            waited >= GRACE_MS as f64 - 1.0,
            "SIGKILL came {waited} ms after SIGTERM, before the {GRACE_MS} ms grace was over"
        );
    }
}

#[test]
fn does_not_come_back_after_a_restart() {
    let (v, _) =
        replay("hang-on-restart", Trace::Restart, &["diverged"], &["ServerRestart", "did not come back", "initialize"]);
    assert_eq!(v["observed_effects"], 1, "the one ledger line, before the crash");
}

/// A server that starts a child outside its process group, holding its stdout and stderr: after
/// the SIGKILL of the group the pipes stay open, so the runner kills that child too (a `stray`
/// in the evidence); over stdio only then does the connection break as a crash breaks it. The
/// restart trace (over HTTP the shortest one is a stream break) is confirmed (two effects), in
/// bounded time, and no process is left, the children included.
fn child_outside_the_group(fault: &str) {
    let dir = temp(fault);
    let transport = if is_http(fault) { "http" } else { "stdio" };
    let t = trace(&dir, Trace::Restart, transport, R2025);
    let evidence = dir.join("evidence");
    let (out, wall) = run(fault, &dir, R2025, &evidence, Duration::from_secs(300), |c| c.arg("replay").arg(&t));
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{fault}: no JSON result ({e}): {}{}", text(&out.stdout), text(&out.stderr)));
    assert_eq!((v["verdict"].as_str(), v["observed_effects"].as_u64()), (Some("confirmed"), Some(2)), "{v}");
    assert_eq!(out.status.code(), Some(1));
    assert!(wall < sanity_limit(2), "{fault}: took {wall:?}");
    let records = jsonl::evidence_under(&evidence);
    assert_groups_gone(&records, fault);
    let strays: Vec<i32> = records
        .iter()
        .filter(|r| r["kind"] == "process" && r["event"] == "stray")
        .map(|r| r["pid"].as_i64().unwrap() as i32)
        .collect();
    let children: Vec<i32> =
        std::fs::read_to_string(dir.join("starts.txt.child")).unwrap().lines().map(|l| l.parse().unwrap()).collect();
    let starts = records.iter().filter(|r| r["kind"] == "process" && r["event"] == "start").count();
    assert_eq!(children.len(), starts, "{fault}: one child per server start: {children:?}");
    for child in children {
        assert!(strays.contains(&child), "{fault}: the runner killed child {child} and said so: {strays:?}");
        assert!(pid_gone_within(child, Duration::from_secs(5)), "{fault}: child {child} is still running");
    }
}

#[test]
fn forks_a_child_that_holds_stdout() {
    child_outside_the_group("fork-holds-stdout");
}

#[test]
fn http_forks_a_child_that_holds_stdout() {
    child_outside_the_group("http-fork-holds-stdout");
}

/// A server that writes its answer one byte a second: the step bound holds, and the reason says
/// the server was part-way through a frame (a slow writer, not a silent one).
#[test]
fn trickles_its_answer_a_byte_a_second() {
    replay(
        "trickle-call",
        Trace::Timeout,
        &["inconclusive"],
        &["no effect and no answer", "of a frame and no newline yet"],
    );
}

#[test]
fn http_500() {
    replay("http-500", Trace::Timeout, &["diverged"], &["did not start", "HTTP 500"]);
    probe("http-500", &["HTTP 500"]);
}

/// The reason of a replay against `http-reset`: the request of `attempt` failed on the reset.
fn assert_reset_reason(v: &Value, attempt: u32) {
    let reason = v["reason"].as_str().unwrap();
    let head = format!(
        "call 0 attempt {attempt}: the request failed: HTTP request failed: error sending request for url \
         (http://127.0.0.1:"
    );
    assert!(reason.starts_with(&head), "{reason}");
    assert!(
        reason
            .ends_with("/mcp): client error (SendRequest): connection error: Connection reset by peer (os error 104)"),
        "{reason}"
    );
}

#[test]
fn http_connection_reset() {
    // Diverged, never inconclusive: the server resets the connection as soon as it has read
    // `tools/call`, so the step awaited next (the server accepting the POST) sees the request
    // fail at once, where the trace has it received; inconclusive would need the step bound to
    // run out with no sign either way, which the immediate reset rules out.
    let (v, _) = replay("http-reset", Trace::Timeout, &["diverged"], &["request failed"]);
    assert_reset_reason(&v, 0);
    probe("http-reset", &["request failed"]);
}

#[test]
fn http_sse_stream_that_never_answers() {
    replay("http-sse-forever", Trace::Timeout, &["inconclusive"], &["no effect and no answer", "stream stayed open"]);
    probe("http-sse-forever", &["no effect and no answer"]);
}

// The same faults where the runner speaks 2026-07-28: `server/discover` instead of
// `initialize`, `_meta` and the SEP-2243 headers on every request, and (HTTP) a closed
// response stream as the cancellation.

#[test]
fn speaks_only_2025_11_25_to_a_2026_07_28_runner() {
    let old = Revisions { server: "2025-11-25", runner: "2026-07-28" };
    for fault in ["none", "none-over-http"] {
        // A well-behaved 2025-11-25 server: it answers `server/discover` with "no such method".
        replay_at(
            old,
            fault,
            Trace::Timeout,
            &["diverged"],
            &["did not start", "server/discover", "try --revision 2025-11-25"],
        );
    }
    probe_at(old, "none-over-http", &["server/discover"]);
}

#[test]
fn discover_does_not_list_2026_07_28() {
    for fault in ["discover-old-only", "discover-old-only-over-http"] {
        replay_at(
            R2026,
            fault,
            Trace::Timeout,
            &["diverged"],
            &["did not start", "does not list 2026-07-28", "try --revision 2025-11-25"],
        );
    }
    probe_at(R2026, "discover-old-only", &["does not list 2026-07-28"]);
}

#[test]
fn http_500_under_2026_07_28() {
    replay_at(R2026, "http-500", Trace::Timeout, &["diverged"], &["did not start", "HTTP 500"]);
    probe_at(R2026, "http-500", &["HTTP 500"]);
}

#[test]
fn http_connection_reset_under_2026_07_28() {
    // Diverged, as under 2025-11-25; here the trace cancels attempt 0 by closing its response
    // stream, so a failure of attempt 0 is the cancellation's, and the divergence is the retry's
    // (attempt 1) request failing on the reset.
    let (v, _) = replay_at(R2026, "http-reset", Trace::Timeout, &["diverged"], &["request failed"]);
    assert_reset_reason(&v, 1);
    probe_at(R2026, "http-reset", &["request failed"]);
}

#[test]
fn http_sse_stream_that_never_answers_under_2026_07_28() {
    replay_at(R2026, "http-sse-forever", Trace::Timeout, &["inconclusive"], &["no effect and no answer"]);
    probe_at(R2026, "http-sse-forever", &["no effect and no answer"]);
}

/// A server that answers `initialize` with garbage ends the probe at once, with the runner's
/// default bounds (a 20 s start bound): the breach ends that start, the preflight reports it,
/// and no check starts the server again (exit 2 well under 30 s).
#[test]
fn garbage_at_initialize_ends_the_probe_at_once_with_default_bounds() {
    let dir = temp("garbage-initialize-default-bounds");
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let cmd = format!("python3 {} --fault garbage-initialize --ledger {}", server_py().display(), ledger.display());
    let started = Instant::now();
    let out = mcp_once!()
        .args(["probe", "--stdio", &cmd, "--args", r#"{"amount":42}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display()), "--evidence", evidence.to_str().unwrap()])
        .args(["--format", "json"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    let wall = started.elapsed();
    assert_eq!(out.status.code(), Some(2), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(wall < Duration::from_secs(30), "took {wall:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let pre = &checks[0];
    assert_eq!(pre["id"], "mcp-once-preflight");
    let msg = pre["errorMessage"].as_str().unwrap();
    assert!(msg.contains("not JSON to its stdout") && msg.contains("`Welcome! Server ready.`"), "{msg}");
    assert!(msg.contains("MUST NOT write anything to its stdout"), "the stdio transport's rule is cited: {msg}");
    assert!(!msg.contains("initialize: initialize"), "{msg}");
    let records = jsonl::evidence_under(&evidence);
    let starts = records.iter().filter(|r| r["kind"] == "process" && r["event"] == "start").count();
    assert_eq!(starts, 1, "one start, by the preflight");
    assert_groups_gone(&records, "garbage-initialize");
    eprintln!("FIGURE probe garbage-initialize (default bounds): exit 2 in {} ms", wall.as_millis());
}
