//! Shortest counterexamples, verified: every failing cell of the built-in matrix is searched
//! again by an independent breadth-first search (no stateright; states compared through the
//! model's view, so it checks the search, not the reductions), and the lengths must agree; each
//! counterexample must replay on the model with every reduction off. And the reductions must
//! change no verdict, no length and no worst case, checked against the unreduced model (every
//! reduction off, states compared in full): on the whole one-call matrix; on every distinct
//! two-call search whose unreduced model has at most 1.5 M states (the others are listed by name
//! in `over_the_limit.txt`, and the test fails on a search over the limit that is not listed,
//! on a listed one that fits, and on a search of the matrix compared in neither way); and against the first release's view on every two-call cell and on
//! the three-call safe cell. The cancellation, handler, instance and callers axes, and MRTR
//! continuations inside a key's scope, are compared the same way, their two-call searches up to 300 k unreduced states here and 1.5 M in
//! `scripts/reliability`. The ignored test `every_two_call_cell_matches_the_unreduced_model`
//! compares every two-call search within a memory budget, going on on disk with
//! `MCP_ONCE_SPILL_DIR`; a search that reaches its budget is compared on everything it decided
//! and named as compared only that far (`cargo test --release -p mcp-once-model --test
//! minimality -- --ignored`, run by `scripts/reliability`).

use mcp_once_model::catalogue::{self, builtin_profiles, matrix, matrix_with_axes, matrix_with_cancel};
use mcp_once_model::*;

#[path = "minimality/counts.rs"]
mod counts;
use counts::*;

mod common;
use common::*;

/// The cells whose cancellation handling differs from their server preset's (the
/// `--cancel before-effect` and `--cancel interrupts` overrides of the matrix), with `calls`.
fn override_models(calls: u8) -> Vec<McpModel> {
    let cells = matrix_with_cancel(&builtin_profiles(), &[Cancellation::BeforeEffect, Cancellation::Interrupts]);
    models_of(cells.into_iter().filter(|c| c.cancel.is_some()).collect(), calls)
}

/// Assert that `reduced` and `base` agree on every property's verdict and shortest length and
/// on the worst case and its length, and that `reduced` stored no more states. Returns the two
/// state counts.
fn assert_same_answers(reduced: &McpModel, base: &McpModel, what: &str) -> (usize, usize) {
    let (a, b) = (explore(reduced, PropertyKind::ALL), explore(base, PropertyKind::ALL));
    for (r, q) in a.results.iter().zip(&b.results) {
        let lengths = (r.counterexample.as_ref().map(|c| c.len()), q.counterexample.as_ref().map(|c| c.len()));
        assert_eq!(lengths.0, lengths.1, "{} under {} ({what})", r.property, reduced.config);
    }
    assert_eq!(a.worst.effects, b.worst.effects, "worst case under {} ({what})", reduced.config);
    let worst_lengths = (a.worst.trace.as_ref().map(|t| t.len()), b.worst.trace.as_ref().map(|t| t.len()));
    assert_eq!(worst_lengths.0, worst_lengths.1, "worst trace under {} ({what})", reduced.config);
    assert!(a.stats.states <= b.stats.states, "{} ({what}): more states than without the reduction", reduced.config);
    (a.stats.states, b.stats.states)
}

fn safe_cell(calls: u8) -> McpModel {
    let config = catalogue::keyed_safe_cell(Bounds { calls, retries: 2, crashes: 1 });
    McpModel::new(config, Profile::load("sep-3182").unwrap()).unwrap()
}

#[test]
fn the_three_call_safe_cell_gives_the_same_answers_under_the_lean_view_as_under_the_first_view() {
    let m = safe_cell(3);
    let (lean, first) = assert_same_answers(
        &m,
        &m.with_view(state::View { lean: false, ..m.view }),
        "lean view against the first view",
    );
    // The figures BENCHMARKS.md gives, read from it: the reduction must keep working, not only
    // stay sound.
    assert_eq!((lean, first), benchmarks_safe_cell_states(), "BENCHMARKS.md's figures for the 3-call safe cell");
}

/// Search `m` (every reduction on) and its unreduced model (states compared in full, by a
/// search that keeps no paths, stopped past `limit` states), and assert that they agree: the
/// shortest violation of every property, the worst case and its length, and no more states
/// reduced than unreduced. Returns the unreduced state count, or `None` past the limit.
fn matches_unreduced(m: &McpModel, limit: usize) -> Option<usize> {
    let properties = PropertyKind::checked(&m.config);
    let full = shortest_lengths(&m.without_reductions(), &properties, limit)?;
    let cell = &m.config;
    let reduced = explore(m, &properties);
    let lengths: Vec<_> = reduced.results.iter().map(|r| r.counterexample.as_ref().map(|c| c.len())).collect();
    assert_eq!(lengths, full.violations, "shortest violation of each of {properties:?} under {cell}");
    assert_eq!(reduced.worst.effects, full.worst_effects, "worst case under {cell}");
    assert_eq!(reduced.worst.trace.as_ref().map(|t| t.len()), full.worst_length, "worst trace under {cell}");
    assert!(reduced.stats.states <= full.states, "{cell}: more states than the unreduced model");
    Some(full.states)
}

/// How far [`matches_unreduced_within`] compared a cell with its unreduced model.
struct Compared {
    /// Unreduced states found.
    states: usize,
    /// `None` when the unreduced search was exhaustive; else every state within this many steps
    /// was checked, and the search stopped at its budget for the reason given.
    up_to: Option<(usize, Stop)>,
}

/// Search the unreduced model of `m` within `budget` (its memory the whole process's; with a
/// spill folder, the search goes on on disk from there: `spill.rs` numbers the same states in
/// the same order as the search in memory, within the disk budget), and assert that `reduced`,
/// `m`'s own exploration, agrees with it on everything the unreduced search decided.
/// Exhaustive, that is what [`matches_unreduced`] asserts. Stopped at its budget after checking
/// every state within `D` steps, a breadth-first search still decides: each violation it found
/// is a shortest one, so the reduced model's must be as long; a property it found no violation
/// of must have none within `D` steps in the reduced model either; the most effects it saw are
/// at most the reduced model's worst case, equal (and first reached as soon) where that is
/// reached within `D` steps. A cell too large for memory is so compared as far as the budget
/// allows, never killed by the kernel.
fn matches_unreduced_within(m: &McpModel, reduced: &Exploration, budget: Budget) -> Compared {
    let cell = &m.config;
    let full = explore_with(&m.without_reductions(), PropertyKind::ALL, Options { worst: true, budget, threads: 1 });
    let up_to = match full.end {
        End::Exhaustive => None,
        End::Stopped { why, depth_completed } => Some((depth_completed, why)),
        End::Answered => unreachable!("a search for the worst case is never answered early"),
    };
    let depth = up_to.map_or(usize::MAX, |(d, _)| d);
    for (r, u) in reduced.results.iter().zip(&full.results) {
        let (lr, lu) = (r.counterexample.as_ref().map(|c| c.len()), u.counterexample.as_ref().map(|c| c.len()));
        match lu {
            Some(_) => assert_eq!(lr, lu, "shortest violation of {} under {cell}", r.property),
            None => assert!(
                lr.is_none_or(|n| n > depth),
                "{} under {cell}: violated in {lr:?} steps, never within {depth} steps of the unreduced model",
                r.property
            ),
        }
    }
    let worst_length = |e: &Exploration| e.worst.trace.as_ref().map(|t| t.len());
    let (w, e) = (reduced.worst.effects, full.worst.effects);
    assert!(e <= w, "worst case under {cell}: {e} effects in the unreduced model, {w} in the reduced one");
    if e == w {
        assert_eq!(worst_length(reduced), worst_length(&full), "worst trace under {cell}");
    } else {
        assert!(
            worst_length(reduced).is_some_and(|n| n > depth),
            "worst case under {cell}: {w} effects within {depth} steps, {e} in the unreduced model"
        );
    }
    if up_to.is_none() {
        assert!(reduced.stats.states <= full.stats.states, "{cell}: more states than the unreduced model");
    }
    let lengths =
        |e: &Exploration| -> Vec<_> { e.results.iter().map(|r| r.counterexample.as_ref().map(|c| c.len())).collect() };
    eprintln!(
        "  unreduced: shortest violations {:?}, worst case {e} effects in {:?} steps; reduced: {:?}, {w} in {:?}",
        lengths(&full),
        worst_length(&full),
        lengths(reduced),
        worst_length(reduced)
    );
    if let Some(s) = full.spilled {
        eprintln!(
            "  on disk from {} states: {} written in all, at most {} at once",
            s.at_states,
            budget::human_bytes(s.written_bytes),
            budget::human_bytes(s.peak_bytes)
        );
    }
    Compared { states: full.stats.states, up_to }
}

/// The test command's unreduced comparison stops a cell's unreduced search past this many
/// states (`MCP_ONCE_UNREDUCED_TEST_LIMIT` changes it); the cells over it are named, must be
/// the ones `over_the_limit.txt` lists, and are compared by the ignored test below, which `scripts/reliability` runs.
const UNREDUCED_TEST_LIMIT: usize = 1_500_000;

/// Every distinct two-call search against the unreduced model, up to a state limit: the
/// reductions (symmetry between calls, unread facts) are checked against full states on every
/// cell small enough, in every `cargo test`, not only against the first release's view.
#[test]
fn every_two_call_search_matches_the_unreduced_model_up_to_a_state_limit() {
    let limit = std::env::var("MCP_ONCE_UNREDUCED_TEST_LIMIT").map_or(UNREDUCED_TEST_LIMIT, |v| v.parse().unwrap());
    let all = matrix_models(2);
    assert_eq!(all.len(), applicable_cells(&matrix(&builtin_profiles()), 2), "cells lost before the comparison");
    let searches = distinct_searches(&all);
    let mut seen = std::collections::HashSet::new();
    let (mut compared, mut over) = (0, Vec::new());
    for m in all {
        if !seen.insert(m.behaviour_key()) {
            continue;
        }
        let t = std::time::Instant::now();
        match matches_unreduced(&m, limit) {
            Some(states) => {
                eprintln!("{states:>10} unreduced states {:>6.1} s  {}", t.elapsed().as_secs_f64(), m.config);
                compared += 1;
            }
            None => over.push(m.config.to_string()),
        }
    }
    eprintln!("{compared} distinct two-call searches compared with the unreduced model; {} over {limit} unreduced states, not compared here:", over.len());
    for cell in &over {
        eprintln!("  over the limit: {cell}");
    }
    // Every distinct search is compared or named over the limit; those over it are the ones
    // listed (a change that makes a search grow past the limit is seen, naming it), so the
    // ones compared are every other.
    assert_eq!(compared + over.len(), searches, "searches lost between the matrix and the comparison");
    assert_over_as_listed("two-call matrix", &over, limit, UNREDUCED_TEST_LIMIT);
}

/// Every two-call cell against the unreduced model. `MCP_ONCE_UNREDUCED_CELLS=A,B,...` runs only
/// the cells whose configuration contains one of the given strings (a partial run, said so).
/// Each unreduced search runs within `MCP_ONCE_SPILL_MEMORY` (default 16G) of memory and
/// `MCP_ONCE_SPILL_STATES` states (default: no limit); with `MCP_ONCE_SPILL_DIR=DIR` it goes on
/// on disk, in DIR, within `MCP_ONCE_SPILL_DISK` (default 60G) of files. A search that reaches
/// its budget is compared on what it decided and named as compared only that far, and the test
/// then fails, naming it, unless `MCP_ONCE_ACCEPT_PARTIAL=1` says a partial comparison is
/// expected (`scripts/reliability` sets it for its shards, then runs those searches again alone,
/// without it). The searches run smallest first, so that a run cut short has compared the most it could;
/// `MCP_ONCE_UNREDUCED_SHARD=K/N` runs every N-th of them from the K-th (`scripts/reliability`
/// runs one shard a core).
#[test]
#[ignore = "more than ten hours of one core, up to 16 GB of memory and, given a spill folder, 60 GB of disk: see BENCHMARKS.md, \"How the reductions are checked\""]
fn every_two_call_cell_matches_the_unreduced_model() {
    let only: Option<Vec<String>> =
        std::env::var("MCP_ONCE_UNREDUCED_CELLS").ok().map(|v| v.split(',').map(String::from).collect());
    let spill_dir: Option<&'static std::path::Path> =
        std::env::var_os("MCP_ONCE_SPILL_DIR").map(|d| &*Box::leak(std::path::PathBuf::from(d).into_boxed_path()));
    let size = |var: &str, default: &str| budget::parse_size(&std::env::var(var).unwrap_or(default.into())).unwrap();
    let budget = Budget {
        max_memory: Some(size("MCP_ONCE_SPILL_MEMORY", "16G")),
        max_disk: Some(size("MCP_ONCE_SPILL_DISK", "60G")),
        max_states: std::env::var("MCP_ONCE_SPILL_STATES").ok().map(|v| v.parse().unwrap()),
        max_depth: None,
        spill_dir,
        shared_by: 1,
    };
    let mut seen = std::collections::HashSet::new();
    let mut searches: Vec<(Exploration, McpModel)> = matrix_models(2)
        .into_iter()
        .filter(|m| seen.insert(m.behaviour_key()))
        .filter(|m| only.as_ref().is_none_or(|o| o.iter().any(|x| m.config.to_string().contains(x.as_str()))))
        .map(|m| (explore(&m, PropertyKind::ALL), m))
        .collect();
    // Smallest first (by the reduced model's states, which grow with the unreduced ones): a
    // run stopped or cut short has compared the most searches it could.
    searches.sort_by_key(|(reduced, _)| reduced.stats.states);
    // A shard K/N takes every N-th search of that order from the K-th: shards run side by
    // side (one a core) get searches of every size.
    let shard = std::env::var("MCP_ONCE_UNREDUCED_SHARD").ok().map(|v| {
        let (k, n) = v.split_once('/').and_then(|(k, n)| Some((k.parse().ok()?, n.parse().ok()?))).unwrap_or((0, 0));
        assert!((1..=n).contains(&k), "MCP_ONCE_UNREDUCED_SHARD={v}: expected K/N with 1 <= K <= N");
        (k, n)
    });
    if let Some((k, n)) = shard {
        searches = searches.into_iter().enumerate().filter(|(i, _)| i % n == k - 1).map(|(_, s)| s).collect();
    }
    let total = searches.len();
    assert!(total > 0, "no two-call search matches the cells or shard asked for");
    let (mut compared, mut states, mut partly) = (0, 0usize, Vec::new());
    for (reduced, m) in searches {
        let cell = m.config.to_string();
        eprintln!("  comparing {cell} ({} reduced states)", reduced.stats.states);
        let t = std::time::Instant::now();
        let full = matches_unreduced_within(&m, &reduced, budget);
        let seconds = t.elapsed().as_secs_f64();
        match full.up_to {
            None => {
                eprintln!("{:>10} unreduced states {seconds:>7.1} s  {cell}", full.states);
                compared += 1;
                states += full.states;
            }
            Some((depth, why)) => {
                eprintln!(
                    "{:>10} unreduced states {seconds:>7.1} s  {cell} (COMPARED ONLY WITHIN {depth} STEPS: {why})",
                    full.states
                );
                partly.push(format!("{cell}: within {depth} steps ({} unreduced states)", full.states));
            }
        }
    }
    eprintln!("{compared} distinct two-call searches compared, {states} unreduced states in all; compared only on what their search decided before its budget: {}", partly.len());
    for p in &partly {
        // `scripts/reliability` reads these lines (the cell, up to ": within") to run the
        // searches again alone with the whole budgets.
        eprintln!("  partly compared: {p}");
    }
    match (only, shard) {
        (Some(o), _) => eprintln!("PARTIAL RUN: only the cells containing one of {o:?}"),
        (None, Some((k, n))) => eprintln!("SHARD {k}/{n} of the distinct two-call searches"),
        (None, None) => {}
    }
    // Every search asked for is accounted for: compared in full, or partly (named above).
    assert_eq!(compared + partly.len(), total, "searches lost between the plan and the comparison");
    let accept_partial = std::env::var("MCP_ONCE_ACCEPT_PARTIAL").is_ok_and(|v| v == "1");
    assert!(
        partly.is_empty() || accept_partial,
        "{} of {total} searches were compared only within the depth their budget allowed, not in full \
         (MCP_ONCE_ACCEPT_PARTIAL=1 accepts that): {partly:#?}",
        partly.len()
    );
}

#[test]
fn every_failing_cell_has_a_counterexample_as_short_as_two_independent_searches_find() {
    let all = matrix_models(2);
    // The pairs the test must check: every property of every applicable cell of the matrix.
    let pairs = checked_pairs(&matrix(&builtin_profiles()), 2);
    let (mut checked, mut failing, mut violated_for_stateright) = (0, 0, 0);
    for m in all {
        let found = explore(&m, PropertyKind::ALL);
        let base = explore(&m.with_view(state::View { lean: false, ..m.view }), PropertyKind::ALL);
        for (r, b) in found.results.iter().zip(&base.results) {
            let lengths = (r.counterexample.as_ref().map(|c| c.len()), b.counterexample.as_ref().map(|c| c.len()));
            assert_eq!(lengths.0, lengths.1, "{} under {} (lean view against the first view)", r.property, m.config);
        }
        assert_eq!(found.worst.effects, base.worst.effects, "worst case under {}", m.config);
        let worst_lengths = (found.worst.trace.as_ref().map(|t| t.len()), base.worst.trace.as_ref().map(|t| t.len()));
        assert_eq!(worst_lengths.0, worst_lengths.1, "worst trace under {}", m.config);
        assert!(found.stats.states <= base.stats.states, "{}", m.config);
        for r in found.results {
            let p = r.property;
            checked += 1;
            let stateright = check_property(&m, p);
            violated_for_stateright += usize::from(stateright.verdict == Verdict::Violated);
            let Some(cex) = r.counterexample else {
                assert_eq!(stateright.verdict, Verdict::Holds, "{p} under {}", m.config);
                continue;
            };
            failing += 1;
            let stateright = stateright.counterexample.map(|c| c.len());
            assert_eq!(Some(cex.len()), stateright, "{p} under {} (stateright)", m.config);
            let independent = shortest_path_len(&m, |s| !p.holds(&m, s));
            assert_eq!(Some(cex.len()), independent, "{p} under {} (independent BFS)", m.config);
            // The counterexample is a real path of the unreduced model and ends in a bad state.
            let full = m.without_reductions();
            let states =
                search::replay(&full, &cex.actions).unwrap_or_else(|e| panic!("{p} under {}: {e:?}", m.config));
            assert!(!p.holds(&m, states.last().unwrap()));
        }
        if let Some(t) = found.worst.trace {
            let stateright = search::shortest_to_effects(&m, found.worst.effects).map(|c| c.len());
            assert_eq!(Some(t.len()), stateright, "worst case under {}", m.config);
            assert!(
                search::shortest_to_effects(&m, found.worst.effects + 1).is_none(),
                "worst case under {}",
                m.config
            );
        }
    }
    // Every property of every cell was checked, and the violations found are the ones
    // stateright's own search finds, counted apart.
    assert_eq!(checked, pairs, "properties of the matrix's cells checked");
    assert_eq!(failing, violated_for_stateright, "violations found against stateright's");
    eprintln!("{failing} of {pairs} properties of the two-call matrix's cells violated");
}

#[test]
fn reductions_change_no_verdict_no_length_and_no_worst_case() {
    let pairs = applicable_cells(&matrix(&builtin_profiles()), 1) * PropertyKind::ALL.len();
    let mut compared = 0;
    for m in matrix_models(1) {
        let full = m.without_reductions();
        for &p in PropertyKind::ALL {
            let a = check_property(&m, p);
            let b = check_property(&full, p);
            assert_eq!(a.verdict, b.verdict, "{p} under {}", m.config);
            assert_eq!(a.counterexample.map(|c| c.len()), b.counterexample.map(|c| c.len()), "{p} under {}", m.config);
            compared += 1;
        }
        // The paths-free search used on the two-call matrix gives the same lengths.
        let lengths = shortest_lengths(&full, PropertyKind::ALL, usize::MAX).expect("no limit");
        let expected: Vec<_> =
            PropertyKind::ALL.iter().map(|&p| check_property(&full, p).counterexample.map(|c| c.len())).collect();
        assert_eq!(lengths.violations, expected, "shortest_lengths under {}", m.config);
        let (wa, wb) = (worst_case(&m), worst_case(&full));
        assert_eq!(
            (lengths.worst_effects, lengths.worst_length),
            (wb.effects, wb.trace.as_ref().map(|t| t.len())),
            "shortest_lengths under {}",
            m.config
        );
        assert_eq!(wa.effects, wb.effects, "worst case under {}", m.config);
        assert_eq!(wa.trace.map(|t| t.len()), wb.trace.map(|t| t.len()), "worst trace under {}", m.config);
    }
    assert_eq!(compared, pairs, "every property of every applicable one-call cell compared");
}

/// The axes' two-call comparisons below stop a cell's unreduced search past this many states in
/// the test command (`MCP_ONCE_AXIS_TEST_LIMIT` changes it; `scripts/reliability` runs them at
/// [`UNREDUCED_TEST_LIMIT`]). Their cells over it are named, and must be the ones
/// `over_the_limit.txt` lists.
const AXIS_TEST_LIMIT: usize = 300_000;

/// The limit of the axes' two-call comparisons in this run.
fn axis_limit() -> usize {
    std::env::var("MCP_ONCE_AXIS_TEST_LIMIT").map_or(AXIS_TEST_LIMIT, |v| v.parse().unwrap())
}

/// Compare each distinct search of `one_call` (no state limit, and its counterexamples against
/// stateright's) and of `two_call` (up to [`axis_limit`] unreduced states) with its unreduced
/// model, and assert that every one was: each one-call search compared, each two-call one
/// compared or over the limit, those over it the ones listed under `comparison` in
/// `over_the_limit.txt` (named in the output).
fn compare_axis(comparison: &str, one_call: Vec<McpModel>, two_call: Vec<McpModel>) {
    let limit = axis_limit();
    let (one_call_searches, two_call_searches) = (distinct_searches(&one_call), distinct_searches(&two_call));
    let mut seen = std::collections::HashSet::new();
    let (mut one, mut two, mut over) = (0, 0, Vec::new());
    for m in one_call {
        if !seen.insert(m.behaviour_key()) {
            continue;
        }
        matches_unreduced(&m, usize::MAX).expect("no limit");
        for r in explore(&m, PropertyKind::ALL).results {
            let stateright = check_property(&m, r.property).counterexample.map(|c| c.len());
            assert_eq!(r.counterexample.map(|c| c.len()), stateright, "{} under {}", r.property, m.config);
        }
        one += 1;
    }
    for m in two_call {
        if !seen.insert(m.behaviour_key()) {
            continue;
        }
        let t = std::time::Instant::now();
        match matches_unreduced(&m, limit) {
            Some(states) => {
                eprintln!("{states:>10} unreduced states {:>6.1} s  {}", t.elapsed().as_secs_f64(), m.config);
                two += 1;
            }
            None => {
                eprintln!("  over the limit of {limit}: {}", m.config);
                over.push(m.config.to_string());
            }
        }
    }
    eprintln!(
        "{comparison}: compared with the unreduced model: {one} one-call, {two} two-call ({} two-call over {limit} states)",
        over.len()
    );
    assert_eq!(one, one_call_searches, "{comparison}: one-call searches lost between the cells and the comparison");
    assert_eq!(two + over.len(), two_call_searches, "{comparison}: two-call searches lost before the comparison");
    assert_over_as_listed(comparison, &over, limit, AXIS_TEST_LIMIT);
}

/// The cancellation axis: every one-call cell whose `--cancel` overrides its preset
/// has the verdicts, lengths and worst case of its unreduced model, and its counterexamples are
/// as short as stateright's; the two-call override cells under [`axis_limit`] unreduced states
/// too (the interrupted stage, an effect whose record will never be written, is in the view) for
/// the servers where the override adds something. Measured at 300 k on 2026-12-06: 464 one-call
/// searches, 84 two-call ones (68 over the limit).
#[test]
fn cells_with_a_cancellation_override_match_the_unreduced_model() {
    // Two calls: the servers where an override adds a stage or a table entry to undo (the
    // record after the effect, the id tables), the others' two-call searches being one-call
    // stages repeated (about 6 minutes for all of them, against 1 here).
    let adds = [ServerImpl::KeyAfterEffect, ServerImpl::DedupById, ServerImpl::DedupByIdDurable];
    let two_call = override_models(2).into_iter().filter(|m| adds.contains(&m.config.server)).collect();
    compare_axis("cancellation overrides", override_models(1), two_call);
}

/// The handler axis: every one-call cell of the matrix under each handler
/// that asks for input has the verdicts, lengths and worst case of its unreduced model (the
/// round of every attempt is in the view: it tells a continuation from a retry), and its
/// counterexamples are as short as stateright's; and the two-call SEP-3182 durable-store and
/// id-table cells under [`axis_limit`] unreduced states too. Measured at 300 k on 2026-12-06: 780
/// one-call searches, 43 two-call ones (137 over the limit).
#[test]
fn cells_with_input_rounds_match_the_unreduced_model() {
    use HandlerKind::*;
    let cells =
        matrix_with_axes(&builtin_profiles(), &[], &[InputAfterEffect, InputBeforeEffect, InputAfterEffectStateful]);
    // Two calls: the durable stores of SEP-3182, where a continuation outside the key meets a
    // record of the first request, and its id tables, where a request meets the answer another
    // call stored under its id, of either kind (the other cells' two-call searches repeat
    // one-call stages).
    let durable =
        [ServerImpl::KeyDurable, ServerImpl::KeyAfterEffect, ServerImpl::DedupById, ServerImpl::DedupByIdDurable];
    let keyed: Vec<Config> =
        cells.iter().filter(|c| c.profile == "sep-3182" && durable.contains(&c.server)).cloned().collect();
    compare_axis("input rounds", models_of(cells, 1), models_of(keyed, 2));
}

/// The instances axis: every one-call cell with two server instances (each store
/// where its preset keeps it, and the durable stores per instance too) has the verdicts,
/// lengths and worst case of its unreduced model, and its counterexamples are as short as
/// stateright's; the two-call SEP-3182 `key-durable` cells under [`axis_limit`] unreduced states
/// too (the instance holding a request is in the view only while it holds it). Measured at
/// 300 k on 2026-12-06: 106 one-call searches, 2 two-call ones (16 over the limit; 4 fit under 1.5 M, where
/// `scripts/reliability` runs it). The others (two instances multiply the interleavings) are not
/// compared with the unreduced model anywhere yet: the unlimited comparison above covers the
/// default matrix only.
#[test]
fn cells_with_two_instances_match_the_unreduced_model() {
    let two = catalogue::with_instances(matrix(&builtin_profiles()), &[2]);
    let durable = [ServerImpl::KeyDurable, ServerImpl::KeyAfterEffect, ServerImpl::DedupByIdDurable];
    let own: Vec<Config> = two
        .iter()
        .filter(|c| durable.contains(&c.server))
        .map(|c| Config { deployment: Deployment { instances: 2, store: Some(StoreScope::PerInstance) }, ..c.clone() })
        .collect();
    let one_call: Vec<Config> = two.iter().cloned().chain(own.iter().cloned()).collect();
    let keyed: Vec<Config> =
        one_call.iter().filter(|c| c.profile == "sep-3182" && c.server == ServerImpl::KeyDurable).cloned().collect();
    compare_axis("two instances", models_of(one_call, 1), models_of(keyed, 2));
}

/// MRTR continuations inside the key's scope (a proposal on SEP-3182 with
/// `idempotency_continuations = included`, a key per round): every one-call cell of its matrix
/// under each handler that asks for input has the verdicts, lengths and worst case of its
/// unreduced model (a key's round is in the view with its attempt), and its counterexamples are
/// as short as stateright's; its two-call durable-store cells under [`axis_limit`] unreduced
/// states too, where one call's retried continuation meets its round's record. Measured at
/// 300 k on 2026-12-06: 240 one-call searches, 26 two-call ones (94 over the limit).
#[test]
fn cells_with_continuations_inside_the_key_scope_match_the_unreduced_model() {
    use HandlerKind::*;
    let text = "name = \"keyed-continuations\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n[knobs.idempotency_continuations]\nvalue = \"included\"\n[knobs.idempotency_continuations.cite]\nrevision = \"SEP-3182\"\npath = \"pull request thread\"\nsection = \"FAQ\"\nquote = \"would naturally use different idempotency keys\"\n";
    let profile = Profile::parse("keyed-continuations.toml", text, None).unwrap();
    let handlers = [InputAfterEffect, InputBeforeEffect, InputAfterEffectStateful];
    let cells = matrix_with_axes(std::slice::from_ref(&profile), &[], &handlers);
    let with = |cells: &[Config], calls: u8| -> Vec<McpModel> {
        let bounded = |c: &Config| Config { bounds: Bounds { calls, ..c.bounds }, ..c.clone() };
        cells.iter().filter_map(|c| McpModel::new(bounded(c), profile.clone()).ok()).collect()
    };
    // A cell with no key reads no continuation's key: it is the SEP-3182 cell, compared above.
    let keyed: Vec<Config> = cells.into_iter().filter(|c| c.key != KeyLifetime::None).collect();
    let durable: Vec<Config> = keyed
        .iter()
        .filter(|c| matches!(c.server, ServerImpl::KeyDurable | ServerImpl::KeyAfterEffect))
        .cloned()
        .collect();
    compare_axis("continuations inside the key scope", with(&keyed, 1), with(&durable, 2));
}

/// The session-termination axis (2025-11-25 HTTP, `--session-terminations 1` and `2`): every
/// one-call HTTP cell of that revision's matrix has the verdicts, lengths and worst case of its
/// unreduced model (the terminations used are in the view, and while one is left every id may
/// come back: `ids_that_may_return`), and its counterexamples are as short as stateright's;
/// the two-call id-table cells, where a new session's id meets an old entry, with one crash and
/// with none, under [`axis_limit`] unreduced states too. Measured at 300 k on 2026-12-06: 40 one-call
/// searches, 16 two-call ones (24 over the limit: every one with a crash, and the retrying
/// clients' without one).
#[test]
fn cells_with_session_terminations_match_the_unreduced_model() {
    let http: Vec<Config> = matrix(&builtin_profiles())
        .into_iter()
        .filter(|c| c.profile == "mcp-2025-11-25" && c.transport == Transport::Http)
        .flat_map(|c| [1, 2].map(|n| Config { session_terminations: n, ..c.clone() }))
        .collect();
    // Two calls without a crash too: the termination alone starts the ids over there, and the
    // searches are small enough to compare in full.
    let ids: Vec<Config> = http
        .iter()
        .filter(|c| c.server.uses_ids())
        .flat_map(|c| [c.clone(), Config { bounds: Bounds { crashes: 0, ..c.bounds }, ..c.clone() }])
        .collect();
    compare_axis("session terminations", models_of(http, 1), models_of(ids, 2));
}

/// The callers axis (`--callers 2`, both scopes of the key records): every two-call key-store
/// cell of SEP-3182's matrix has the verdicts (`no-foreign-replay` among them), lengths and worst
/// case of its unreduced model under [`axis_limit`] unreduced states. Two callers' calls keep
/// their places in the view (a call's caller and the key it shares depend on its place); the
/// other reductions stay on. Measured at 300 k on 2026-12-07: 144 two-call searches, 90 compared
/// (54 over the limit).
#[test]
fn cells_with_two_callers_match_the_unreduced_model() {
    let cells: Vec<Config> = matrix(&builtin_profiles())
        .into_iter()
        .filter(|c| c.profile == "sep-3182" && c.server.uses_keys())
        .flat_map(|c| {
            [KeyScope::Global, KeyScope::PerCaller].map(|s| Config { callers: 2, key_scope: Some(s), ..c.clone() })
        })
        .collect();
    compare_axis("two callers", Vec::new(), models_of(cells, 2));
}
