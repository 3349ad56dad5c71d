//! Verdicts from what was observed, on servers that are not the ledger fixtures: `mcp-once
//! replay` as a user runs it against a server that gives none of the fixtures' signals (no delay
//! arguments, no log line naming what its handler did, no key file), its effects counted in the
//! file it writes. A call the observer counts taking effect twice is `confirmed`, whatever step
//! the replay reached and whether or not the runner could see the mechanism.
//!
//! The servers in `servers/` run on the official Python SDK (the fixtures' venv,
//! `conformance/fixtures/install.sh`), each written as a third party would: a payment tool that
//! records its idempotency key after an awaited effect, a SQL tool with keys, a payment tool that
//! elicits after capturing, and one that charges a repeated order later, in the background.

use mcp_once_testkit::process::assert_groups_gone;
use mcp_once_testkit::{fixtures, jsonl, mcp_once, scratch, text, trace_in};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn server_script(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers").join(name);
    let p = p.canonicalize().unwrap().display().to_string();
    assert!(!p.contains(char::is_whitespace), "the runner splits commands on spaces; this path has one: {p}");
    p
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

/// SEP-3182 over stdio, a client that retries on a timeout with one key per call, a server that
/// records its key after the effect and whose handler a cancellation interrupts: the model's
/// counterexample has the server read the cancellation between the effect and the record. On a
/// server that logs nothing about it, the runner cannot see the interruption; the retry's second
/// payment under the same key is what it sees, and that confirms the violation (the replay was
/// inconclusive before, waiting for a fixture's log line).
#[test]
fn an_interruption_no_log_line_shows_is_confirmed_by_the_effects_counted() {
    let dir = scratch!("foreign-servers", "interrupt");
    let t = trace(
        &dir,
        &[
            "--profile",
            "sep-3182",
            "--transport",
            "stdio",
            "--client",
            "retry-on-timeout",
            "--server",
            "key-after-effect",
            "--key",
            "per-call",
            "--cancel",
            "interrupts",
            "--retries",
            "1",
            "--crashes",
            "0",
        ],
    );
    let trace_text = std::fs::read_to_string(&t).unwrap();
    assert!(trace_text.contains("ServerReceiveCancel"), "the trace has the server read the cancellation");
    let payments = dir.join("payments.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args([
            "--stdio",
            &format!(
                "{} {} {} 2",
                fixtures::python("python"),
                server_script("pay_after_effect.py"),
                payments.display()
            ),
            "--tool",
            "pay",
            "--args",
            r#"{"order":"{{call}}"}"#,
            "--key-at",
            "arg:idempotency_key",
            "--observe",
            &format!("ledger:{}", payments.display()),
            "--step-timeout-ms",
            "4000",
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let lines = jsonl::read(&payments);
    assert_eq!(lines.len(), 2, "the server paid twice: {lines:?}");
    assert_eq!(lines[0]["idempotency_key"], lines[1]["idempotency_key"], "under one key: {lines:?}");
    assert_eq!(v["verdict"], "confirmed", "two payments under one key are a confirmed violation: {v:#}");
    assert_eq!(out.status.code(), Some(1), "confirmed exits 1");
    let steps = v["steps"].as_array().unwrap();
    let cancel = steps.iter().find(|s| s["action"].as_str().unwrap().starts_with("ServerReceiveCancel")).unwrap();
    assert_eq!(cancel["status"], "unobserved", "the runner saw no sign of the interruption itself: {cancel}");
    assert!(cancel["note"].as_str().unwrap().contains("no sign"), "{cancel}");
    assert_groups_gone(&jsonl::evidence(&evidence), "replay");
}

/// The key-conflict check on a SQL server whose statements any change can break: the check
/// changes `sql` to another string the schema allows, and SQLite refuses it under a fresh key
/// too (the control call), so a refusal under the reused key would prove nothing. The check is
/// untestable with that reason, never a SUCCESS (it was one when any refusal counted as a
/// conflict rejected).
#[test]
fn a_key_conflict_refused_for_its_arguments_alone_is_no_success() {
    let dir = scratch!("foreign-servers", "conflict");
    let db = dir.join("payments.db");
    let observe = Path::new(env!("CARGO_MANIFEST_DIR")).join("../census/observe.py").canonicalize().unwrap();
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("probe")
        .args([
            "--stdio",
            &format!("{} {} {}", fixtures::python("python"), server_script("keyed_sql.py"), db.display()),
            "--tool",
            "execute",
            "--args",
            r#"{"sql":"INSERT INTO payments VALUES ('{{call}}')"}"#,
            "--key-at",
            "arg:idempotency_key",
            "--observe",
            &format!("cmd:python3 {} sqlite {} payments", observe.display(), db.display()),
            "--checks",
            "sep-3182-completed-key-replay,sep-3182-key-conflict",
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let check = |id: &str| v["checks"].as_array().unwrap().iter().find(|c| c["id"] == id).cloned().unwrap();
    assert_eq!(check("sep-3182-completed-key-replay")["status"], "SUCCESS", "the server keeps its keys: {v:#}");
    let conflict = check("sep-3182-key-conflict");
    assert_eq!(conflict["details"]["untestable"], true, "{conflict:#}");
    let msg = conflict["errorMessage"].as_str().unwrap();
    assert!(msg.contains("under a fresh key the server refused them") && msg.contains("SQL error"), "{msg}");
    assert_eq!(out.status.code(), Some(2), "an untestable check exits 2");
    assert_groups_gone(&jsonl::evidence_under(&evidence), "conflict");
}

/// A multi round-trip tool on the official Python SDK whose input round is a form elicitation
/// (`servers/elicit_after_charge.py`: the payment is captured in a resolver, which the SDK re-runs
/// on the continuation). The model's `input-after-effect` counterexample under 2026-07-28 is
/// confirmed on it: the runner's client declares the capabilities an input round needs (the SDK
/// refuses a client without form elicitation with -32021), answers the elicitation and sends the
/// continuation, and the payment is captured twice for one logical call.
#[test]
fn an_elicitation_after_the_effect_is_answered_and_the_rerun_confirmed() {
    let dir = scratch!("foreign-servers", "elicitation");
    let t = trace(
        &dir,
        &[
            "--profile",
            "mcp-2026-07-28",
            "--transport",
            "stdio",
            "--client",
            "no-retry",
            "--server",
            "plain",
            "--handler",
            "input-after-effect",
            "--retries",
            "1",
            "--crashes",
            "0",
        ],
    );
    let payments = dir.join("payments.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args([
            "--stdio",
            &format!(
                "{} {} {}",
                fixtures::python("python"),
                server_script("elicit_after_charge.py"),
                payments.display()
            ),
            "--tool",
            "pay",
            "--args",
            r#"{"order":"{{call}}"}"#,
            "--observe",
            &format!("ledger:{}", payments.display()),
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    assert_eq!(v["verdict"], "confirmed", "{v:#}");
    let lines = jsonl::read(&payments);
    assert_eq!(lines.len(), 2, "captured twice: {lines:?}");
    assert_eq!(lines[0]["order"], lines[1]["order"], "for one logical call: {lines:?}");
    let records = jsonl::evidence(&evidence);
    let calls: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "frame" && r["dir"] == "out" && r["frame"]["method"] == "tools/call")
        .collect();
    assert_eq!(calls.len(), 2, "the first request and its continuation");
    let caps = &calls[0]["frame"]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"];
    assert!(caps["elicitation"]["form"].is_object(), "the client declares form elicitation: {caps}");
    let answers = &calls[1]["frame"]["params"]["inputResponses"];
    let answer = answers.as_object().and_then(|m| m.values().next()).unwrap_or_else(|| panic!("{:#}", calls[1]));
    assert_eq!(answer["action"], "accept", "the elicitation is answered: {answer}");
    assert!(calls[1]["frame"]["params"]["requestState"].is_string(), "its requestState echoed: {:#}", calls[1]);
    assert_groups_gone(&records, "replay");

    // The probe finds that the tool asks for input and runs its input-round check: a FAILURE,
    // the payment captured again by the continuation.
    let payments = dir.join("probed.jsonl");
    let evidence = dir.join("probe-evidence");
    let out = mcp_once!()
        .arg("probe")
        .args([
            "--stdio",
            &format!(
                "{} {} {}",
                fixtures::python("python"),
                server_script("elicit_after_charge.py"),
                payments.display()
            ),
            "--revision",
            "2026-07-28",
            "--tool",
            "pay",
            "--args",
            r#"{"order":"{{call}}"}"#,
            "--observe",
            &format!("ledger:{}", payments.display()),
            "--checks",
            "mcp-once-input-round-rerun",
        ])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let checks = v["checks"].as_array().unwrap();
    assert!(checks[0]["details"]["findings"].to_string().contains("the tool asks for input"), "{:#}", checks[0]);
    let input = checks.iter().find(|c| c["id"] == "mcp-once-input-round-rerun").expect("the input-round check");
    assert_eq!(input["status"], "FAILURE", "{input:#}");
    assert_eq!(input["details"]["untestable"], false, "{input:#}");
    assert!(input["errorMessage"].as_str().unwrap().contains("took effect 2 times"), "{input:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_groups_gone(&jsonl::evidence_under(&evidence), "probe");
}

/// A duplicate that shows only after the answer: `servers/queued_retry.py` answers a repeated
/// order "queued" at once and charges it again later, in a background worker that a graceful
/// shutdown drains. At the trace's violating step the retry was answered and the observer showed
/// one charge, so the steps alone say not-reproduced (and the probe's check would be a SUCCESS);
/// the observer counts two charges for the call once the server stopped, so the replay is
/// confirmed and the check a FAILURE, the steps' verdict kept in the reason.
#[test]
fn a_duplicate_charged_after_the_answer_is_confirmed_and_fails_the_check() {
    let dir = scratch!("foreign-servers", "queued");
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
            "--crashes",
            "0",
        ],
    );
    let server = |payments: &Path| {
        format!("{} {} {}", fixtures::python("python"), server_script("queued_retry.py"), payments.display())
    };
    let payments = dir.join("payments.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args(["--stdio", &server(&payments), "--args", r#"{"order":"{{call}}"}"#])
        .args(["--observe", &format!("ledger:{}", payments.display())])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let lines = jsonl::read(&payments);
    assert_eq!(lines.len(), 2, "charged twice: {lines:?}");
    assert_eq!(lines[0]["order"], lines[1]["order"], "one logical call: {lines:?}");
    assert_eq!(v["verdict"], "confirmed", "{v:#}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.contains("after the server stopped") && reason.contains("alone gave not-reproduced"), "{reason}");
    assert_eq!(v["settled_effects"], 2, "{v:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_groups_gone(&jsonl::evidence(&evidence), "replay");

    // The probe's check on the same server: a FAILURE, not the SUCCESS its steps alone give.
    let payments = dir.join("probed.jsonl");
    let evidence = dir.join("probe-evidence");
    let out = mcp_once!()
        .arg("probe")
        .args(["--stdio", &server(&payments), "--args", r#"{"order":"{{call}}"}"#])
        .args(["--observe", &format!("ledger:{}", payments.display())])
        .args(["--checks", "mcp-once-retry-after-timeout"])
        .arg("--evidence")
        .arg(&evidence)
        .args(["--format", "json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let check = v["checks"].as_array().unwrap().iter().find(|c| c["id"] == "mcp-once-retry-after-timeout").unwrap();
    assert_eq!(check["status"], "FAILURE", "{check:#}");
    assert_eq!(check["details"]["untestable"], false, "{check:#}");
    assert_eq!(out.status.code(), Some(1));
    assert_groups_gone(&jsonl::evidence_under(&evidence), "probe");
}
