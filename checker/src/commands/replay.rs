//! `mcp-once replay`: a trace replayed on a real MCP server, its faults injected and its side
//! effects counted.

use crate::args::TargetArgs;
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
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
    /// Write the evidence log (and result.json) into this folder.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Output format.
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Replay))]
    format: Format,
}

/// Run `mcp-once replay`: exit 1 confirmed, 0 not reproduced, 2 otherwise.
pub fn run(a: ReplayArgs) -> Result<ExitCode> {
    let mut options = a.target.options()?;
    options.evidence_dir = a.evidence.clone();
    options.command = Some(a.target.command(&a.trace, a.evidence.as_deref()));
    let result = replay::run_replay(&a.trace, options)?;
    print(a.format, &Report::Replay(&result))?;
    Ok(ExitCode::from(result.verdict.exit_code()))
}
