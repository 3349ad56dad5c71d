//! `bench`: what one run measured (the JSON it prints is these types, serialised in field
//! order), and the same as text tables.

use crate::report::plot::GrowthPoint;
use serde::{Deserialize, Serialize};

/// The machine the figures come from.
#[derive(Serialize)]
pub struct Machine {
    /// Cores available to this process.
    pub cpus: usize,
    /// The CPU's model name (`/proc/cpuinfo`).
    pub cpu_model: String,
    /// Memory, in MiB.
    pub ram_mib: u64,
    /// `rustc --version`.
    pub rustc: String,
}

/// One cell searched on its own.
#[derive(Serialize, Deserialize)]
pub struct CellRun {
    /// What the row is (`safe cell, 2 calls`, `calls: c1 r2 k1`).
    pub name: String,
    /// The configuration, as flags.
    pub config: String,
    /// States generated, repeats included.
    pub generated: usize,
    /// Unique states.
    pub unique: usize,
    /// Largest depth.
    pub depth: usize,
    /// Wall time of the search.
    pub seconds: f64,
    /// Generated states per second.
    pub states_per_second: f64,
    /// Peak resident memory, MiB.
    pub peak_rss_mib: f64,
    /// Memory grown per unique state.
    pub bytes_per_state: f64,
    /// Most bytes the search's files on disk took at once, MiB (absent: it stayed in memory,
    /// as it does without `--spill-dir`).
    #[serde(default)]
    pub disk_peak_mib: Option<f64>,
    /// `holds`, `violated` or `unknown` (the search stopped before deciding it).
    pub at_most_once: String,
    /// How the search ended: `exhaustive`, `answered`, or `stopped at depth N: WHY` (the
    /// budget).
    pub end: String,
    /// Bits of the fingerprints the states were remembered by.
    #[serde(default)]
    pub fingerprint_bits: u32,
    /// Past a million states: the estimated chance that two states shared a fingerprint.
    #[serde(default)]
    pub collision_probability: Option<f64>,
}

/// The default matrix as `check` runs it.
#[derive(Serialize)]
pub struct MatrixRun {
    /// Which matrix (full, or `--quick`'s one call per cell).
    pub what: String,
    /// Cells in it.
    pub cells: usize,
    /// Cells that apply and were checked.
    pub checked: usize,
    /// Searches run (cells sharing one search count once).
    pub searches: usize,
    /// Threads the cells ran on.
    pub threads: usize,
    /// Wall time on every core (the fastest round).
    pub seconds: f64,
    /// The same matrix on one thread and on every core, alternately (absent on one core).
    pub threads_compared: Option<ThreadComparison>,
    /// Search time, summed over threads.
    pub search_seconds: f64,
    /// Time of the independent length checks, summed over threads.
    pub verify_seconds: f64,
    /// The slowest cells, slowest first.
    pub slowest: Vec<MatrixCell>,
}

/// The default matrix on one thread against every core, measured alternately in one run.
#[derive(Serialize)]
pub struct ThreadComparison {
    /// Wall time of each round on one thread.
    pub one_thread: Vec<f64>,
    /// Wall time of each round on every core, after the one-thread round.
    pub every_core: Vec<f64>,
    /// Whether every round's JSON, its times taken out, was the same on one thread as on
    /// every core.
    pub same_answers: bool,
}

impl ThreadComparison {
    /// How many times faster every core was than one thread: the median of the rounds' ratios.
    pub fn speedup(&self) -> f64 {
        let mut r: Vec<f64> = self.one_thread.iter().zip(&self.every_core).map(|(a, b)| a / b.max(1e-9)).collect();
        r.sort_by(f64::total_cmp);
        match r.len() {
            0 => 1.0,
            n if n % 2 == 1 => r[n / 2],
            n => (r[n / 2 - 1] + r[n / 2]) / 2.0,
        }
    }
}

/// One cell of a matrix run.
#[derive(Serialize)]
pub struct MatrixCell {
    /// The configuration, as flags.
    pub config: String,
    /// Unique states.
    pub unique: usize,
    /// Search time.
    pub search_seconds: f64,
    /// Length-check time.
    pub verify_seconds: f64,
}

/// Everything one bench run measured.
#[derive(Serialize)]
pub struct BenchReport {
    /// Whether this was a `--quick` run.
    pub quick: bool,
    /// The machine.
    pub machine: Machine,
    /// The named cells.
    pub cells: Vec<CellRun>,
    /// The default matrix, if run.
    pub matrix: Option<MatrixRun>,
    /// The growth table.
    pub growth: Vec<CellRun>,
    /// The largest cells within the CLI's bounds, each searched until it ended or reached its
    /// memory budget (empty if not run).
    pub largest: Vec<CellRun>,
    /// The replays.
    pub replay: ReplayRun,
}

/// One replay's time.
#[derive(Serialize)]
pub struct ReplayTime {
    /// The SDK fixture.
    pub sdk: &'static str,
    /// stdio or http.
    pub transport: &'static str,
    /// The scenario's name.
    pub scenario: &'static str,
    /// The replay's verdict.
    pub verdict: String,
    /// Effects observed.
    pub effects: Option<i64>,
    /// Wall time, server start included.
    pub seconds: f64,
}

/// The replay part: each scenario on each SDK and transport, the three SDKs at once.
#[derive(Serialize, Default)]
pub struct ReplayRun {
    /// Why it was not measured, if it was not.
    pub skipped: Option<String>,
    /// One entry per replay.
    pub runs: Vec<ReplayTime>,
    /// Wall time of the whole part.
    pub wall_seconds: f64,
}

impl CellRun {
    /// Whether the search stopped at its budget before it ended: its figures are lower bounds.
    pub fn partial(&self) -> bool {
        self.end.starts_with("stopped")
    }

    /// The number after `--calls` in the configuration.
    fn calls(&self) -> Option<u32> {
        self.config.split("--calls ").nth(1)?.split(' ').next()?.parse().ok()
    }
}

/// The growth table's rows that vary the calls (named `calls: ...`), as points to plot,
/// fewest calls first.
pub fn calls_growth(rows: &[CellRun]) -> Vec<GrowthPoint> {
    let mut points: Vec<GrowthPoint> = rows
        .iter()
        .filter(|r| r.name.starts_with("calls:"))
        .filter_map(|r| {
            Some(GrowthPoint {
                calls: r.calls()?,
                states: r.unique as f64,
                seconds: r.seconds,
                peak_mib: r.peak_rss_mib,
                partial: r.partial(),
            })
        })
        .collect();
    points.sort_by_key(|p| p.calls);
    points
}

/// The table of searched cells.
fn table(rows: &[CellRun]) -> String {
    let mut out = format!(
        "  {:<30} {:>11} {:>10} {:>5} {:>8} {:>11} {:>9} {:>8} {:>9} {:>4} {:>8} {:>8}  {}\n",
        "cell",
        "generated",
        "unique",
        "depth",
        "wall s",
        "states/s",
        "peak MiB",
        "B/state",
        "disk MiB",
        "fp",
        "P(coll)",
        "end",
        "at-most-once"
    );
    for r in rows {
        // The collision estimate past a million states (below it, it is negligible even at 64 bits).
        let collision = r.collision_probability.map_or("-".to_string(), |p| format!("{p:.0e}"));
        let disk = r.disk_peak_mib.map_or("-".to_string(), |d| format!("{d:.1}"));
        let end = match r.end.as_str() {
            "exhaustive" => "done",
            "answered" => "answered",
            _ => "partial",
        };
        out.push_str(&format!(
            "  {:<30} {:>11} {:>10} {:>5} {:>8.2} {:>11.0} {:>9.1} {:>8.1} {:>9} {:>4} {:>8} {:>8}  {}\n",
            r.name,
            r.generated,
            r.unique,
            r.depth,
            r.seconds,
            r.states_per_second,
            r.peak_rss_mib,
            r.bytes_per_state,
            disk,
            r.fingerprint_bits,
            collision,
            end,
            r.at_most_once
        ));
    }
    out
}

/// The whole run for a terminal.
pub fn bench_text(r: &BenchReport) -> String {
    let m = &r.machine;
    let mut out = format!(
        "mcp-once bench{}: {} CPUs ({}), {} MiB RAM, {}\n\ncells, each searched alone (every property, one thread):\n",
        if r.quick { " --quick" } else { "" },
        m.cpus,
        m.cpu_model,
        m.ram_mib,
        m.rustc
    );
    if r.cells.is_empty() {
        out.push_str("  (not run)\n");
    } else {
        out.push_str(&table(&r.cells));
    }
    for c in &r.cells {
        out.push_str(&format!("  {}: {}\n", c.name, c.config));
    }
    if let Some(x) = &r.matrix {
        out.push_str(&format!(
        "\n{}: {} cells, {} checked, {} searches on {} threads: {:.2} s wall (searches {:.2} s, length checks {:.2} s, summed over threads)\n",
        x.what, x.cells, x.checked, x.searches, x.threads, x.seconds, x.search_seconds, x.verify_seconds
    ));
        if let Some(t) = &x.threads_compared {
            let list = |v: &[f64]| v.iter().map(|s| format!("{s:.2} s")).collect::<Vec<_>>().join(", ");
            out.push_str(&format!(
                "  on 1 thread {}; on {} threads {} (alternately): {:.2}x faster; the same JSON but for its times: {}\n",
                list(&t.one_thread),
                x.threads,
                list(&t.every_core),
                t.speedup(),
                if t.same_answers { "yes" } else { "NO" }
            ));
        }
        out.push_str("  slowest cells:\n");
        for c in &x.slowest {
            out.push_str(&format!(
                "  {:>9} states {:>7.2} s search {:>7.2} s checks  {}\n",
                c.unique, c.search_seconds, c.verify_seconds, c.config
            ));
        }
    }
    out.push_str("\ngrowth of the safe cell (sep-3182, http, retry-any, key per-call, key-durable) from 2 calls, 2 retries, 1 crash:\n");
    if r.growth.is_empty() {
        out.push_str("  (not run)\n");
    } else {
        out.push_str(&table(&r.growth));
        for c in r.growth.iter().filter(|c| c.partial()) {
            out.push_str(&format!("  {}: {} (partial: its figures are lower bounds)\n", c.name, c.end));
        }
    }
    out.push_str("\nlargest cells within the CLI's bounds (http, framework-retry, every property and the worst case, each until it ends or reaches its memory budget):\n");
    if r.largest.is_empty() {
        out.push_str("  (not run: --quick or --only; run `mcp-once bench --only largest`)\n");
    } else {
        out.push_str(&table(&r.largest));
        for c in &r.largest {
            out.push_str(&format!("  {}: {}; {}\n", c.name, c.end, c.config));
        }
    }
    match &r.replay.skipped {
        Some(why) => out.push_str(&format!("\nreplay of the four scenarios on the three SDK fixtures: {why}\n")),
        None => {
            out.push_str(&format!("\nreplay of the four scenarios on the three SDK fixtures (one SDK per thread, servers started inside the time): {:.2} s wall\n", r.replay.wall_seconds));
            out.push_str(&format!(
                "  {:<11} {:<6} {:<22} {:<15} {:>7} {:>8}\n",
                "sdk", "trans.", "scenario", "verdict", "effects", "wall s"
            ));
            for t in &r.replay.runs {
                out.push_str(&format!(
                    "  {:<11} {:<6} {:<22} {:<15} {:>7} {:>8.2}\n",
                    t.sdk,
                    t.transport,
                    t.scenario,
                    t.verdict,
                    t.effects.map_or("-".into(), |n| n.to_string()),
                    t.seconds
                ));
            }
            for sdk in ["typescript", "python", "rust"] {
                for tr in ["stdio", "http"] {
                    let sum: f64 =
                        r.replay.runs.iter().filter(|t| t.sdk == sdk && t.transport == tr).map(|t| t.seconds).sum();
                    out.push_str(&format!("  {sdk} over {tr}: {sum:.2} s\n"));
                }
            }
        }
    }
    out
}
