//! `mcp-once matrix`: every built-in cell of the chosen profiles, as a table or JSON.

use crate::args::parse;
use crate::args::{BudgetArgs, CallerArgs};
use crate::cells::{builtins, exit_code, matrix_cells, profile_for, run_with_progress, with_instances};
use crate::report::format::{formats_for, print, Format};
use crate::report::json::MatrixRecord;
use crate::report::render::{Kind, Report};
use crate::shard::Shard;
use anyhow::Result;
use clap::Args;
use mcp_once_model::{Cancellation, HandlerKind, Options, Profile, PropertyKind};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once matrix`.
#[derive(Args)]
pub struct MatrixArgs {
    /// Profiles to include (default: every built-in). Repeat the flag for several.
    #[arg(long)]
    profile: Vec<String>,
    /// Output format: text, markdown, json or html (one self-contained page: the verdict grid
    /// per profile, each violated verdict linking to its trace, drawn).
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Matrix))]
    format: Format,
    /// Write every counterexample trace to this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Check every cell under each of these cancellation handlings (comma-separated: ignores,
    /// before-effect, interrupts), overriding the server presets'. Default: each server's
    /// preset only (plain and the stores ignore, honours-cancel checks before the effect), the
    /// matrix the confirm figures are for.
    #[arg(long, value_delimiter = ',', value_parser = parse::<Cancellation>, value_name = "LIST")]
    cancel: Vec<Cancellation>,
    /// Check every cell under each of these tool handlers (comma-separated: effect-only,
    /// input-after-effect, input-before-effect, input-after-effect-stateful,
    /// input-before-effect-single-use), one input round
    /// each; under framework-retry such a cell takes 1 re-run, not 2. Default: effect-only.
    /// Cells under a profile without input-required results (2025-11-25) are not applicable.
    #[arg(long, value_delimiter = ',', value_parser = parse::<HandlerKind>, value_name = "LIST")]
    handler: Vec<HandlerKind>,
    /// Check every cell with each of these numbers of server instances (comma-separated: 1,
    /// 2), each store where its server preset keeps it (durable stores shared, in-memory ones
    /// per instance). Default: 1. Cells where several instances cannot arise (stdio,
    /// 2025-11-25) are not applicable.
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    instances: Vec<u8>,
    /// Every cell with two callers presenting one key (`--callers 2`), under the key records'
    /// scope `--key-scope` gives (default: the profile's); cells without a key store are then not
    /// applicable.
    #[command(flatten)]
    callers: CallerArgs,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Check only shard K of N: the cells whose index (from 0, in the matrix's order) modulo N
    /// is K-1; join the shards' JSON with `mcp-once merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
}

/// Run `mcp-once matrix`.
pub fn run(a: MatrixArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let profiles: Vec<Profile> = if a.profile.is_empty() {
        loaded.clone()
    } else {
        a.profile.iter().map(|p| profile_for(p, &mut loaded)).collect::<Result<_>>()?
    };
    // Every property and the worst case: the table's last column is the exact worst case.
    let options = Options { worst: true, budget: a.budget.budget()?, threads: 1 };
    let all: Vec<_> = with_instances(matrix_cells(&profiles, &a.cancel, &a.handler), &a.instances)
        .into_iter()
        .map(|(c, p)| (a.callers.apply(c), p))
        .collect();
    let whole = all.len();
    let configs = match a.shard {
        Some(shard) => shard.select(all),
        None => all,
    };
    let threads = a.budget.threads();
    let cells = run_with_progress("checking", configs, PropertyKind::ALL, options, a.out.as_deref(), threads)?;
    let mut record = MatrixRecord::of(&cells);
    record.shard = a.shard.map(|s| s.record(whole, profiles.iter().map(|p| p.name.clone()).collect()));
    print(a.format, &Report::Matrix { cells: &cells, record: &record })?;
    Ok(exit_code(&cells))
}
