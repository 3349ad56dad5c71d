//! `mcp-once check`: one configuration, the default matrix as a summary (of every built-in
//! profile, or of the one `--profile` names when it is the only flag), or a trace file
//! validated against the model.

use crate::args::{properties, BudgetArgs, ConfigArgs};
use crate::cells::{builtins, exit_code, matrix_cells, profile_for, run_cells, run_with_progress, with_profiles};
use crate::conformant::check_conformant;
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
use anyhow::{anyhow, bail, Result};
use clap::Args;
use mcp_once_model::budget::human_bytes;
use mcp_once_model::catalogue::{own_annotations, own_handlers, with_annotations};
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Options, PropertyKind};
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once check`.
#[derive(Args)]
pub struct CheckArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// One property (at-most-once, no-silent-effect, success-implies-effect, exactly-once) or all.
    #[arg(long, default_value = "all")]
    property: String,
    /// With one --property: search on for the worst case (the most effects one call can reach)
    /// after the property's shortest counterexample; `all` and the default matrix always do.
    #[arg(long)]
    worst: bool,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Output format: text, json, markdown or html (one cell: the verdicts and each
    /// counterexample's issue-ready report; the whole matrix: its table; html: one page, the
    /// verdict grid with each trace drawn).
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Check))]
    format: Format,
    /// Write each counterexample (and the worst case) as an ITF trace file in this folder.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Check a trace file against the model instead: is it a real path that violates its property?
    #[arg(long, conflicts_with_all = ["profile", "transport", "client", "key", "server", "calls", "retries", "crashes"])]
    trace: Option<PathBuf>,
}

/// Run `mcp-once check`.
pub fn run(a: CheckArgs) -> Result<ExitCode> {
    if let Some(path) = &a.trace {
        return check_trace(path);
    }
    let props = properties(&a.property)?;
    let budget = a.budget.budget()?;
    // No flags: every built-in profile's matrix; `--profile P` alone: P's own matrix.
    if !a.config.any_but_profile() {
        let profiles = match &a.config.profile {
            None => builtins(),
            Some(name) => vec![profile_for(name, &mut builtins())?],
        };
        profiles.iter().for_each(warn_stale_citations);
        let started = std::time::Instant::now();
        let options = Options { worst: true, budget, threads: 1 };
        // A profile's own matrix takes the handler kinds its rules matter for (a key scope
        // over MRTR continuations: every kind); the built-ins' is the default matrix.
        let handlers = match &a.config.profile {
            Some(_) => own_handlers(&profiles[0]),
            None => vec![],
        };
        let mut matrix = matrix_cells(&profiles, &[], &handlers);
        // These cells have one caller each: `no-foreign-replay` is checked with two only.
        let props: Vec<PropertyKind> =
            props.iter().copied().filter(|p| matrix.iter().any(|(c, _)| p.checked_in(c))).collect();
        // A profile whose retry rule reads the tool's annotations: every annotation too.
        if let (Some(_), [p]) = (&a.config.profile, profiles.as_slice()) {
            let annotations = own_annotations(p);
            let configs = matrix.into_iter().map(|(c, _)| c).collect();
            matrix = with_profiles(with_annotations(configs, &annotations), &profiles);
        }
        let cells = run_with_progress("checking", matrix, &props, options, a.out.as_deref(), a.budget.threads())?;
        let seconds = started.elapsed().as_secs_f64();
        print(a.format, &Report::ProfileMatrix { cells: &cells, properties: &props, seconds })?;
        return Ok(exit_code(&cells));
    }
    let (config, profile) = a.config.resolve()?;
    if let [p] = props[..] {
        if !p.checked_in(&config) {
            bail!("--property {p} is checked with two callers (--callers 2): one caller's keys never meet another's");
        }
    }
    warn_stale_citations(&profile);
    // One property answers at its shortest counterexample; `all` is the full report.
    let options = Options { worst: a.worst || props.len() > 1, budget, threads: 1 };
    let cells = run_cells(vec![(config, profile)], &props, options, a.out.as_deref(), a.budget.threads(), &|| {})?;
    // Where the server breaks a MUST of the profile, the conformant servers of its kind too.
    let conformant = match &cells[0].outcome {
        Ok(c) if c.any_violated() => check_conformant(&c.model, &props, options, a.out.as_deref())?,
        _ => None,
    };
    let conformant = conformant.as_ref();
    print(a.format, &Report::Cell { cell: &cells[0], conformant })?;
    if let Ok(Some(s)) = cells[0].outcome.as_ref().map(|c| c.spilled) {
        eprintln!(
            "mcp-once: the search reached its memory budget after {} states and went on on disk: {} written in all, at most {} on disk at once, {} merges of a level into the sorted fingerprints, {} sorted runs (removed)",
            s.at_states,
            human_bytes(s.written_bytes),
            human_bytes(s.peak_bytes),
            s.merges,
            s.runs
        );
    }
    if let Ok(Some((why, depth))) = cells[0].outcome.as_ref().map(|c| c.stopped()) {
        eprintln!(
            "mcp-once: the search stopped before it was exhaustive: {why}; every state within {depth} steps was checked (what was decided is reported above)"
        );
    }
    Ok(exit_code(&cells))
}

/// One warning line on stderr for each inherited citation the profile's own values contradict
/// (see `Profile::stale_citations`): the reports would cite it at steps it says the opposite of.
fn warn_stale_citations(profile: &mcp_once_model::Profile) {
    for stale in profile.stale_citations() {
        eprintln!("mcp-once: warning: profile {}: {}", profile.name, stale.line());
    }
}

/// `check --trace`: is the file a real path of the model that violates its property?
fn check_trace(path: &PathBuf) -> Result<ExitCode> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{file}: cannot read trace: {e}"))?;
    let trace = TraceFile::parse(&file, &text)?;
    let mut loaded = builtins();
    let profile = profile_for(&trace.config.profile, &mut loaded)?;
    let steps = trace.validate(&file, &profile)?.steps();
    println!(
        "{file}: valid: a path of {steps} steps of the model under {} that violates `{}`",
        trace.config, trace.property
    );
    Ok(ExitCode::SUCCESS)
}
