//! `mcp-once probe-client` on real clients: the official Python SDK client
//! (`conformance/fixtures/clients/python_sdk.py`, `mcp` 2.3.0), plain and with a
//! retry-on-timeout wrapper, over stdio and Streamable HTTP, against `mcp-once serve`; and the
//! three clients that cannot be probed (one that does not start, one that never connects, one
//! that makes no call), each a one-line error naming the client, exit 2.
//!
//! Kept short: a 1 s client timeout (the script's default), a 3 s hold, and only the scenarios
//! each assertion needs.

use mcp_once_testkit::{fixtures, mcp_once, scratch, text, Scratch};
use serde_json::Value;
use std::time::{Duration, Instant};

/// The longest the server holds an answer the client is waiting for.
const HOLD_MS: &str = "3000";

fn client(flags: &str) -> String {
    let script = fixtures::dir().join("clients/python_sdk.py");
    format!("{} {} {flags}", fixtures::python("python"), script.display())
}

/// Run probe-client with JSON output; the document and the exit code.
fn probe(dir: &Scratch, client: &str, transport: &str, scenarios: &[&str]) -> (Value, i32) {
    let mut cmd = mcp_once!();
    cmd.args(["probe-client", "--client", client, "--transport", transport, "--hold-ms", HOLD_MS, "--format", "json"]);
    cmd.args(["--bound", "30", "--records"]).arg(dir.path());
    for s in scenarios {
        cmd.args(["--scenario", s]);
    }
    let out = cmd.timeout(Duration::from_secs(120)).output().unwrap();
    let stdout = text(&out.stdout);
    let doc = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {}", text(&out.stderr)));
    (doc, out.status.code().unwrap_or(-1))
}

/// The revision the client reported it negotiated in `scenario` (its JSON line on stdout, kept
/// by `--records`).
fn revision(dir: &Scratch, scenario: &str) -> Value {
    let out = std::fs::read_to_string(dir.join(format!("{scenario}.client.out"))).unwrap();
    serde_json::from_str::<Value>(out.trim()).unwrap()["protocol_version"].clone()
}

fn scenario<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["scenarios"].as_array().unwrap().iter().find(|s| s["scenario"] == name).unwrap()
}

/// What a user checks of a client that retries once on its own timeout, with no key.
fn assert_retry_on_timeout(doc: &Value, code: i32) {
    let c = &doc["client"];
    assert_eq!(c["policy"], "retry-on-timeout", "{doc:#}");
    assert_eq!(c["key"], "none");
    assert_eq!(c["attempts"], 2, "one timeout retry: two attempts");
    assert_eq!(c["cancels_on_timeout"], true, "the SDK cancels on its own timeout");
    assert_eq!(c["retry_id"], "new", "a retry is a new request");
    let timeout = scenario(doc, "timeout");
    assert_eq!((timeout["attempts"].as_u64(), timeout["effects"].as_u64()), (Some(2), Some(2)));
    let check = doc["checks"].as_array().unwrap().iter().find(|c| c["id"] == "mcp-once-client-timeout").unwrap();
    assert_eq!(check["status"], "FAILURE", "the tool ran twice for one call");
    assert_eq!(code, 1);
    let summary = doc["summary"].as_str().unwrap();
    assert!(summary.starts_with("your client is `retry-on-timeout`, key `none`: under "), "{summary}");
    assert!(summary.contains("a plain server can run one call twice ("), "{summary}");
    let violated = doc["model"]["verdicts"].as_array().unwrap().iter().filter(|v| v["verdict"] == "violated");
    assert!(violated.clone().all(|v| v["steps"].as_u64().is_some_and(|n| n > 0)));
    assert!(violated.count() >= 4, "every profile's plain server runs it twice: {doc:#}");
}

/// What a user checks of a client that never retries.
fn assert_no_retry(doc: &Value, code: i32) {
    let c = &doc["client"];
    assert_eq!(c["policy"], "no-retry", "{doc:#}");
    assert_eq!(c["key"], "none");
    assert_eq!(c["attempts"], 1);
    assert_eq!(c["retry_id"], Value::Null, "no retry, so nothing to say of its id");
    assert_eq!(scenario(doc, "timeout")["effects"], 1);
    assert_eq!(code, 0, "every scenario ran the tool once");
    let verdicts = doc["model"]["verdicts"].as_array().unwrap();
    assert!(verdicts.iter().any(|v| v["verdict"] == "holds"), "{doc:#}");
}

#[test]
fn a_retry_on_timeout_wrapper_over_stdio_is_retry_on_timeout() {
    let dir = scratch!("probe_client", "retry-stdio");
    let (doc, code) = probe(&dir, &client("--retry-on-timeout"), "stdio", &["timeout", "disconnect", "error"]);
    assert_retry_on_timeout(&doc, code);
    assert_eq!(doc["client"]["unobserved"], serde_json::json!([]), "timeout, disconnect and error were all run");
    assert_eq!(doc["client"]["new_connection"], false, "it retried on the same server process");
    let disconnect = scenario(&doc, "disconnect");
    assert_eq!(disconnect["attempts"], 1, "no retry after the server process exited");
    assert_eq!(scenario(&doc, "error")["attempts"], 1, "no retry after a JSON-RPC error");
    assert!(scenario(&doc, "timeout")["cancels"].as_u64().unwrap() >= 1, "notifications/cancelled over stdio");
}

#[test]
fn a_retry_on_timeout_wrapper_over_http_is_retry_on_timeout() {
    let dir = scratch!("probe_client", "retry-http");
    let (doc, code) = probe(&dir, &client("--retry-on-timeout"), "http", &["timeout"]);
    assert_retry_on_timeout(&doc, code);
    assert_eq!(doc["transport"], "http");
    assert_eq!(revision(&dir, "timeout"), "2026-07-28", "server/discover first");
}

#[test]
fn a_plain_client_over_stdio_is_no_retry() {
    let dir = scratch!("probe_client", "plain-stdio");
    // --legacy: the initialize handshake, so 2025-11-25 is spoken too.
    let (doc, code) = probe(&dir, &client("--legacy"), "stdio", &["timeout"]);
    assert_no_retry(&doc, code);
    assert_eq!(revision(&dir, "timeout"), "2025-11-25");
}

#[test]
fn a_plain_client_over_http_is_no_retry() {
    let dir = scratch!("probe_client", "plain-http");
    let (doc, code) = probe(&dir, &client(""), "http", &["timeout"]);
    assert_no_retry(&doc, code);
}

/// A client that sends a key where no profile's server reads it (a tool argument, as a user of
/// an SDK without `params.idempotencyKey` would): the key is named with where it travels, every
/// verdict is checked with key `none` and says why, SEP-3182's key-durable server does not
/// "hold" for it, and the summary's connection fact agrees with the sessions the table shows.
#[test]
fn a_key_in_the_arguments_counts_under_no_profile() {
    let dir = scratch!("probe_client", "key-in-arguments");
    let (doc, code) = probe(&dir, &client("--retry-on-timeout --key-in-arguments"), "http", &["timeout"]);
    let c = &doc["client"];
    assert_eq!(
        (c["key"].as_str(), c["key_at"].as_str()),
        (Some("per-call"), Some("arguments.idempotency_key")),
        "{doc:#}"
    );
    let summary = doc["summary"].as_str().unwrap();
    assert!(summary.contains("key `per-call` in arguments.idempotency_key"), "{summary}");
    let verdicts = doc["model"]["verdicts"].as_array().unwrap();
    assert!(verdicts.iter().any(|v| v["profile"] == "sep-3182"), "{doc:#}");
    for v in verdicts {
        assert_eq!(v["key"], "none", "{v}");
        let note = v["key_note"].as_str().unwrap_or_default();
        assert!(note.contains("defines no idempotency key") || note.contains("would not see it"), "{v}");
        if v["profile"] == "sep-3182" {
            assert!(note.contains("params.idempotencyKey"), "{v}");
            assert_ne!(v["verdict"], "holds", "a key the server never sees fixes nothing: {v}");
        }
    }
    assert!(!summary.contains("holds"), "{summary}");
    assert_eq!(code, 1, "one call ran twice: {doc:#}");
    let timeout = scenario(&doc, "timeout");
    let sessions: Vec<&str> = timeout["connections"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let session_of = |c: &str| c.split_once(" session ").map(|s| s.1.to_string());
    let changed = sessions.windows(2).any(|w| session_of(w[0]) != session_of(w[1]));
    assert!(!changed || c["new_connection"] == true, "the table shows a new session, the summary none: {doc:#}");
}

/// A client that cannot be probed: exit 2, one line on stderr naming the client and why.
fn assert_bad_client(client: &str, extra: &[&str], why: &str, within: Duration) {
    let started = Instant::now();
    let out = mcp_once!()
        .args(["probe-client", "--client", client, "--scenario", "ok"])
        .args(extra)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains(&format!("client `{client}`")) && stderr.contains(why), "{stderr}");
    assert!(out.stdout.is_empty(), "no report for a client that was not probed");
    assert!(started.elapsed() < within, "took {:?}", started.elapsed());
}

#[test]
fn a_client_that_does_not_start_never_connects_or_makes_no_call_is_exit_2() {
    assert_bad_client("/nonexistent/mcp-client --flag", &[], "did not start", Duration::from_secs(10));
    // It would sleep 30 s: the bound ends it (and its group) after one second.
    let sleeper = "sh -c 'sleep 30'";
    assert_bad_client(sleeper, &["--connect-within", "1"], "never connected", Duration::from_secs(10));
    assert_bad_client(&client("--no-call"), &["--transport", "http"], "made no call", Duration::from_secs(30));
}

/// The official TypeScript SDK client (`@modelcontextprotocol/sdk` 1.32.2,
/// `fixtures/typescript/probe-client.mjs`) with a retry-on-timeout wrapper, over HTTP: the SDK is
/// not told of a dropped response stream, its own timeout fires, it cancels and the wrapper
/// retries; that is a retry on timeout, as the stdio run of the Python client is.
#[test]
fn the_typescript_sdk_with_a_retry_wrapper_over_http_is_retry_on_timeout() {
    let dir = scratch!("probe_client", "ts-retry-http");
    let script = fixtures::dir().join("typescript/probe-client.mjs");
    let client = format!("node {} --timeout-ms 1000 --retries 1 --retry-on timeout", script.display());
    let (doc, code) = probe(&dir, &client, "http", &["timeout", "disconnect", "error"]);
    assert_retry_on_timeout(&doc, code);
    assert_eq!(scenario(&doc, "disconnect")["attempts"], 2, "the drop surfaced as its timeout: {doc:#}");
    assert_eq!(scenario(&doc, "error")["attempts"], 1, "no retry after an error reply");
}

/// LangGraph 1.2.24 with its default `RetryPolicy` around a node that calls the tool through
/// langchain-mcp-adapters 0.3.2 (`fixtures/langgraph/probe_client.py`), over stdio: the node is
/// re-run, the call with it, after a timeout, a disconnect and an error reply alike, each time
/// on a new session (a new server process, so the request id starts again).
#[test]
fn langgraph_with_its_default_retry_policy_is_retry_any() {
    let dir = scratch!("probe_client", "langgraph-stdio");
    let script = fixtures::dir().join("langgraph/probe_client.py");
    // A 2 s client timeout, well away from RetryPolicy's backoff (0.5 s doubling, with jitter,
    // plus a new server process): the probe reads a retry that comes one client timeout after
    // a drop as a timeout retry, so the two must differ to be told apart.
    let client = format!("{} {} --timeout-s 2", fixtures::python("langgraph"), script.display());
    let (doc, code) = probe(&dir, &client, "stdio", &["timeout", "disconnect", "error"]);
    let c = &doc["client"];
    assert_eq!((c["policy"].as_str(), c["key"].as_str()), (Some("retry-any"), Some("none")), "{doc:#}");
    assert_eq!(c["attempts"], 3, "RetryPolicy's default: 3 attempts");
    assert_eq!(c["new_connection"], true, "each node run opens a new session");
    assert_eq!(c["retry_id"], "same", "a new server process numbers its requests from 1 again");
    for name in ["timeout", "disconnect", "error"] {
        assert_eq!(scenario(&doc, name)["effects"], 3, "{name}: the tool ran once per node run");
    }
    assert_eq!(code, 1);
}

/// `explain --for client --client-record DIR` after `probe-client --records DIR` on the
/// TypeScript SDK client: the report's title and client line name that client by its
/// `clientInfo` (name, the installed SDK's version) and the command it was run as.
#[test]
fn explain_for_client_names_the_client_probe_client_measured() {
    let dir = scratch!("probe_client", "ts-named");
    let script = fixtures::dir().join("typescript/probe-client.mjs");
    let client = format!("node {} --timeout-ms 1000 --retries 1 --retry-on timeout", script.display());
    let (doc, code) = probe(&dir, &client, "http", &["timeout"]);
    assert_eq!(code, 1, "a retry on timeout runs the tool twice: {doc:#}");
    let package: Value = serde_json::from_str(
        &std::fs::read_to_string(
            fixtures::dir().join("typescript/node_modules/@modelcontextprotocol/sdk/package.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let version = package["version"].as_str().unwrap();
    let traces = dir.join("traces");
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "http", "--client", "retry-on-timeout"])
        .args(["--retries", "1", "--crashes", "0", "--property", "at-most-once", "--out"])
        .arg(&traces)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let trace = mcp_once_testkit::trace_in(&traces, "at-most-once");
    let out = mcp_once!()
        .arg("explain")
        .arg(&trace)
        .args(["--for", "client", "--client-record"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let report = text(&out.stdout);
    let title = report.lines().next().unwrap();
    assert!(title.starts_with(&format!("## mcp-once-probe-typescript {version} ")), "the client by name: {title}");
    let line = format!(
        "- Client measured: `mcp-once-probe-typescript` {version}, run as `node <fixtures>/typescript/probe-client.mjs \
         --timeout-ms 1000 --retries 1 --retry-on timeout` by `mcp-once probe-client` over http (checked as `--client \
         retry-on-timeout --key none`)"
    );
    assert!(report.contains(&line), "{report}");
}
