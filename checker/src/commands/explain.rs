//! `mcp-once explain`: an issue-ready Markdown report of a trace file, with a replay's evidence
//! if given.

use crate::report;
use crate::run::{builtins, profile_for};
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Check, McpModel, PropertyKind};
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
    trace.validate(&file, &profile)?;
    let model = McpModel::new(trace.config.clone(), profile, Check::Property(PropertyKind::AtMostOnce))
        .map_err(|e| anyhow!(e))?;
    let states =
        mcp_once_model::search::replay(&model, &trace.actions).map_err(|(s, r)| anyhow!("{file}: step {s}: {r}"))?;
    let index_path = trace.meta.get("action_index_path").and_then(|v| v.as_str()).unwrap_or("").to_string();
    let cex = mcp_once_model::Counterexample { states, actions: trace.actions.clone(), index_path };
    let replay_section = evidence.map(report::replay_markdown).transpose()?;
    print!("{}", report::explain_markdown(&model, &trace.property, &cex, &file));
    if let Some(section) = replay_section {
        print!("{section}");
    }
    Ok(ExitCode::SUCCESS)
}
