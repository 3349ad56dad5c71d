//! Running the reference model with stateright's own breadth-first search, one goal a run (one
//! thread, stopped at the first discovery, so that each path found is a shortest one), and
//! what a cell's runs give: a verdict and shortest length per property, and the worst case;
//! over the whole state space, or over the states within a number of steps of the initial
//! state (a cell too large for the whole is compared that far: [`check_within`]).

use crate::model::{Reference, Sabotage, Step};
use crate::property::{Goal, SURVEYED_EFFECTS};
use crate::rules::Rules;
use mcp_once_model::{Config, Profile, PropertyKind};
use stateright::{Checker, HasDiscoveries, Model};

/// A path found: its steps, in order.
pub type Path = Vec<Step>;

/// One property's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// No reachable state violates it.
    Holds,
    /// A shortest path to a violation.
    Violated(Path),
}

/// What the reference model says of one cell.
#[derive(Clone, Debug)]
pub struct Report {
    /// One answer per property the cell checks ([`PropertyKind::checked_in`]), in
    /// `PropertyKind::ALL`'s order.
    pub answers: Vec<(PropertyKind, Answer)>,
    /// The most effects one call reaches, and a shortest path there (`None` with 0 effects).
    pub worst: (u8, Option<Path>),
    /// The most unique states any one run stored.
    pub states: usize,
}

/// How far a cell's runs may go: at most `limit` generated states a run, and, with `depth`,
/// only the states within that many steps of the initial state.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    limit: usize,
    depth: Option<usize>,
}

/// A run stopped at its state limit: every state within `depth_checked` steps of the initial
/// state had been checked (and expanded) when it stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverLimit {
    /// The steps within which the run checked every state (`None`: not even the initial
    /// state's successors).
    pub depth_checked: Option<usize>,
}

/// One run looking for `goal`: `Ok(Some(path))` found, `Ok(None)` searched to the end (or to
/// the depth bound) without finding it, `Err` stopped at the state limit first.
fn run(model: &Reference, goal: Goal, bounds: Bounds, states: &mut usize) -> Result<Option<Path>, OverLimit> {
    let model = Reference { goal, ..model.clone() };
    let checker = bounded(model.checker(), bounds).finish_when(HasDiscoveries::AnyFailures).spawn_bfs().join();
    *states = (*states).max(checker.unique_state_count());
    match checker.discovery("goal") {
        Some(path) => Ok(Some(path.into_actions())),
        None if checker.state_count() >= bounds.limit => Err(over(checker.max_depth())),
        None => Ok(None),
    }
}

/// A checker on one thread, stopped past `bounds.limit` generated states, and with a depth
/// bound checking the states within `bounds.depth` steps: stateright numbers the initial state's
/// depth 1 and skips (does not check) a state whose depth reaches its target, so the target is
/// the bound plus 2.
fn bounded(builder: stateright::CheckerBuilder<Reference>, bounds: Bounds) -> stateright::CheckerBuilder<Reference> {
    let builder = builder.threads(1).target_state_count(bounds.limit);
    match bounds.depth {
        Some(depth) => builder.target_max_depth(depth + 2),
        None => builder,
    }
}

/// What a run stopped at its limit had checked, from the deepest state it took off its queue
/// (`deepest`, stateright's numbering: the initial state is 1). The queue is first in, first
/// out, so every state of the levels before that one's had been taken off, checked and
/// expanded: those within `deepest - 2` steps.
fn over(deepest: usize) -> OverLimit {
    OverLimit { depth_checked: deepest.checked_sub(2) }
}

/// Check every property and the worst case of `config` under `profile`, each run stopped past
/// `limit` generated states; `Err` as soon as one run stops there (the cell is then not
/// decided: the runs after it are not made), saying how far it had checked.
///
/// One exhaustive run learns which properties fail and how many effects a call reaches (up to
/// [`SURVEYED_EFFECTS`]); then one run per property that fails, and one for the worst case,
/// each stopped at its first discovery, find the shortest paths.
pub fn check(
    config: &Config,
    profile: &Profile,
    limit: usize,
    sabotage: Option<Sabotage>,
) -> Result<Report, OverLimit> {
    check_bounded(config, profile, Bounds { limit, depth: None }, sabotage)
}

/// [`check`] over the states within `depth` steps of the initial state only: a property
/// violated within them has a shortest path of at most `depth` steps; one not violated within
/// them is [`Answer::Holds`] here, meaning only "not within `depth` steps"; the worst case is the
/// most effects a state within them reaches.
pub fn check_within(
    config: &Config,
    profile: &Profile,
    limit: usize,
    depth: usize,
    sabotage: Option<Sabotage>,
) -> Result<Report, OverLimit> {
    check_bounded(config, profile, Bounds { limit, depth: Some(depth) }, sabotage)
}

fn check_bounded(
    config: &Config,
    profile: &Profile,
    bounds: Bounds,
    sabotage: Option<Sabotage>,
) -> Result<Report, OverLimit> {
    let model = Reference { rules: Rules::new(config, profile), goal: Goal::Survey, sabotage };
    let mut states = 0;
    let found = survey(&model, bounds, &mut states)?;
    let mut answers = Vec::new();
    for p in PropertyKind::ALL.iter().filter(|p| p.checked_in(config)) {
        let answer = if found.contains(&p.as_str()) {
            let path = run(&model, Goal::Violate(*p), bounds, &mut states)?;
            Answer::Violated(path.expect("a violation the survey found"))
        } else {
            Answer::Holds
        };
        answers.push((*p, answer));
    }
    // The worst case: the largest k some state reaches with k effects on one call; past the
    // survey's counts, looked for one count at a time.
    let surveyed = (1..=SURVEYED_EFFECTS).take_while(|k| found.contains(&effects_name(*k))).last().unwrap_or(0);
    let mut worst = (0, None);
    if surveyed > 0 {
        let path = run(&model, Goal::Effects(surveyed), bounds, &mut states)?.expect("a count the survey found");
        worst = (surveyed, Some(path));
    }
    if surveyed == SURVEYED_EFFECTS {
        for k in SURVEYED_EFFECTS + 1..=u8::MAX {
            match run(&model, Goal::Effects(k), bounds, &mut states)? {
                Some(path) => worst = (k, Some(path)),
                None => break,
            }
        }
    }
    Ok(Report { answers, worst, states })
}

/// The survey property of `k` effects.
fn effects_name(k: u8) -> &'static str {
    ["", "effects-1", "effects-2", "effects-3", "effects-4"][usize::from(k)]
}

/// One exhaustive run (within the depth bound, if any) of every survey property: the names
/// of those it found failing, or `Err` stopped at the state limit.
fn survey(model: &Reference, bounds: Bounds, states: &mut usize) -> Result<Vec<&'static str>, OverLimit> {
    let checker = bounded(model.clone().checker(), bounds).spawn_bfs().join();
    *states = (*states).max(checker.unique_state_count());
    let found: Vec<&'static str> = checker.discoveries().into_keys().collect();
    // Stopped at the limit (unless every property was found: then nothing is left to learn).
    if checker.state_count() >= bounds.limit && found.len() < crate::model::survey_len() {
        return Err(over(checker.max_depth()));
    }
    Ok(found)
}
