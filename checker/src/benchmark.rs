//! The benchmark harness behind `mcp-once bench`: how fast the model checker is, and how much
//! memory it takes.
//!
//! Five parts: named cells searched one at a time (states generated and unique, depth, wall
//! time, states per second, peak memory, bytes per unique state); the default matrix as
//! `mcp-once check` runs it (wall time, with the slowest cells); how the safe SEP-3182 cell
//! grows with calls, retries and crashes; the largest cells within the CLI's bounds, each
//! searched until it ends or reaches its memory budget; and the SDK replays. Nothing here is a
//! pass/fail test: figures depend on the machine and on what else it runs.
//!
//! Peak memory is the process's resident high-water mark (`VmHWM` in `/proc/self/status`),
//! reset before each cell through `/proc/self/clear_refs`; where that reset is refused the
//! figure is the peak so far and is marked as such. Each named cell is searched in a fresh
//! process of this binary (`mcp-once bench --one`), so that its peak is its own.

use crate::args::default_memory;
use crate::cells::{builtins, run_cells, threads, with_profiles, Cell, Checked};
use crate::report::bench::{
    BenchReport, CellRun, Machine, MatrixCell, MatrixRun, ReplayRun, ReplayTime, ThreadComparison,
};
use anyhow::{anyhow, Result};
use clap::ValueEnum;
use mcp_once_model::catalogue::{keyed_safe_cell, matrix};
use mcp_once_model::state::{MAX_ATTEMPTS, MAX_CALLS, MAX_CRASHES};
use mcp_once_model::{
    explore_with, Bounds, Budget, ClientPolicy, Config, End, KeyLifetime, McpModel, Options, Profile, PropertyKind,
    ServerImpl, Transport, Verdict,
};
use std::time::Instant;

/// What a bench run measures.
pub struct Plan {
    /// A run of a few seconds: no 3-call cell, a smaller growth table, the matrix at one call
    /// per cell, no largest cells and no replays unless asked for by `only`.
    pub quick: bool,
    /// One part only.
    pub only: Option<Part>,
    /// Memory budget of each of the largest cells and of each growth row (default: 4 GiB, or
    /// 3/4 of the memory available if that is less).
    pub max_memory: Option<u64>,
    /// Where those searches go on on disk at their memory budget, instead of stopping.
    pub spill_dir: Option<std::path::PathBuf>,
    /// With `spill_dir`: the most their files may take (default: 3/4 of the space free there).
    pub max_disk: Option<u64>,
}

/// The budget of one search run by [`run_one`]: none, or memory (and disk, if it may spill).
#[derive(Clone, Default)]
struct CellBudget {
    /// The memory budget.
    max_memory: Option<u64>,
    /// Where it goes on on disk at the memory budget.
    spill_dir: Option<std::path::PathBuf>,
    /// The disk budget.
    max_disk: Option<u64>,
}

/// The default budget of each of the largest cells.
const LARGEST_MEMORY: u64 = 4 << 30;

/// The parts of a bench run.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Part {
    /// The named cells.
    Cells,
    /// The default matrix.
    Matrix,
    /// The growth table.
    Growth,
    /// The largest cells within the CLI's bounds, each until it ends or reaches its budget.
    Largest,
    /// Replaying the four scenarios on the three SDK fixtures, both transports.
    Replay,
}

/// Replay the four scenarios (`catalogue::RETRY_SCENARIOS` on stdio and HTTP) against the three
/// SDK fixtures, one SDK per thread, scenarios in turn; servers start inside the measured time.
fn run_replays() -> Result<ReplayRun> {
    use mcp_once_conformance::replay::evidence::Evidence;
    use mcp_once_conformance::replay::sdk_fixtures::{scenario_trace, FixturePaths, Sdk};
    use mcp_once_model::catalogue::RETRY_SCENARIOS;
    let exe = std::env::current_exe()?;
    let paths = FixturePaths {
        fixtures_dir: mcp_once_conformance::installed::locate(None),
        rust_fixture: vec![exe.display().to_string(), "fixture".into(), "--sdk".into(), "rust".into()],
    };
    for sdk in Sdk::ALL {
        if let Err(e) = paths.argv(sdk, std::path::Path::new("x"), &[]) {
            return Ok(ReplayRun {
                skipped: Some(format!(
                    "not measured: {e} (run from the repository root, or after mcp-once fixtures install)"
                )),
                ..Default::default()
            });
        }
    }
    let scratch = std::env::temp_dir().join(format!("mcp-once-bench-replay-{}", std::process::id()));
    let started = Instant::now();
    let per_sdk = std::thread::scope(|scope| {
        let handles: Vec<_> = Sdk::ALL
            .iter()
            .map(|&sdk| {
                let (paths, scratch) = (&paths, &scratch);
                scope.spawn(move || -> Result<Vec<ReplayTime>> {
                    let mut out = Vec::new();
                    for transport in [Transport::Stdio, Transport::Http] {
                        for sc in &RETRY_SCENARIOS {
                            let (trace, profile) =
                                scenario_trace(sc, sdk, transport).map_err(|e| anyhow::anyhow!(e))?;
                            let dir = scratch.join(format!("{}-{}-{}", sdk.as_str(), transport.as_str(), sc.name));
                            std::fs::create_dir_all(&dir)?;
                            let mut opts = paths.options(sdk, transport, &dir, &[]).map_err(|e| anyhow::anyhow!(e))?;
                            opts.evidence_dir = None;
                            let t = Instant::now();
                            let r = mcp_once_conformance::replay::block_on(mcp_once_conformance::replay::replay(
                                &trace,
                                sc.name,
                                profile,
                                opts,
                                Evidence::new(None)?,
                            ))?;
                            out.push(ReplayTime {
                                sdk: sdk.as_str(),
                                transport: transport.as_str(),
                                scenario: sc.name,
                                verdict: r.verdict.to_string(),
                                effects: r.observed_effects,
                                seconds: t.elapsed().as_secs_f64(),
                            });
                        }
                    }
                    Ok(out)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a replay thread")).collect::<Vec<_>>()
    });
    let wall_seconds = started.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&scratch);
    let mut runs = Vec::new();
    for r in per_sdk {
        runs.extend(r?);
    }
    Ok(ReplayRun { skipped: None, runs, wall_seconds })
}

/// The machine this runs on.
fn machine() -> Machine {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu_model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name").map(|v| v.trim_start_matches([' ', '\t', ':']).to_string()))
        .unwrap_or_else(|| "unknown".into());
    let ram_mib = status_kib("/proc/meminfo", "MemTotal:").unwrap_or(0) / 1024;
    let rustc = std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map_or_else(|| "unknown (no rustc on PATH)".into(), |s| s.trim().to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    Machine { cpus, cpu_model, ram_mib, rustc }
}

/// A `Key: N kB` line of a /proc file, in KiB.
fn status_kib(file: &str, key: &str) -> Option<u64> {
    let text = std::fs::read_to_string(file).ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    line[key.len()..].split_whitespace().next()?.parse().ok()
}

/// Reset the resident high-water mark; false where the kernel refuses.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// A built-in profile by name.
fn profile(name: &str) -> Profile {
    builtins().into_iter().find(|p| p.name == name).expect("built-in profile")
}

/// Search one cell in a fresh process of this binary (so that its peak memory is its own) and
/// read back its figures; within `budget`, the search stops (or goes on on disk) before
/// passing its memory budget.
fn run_one(name: &str, config: Config, budget: &CellBudget) -> Result<CellRun> {
    let exe = std::env::current_exe()?;
    let mut command = std::process::Command::new(exe);
    command.args(["bench", "--one", &serde_json::to_string(&config)?]);
    if let Some(bytes) = budget.max_memory {
        command.args(["--max-memory", &bytes.to_string()]);
    }
    if let Some(dir) = &budget.spill_dir {
        command.arg("--spill-dir").arg(dir);
    }
    if let Some(bytes) = budget.max_disk {
        command.args(["--max-disk", &bytes.to_string()]);
    }
    let out = command.stderr(std::process::Stdio::inherit()).output()?;
    if !out.status.success() {
        return Err(anyhow!("bench of {config} failed ({})", out.status));
    }
    let mut run: CellRun = serde_json::from_slice(&out.stdout)?;
    run.name = name.to_string();
    Ok(run)
}

/// Search one cell alone in this process, every property and the worst case, within
/// `budget`, and measure it.
fn measure(name: &str, config: Config, budget: Budget) -> Result<CellRun> {
    let p = profile(&config.profile);
    let model = McpModel::new(config.clone(), p).map_err(|e| anyhow!(e))?;
    let before = status_kib("/proc/self/status", "VmRSS:").unwrap_or(0);
    let reset = reset_peak();
    let started = Instant::now();
    let e = explore_with(&model, PropertyKind::ALL, Options { worst: true, budget, threads: 1 });
    let seconds = started.elapsed().as_secs_f64();
    let peak = status_kib("/proc/self/status", "VmHWM:").unwrap_or(0);
    let grown = peak.saturating_sub(if reset { before } else { 0 });
    let s = e.stats;
    let amo = e.results.iter().find(|r| r.property == PropertyKind::AtMostOnce).expect("checked");
    Ok(CellRun {
        name: name.to_string(),
        config: config.to_string(),
        generated: s.generated,
        unique: s.states,
        depth: s.depth,
        seconds,
        states_per_second: s.generated as f64 / seconds.max(1e-9),
        peak_rss_mib: peak as f64 / 1024.0,
        bytes_per_state: grown as f64 * 1024.0 / s.states.max(1) as f64,
        disk_peak_mib: e.spilled.map(|d| d.peak_bytes as f64 / (1024.0 * 1024.0)),
        at_most_once: verdict_name(amo.verdict).into(),
        end: match e.end {
            End::Exhaustive => "exhaustive".into(),
            End::Answered => "answered".into(),
            End::Stopped { why, depth_completed } => format!("stopped at depth {depth_completed}: {why}"),
        },
        fingerprint_bits: s.fingerprint_bits,
        collision_probability: s.collision_probability(),
    })
}

/// A verdict as the reports write it.
fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Holds => "holds",
        Verdict::Violated => "violated",
        Verdict::Unknown => "unknown",
    }
}

/// The largest cells within the CLI's bounds (the model's most calls, retries or re-runs and
/// crashes): the framework's re-runs over HTTP (where the state space grows fastest) with each
/// server behaviour, under the revision or proposal that has it; and c3 r2 k1 of the durable id
/// table under 2026-07-28, whose unbudgeted search the kernel killed at 24 GB (BENCHMARKS.md).
fn largest_cells() -> Vec<(String, Config)> {
    let max = Bounds { calls: MAX_CALLS as u8, retries: MAX_ATTEMPTS as u8 - 1, crashes: MAX_CRASHES };
    let tag = format!("c{} r{} k{}", max.calls, max.retries, max.crashes);
    let cell = |profile: &str, key: KeyLifetime, server: ServerImpl, bounds| {
        let b = Config::builder(profile).transport(Transport::Http).client(ClientPolicy::FrameworkRetry);
        b.key(key).server(server).bounds(bounds).build()
    };
    let mut cells = vec![(
        "dedup-by-id-durable: c3 r2 k1".to_string(),
        cell(
            "mcp-2026-07-28",
            KeyLifetime::None,
            ServerImpl::DedupByIdDurable,
            Bounds { calls: 3, retries: 2, crashes: 1 },
        ),
    )];
    for server in [ServerImpl::Plain, ServerImpl::HonoursCancel, ServerImpl::DedupById, ServerImpl::DedupByIdDurable] {
        cells.push((format!("{server}: {tag}"), cell("mcp-2026-07-28", KeyLifetime::None, server, max)));
    }
    for server in [ServerImpl::KeyVolatile, ServerImpl::KeyDurable, ServerImpl::KeyAfterEffect, ServerImpl::KeyExpiring]
    {
        cells.push((format!("{server}: {tag}"), cell("sep-3182", KeyLifetime::PerStep, server, max)));
    }
    cells
}

/// The default matrix (one call per cell when `quick`), on `threads` threads: its cells and
/// its wall time.
fn timed_matrix(quick: bool, threads: usize) -> Result<(Vec<Cell>, f64)> {
    let profiles = builtins();
    let mut cells = matrix(&profiles);
    if quick {
        cells.iter_mut().for_each(|c| c.bounds.calls = 1);
    }
    let configs = with_profiles(cells, &profiles);
    let started = Instant::now();
    let options =
        Options { worst: true, budget: Budget { max_memory: default_memory(), ..Budget::default() }, threads: 1 };
    let cells = run_cells(configs, PropertyKind::ALL, options, None, threads, &|| {})?;
    Ok((cells, started.elapsed().as_secs_f64()))
}

/// The JSON `matrix --format json` prints for `cells`, its times taken out: what two runs must
/// agree on.
fn answers(cells: &[Cell]) -> serde_json::Value {
    fn drop_times(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| !k.ends_with("seconds"));
                m.values_mut().for_each(drop_times);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(drop_times),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(crate::report::json::MatrixRecord::of(cells)).expect("a matrix record is JSON");
    drop_times(&mut v);
    v
}

/// Run the default matrix (one call per cell when `quick`) and time it: alternately on one
/// thread and on every core (two rounds each, one with `quick`), so both meet the same load,
/// and compare their answers.
fn run_matrix(quick: bool) -> Result<MatrixRun> {
    let threads = threads();
    let rounds = if quick { 1 } else { 2 };
    let mut one_thread = Vec::new();
    let mut every_core = Vec::new();
    let mut same_answers = true;
    let mut last = None;
    for _ in 0..rounds {
        let (cells, seconds) = if threads > 1 { timed_matrix(quick, 1)? } else { (Vec::new(), 0.0) };
        let (all, all_seconds) = timed_matrix(quick, threads)?;
        if threads > 1 {
            same_answers &= answers(&cells) == answers(&all);
            one_thread.push(seconds);
        }
        every_core.push(all_seconds);
        last = Some(all);
    }
    let cells = last.expect("at least one round");
    let seconds = every_core.iter().copied().fold(f64::INFINITY, f64::min);
    let threads_compared = (threads > 1).then_some(ThreadComparison { one_thread, every_core, same_answers });
    let checked: Vec<&Checked> = cells.iter().filter_map(|c: &Cell| c.outcome.as_ref().ok()).collect();
    let own = |k: &&&Checked| !k.shared;
    let mut slowest: Vec<MatrixCell> = checked
        .iter()
        .filter(own)
        .map(|k| MatrixCell {
            config: k.model.config.to_string(),
            unique: k.stats.states,
            search_seconds: k.stats.seconds,
            verify_seconds: k.verify_seconds,
        })
        .collect();
    slowest.sort_by(|a, b| (b.search_seconds + b.verify_seconds).total_cmp(&(a.search_seconds + a.verify_seconds)));
    slowest.truncate(8);
    Ok(MatrixRun {
        what: if quick {
            "default matrix at 1 call per cell (--quick)".into()
        } else {
            "default matrix, as `mcp-once check` runs it".into()
        },
        cells: cells.len(),
        checked: checked.len(),
        searches: checked.iter().filter(own).count(),
        threads,
        seconds,
        threads_compared,
        search_seconds: checked.iter().filter(own).map(|k| k.stats.seconds).sum(),
        verify_seconds: checked.iter().map(|k| k.verify_seconds).sum(),
        slowest,
    })
}

/// The number of calls the growth table goes up to: the model's largest (`MAX_CALLS`, what
/// `--calls` accepts), or 2 with `quick`.
pub fn growth_calls(quick: bool) -> u8 {
    if quick {
        2.min(MAX_CALLS as u8)
    } else {
        MAX_CALLS as u8
    }
}

/// The safe cell at growing bounds, each point in its own process within `budget` (so that
/// the largest ends, partial, rather than runs away).
fn growth(quick: bool, budget: &CellBudget) -> Result<Vec<CellRun>> {
    let mut rows = Vec::new();
    let base = Bounds { calls: 2, retries: 2, crashes: 1 };
    let mut seen = Vec::new();
    let mut points = Vec::new();
    for calls in 1..=growth_calls(quick) {
        points.push(("calls", Bounds { calls, ..base }));
    }
    for retries in if quick { 0..=2 } else { 0..=MAX_ATTEMPTS as u8 - 1 } {
        points.push(("retries", Bounds { retries, ..base }));
    }
    for crashes in if quick { 0..=1 } else { 0..=MAX_CRASHES } {
        points.push(("crashes", Bounds { crashes, ..base }));
    }
    for (what, b) in points {
        if seen.contains(&b) {
            continue;
        }
        seen.push(b);
        let name = format!("{what}: c{} r{} k{}", b.calls, b.retries, b.crashes);
        rows.push(run_one(&name, keyed_safe_cell(b), budget)?);
    }
    Ok(rows)
}

/// Search one configuration in this process within `budget` and return its figures
/// (`mcp-once bench --one`, what [`run_one`] runs in a fresh process).
pub fn measure_here(config: Config, budget: Budget) -> Result<CellRun> {
    measure("", config, budget)
}

/// Run the parts `plan` asks for.
pub fn bench(plan: &Plan) -> Result<BenchReport> {
    let machine = machine();
    let part = |p: Part| plan.only.is_none_or(|o| o == p);
    let mut cells = Vec::new();
    if part(Part::Cells) {
        let none = CellBudget::default();
        cells.push(run_one("safe cell, 2 calls", keyed_safe_cell(Bounds { calls: 2, retries: 2, crashes: 1 }), &none)?);
        if !plan.quick {
            cells.push(run_one(
                "safe cell, 3 calls",
                keyed_safe_cell(Bounds { calls: 3, retries: 2, crashes: 1 }),
                &none,
            )?);
        }
    }
    let matrix = if part(Part::Matrix) { Some(run_matrix(plan.quick)?) } else { None };
    let budget = CellBudget {
        max_memory: Some(
            plan.max_memory.unwrap_or_else(|| default_memory().map_or(LARGEST_MEMORY, |d| d.min(LARGEST_MEMORY))),
        ),
        spill_dir: plan.spill_dir.clone(),
        max_disk: plan.max_disk,
    };
    let growth = if part(Part::Growth) { growth(plan.quick, &budget)? } else { Vec::new() };
    // The largest cells take minutes each: not in a quick run unless asked for by name.
    let mut largest = Vec::new();
    if plan.only == Some(Part::Largest) || (plan.only.is_none() && !plan.quick) {
        for (name, config) in largest_cells() {
            largest.push(run_one(&name, config, &budget)?);
        }
    }
    // The replay part needs the installed fixtures and takes tens of seconds: not in a quick
    // run unless asked for by name.
    let replay = if plan.only == Some(Part::Replay) || (plan.only.is_none() && !plan.quick) {
        run_replays()?
    } else {
        ReplayRun {
            skipped: Some("not run (--quick or --only); run `mcp-once bench --only replay`".into()),
            ..Default::default()
        }
    };
    Ok(BenchReport { quick: plan.quick, machine, cells, matrix, growth, largest, replay })
}
