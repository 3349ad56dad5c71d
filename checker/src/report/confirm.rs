//! What `mcp-once confirm` prints: a table per cell and property (text), or one JSON object
//! `{"counterexamples", "confirmed", "results": [{"cell", "property", "sdk", "verdict",
//! "reason", "evidence"}]}`.

use crate::confirm::{behaviours, Confirmation};
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
    /// On a server given by `--stdio`/`--http`: each server behaviour whose counterexamples
    /// were replayed, and whether the server's replays fit it (every one confirmed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub behaviours: Vec<BehaviourFit>,
    /// One per replay, in the cells' order.
    pub results: Vec<Confirmation>,
}

/// Whether a given server's replays fit one server behaviour of the model.
#[derive(Serialize, Deserialize)]
pub struct BehaviourFit {
    /// The behaviour (`plain`, `honours-cancel`).
    pub server: mcp_once_model::ServerImpl,
    /// Its counterexamples replayed.
    pub replays: usize,
    /// Of them, those confirmed (or run, for a worst case of one effect per call).
    pub confirmed: usize,
    /// Whether every one was.
    pub fits: bool,
    /// Of them, those the server refuted (not reproduced, or diverged from the trace); the rest
    /// of those not confirmed reached no verdict (inconclusive, interrupted).
    #[serde(default)]
    pub refuted: usize,
}

impl ConfirmRecord {
    /// The record of `results`.
    pub fn of(results: Vec<Confirmation>) -> Self {
        let confirmed = count(&results, ReplayVerdict::Confirmed);
        let ran = count(&results, ReplayVerdict::Ran);
        let behaviours = fits(&results);
        ConfirmRecord { counterexamples: results.len(), confirmed, ran, behaviours, results }
    }
}

/// On a given server (replays named `server`): how its replays fit each behaviour.
fn fits(results: &[Confirmation]) -> Vec<BehaviourFit> {
    let on_server: Vec<Confirmation> = results.iter().filter(|r| r.sdk == "server").cloned().collect();
    behaviours(&on_server)
        .into_iter()
        .map(|(server, fits)| {
            let of = on_server.iter().filter(|r| r.behaviour == Some(server));
            let ok = |r: &&Confirmation| matches!(r.verdict, ReplayVerdict::Confirmed | ReplayVerdict::Ran);
            let no = |r: &&Confirmation| matches!(r.verdict, ReplayVerdict::NotReproduced | ReplayVerdict::Diverged);
            let (replays, confirmed, refuted) =
                (of.clone().count(), of.clone().filter(ok).count(), of.filter(no).count());
            BehaviourFit { server, replays, confirmed, fits, refuted }
        })
        .collect()
}

/// The text that says which behaviour a given server's replays fit, or nothing for fixtures.
fn fit_text(results: &[Confirmation]) -> String {
    let fits = fits(results);
    if fits.is_empty() {
        return String::new();
    }
    let each: Vec<String> =
        fits.iter().map(|f| format!("{}: {} of {} confirmed", f.server, f.confirmed, f.replays)).collect();
    let fitting: Vec<String> = fits.iter().filter(|f| f.fits).map(|f| f.server.to_string()).collect();
    let untold: Vec<String> = fits.iter().filter(|f| f.refuted == 0).map(|f| f.server.to_string()).collect();
    let refuted: Vec<String> = fits.iter().filter(|f| f.refuted > 0).map(|f| f.server.to_string()).collect();
    let verdict = match fitting.len() {
        0 if untold.is_empty() => {
            "it fits neither: some counterexample of each behaviour was not reproduced or diverged (see the reasons above)"
                .to_string()
        }
        0 if refuted.is_empty() => "which behaviour it has could not be told: no replay refuted either, and some of each reached no verdict (see the reasons above)".to_string(),
        0 => format!(
            "it does not behave as {}; whether it behaves as {} could not be told (no replay refuted it, and some reached no verdict)",
            refuted.join(" or "),
            untold.join(" or ")
        ),
        1 if fits.len() > 1 => format!(
            "it behaves as {}; the other behaviour's counterexamples not confirmed are those it does not have",
            fitting[0]
        ),
        1 => format!("it behaves as {}", fitting[0]),
        _ => format!("its replays fit {} alike (no replay told them apart)", fitting.join(" and ")),
    };
    format!("On the given server, by the cell's server behaviour: {}; {verdict}.\n", each.join(", "))
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
    out.push_str(&fit_text(results));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_once_model::trace::TraceKind;
    use mcp_once_model::ServerImpl;

    fn replay(behaviour: ServerImpl, verdict: ReplayVerdict) -> Confirmation {
        Confirmation {
            cell: format!("cell-{behaviour}"),
            property: TraceKind::WorstCase,
            sdk: "server".into(),
            behaviour: Some(behaviour),
            verdict,
            reason: String::new(),
            evidence: None,
        }
    }

    #[test]
    fn a_server_whose_replays_reach_no_verdict_is_not_said_to_fit_neither() {
        use ReplayVerdict::*;
        use ServerImpl::{HonoursCancel, Plain};
        let untold = fit_text(&[replay(Plain, Inconclusive), replay(HonoursCancel, Inconclusive)]);
        assert!(untold.contains("could not be told"), "{untold}");
        assert!(!untold.contains("fits neither"), "{untold}");
        let neither = fit_text(&[replay(Plain, NotReproduced), replay(HonoursCancel, Diverged)]);
        assert!(neither.contains("it fits neither"), "{neither}");
        let half = fit_text(&[replay(Plain, NotReproduced), replay(HonoursCancel, Inconclusive)]);
        assert!(
            half.contains("does not behave as plain") && half.contains("honours-cancel could not be told"),
            "{half}"
        );
        let fits = fit_text(&[replay(Plain, Confirmed), replay(HonoursCancel, NotReproduced)]);
        assert!(fits.contains("it behaves as plain"), "{fits}");
    }
}
