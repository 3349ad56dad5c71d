//! The figures `minimality.rs` checks its comparisons against, each derived from what it counts
//! (the matrix's cells, their distinct searches) or read from where it is written
//! (`over_the_limit.txt`, BENCHMARKS.md), not a floor.

use mcp_once_model::catalogue::builtin_profiles;
use mcp_once_model::*;

/// How many distinct searches `models` make (one per behaviour key): the figure a comparison
/// that searches each behaviour once must reach.
pub fn distinct_searches(models: &[McpModel]) -> usize {
    models.iter().map(|m| m.behaviour_key()).collect::<std::collections::HashSet<_>>().len()
}

/// How many of `cells` apply under their profile, by [`Config::applicable`], the matrix's own
/// definition (a model is built for exactly these; `models_of` in `minimality.rs` must lose none).
pub fn applicable_cells(cells: &[Config], calls: u8) -> usize {
    let profiles = builtin_profiles();
    let profile = |c: &Config| profiles.iter().find(|p| p.name == c.profile).unwrap().clone();
    let bounded = |c: &Config| Config { bounds: Bounds { calls, ..c.bounds }, ..c.clone() }.normalised();
    cells.iter().filter(|c| bounded(c).applicable(&profile(c)).is_ok()).count()
}

/// The properties the searches of `cells` with `calls` check, summed over those that apply
/// ([`PropertyKind::checked`]: `no-foreign-replay` only with two callers).
pub fn checked_pairs(cells: &[Config], calls: u8) -> usize {
    let profiles = builtin_profiles();
    let profile = |c: &Config| profiles.iter().find(|p| p.name == c.profile).unwrap().clone();
    let bounded = |c: &Config| Config { bounds: Bounds { calls, ..c.bounds }, ..c.clone() }.normalised();
    cells
        .iter()
        .map(bounded)
        .filter(|c| c.applicable(&profile(c)).is_ok())
        .map(|c| mcp_once_model::PropertyKind::checked(&c).len())
        .sum()
}

/// The searches each comparison below finds over its state limit at the test command's limit,
/// by name: `over_the_limit.txt`, a `# COMPARISON` line, then each search's configuration on
/// a line of its own. An unreduced model's state count changes only with the model, so the list
/// changes only when the model does; the figure the comparison must reach is then the distinct
/// searches of its cells less the ones listed.
pub fn listed_over_the_limit(comparison: &str) -> std::collections::BTreeSet<String> {
    let text = include_str!("../over_the_limit.txt");
    let heading = format!("# {comparison}");
    let mut lines = text.lines().skip_while(|l| *l != heading);
    assert!(lines.next().is_some(), "over_the_limit.txt has no `{heading}` section");
    lines.take_while(|l| !l.starts_with("# ")).filter(|l| !l.trim().is_empty()).map(String::from).collect()
}

/// Assert that the searches `over` a comparison's `limit` are the ones listed for it at
/// `default` (a search over a lower limit may fit a higher one, never the other way): at the
/// default limit exactly those, above it some of them, below it all of them and maybe more.
pub fn assert_over_as_listed(comparison: &str, over: &[String], limit: usize, default: usize) {
    let listed = listed_over_the_limit(comparison);
    let over: std::collections::BTreeSet<String> = over.iter().cloned().collect();
    let new: Vec<_> = over.difference(&listed).collect();
    let fit: Vec<_> = listed.difference(&over).collect();
    if limit <= default {
        assert!(fit.is_empty(), "{comparison}: listed over {default} states, fit under {limit}: {fit:#?}");
    }
    if limit >= default {
        assert!(new.is_empty(), "{comparison}: over {limit} states, not listed in over_the_limit.txt: {new:#?}");
    }
}

/// The 3-call safe cell's states, reduced and under the first view, as BENCHMARKS.md gives
/// them ("on the 3-call safe cell, the same comparison (A states against B; ...").
pub fn benchmarks_safe_cell_states() -> (usize, usize) {
    let text = include_str!("../../../BENCHMARKS.md").split_whitespace().collect::<Vec<_>>().join(" ");
    let at = "on the 3-call safe cell, the same comparison (";
    let rest = &text[text.find(at).expect("BENCHMARKS.md gives the 3-call safe cell's comparison") + at.len()..];
    let number = |s: &str| s.replace(',', "").parse::<usize>().unwrap_or_else(|e| panic!("{s}: {e}"));
    let (lean, rest) = rest.split_once(" states against ").expect("A states against B");
    let first = rest.split([';', ')']).next().unwrap();
    (number(lean), number(first))
}
