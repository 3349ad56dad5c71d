//! `mcp-once matrix`: every built-in cell of the chosen profiles, as a table or JSON.

use crate::args::Format;
use crate::report::json::MatrixRecord;
use crate::report::table::matrix_table;
use crate::run::{builtins, default_matrix, exit_code, profile_for, run_with_progress};
use anyhow::Result;
use clap::Args;
use mcp_once_model::{Profile, PropertyKind};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once matrix`.
#[derive(Args)]
pub struct MatrixArgs {
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

/// Run `mcp-once matrix`.
pub fn run(a: MatrixArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let profiles: Vec<Profile> = if a.profile.is_empty() {
        loaded.clone()
    } else {
        a.profile.iter().map(|p| profile_for(p, &mut loaded)).collect::<Result<_>>()?
    };
    let cells = run_with_progress("checking", default_matrix(&profiles), PropertyKind::ALL, a.out.as_deref())?;
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&MatrixRecord::of(&cells))?),
        Format::Markdown => print!("{}", matrix_table(&cells, true)),
        Format::Text => print!("{}", matrix_table(&cells, false)),
    }
    Ok(exit_code(&cells))
}
