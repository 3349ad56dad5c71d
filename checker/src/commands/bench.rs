//! `mcp-once bench`: how fast the model checker is, and how much memory it takes (the harness
//! is `crate::benchmark`).

use crate::benchmark::{bench, measure_here, Part, Plan};
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
use anyhow::Result;
use clap::Args;
use mcp_once_model::budget::parse_size;
use mcp_once_model::Config;
use std::process::ExitCode;

/// Options of `mcp-once bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// A run of a few seconds: no 3-call cell, a smaller growth table, the matrix at one call
    /// per cell.
    #[arg(long)]
    quick: bool,
    /// Output format: text or json.
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Bench))]
    format: Format,
    /// Run one part only.
    #[arg(long, value_enum)]
    only: Option<Part>,
    /// Memory budget of each of the largest cells (part `largest`), e.g. 2G (default: 4 GiB, or
    /// 3/4 of the memory available if that is less). A cell that reaches it stops and reports
    /// how far it got.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// Internal: search the configuration given as JSON in this process and print its figures.
    #[arg(long, hide = true)]
    one: Option<String>,
}

/// Run the benchmark and print it.
pub fn run(a: BenchArgs) -> Result<ExitCode> {
    if let Some(json) = &a.one {
        let config: Config = serde_json::from_str(json)?;
        println!("{}", serde_json::to_string(&measure_here(config, a.max_memory)?)?);
        return Ok(ExitCode::SUCCESS);
    }
    let report = bench(&Plan { quick: a.quick, only: a.only, max_memory: a.max_memory })?;
    print(a.format, &Report::Bench(&report))?;
    Ok(ExitCode::SUCCESS)
}
