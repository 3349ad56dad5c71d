//! `mcp-once merge`: join the JSON of `matrix --shard K/N` runs into the whole matrix's JSON
//! (or its table), as one run prints it.

use crate::report::format::{formats_for, print, Format};
use crate::report::json::{CellRecord, MatrixRecord};
use crate::report::render::{Kind, Report};
use crate::shard::merge;
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_model::Verdict;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once merge`.
#[derive(Args)]
pub struct MergeArgs {
    /// The shard files (`matrix --shard K/N --format json`), every K of one N once, any order.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Output format: text, markdown or json.
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Merge))]
    format: Format,
}

/// Run `mcp-once merge`: the exit code a whole `matrix` run gives (1 when a property is
/// violated in some cell, 0 otherwise); 2 when the shards do not make one matrix.
pub fn run(a: MergeArgs) -> Result<ExitCode> {
    let texts: Vec<(String, String)> = a
        .files
        .iter()
        .map(|f| {
            let name = f.display().to_string();
            let text = std::fs::read_to_string(f).map_err(|e| anyhow!("{name}: cannot read: {e}"))?;
            Ok((name, text))
        })
        .collect::<Result<_>>()?;
    let records = texts
        .iter()
        .map(|(name, text)| {
            let record: MatrixRecord = serde_json::from_str(text)
                .map_err(|e| anyhow!("{name}: not the JSON of `matrix --format json`: {e}"))?;
            Ok((name.clone(), record))
        })
        .collect::<Result<Vec<_>>>()?;
    let whole = merge(records)?;
    print(a.format, &Report::Merged(&whole))?;
    let violated = whole.cells.iter().any(
        |c| matches!(c, CellRecord::Checked { results, .. } if results.iter().any(|r| r.verdict == Verdict::Violated)),
    );
    Ok(if violated { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
