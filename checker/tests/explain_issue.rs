//! `mcp-once explain TRACE --evidence DIR` as someone filing an issue runs it, after a confirmed
//! replay on each SDK's ledger fixture (rmcp, the TypeScript SDK, the Python SDK; real servers,
//! real processes): the report names the SDK and its version, has the Expected, Actual and
//! Suggested fix sections, shows no absolute path of the machine, and fits a GitHub comment;
//! with `--keep-paths` the paths are there.

use mcp_once_testkit::fixtures::{self, Server};
use mcp_once_testkit::process::assert_groups_gone;
use mcp_once_testkit::{jsonl, mcp_once, scratch, text, trace_in, Scratch};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn temp(name: &str) -> Scratch {
    scratch!("explain-issue", name)
}

/// The at-most-once trace of one call retried once after a timeout, against `server`, written
/// into `dir`; its path.
fn trace(dir: &Path, server: &str) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-timeout"])
        .args(["--server", server, "--calls", "1", "--retries", "1", "--crashes", "0", "--property", "at-most-once"])
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "violated exits 1: {}", text(&out.stderr));
    trace_in(dir, "at-most-once")
}

/// The SDK's name as its fixture's serverInfo has it, and the version its pin file names.
fn sdk_and_version(sdk: Server) -> (&'static str, String) {
    let read = |p: &str| std::fs::read_to_string(fixtures::dir().join(p)).unwrap();
    match sdk {
        Server::Rust => {
            let manifest =
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/Cargo.toml"))
                    .unwrap();
            let pin = manifest.split("rmcp = { version = \"=").nth(1).unwrap().split('"').next().unwrap();
            ("on rmcp", pin.to_string())
        }
        Server::TypeScript => {
            let v: serde_json::Value = serde_json::from_str(&read("typescript/package.json")).unwrap();
            (
                "on @modelcontextprotocol/sdk",
                v["dependencies"]["@modelcontextprotocol/sdk"].as_str().unwrap().to_string(),
            )
        }
        Server::Python => {
            let reqs = read("python/requirements.txt");
            let pin = reqs.lines().find_map(|l| l.strip_prefix("mcp==")).unwrap();
            ("on mcp", pin.trim().to_string())
        }
    }
}

/// The command that starts `sdk`'s fixture over stdio on `ledger`.
fn command(sdk: Server, ledger: &Path) -> String {
    match sdk {
        Server::Rust => format!("{BIN} fixture --sdk rust --ledger {}", ledger.display()),
        s => {
            let argv = s.argv(Path::new(BIN), ledger, "stdio", &[]);
            argv.join(" ")
        }
    }
}

/// Replay the trace on `sdk`'s fixture (confirmed: exit 1), then explain it with and without
/// `--keep-paths`: the two reports.
fn replay_and_explain(sdk: Server) -> (String, String, PathBuf, PathBuf) {
    let dir = temp(sdk.name());
    // The Python SDK interrupts a cancelled handler: its server is the model's honours-cancel.
    let server = if sdk == Server::Python { "honours-cancel" } else { "plain" };
    let t = trace(&dir, server);
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args(["--stdio", &command(sdk, &ledger), "--args", r#"{"amount":42}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .arg("--evidence")
        .arg(&evidence)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}: confirmed exits 1: {}{}",
        sdk.name(),
        text(&out.stdout),
        text(&out.stderr)
    );
    assert_groups_gone(&jsonl::evidence(&evidence), sdk.name());
    let explain = |keep: bool| {
        let mut cmd = mcp_once!();
        cmd.arg("explain").arg(&t).arg("--evidence").arg(&evidence);
        if keep {
            cmd.arg("--keep-paths");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", sdk.name(), text(&out.stderr));
        text(&out.stdout)
    };
    let fixture_file = match sdk {
        Server::Rust => PathBuf::from(BIN),
        Server::TypeScript => fixtures::dir().join("typescript/server.mjs"),
        Server::Python => fixtures::dir().join("python/server.py"),
    };
    let paths = (evidence.clone(), fixture_file);
    let result = (explain(false), explain(true), paths.0, paths.1);
    drop(dir);
    result
}

/// The absolute paths a report must not show: the machine's folders, the working folder, the
/// temp folder.
fn machine_paths() -> Vec<String> {
    let mut out: Vec<String> = ["/tmp", "/home", "/work", "/root", "/var"].iter().map(|s| s.to_string()).collect();
    out.push(std::env::current_dir().unwrap().display().to_string());
    out.push(std::env::temp_dir().display().to_string());
    out.push(env!("CARGO_TARGET_TMPDIR").to_string());
    out
}

/// The lines of a Markdown report with a placeholder (`<tmp>`, `<path>/...`) outside code:
/// Markdown renders those as HTML tags.
fn bare_placeholders(report: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in report.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let prose = line.split('`').step_by(2).collect::<String>();
        let tags = ["<tmp>", "<path>", "<evidence>", "<fixtures>", "<traces>"];
        if !fenced && tags.iter().any(|t| prose.contains(t)) {
            out.push(line);
        }
    }
    out
}

fn check_sdk(sdk: Server) {
    let (report, kept, evidence, fixture_file) = replay_and_explain(sdk);
    let name = sdk.name();
    let (sdk_name, version) = sdk_and_version(sdk);
    let title = report.lines().next().unwrap();
    assert!(title.starts_with("## ") && title.contains(sdk_name) && title.contains(&version), "{name}: title {title}");
    assert!(report.contains(&format!("- Server: `mcp-once-ledger-fixture {sdk_name}` {version}")), "{name}: {report}");
    assert!(report.contains("- Client: `mcp-once`"), "{name}: the client by name: {report}");
    for section in ["### Expected", "### Actual", "### Why the spec allows it", "### Suggested fix", "### Reproduce"] {
        assert!(report.contains(section), "{name}: no {section}: {report}");
    }
    assert!(report.contains("The replay was **confirmed**: the server took effect **2** times"), "{name}: {report}");
    assert!(report.contains(r#""method":"tools/call""#), "{name}: the call's frames are quoted: {report}");
    assert!(report.contains("exit 0: it holds"), "{name}: a fix the model proves: {report}");
    for p in machine_paths() {
        assert!(!report.contains(&p), "{name}: the report shows the path {p}:\n{report}");
    }
    assert!(report.contains("<evidence>/evidence.jsonl"), "{name}: {report}");
    // The spec's own link, inside the quoted sentence, is left as the spec has it.
    let link = "[cancellation notification](/specification/2025-11-25/basic/utilities/cancellation)";
    assert!(report.contains(link), "{name}: the quoted spec link is kept: {report}");
    assert!(report.contains("counted by ledger `<traces>/ledger.jsonl`"), "{name}: {report}");
    let bare = bare_placeholders(&report);
    assert!(bare.is_empty(), "{name}: placeholders outside code render as HTML tags: {bare:#?}");
    assert!(report.len() < 65_536, "{name}: {} characters", report.len());

    assert!(kept.contains(&evidence.display().to_string()), "{name}: --keep-paths keeps the evidence folder: {kept}");
    assert!(
        kept.contains(&fixture_file.display().to_string()),
        "{name}: --keep-paths keeps the server command: {kept}"
    );
    assert!(kept.len() < 65_536, "{name}: {} characters", kept.len());
}

#[test]
fn a_confirmed_replay_on_the_rust_fixture_explains_to_an_issue_naming_rmcp() {
    check_sdk(Server::Rust);
}

#[test]
fn a_confirmed_replay_on_the_typescript_fixture_explains_to_an_issue_naming_the_sdk() {
    check_sdk(Server::TypeScript);
}

#[test]
fn a_confirmed_replay_on_the_python_fixture_explains_to_an_issue_naming_the_sdk() {
    check_sdk(Server::Python);
}

/// `explain TRACE --evidence DIR` as an issue filer may misuse it: evidence of another trace.
fn explain_with(trace: &Path, evidence: &Path) -> (Option<i32>, String) {
    let out = mcp_once!().arg("explain").arg(trace).arg("--evidence").arg(evidence).output().unwrap();
    (out.status.code(), text(&out.stderr))
}

#[test]
fn evidence_of_another_trace_is_refused_naming_the_difference() {
    let dir = temp("mismatch");
    let own = trace(&dir, "plain");
    let ledger = dir.join("ledger.jsonl");
    let evidence = dir.join("evidence");
    let out = mcp_once!()
        .arg("replay")
        .arg(&own)
        .args(["--stdio", &command(Server::Rust, &ledger), "--args", r#"{"amount":42}"#])
        .args(["--observe", &format!("ledger:{}", ledger.display())])
        .arg("--evidence")
        .arg(&evidence)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "confirmed: {}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(explain_with(&own, &evidence).0, Some(0), "its own trace is explained");

    // Another property of the same cell.
    let other = dir.join("other-property");
    let made = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-timeout"])
        .args(["--server", "plain", "--calls", "1", "--retries", "1", "--crashes", "0"])
        .args(["--property", "no-silent-effect", "--out"])
        .arg(&other)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(1), "{}", text(&made.stderr));
    let (code, err) = explain_with(&trace_in(&other, "no-silent-effect"), &evidence);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not the evidence of") && err.contains("`at-most-once` trace"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");

    // The same property in another cell, whose trace has other steps.
    let cell = dir.join("other-cell");
    let made = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "framework-retry"])
        .args(["--server", "plain", "--calls", "2", "--retries", "1", "--crashes", "1"])
        .args(["--property", "at-most-once", "--out"])
        .arg(&cell)
        .output()
        .unwrap();
    assert_eq!(made.status.code(), Some(1), "{}", text(&made.stderr));
    let elsewhere = trace_in(&cell, "at-most-once");
    let (code, err) = explain_with(&elsewhere, &evidence);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("the evidence is of the cell") && err.contains("--calls 1"), "{err}");

    // Evidence that does not name its cell is matched by its steps.
    let result = evidence.join("result.json");
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&result).unwrap()).unwrap();
    assert!(json.as_object_mut().unwrap().remove("cell").is_some(), "a replay's result names its cell");
    std::fs::write(&result, json.to_string()).unwrap();
    assert_eq!(explain_with(&own, &evidence).0, Some(0), "its own trace, by its steps");
    let (code, err) = explain_with(&elsewhere, &evidence);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("step ") && err.contains("of the evidence is"), "{err}");
}
