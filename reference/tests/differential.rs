//! The reference model against the main model, cell by cell: each property's verdict and
//! shortest counterexample length, the worst case (the most effects one call reaches) and the
//! length of a shortest path to it. A disagreement prints both paths.
//!
//! Covered: every cell of the default matrix under every built-in profile, under each
//! cancellation handling (the presets, and the `--cancel before-effect` and `--cancel
//! interrupts` overrides), on one server instance and on two (`--instances 2` with the
//! preset's store, `--store shared` and `--store per-instance`, where they apply), with the
//! `effect-only` handler; the same matrix under each handler that asks for input (multi
//! round-trip requests: `--handler input-*`, `--rounds 1` and `2`), and the own matrix (every
//! handler) of a proposal that puts continuations inside the key's scope
//! (`idempotency_continuations = included`). With one call all of them (the handler cells on
//! two instances in an ignored test, `scripts/reliability` step 5); with two calls those whose
//! reference searches stay under a state limit (`MCP_ONCE_REFERENCE_LIMIT` generated states a
//! run, 20 000 unless set, 0 for none; `scripts/reliability` sets 200 000;
//! `MCP_ONCE_REFERENCE_CELLS=A,B` keeps the cells whose flags contain A or B): in the test
//! command the `effect-only` ones and the handler ones of a client that never retries, on one
//! instance; every handler cell, and on two instances, in ignored tests that
//! `scripts/reliability` runs. A two-call cell over the limit is compared within the depth the
//! reference checked in full before it stopped (both models then search the states within
//! that many steps only: `check_within`, `Budget::max_depth`), and named in the output with that
//! depth, never counted as agreeing in full; a cell not even one step deep fails the two-call
//! tests.
//!
//! That the comparison can fail: `a_broken_reference_transition_is_caught` breaks one
//! transition of the reference model (a key store that runs a duplicate instead of replaying
//! its record) and sees the comparison disagree; `a_broken_continuation_is_caught` breaks a
//! continuation (sent as a request of the round it answers, not of the one after it). A
//! transition broken in the main model is caught the same way: both models answer every cell,
//! so a change in the main model's answers on any covered cell fails
//! `every_one_call_cell_agrees` or `every_one_call_handler_cell_on_one_instance_agrees`.

use mcp_once_model::catalogue::{builtin_profiles, matrix_with_axes, matrix_with_cancel};
use mcp_once_model::search::explore::Options;
use mcp_once_model::{
    explore_with, Budget, Cancellation, ClientPolicy, Config, Deployment, Handler, HandlerKind, McpModel, Profile,
    PropertyKind, StoreScope, Verdict,
};
use mcp_once_reference::{check, check_within, Answer, Report, Sabotage};

/// The deployments compared: one instance; two (with the preset's store, a shared one and one
/// each).
const ONE: &[Deployment] = &[Deployment { instances: 1, store: None }];
const TWO: &[Deployment] = &[
    Deployment { instances: 2, store: None },
    Deployment { instances: 2, store: Some(StoreScope::Shared) },
    Deployment { instances: 2, store: Some(StoreScope::PerInstance) },
];

/// The handlers that ask for input (MRTR).
const ASKING: [HandlerKind; 3] =
    [HandlerKind::InputAfterEffect, HandlerKind::InputBeforeEffect, HandlerKind::InputAfterEffectStateful];

/// A proposal on SEP-3182 that puts MRTR continuations inside the key's scope
/// (`idempotency_continuations = included`: a key per round); not shipped, so built here.
fn keyed_continuations() -> Profile {
    let text = "name = \"keyed-continuations\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\n\
        extends = \"sep-3182\"\n[knobs.idempotency_continuations]\nvalue = \"included\"\n\
        [knobs.idempotency_continuations.cite]\nrevision = \"SEP-3182\"\npath = \"pull request thread\"\n\
        section = \"FAQ\"\nquote = \"would naturally use different idempotency keys\"\n";
    Profile::parse("keyed-continuations.toml", text, None).expect("the keyed-continuations profile")
}

/// The cells compared of the `effect-only` handler: the default matrix, under each
/// cancellation handling, on `deployments`, with `calls`.
fn cells(calls: u8) -> Vec<(Config, Profile)> {
    let profiles = builtin_profiles();
    let base = matrix_with_cancel(&profiles, &CANCELS);
    applicable(&base, &profiles, &[ONE, TWO].concat(), calls)
}

/// Each cancellation handling (the preset's own is written as no override).
const CANCELS: [Cancellation; 3] = [Cancellation::Ignores, Cancellation::BeforeEffect, Cancellation::Interrupts];

/// The cells compared of the handlers that ask for input: the matrix of every built-in profile
/// under each of them (as `matrix --handler` makes it), and the matrix of the keyed-continuations
/// proposal under every handler (its own matrix, as `check --profile` makes it), each under each
/// cancellation handling, with one input round and with two, on `deployments`, with `calls`.
fn handler_cells(calls: u8, deployments: &[Deployment]) -> Vec<(Config, Profile)> {
    let mut profiles = builtin_profiles();
    let mut base = matrix_with_axes(&profiles, &CANCELS, &ASKING);
    let keyed = keyed_continuations();
    let all = [&[HandlerKind::EffectOnly][..], &ASKING].concat();
    base.extend(matrix_with_axes(std::slice::from_ref(&keyed), &CANCELS, &all));
    profiles.push(keyed);
    let two_rounds = base
        .iter()
        .filter(|c| c.handler.kind != HandlerKind::EffectOnly)
        .map(|c| Config { handler: Handler { rounds: 2, ..c.handler }, ..c.clone() })
        .collect::<Vec<_>>();
    base.extend(two_rounds);
    applicable(&base, &profiles, deployments, calls)
}

/// `base` on each of `deployments` with `calls`, normalised, each with its profile: those the
/// main model applies, once each.
fn applicable(base: &[Config], profiles: &[Profile], deployments: &[Deployment], calls: u8) -> Vec<(Config, Profile)> {
    let mut out: Vec<(Config, Profile)> = Vec::new();
    for mut config in deployments.iter().flat_map(|d| base.iter().map(|c| Config { deployment: *d, ..c.clone() })) {
        config = config.normalised();
        config.bounds.calls = calls;
        let profile = profiles.iter().find(|p| p.name == config.profile).expect("a known profile").clone();
        // A cell the main model does not apply (outside its profile, meaningless) is no cell.
        if McpModel::new(config.clone(), profile.clone()).is_ok() && !out.iter().any(|(c, _)| *c == config) {
            out.push((config, profile));
        }
    }
    out
}

/// How a comparison of one cell ended.
enum Outcome {
    /// Both models give the same answers over the whole state space (`within: None`) or over
    /// the states within `within` steps of the initial state: this many counterexamples (of
    /// the four properties) had the same length, and the worst case had this many effects.
    Agree { violated: usize, worst: u8, states: usize, within: Option<usize> },
    /// The reference model reached its limit before it could answer, even within a depth.
    OverLimit,
}

/// Compare the two models on one cell: `Err` with both paths where they disagree. A cell whose
/// reference runs pass `limit` is compared within the depth the reference checked in full
/// before it stopped (both models then look at the states within that many steps only).
fn compare(config: &Config, profile: &Profile, limit: usize, sabotage: Option<Sabotage>) -> Result<Outcome, String> {
    let over = match check(config, profile, limit, sabotage) {
        Ok(theirs) => return compare_report(config, profile, theirs, None),
        Err(over) => over,
    };
    // A bounded run checks what the stopped one did, and generates no more than it had
    // (see `check::over`); should it still pass the limit, one step less is tried.
    let mut depth = over.depth_checked.unwrap_or(0);
    while depth > 0 {
        match check_within(config, profile, limit, depth, sabotage) {
            Ok(theirs) => return compare_report(config, profile, theirs, Some(depth)),
            Err(_) => depth -= 1,
        }
    }
    Ok(Outcome::OverLimit)
}

/// Compare the main model with the reference's `theirs`, over the whole state space or
/// `within` that many steps.
fn compare_report(
    config: &Config,
    profile: &Profile,
    theirs: Report,
    within: Option<usize>,
) -> Result<Outcome, String> {
    let main = McpModel::new(config.clone(), profile.clone()).expect("an applicable cell");
    let budget = Budget { max_depth: within, ..Budget::unlimited() };
    let ours = explore_with(&main, PropertyKind::ALL, Options { worst: true, budget, threads: 1 });
    let mut problems = Vec::new();
    for (result, (property, answer)) in ours.results.iter().zip(&theirs.answers) {
        assert_eq!(result.property, *property);
        let main_path = result.counterexample.as_ref().map(|c| c.actions.iter().map(|a| a.to_string()).collect());
        let ref_path = match answer {
            Answer::Violated(path) => Some(path.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            _ => None,
        };
        let verdicts_agree = (result.verdict == Verdict::Violated) == ref_path.is_some();
        let lengths_agree = main_path.as_ref().map(Vec::len) == ref_path.as_ref().map(Vec::len);
        if !verdicts_agree || !lengths_agree {
            problems.push(both(&format!("{property}"), main_path, ref_path));
        }
    }
    let (worst, worst_path) = theirs.worst;
    let main_worst = ours.worst.trace.as_ref().map(|c| c.actions.iter().map(|a| a.to_string()).collect());
    let ref_worst = worst_path.map(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    if ours.worst.effects != worst || main_worst.as_ref().map(Vec::len) != ref_worst.as_ref().map(Vec::len) {
        let what = format!("worst case: main {} effects, reference {worst}", ours.worst.effects);
        problems.push(both(&what, main_worst, ref_worst));
    }
    if problems.is_empty() {
        let violated = ours.results.iter().filter(|r| r.verdict == Verdict::Violated).count();
        Ok(Outcome::Agree { violated, worst, states: theirs.states, within })
    } else {
        let scope = within.map_or(String::new(), |d| format!(" (within {d} steps)"));
        Err(format!("{config}{scope}\n{}", problems.join("\n")))
    }
}

/// Both paths of one disagreement, step by step.
fn both(what: &str, main: Option<Vec<String>>, reference: Option<Vec<String>>) -> String {
    let show = |p: Option<Vec<String>>| match p {
        None => "  (none)".to_string(),
        Some(p) => p.iter().enumerate().map(|(i, s)| format!("  {:>2}. {s}", i + 1)).collect::<Vec<_>>().join("\n"),
    };
    format!("- {what}\n main model:\n{}\n reference model:\n{}", show(main), show(reference))
}

/// The state limit of a reference run on a two-call cell (0: none).
fn two_call_limit() -> usize {
    match std::env::var("MCP_ONCE_REFERENCE_LIMIT") {
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(0) => usize::MAX,
            Ok(n) => n,
            Err(_) => panic!("MCP_ONCE_REFERENCE_LIMIT={v}: not a number of states"),
        },
        Err(_) => 20_000,
    }
}

/// What [`compare_all`] found: the cells that agree over their whole state space, those that
/// agree within a depth (each with that depth), and those not compared at all.
struct Tally {
    agree: usize,
    within: Vec<(String, usize)>,
    over: Vec<String>,
}

/// Compare every cell of `cells`, print what was compared, and fail on any disagreement.
fn compare_all(cells: &[(Config, Profile)], limit: usize, what: &str) -> Tally {
    let mut t = Tally { agree: 0, within: Vec::new(), over: Vec::new() };
    let mut disagree = Vec::new();
    let (mut violated, mut worst_effects) = (0, [0usize; 4]);
    let started = std::time::Instant::now();
    for (config, profile) in cells {
        let cell_started = std::time::Instant::now();
        let outcome = compare(config, profile, limit, None);
        if let (true, Ok(Outcome::Agree { states, .. })) = (cell_started.elapsed().as_secs() >= 10, &outcome) {
            println!("  {config}: {:.0}s, {states} reference states", cell_started.elapsed().as_secs_f64());
        }
        match outcome {
            Ok(Outcome::Agree { violated: v, worst, within, .. }) => {
                match within {
                    None => t.agree += 1,
                    Some(depth) => t.within.push((config.to_string(), depth)),
                }
                violated += v;
                worst_effects[usize::from(worst.min(3))] += 1;
            }
            Ok(Outcome::OverLimit) => t.over.push(config.to_string()),
            Err(e) => {
                println!("DISAGREE {e}");
                disagree.push(e)
            }
        }
        let done = t.agree + t.within.len() + t.over.len() + disagree.len();
        if done.is_multiple_of(100) {
            println!(
                "  ... {done} of {} cells: {} agree, {} agree within a depth, {} not compared",
                cells.len(),
                t.agree,
                t.within.len(),
                t.over.len()
            );
        }
    }
    let limit = if limit == usize::MAX { "no limit".to_string() } else { format!("{limit} generated states a run") };
    println!(
        "{what} ({:.0}s, reference runs: {limit}): {} cells, {} agree in full, {} agree within a depth, {} not compared, {} disagree",
        started.elapsed().as_secs_f64(),
        cells.len(),
        t.agree,
        t.within.len(),
        t.over.len(),
        disagree.len()
    );
    println!(
        "  agreeing cells: {violated} shortest counterexamples of equal length; worst case 0/1/2/3+ effects: {worst_effects:?}"
    );
    if !t.within.is_empty() {
        let mut depths: Vec<usize> = t.within.iter().map(|(_, d)| *d).collect();
        depths.sort_unstable();
        println!(
            "  compared within a depth (every state within it, in both models): {} cells, depths {} to {} (median {})",
            depths.len(),
            depths[0],
            depths[depths.len() - 1],
            depths[depths.len() / 2]
        );
    }
    for (c, depth) in &t.within {
        println!("  compared within {depth} steps (over the limit beyond): {c}");
    }
    for c in &t.over {
        println!("  not compared (over the limit even one step from the start): {c}");
    }
    assert!(disagree.is_empty(), "{} of {} cells disagree:\n{}", disagree.len(), cells.len(), disagree.join("\n\n"));
    t
}

#[test]
fn every_one_call_cell_agrees() {
    let cells = cells(1);
    let t = compare_all(&cells, usize::MAX, "one call");
    assert_eq!(t.agree, cells.len());
}

#[test]
fn every_one_call_handler_cell_on_one_instance_agrees() {
    let cells = chosen(handler_cells(1, ONE));
    let t = compare_all(&cells, usize::MAX, "one call, handlers asking for input, one instance");
    assert_eq!(t.agree, cells.len());
}

/// The cells chosen by `MCP_ONCE_REFERENCE_CELLS` (cells whose flags contain one of
/// its comma-separated parts), or all.
fn chosen(cells: Vec<(Config, Profile)>) -> Vec<(Config, Profile)> {
    let Ok(wanted) = std::env::var("MCP_ONCE_REFERENCE_CELLS") else { return cells };
    let parts: Vec<&str> = wanted.split(',').map(str::trim).filter(|p| !p.is_empty()).collect();
    let cells: Vec<_> = cells.into_iter().filter(|(c, _)| parts.iter().any(|p| c.to_string().contains(p))).collect();
    assert!(!cells.is_empty(), "MCP_ONCE_REFERENCE_CELLS={wanted}: no cell matches");
    cells
}

#[test]
fn two_call_cells_under_the_limit_agree() {
    let cells = chosen(cells(2));
    let t = compare_all(&cells, two_call_limit(), "two calls");
    assert_eq!(t.agree + t.within.len() + t.over.len(), cells.len());
    assert!(t.agree > 0, "no two-call cell compared in full");
    assert!(t.over.is_empty(), "two-call cells compared not even one step deep: {:?}", t.over);
}

/// Slow (see BENCHMARKS.md, "The reference model"): `scripts/reliability` runs it.
#[test]
#[ignore]
fn every_one_call_handler_cell_on_two_instances_agrees() {
    let cells = chosen(handler_cells(1, TWO));
    let t = compare_all(&cells, usize::MAX, "one call, handlers asking for input, two instances");
    assert_eq!(t.agree, cells.len());
}

/// In the test command, of the two-call handler cells on one instance, those of a client that
/// never retries (where most of those under the default limit are, at a sixth of the cost);
/// every one in [`all_two_call_handler_cells_under_the_limit_agree`].
#[test]
fn two_call_handler_cells_without_retries_under_the_limit_agree() {
    let cells = handler_cells(2, ONE).into_iter().filter(|(c, _)| c.client == ClientPolicy::NoRetry).collect();
    let cells = chosen(cells);
    let what = "two calls, handlers asking for input, one instance, no retry";
    let t = compare_all(&cells, two_call_limit(), what);
    assert_eq!(t.agree + t.within.len() + t.over.len(), cells.len());
    assert!(t.agree > 0, "no two-call handler cell compared");
    assert!(t.over.is_empty(), "cells compared not even one step deep: {:?}", t.over);
}

/// Slow (202 s at the default limit): `scripts/reliability` runs it, at its limit.
#[test]
#[ignore]
fn all_two_call_handler_cells_under_the_limit_agree() {
    let cells = chosen(handler_cells(2, ONE));
    let t = compare_all(&cells, two_call_limit(), "two calls, handlers asking for input, one instance");
    assert_eq!(t.agree + t.within.len() + t.over.len(), cells.len());
    assert!(t.agree > 0, "no two-call handler cell compared");
    assert!(t.over.is_empty(), "cells compared not even one step deep: {:?}", t.over);
}

/// Two calls on two instances, with the handlers that ask for input: `scripts/reliability`
/// runs it (at its limit).
#[test]
#[ignore]
fn two_call_handler_cells_on_two_instances_under_the_limit_agree() {
    let cells = chosen(handler_cells(2, TWO));
    let t = compare_all(&cells, two_call_limit(), "two calls, handlers asking for input, two instances");
    assert_eq!(t.agree + t.within.len() + t.over.len(), cells.len());
    assert!(t.agree > 0, "no two-call handler cell on two instances compared");
    assert!(t.over.is_empty(), "cells compared not even one step deep: {:?}", t.over);
}

#[test]
fn a_broken_continuation_is_caught() {
    let cells = handler_cells(1, ONE)
        .into_iter()
        .filter(|(c, _)| {
            c.handler.kind != HandlerKind::EffectOnly
                && c.handler.rounds == 1
                && c.profile == "sep-3182"
                && c.server == mcp_once_model::ServerImpl::KeyDurable
        })
        .collect::<Vec<_>>();
    assert!(!cells.is_empty());
    let caught = cells
        .iter()
        .filter(|(config, profile)| {
            compare(config, profile, usize::MAX, Some(Sabotage::ContinuationRepeatsRound)).is_err()
        })
        .count();
    println!(
        "a continuation that repeats the round it answers: {caught} of {} one-round SEP-3182 key-durable handler cells disagree",
        cells.len()
    );
    assert!(caught > 0, "no cell tells a continuation of the next round from one that repeats its round");
}

#[test]
fn a_broken_reference_transition_is_caught() {
    let profile = Profile::load("sep-3182").unwrap();
    let keyed = cells(1)
        .into_iter()
        .filter(|(c, _)| c.profile == profile.name && c.server == mcp_once_model::ServerImpl::KeyDurable)
        .collect::<Vec<_>>();
    assert!(!keyed.is_empty());
    let caught = keyed
        .iter()
        .filter(|(config, profile)| {
            compare(config, profile, usize::MAX, Some(Sabotage::KeyStoreRunsDuplicates)).is_err()
        })
        .count();
    println!("a key store that runs duplicates: {caught} of {} key-durable cells disagree", keyed.len());
    assert!(caught > 0, "no cell tells a key store that runs duplicates from one that replays");
}

/// The comparison within a depth can fail too: with the reference's key store running a
/// duplicate instead of replaying its record, two-call SEP-3182 `key-durable` cells too large
/// for the limit disagree within the depth they are compared to.
#[test]
fn a_broken_reference_transition_is_caught_within_a_depth() {
    let profile = Profile::load("sep-3182").unwrap();
    let keyed = cells(2)
        .into_iter()
        .filter(|(c, _)| c.profile == profile.name && c.server == mcp_once_model::ServerImpl::KeyDurable)
        .collect::<Vec<_>>();
    let limit = 20_000;
    let bounded = |(config, profile): &&(Config, Profile)| check(config, profile, limit, None).is_err();
    let large: Vec<_> = keyed.iter().filter(bounded).collect();
    assert!(!large.is_empty(), "no two-call key-durable cell passes {limit} reference states");
    let caught = large
        .iter()
        .filter(|(config, profile)| match compare(config, profile, limit, Some(Sabotage::KeyStoreRunsDuplicates)) {
            Err(e) => e.lines().next().is_some_and(|l| l.contains("(within")),
            Ok(_) => false,
        })
        .count();
    println!(
        "a key store that runs duplicates: {caught} of {} two-call key-durable cells compared within a depth disagree",
        large.len()
    );
    assert!(caught > 0, "no cell compared within a depth tells a key store that runs duplicates from one that replays");
}
