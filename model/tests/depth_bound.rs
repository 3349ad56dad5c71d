//! A search bounded in depth (`Budget::max_depth`, `--max-depth`) checks exactly the states
//! within that many steps: on every cell of the one-call matrix and on some two-call cells, its
//! counterexamples are the whole search's that are that short (the same actions), a property
//! violated only further is unknown, its worst case is the most effects within the bound, and
//! it says it stopped at the bound when states lay past it; on two threads, and on disk, it
//! answers as in memory on one.

use mcp_once_model::*;

mod common;
use common::*;

fn bounded(model: &McpModel, depth: usize, threads: usize) -> Exploration {
    let budget = Budget { max_depth: Some(depth), ..Budget::default() };
    explore_with(model, PropertyKind::ALL, Options { worst: true, budget, threads })
}

/// Check the search of `model` bounded at `depth` against its whole search `whole`.
fn check_bound(model: &McpModel, whole: &Exploration, depth: usize) {
    let what = format!("{} within {depth} steps", model.config);
    let b = bounded(model, depth, 1);
    if whole.stats.depth > depth {
        assert_eq!(b.end, End::Stopped { why: Stop::Depth { limit: depth }, depth_completed: depth }, "{what}");
        assert_eq!(b.stats.depth, depth, "{what}: deepest state checked");
        assert!(b.stats.states < whole.stats.states, "{what}: states");
    } else {
        assert_eq!(b.end, End::Exhaustive, "{what}: the whole space lies within the bound");
    }
    for (x, y) in whole.results.iter().zip(&b.results) {
        let path = |r: &CheckResult| r.counterexample.as_ref().map(|c| c.actions.clone());
        match path(x) {
            Some(p) if p.len() <= depth => assert_eq!(path(y), Some(p), "{what}: {}", x.property),
            _ => {
                assert_eq!(path(y), None, "{what}: {}", x.property);
                let expected = if b.end == End::Exhaustive { x.verdict } else { Verdict::Unknown };
                assert_eq!(y.verdict, expected, "{what}: {}", x.property);
            }
        }
    }
    let worst_len = whole.worst.trace.as_ref().map_or(0, |t| t.actions.len());
    if worst_len <= depth {
        assert_eq!(b.worst.effects, whole.worst.effects, "{what}: worst case");
    } else {
        assert!(b.worst.effects < whole.worst.effects, "{what}: worst case within the bound");
    }
    assert!(b.worst.trace.as_ref().is_none_or(|t| t.actions.len() <= depth), "{what}: worst-case trace");
    let two = bounded(model, depth, 2);
    assert_eq!((two.end, two.stats.states, two.stats.generated), (b.end, b.stats.states, b.stats.generated), "{what}");
    for (x, y) in b.results.iter().zip(&two.results) {
        let path = |r: &CheckResult| r.counterexample.as_ref().map(|c| c.actions.clone());
        assert_eq!((x.verdict, path(x)), (y.verdict, path(y)), "{what} on two threads: {}", x.property);
    }
    assert_eq!(b.worst.effects, two.worst.effects, "{what} on two threads: worst case");
}

#[test]
fn a_depth_bound_keeps_what_lies_within_it_on_every_one_call_cell() {
    let all = matrix_models(1);
    assert!(all.len() > 100, "the one-call matrix has {} cells", all.len());
    let mut cut = 0;
    for m in &all {
        let whole = explore(m, PropertyKind::ALL);
        for depth in [1, 4, 7, whole.stats.depth.saturating_sub(1), whole.stats.depth] {
            check_bound(m, &whole, depth);
            cut += usize::from(whole.stats.depth > depth);
        }
    }
    assert!(cut > all.len(), "bounds that cut a search: {cut}");
}

#[test]
fn a_depth_bound_keeps_what_lies_within_it_on_two_call_cells() {
    // Every sixteenth two-call cell: each server behaviour and client, both transports.
    let all: Vec<McpModel> = matrix_models(2).into_iter().step_by(16).collect();
    assert!(all.len() > 10, "{} cells", all.len());
    for m in &all {
        let whole = explore(m, PropertyKind::ALL);
        for depth in [5, whole.stats.depth / 2, whole.stats.depth.saturating_sub(1)] {
            check_bound(m, &whole, depth);
        }
    }
}

#[test]
fn a_depth_bound_holds_on_disk_too() {
    // The largest two-call cell, moved to disk partway (as in threads.rs), bounded two steps
    // short of its deepest state: the same answers as the bounded search in memory.
    let m = largest_two_call_cell();
    let whole = explore(&m, PropertyKind::ALL);
    let depth = whole.stats.depth - 2;
    let memory = bounded(&m, depth, 1);
    let dir = spill_folder();
    let max_memory = Some(mcp_once_model::budget::resident_bytes().unwrap() + (64 << 20));
    let budget = Budget { max_depth: Some(depth), max_memory, spill_dir: Some(dir), ..Budget::default() };
    let disk = explore_with(&m, PropertyKind::ALL, Options { worst: true, budget, threads: 1 });
    assert!(disk.spilled.is_some_and(|s| s.at_states < disk.stats.states), "the search moved to disk partway");
    assert_eq!(disk.end, memory.end, "how the bounded search ended");
    assert_eq!((disk.stats.states, disk.stats.depth), (memory.stats.states, memory.stats.depth));
    for (x, y) in memory.results.iter().zip(&disk.results) {
        let path = |r: &CheckResult| r.counterexample.as_ref().map(|c| c.actions.clone());
        assert_eq!((x.verdict, path(x)), (y.verdict, path(y)), "on disk: {}", x.property);
    }
    assert_eq!(memory.worst.effects, disk.worst.effects, "on disk: worst case");
    std::fs::remove_dir(dir).unwrap();
}
