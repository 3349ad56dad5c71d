//! `probe` writes each counterexample it confirms as an ITF trace beside its evidence, and
//! `explain` works from those files alone: the Rust fixture's `plain` variant (a real rmcp
//! server, real processes) probed over stdio, then each confirmed replay's `trace.itf.json`
//! checked as a path of the model and explained with its own evidence folder.

use mcp_once_testkit::{mcp_once, scratch, text};
use std::path::PathBuf;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

#[test]
fn a_probe_finding_is_explained_from_the_files_the_probe_wrote() {
    let dir = scratch!("confirmed-traces", "probe");
    let ledger = dir.ledger();
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("probe")
        .args(["--stdio", &format!("{BIN} fixture --sdk rust --variant plain --ledger {}", ledger.display())])
        .args(["--args", r#"{"amount":42}"#, "--observe", &format!("ledger:{}", ledger.display())])
        .args(["--checks", "mcp-once-retry-after-restart,mcp-once-retry-after-timeout"])
        .arg("--evidence")
        .arg(&evidence)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "the plain server fails the checks: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let mut confirmed = 0;
    for entry in std::fs::read_dir(&evidence).unwrap() {
        let folder: PathBuf = entry.unwrap().path();
        let Ok(result) = std::fs::read_to_string(folder.join("result.json")) else { continue };
        let result: serde_json::Value = serde_json::from_str(&result).unwrap();
        let trace = folder.join("trace.itf.json");
        if result["verdict"] != "confirmed" {
            assert!(!trace.exists(), "{}: a trace beside a {} replay", folder.display(), result["verdict"]);
            continue;
        }
        assert!(trace.is_file(), "{}: a confirmed replay with no trace.itf.json beside it", folder.display());
        let valid = mcp_once!().args(["check", "--trace"]).arg(&trace).output().unwrap();
        assert_eq!(valid.status.code(), Some(0), "a real path of the model: {}", text(&valid.stderr));
        let report = mcp_once!().arg("explain").arg(&trace).arg("--evidence").arg(&folder).output().unwrap();
        let md = text(&report.stdout);
        assert_eq!(report.status.code(), Some(0), "{}: {}", folder.display(), text(&report.stderr));
        assert!(md.contains("The replay was **confirmed**: the server took effect **2** times"), "{md}");
        assert!(md.contains("mcp-once-ledger-fixture on rmcp"), "the server named from the evidence: {md}");
        confirmed += 1;
    }
    assert!(confirmed >= 2, "{confirmed} confirmed replays (a timeout and a restart on a plain server)");
}
