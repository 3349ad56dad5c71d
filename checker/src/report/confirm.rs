//! What `mcp-once confirm` prints: a table per cell and property (text), or one JSON object
//! `{"counterexamples", "confirmed", "results": [{"cell", "property", "sdk", "verdict",
//! "reason", "evidence"}]}`.

use crate::confirm::Confirmation;
use mcp_once_conformance::replay::ReplayVerdict;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The JSON of `confirm --format json`.
#[derive(Serialize, Deserialize)]
pub struct ConfirmRecord {
    /// Replays: every counterexample (and worst case) of the cells, once per SDK.
    pub counterexamples: usize,
    /// Those confirmed: a violation seen on the server.
    pub confirmed: usize,
    /// Worst cases of at most one effect per call that ran with their effects: no duplicate to
    /// confirm, counted apart from the confirmations.
    #[serde(default)]
    pub ran: usize,
    /// One per replay, in the cells' order.
    pub results: Vec<Confirmation>,
}

impl ConfirmRecord {
    /// The record of `results`.
    pub fn of(results: Vec<Confirmation>) -> Self {
        let confirmed = count(&results, ReplayVerdict::Confirmed);
        let ran = count(&results, ReplayVerdict::Ran);
        ConfirmRecord { counterexamples: results.len(), confirmed, ran, results }
    }
}

/// How many of `results` have `verdict`.
pub fn count(results: &[Confirmation], verdict: ReplayVerdict) -> usize {
    results.iter().filter(|r| r.verdict == verdict).count()
}

/// The verdicts in the order the summary lists them.
const VERDICTS: [ReplayVerdict; 6] = [
    ReplayVerdict::Confirmed,
    ReplayVerdict::Ran,
    ReplayVerdict::NotReproduced,
    ReplayVerdict::Diverged,
    ReplayVerdict::Inconclusive,
    ReplayVerdict::Interrupted,
];

/// The text table: one block per cell, one row per property and SDK with its verdict and
/// reason, then a summary line naming the evidence folder.
pub fn confirm_text(results: &[Confirmation], evidence: &Path) -> String {
    let mut out = String::new();
    let width = results.iter().map(|r| r.property.property_name().len()).max().unwrap_or(0);
    let mut cell = None;
    for r in results {
        if cell != Some(&r.cell) {
            out.push_str(&format!("{}\n", r.cell));
            cell = Some(&r.cell);
        }
        out.push_str(&format!(
            "  {:width$}  {:10}  {:14}  {}\n",
            r.property,
            r.sdk,
            r.verdict.as_str(),
            r.reason,
            width = width
        ));
    }
    let figures: Vec<String> = VERDICTS
        .iter()
        .map(|v| (v, count(results, *v)))
        .filter(|(v, n)| *n > 0 || **v == ReplayVerdict::Confirmed)
        .map(|(v, n)| format!("{n} {v}"))
        .collect();
    out.push_str(&format!(
        "\n{} counterexamples replayed: {}; evidence in {}\n",
        results.len(),
        figures.join(", "),
        evidence.display()
    ));
    out
}
