//! `--callers 2` and `--key-scope` as a user runs them: two callers presenting one idempotency
//! key to a SEP-3182 key store; the violation of `no-foreign-replay` with the MUST it breaks, the
//! one-line refusals (exit 2), the matrix's cells and JSON, and a replay that cannot play two
//! callers (inconclusive, with the reason).

use mcp_once_testkit::{mcp_once, scratch, text, trace_in, Scratch};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn temp(name: &str) -> Scratch {
    scratch!("callers-cli", name)
}

const CELL: [&str; 8] = ["check", "--profile", "sep-3182", "--transport", "http", "--server", "key-durable", "--calls"];

#[test]
fn a_global_key_store_answers_the_second_caller_with_the_first_callers_result() {
    let out = mcp_once!()
        .args(CELL)
        .args(["2", "--callers", "2", "--key-scope", "global", "--property", "no-foreign-replay"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("no-foreign-replay        VIOLATED"), "{stdout}");
    assert!(stdout.contains("shortest counterexample: 5 steps"), "{stdout}");
    assert!(stdout.contains("breaks the MUST of idempotency_key_scope: the server answers id 2 (caller 1's call 1)"));
    assert!(stdout.contains("`--key-scope per-caller` holds"), "{stdout}");
    assert!(stdout.contains("does not cover: of two callers presenting one key"), "{stdout}");
    // The profile's own scope: caller 1's request is new to its scope, and runs.
    let out = mcp_once!().args(CELL).args(["2", "--callers", "2", "--property", "no-foreign-replay"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("no-foreign-replay        holds"), "{}", text(&out.stdout));
}

/// The 5-step `no-foreign-replay` counterexample (two callers, one record per key), written
/// into `dir`.
fn foreign_replay_trace(dir: &std::path::Path) -> std::path::PathBuf {
    let out = mcp_once!()
        .args(CELL)
        .args(["2", "--callers", "2", "--key-scope", "global", "--property", "no-foreign-replay", "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    trace_in(dir, "no-foreign-replay")
}

#[test]
fn explain_of_a_foreign_replay_files_it_against_the_server_and_suggests_records_per_caller() {
    let dir = temp("explain");
    let trace = foreign_replay_trace(dir.path());
    let out = mcp_once!().arg("explain").arg(&trace).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let md = text(&out.stdout);
    // Only a server that breaks SEP-3182's MUST answers one caller from another's record: the
    // issue is the server's, not the spec's, and its fix is the scope the MUST asks for.
    assert!(md.contains("Whose issue: **the server's SDK or implementation**"), "{md}");
    assert!(md.contains("(`--key-scope per-caller`)"), "{md}");
    assert!(!md.contains("no delivery guarantee lets a client prevent it"), "{md}");
    // The step that breaks the scope rule does not also cite that rule as allowing it.
    let step5 = md.split("\n5. ").nth(1).and_then(|s| s.split("\n\n").next()).expect("a fifth step");
    assert!(step5.contains("**breaks the MUST** of `idempotency_key_scope`"), "{step5}");
    assert!(!step5.contains("allowed by `idempotency_key_scope"), "{step5}");
}

#[test]
fn callers_where_they_cannot_arise_are_refused_with_one_line() {
    let cases: [(&[&str], &str); 5] = [
        (&["--profile", "sep-3182", "--server", "key-durable", "--callers", "2"], "needs --calls 2 or more"),
        (&["--profile", "mcp-2026-07-28", "--calls", "2", "--callers", "2"], "defines no idempotency key"),
        (
            &["--profile", "sep-3182", "--server", "key-durable", "--calls", "2", "--key-scope", "global"],
            "applies to two callers",
        ),
        (
            &["--profile", "sep-3182", "--server", "key-durable", "--calls", "2", "--property", "no-foreign-replay"],
            "checked with two callers",
        ),
        (
            &["--profile", "sep-3182", "--server", "key-durable", "--calls", "2", "--callers", "3"],
            "--callers 3 is out of range",
        ),
    ];
    for (args, names) in cases {
        let out = mcp_once!().arg("check").args(args).output().unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(names), "{args:?}: {err}");
    }
}

/// `matrix --callers 2`: the key-store cells checked with two callers (the property's column and
/// the JSON record's `callers` and `key_scope`), the others not applicable; without the flag the
/// property has no column and no result.
#[test]
fn the_matrix_takes_two_callers_where_the_flag_asks() {
    let out = mcp_once!()
        .args(["matrix", "--profile", "sep-3182", "--callers", "2", "--key-scope", "global", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let checked: Vec<&Value> = v["cells"].as_array().unwrap().iter().filter(|c| c["applicable"] == true).collect();
    assert!(!checked.is_empty());
    for c in &checked {
        assert_eq!((c["config"]["callers"].as_u64(), c["config"]["key_scope"].as_str()), (Some(2), Some("global")));
        let foreign = c["results"].as_array().unwrap().iter().find(|r| r["property"] == "no-foreign-replay");
        assert_eq!(foreign.map(|r| r["verdict"].as_str()), Some(Some("violated")), "{c}");
    }
    let out = mcp_once!().args(["matrix", "--profile", "sep-3182"]).output().unwrap();
    assert!(!text(&out.stdout).contains("no-foreign-replay"), "{}", text(&out.stdout));
}

/// A trace of two callers replayed on a fixture: the runner plays one caller, so it is
/// inconclusive with that reason, not confirmed.
#[test]
fn a_replay_of_two_callers_is_inconclusive_with_the_reason() {
    let dir = temp("replay");
    let t = foreign_replay_trace(&dir);
    let ledger = dir.join("ledger.jsonl");
    let server = format!("{BIN} fixture --sdk rust --ledger {} --variant key-durable", ledger.display());
    let out = mcp_once!()
        .arg("replay")
        .arg(&t)
        .args(["--stdio", &server, "--observe"])
        .arg(format!("ledger:{}", ledger.display()))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout} {}", text(&out.stderr));
    assert!(stdout.starts_with("INCONCLUSIVE"), "{stdout}");
    assert!(stdout.contains("the runner plays one caller"), "{stdout}");
}
