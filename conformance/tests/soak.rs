//! Soak: many replays back to back from one runner process (the library API, a fresh session
//! each time, one tokio runtime) against the Rust ledger fixture over stdio, scenario 1 with a
//! 50 ms window. The runner's open file descriptors and its live (or unreaped) child processes
//! are counted before and after; nothing may grow, and every run must confirm the trace.
//!
//! The normal suite runs 30 (`MCP_ONCE_SOAK_RUNS` overrides); `soak_300` (ignored by default)
//! runs 300: `cargo test --release -p mcp-once-conformance --test soak -- --ignored --nocapture`.

use mcp_once_conformance::replay::evidence::Evidence;
use mcp_once_conformance::replay::observer::Observer;
use mcp_once_conformance::replay::process::LaunchSpec;
use mcp_once_conformance::replay::{replay, KeyAt, ReplayOptions, ReplayVerdict, Revision, Target};
use mcp_once_model::search::check_property;
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl};
use mcp_once_testkit::process::group_alive;
use mcp_once_testkit::scratch;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

const FIXTURE: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

fn scenario_1() -> (TraceFile, Profile) {
    let profile = Profile::load("mcp-2025-11-25").expect("profile");
    let config = Config::builder(&profile.name).key(KeyLifetime::None).server(ServerImpl::Plain).crashes(0).build();
    let model = McpModel::new(config, profile.clone()).expect("applicable");
    let path = check_property(&model, PropertyKind::AtMostOnce).counterexample.expect("a counterexample");
    (TraceFile::from_counterexample(&model, TraceKind::Counterexample(PropertyKind::AtMostOnce), &path, false), profile)
}

/// Open file descriptors of this process.
fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd").count()
}

/// Processes whose parent is this process (running or zombie), as `pid state`.
fn children() -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        // A process may exit while we read; skip it then.
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        // Fields after the command (which may hold spaces) start after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.get(1) == Some(&me.as_str()) {
            out.push(format!("{name} {}", fields[0]));
        }
    }
    out
}

/// The counters see what they count: one more fd for an open file, one more child for a
/// started process, and neither once they are closed and reaped.
fn check_the_counters() {
    let (fds, kids) = (open_fds(), children().len());
    let f = std::fs::File::open("/proc/self/stat").expect("open");
    assert_eq!(open_fds(), fds + 1);
    drop(f);
    let mut child = std::process::Command::new(FIXTURE)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn");
    assert_eq!(children().len(), kids + 1);
    child.kill().expect("kill");
    child.wait().expect("reap");
    assert_eq!((open_fds(), children().len()), (fds, kids));
}

/// The counts are per process: soaks in one test binary run one at a time.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn soak(runs: usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    check_the_counters();
    let (trace, profile) = scenario_1();
    let dir = scratch!("soak", "ledgers");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let (fds_before, children_before) = (open_fds(), children());
    let mut walls = Vec::with_capacity(runs);
    let started = Instant::now();
    for i in 0..runs {
        // A fresh ledger each run, so each run's count is its own.
        let ledger = dir.join(format!("ledger-{i}.jsonl"));
        let opts = ReplayOptions {
            target: Target::Stdio(LaunchSpec {
                argv: vec![FIXTURE.into(), "--ledger".into(), ledger.display().to_string()],
                ..Default::default()
            }),
            tool: "charge".into(),
            args: json!({"amount": 42}).as_object().cloned().expect("object"),
            key_at: KeyAt::Params,
            observer: Observer::ledger(ledger.clone()),
            revision: Some(Revision::R2025_11_25),
            step_timeout: Duration::from_secs(10),
            start_timeout: Duration::from_secs(20),
            window: Duration::from_millis(50),
            stop_grace: Duration::from_secs(3),
            pace: true,
            hold_args: None,
            evidence_dir: None,
            key_retention: None,
            skip_non_json: false,
            more_instances: Vec::new(),
            command: None,
        };
        let evidence = Evidence::new(None).expect("evidence");
        let result = rt.block_on(replay(&trace, "scenario-1", profile.clone(), opts, evidence.clone()));
        assert_eq!(result.verdict, ReplayVerdict::Confirmed, "run {i}: {}", result.to_json());
        assert_eq!(result.observed_effects, Some(2), "run {i}");
        walls.push(result.wall_ms);
        for pid in evidence.records().iter().filter_map(|r| r.started_pid()) {
            let pgid = pid as i32;
            assert!(!group_alive(pgid), "run {i}: process group {pgid} outlived its replay");
        }
        let _ = std::fs::remove_file(&ledger);
    }
    let total = started.elapsed();
    let (fds_after, children_after) = (open_fds(), children());
    walls.sort_by(f64::total_cmp);
    let value: Value = json!({
        "runs": runs,
        "confirmed": runs,
        "total_s": (total.as_secs_f64() * 10.0).round() / 10.0,
        "wall_ms": {"min": walls[0], "median": walls[runs / 2], "max": walls[runs - 1]},
        "fds": {"before": fds_before, "after": fds_after},
        "children": {"before": children_before.len(), "after": children_after.len()},
    });
    eprintln!("FIGURE soak {value}");
    assert_eq!(fds_after, fds_before, "open file descriptors grew over {runs} replays");
    assert_eq!(children_after, children_before, "child processes left over {runs} replays");
}

#[test]
fn soak_default() {
    let runs = std::env::var("MCP_ONCE_SOAK_RUNS")
        .ok()
        .map(|v| v.parse().expect("MCP_ONCE_SOAK_RUNS is a number"))
        .unwrap_or(30);
    soak(runs);
}

#[test]
#[ignore = "300 replays (under a minute); run with --ignored"]
fn soak_300() {
    soak(300);
}
