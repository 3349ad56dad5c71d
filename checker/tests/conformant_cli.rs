//! A counterexample of a server that breaks a MUST of its profile: `check`
//! names the MUST, marks the steps where it shows, and puts first the shortest trace of a
//! conformant server of the same kind, or says that none reaches the violation; the matrix
//! marks such servers.

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
fn a_server_that_ignores_a_closed_stream_is_named_and_a_conformant_server_takes_the_same_steps() {
    let stdout = violated(PLAIN_HTTP, &[]);
    assert!(
        stdout.contains(
            "this server breaks a MUST of the profile (http_disconnect_is_cancel): the server ignores the close"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "a conformant server (--cancel before-effect) reaches the same violation in 8 steps, 2 effect(s) for one call, by the same steps as this cell's own server:"
        ),
        "{stdout}"
    );
    // One trace, the conformant server's: its steps say that the cancellation is on its way,
    // and nothing in it breaks a MUST.
    assert_eq!(stdout.matches("ClientCall(call 0)").count(), 1, "{stdout}");
    assert!(stdout.contains("starts the tool; its cancellation has not reached the server yet"), "{stdout}");
    assert!(!stdout.contains("breaks the MUST of"), "{stdout}");
    // The JSON says the same: the knob broken, and what the conformant server reaches.
    let json: Value = serde_json::from_str(&violated(PLAIN_HTTP, &["--format", "json"])).unwrap();
    assert_eq!(json["breaks"], serde_json::json!(["http_disconnect_is_cancel"]));
    let answer = &json["conformant"][0];
    assert_eq!(answer["property"], "at-most-once");
    assert_eq!(answer["verdict"], "violated");
    assert_eq!(answer["config"]["cancel"], "before-effect");
    assert_eq!(answer["trace"]["steps"], 8);
    // Over stdio, where a server only SHOULD stop, the same server breaks nothing.
    let stdio = violated(&PLAIN_HTTP.replace("http", "stdio"), &["--format", "json"]);
    let json: Value = serde_json::from_str(&stdio).unwrap();
    assert!(json.get("breaks").is_none() && json.get("conformant").is_none(), "{stdio}");
}

#[test]
fn where_a_conformant_server_takes_other_steps_its_trace_comes_first_and_is_written() {
    // SEP-3182, key recorded after the effect, one crash: the ignoring server needs the crash
    // between effect and record (9 steps); a server that a closed stream interrupts loses the
    // record with no crash (8 steps).
    let dir = scratch!("conformant_cli", "first");
    let flags = "--profile sep-3182 --transport http --client retry-any --key per-call --server key-after-effect --crashes 1 --property at-most-once";
    let stdout = violated(flags, &["--out", dir.path().to_str().unwrap()]);
    assert!(stdout.contains("shortest counterexample: 9 steps, 2 effect(s)"), "{stdout}");
    let first = stdout
        .find("a conformant server (--cancel interrupts) reaches the same violation in 8 steps, 2 effect(s) for one call:")
        .unwrap_or_else(|| panic!("{stdout}"));
    let own = stdout
        .find("the trace of this cell's own server, which breaks the MUST:")
        .unwrap_or_else(|| panic!("{stdout}"));
    assert!(first < own, "{stdout}");
    assert!(stdout[first..own].contains("interrupts the handler between its effect and its idempotency record"));
    assert!(!stdout[first..own].contains("breaks the MUST of"), "{stdout}");
    // Its stream breaks before the server reads the request: no step of it is marked.
    assert!(stdout[own..].contains("ServerCrash") && !stdout[own..].contains("breaks the MUST of"), "{stdout}");
    // The traces are written (the cell's and each conformant server's that violates it, the
    // one before the effect too, by the crash window), under names that tell them apart, and
    // each checks again.
    let mut files: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files.len(), 3, "{files:?}");
    assert!(files.iter().any(|f| f.contains("key-after-effect-cancel-interrupts__")), "{files:?}");
    assert!(stdout.contains("key-after-effect-cancel-interrupts__c1r1k1__at-most-once.itf.json"), "{stdout}");
    for f in &files {
        let again = mcp_once!().arg("check").arg("--trace").arg(dir.path().join(f)).output().unwrap();
        assert_eq!(again.status.code(), Some(0), "{f}: {}{}", text(&again.stdout), text(&again.stderr));
    }
    // The issue report of the ignoring server's trace shows the conformant run to file.
    let own_trace = files.iter().find(|f| !f.contains("-cancel-")).unwrap();
    let explained = mcp_once!().arg("explain").arg(dir.path().join(own_trace)).output().unwrap();
    let report = text(&explained.stdout);
    assert_eq!(explained.status.code(), Some(0), "{report}{}", text(&explained.stderr));
    assert!(report.contains("### A conformant server"), "{report}");
    assert!(report.contains("(`--cancel interrupts`) reaches the same violation in 8 steps"), "{report}");
    assert!(report.contains("This server breaks a MUST of the profile (`http_disconnect_is_cancel`)"), "{report}");
}

#[test]
fn where_no_conformant_server_reaches_the_violation_the_report_says_so() {
    // Two instances with stores of their own, where SEP-3182 requires one visible to both.
    let flags = "--profile sep-3182 --transport http --client retry-any --key per-call --server key-durable --instances 2 --store per-instance --crashes 0 --property at-most-once";
    let stdout = violated(flags, &[]);
    assert!(stdout.contains("this server breaks a MUST of the profile (idempotency_store)"), "{stdout}");
    assert!(
        stdout.contains("no conformant server of this kind reaches it (`--cancel before-effect --store shared` and `--cancel interrupts --store shared` hold)"),
        "{stdout}"
    );
    assert!(stdout.contains("breaks the MUST of idempotency_store"), "{stdout}");
    let md = violated(flags, &["--format", "markdown"]);
    assert!(md.contains("No conformant server of this kind reaches the `at-most-once` violation"), "{md}");
    let json: Value = serde_json::from_str(&violated(flags, &["--format", "json"])).unwrap();
    assert_eq!(json["breaks"], serde_json::json!(["http_disconnect_is_cancel", "idempotency_store"]));
    assert_eq!(json["conformant"][0]["verdict"], "holds");
    assert!(json["conformant"][0].get("trace").is_none());
}

#[test]
fn the_matrix_marks_the_servers_that_break_a_must() {
    let shard = ["matrix", "--profile", "mcp-2026-07-28", "--shard", "1/12"];
    let out = mcp_once!().args(shard).args(["--format", "json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = json["cells"].as_array().unwrap();
    let mut marked = 0;
    for c in cells.iter().filter(|c| c["applicable"] == true) {
        let cfg = &c["config"];
        // Over HTTP every server whose preset ignores cancellation breaks the MUST; over stdio
        // none does, nor does the one that honours it.
        let ignores = cfg["server"] != "honours-cancel" && cfg.get("cancel").is_none();
        let expected = cfg["transport"] == "http" && ignores;
        assert_eq!(c.get("breaks").is_some(), expected, "{cfg}");
        marked += expected as usize;
    }
    assert!(marked > 0, "the shard has cells of both kinds: {cells:?}");
    let table = text(&mcp_once!().args(shard).output().unwrap().stdout);
    assert_eq!(table.lines().filter(|l| l.contains(" †")).count(), marked, "{table}");
    assert!(table.contains(&format!("†: the server of {marked} cell(s) breaks a MUST of its profile")), "{table}");
}
