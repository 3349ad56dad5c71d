//! `mcp-once explain`: an issue-ready Markdown report of a trace file, with a replay's evidence
//! if given.

use crate::report;
use crate::run::{builtins, profile_for};
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_model::trace::TraceFile;

use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once explain`.
#[derive(Args)]
pub struct ExplainArgs {
    /// The trace file (as written by check --out or matrix --out).
    trace: PathBuf,
    /// A replay's evidence folder (replay --evidence): adds its verdict, steps and wire log.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
}

/// Run `mcp-once explain`.
pub fn run(a: ExplainArgs) -> Result<ExitCode> {
    cmd_explain(&a.trace, a.evidence.as_deref())
}

/// The report of the trace at `path`, and of the replay whose evidence is in `evidence`.
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
