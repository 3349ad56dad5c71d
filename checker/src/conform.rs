//! `mcp-once replay` and `mcp-once probe`: the command-line face of the conformance runner.

use anyhow::{anyhow, Result};
use clap::{Args, ValueEnum};
use mcp_once_conformance::replay::{self, observer::Observer, KeyAt, ReplayOptions, Revision, Target};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn parse<T: std::str::FromStr<Err = String>>(s: &str) -> Result<T, String> {
    s.parse()
}

/// The server under test, what to call on it, and how to count effects.
#[derive(Args, Clone)]
pub struct TargetArgs {
    /// A stdio server: the command that starts it (split into argv, no shell; started directly
    /// in its own process group, so SIGKILL reaches the server itself).
    #[arg(long, value_name = "CMD")]
    stdio: Option<String>,
    /// A Streamable HTTP server: its endpoint URL.
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// With --http: the command that starts the server, so the runner can kill and restart it.
    #[arg(long, value_name = "CMD")]
    launch: Option<String>,
    /// Environment for the started server (KEY=VALUE; repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Working directory for the started server.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The side-effecting tool to call.
    #[arg(long, default_value = "charge")]
    tool: String,
    /// Its arguments, a JSON object.
    #[arg(long, default_value = "{}", value_name = "JSON")]
    args: String,
    /// Where an idempotency key goes: params (params.idempotencyKey), meta:NAME or arg:NAME
    /// (replay default: params; probe: given = also run the SEP-3182 key checks).
    #[arg(long, value_parser = parse::<KeyAt>)]
    key_at: Option<KeyAt>,
    /// How effects are counted: ledger:PATH, cmd:"CMD" (prints a number) or
    /// tool:NAME[:/json/pointer|:re:REGEX] (a tool on the server; default pointer /count).
    #[arg(long, value_name = "OBSERVER")]
    observe: String,
    /// ledger: count only lines whose FIELD equals the JSON value.
    #[arg(long, value_name = "FIELD=JSON")]
    observe_filter: Option<String>,
    /// tool: the observer tool's arguments (a JSON object).
    #[arg(long, value_name = "JSON")]
    observe_args: Option<String>,
    /// How much a reading moves per effect (1 for a count; -42 for a balance that drops by 42).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    observe_step: f64,
    /// Protocol revision to speak (default: the trace profile's): 2025-11-25 or 2026-07-28.
    #[arg(long, value_parser = parse::<Revision>)]
    revision: Option<Revision>,
    /// Bound on each awaited step, in milliseconds.
    #[arg(long, default_value_t = 10_000)]
    step_timeout_ms: u64,
    /// Bound on a server start (process start to an answered handshake), in milliseconds.
    #[arg(long, default_value_t = 20_000)]
    start_timeout_ms: u64,
    /// How long the server is asked to hold a step that must wait for others (ms).
    #[arg(long, default_value_t = 1_000)]
    window_ms: u64,
    /// When the runner stops a server: how long after SIGTERM before SIGKILL (ms).
    #[arg(long, default_value_t = 3_000)]
    stop_grace_ms: u64,
    /// Do not pass delay_before_ms / delay_after_ms to the tool, even if it takes them.
    #[arg(long)]
    no_pace: bool,
    /// Write the evidence log (and result.json) into this folder.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
}

/// Output format of replay and probe.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    /// A human summary.
    Text,
    /// JSON.
    Json,
}

impl TargetArgs {
    /// The runner's options.
    pub fn options(&self) -> Result<ReplayOptions> {
        let target = Target::from_options(
            self.stdio.as_deref(),
            self.http.as_deref(),
            self.launch.as_deref(),
            &self.env,
            self.cwd.clone(),
        )?;
        let args: serde_json::Value = serde_json::from_str(&self.args).map_err(|e| anyhow!("--args: not JSON: {e}"))?;
        let serde_json::Value::Object(args) = args else { return Err(anyhow!("--args: must be a JSON object")) };
        let observer = Observer::parse(
            &self.observe,
            self.observe_filter.as_deref(),
            self.observe_args.as_deref(),
            self.observe_step,
        )?;
        Ok(ReplayOptions {
            target,
            tool: self.tool.clone(),
            args,
            key_at: self.key_at.clone().unwrap_or(KeyAt::Params),
            observer,
            revision: self.revision,
            step_timeout: Duration::from_millis(self.step_timeout_ms),
            start_timeout: Duration::from_millis(self.start_timeout_ms),
            window: Duration::from_millis(self.window_ms),
            stop_grace: Duration::from_millis(self.stop_grace_ms),
            pace: !self.no_pace,
            evidence_dir: self.evidence.clone(),
        })
    }
}

/// `mcp-once replay` arguments.
#[derive(Args)]
pub struct ReplayArgs {
    /// The trace file (from check --out or matrix --out).
    trace: PathBuf,
    #[command(flatten)]
    target: TargetArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Run `mcp-once replay`.
pub fn cmd_replay(a: ReplayArgs) -> Result<ExitCode> {
    let options = a.target.options()?;
    let result = replay::run_replay(&a.trace, options)?;
    match a.format {
        OutFormat::Text => print!("{}", result.to_text()),
        OutFormat::Json => println!("{}", serde_json::to_string_pretty(&result.to_json())?),
    }
    Ok(ExitCode::from(result.verdict.exit_code()))
}

/// `mcp-once probe` arguments.
#[derive(Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Output format (json: `{"checks": [...]}` in the MCP conformance suite's shape).
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Run `mcp-once probe`.
pub fn cmd_probe(a: ProbeArgs) -> Result<ExitCode> {
    let options = a.target.options()?;
    let Some(checks) = replay::run_probe(options, a.target.key_at.is_some())? else {
        eprintln!("mcp-once: probe interrupted; every server process group was killed");
        return Ok(ExitCode::from(2));
    };
    match a.format {
        OutFormat::Text => print!("{}", replay::checks::to_text(&checks)),
        OutFormat::Json => println!("{}", serde_json::to_string_pretty(&replay::checks::to_json(&checks))?),
    }
    Ok(ExitCode::from(replay::checks::exit_code(&checks)))
}
