//! `mcp-once probe` as a server author's CI runs it: `--expected-failures FILE`, one file in the
//! MCP conformance suite's shape for both transports (entries for checks the run does not make
//! are reported as not run here and change nothing); and on a server with idempotency keys, what
//! its keyless failures ask of a client rather than of the server.

use mcp_once_testkit::{mcp_once, scratch, text, Scratch};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn temp(name: &str) -> Scratch {
    scratch!("probe-baseline", name)
}

/// The Rust fixture (no key store) probed over stdio against `baseline`, with `more` flags.
fn probe(dir: &Scratch, baseline: &str, more: &[&str]) -> (Option<i32>, String) {
    let ledger = dir.join("ledger.jsonl");
    let _ = std::fs::remove_file(&ledger);
    let file = dir.join("expected-failures.yml");
    std::fs::write(&file, baseline).unwrap();
    let out = mcp_once!()
        .args(["probe", "--stdio", &format!("{BIN} fixture --sdk rust --ledger {}", ledger.display())])
        .args(["--tool", "charge", "--args", r#"{"amount":1}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .arg("--expected-failures")
        .arg(&file)
        .args(more)
        .output()
        .unwrap();
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

#[test]
fn one_expected_failures_file_serves_stdio_and_http() {
    let dir = temp("both");
    // The README's baseline, with the HTTP-only stream-break check added for the HTTP run.
    let baseline = "server:\n  - mcp-once-retry-after-timeout\n  - mcp-once-retry-after-restart\n  - mcp-once-framework-rerun\n  - mcp-once-retry-after-stream-break\n";
    let (code, out) = probe(&dir, baseline, &["--format", "json"]);
    assert_eq!(code, Some(0), "only expected failures: {out}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["baseline"]["notRun"], serde_json::json!(["mcp-once-retry-after-stream-break"]), "{v:#}");
    assert_eq!(v["baseline"]["unexpected"], serde_json::json!([]), "{v:#}");
    assert_eq!(v["baseline"]["expected"].as_array().unwrap().len(), 3, "{v:#}");

    let (code, out) = probe(&dir, baseline, &["--checks", "mcp-once-retry-after-timeout"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("not run here"), "{out}");
    assert!(out.contains("mcp-once-retry-after-stream-break") && out.contains("mcp-once-framework-rerun"), "{out}");

    // An id that is no check of the probe at all is still an error, naming it.
    let (code, out) = probe(&dir, "server:\n  - mcp-once-no-such-check\n", &[]);
    assert_eq!(code, Some(2), "{out}");
    assert!(out.contains("`mcp-once-no-such-check` is not one of this probe's checks"), "{out}");
}

/// The Rust fixture as `variant`, probed over stdio with keys in `params`: the JSON checks.
fn probe_keyed(dir: &Scratch, variant: &str) -> Vec<Value> {
    let ledger = dir.join(format!("{variant}.jsonl"));
    let server = format!("{BIN} fixture --sdk rust --variant {variant} --ledger {}", ledger.display());
    let out = mcp_once!()
        .args(["probe", "--stdio", &server, "--tool", "charge", "--args", r#"{"amount":1}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display()), "--key-at", "params", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "keyless checks fail: {}", text(&out.stderr));
    let v: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    v["checks"].as_array().unwrap().clone()
}

#[test]
fn a_server_that_passes_the_key_checks_is_told_its_keyless_failures_need_a_client_key() {
    let dir = temp("keyed");
    let keyless = |c: &&Value| c["id"].as_str().unwrap().starts_with("mcp-once-") && c["id"] != "mcp-once-preflight";
    let durable = probe_keyed(&dir, "key-durable");
    assert!(durable
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("sep-3182-"))
        .all(|c| c["status"] == "SUCCESS"));
    let failed: Vec<&Value> = durable.iter().filter(keyless).filter(|c| c["status"] == "FAILURE").collect();
    assert!(!failed.is_empty(), "a keyless retry runs twice on any server");
    for c in failed {
        let message = c["errorMessage"].as_str().unwrap();
        assert!(message.contains("no server change can pass this check"), "{message}");
        assert!(message.contains("a client must send one idempotency key per logical call"), "{message}");
        assert_eq!(c["details"]["needs_client_key"], true);
        // Each replay says whose counterexample it is, not the server under test's name.
        assert!(c["details"]["replays"].as_array().unwrap().iter().all(|r| r["counterexample_of"].is_string()), "{c}");
    }
    // A store a restart loses fails a key check: its keyless failures are its own to weigh.
    let volatile = probe_keyed(&dir, "key-volatile");
    assert!(volatile.iter().any(|c| c["id"].as_str().unwrap().starts_with("sep-3182-") && c["status"] == "FAILURE"));
    for c in volatile.iter().filter(keyless) {
        assert!(c["details"].get("needs_client_key").is_none(), "{c}");
    }
}
