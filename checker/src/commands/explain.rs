//! `mcp-once explain`: the issue for the project where the bug lives, from a trace file and, if
//! given, a replay's evidence: who (the server and client by name and version), what was
//! expected and what happened, why the spec allows it, the fix the model proves, how to
//! reproduce it. Paths are redacted unless `--keep-paths`.

use crate::args::BudgetArgs;
use crate::cells::{builtins, profile_for};
use crate::conformant::{check_conformant, ConformantAnswer};
use crate::fix::{self, Audience};
use crate::report::issue::{issue_markdown, Issue, GITHUB_LIMIT};
use crate::report::redact::Redactor;
use crate::report::replay::ReplayEvidence;
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::probe_client::measured::MeasuredClient;
use mcp_once_model::search::Counterexample;
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{explore_with, Budget, McpModel, Options, Profile, PropertyKind};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Options of `mcp-once explain`.
#[derive(Args)]
pub struct ExplainArgs {
    /// The trace file (as written by check --out or matrix --out).
    trace: PathBuf,
    /// A replay's evidence folder (replay --evidence): names the server and client, adds the
    /// verdict, the counts and the wire log.
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Whose issue it is (what the title and the suggested fix address): the server's SDK, the
    /// client's retry policy, or the spec. Default: server with --evidence, or where only a
    /// server that breaks a MUST reaches the violation; spec otherwise.
    #[arg(long = "for", value_enum, value_name = "WHO")]
    audience: Option<Audience>,
    /// A `probe-client --records` folder: its `client.json` names the client (command and
    /// clientInfo version) the report is about, with `--for client`.
    #[arg(long, value_name = "DIR")]
    client_record: Option<PathBuf>,
    /// Keep the machine's absolute paths (by default they become placeholders such as
    /// `<evidence>/evidence.jsonl` or `<fixtures>/typescript/server.mjs`).
    #[arg(long)]
    keep_paths: bool,
    /// Where each search for the suggested fix stops (its own default: 2,000,000 unique
    /// states, unless --spill-dir lets it go on on disk past the memory budget).
    #[command(flatten)]
    budget: BudgetArgs,
}

/// Run `mcp-once explain`.
pub fn run(a: ExplainArgs) -> Result<ExitCode> {
    let file = a.trace.display().to_string();
    let text = std::fs::read_to_string(&a.trace).map_err(|e| anyhow!("{file}: cannot read trace: {e}"))?;
    let trace = TraceFile::parse(&file, &text)?;
    let mut loaded = builtins();
    let profile = profile_for(&trace.config.profile, &mut loaded)?;
    let valid = trace.validate(&file, &profile)?;
    let evidence = a.evidence.as_deref().map(ReplayEvidence::load).transpose()?;
    let dir = a.evidence.as_deref().map(|d| d.display().to_string()).unwrap_or_default();
    if let Some(ev) = &evidence {
        evidence_of(&trace, &profile, ev).map_err(|why| anyhow!("{dir}: not the evidence of {file}: {why}"))?;
    }
    let client = a.client_record.as_deref().map(MeasuredClient::read).transpose()?;
    // The worst case's fix is the fix for its property: no call taking effect twice.
    let property = trace.property.judged();
    let budget = a.budget.budget()?;
    // Where the trace's server breaks a MUST, whether one that keeps it reaches the same.
    let conformant = check_conformant(&valid.model, &[property], Options { worst: false, budget, threads: 1 }, None)?;
    // Whose issue, unless told: the server's where a replay named one, or where only a server
    // that breaks a MUST reaches the violation (no spec change is needed); else the spec's.
    let server_only = conformant.as_ref().is_some_and(|k| matches!(k.answer(property), ConformantAnswer::NotReached));
    let audience =
        a.audience.unwrap_or(if evidence.is_some() || server_only { Audience::Server } else { Audience::Spec });
    let fix = fix::search(&valid.model.config, property, audience, budget, a.budget.threads())?;
    let issue = Issue {
        model: &valid.model,
        property: trace.property,
        cex: &valid.path,
        trace_file: &file,
        evidence: evidence.as_ref().map(|e| (e, dir.as_str())),
        audience,
        fix: &fix,
        conformant: conformant.as_ref(),
        client: client.as_ref(),
        written_by_check: written_by_check(&valid.model, trace.property, &valid.path, budget),
    };
    let redactor = Redactor::new(a.keep_paths, &a.trace, a.evidence.as_deref());
    crate::report::format::emit(&fit(&redactor.apply(&issue_markdown(&issue)), a.evidence.as_deref()))?;
    Ok(ExitCode::SUCCESS)
}

/// Whether `mcp-once check` of the trace's cell writes this very trace: its search's shortest
/// run of the property (or worst case) takes the same steps.
fn written_by_check(model: &McpModel, kind: TraceKind, path: &Counterexample, budget: Budget) -> bool {
    let worst = kind == TraceKind::WorstCase;
    let properties: Vec<PropertyKind> = match kind {
        TraceKind::Counterexample(p) => vec![p],
        TraceKind::WorstCase => Vec::new(),
    };
    let found = explore_with(model, &properties, Options { worst, budget, threads: 1 });
    let shortest = match kind {
        TraceKind::Counterexample(_) => found.results.first().and_then(|r| r.counterexample.as_ref()),
        TraceKind::WorstCase => found.worst.trace.as_ref(),
    };
    shortest.is_some_and(|s| s.actions == path.actions)
}

/// `Err` naming the first difference when `ev` is not the evidence of a replay of `trace`
/// (under `profile`): another property, another cell, another wire revision, or a step the
/// trace does not have there. An issue that mixed them would report one run's counts under
/// another's trace.
fn evidence_of(trace: &TraceFile, profile: &Profile, ev: &ReplayEvidence) -> Result<(), String> {
    let r = &ev.result;
    if r.property != trace.property {
        return Err(format!("the evidence is of a `{}` trace, and the trace is `{}`", r.property, trace.property));
    }
    if let Some(cell) = r.cell.as_ref().filter(|c| **c != trace.config) {
        return Err(format!("the evidence is of the cell `{cell}`, and the trace's is `{}`", trace.config));
    }
    if r.revision != profile.revision {
        return Err(format!(
            "the evidence's replay spoke revision {}, and the trace's profile `{}` is revision {}",
            r.revision, profile.name, profile.revision
        ));
    }
    if r.steps.len() > trace.actions.len() {
        return Err(format!("the evidence has {} steps, and the trace {}", r.steps.len(), trace.actions.len()));
    }
    for (step, action) in r.steps.iter().zip(&trace.actions) {
        let ours = action.to_string();
        if step.action != ours {
            return Err(format!(
                "step {} of the evidence is `{}`, and the trace's is `{ours}`",
                step.step, step.action
            ));
        }
    }
    Ok(())
}

/// The report cut at a line to stay under a GitHub comment's limit, should redaction or
/// `--keep-paths` have made it longer than the fold allowed for (saying where the rest is).
fn fit(report: &str, evidence: Option<&Path>) -> String {
    if report.len() < GITHUB_LIMIT {
        return report.to_string();
    }
    let note = format!(
        "\n\n(The report was cut here to stay under {GITHUB_LIMIT} characters; the whole wire log is in {}.)\n",
        evidence.map_or("the evidence folder".into(), |_| "the evidence folder's evidence.jsonl".to_string())
    );
    let mut cut = GITHUB_LIMIT - note.len() - 1;
    while !report.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = report[..cut].rfind('\n').unwrap_or(cut);
    format!("{}{note}", &report[..cut])
}
