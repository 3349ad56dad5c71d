//! Running the reference model with stateright's own breadth-first search, one goal a run (one
//! thread, stopped at the first discovery, so that each path found is a shortest one), and
//! what a cell's runs give: a verdict and shortest length per property, and the worst case.

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

/// One run looking for `goal`: `Some(path)` found, `Some(None)` searched to the end without
/// finding it, `None` stopped at `limit` states first.
fn run(model: &Reference, goal: Goal, limit: usize, states: &mut usize) -> Option<Option<Path>> {
    let model = Reference { goal, ..model.clone() };
    let checker = model
        .checker()
        .threads(1)
        .finish_when(HasDiscoveries::AnyFailures)
        .target_state_count(limit)
        .spawn_bfs()
        .join();
    *states = (*states).max(checker.unique_state_count());
    match checker.discovery("goal") {
        Some(path) => Some(Some(path.into_actions())),
        None if checker.state_count() >= limit => None,
        None => Some(None),
    }
}

/// Check every property and the worst case of `config` under `profile`, each run stopped past
/// `limit` generated states; `None` as soon as one run stops there (the cell is then not
/// decided: the runs after it are not made).
///
/// One exhaustive run learns which properties fail and how many effects a call reaches (up to
/// [`SURVEYED_EFFECTS`]); then one run per property that fails, and one for the worst case,
/// each stopped at its first discovery, find the shortest paths.
pub fn check(config: &Config, profile: &Profile, limit: usize, sabotage: Option<Sabotage>) -> Option<Report> {
    let model = Reference { rules: Rules::new(config, profile), goal: Goal::Survey, sabotage };
    let mut states = 0;
    let found = survey(&model, limit, &mut states)?;
    let mut answers = Vec::new();
    for p in PropertyKind::ALL.iter().filter(|p| p.checked_in(config)) {
        let answer = if found.contains(&p.as_str()) {
            let path = run(&model, Goal::Violate(*p), limit, &mut states)?;
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
        let path = run(&model, Goal::Effects(surveyed), limit, &mut states)?.expect("a count the survey found");
        worst = (surveyed, Some(path));
    }
    if surveyed == SURVEYED_EFFECTS {
        for k in SURVEYED_EFFECTS + 1..=u8::MAX {
            match run(&model, Goal::Effects(k), limit, &mut states)? {
                Some(path) => worst = (k, Some(path)),
                None => break,
            }
        }
    }
    Some(Report { answers, worst, states })
}

/// The survey property of `k` effects.
fn effects_name(k: u8) -> &'static str {
    ["", "effects-1", "effects-2", "effects-3", "effects-4"][usize::from(k)]
}

/// One exhaustive run of every survey property: the names of those it found failing, or
/// `None` stopped at `limit`.
fn survey(model: &Reference, limit: usize, states: &mut usize) -> Option<Vec<&'static str>> {
    let checker = model.clone().checker().threads(1).target_state_count(limit).spawn_bfs().join();
    *states = (*states).max(checker.unique_state_count());
    let found: Vec<&'static str> = checker.discoveries().into_keys().collect();
    // Stopped at the limit (unless every property was found: then nothing is left to learn).
    if checker.state_count() >= limit && found.len() < crate::model::survey_len() {
        return None;
    }
    Some(found)
}
