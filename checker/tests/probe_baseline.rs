//! `mcp-once probe --expected-failures FILE` as a server author's CI runs it: one file, in the
//! MCP conformance suite's shape, serves both transports; entries for checks the run does not
//! make are reported as not run here and change nothing.

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
