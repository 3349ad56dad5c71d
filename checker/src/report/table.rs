//! The matrix as a table (text or Markdown), and the summary `check` prints of the default
//! matrix.

use crate::cells::Cell;
use crate::compare::ShortVerdict;
use crate::report::json::{CellRecord, MatrixRecord, SearchEnd};
use crate::report::text::colour;
use mcp_once_model::catalogue::matrix_bounds;
use mcp_once_model::{ClientPolicy, PropertyKind, Verdict, WorstSearch};

/// Summary counts over cells: (checked, not applicable, cells where every property holds).
pub fn summary_counts(cells: &[Cell]) -> (usize, usize, usize) {
    let checked = cells.iter().filter(|c| c.outcome.is_ok()).count();
    let safe = cells.iter().filter(|c| matches!(&c.outcome, Ok(k) if !k.any_violated())).count();
    (checked, cells.len() - checked, safe)
}

/// The whole matrix, one row per cell: Markdown, or aligned text (coloured on a terminal).
pub fn matrix_table(cells: &[Cell], markdown: bool) -> String {
    records_table(&MatrixRecord::of(cells).cells, markdown)
}

/// One property's verdict in a cell record, as the table shows it (`ShortVerdict`'s forms).
fn verdict_text(cell: &CellRecord, p: PropertyKind) -> String {
    let CellRecord::Checked { results, .. } = cell else { return "n/a".into() };
    match results.iter().find(|r| r.property == p) {
        None => "-".into(),
        Some(r) => match (&r.verdict, &r.trace) {
            (Verdict::Holds, _) => "holds".into(),
            (Verdict::Unknown, _) => "unknown".into(),
            (Verdict::Violated, Some(t)) => format!("✗ {}/{}", t.steps, t.effects),
            (Verdict::Violated, None) => "✗".into(),
        },
    }
}

/// The properties a table of `cells` has a column for: every one some cell checked (a cell with
/// one caller does not check `no-foreign-replay`), and the four every cell checks.
pub fn shown_properties(cells: &[CellRecord]) -> Vec<PropertyKind> {
    let checked = |p: PropertyKind| {
        cells
            .iter()
            .any(|c| matches!(c, CellRecord::Checked { results, .. } if results.iter().any(|r| r.property == p)))
    };
    PropertyKind::ALL.iter().copied().filter(|p| *p != PropertyKind::NoForeignReplay || checked(*p)).collect()
}

/// The matrix table of cell records (one run's, or shards merged): the same text either way.
pub fn records_table(cells: &[CellRecord], markdown: bool) -> String {
    let shown = shown_properties(cells);
    let mut header = vec!["profile", "transport", "client", "key", "server"];
    header.extend(shown.iter().map(|p| p.as_str()));
    header.push("worst");
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let cfg = match c {
                CellRecord::Checked { config, .. } | CellRecord::NotApplicable { config, .. } => config,
            };
            let mut row = vec![
                cfg.profile.to_string(),
                cfg.transport.to_string(),
                cfg.client.to_string(),
                cfg.key.to_string(),
                match cfg.cancel {
                    Some(cancel) => format!("{} --cancel {cancel}", cfg.server),
                    None => cfg.server.to_string(),
                } + if breaks_must(c) { " †" } else { "" },
            ];
            for p in &shown {
                row.push(verdict_text(c, *p));
            }
            row.push(match c {
                CellRecord::Checked { worst_effects, worst_search, .. } => match worst_search {
                    WorstSearch::Exhaustive => worst_effects.to_string(),
                    WorstSearch::Partial => format!("≥{worst_effects}"),
                    WorstSearch::NotSearched => "-".into(),
                },
                CellRecord::NotApplicable { .. } => "n/a".into(),
            });
            row
        })
        .collect();
    let mut out = String::new();
    if markdown {
        out.push_str(&format!("| {} |\n|{}\n", header.join(" | "), "---|".repeat(header.len())));
        for r in &rows {
            out.push_str(&format!("| {} |\n", r.join(" | ")));
        }
        out.push_str(&stopped_note(cells, "\n`unknown`"));
        out.push_str("\n`✗ s/e`: violated, shortest counterexample of s steps reaching e side effects for one logical call; `n/a`: the configuration does not apply under the profile.\n");
        out.push_str(&breaks_note(cells, "\n`†`"));
        return out;
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| rows.iter().map(|r| r[i].chars().count()).chain([header[i].len()]).max().unwrap_or(0))
        .collect();
    let paint = colour();
    let line = |cells: Vec<String>| -> String {
        let mut s = String::new();
        for (i, v) in cells.iter().enumerate() {
            let pad = widths[i].saturating_sub(v.chars().count());
            let shown = if paint && v.starts_with('✗') {
                format!("\x1b[31m{v}\x1b[0m")
            } else if paint && v == "holds" {
                format!("\x1b[32m{v}\x1b[0m")
            } else {
                v.clone()
            };
            s.push_str(&shown);
            s.push_str(&" ".repeat(pad + 2));
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&line(header.iter().map(|h| h.to_string()).collect()));
    for r in rows {
        out.push_str(&line(r));
    }
    out.push_str(&stopped_note(cells, "\nunknown"));
    out.push_str("\n✗ s/e: violated, shortest counterexample of s steps reaching e side effects for one logical call; n/a: does not apply under the profile.\n");
    out.push_str(&breaks_note(cells, "\n†"));
    out
}

/// Whether the cell's server breaks a MUST of its profile by what it is.
fn breaks_must(cell: &CellRecord) -> bool {
    matches!(cell, CellRecord::Checked { breaks, .. } if !breaks.is_empty())
}

/// The legend of the `†` marker, where a cell has it (`mark`: how it is written).
fn breaks_note(cells: &[CellRecord], mark: &str) -> String {
    let n = cells.iter().filter(|c| breaks_must(c)).count();
    if n == 0 {
        return String::new();
    }
    format!("{mark}: the server of {n} cell(s) breaks a MUST of its profile (for instance, its instances keep stores of their own where the store MUST be shared, or its key records answer one caller with another's where they MUST be scoped per caller; a server that only goes on with a cancelled request, against a SHOULD, is not marked); `mcp-once check` on such a cell names the MUST and shows whether a conformant server reaches the same violation, and its trace first.\n")
}

/// A line on the cells whose search stopped at its budget, if any (`word`: how `unknown` is
/// written).
fn stopped_note(cells: &[CellRecord], word: &str) -> String {
    let stopped = cells.iter().filter(|c| matches!(c, CellRecord::Checked { search: SearchEnd::Stopped, .. })).count();
    if stopped == 0 {
        return String::new();
    }
    format!("{word}: the search of {stopped} cell(s) stopped at its budget before deciding it (≥e in the worst column: at least e effects found by then; raise --max-memory or --max-states).")
}

/// What `check` prints of the default matrix: the cells where the first property asked for
/// holds, and a summary line (`seconds`: the wall time).
pub fn matrix_summary(cells: &[Cell], props: &[PropertyKind], seconds: f64) -> String {
    let (checked, na, safe) = summary_counts(cells);
    let headline = props[0];
    let holds = |c: &Cell| matches!(&c.outcome, Ok(k) if k.results.iter().any(|r| r.property == headline && r.counterexample.is_none()));
    let mut out = String::new();
    out.push_str(&format!(
        "mcp-once: default matrix: {} cells ({} checked, {} not applicable), bounds per cell: {} calls, {} retry ({} framework re-runs), {} crash\n\n",
        cells.len(),
        checked,
        na,
        matrix_bounds(ClientPolicy::RetryAny).calls,
        matrix_bounds(ClientPolicy::RetryAny).retries,
        matrix_bounds(ClientPolicy::FrameworkRetry).retries,
        matrix_bounds(ClientPolicy::RetryAny).crashes,
    ));
    out.push_str(&format!("cells where {headline} holds (it is violated in every other cell):\n"));
    for c in cells.iter().filter(|c| holds(c)) {
        let cfg = &c.config;
        let others: Vec<String> = props[1..].iter().map(|p| format!("{p} {}", ShortVerdict::of(c, *p))).collect();
        let line = format!(
            "  {:<15} {:<5} {:<19} {:<9} {:<20} {}",
            cfg.profile,
            cfg.transport.as_str(),
            cfg.client.as_str(),
            cfg.key.as_str(),
            cfg.server.as_str(),
            others.join(", ")
        );
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let worst = cells.iter().filter_map(|c| c.outcome.as_ref().ok()).map(|k| k.worst.effects).max().unwrap_or(0);
    out.push_str(&format!(
        "\nsummary: {checked} cells checked; every checked property holds in {safe}; {headline} holds in {}; worst case {worst} effects for one logical call; {seconds:.1} s\n",
        cells.iter().filter(|c| holds(c)).count(),
    ));
    out.push_str("full table: mcp-once matrix; one cell with its traces: mcp-once check --profile ... --server ...\n");
    out
}
