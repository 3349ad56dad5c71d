//! Early answers and budgets, as a user meets them: one property answers at its shortest
//! counterexample, `--worst` searches on, and a search that reaches `--max-states` or
//! `--max-memory` stops with a partial report and exit 2 instead of growing until it is killed;
//! `--max-depth` checks the states within a number of steps and says what it left out.

use mcp_once_testkit::{mcp_once, scratch, text};
use serde_json::Value;
use std::process::Output;

/// The framework re-runs over HTTP of the durable id table under 2026-07-28, c3 r2 k1: its full
/// space does not fit in 24 GB, its at-most-once violation is shallow.
const LARGE: [&str; 14] = [
    "--profile",
    "mcp-2026-07-28",
    "--transport",
    "http",
    "--client",
    "framework-retry",
    "--server",
    "dedup-by-id-durable",
    "--calls",
    "3",
    "--retries",
    "2",
    "--crashes",
    "1",
];

/// A cell where at-most-once holds (SEP-3182's durable key store), small enough to finish.
const SAFE: [&str; 14] = [
    "--profile",
    "sep-3182",
    "--transport",
    "http",
    "--client",
    "retry-any",
    "--server",
    "key-durable",
    "--key",
    "per-call",
    "--calls",
    "2",
    "--retries",
    "2",
];

fn check(cell: &[&str], extra: &[&str]) -> Output {
    mcp_once!().arg("check").args(cell).args(["--format", "json"]).args(extra).output().unwrap()
}

fn json(out: &Output) -> Value {
    serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)))
}

/// The one result of a single-property check.
fn at_most_once(v: &Value) -> &Value {
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["property"], "at-most-once");
    &results[0]
}

#[test]
fn one_property_answers_at_its_verified_shortest_counterexample() {
    let dir = scratch!("budget", "answered");
    let out = check(&LARGE, &["--property", "at-most-once", "--out", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "no budget was reached");
    let v = json(&out);
    assert_eq!(v["search"], "answered");
    assert_eq!(v["worst_search"], "not-searched");
    assert_eq!(v["worst_trace"], Value::Null, "no worst-case trace is written when it was not searched");
    let r = at_most_once(&v);
    assert_eq!(r["verdict"], "violated");
    // The trace file says its length was confirmed by stateright's own breadth-first search.
    let file = r["trace"]["file"].as_str().unwrap();
    let itf: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(itf["#meta"]["minimal"], true, "{file}");
    assert_eq!(itf["states"].as_array().unwrap().len() as u64, r["trace"]["steps"].as_u64().unwrap() + 1);
    let text_out = mcp_once!().arg("check").args(LARGE).args(["--property", "at-most-once"]).output().unwrap();
    assert!(text(&text_out.stdout).contains("worst case: not searched (use --worst)"), "{}", text(&text_out.stdout));
}

#[test]
fn worst_stops_at_the_state_budget_with_what_it_decided() {
    let answered = check(&LARGE, &["--property", "at-most-once"]);
    let out = check(&LARGE, &["--property", "at-most-once", "--worst", "--max-states", "150000"]);
    assert_eq!(out.status.code(), Some(2), "a search stopped at its budget gives no full verdict");
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.contains("150000 unique states") && err.contains("--max-states"), "{err}");
    let v = json(&out);
    assert_eq!(v["search"], "stopped");
    assert_eq!(v["worst_search"], "partial");
    assert!(v["stats"]["states"].as_u64().unwrap() >= 150_000);
    let depth = v["stopped"]["depth_completed"].as_u64().unwrap();
    // What was decided before the stop is the same answer the early one gives.
    let (early, late) = (at_most_once(&json(&answered)).clone(), at_most_once(&v).clone());
    assert_eq!(late["verdict"], "violated");
    assert_eq!(late["trace"]["steps"], early["trace"]["steps"]);
    assert!(depth >= early["trace"]["steps"].as_u64().unwrap(), "the stop came after the violation's depth");
    assert!(v["worst_effects"].as_u64().unwrap() >= early["trace"]["effects"].as_u64().unwrap());
}

#[test]
fn worst_stops_at_the_memory_budget() {
    // Far below what the search needs: it stops at its first reading of the memory.
    let out = check(&LARGE, &["--property", "at-most-once", "--worst", "--max-memory", "2M"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("memory budget of 2 MiB") && err.contains("--max-memory"), "{err}");
    let v = json(&out);
    assert_eq!(v["search"], "stopped");
    assert!(v["stopped"]["reason"].as_str().unwrap().contains("memory budget"));
    assert_eq!(at_most_once(&v)["verdict"], "unknown", "nothing was checked before the stop");
}

#[test]
fn a_property_that_holds_needs_the_whole_space_and_is_unknown_before() {
    let out = check(&SAFE, &["--property", "at-most-once"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(at_most_once(&v)["verdict"], "holds");
    assert_eq!(v["search"], "exhaustive");
    assert_eq!(v["worst_search"], "exhaustive", "an exhaustive run knows the worst case anyway");
    let all = v["stats"]["states"].as_u64().unwrap();
    let limit = (all / 4).to_string();
    let out = check(&SAFE, &["--property", "at-most-once", "--max-states", &limit]);
    assert_eq!(out.status.code(), Some(2));
    let v = json(&out);
    assert_eq!(at_most_once(&v)["verdict"], "unknown");
    assert_eq!(v["worst_search"], "not-searched");
    let text_out = mcp_once!()
        .arg("check")
        .args(SAFE)
        .args(["--property", "at-most-once", "--max-states", &limit])
        .output()
        .unwrap();
    assert!(text(&text_out.stdout).contains("unknown"), "{}", text(&text_out.stdout));
}

#[test]
fn the_matrix_reports_stopped_cells_as_unknown_not_as_errors() {
    let out = mcp_once!()
        .args(["matrix", "--profile", "mcp-2025-11-25", "--format", "json", "--max-states", "400"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "violations found before the budget still count: {}", text(&out.stderr));
    let v = json(&out);
    let cells = v["cells"].as_array().unwrap();
    let stopped: Vec<&Value> = cells.iter().filter(|c| c["search"] == "stopped").collect();
    let whole: Vec<&Value> = cells.iter().filter(|c| c["search"] == "exhaustive").collect();
    assert!(!stopped.is_empty() && !whole.is_empty(), "400 states end some cells' searches, not all");
    for c in &stopped {
        assert_eq!(c["worst_search"], "partial");
        assert!(c["results"].as_array().unwrap().iter().all(|r| r["verdict"] != "holds"));
    }
    assert!(stopped.iter().any(|c| c["results"].as_array().unwrap().iter().any(|r| r["verdict"] == "unknown")));
    let table = mcp_once!().args(["matrix", "--profile", "mcp-2025-11-25", "--max-states", "400"]).output().unwrap();
    assert!(text(&table.stdout).contains("stopped at its budget"), "{}", text(&table.stdout));
}

#[test]
fn a_bad_size_is_rejected_naming_the_flag() {
    let out = check(&SAFE, &["--max-memory", "4X"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--max-memory") && err.contains("4X"), "{err}");
}

/// The JSON of a check without its wall times.
fn without_seconds(mut v: Value) -> Value {
    v["stats"]["seconds"] = Value::Null;
    for r in v["results"].as_array_mut().unwrap() {
        r["seconds"] = Value::Null;
    }
    v
}

#[test]
fn a_search_spilled_to_disk_reports_what_the_search_in_memory_reports() {
    let dir = scratch!("budget", "spill");
    let memory = check(&SAFE, &["--worst"]);
    assert_eq!(memory.status.code(), Some(1), "other properties are violated: {}", text(&memory.stderr));
    // A memory budget of one byte: the search moves to disk at its first reading.
    let spilled = mcp_once!()
        .arg("check")
        .args(SAFE)
        .args(["--worst", "--format", "json", "--max-memory", "1", "--spill-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(spilled.status.code(), Some(1), "{}", text(&spilled.stderr));
    assert_eq!(without_seconds(json(&spilled)), without_seconds(json(&memory)));
    let err = text(&spilled.stderr);
    assert!(err.contains("went on on disk") && err.contains("written in all"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "files left in the spill folder: {left:?}");
}

#[test]
fn a_spilled_search_stops_at_the_disk_budget_with_what_it_decided() {
    let dir = scratch!("budget", "spill-disk");
    let out = mcp_once!()
        .arg("check")
        .args(LARGE)
        .args(["--worst", "--format", "json", "--max-memory", "1", "--max-disk", "4M", "--spill-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("disk budget of 4 MiB") && err.contains("--max-disk"), "{err}");
    let v = json(&out);
    assert_eq!(v["search"], "stopped");
    assert!(v["stopped"]["reason"].as_str().unwrap().contains("disk budget"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "files left in the spill folder");
}

#[test]
fn a_spill_folder_that_is_not_one_is_rejected_in_one_line() {
    let out = check(&SAFE, &["--spill-dir", "/nonexistent/mcp-once-spill"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--spill-dir") && err.contains("not a folder"), "{err}");
}

/// `explain`'s search for a fix takes the same budget flags: a memory budget of one byte
/// leaves every candidate undecided (no fix proven), and with `--spill-dir` the candidates'
/// searches go on on disk and prove the fixes the search in memory proves: the same report.
#[test]
fn explain_searches_its_fix_on_disk_with_spill_dir() {
    let dir = scratch!("budget", "explain-spill");
    let spill = dir.path().join("spill");
    std::fs::create_dir(&spill).unwrap();
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-timeout"])
        .args(["--server", "plain", "--calls", "1", "--retries", "1", "--crashes", "0", "--property", "at-most-once"])
        .arg("--out")
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let trace = mcp_once_testkit::trace_in(dir.path(), "at-most-once");
    let explain = |extra: &[&str]| {
        let out = mcp_once!().arg("explain").arg(&trace).args(extra).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{extra:?}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    let memory = explain(&[]);
    assert!(memory.contains("### Suggested fix"), "{memory}");
    let starved = explain(&["--max-memory", "1"]);
    assert_ne!(starved, memory, "a budget of one byte decides no fix");
    let spilled = explain(&["--max-memory", "1", "--spill-dir", spill.to_str().unwrap()]);
    assert_eq!(spilled, memory);
    assert_eq!(std::fs::read_dir(&spill).unwrap().count(), 0, "files left in the spill folder");
    let out =
        mcp_once!().arg("explain").arg(&trace).args(["--spill-dir", "/nonexistent/mcp-once-spill"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stderr).lines().count(), 1, "{}", text(&out.stderr));
}

/// The searches a matrix runs at once share `--max-disk`: each one on disk stops at its share,
/// so that their files together stay within the budget.
#[test]
fn the_matrix_searches_on_disk_share_the_disk_budget() {
    let dir = scratch!("budget", "spill-shared");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let out = mcp_once!()
        .args(["matrix", "--profile", "mcp-2025-11-25", "--shard", "1/10", "--format", "json"])
        .args(["--max-memory", "1", "--max-disk", "64K", "--spill-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let v = json(&out);
    // Not-applicable cells run no search.
    let cells: Vec<&Value> = v["cells"].as_array().unwrap().iter().filter(|c| c["search"].is_string()).collect();
    let shared_by = threads.min(cells.len());
    let reasons: Vec<&str> =
        cells.iter().filter(|c| c["search"] == "stopped").map(|c| c["stopped"]["reason"].as_str().unwrap()).collect();
    assert!(!reasons.is_empty(), "no cell reached the disk budget: {}", text(&out.stderr));
    for r in reasons {
        if shared_by > 1 {
            let share = format!("the disk budget of {} KiB would be passed", 64 / shared_by);
            assert!(r.contains(&share), "{r}");
            assert!(r.contains(&format!("share of --max-disk, which {shared_by} searches at once share")), "{r}");
        } else {
            assert!(r.contains("the disk budget of 64 KiB would be passed") && r.ends_with("--max-disk)"), "{r}");
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "files left in the spill folder");
}

#[test]
fn max_depth_checks_the_states_within_it_and_leaves_the_rest_unknown() {
    // The whole search finds at-most-once violated in some number of steps.
    let whole = json(&check(&LARGE, &["--property", "at-most-once"]));
    let steps = at_most_once(&whole)["trace"]["steps"].as_u64().unwrap();
    // Bounded one step short of it: no violation within the bound, so unknown, exit 2.
    let short = (steps - 1).to_string();
    let out = check(&LARGE, &["--property", "at-most-once", "--max-depth", &short]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains(&format!("depth bound of {short} steps")) && err.contains("--max-depth"), "{err}");
    let v = json(&out);
    assert_eq!(v["search"], "stopped");
    assert_eq!(v["stopped"]["depth_completed"].as_u64(), Some(steps - 1));
    assert_eq!(v["stats"]["depth"].as_u64(), Some(steps - 1), "no state past the bound was checked");
    assert_eq!(at_most_once(&v)["verdict"], "unknown");
    // Bounded at its length: the same shortest counterexample.
    let out = check(&LARGE, &["--property", "at-most-once", "--max-depth", &steps.to_string()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v = json(&out);
    assert_eq!(at_most_once(&v)["verdict"], "violated");
    assert_eq!(at_most_once(&v)["trace"]["steps"], at_most_once(&whole)["trace"]["steps"]);
}
