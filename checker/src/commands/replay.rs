//! `mcp-once replay`: a trace replayed on a real MCP server, its faults injected and its side
//! effects counted.

use crate::args::{OutFormat, TargetArgs};
use anyhow::Result;
use clap::Args;
use mcp_once_conformance::replay;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once replay`.
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

/// Run `mcp-once replay`: exit 1 confirmed, 0 not reproduced, 2 otherwise.
pub fn run(a: ReplayArgs) -> Result<ExitCode> {
    let options = a.target.options()?;
    let result = replay::run_replay(&a.trace, options)?;
    match a.format {
        OutFormat::Text => print!("{}", result.to_text()),
        OutFormat::Json => println!("{}", serde_json::to_string_pretty(&result.to_json())?),
    }
    Ok(ExitCode::from(result.verdict.exit_code()))
}
