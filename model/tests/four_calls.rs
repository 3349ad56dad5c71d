//! Four logical calls: every reduction of the view (unread facts left out, symmetry between
//! calls) gives the answers of the unreduced model on four-call cells small enough to search
//! unreduced here, as `minimality.rs` shows for two calls; and the view with every reduction off
//! tells apart states that differ in any one fact of any of the four calls or sixteen ids.

use mcp_once_model::catalogue::{builtin_profiles, matrix};
use mcp_once_model::state::{ID_ANSWERED, ID_CALL, MAX_ATTEMPTS, MAX_CALLS, MAX_IDS};
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
    let properties = PropertyKind::checked(&m.config);
    let full = shortest_lengths(&m.without_reductions(), &properties, LIMIT)?;
    let cell = &m.config;
    let reduced = explore(m, &properties);
    let lengths: Vec<_> = reduced.results.iter().map(|r| r.counterexample.as_ref().map(|c| c.len())).collect();
    assert_eq!(lengths, full.violations, "shortest violation of each of {properties:?} under {cell}");
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

/// States met on `walks` random walks (a fixed seed, so every run meets the same ones) of `m`,
/// each at most `depth` steps long.
fn walked(m: &McpModel, walks: usize, depth: usize) -> Vec<State> {
    use stateright::Model;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let (mut out, mut actions) = (Vec::new(), Vec::new());
    for _ in 0..walks {
        let mut s = m.init_states().remove(0);
        for _ in 0..depth {
            actions.clear();
            m.actions(&s, &mut actions);
            let Some(a) = (!actions.is_empty()).then(|| actions[next(actions.len())]) else { break };
            let Some(n) = m.next_state(&s, a) else { break };
            out.push(n.clone());
            s = n;
        }
    }
    out
}

/// Every way to change one fact of a state that names a call, an attempt, a request id or a
/// store, within the values the state can hold: the changed states (some may equal `s`).
fn one_fact_changed(s: &State) -> Vec<State> {
    let mut out = Vec::new();
    let mut with = |f: &dyn Fn(&mut State)| {
        let mut t = s.clone();
        f(&mut t);
        out.push(t);
    };
    for c in 0..MAX_CALLS {
        with(&|t| t.ledger[c] ^= 1);
        with(&|t| t.consumed[c] ^= 1);
        with(&|t| t.calls[c].step ^= 1);
        with(&|t| t.calls[c].queried = !t.calls[c].queried);
        for i in 0..2 {
            for bit in 0..4 {
                with(&|t| t.keys_durable[i][c] ^= 1 << bit);
                with(&|t| t.keys_volatile[i][c] ^= 1 << bit);
                with(&|t| t.keys_running[i][c] ^= 1 << bit);
            }
        }
        for a in 0..MAX_ATTEMPTS {
            with(&|t| {
                t.attempts[c][a].id = if t.attempts[c][a].id as usize == MAX_IDS { 1 } else { t.attempts[c][a].id + 1 }
            });
            with(&|t| t.attempts[c][a].key ^= 1);
            with(&|t| t.attempts[c][a].round ^= 1);
            with(&|t| t.attempts[c][a].instance ^= 1);
            with(&|t| t.attempts[c][a].task = !t.attempts[c][a].task);
            with(&|t| t.attempts[c][a].foreign = !t.attempts[c][a].foreign);
        }
    }
    for i in 0..2 {
        for id in 1..=MAX_IDS {
            // An entry names its call (call + 1 in its low bits): a new one names a call, a
            // known one changes its call or its completion.
            with(&|t| match t.ids_seen[i][id] {
                0 => t.ids_seen[i][id] = 1 + (id % MAX_CALLS) as u8,
                e => t.ids_seen[i][id] = e ^ ID_ANSWERED,
            });
            with(&|t| {
                let e = t.ids_seen[i][id];
                if e != 0 {
                    let call = (e & ID_CALL) % MAX_CALLS as u8 + 1;
                    t.ids_seen[i][id] = (e & !ID_CALL) | call;
                }
            });
        }
    }
    for m in 0..s.inbox.len as usize {
        // Another call's message, of the same attempt and kind.
        with(&|t| {
            let call = (t.inbox.msgs[m] >> 4 & 0x07) as usize;
            t.inbox.msgs[m] = (t.inbox.msgs[m] & !0x70) | (((call + 1) % MAX_CALLS) as u8) << 4;
        });
    }
    with(&|t| t.next_id = if t.next_id > 1 { t.next_id - 1 } else { 2 });
    out
}

/// The view with every reduction off packs every fact of a four-call state: changing any one
/// fact of any call, attempt, id (up to 16, the fourth call's fourth attempt) or store changes
/// it. The comparisons with the unreduced model cannot see a fact packed wrong, since the
/// unreduced model packs states with the same code; this can, on every call and every id.
#[test]
fn the_full_view_changes_with_any_one_fact_of_any_call_or_id() {
    let profiles = builtin_profiles();
    let wide = Bounds { calls: 4, retries: 3, crashes: 1 };
    let cells: Vec<McpModel> = matrix(&profiles)
        .into_iter()
        .filter(|c| c.transport == Transport::Http && c.client == ClientPolicy::RetryAny)
        .filter_map(|mut config| {
            config.bounds = wide;
            let profile = profiles.iter().find(|p| p.name == config.profile).unwrap().clone();
            McpModel::new(config, profile).ok().map(|m| m.without_reductions())
        })
        .collect();
    assert!(!cells.is_empty());
    let (mut states, mut changes, mut high_ids) = (0, 0, 0);
    for m in &cells {
        for s in walked(m, 4, 80) {
            states += 1;
            high_ids += usize::from(s.attempts.iter().flatten().any(|t| t.id > 12));
            let raw = serde_json::to_string(&s).unwrap();
            for t in one_fact_changed(&s) {
                if serde_json::to_string(&t).unwrap() == raw {
                    continue;
                }
                changes += 1;
                assert_ne!(t.packed(), s.packed(), "{}: a change the view does not see:\n{raw}\n{}", m.config, {
                    serde_json::to_string(&t).unwrap()
                });
            }
        }
    }
    eprintln!(
        "{} cells, {states} states walked ({high_ids} with an id above 12), {changes} one-fact changes seen",
        cells.len()
    );
    assert!(high_ids > 0, "no walk reached an id above 12");
}
