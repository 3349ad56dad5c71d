//! Each step of a path explained once, for every renderer (the text trace, the Markdown report,
//! the rules paragraph, the ITF file's `#meta`): what it did, the profile's rules that
//! allow it, and the MUSTs it breaks or the SHOULDs it does not follow.

use crate::action::Action;
use crate::conformance::{breaches_at, Breach};
use crate::model::McpModel;
use crate::profile::{Citation, KnobId};
use crate::rules::{citations, describe};
use crate::search::check::Counterexample;

/// One step of a path: the action, one sentence of what it did, and the rules behind it.
#[derive(Clone, Debug)]
pub struct StepExplanation<'m> {
    /// Its number, from 1.
    pub number: usize,
    /// The action taken.
    pub action: Action,
    /// What it did, in one sentence (with what it did to requests waiting on a key).
    pub what: String,
    /// The knobs whose rules allow it: (knob, its value, the citation).
    pub rules: Vec<(KnobId, String, &'m Citation)>,
    /// The rules of the profile it goes against: MUSTs it breaks (a non-conformant server's
    /// step), SHOULDs it does not follow.
    pub breaches: Vec<Breach>,
}

/// Every step of `path` under `model`, explained.
pub fn explain_path<'m>(model: &'m McpModel, path: &Counterexample) -> Vec<StepExplanation<'m>> {
    path.actions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (before, after) = (&path.states[i], &path.states[i + 1]);
            StepExplanation {
                number: i + 1,
                action: *a,
                what: describe(model, before, a, after),
                rules: citations(model, after, a),
                breaches: breaches_at(model, &path.states, &path.actions, i),
            }
        })
        .collect()
}
