//! A counterexample of a server that breaks a MUST of its profile: `check`
//! names the MUST, marks the steps where it shows, and puts first the shortest trace of a
//! conformant server of the same kind, or says that none reaches the violation; the matrix
//! marks such servers. A server that only does what a SHOULD advises against is named as such,
//! and not marked.

use mcp_once_testkit::{mcp_once, scratch, text};
use serde_json::Value;

/// `check` of the cell `flags` (one property), its stdout, asserting exit code 1.
fn violated(flags: &str, extra: &[&str]) -> String {
    let out = mcp_once!().arg("check").args(flags.split(' ')).args(extra).output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    stdout
}

/// 2026-07-28 over HTTP, a server that ignores cancellation: it ignores the closed stream too.
const PLAIN_HTTP: &str = "--profile mcp-2026-07-28 --transport http --client retry-on-timeout --server plain --crashes 0 --property at-most-once";

#[test]
fn a_server_that_goes_on_with_a_closed_stream_breaks_no_must_and_is_said_to_go_against_a_should() {
    // streamable-http.mdx: the close MUST count as a cancellation; the server SHOULD stop work
    // on it and MUST NOT send anything more for it. Going on and sending nothing breaks no MUST.
    let stdout = violated(PLAIN_HTTP, &[]);
    assert!(
        stdout.contains(
            "this server does what a SHOULD of the profile advises against (http_disconnect_is_cancel): the server goes on with a request whose response stream was closed"
        ),
        "{stdout}"
    );
    assert!(!stdout.contains("breaks a MUST") && !stdout.contains("breaks the MUST"), "{stdout}");
    assert!(!stdout.contains("a conformant server"), "{stdout}");
    let json: Value = serde_json::from_str(&violated(PLAIN_HTTP, &["--format", "json"])).unwrap();
    assert!(json.get("breaks").is_none() && json.get("conformant").is_none(), "{json}");
    assert_eq!(json["advised_against"], serde_json::json!(["http_disconnect_is_cancel"]));
    let md = violated(PLAIN_HTTP, &["--format", "markdown"]);
    assert!(md.contains("**This server does what a SHOULD of the profile advises against**"), "{md}");
    assert!(!md.contains("breaks a MUST"), "{md}");
    // Over stdio the same server is not marked at all.
    let stdio = violated(&PLAIN_HTTP.replace("http", "stdio"), &["--format", "json"]);
    let json: Value = serde_json::from_str(&stdio).unwrap();
    assert!(json.get("breaks").is_none() && json.get("advised_against").is_none(), "{stdio}");
}

#[test]
fn a_server_that_only_goes_against_a_should_gets_no_conformant_section() {
    // SEP-3182, key recorded after the effect, one crash: the ignoring server needs the crash
    // between effect and record (9 steps). It keeps every MUST, so its own trace is the one
    // shown and written, and the issue report files it as it is.
    let dir = scratch!("conformant_cli", "should");
    let flags = "--profile sep-3182 --transport http --client retry-any --key per-call --server key-after-effect --crashes 1 --property at-most-once";
    let stdout = violated(flags, &["--out", dir.path().to_str().unwrap()]);
    assert!(stdout.contains("shortest counterexample: 9 steps, 2 effect(s)"), "{stdout}");
    assert!(!stdout.contains("a conformant server") && !stdout.contains("breaks the MUST"), "{stdout}");
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let explained = mcp_once!().arg("explain").arg(&files[0]).output().unwrap();
    let report = text(&explained.stdout);
    assert_eq!(explained.status.code(), Some(0), "{report}{}", text(&explained.stderr));
    assert!(!report.contains("### A conformant server"), "{report}");
    assert!(report.contains("no step breaks one of its MUSTs"), "{report}");
}

#[test]
fn where_no_conformant_server_reaches_the_violation_the_report_says_so() {
    // Two instances with stores of their own, where SEP-3182 requires one visible to both.
    let flags = "--profile sep-3182 --transport http --client retry-any --key per-call --server key-durable --instances 2 --store per-instance --crashes 0 --property at-most-once";
    let stdout = violated(flags, &[]);
    assert!(stdout.contains("this server breaks a MUST of the profile (idempotency_store)"), "{stdout}");
    assert!(stdout.contains("no conformant server of this kind reaches it (`--store shared` holds)"), "{stdout}");
    assert!(stdout.contains("breaks the MUST of idempotency_store"), "{stdout}");
    let md = violated(flags, &["--format", "markdown"]);
    assert!(md.contains("No conformant server of this kind reaches the `at-most-once` violation"), "{md}");
    let json: Value = serde_json::from_str(&violated(flags, &["--format", "json"])).unwrap();
    assert_eq!(json["breaks"], serde_json::json!(["idempotency_store"]));
    assert_eq!(json["advised_against"], serde_json::json!(["http_disconnect_is_cancel"]));
    assert_eq!(json["conformant"][0]["verdict"], "holds");
    assert!(json["conformant"][0].get("trace").is_none());
}

#[test]
fn the_matrix_marks_no_server_that_only_goes_on_with_a_closed_stream() {
    let shard = ["matrix", "--profile", "mcp-2026-07-28", "--shard", "1/12"];
    let out = mcp_once!().args(shard).args(["--format", "json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = json["cells"].as_array().unwrap();
    let mut advised = 0;
    for c in cells.iter().filter(|c| c["applicable"] == true) {
        let cfg = &c["config"];
        // Over HTTP every server whose preset ignores cancellation goes against the SHOULD,
        // and breaks no MUST; over stdio none is marked, nor is the one that honours it.
        let ignores = cfg["server"] != "honours-cancel" && cfg.get("cancel").is_none();
        let expected = cfg["transport"] == "http" && ignores;
        assert!(c.get("breaks").is_none(), "{cfg}");
        assert_eq!(c.get("advised_against").is_some(), expected, "{cfg}");
        advised += expected as usize;
    }
    assert!(advised > 0, "the shard has cells of both kinds: {cells:?}");
    let table = text(&mcp_once!().args(shard).output().unwrap().stdout);
    assert!(!table.contains('†'), "{table}");
}
