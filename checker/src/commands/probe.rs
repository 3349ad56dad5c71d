//! `mcp-once probe`: a server conformance-tested with the model's catalogue (and the SEP-3182
//! key checks with `--key-at`), in the MCP conformance suite's check shape, after a preflight.

use crate::args::{SummaryArgs, TargetArgs};
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
use crate::report::summary;
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::probe;
use mcp_once_conformance::probe::baseline::ExpectedFailures;
use mcp_once_conformance::probe::ProbeError;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once probe`.
#[derive(Args)]
pub struct ProbeArgs {
    #[command(flatten)]
    target: TargetArgs,
    /// Write the evidence (one folder per check and replay, each with its result.json) into
    /// this folder.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Run only these checks (comma-separated ids; the preflight always runs)
    #[arg(long, value_delimiter = ',')]
    checks: Vec<String>,
    /// The checks the server is known to fail, in the MCP conformance suite's YAML shape
    /// (`server:` a list of check ids): exit 0 when only they fail, 1 on a new failure or a
    /// listed check that now passes (stale baseline), 2 when a check could not be tested
    #[arg(long, value_name = "FILE")]
    expected_failures: Option<PathBuf>,
    /// Output format (json: `{"checks": [...]}` in the MCP conformance suite's shape, with
    /// `baseline` when --expected-failures is given; junit: one test case per check, an
    /// expected failure skipped, a stale baseline entry failed).
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Probe))]
    format: Format,
    #[command(flatten)]
    summary: SummaryArgs,
}

/// Run `mcp-once probe`: exit 1 a check failed, 2 one could not be tested, 0 all passed.
pub fn run(a: ProbeArgs) -> Result<ExitCode> {
    let mut options = a.target.options()?;
    options.evidence_dir = a.evidence.clone();
    let evidence = options.evidence_dir.clone();
    let keyed = a.target.key_at.is_some();
    let baseline = match &a.expected_failures {
        Some(path) => {
            let b = ExpectedFailures::load(path).map_err(|e| anyhow!("--expected-failures {e}"))?;
            b.check_ids(&probe::every_check_id())
                .map_err(|e| anyhow!("--expected-failures {}: {e}", path.display()))?;
            Some(b)
        }
        None => None,
    };
    let checks = match probe::run_probe(options, keyed, &a.checks)? {
        Some(Ok(checks)) => checks,
        Some(Err(e @ ProbeError::UnknownCheck { .. })) => return Err(anyhow!("--checks: {e}")),
        Some(Err(e @ ProbeError::Evidence { .. })) => return Err(anyhow!("--evidence: {e}")),
        Some(Err(e)) => return Err(e.into()),
        None => {
            eprintln!("mcp-once: probe interrupted; every server process group was killed");
            return Ok(ExitCode::from(2));
        }
    };
    let judged = baseline.as_ref().map(|b| b.judge(&checks));
    let report = Report::Probe { checks: &checks, baseline: judged.as_ref(), evidence: evidence.as_deref() };
    print(a.format, &report)?;
    if let Some(path) = &a.summary.summary {
        summary::append(path, &report)?;
    }
    let code = judged.map_or_else(|| probe::checks::exit_code(&checks), |j| j.exit_code());
    Ok(ExitCode::from(code))
}
