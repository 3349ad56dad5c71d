//! The GitHub Action (`action.yml`) as a workflow runs it: its run step, `scripts/action-probe`,
//! started from the action's folder with the inputs as the action passes them (`INPUT_...`) and
//! GitHub's files (`GITHUB_STEP_SUMMARY`, `GITHUB_OUTPUT`) in a scratch folder, probing the
//! bundled Rust fixture. The binary this test was built with stands in for the install step:
//! first found on PATH, then given as the `mcp-once` input. Checked: the exit code, the JUnit file
//! (parsed by `junit-parser`, `common/junit.rs`), the job summary appended, the step's outputs,
//! the evidence folder.

#[path = "common/junit.rs"]
mod junit;

use junit::{validate, Counts};
use mcp_once_testkit::{scratch, text, Scratch};
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// The action's folder: the repository root.
fn action_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The script as the action's step runs it, in `dir` (the workspace), with `inputs`; PATH has
/// the binary's folder first when `on_path`. The exit code and what it printed.
fn action(dir: &Scratch, inputs: &[(&str, String)], on_path: bool) -> (i32, String) {
    let mut cmd = Command::new(action_path().join("scripts/action-probe"));
    let path = std::env::var("PATH").unwrap_or_default();
    let path = if on_path { format!("{}:{path}", Path::new(BIN).parent().unwrap().display()) } else { path };
    cmd.current_dir(dir.path())
        .env_clear()
        .env("PATH", path)
        .env("HOME", dir.path())
        .env("ACTION_PATH", action_path())
        .env("GITHUB_STEP_SUMMARY", dir.join("step-summary.md"))
        .env("GITHUB_OUTPUT", dir.join("github-output"))
        .env("RUNNER_TEMP", dir.path());
    for (name, value) in inputs {
        cmd.env(format!("INPUT_{name}"), value);
    }
    let out = cmd.output().unwrap();
    let printed = format!("{}{}", text(&out.stdout), text(&out.stderr));
    (out.status.code().unwrap_or_else(|| panic!("killed: {printed}")), printed)
}

/// The Rust fixture over stdio, as a workflow would name it (`mcp-once` from PATH), and its
/// observer.
fn server_inputs(dir: &Scratch, program: &str) -> Vec<(&'static str, String)> {
    let ledger = dir.join("ledger.jsonl");
    vec![
        ("STDIO", format!("{program} fixture --sdk rust --ledger {}", ledger.display())),
        ("OBSERVE", format!("ledger:{}", ledger.display())),
        ("ARGS", r#"{"amount":1}"#.to_string()),
    ]
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The README's expected failures (and the HTTP-only one): only they fail, so the step passes;
/// they are skipped in the JUnit file, the summary lands in the job summary, the outputs are set
/// and the evidence is where the artifact step looks.
#[test]
fn the_action_passes_on_expected_failures_and_writes_its_reports() {
    let dir = scratch!("ci-action", "baseline");
    let baseline = dir.join("expected-failures.yml");
    std::fs::write(
        &baseline,
        "server:\n  - mcp-once-retry-after-timeout\n  - mcp-once-retry-after-restart\n  - mcp-once-framework-rerun\n  - mcp-once-retry-after-stream-break\n",
    )
    .unwrap();
    let mut inputs = server_inputs(&dir, "mcp-once");
    inputs.push(("EXPECTED_FAILURES", baseline.display().to_string()));
    inputs.push(("JUNIT_FILE", "reports/probe.xml".into()));
    std::fs::write(dir.join("step-summary.md"), "## before\n").unwrap();
    let (code, printed) = action(&dir, &inputs, true);
    assert_eq!(code, 0, "{printed}");
    assert!(printed.contains(&format!("action-probe: mcp-once {}", env!("CARGO_PKG_VERSION"))), "{printed}");

    let xml = read(&dir.join("reports/probe.xml"));
    let parsed = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).unwrap();
    let tests = parsed.suites.first().map_or(0, |s| s.cases.len() as u64);
    let suite = validate(&xml, "mcp-once probe", Counts { tests, failures: 0, skipped: 3 })
        .unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let expected: Vec<&str> =
        suite.cases.iter().filter(|c| c.status.is_skipped()).map(|c| c.original_name.as_str()).collect();
    assert_eq!(expected, ["mcp-once-retry-after-timeout", "mcp-once-retry-after-restart", "mcp-once-framework-rerun"]);

    let summary = read(&dir.join("step-summary.md"));
    let added = summary.strip_prefix("## before\n").unwrap_or_else(|| panic!("appended: {summary}"));
    assert!(added.starts_with(&format!("### ⚠️ mcp-once probe: {} passed, 0 failed, 3 skipped", tests - 3)), "{added}");
    assert!(added.contains("expected failure (listed in --expected-failures)"), "{added}");
    assert!(printed.contains(added.lines().next().unwrap()), "the summary is in the log too: {printed}");

    let outputs = read(&dir.join("github-output"));
    assert_eq!(outputs, "exit-code=0\njunit-file=reports/probe.xml\nevidence-dir=mcp-once-evidence\n");
    assert!(dir.join("mcp-once-evidence/mcp-once-preflight").is_dir(), "the evidence the artifact step uploads");
}

/// A failure the baseline does not list fails the step with the probe's exit code, reported as
/// a JUnit failure; the binary given as the `mcp-once` input, none on PATH.
#[test]
fn the_action_fails_on_a_new_failure_with_the_binary_given_as_an_input() {
    let dir = scratch!("ci-action", "new-failure");
    let mut inputs = server_inputs(&dir, BIN);
    inputs.push(("MCP_ONCE", BIN.to_string()));
    inputs.push(("EXTRA_ARGS", "--checks mcp-once-retry-after-timeout".into()));
    let (code, printed) = action(&dir, &inputs, false);
    assert_eq!(code, 1, "{printed}");
    let xml = read(&dir.join("mcp-once-junit.xml"));
    let suite = validate(&xml, "mcp-once probe", Counts { tests: 2, failures: 1, skipped: 0 })
        .unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    assert!(suite.cases[1].status.is_failure(), "{:?}", suite.cases[1]);
    assert!(read(&dir.join("step-summary.md")).contains("| mcp-once probe | `mcp-once-retry-after-timeout` |"));
    assert!(read(&dir.join("github-output")).starts_with("exit-code=1\n"));
}

/// Inputs that cannot make a probe: exit 2 with one line naming what is missing, before any
/// server starts.
#[test]
fn the_action_refuses_missing_inputs() {
    let dir = scratch!("ci-action", "bad");
    let (code, printed) = action(&dir, &[("MCP_ONCE", BIN.to_string()), ("STDIO", "true".into())], false);
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("the observe input is required"), "{printed}");
    let (code, printed) = action(&dir, &[("MCP_ONCE", BIN.to_string()), ("OBSERVE", "ledger:l".into())], false);
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("give one of the stdio input"), "{printed}");
    let (code, printed) = action(&dir, &[("MCP_ONCE", dir.join("nope").display().to_string())], false);
    assert_eq!(code, 2, "{printed}");
    assert!(printed.contains("is not an executable file"), "{printed}");
}
