//! Four logical calls: every reduction of the view (unread facts left out, symmetry between
//! calls) gives the answers of the unreduced model on four-call cells small enough to search
//! unreduced here, as `minimality.rs` shows for two calls.

use mcp_once_model::catalogue::{builtin_profiles, matrix};
use mcp_once_model::*;
use std::collections::BTreeMap;

/// The default matrix's cells with four calls and the given retries and crashes.
fn models(retries: u8, crashes: u8) -> Vec<McpModel> {
    let profiles = builtin_profiles();
    matrix(&profiles)
        .into_iter()
        .filter_map(|mut config| {
            config.bounds = Bounds { calls: 4, retries, crashes };
            let profile = profiles.iter().find(|p| p.name == config.profile).unwrap().clone();
            McpModel::new(config, profile).ok()
        })
        .collect()
}

/// Retries and crashes of the cells compared, tried in this order: a crash first (where the
/// id tables and key stores are lost), then a retry, then neither.
const BOUNDS: [(u8, u8); 3] = [(0, 1), (1, 0), (0, 0)];

/// Unreduced states past which a cell is not compared here.
const LIMIT: usize = 400_000;

/// Cells compared for each server behaviour.
const PER_SERVER: usize = 2;

/// Search `m` with every reduction and unreduced; assert the same shortest violation of every
/// property, the same worst case and its length, and no more states reduced. The unreduced
/// state count, or `None` past [`LIMIT`].
fn matches_unreduced(m: &McpModel) -> Option<(usize, usize)> {
    let full = shortest_lengths(&m.without_reductions(), PropertyKind::ALL, LIMIT)?;
    let cell = &m.config;
    let reduced = explore(m, PropertyKind::ALL);
    let lengths: Vec<_> = reduced.results.iter().map(|r| r.counterexample.as_ref().map(|c| c.len())).collect();
    assert_eq!(lengths, full.violations, "shortest violation of each of {:?} under {cell}", PropertyKind::ALL);
    assert_eq!(reduced.worst.effects, full.worst_effects, "worst case under {cell}");
    assert_eq!(reduced.worst.trace.as_ref().map(|t| t.len()), full.worst_length, "worst trace under {cell}");
    assert!(reduced.stats.states <= full.states, "{cell}: more states than the unreduced model");
    Some((reduced.stats.states, full.states))
}

#[test]
fn four_call_cells_give_the_answers_of_the_unreduced_model() {
    let all: Vec<McpModel> = BOUNDS.iter().flat_map(|(r, k)| models(*r, *k)).collect();
    // Every server behaviour of the matrix has cells here; each must be compared.
    let mut per_server: BTreeMap<String, usize> = BTreeMap::new();
    let (mut compared, mut reduced_states, mut full_states) = (0, 0, 0);
    for m in &all {
        let entry = per_server.entry(m.config.server.to_string()).or_default();
        // A few cells of each server behaviour keep the test within a minute.
        if *entry == PER_SERVER {
            continue;
        }
        if let Some((r, f)) = matches_unreduced(m) {
            *entry += 1;
            compared += 1;
            reduced_states += r;
            full_states += f;
        }
    }
    eprintln!(
        "{compared} four-call searches compared with the unreduced model, of {} cells ({reduced_states} reduced states, {full_states} unreduced)",
        all.len()
    );
    eprintln!("compared per server behaviour: {per_server:?}");
    let missing: Vec<_> = per_server.iter().filter(|(_, n)| **n < PER_SERVER).map(|(s, _)| s.clone()).collect();
    assert!(
        missing.is_empty(),
        "server behaviours with fewer than {PER_SERVER} four-call cells under {LIMIT} unreduced states: {missing:?}"
    );
    // Symmetry between calls must pay off at four calls: four calls started in any order of
    // their facts are one state.
    assert!(reduced_states * 4 < full_states, "{reduced_states} reduced states against {full_states} unreduced");
}

#[test]
fn a_fifth_call_is_refused_naming_the_bound() {
    let profile = Profile::load("sep-3182").unwrap();
    let config = catalogue::keyed_safe_cell(Bounds { calls: 5, retries: 2, crashes: 1 });
    let Err(e) = McpModel::new(config, profile) else { panic!("five calls accepted") };
    assert_eq!(e.to_string(), "--calls 5 is out of range (1 to 4)");
}
