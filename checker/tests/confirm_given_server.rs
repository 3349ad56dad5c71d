//! `mcp-once confirm --stdio CMD` on servers this project did not write (two servers of the
//! census, pinned by `census/install.sh --regression`): the model's counterexamples of the cells
//! a server with no store can be (`plain`, `honours-cancel`), replayed on the server as it is,
//! effects counted by an observer outside it.
//!
//! - **mcp-server-sqlite** 2025.4.25 (mcp 1.x SDK), `write_query` with an INSERT: no dedup at
//!   all, so every counterexample is confirmed, and the table itself (read apart from the
//!   runner) has the duplicate rows of each confirmed retry.
//! - **@modelcontextprotocol/server-memory** 2026.8.31, `create_entities` of an entity named
//!   after the call: it skips a name it already has, so a retried call takes no second effect;
//!   the at-most-once counterexamples are not reproduced, the server fits neither behaviour,
//!   and `confirm` exits 1.
//!
//! A missing server fails the test with what to run, never skips it.

use mcp_once_testkit::{mcp_once, scratch, text, Scratch};
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// A limit on one confirm run against hangs only (a run takes 10 to 40 s).
const LIMIT: Duration = Duration::from_secs(400);

/// `census/REL`, which must exist; `what` says what it is.
fn installed(rel: &str, what: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../census").join(rel);
    assert!(
        p.exists(),
        "{what} is missing ({}): install the census regression servers with `census/install.sh --regression` \
         (scripts/test does)",
        p.display()
    );
    p.canonicalize().unwrap().display().to_string()
}

/// What one confirm run gave: its exit code, its JSON, what it printed on stderr.
struct Run {
    code: Option<i32>,
    json: Value,
    stderr: String,
}

/// `mcp-once confirm ARGS --format json` with its evidence in `dir`.
fn confirm(dir: &Scratch, args: &[&str]) -> Run {
    let out = mcp_once!()
        .arg("confirm")
        .args(args)
        .args(["--step-timeout-ms", "5000", "--start-timeout-ms", "30000", "--stop-grace-ms", "2000"])
        .arg("--cwd")
        .arg(dir.path())
        .arg("--evidence")
        .arg(dir.join("evidence"))
        .args(["--format", "json"])
        .timeout(LIMIT)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    let json =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("no JSON ({e}): {}{stderr}", text(&out.stdout)));
    Run { code: out.status.code(), json, stderr }
}

/// Each result as (cell's server behaviour, property, verdict).
fn verdicts(run: &Run) -> Vec<(String, String, String)> {
    let results = run.json["results"].as_array().unwrap_or_else(|| panic!("no results: {}", run.json));
    results
        .iter()
        .map(|r| {
            assert_eq!(r["sdk"], "server", "{r}");
            let s = |k: &str| r[k].as_str().unwrap_or_else(|| panic!("no {k}: {r}")).to_string();
            (s("behaviour"), s("property"), s("verdict"))
        })
        .collect()
}

/// The `behaviours` of the JSON as (server, replays, confirmed, fits).
fn fits(run: &Run) -> Vec<(String, u64, u64, bool)> {
    let all = run.json["behaviours"].as_array().unwrap_or_else(|| panic!("no behaviours: {}", run.json));
    all.iter()
        .map(|b| {
            (
                b["server"].as_str().unwrap().to_string(),
                b["replays"].as_u64().unwrap(),
                b["confirmed"].as_u64().unwrap(),
                b["fits"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_counterexample_of_a_store_less_server_is_confirmed_on_mcp_server_sqlite() {
    let server = installed("regression/.venv/bin/mcp-server-sqlite", "mcp-server-sqlite 2025.4.25");
    let observe = installed("observe.py", "the census observer");
    let dir = scratch!("confirm-given", "mcp-server-sqlite");
    let db = dir.join("db.sqlite").display().to_string();
    let made = Command::new("python3")
        .args(["-c", "import sqlite3, sys; sqlite3.connect(sys.argv[1]).execute(sys.argv[2])", &db])
        .arg("CREATE TABLE census (id INTEGER PRIMARY KEY, note TEXT)")
        .output()
        .unwrap();
    assert!(made.status.success(), "cannot make the table: {}", text(&made.stderr));
    // retry-any: a retry after a timeout and after a crash and restart (the crash point made
    // by strace holding the reply: the tool has no delay arguments).
    let run = confirm(
        &dir,
        &[
            "--profile",
            "mcp-2025-11-25",
            "--client",
            "retry-any",
            "--stdio",
            &format!("{server} --db-path {db}"),
            "--tool",
            "write_query",
            "--args",
            r#"{"query":"INSERT INTO census (note) VALUES ('{{call}}')"}"#,
            "--observe",
            &format!("cmd:python3 {observe} sqlite {db} census"),
        ],
    );
    // The observer counts rows: it cannot tell calls apart, so the cells are taken at one call.
    assert!(run.stderr.contains("each cell is taken at one call"), "{}", run.stderr);
    let got = verdicts(&run);
    assert!(!got.is_empty());
    for behaviour in ["plain", "honours-cancel"] {
        assert!(got.iter().any(|(b, p, _)| b == behaviour && p == "at-most-once"), "{behaviour}: {got:?}");
    }
    for (b, p, v) in &got {
        assert!(v == "confirmed" || (p == "worst-case" && v == "ran"), "{b} {p}: {v}\n{}", run.json);
    }
    let n = |b: &str| got.iter().filter(|(x, _, _)| x == b).count() as u64;
    assert_eq!(
        fits(&run),
        [
            ("plain".into(), n("plain"), n("plain"), true),
            ("honours-cancel".into(), n("honours-cancel"), n("honours-cancel"), true)
        ]
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // Read apart from the runner: each confirmed at-most-once replay left two rows of one call.
    let twice = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys; print(sum(1 for (n,) in sqlite3.connect(sys.argv[1]).execute(\
             'SELECT count(*) FROM census GROUP BY note') if n >= 2))",
            &db,
        ])
        .output()
        .unwrap();
    let calls_twice: usize = text(&twice.stdout).trim().parse().unwrap_or_else(|_| panic!("{}", text(&twice.stderr)));
    let duplicates = got.iter().filter(|(_, p, v)| p == "at-most-once" && v == "confirmed").count();
    assert!(calls_twice >= duplicates, "{calls_twice} calls with two rows or more, {duplicates} confirmed duplicates");
}

#[test]
fn a_server_that_skips_a_retried_entity_fits_neither_behaviour() {
    let server = installed(
        "regression/node_modules/@modelcontextprotocol/server-memory/dist/index.js",
        "@modelcontextprotocol/server-memory 2026.8.31",
    );
    let observe = installed("observe.py", "the census observer");
    let dir = scratch!("confirm-given", "server-memory");
    let memory = dir.join("memory.jsonl").display().to_string();
    let run = confirm(
        &dir,
        &[
            "--profile",
            "mcp-2025-11-25",
            "--client",
            "retry-on-timeout",
            "--stdio",
            &format!("node {server}"),
            "--env",
            &format!("MEMORY_FILE_PATH={memory}"),
            "--tool",
            "create_entities",
            "--args",
            r#"{"entities":[{"name":"census-{{call}}","entityType":"note","observations":["once"]}]}"#,
            "--observe",
            &format!(r#"cmd:python3 {observe} jsonl {memory} 'type="entity"'"#),
        ],
    );
    let got = verdicts(&run);
    let at_most_once: Vec<_> = got.iter().filter(|(_, p, _)| p == "at-most-once").collect();
    assert_eq!(at_most_once.len(), 2, "{got:?}");
    for (b, _, v) in at_most_once {
        assert_eq!(v, "not-reproduced", "{b}: {}", run.json);
    }
    assert!(fits(&run).iter().all(|f| !f.3), "{}", run.json);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
}

#[test]
fn a_given_server_takes_no_fixture_flags_and_no_cell_with_a_store() {
    let dir = scratch!("confirm-given", "bad-input");
    for (extra, says) in [
        (&["--sdk", "rust"][..], "--sdk chooses fixtures"),
        (&["--jobs", "2"][..], "--jobs: one server given"),
        (&["--server", "dedup-by-id"][..], "can be replayed on the given stdio server"),
    ] {
        let out = mcp_once!()
            .args(["confirm", "--profile", "mcp-2025-11-25", "--stdio", "true", "--observe", "cmd:true"])
            .args(extra)
            .arg("--evidence")
            .arg(dir.join("evidence"))
            .timeout(Duration::from_secs(60))
            .output()
            .unwrap();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(says), "{extra:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{extra:?}: one line: {err}");
    }
}
