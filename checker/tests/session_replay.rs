//! `mcp-once replay` of traces in which the server ends the HTTP session (2025-11-25
//! `SessionTerminated {}`), on real fixtures over real HTTP. The runner ends the session with
//! the client's DELETE, standing in for the server, observes the end (a ping under the old
//! session id answered 404), and opens a new session whose request ids start over while the
//! server process runs on. Verdicts are judged by the ledger: a call told success with no
//! effect of its own. A server with no session to end comes out inconclusive, with the reason.

use mcp_once_model::search::{replay as walk, Counterexample};
use mcp_once_model::trace::{to_itf, TraceKind};
use mcp_once_model::{Action, Bounds, ClientPolicy, Config, McpModel, Profile, PropertyKind, ServerImpl, Transport};
use mcp_once_testkit::{fixtures, jsonl, mcp_once, scratch, text, trace_in};
use serde_json::Value;
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");
const PROPERTY: &str = "success-implies-effect";

/// A port nothing listens on now (the runner checks again before it launches the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `mcp-once check` of the 7-step cell (an id table, two calls, one session termination)
/// writes its success-implies-effect trace into `dir`.
fn seven_step_trace(dir: &Path) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "http", "--client", "no-retry"])
        .args(["--server", "dedup-by-id", "--calls", "2", "--crashes", "0", "--session-terminations", "1"])
        .args(["--property", PROPERTY, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, PROPERTY)
}

/// How to start one fixture over HTTP on `port` with `ledger`, as a `--launch` command.
fn launch(sdk: &str, port: u16, ledger: &Path) -> String {
    let common = format!("--variant dedup-by-id --transport http --port {port} --ledger {}", ledger.display());
    match sdk {
        "rust" => format!("{BIN} fixture --sdk rust {common}"),
        "typescript" => format!("node {} {common}", fixtures::dir().join("typescript/server.mjs").display()),
        "typescript-v2" => format!("node {} {common}", fixtures::dir().join("typescript/server-v2.mjs").display()),
        other => panic!("no fixture {other}"),
    }
}

/// `mcp-once replay` of `trace` on `sdk`'s fixture: the JSON result, the ledger, the exit code.
fn replay(dir: &Path, trace: &Path, sdk: &str) -> (Value, Vec<Value>, Option<i32>) {
    let port = free_port();
    let ledger = dir.join(format!("{sdk}.jsonl"));
    let out = mcp_once!()
        .arg("replay")
        .arg(trace)
        .args(["--http", &format!("http://127.0.0.1:{port}/mcp"), "--launch", &launch(sdk, port, &ledger)])
        .args(["--args", r#"{"amount": 42, "currency": "{{call}}"}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display()), "--format", "json", "--evidence"])
        .arg(dir.join(format!("evidence-{sdk}")))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    (v, jsonl::read_or_empty(&ledger), out.status.code())
}

/// The ledger lines of logical call `call` (its tag ends in `-c{call}`).
fn lines_of(ledger: &[Value], call: u8) -> usize {
    let tag = format!("-c{call}");
    ledger.iter().filter(|l| l["arguments"]["currency"].as_str().is_some_and(|c| c.ends_with(&tag))).count()
}

/// The termination step's record, which must say what the runner did in place of the server.
fn termination_step(v: &Value) -> &Value {
    v["steps"].as_array().unwrap().iter().find(|s| s["action"] == "SessionTerminated").expect("the step is recorded")
}

fn assert_confirmed_by_the_ledger(v: &Value, ledger: &[Value], code: Option<i32>, sdk: &str) {
    assert_eq!(v["verdict"], "confirmed", "{sdk}: {v:#}");
    assert_eq!(code, Some(1), "{sdk}: confirmed exits 1");
    assert!(v["reason"].as_str().unwrap().contains("call 1 was told success"), "{sdk}: {}", v["reason"]);
    // Judged by what was observed: call 0 ran once, call 1 ran nothing and was told success.
    assert_eq!((lines_of(ledger, 0), lines_of(ledger, 1), ledger.len()), (1, 0, 1), "{sdk}: {ledger:?}");
    let step = termination_step(v);
    assert_eq!(step["status"], "observed", "{sdk}: {step}");
    let note = step["note"].as_str().unwrap();
    for said in [
        "the runner ended the session with the client's DELETE",
        "standing in for the server ending it on its own",
        "a ping under the old session id answered HTTP 404",
        "initialize without a session id",
        "the server process and what it holds in memory run on",
        "request ids start over",
    ] {
        assert!(note.contains(said), "{sdk}: `{said}` not in {note}");
    }
}

#[test]
fn the_seven_step_trace_is_confirmed_on_the_rust_and_typescript_id_tables_over_http() {
    let dir = scratch!("session-replay", "seven-steps");
    let trace = seven_step_trace(&dir);
    for sdk in ["rust", "typescript"] {
        let (v, ledger, code) = replay(&dir, &trace, sdk);
        assert_confirmed_by_the_ledger(&v, &ledger, code, sdk);
        let steps: Vec<&str> = v["steps"].as_array().unwrap().iter().map(|s| s["action"].as_str().unwrap()).collect();
        assert_eq!(steps.len(), 7, "{sdk}: every step realised: {steps:?}");
    }
}

/// A path of the model written by hand, with a request in transit when the session ends: call
/// 1 (id 2) is sent and the session ends before the server reads it (answered 404, never run);
/// the client sees the failure and retries in the new session, where ids start over: id 1,
/// which the id table answers with call 0's result.
fn in_transit_trace(dir: &Path) -> PathBuf {
    use Action as A;
    let config = Config::builder("mcp-2025-11-25")
        .transport(Transport::Http)
        .client(ClientPolicy::RetryOnDisconnect)
        .server(ServerImpl::DedupById)
        .bounds(Bounds { calls: 2, retries: 1, crashes: 0 })
        .session_terminations(1)
        .build();
    let model = McpModel::new(config, Profile::load("mcp-2025-11-25").unwrap()).unwrap();
    let actions = vec![
        A::ClientCall { call: 0 },
        A::ServerReceive { call: 0, attempt: 0, instance: 0 },
        A::ServerCommit { call: 0, attempt: 0 },
        A::ClientCall { call: 1 },
        A::SessionTerminated {},
        A::ClientSeesDisconnect { call: 1, attempt: 0 },
        A::ClientRetry { call: 1, attempt: 1 },
        A::ServerReceive { call: 1, attempt: 1, instance: 0 },
        A::ClientReceive { call: 1, attempt: 1 },
    ];
    let states = walk(&model, &actions).unwrap_or_else(|(step, why)| panic!("step {step}: {why}"));
    let last = states.last().unwrap();
    assert_eq!((last.attempts[1][0].id, last.attempts[1][1].id), (2, 1), "the retry's id starts over");
    let path = Counterexample { states, actions, index_path: String::new() };
    let itf = to_itf(&model, TraceKind::Counterexample(PropertyKind::SuccessImpliesEffect), &path, false);
    let file = dir.join("in-transit.itf.json");
    std::fs::write(&file, serde_json::to_string_pretty(&itf).unwrap()).unwrap();
    file
}

#[test]
fn a_request_in_transit_when_the_session_ends_is_answered_404_and_never_runs() {
    let dir = scratch!("session-replay", "in-transit");
    let trace = in_transit_trace(&dir);
    let (v, ledger, code) = replay(&dir, &trace, "rust");
    assert_confirmed_by_the_ledger(&v, &ledger, code, "rust");
    let note = termination_step(&v)["note"].as_str().unwrap();
    assert!(note.contains("call 1 attempt 0 (id 2), in transit, answered HTTP 404 and not run"), "{note}");
    let seen = &v["steps"][5];
    assert_eq!(seen["action"], "ClientSeesDisconnect(call 1, attempt 0)", "{v:#}");
    assert!(seen["note"].as_str().unwrap().contains("HTTP 404"), "{seen}");
}

#[test]
fn a_server_that_gives_no_session_id_is_inconclusive_with_the_reason() {
    // The TypeScript SDK 2.x fixture serves HTTP statelessly (the SDK's `createMcpHandler`): its
    // initialize answer carries no MCP-Session-Id, so there is no session to end.
    let dir = scratch!("session-replay", "no-session");
    let trace = seven_step_trace(&dir);
    let (v, ledger, code) = replay(&dir, &trace, "typescript-v2");
    assert_eq!(v["verdict"], "inconclusive", "{v:#}");
    assert_eq!(code, Some(2), "inconclusive exits 2");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.starts_with("the server gave no MCP-Session-Id at initialization"), "{reason}");
    assert!(!reason.contains('\n'), "one line: {reason}");
    let failed = v["steps"].as_array().unwrap().iter().find(|s| s["status"] == "failed").expect("a failed step");
    assert_eq!(failed["action"], "SessionTerminated", "{v:#}");
    assert_eq!(ledger.len(), 1, "call 0 ran once, nothing after: {ledger:?}");
}

/// `mcp-once confirm` with `--format json`, its other arguments `args`: the JSON and exit code.
fn confirm(args: &[&str]) -> (Value, Option<i32>) {
    let out = mcp_once!()
        .args(["confirm", "--profile", "mcp-2025-11-25", "--client", "no-retry", "--calls", "2"])
        .args(["--session-terminations", "1", "--format", "json"])
        .args(args)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    (v, out.status.code())
}

#[test]
fn confirm_replays_the_session_cells_on_the_fixtures_that_have_a_session() {
    let dir = scratch!("session-replay", "confirm");
    let fixtures = fixtures::dir().display().to_string();
    let evidence = dir.join("evidence").display().to_string();
    let (v, code) = confirm(&[
        "--transport",
        "http",
        "--server",
        "dedup-by-id",
        "--sdk",
        "rust",
        "--sdk",
        "typescript",
        "--sdk",
        "typescript-v2",
        "--fixtures",
        &fixtures,
        "--evidence",
        &evidence,
    ]);
    assert_eq!(code, Some(1), "not every counterexample confirmed (typescript-v2 has no session): {v:#}");
    let results = v["results"].as_array().unwrap();
    let of = |sdk: &str| {
        results.iter().find(|r| r["sdk"] == sdk && r["property"] == PROPERTY).unwrap_or_else(|| panic!("{sdk}: {v:#}"))
    };
    for sdk in ["rust", "typescript"] {
        let r = of(sdk);
        assert_eq!(r["verdict"], "confirmed", "{r}");
        assert!(r["cell"].as_str().unwrap().contains("session-terminations-1"), "{r}");
    }
    let stateless = of("typescript-v2");
    assert_eq!(stateless["verdict"], "inconclusive", "{stateless}");
    assert!(stateless["reason"].as_str().unwrap().starts_with("the server gave no MCP-Session-Id"), "{stateless}");
}

#[test]
fn confirm_replays_the_session_cells_on_a_given_server() {
    // Before, a server given by --http was refused every cell under --session-terminations.
    let dir = scratch!("session-replay", "given");
    let port = free_port();
    let ledger = dir.join("given.jsonl");
    let launch = format!("{BIN} fixture --transport http --port {port} --ledger {}", ledger.display());
    let evidence = dir.join("evidence").display().to_string();
    let (v, code) = confirm(&[
        "--http",
        &format!("http://127.0.0.1:{port}/mcp"),
        "--launch",
        &launch,
        "--args",
        r#"{"amount": 42, "currency": "{{call}}"}"#,
        "--observe",
        &format!("ledger:{}", ledger.display()),
        "--evidence",
        &evidence,
    ]);
    assert_eq!(code, Some(0), "the plain server fits a behaviour: {v:#}");
    let results = v["results"].as_array().unwrap();
    assert!(!results.is_empty(), "{v:#}");
    assert!(results.iter().all(|r| r["cell"].as_str().unwrap().contains("session-terminations-1")), "{v:#}");
}
