//! Running the checker: one property per stateright run (breadth-first, one thread), which
//! makes every counterexample a shortest one; the worst-case search; and an independent
//! breadth-first search used to verify that claim.
//!
//! Why one property per run: stateright 0.31 overwrites a property's discovery with later,
//! deeper ones when a run checks several properties (see `shared/research/stateright.md`), so
//! its counterexamples are shortest only when a run has a single property.

use crate::action::Action;
use crate::model::McpModel;
use crate::property::{Check, PropertyKind};
pub use crate::search::pass::{Stats, WorstSearch};
use crate::state::State;
use serde::{Deserialize, Serialize};
use stateright::{Checker, HasDiscoveries, Model, Property};
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

/// A path of the model from its initial state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counterexample {
    /// The states, first to last (`actions.len() + 1` of them).
    pub states: Vec<State>,
    /// The actions between them.
    pub actions: Vec<Action>,
    /// stateright's action-index path (`0/2/1/...`), as the Explorer's URLs take it.
    pub index_path: String,
}

impl Counterexample {
    /// Number of actions.
    pub fn len(&self) -> usize {
        self.actions.len()
    }
    /// Whether the path has no action.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty()
    }
    /// Side effects of the worst logical call in the last state.
    pub fn effects(&self) -> u8 {
        self.states.last().map_or(0, State::worst_effects)
    }
}

/// Holds, violated, or not decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// No reachable state violates the property (the search was exhaustive).
    Holds,
    /// A reachable state violates it; see the counterexample.
    Violated,
    /// The search stopped at its budget before deciding it (see [`crate::search::budget::Stop`]): no
    /// violation within the depth it completed.
    Unknown,
}

/// The result of checking one property.
#[derive(Clone, Debug, Serialize)]
pub struct CheckResult {
    /// The property.
    pub property: PropertyKind,
    /// Holds or violated.
    pub verdict: Verdict,
    /// A shortest counterexample, when violated.
    pub counterexample: Option<Counterexample>,
    /// Counts.
    pub stats: Stats,
}

/// The largest number of side effects one logical call can reach within the bounds.
#[derive(Clone, Debug, Serialize)]
pub struct WorstCase {
    /// That number.
    pub effects: u8,
    /// A shortest path reaching it (none when it is 0).
    pub trace: Option<Counterexample>,
    /// Counts, summed over the runs it took.
    pub stats: Stats,
    /// Whether the search was exhaustive (`effects` is exact) or not.
    pub search: WorstSearch,
}

/// The model with one thing to look for: what a stateright run checks. Its one property is
/// the check's; everything else is the model's own (the Explorer serves it as it is).
#[derive(Clone, Debug)]
pub struct WithCheck {
    /// The model.
    pub model: McpModel,
    /// What the run looks for.
    pub check: Check,
}

impl Model for WithCheck {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        self.model.init_states()
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        self.model.actions(s, out)
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        self.model.next_state(last, action)
    }

    fn format_action(&self, action: &Action) -> String {
        self.model.format_action(action)
    }

    /// What the step does, in the words of the trace reports, then the state it leads to.
    fn format_step(&self, last: &State, action: Action) -> Option<String> {
        let next = self.model.next_state(last, action)?;
        Some(format!("{}\n\n{next:#?}", crate::rules::describe(&self.model, last, &action, &next)))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(self.check.name(), |m: &WithCheck, s: &State| m.check.holds(&m.model, s))]
    }
}

/// One stateright run (breadth-first, one thread) looking for `check`, stopped at its first
/// discovery, or once it has generated `cap` states (then `None` when nothing was found: the
/// run decided nothing).
fn run(model: &McpModel, check: Check, cap: Option<usize>) -> Option<(Option<Counterexample>, Stats)> {
    let started = Instant::now();
    let name = check.name();
    let with_check = WithCheck { model: model.clone(), check };
    let mut builder = with_check.checker().threads(1).finish_when(HasDiscoveries::AnyFailures);
    if let Some(cap) = cap {
        builder = builder.target_state_count(cap);
    }
    let checker = builder.spawn_bfs().join();
    let stats = Stats {
        states: checker.unique_state_count(),
        generated: checker.state_count(),
        depth: checker.max_depth(),
        seconds: started.elapsed().as_secs_f64(),
        fingerprint_bits: crate::search::fingerprint::STATERIGHT_FINGERPRINT_BITS,
    };
    let cex = checker.discovery(name).map(|path| {
        let index_path = path.encode(model);
        let pairs = path.into_vec();
        let states = pairs.iter().map(|(s, _)| s.clone()).collect();
        let actions = pairs.iter().filter_map(|(_, a)| *a).collect();
        Counterexample { states, actions, index_path }
    });
    if cex.is_none() && cap.is_some_and(|cap| stats.generated >= cap) {
        return None;
    }
    Some((cex, stats))
}

fn result(property: PropertyKind, (counterexample, stats): (Option<Counterexample>, Stats)) -> CheckResult {
    let verdict = if counterexample.is_some() { Verdict::Violated } else { Verdict::Holds };
    CheckResult { property, verdict, counterexample, stats }
}

/// Check one property exhaustively within the model's bounds.
pub fn check_property(model: &McpModel, property: PropertyKind) -> CheckResult {
    result(property, run(model, Check::Property(property), None).expect("no cap"))
}

/// [`check_property`] stopped once stateright has generated `cap` states (repeats included):
/// `None` when it stopped there without a counterexample.
pub fn check_property_within(model: &McpModel, property: PropertyKind, cap: usize) -> Option<CheckResult> {
    Some(result(property, run(model, Check::Property(property), Some(cap))?))
}

/// A shortest path (stateright, breadth-first) to a state where one logical call has at
/// least `effects` side effects, if any.
pub fn shortest_to_effects(model: &McpModel, effects: u8) -> Option<Counterexample> {
    run(model, Check::EffectsBelow(effects), None).expect("no cap").0
}

/// [`shortest_to_effects`] stopped once stateright has generated `cap` states: `None` when it
/// stopped there without finding such a state (nothing decided).
pub fn shortest_to_effects_within(model: &McpModel, effects: u8, cap: usize) -> Option<Option<Counterexample>> {
    run(model, Check::EffectsBelow(effects), Some(cap)).map(|(cex, _)| cex)
}

/// A shortest counterexample to `property` whose violating step comes after a server crash, if
/// any (a check named for a crash must replay one that matters: over HTTP a stream break alone
/// violates at-most-once sooner, and a crash appended after the violation would prove nothing).
/// Breadth-first over the model's states paired with "a crash has happened"; a state that
/// violates the property before any crash is a dead end, and stream breaks are left out (the
/// client learns of the failure from the crash itself, as on stdio).
pub fn shortest_after_crash(model: &McpModel, property: PropertyKind) -> Option<Counterexample> {
    let mut seen: HashMap<(State, bool), ()> = HashMap::new();
    // (state, crashed, parent node, action from the parent)
    let mut nodes: Vec<(State, bool, usize, Option<Action>)> = Vec::new();
    let mut queue = VecDeque::new();
    for s in model.init_states() {
        if seen.insert((s.clone(), false), ()).is_none() {
            nodes.push((s, false, 0, None));
            queue.push_back(nodes.len() - 1);
        }
    }
    let mut offered = Vec::new();
    while let Some(at) = queue.pop_front() {
        let (s, crashed) = (nodes[at].0.clone(), nodes[at].1);
        offered.clear();
        model.actions(&s, &mut offered);
        for a in offered.drain(..) {
            if matches!(a, Action::StreamBreak { .. }) {
                continue;
            }
            let Some(next) = model.next_state(&s, a) else { continue };
            let now_crashed = crashed || matches!(a, Action::ServerCrash { .. });
            if seen.insert((next.clone(), now_crashed), ()).is_some() {
                continue;
            }
            let violated = !property.holds(model, &next);
            nodes.push((next, now_crashed, at, Some(a)));
            if violated && now_crashed {
                let mut actions = Vec::new();
                let mut n = nodes.len() - 1;
                while let Some(a) = nodes[n].3 {
                    actions.push(a);
                    n = nodes[n].2;
                }
                actions.reverse();
                return Some(counterexample(model, actions));
            }
            if !violated {
                queue.push_back(nodes.len() - 1);
            }
        }
    }
    None
}

/// Find the worst case: the largest per-call effect count reachable, with a shortest path.
pub fn worst_case(model: &McpModel) -> WorstCase {
    let mut best = WorstCase { effects: 0, trace: None, stats: Stats::default(), search: WorstSearch::Exhaustive };
    for k in 1..=u8::MAX {
        let (cex, stats) = run(model, Check::EffectsBelow(k), None).expect("no cap");
        best.stats.states = best.stats.states.max(stats.states);
        best.stats.generated += stats.generated;
        best.stats.depth = best.stats.depth.max(stats.depth);
        best.stats.seconds += stats.seconds;
        match cex {
            Some(trace) => {
                best.effects = trace.effects();
                best.trace = Some(trace);
            }
            None => break,
        }
    }
    best
}

/// An independent breadth-first search (no stateright): the length of a shortest path from the
/// initial state to a state where `bad` is true, or `None` if no reachable state is bad. Used
/// to verify that reported counterexamples are shortest. States are compared through the
/// model's view: pass [`McpModel::without_reductions`] to compare them in full.
pub fn shortest_path_len(model: &McpModel, bad: impl Fn(&State) -> bool) -> Option<usize> {
    let mut seen: HashMap<State, usize> = HashMap::new();
    let mut queue = VecDeque::new();
    for s in model.init_states() {
        if bad(&s) {
            return Some(0);
        }
        seen.insert(s.clone(), 0);
        queue.push_back(s);
    }
    let mut actions = Vec::new();
    while let Some(s) = queue.pop_front() {
        let depth = seen[&s];
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            let Some(next) = model.next_state(&s, a) else { continue };
            if seen.contains_key(&next) {
                continue;
            }
            if bad(&next) {
                return Some(depth + 1);
            }
            seen.insert(next.clone(), depth + 1);
            queue.push_back(next);
        }
    }
    None
}

/// The path of `actions` from the initial state, as a counterexample (its states, and the
/// Explorer's action-index path). The actions must be a path of the model.
pub(crate) fn counterexample(model: &McpModel, actions: Vec<Action>) -> Counterexample {
    let states = replay(model, &actions).expect("a path the search found replays");
    let mut index_path = vec!["0".to_string()];
    let mut offered = Vec::new();
    for (s, a) in states.iter().zip(&actions) {
        offered.clear();
        model.actions(s, &mut offered);
        index_path.push(offered.iter().position(|x| x == a).expect("offered").to_string());
    }
    Counterexample { states, actions, index_path: index_path.join("/") }
}

/// Replay `actions` from the initial state, checking that each is one the model offers in the
/// state it is taken from. `Err((step, reason))` names the first step (1-based) that is not.
pub fn replay(model: &McpModel, actions: &[Action]) -> Result<Vec<State>, (usize, String)> {
    let mut states = model.init_states();
    let mut offered = Vec::new();
    for (i, a) in actions.iter().enumerate() {
        let s = states.last().expect("a state").clone();
        offered.clear();
        model.actions(&s, &mut offered);
        if !offered.contains(a) {
            let names: Vec<String> = offered.iter().map(|x| x.to_string()).collect();
            return Err((i + 1, format!("{a} is not possible here (possible: {})", names.join(", "))));
        }
        match model.next_state(&s, *a) {
            Some(next) => states.push(next),
            None => return Err((i + 1, format!("{a} changes nothing here"))),
        }
    }
    Ok(states)
}
