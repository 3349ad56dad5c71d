//! The search on several threads gives the answers of the search on one: on every cell of the
//! one-call matrix and on the largest two-call cell, the verdicts, every counterexample (its
//! actions, not only its length), the worst case and its trace, the state counts and how the
//! search ended are compared; so is a search stopped by a state budget, and one that moves to
//! disk partway (the rest of the batch the threads built goes back before the queue).

use mcp_once_model::budget::resident_bytes;
use mcp_once_model::catalogue::builtin_profiles;
use mcp_once_model::*;

mod common;
use common::*;

fn options(worst: bool, budget: Budget, threads: usize) -> Options {
    Options { worst, budget, threads }
}

/// Assert that `a` (one thread) and `b` (several) found the same: every figure but the time.
fn assert_same(a: &Exploration, b: &Exploration, what: &str) {
    assert_eq!(a.end, b.end, "{what}: how the search ended");
    let counts = |e: &Exploration| (e.stats.states, e.stats.generated, e.stats.depth);
    assert_eq!(counts(a), counts(b), "{what}: states, generated, depth");
    assert_eq!(a.results.len(), b.results.len(), "{what}: properties");
    for (x, y) in a.results.iter().zip(&b.results) {
        assert_eq!(x.verdict, y.verdict, "{what}: {}", x.property);
        let path = |r: &CheckResult| r.counterexample.as_ref().map(|c| c.actions.clone());
        assert_eq!(path(x), path(y), "{what}: the counterexample of {}", x.property);
    }
    assert_eq!(a.worst.effects, b.worst.effects, "{what}: worst case");
    assert_eq!(a.worst.search, b.worst.search, "{what}: worst-case search");
    let worst = |e: &Exploration| e.worst.trace.as_ref().map(|c| c.actions.clone());
    assert_eq!(worst(a), worst(b), "{what}: the worst case's trace");
}

/// Search `model` on one thread and on `threads`, under `budget`; assert the same answers.
fn compare(model: &McpModel, properties: &[PropertyKind], worst: bool, budget: Budget, threads: usize) -> Exploration {
    let a = explore_with(model, properties, options(worst, budget, 1));
    let b = explore_with(model, properties, options(worst, budget, threads));
    let what = format!("{} ({} properties, worst {worst}, {threads} threads)", model.config, properties.len());
    assert_same(&a, &b, &what);
    b
}

#[test]
fn every_one_call_cell_gives_the_same_answers_on_three_threads() {
    let all = matrix_models(1);
    assert!(all.len() > 100, "the one-call matrix has {} cells", all.len());
    let mut violated = 0;
    for m in &all {
        let b = compare(m, PropertyKind::ALL, true, Budget::default(), 3);
        violated += b.results.iter().filter(|r| r.counterexample.is_some()).count();
        // One property, no worst case: the search stops at its shortest counterexample, which
        // may lie in the middle of a batch the threads built.
        compare(m, &[PropertyKind::AtMostOnce], false, Budget::default(), 3);
    }
    assert!(violated > 100, "only {violated} counterexamples compared");
}

#[test]
fn the_largest_two_call_cell_gives_the_same_answers_on_two_threads() {
    let profiles = builtin_profiles();
    let mut largest: Vec<McpModel> = matrix_models(2);
    largest.retain(|m| m.config.profile == "mcp-2026-07-28" && m.config.client == ClientPolicy::FrameworkRetry);
    largest.retain(|m| m.config.transport == Transport::Http && m.config.server == ServerImpl::DedupById);
    assert!(!largest.is_empty(), "{} profiles, no such cell", profiles.len());
    for m in &largest {
        let b = compare(m, PropertyKind::ALL, true, Budget::default(), 2);
        assert!(b.stats.states > 100_000, "{}: {} states", m.config, b.stats.states);
        // A state budget that falls inside a batch: the search stops at the same state.
        let stop = Budget { max_states: Some(b.stats.states / 3 + 17), ..Budget::default() };
        let c = compare(m, PropertyKind::ALL, true, stop, 2);
        assert!(matches!(c.end, End::Stopped { .. }), "{}: {:?}", m.config, c.end);
    }
}

#[test]
fn a_search_that_moves_to_disk_partway_gives_the_same_answers_on_two_threads() {
    let m = largest_two_call_cell();
    let dir = spill_folder();
    let a = explore_with(&m, PropertyKind::ALL, options(true, Budget::default(), 1));
    // A budget some way above what the process holds now: the search starts in memory, on two
    // threads, and moves to disk in the middle of a level.
    let max_memory = Some(resident_bytes().unwrap() + (96 << 20));
    let spill = Budget { max_memory, spill_dir: Some(dir), ..Budget::default() };
    let b = explore_with(&m, PropertyKind::ALL, options(true, spill, 2));
    let at = b.spilled.expect("the search moved to disk").at_states;
    assert!(at > 0 && at < b.stats.states, "moved to disk after {at} of {} states", b.stats.states);
    assert_same(&a, &b, &format!("{} spilled on two threads", m.config));
    std::fs::remove_dir(dir).unwrap();
}

#[test]
fn the_lengths_only_search_gives_the_same_lengths_on_two_threads() {
    // The unreduced model of every one-call cell (what the minimality comparisons search), and
    // the largest two-call cells as the matrix searches them.
    let one_call = matrix_models(1).into_iter().map(|m| m.without_reductions());
    let largest = matrix_models(2).into_iter().filter(|m| {
        m.config.profile == "mcp-2026-07-28"
            && m.config.client == ClientPolicy::FrameworkRetry
            && m.config.server == ServerImpl::DedupById
    });
    let all: Vec<McpModel> = one_call.chain(largest).collect();
    assert!(all.len() > 100, "{} models", all.len());
    for m in &all {
        let one = shortest_lengths(m, PropertyKind::ALL, usize::MAX).expect("no limit");
        let two = shortest_lengths_on(m, PropertyKind::ALL, usize::MAX, 2).expect("no limit");
        assert_eq!(one, two, "{}", m.config);
        // A limit inside the search: both stop.
        let limit = one.states / 2;
        assert_eq!(shortest_lengths_on(m, PropertyKind::ALL, limit, 2), None, "{}", m.config);
    }
}
