//! `mcp-once probe`: a server conformance-tested with the model's catalogue (and the SEP-3182
//! key checks with `--key-at`), in the MCP conformance suite's check shape.

use crate::args::{OutFormat, TargetArgs};
use anyhow::Result;
use clap::Args;
use mcp_once_conformance::replay;
use std::process::ExitCode;

/// Options of `mcp-once probe`.
#[derive(Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Output format (json: `{"checks": [...]}` in the MCP conformance suite's shape).
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Run `mcp-once probe`: exit 1 a check failed, 2 one could not be tested, 0 all passed.
pub fn run(a: ProbeArgs) -> Result<ExitCode> {
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
