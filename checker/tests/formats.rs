//! Every `--format` value each command's `--help` lists works: for every command `mcp-once
//! --help` lists, each value its help names is run on a small input (one cell, one shard, the
//! bundled Rust fixture, the Python SDK client for `probe-client`) and must exit 0 or 1 with non-empty output; `json` must parse,
//! `markdown` must look like Markdown (a heading or a table), not plain text, and `junit` must
//! be JUnit XML a CI reader parses (`junit-parser`) with one test case or more.

use mcp_once_testkit::{fixtures, mcp_once, scratch, text};
use std::path::{Path, PathBuf};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// The commands `mcp-once --help` lists.
fn commands() -> Vec<String> {
    let out = mcp_once!().arg("--help").output().unwrap();
    let help = text(&out.stdout);
    let list = help.split("Commands:").nth(1).expect("a command list");
    let list = list.split("\n\n").next().unwrap();
    list.lines().filter_map(|l| l.split_whitespace().next()).filter(|w| *w != "help").map(String::from).collect()
}

/// The `--format` values a command's help lists (none when it has no `--format`): the
/// `[possible values: ...]` of a one-line option, or the `- VALUE` lines of a long one.
fn formats(command: &str) -> Vec<String> {
    let out = mcp_once!().args([command, "--help"]).output().unwrap();
    let help = text(&out.stdout);
    let Some(at) = help.find("--format <FORMAT>") else { return Vec::new() };
    let option = &help[at..];
    let option = option[1..].split("\n      --").next().unwrap_or(option);
    if let Some(values) = option.split("[possible values: ").nth(1) {
        return values.split(']').next().unwrap().split(", ").map(String::from).collect();
    }
    option
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|v| v.split(':').next().unwrap().trim().to_string())
        .collect()
}

/// The at-most-once trace of one call retried once after a timeout (c1r1k0), in `dir`.
fn trace(dir: &Path) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--client", "retry-on-timeout", "--retries", "1"])
        .args(["--crashes", "0", "--property", "at-most-once", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    dir.join("mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c1r1k0__at-most-once.itf.json")
}

/// Small arguments for `command` (before `--format`), run in `dir`; `shared` keeps what every
/// format of a command reads (the shards `merge` joins, made once).
fn small_run(command: &str, dir: &Path, shared: &Path) -> Vec<String> {
    let ledger = dir.join("ledger.jsonl").display().to_string();
    let fixture = |variant: &str| format!("{BIN} fixture --sdk rust --ledger {ledger} --variant {variant}");
    let observe = format!("ledger:{ledger}");
    let words: Vec<String> = match command {
        "check" => "check --profile mcp-2025-11-25 --client retry-on-timeout --retries 1 --crashes 0"
            .split(' ')
            .map(String::from)
            .collect(),
        "matrix" => "matrix --profile outcome-query --shard 1/40".split(' ').map(String::from).collect(),
        "merge" => {
            let shards: Vec<String> =
                (1..=2).map(|k| shared.join(format!("s{k}.json")).display().to_string()).collect();
            for (k, file) in shards.iter().enumerate().filter(|(_, f)| !Path::new(f).exists()) {
                let out = mcp_once!()
                    .args([
                        "matrix",
                        "--profile",
                        "outcome-query",
                        "--shard",
                        &format!("{}/2", k + 1),
                        "--format",
                        "json",
                    ])
                    .output()
                    .unwrap();
                std::fs::write(file, &out.stdout).unwrap();
            }
            std::iter::once("merge".to_string()).chain(shards).collect()
        }
        // Two whole matrices: a small state budget keeps it to seconds (undecided cells are a
        // verdict like any other for the format).
        "diff" => "diff outcome-query outcome-query --max-states 2000".split(' ').map(String::from).collect(),
        "replay" => vec![
            "replay".into(),
            trace(dir).display().to_string(),
            "--stdio".into(),
            fixture("plain"),
            "--args".into(),
            r#"{"amount":42}"#.into(),
            "--observe".into(),
            observe,
        ],
        "probe" => vec![
            "probe".into(),
            "--stdio".into(),
            fixture("key-durable"),
            "--args".into(),
            r#"{"amount":42}"#.into(),
            "--observe".into(),
            observe,
        ],
        "confirm" => "confirm --cells sep-3182__stdio__no-retry__none__honours-cancel__c2r1k1 --jobs 1"
            .split(' ')
            .map(String::from)
            .collect(),
        "bench" => vec!["bench".into(), "--quick".into()],
        // The official Python SDK client, no retry, one plain answer over stdio.
        "probe-client" => {
            let script = fixtures::dir().join("clients/python_sdk.py");
            let client = format!("{} {}", fixtures::python("python"), script.display());
            vec!["probe-client".into(), "--client".into(), client, "--scenario".into(), "ok".into()]
        }
        other => panic!("`{other}` lists --format: give it a small run here"),
    };
    words
}

#[test]
fn every_format_each_command_lists_works() {
    let all = commands();
    assert!(all.len() >= 12, "{all:?}");
    let mut checked = 0;
    let shared = scratch!("formats", "shared");
    for command in &all {
        for format in formats(command) {
            let dir = scratch!("formats", &format!("{command}-{format}"));
            let args = small_run(command, &dir, &shared);
            let out = mcp_once!().args(&args).args(["--format", &format]).current_dir(&*dir).output().unwrap();
            let what = format!("mcp-once {} --format {format}", args.join(" "));
            let code = out.status.code();
            assert!(matches!(code, Some(0 | 1)), "{what}: exit {code:?}: {}", text(&out.stderr));
            let stdout = text(&out.stdout);
            assert!(!stdout.trim().is_empty(), "{what}: no output: {}", text(&out.stderr));
            match format.as_str() {
                "json" => {
                    serde_json::from_str::<serde_json::Value>(&stdout)
                        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {stdout}"));
                }
                "markdown" => {
                    let md = stdout.lines().any(|l| l.starts_with('#') || l.starts_with('|'));
                    assert!(md, "{what}: not Markdown: {stdout}");
                }
                "junit" => {
                    let parsed = junit_parser::from_reader(std::io::Cursor::new(stdout.as_bytes()))
                        .unwrap_or_else(|e| panic!("{what}: not JUnit XML ({e}): {stdout}"));
                    let cases: usize = parsed.suites.iter().map(|s| s.cases.len()).sum();
                    assert!(cases > 0, "{what}: no test case: {stdout}");
                }
                _ => {}
            }
            checked += 1;
        }
    }
    assert!(checked >= 20, "{checked} command and format pairs");
}
