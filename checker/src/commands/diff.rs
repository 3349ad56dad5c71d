//! `mcp-once diff`: the default matrix under two profiles, reduced to the cells that change.

use crate::args::BudgetArgs;
use crate::cells::{builtins, matrix_cells, profile_for, run_with_progress};
use crate::compare::diff;
use crate::key_effect::{missing_baselines, KeyEffect};
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
use anyhow::Result;
use clap::Args;
use mcp_once_model::catalogue::own_handlers;
use mcp_once_model::{Config, HandlerKind, Options, Profile, PropertyKind};
use std::process::ExitCode;
use std::sync::Arc;

/// Options of `mcp-once diff`.
#[derive(Args)]
pub struct DiffArgs {
    /// The profile before the change (name or file).
    a: String,
    /// The profile after the change (name or file).
    b: String,
    /// Logical calls in every cell (1 to 4; default: the default matrix's, 2).
    #[arg(long)]
    calls: Option<u8>,
    /// Retries, or framework re-runs, per call in every cell (0 to 3; default: the default
    /// matrix's, 1, and 2 under framework-retry).
    #[arg(long)]
    retries: Option<u8>,
    /// Server crashes in every cell (0 to 3; default: the default matrix's, 1).
    #[arg(long)]
    crashes: Option<u8>,
    /// Compare every cell under each of these tool handlers (comma-separated: effect-only,
    /// input-after-effect, input-before-effect, input-after-effect-stateful,
    /// input-before-effect-single-use), as `matrix`
    /// does. Default: every kind where either profile puts MRTR continuations inside the key's
    /// scope (`idempotency_continuations = included`), else effect-only.
    #[arg(long, value_delimiter = ',', value_parser = crate::args::parse::<HandlerKind>, value_name = "LIST")]
    handler: Vec<HandlerKind>,
    /// Every cell with two callers presenting one key, as `matrix --callers` does.
    #[command(flatten)]
    callers: crate::args::CallerArgs,
    /// Leave the counterexample traces out: the bottom line, the bounds and each cell's
    /// verdicts only (short enough for a GitHub comment).
    #[arg(long)]
    no_traces: bool,
    /// Show the shortest trace of each cell where the second profile's key leaves duplicates
    /// (at-most-once violated with the key as without it).
    #[arg(long)]
    still_violated_traces: bool,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Output format: text, markdown or json.
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Diff))]
    format: Format,
}

impl DiffArgs {
    /// The bound flags and the callers' applied to a cell of the default matrix.
    fn bounded(&self, mut c: Config) -> Config {
        let b = &mut c.bounds;
        b.calls = self.calls.unwrap_or(b.calls);
        b.retries = self.retries.unwrap_or(b.retries);
        b.crashes = self.crashes.unwrap_or(b.crashes);
        self.callers.apply(c)
    }

    /// The handler kinds compared under profiles `a` and `b`, and why, in words.
    fn handlers(&self, a: &Profile, b: &Profile) -> (Vec<HandlerKind>, String) {
        let names = |kinds: &[HandlerKind]| kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(", ");
        if !self.handler.is_empty() {
            return (self.handler.clone(), format!("handlers {} (--handler)", names(&self.handler)));
        }
        // The handler kinds either profile's own matrix takes (a key scope over continuations
        // changes nothing for a tool that never asks for input).
        let mut own = own_handlers(a);
        for kind in own_handlers(b) {
            if !own.contains(&kind) {
                own.push(kind);
            }
        }
        if !own.is_empty() {
            let text = format!("handlers {}: a profile puts MRTR continuations inside the key's scope", names(&own));
            return (own, text);
        }
        (vec![], "the effect-only handler (--handler adds others)".into())
    }

    /// The bounds in words, for the report.
    fn bounds_text(&self) -> String {
        let given = |v: Option<u8>, what: &str, default: &str| match v {
            Some(n) => format!("{what} {n}"),
            None => format!("{what} {default}"),
        };
        format!(
            "{}, {}, {} in every cell{}",
            given(self.calls, "calls", "2"),
            given(self.retries, "retries", "1 (framework re-runs 2)"),
            given(self.crashes, "crashes", "1"),
            if self.calls.or(self.retries).or(self.crashes).is_none() {
                " (the default matrix's; --calls, --retries and --crashes change them)"
            } else {
                ""
            }
        )
    }
}

/// Run `mcp-once diff`: exit 0 when no cell changes, 1 when some do.
pub fn run(a: DiffArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    let pa = profile_for(&a.a, &mut loaded)?;
    let pb = profile_for(&a.b, &mut loaded)?;
    let options = Options { worst: true, budget: a.budget.budget()?, threads: 1 };
    let (handlers, handlers_text) = a.handlers(&pa, &pb);
    let matrix_of = |p: &Profile| {
        let cells = matrix_cells(std::slice::from_ref(p), &[], &handlers);
        let cells = cells.into_iter().map(|(c, p)| (a.bounded(c), p)).collect();
        run_with_progress(&p.name, cells, PropertyKind::ALL, options, None, a.budget.threads())
    };
    let (cells_a, cells_b) = (matrix_of(&pa)?, matrix_of(&pb)?);
    // The same behaviours without a key, where the first profile's matrix has no such cell.
    let missing = missing_baselines(&pa.name, &cells_a, &cells_b);
    let base = Arc::new(pa.clone());
    let missing = missing.into_iter().map(|c| (c, Arc::clone(&base))).collect();
    let baselines = run_with_progress(
        &format!("{} without a key", pb.name),
        missing,
        PropertyKind::ALL,
        options,
        None,
        a.budget.threads(),
    )?;
    let d = diff(&pa, &cells_a, &pb.name, &cells_b);
    let keys = KeyEffect::pair(&pa.name, &pb.name, &cells_a, &baselines, &cells_b);
    let bounds = format!("{}; {handlers_text}", a.bounds_text());
    let report = Report::Diff {
        diff: &d,
        keys: &keys,
        bounds: &bounds,
        no_traces: a.no_traces,
        still_violated_traces: a.still_violated_traces,
    };
    print(a.format, &report)?;
    Ok(if d.changes.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
