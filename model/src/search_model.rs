//! `McpModel` as the search engine sees it ([`SearchModel`] and [`DiskCodec`], in
//! `search/space.rs`), and the main search on it: [`explore_with`] runs the engine's pass and
//! makes the paths it finds counterexamples (their states replayed, the Explorer's index path).

use crate::action::Action;
use crate::codec;
use crate::model::McpModel;
use crate::property::PropertyKind;
use crate::search::budget::Budget;
use crate::search::check::{counterexample, CheckResult, Stats, Verdict, WorstCase};
use crate::search::explore::{search, End, Options, Spilled};
use crate::search::{DiskCodec, SearchModel};
use crate::state::State;

impl SearchModel for McpModel {
    type State = State;
    type Action = Action;
    type Property = PropertyKind;

    fn init_states(&self) -> Vec<State> {
        stateright::Model::init_states(self)
    }

    #[inline]
    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        stateright::Model::actions(self, s, out)
    }

    #[inline]
    fn apply(&self, s: &mut State, action: Action) -> bool {
        McpModel::apply(self, s, action)
    }

    #[inline]
    fn holds(&self, property: PropertyKind, s: &State) -> bool {
        property.holds(self, s)
    }

    /// The side effects of the worst logical call.
    #[inline]
    fn measure(&self, s: &State) -> u8 {
        s.worst_effects()
    }
}

impl DiskCodec for McpModel {
    const STATE_BYTES: usize = codec::STATE_BYTES;
    const ACTION_BYTES: usize = codec::ACTION_BYTES;

    #[inline]
    fn encode_state(&self, s: &State, out: &mut [u8]) {
        codec::encode_state(s, out.try_into().expect("a state's bytes"));
    }

    /// Every state of a run has the model's view, which the bytes leave out.
    #[inline]
    fn decode_state(&self, bytes: &[u8]) -> Option<State> {
        codec::decode_state(bytes.try_into().ok()?, self.view)
    }

    #[inline]
    fn encode_action(&self, a: Action, out: &mut [u8]) {
        out.copy_from_slice(&codec::encode_action(a));
    }

    #[inline]
    fn decode_action(&self, bytes: &[u8]) -> Option<Action> {
        codec::decode_action(bytes.try_into().ok()?)
    }
}

/// Everything one pass finds.
#[derive(Clone, Debug)]
pub struct Exploration {
    /// One result per property asked for, in the order asked.
    pub results: Vec<CheckResult>,
    /// The worst case (see its `search` for how far it was looked for).
    pub worst: WorstCase,
    /// Counts for the whole pass.
    pub stats: Stats,
    /// How the pass ended.
    pub end: End,
    /// Whether the pass went on on disk past its memory limit, and how much it wrote.
    pub spilled: Option<Spilled>,
}

/// Explore every reachable state of `model` once, checking `properties` and the worst case,
/// with no budget.
pub fn explore(model: &McpModel, properties: &[PropertyKind]) -> Exploration {
    explore_with(model, properties, Options { worst: true, budget: Budget::unlimited(), threads: 1 })
}

/// Explore `model` breadth-first, checking `properties` (and the worst case if asked), until
/// every reachable state is seen, or (without `worst`) every property asked for is violated, or
/// the budget is reached (see [`search`]; on disk past the memory limit with a spill folder).
/// A property the cell does not check ([`PropertyKind::checked_in`]) is left out, with no result.
pub fn explore_with(model: &McpModel, properties: &[PropertyKind], options: Options) -> Exploration {
    let properties: Vec<PropertyKind> = properties.iter().copied().filter(|p| p.checked_in(&model.config)).collect();
    let properties = &properties[..];
    let found = search(model, properties, options);
    let stats = found.stats;
    let results = properties
        .iter()
        .zip(found.violations)
        .map(|(p, bad)| CheckResult {
            property: *p,
            verdict: match (&bad, found.end) {
                (Some(_), _) => Verdict::Violated,
                (None, End::Exhaustive) => Verdict::Holds,
                (None, _) => Verdict::Unknown,
            },
            counterexample: bad.map(|actions| counterexample(model, actions)),
            stats,
        })
        .collect();
    let trace = found.worst_path.map(|actions| counterexample(model, actions));
    let worst = WorstCase { effects: found.worst, trace, stats, search: found.worst_search };
    Exploration { results, worst, stats, end: found.end, spilled: found.spilled }
}
