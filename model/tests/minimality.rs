//! Shortest counterexamples, verified: every failing cell of the built-in matrix is searched
//! again by an independent breadth-first search (full states as keys, no stateright), and the
//! lengths must agree; each counterexample must replay on the model with every reduction off.
//! And the reductions must change no verdict, no length and no worst case: all of them against
//! the unreduced model on the one-call matrix, where that model is small enough to search in
//! full; the reductions of issue 5 (unread facts, symmetry between calls) against the first
//! release's view on every two-call cell (the unreduced two-call model reaches 156 M states
//! in one cell).

use mcp_once_model::catalogue::{builtin_profiles, matrix};
use mcp_once_model::*;

fn models(calls: u8) -> Vec<McpModel> {
    let profiles = builtin_profiles();
    matrix(&profiles)
        .into_iter()
        .filter_map(|mut config| {
            config.bounds.calls = calls;
            let profile = profiles.iter().find(|p| p.name == config.profile).unwrap().clone();
            McpModel::new(config, profile, Check::Property(PropertyKind::AtMostOnce)).ok()
        })
        .collect()
}

#[test]
fn every_failing_cell_has_a_counterexample_as_short_as_two_independent_searches_find() {
    let mut failing = 0;
    for m in models(2) {
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
            let Some(cex) = r.counterexample else {
                assert_eq!(check_property(&m, p).verdict, Verdict::Holds, "{p} under {}", m.config);
                continue;
            };
            failing += 1;
            let stateright = check_property(&m, p).counterexample.map(|c| c.len());
            assert_eq!(Some(cex.len()), stateright, "{p} under {} (stateright)", m.config);
            let independent = shortest_path_len(&m, |s| !m.holds(p, s));
            assert_eq!(Some(cex.len()), independent, "{p} under {} (full-state BFS)", m.config);
            // The counterexample is a real path of the unreduced model and ends in a bad state.
            let full = m.without_reductions();
            let states = search::replay(&full, &cex.actions).unwrap_or_else(|e| panic!("{p} under {}: {e:?}", m.config));
            assert!(!m.holds(p, states.last().unwrap()));
        }
        if let Some(t) = found.worst.trace {
            let stateright = search::shortest_to_effects(&m, found.worst.effects).map(|c| c.len());
            assert_eq!(Some(t.len()), stateright, "worst case under {}", m.config);
            assert!(search::shortest_to_effects(&m, found.worst.effects + 1).is_none(), "worst case under {}", m.config);
        }
    }
    assert!(failing > 300, "only {failing} failing cells");
}

#[test]
fn reductions_change_no_verdict_no_length_and_no_worst_case() {
    let mut compared = 0;
    for m in models(1) {
        let full = m.without_reductions();
        for &p in PropertyKind::ALL {
            let a = check_property(&m, p);
            let b = check_property(&full, p);
            assert_eq!(a.verdict, b.verdict, "{p} under {}", m.config);
            assert_eq!(a.counterexample.map(|c| c.len()), b.counterexample.map(|c| c.len()), "{p} under {}", m.config);
            compared += 1;
        }
        let (wa, wb) = (worst_case(&m), worst_case(&full));
        assert_eq!(wa.effects, wb.effects, "worst case under {}", m.config);
        assert_eq!(wa.trace.map(|t| t.len()), wb.trace.map(|t| t.len()), "worst trace under {}", m.config);
    }
    assert!(compared > 400, "only {compared} comparisons");
}
