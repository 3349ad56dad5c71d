//! `mcp-once`: model-check MCP tool calls for at-most-once execution under each revision of the
//! specification and each proposal.
//!
//! Exit codes (as Maelstrom's): 0 every checked property holds, 1 a property is violated, 2 no
//! verdict could be established (bad input, a configuration that does not apply).

mod bench;
mod conform;
mod report;
mod run;

use anyhow::{anyhow, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use mcp_once_conformance::fixture;
use mcp_once_model::catalogue::matrix_bounds;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{
    Bounds, Check, ClientPolicy, Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl, Transport,
};
use report::{cell_json, check_text, colour, short_verdict, summary_counts};
use run::{builtins, profile_for, run_cells, Cell};
use std::path::PathBuf;
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "mcp-once", version, about = "Prove, and show, when an MCP tool call can run twice.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check one configuration; with no configuration flags, the built-in default matrix.
    #[command(
        after_help = "Examples:\n  mcp-once check\n  mcp-once check --profile sep-3182 --transport http --client retry-any --server key-volatile --key per-call --crashes 1\n  mcp-once check --profile specs/proposals/my-sep.toml --server key-durable --key per-call --calls 2 --retries 2 --format json --out traces\n  mcp-once check --trace traces/mcp-2025-11-25__stdio__...__at-most-once.itf.json"
    )]
    Check(CheckArgs),
    /// Check every built-in cell (profiles x transports x client policies x servers) as a table.
    #[command(
        after_help = "Examples:\n  mcp-once matrix\n  mcp-once matrix --profile mcp-2026-07-28 --profile sep-3182 --format markdown --out traces"
    )]
    Matrix(MatrixArgs),
    /// Step through one configuration by hand in stateright's Explorer (a web UI on localhost).
    #[command(
        after_help = "Examples:\n  mcp-once explore --profile mcp-2025-11-25 --client retry-on-disconnect --crashes 1\n  then open http://127.0.0.1:3000/"
    )]
    Explore(ExploreArgs),
    /// Model-check a proposed spec change: the matrix under two profiles, only the cells that change.
    #[command(
        after_help = "Exit code: 0 no cell changes, 1 some cells change, 2 trouble.\nExamples:\n  mcp-once diff mcp-2026-07-28 sep-3182\n  mcp-once diff mcp-2026-07-28 specs/proposals/my-proposal.toml --format markdown"
    )]
    Diff(DiffArgs),
    /// Write an issue-ready Markdown report of a trace file (summary, cited steps, Mermaid diagram).
    #[command(
        after_help = "Examples:\n  mcp-once explain traces/mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c1r1k1__at-most-once.itf.json > issue.md\n  mcp-once explain TRACE --evidence out/ > issue.md   (with a replay's evidence folder)"
    )]
    Explain {
        /// The trace file (as written by check --out or matrix --out).
        trace: PathBuf,
        /// A replay's evidence folder (replay --evidence): adds its verdict, steps and wire log.
        #[arg(long, value_name = "DIR")]
        evidence: Option<PathBuf>,
    },
    /// Run the bundled Rust (rmcp) ledger fixture server, over stdio or Streamable HTTP.
    #[command(
        after_help = "Examples:\n  mcp-once fixture --sdk rust --transport stdio --ledger ledger.jsonl\n  mcp-once fixture --sdk rust --transport http --port 8931 --variant key-durable --ledger ledger.jsonl\nThe TypeScript and Python fixtures: see conformance/fixtures/README.md."
    )]
    Fixture(FixtureArgs),
    /// Replay a trace against a real MCP server, injecting its faults and counting side effects.
    #[command(
        after_help = "Exit code: 1 confirmed, 0 not reproduced, 2 diverged, inconclusive or interrupted.\nExamples:\n  mcp-once replay traces/mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c1r1k0__at-most-once.itf.json \\\n      --stdio \"node conformance/fixtures/typescript/server.mjs --ledger l.jsonl\" --args '{\"amount\":42}' --observe ledger:l.jsonl\n  mcp-once replay TRACE --http http://127.0.0.1:8931/mcp --launch \"mcp-once fixture --transport http --port 8931 --ledger l.jsonl\" \\\n      --args '{\"amount\":42}' --observe tool:ledger_count --evidence out/"
    )]
    Replay(conform::ReplayArgs),
    /// Conformance-test a server: replay the model's catalogue for its revision and transport
    /// (and, with --key-at, check SEP-3182 key semantics); results in the MCP conformance suite's shape.
    #[command(
        after_help = "Exit code: 1 a check failed, 2 a check could not be tested, 0 all passed.\nExamples:\n  mcp-once probe --stdio \"node conformance/fixtures/typescript/server.mjs --ledger l.jsonl\" --args '{\"amount\":42}' --observe ledger:l.jsonl\n  mcp-once probe --http http://127.0.0.1:8931/mcp --launch \"mcp-once fixture --transport http --port 8931 --variant key-durable --ledger l.jsonl\" \\\n      --args '{\"amount\":42}' --key-at params --observe ledger:l.jsonl --format json"
    )]
    Probe(conform::ProbeArgs),
    /// List the built-in profiles, or show one profile's knobs with their citations.
    #[command(after_help = "Examples:\n  mcp-once profiles\n  mcp-once profiles sep-3182")]
    Profiles {
        /// A profile name or file to show.
        profile: Option<String>,
    },
    /// Measure the checker: states, time and memory per cell, the default matrix, growth with the bounds.
    #[command(after_help = "Examples:\n  mcp-once bench --quick\n  mcp-once bench --format json > bench.json")]
    Bench(bench::BenchArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Markdown,
}

fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

#[derive(Args)]
struct ConfigArgs {
    /// Profile: a built-in name (mcp-2025-11-25, mcp-2026-07-28, sep-3182, outcome-query) or a file.
    #[arg(long)]
    profile: Option<String>,
    /// Transport: stdio or http.
    #[arg(long, value_parser = parse::<Transport>)]
    transport: Option<Transport>,
    /// Client policy: no-retry, retry-on-timeout, retry-on-disconnect, retry-any, framework-retry.
    #[arg(long, value_parser = parse::<ClientPolicy>)]
    client: Option<ClientPolicy>,
    /// Idempotency key lifetime: none, per-call, per-attempt, per-step.
    #[arg(long, value_parser = parse::<KeyLifetime>)]
    key: Option<KeyLifetime>,
    /// Server: plain, honours-cancel, dedup-by-id, dedup-by-id-durable, key-volatile, key-durable, key-after-effect, key-expiring.
    #[arg(long, value_parser = parse::<ServerImpl>)]
    server: Option<ServerImpl>,
    /// Logical calls (1 to 3).
    #[arg(long)]
    calls: Option<u8>,
    /// Retries, or framework re-runs, per call (0 to 3).
    #[arg(long)]
    retries: Option<u8>,
    /// Server crashes (0 to 3).
    #[arg(long)]
    crashes: Option<u8>,
}

impl ConfigArgs {
    fn any(&self) -> bool {
        self.profile.is_some()
            || self.transport.is_some()
            || self.client.is_some()
            || self.key.is_some()
            || self.server.is_some()
            || self.calls.is_some()
            || self.retries.is_some()
            || self.crashes.is_some()
    }

    /// The configuration, with defaults for what is not given, and its profile.
    fn resolve(&self) -> Result<(Config, Profile)> {
        let mut loaded = builtins();
        let profile_name = self.profile.clone().unwrap_or_else(|| "mcp-2026-07-28".into());
        let profile = profile_for(&profile_name, &mut loaded)?;
        let server = self.server.unwrap_or(ServerImpl::Plain);
        let config = Config {
            profile: profile_name,
            transport: self.transport.unwrap_or(Transport::Stdio),
            client: self.client.unwrap_or(ClientPolicy::RetryOnTimeout),
            key: self.key.unwrap_or(if server.uses_keys() { KeyLifetime::PerCall } else { KeyLifetime::None }),
            server,
            bounds: Bounds {
                calls: self.calls.unwrap_or(1),
                retries: self.retries.unwrap_or(1),
                crashes: self.crashes.unwrap_or(1),
            },
        };
        config.applicable(&profile).map_err(|reason| anyhow!("configuration does not apply: {reason}"))?;
        Ok((config, profile))
    }
}

#[derive(Args)]
struct CheckArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// One property (at-most-once, no-silent-effect, success-implies-effect, exactly-once) or all.
    #[arg(long, default_value = "all")]
    property: String,
    /// Output format: text or json.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write each counterexample (and the worst case) as an ITF trace file in this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Check a trace file against the model instead: is it a real path that violates its property?
    #[arg(long, conflicts_with_all = ["profile", "transport", "client", "key", "server", "calls", "retries", "crashes"])]
    trace: Option<PathBuf>,
}

#[derive(Args)]
struct FixtureArgs {
    /// Which SDK's fixture: rust (bundled). The TypeScript and Python ones run under node and python.
    #[arg(long, default_value = "rust")]
    sdk: String,
    /// stdio or http (Streamable HTTP on 127.0.0.1).
    #[arg(long, default_value = "stdio")]
    transport: fixture::Transport,
    /// plain, key-volatile, key-durable, key-after-effect or key-expiring (SEP-3182 key stores).
    #[arg(long, default_value = "plain")]
    variant: fixture::Variant,
    /// The ledger file: one fsynced JSON line per side effect.
    #[arg(long)]
    ledger: PathBuf,
    /// HTTP port on 127.0.0.1 (0: any free port; the server prints `listening URL` on stderr).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// key-expiring: records older than this many milliseconds are treated as absent.
    #[arg(long, default_value_t = 60_000)]
    retention_ms: u64,
}

#[derive(Args)]
struct DiffArgs {
    /// The profile before the change (name or file).
    a: String,
    /// The profile after the change (name or file).
    b: String,
    /// Output format: text, markdown or json.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Args)]
struct ExploreArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// The property the Explorer marks (at-most-once, no-silent-effect, success-implies-effect, exactly-once).
    #[arg(long, default_value = "at-most-once")]
    property: String,
    /// Address to serve on (loopback only by default).
    #[arg(long, default_value = "127.0.0.1:3000")]
    address: String,
}

#[derive(Args)]
struct MatrixArgs {
    /// Profiles to include (default: every built-in). Repeat the flag for several.
    #[arg(long)]
    profile: Vec<String>,
    /// Output format: text, markdown or json.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Write every counterexample trace to this folder.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn properties(arg: &str) -> Result<Vec<PropertyKind>> {
    if arg == "all" {
        return Ok(PropertyKind::ALL.to_vec());
    }
    Ok(vec![arg.parse::<PropertyKind>().map_err(|e| anyhow!("--property: {e}"))?])
}

/// A progress bar on standard error when it is a terminal (none in pipes and CI logs).
fn progress(cells: usize, what: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(cells as u64);
    let style = indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} cells, {elapsed}")
        .expect("template")
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    Some(bar)
}

/// Run cells with a progress bar on a terminal.
fn run_with_progress(
    what: &str,
    configs: Vec<(Config, Profile)>,
    props: &[PropertyKind],
    out: Option<&std::path::Path>,
) -> Result<Vec<Cell>> {
    let bar = progress(configs.len(), what);
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let cells = run_cells(configs, props, out, threads(), &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    cells
}

fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn exit_for(cells: &[Cell]) -> ExitCode {
    let any_violated = cells.iter().any(|c| matches!(&c.outcome, Ok(k) if k.any_violated()));
    let any_inapplicable = cells.iter().any(|c| c.outcome.is_err());
    if any_violated {
        ExitCode::from(1)
    } else if any_inapplicable && cells.len() == 1 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

fn default_matrix(profiles: &[Profile]) -> Vec<(Config, Profile)> {
    mcp_once_model::catalogue::matrix(profiles)
        .into_iter()
        .map(|c| {
            let p = profiles.iter().find(|p| p.name == c.profile).expect("profile").clone();
            (c, p)
        })
        .collect()
}

fn cmd_check(a: CheckArgs) -> Result<ExitCode> {
    if let Some(path) = &a.trace {
        return check_trace(path);
    }
    let props = properties(&a.property)?;
    let single = a.config.any();
    if !single {
        let profiles = builtins();
        let started = std::time::Instant::now();
        let cells = run_with_progress("checking", default_matrix(&profiles), &props, a.out.as_deref())?;
        let seconds = started.elapsed().as_secs_f64();
        match a.format {
            Format::Json => println!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({"cells": cells.iter().map(cell_json).collect::<Vec<_>>()})
                )?
            ),
            _ => print!("{}", matrix_summary(&cells, &props, seconds)),
        }
        return Ok(exit_for(&cells));
    }
    let (config, profile) = a.config.resolve()?;
    let cells = run_cells(vec![(config, profile)], &props, a.out.as_deref(), 1, &|| {})?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&cell_json(&cells[0]))?),
        _ => print!("{}", check_text(&cells[0], colour())),
    }
    Ok(exit_for(&cells))
}

fn check_trace(path: &PathBuf) -> Result<ExitCode> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{file}: cannot read trace: {e}"))?;
    let trace = TraceFile::parse(&file, &text)?;
    let mut loaded = builtins();
    let profile = profile_for(&trace.config.profile, &mut loaded)?;
    let steps = trace.validate(&file, &profile)?.steps();
    println!(
        "{file}: valid: a {steps}-step path of the model under {} that reaches `{}`",
        trace.config, trace.property
    );
    Ok(ExitCode::SUCCESS)
}

fn matrix_summary(cells: &[Cell], props: &[PropertyKind], seconds: f64) -> String {
    let (checked, na, safe) = summary_counts(cells);
    let headline = props[0];
    let holds = |c: &Cell| matches!(&c.outcome, Ok(k) if k.results.iter().any(|r| r.property == headline && r.counterexample.is_none()));
    let mut out = String::new();
    out.push_str(&format!(
        "mcp-once: default matrix: {} cells ({} checked, {} not applicable), bounds per cell: {} calls, {} retry ({} framework re-runs), {} crash\n\n",
        cells.len(),
        checked,
        na,
        matrix_bounds(ClientPolicy::RetryAny).calls,
        matrix_bounds(ClientPolicy::RetryAny).retries,
        matrix_bounds(ClientPolicy::FrameworkRetry).retries,
        matrix_bounds(ClientPolicy::RetryAny).crashes,
    ));
    out.push_str(&format!("cells where {headline} holds (it is violated in every other cell):\n"));
    for c in cells.iter().filter(|c| holds(c)) {
        let cfg = &c.config;
        let others: Vec<String> = props[1..].iter().map(|p| format!("{p} {}", short_verdict(c, *p))).collect();
        let line = format!(
            "  {:<15} {:<5} {:<19} {:<9} {:<20} {}",
            cfg.profile,
            cfg.transport.as_str(),
            cfg.client.as_str(),
            cfg.key.as_str(),
            cfg.server.as_str(),
            others.join(", ")
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let worst = cells.iter().filter_map(|c| c.outcome.as_ref().ok()).map(|k| k.worst.effects).max().unwrap_or(0);
    out.push_str(&format!(
        "\nsummary: {checked} cells checked; every checked property holds in {safe}; {headline} holds in {}; worst case {worst} effects for one logical call; {seconds:.1} s\n",
        cells.iter().filter(|c| holds(c)).count(),
    ));
    out.push_str("full table: mcp-once matrix; one cell with its traces: mcp-once check --profile ... --server ...\n");
    out
}

fn cmd_matrix(a: MatrixArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let profiles: Vec<Profile> = if a.profile.is_empty() {
        loaded.clone()
    } else {
        a.profile.iter().map(|p| profile_for(p, &mut loaded)).collect::<Result<_>>()?
    };
    let cells = run_with_progress("checking", default_matrix(&profiles), PropertyKind::ALL, a.out.as_deref())?;
    match a.format {
        Format::Json => {
            println!(
                "{}",
                serde_json::to_string_pretty(
                    &serde_json::json!({"cells": cells.iter().map(cell_json).collect::<Vec<_>>()})
                )?
            )
        }
        Format::Markdown => print!("{}", matrix_table(&cells, true)),
        Format::Text => print!("{}", matrix_table(&cells, false)),
    }
    Ok(exit_for(&cells))
}

fn matrix_table(cells: &[Cell], markdown: bool) -> String {
    let header = [
        "profile",
        "transport",
        "client",
        "key",
        "server",
        "at-most-once",
        "no-silent-effect",
        "success-implies-effect",
        "exactly-once",
        "worst",
    ];
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let cfg = &c.config;
            let mut row = vec![
                cfg.profile.clone(),
                cfg.transport.to_string(),
                cfg.client.to_string(),
                cfg.key.to_string(),
                cfg.server.to_string(),
            ];
            for p in PropertyKind::ALL {
                row.push(short_verdict(c, *p));
            }
            row.push(match &c.outcome {
                Ok(k) => k.worst.effects.to_string(),
                Err(_) => "n/a".into(),
            });
            row
        })
        .collect();
    let mut out = String::new();
    if markdown {
        out.push_str(&format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len())));
        for r in &rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        out.push_str("\n`✗ s/e`: violated, shortest counterexample of s steps reaching e side effects for one logical call; `n/a`: the configuration does not apply under the profile.\n");
        return out;
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let paint = colour();
    let line = |cells: Vec<String>| -> String {
        let mut s = String::new();
        for (i, v) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(v.chars().count());
            let shown = if paint && v.starts_with('✗') {
                format!("\x1b[31m{v}\x1b[0m")
            } else if paint && v == "holds" {
                format!("\x1b[32m{v}\x1b[0m")
            } else {
                v.clone()
            };
            s.push_str(&shown);
            s.push_str(&" ".repeat(pad + 2));
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&line(header.iter().map(|h| h.to_string()).collect()));
    for r in rows {
        out.push_str(&line(r));
    }
    out.push_str("\n✗ s/e: violated, shortest counterexample of s steps reaching e side effects for one logical call; n/a: does not apply under the profile.\n");
    out
}

fn cmd_fixture(a: FixtureArgs) -> Result<ExitCode> {
    if a.sdk != "rust" {
        let how = match a.sdk.as_str() {
            "typescript" => "node conformance/fixtures/typescript/server.mjs --ledger PATH [--transport http --port N]",
            "python" => "conformance/fixtures/python/.venv/bin/python conformance/fixtures/python/server.py --ledger PATH [--transport http --port N]",
            other => return Err(anyhow!("--sdk {other}: unknown SDK (rust, typescript, python)")),
        };
        return Err(anyhow!(
            "--sdk {}: not bundled in this binary; after conformance/fixtures/install.sh run: {how}",
            a.sdk
        ));
    }
    fixture::run_blocking(fixture::FixtureOptions {
        transport: a.transport,
        port: a.port,
        ledger: a.ledger,
        variant: a.variant,
        retention_ms: a.retention_ms,
    })?;
    Ok(ExitCode::SUCCESS)
}

fn cmd_explain(path: &std::path::Path, evidence: Option<&std::path::Path>) -> Result<ExitCode> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{file}: cannot read trace: {e}"))?;
    let trace = TraceFile::parse(&file, &text)?;
    let mut loaded = builtins();
    let profile = profile_for(&trace.config.profile, &mut loaded)?;
    let valid = trace.validate(&file, &profile)?;
    let replay_section = evidence.map(report::replay_markdown).transpose()?;
    print!("{}", report::explain_markdown(&valid.model, &trace.property, &valid.path, &file));
    if let Some(section) = replay_section {
        print!("{section}");
    }
    Ok(ExitCode::SUCCESS)
}

/// One cell's verdicts, comparable across profiles.
fn cell_signature(c: &Cell) -> Vec<String> {
    let mut v: Vec<String> = PropertyKind::ALL.iter().map(|p| short_verdict(c, *p)).collect();
    v.push(match &c.outcome {
        Ok(k) => format!("worst {}", k.worst.effects),
        Err(_) => "worst n/a".into(),
    });
    v
}

fn cmd_diff(a: DiffArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let pa = profile_for(&a.a, &mut loaded)?;
    let pb = profile_for(&a.b, &mut loaded)?;
    let cells_a = run_with_progress(&pa.name, default_matrix(std::slice::from_ref(&pa)), PropertyKind::ALL, None)?;
    let cells_b = run_with_progress(&pb.name, default_matrix(std::slice::from_ref(&pb)), PropertyKind::ALL, None)?;
    let key = |c: &Config| (c.transport, c.client, c.key, c.server);
    let mut keys: Vec<_> = cells_a.iter().chain(&cells_b).map(|c| key(&c.config)).collect();
    keys.sort();
    keys.dedup();
    let find = |cells: &'_ [Cell], k| cells.iter().position(|c| key(&c.config) == k);
    let mut changes = Vec::new();
    for k in keys {
        let (ia, ib) = (find(&cells_a, k), find(&cells_b, k));
        let sa = ia
            .map(|i| cell_signature(&cells_a[i]))
            .unwrap_or_else(|| vec!["n/a".into(); 4].into_iter().chain(["worst n/a".to_string()]).collect());
        let sb = ib
            .map(|i| cell_signature(&cells_b[i]))
            .unwrap_or_else(|| vec!["n/a".into(); 4].into_iter().chain(["worst n/a".to_string()]).collect());
        if sa != sb {
            changes.push((k, ia, ib, sa, sb));
        }
    }
    let names: Vec<&str> = PropertyKind::ALL.iter().map(|p| p.as_str()).chain(["worst case"]).collect();
    match a.format {
        Format::Json => {
            let cells: Vec<serde_json::Value> = changes
                .iter()
                .map(|(_, ia, ib, _, _)| {
                    serde_json::json!({
                        "before": ia.map(|i| cell_json(&cells_a[i])),
                        "after": ib.map(|i| cell_json(&cells_b[i])),
                    })
                })
                .collect();
            println!(
                "{}",
                serde_json::to_string_pretty(&serde_json::json!({"a": pa.name, "b": pb.name, "changed": cells}))?
            );
        }
        _ => {
            let md = a.format == Format::Markdown;
            println!(
                "{}{} -> {}: {} of the matrix's cells change\n",
                if md { "### " } else { "" },
                pa.name,
                pb.name,
                changes.len()
            );
            for ((t, client, key, server), ia, ib, sa, sb) in &changes {
                println!("{}{t} / {client} / key {key} / {server}", if md { "#### " } else { "" });
                for (i, name) in names.iter().enumerate() {
                    if sa[i] != sb[i] {
                        let what = if md {
                            format!("- `{name}`: {} → {}", sa[i], sb[i])
                        } else {
                            format!("  {name:<24} {} -> {}", sa[i], sb[i])
                        };
                        println!("{what}");
                    }
                }
                // The new counterexamples (violated after, not before) and the vanished ones.
                for p in PropertyKind::ALL {
                    let violated = |cells: &'_ [Cell], i: Option<usize>| {
                        i.and_then(|i| match &cells[i].outcome {
                            Ok(k) => k
                                .results
                                .iter()
                                .find(|r| r.property == *p)
                                .and_then(|r| r.counterexample.clone())
                                .map(|c| (i, c)),
                            Err(_) => None,
                        })
                    };
                    let (va, vb) = (violated(&cells_a, *ia), violated(&cells_b, *ib));
                    let shown = match (&va, &vb) {
                        (None, Some((i, c))) => Some(("new counterexample", &cells_b[*i], c)),
                        (Some((i, c)), None) => Some(("vanished counterexample", &cells_a[*i], c)),
                        _ => None,
                    };
                    if let Some((label, cell, cex)) = shown {
                        let Ok(k) = &cell.outcome else { continue };
                        println!("{}  {label} to {p} ({} steps):", if md { "\n" } else { "" }, cex.len());
                        if md {
                            println!("```\n{}```", report::trace_text(k, cex, "", false));
                        } else {
                            print!("{}", report::trace_text(k, cex, "    ", colour()));
                        }
                    }
                }
                println!();
            }
        }
    }
    Ok(if changes.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn cmd_explore(a: ExploreArgs) -> Result<ExitCode> {
    use stateright::Model;
    let (config, profile) = a.config.resolve()?;
    let property = properties(&a.property)?[0];
    let model = McpModel::new(config, profile).map_err(|e| anyhow!(e))?;
    let address: std::net::SocketAddr = a.address.parse().map_err(|e| anyhow!("--address {}: {e}", a.address))?;
    std::net::TcpListener::bind(address).map_err(|e| anyhow!("--address {address}: cannot listen: {e}"))?;
    eprintln!("mcp-once: Explorer for {} on http://{address}/ (Ctrl-C to stop)", model.config);
    mcp_once_model::WithCheck { model, check: Check::Property(property) }.checker().serve(address);
    Ok(ExitCode::SUCCESS)
}

fn cmd_profiles(profile: Option<String>) -> Result<ExitCode> {
    let mut loaded = builtins();
    match profile {
        None => {
            for p in &loaded {
                println!("{:<16} {:<9} {}", p.name, format!("{:?}", p.kind).to_lowercase(), p.title);
            }
        }
        Some(name) => {
            let p = profile_for(&name, &mut loaded)?;
            println!("{} ({}), revision {}, from {}", p.name, p.title, p.revision, p.origin);
            if let Some(e) = &p.extends {
                println!("extends {e}");
            }
            for (knob, value, cite, set_by) in p.knob_table() {
                println!("\n{knob} = {value}   (set by {set_by})\n  {cite}");
                if let Some(note) = &cite.note {
                    println!("  note: {note}");
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Parse the command line; a usage error is one line (clap's text folded), exit 2.
fn parse_cli() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("mcp-once: {} (see mcp-once --help)", mcp_once_conformance::usage::one_line(&e));
            std::process::exit(2);
        }
    }
}

fn main() -> ExitCode {
    let cli = parse_cli();
    let result = match cli.command {
        Command::Check(a) => cmd_check(a),
        Command::Matrix(a) => cmd_matrix(a),
        Command::Explore(a) => cmd_explore(a),
        Command::Fixture(a) => cmd_fixture(a),
        Command::Replay(a) => conform::cmd_replay(a),
        Command::Probe(a) => conform::cmd_probe(a),
        Command::Diff(a) => cmd_diff(a),
        Command::Explain { trace, evidence } => cmd_explain(&trace, evidence.as_deref()),
        Command::Profiles { profile } => cmd_profiles(profile),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-once: {}", e.to_string().replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
