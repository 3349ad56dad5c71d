//! `mcp-once diff`: the default matrix under two profiles, reduced to the cells that change.

use crate::args::{BudgetArgs, Format};
use crate::compare::diff;
use crate::report::diff::diff_text;
use crate::report::json::DiffRecord;
use crate::report::text::colour;
use crate::run::{builtins, default_matrix, profile_for, run_with_progress};
use anyhow::Result;
use clap::Args;
use mcp_once_model::{Options, PropertyKind};
use std::process::ExitCode;

/// Options of `mcp-once diff`.
#[derive(Args)]
pub struct DiffArgs {
    /// The profile before the change (name or file).
    a: String,
    /// The profile after the change (name or file).
    b: String,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Output format: text, markdown or json.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Run `mcp-once diff`: exit 0 when no cell changes, 1 when some do.
pub fn run(a: DiffArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let pa = profile_for(&a.a, &mut loaded)?;
    let pb = profile_for(&a.b, &mut loaded)?;
    let options = Options { worst: true, budget: a.budget.budget()? };
    let matrix_of = |p: &mcp_once_model::Profile| {
        run_with_progress(&p.name, default_matrix(std::slice::from_ref(p)), PropertyKind::ALL, options, None)
    };
    let (cells_a, cells_b) = (matrix_of(&pa)?, matrix_of(&pb)?);
    let d = diff(&pa.name, &cells_a, &pb.name, &cells_b);
    match a.format {
        Format::Json => println!("{}", serde_json::to_string_pretty(&DiffRecord::of(&d))?),
        Format::Markdown => print!("{}", diff_text(&d, true, false)),
        Format::Text => print!("{}", diff_text(&d, false, colour())),
    }
    Ok(if d.changes.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
