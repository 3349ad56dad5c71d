//! `diff` as text or Markdown: a bottom line (how many cells are fixed, regressed, no longer
//! applicable...), the bounds and a legend, then the cells that change, grouped by what the
//! change comes to, each verdict that moves, and (unless left out) the counterexamples that
//! appear or vanish.

use crate::compare::{Appearance, Change, ChangeKind, Diff, Signature};
use crate::report::text::trace_text;
use mcp_once_model::PropertyKind;

/// A signature's entries as the diff shows them, beside their names (the properties, then
/// `worst case`).
fn entries(s: &Signature) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> =
        PropertyKind::ALL.iter().zip(&s.verdicts).map(|(p, v)| (p.as_str(), v.to_string())).collect();
    v.push((
        "worst case",
        match s.worst {
            Some(n) => format!("worst {n}"),
            None => "worst n/a".into(),
        },
    ));
    v
}

/// How the diff is written.
#[derive(Clone, Copy, Debug, Default)]
pub struct DiffStyle {
    /// Markdown (for an issue or a pull request) rather than terminal text.
    pub markdown: bool,
    /// Colour the traces (terminal text only).
    pub colour: bool,
    /// Leave the counterexample traces out (a short diff, e.g. for a GitHub comment).
    pub no_traces: bool,
}

/// The legend of the verdicts a diff shows.
const LEGEND: &str = "holds: no state within the bounds violates it; ✗ s/e: violated, its shortest \
counterexample has s steps and reaches e side effects for one logical call; unknown: the search \
stopped at its budget first; n/a: the configuration is outside the profile (the reason is given); \
worst n: the most side effects one logical call reaches within the bounds.";

/// The diff, written as `style` says; `bounds` says in words what bounds its cells were checked at.
pub fn diff_text(diff: &Diff, bounds: &str, style: DiffStyle) -> String {
    let md = style.markdown;
    let h = |level: &str| if md { level.to_string() } else { String::new() };
    let mut out = format!(
        "{}{} -> {}: {} of the matrix's {} cells change\n\n",
        h("### "),
        diff.a,
        diff.b,
        diff.changes.len(),
        diff.cells
    );
    let counts = diff.counts();
    if !counts.is_empty() {
        let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {}", k.word())).collect();
        let line = format!("Bottom line: {}.", parts.join(", "));
        out.push_str(&if md { format!("**{line}**\n\n") } else { format!("{line}\n\n") });
    }
    out.push_str(&format!("Bounds: {bounds}.\n\n"));
    if !diff.changes.is_empty() {
        out.push_str(&format!("Legend: {LEGEND}\n\n"));
    }
    for (kind, n) in counts {
        out.push_str(&format!("{}{} ({n})\n\n", if md { "#### " } else { "== " }, kind.heading()));
        for change in diff.changes.iter().filter(|c| c.kind() == kind) {
            write_change(&mut out, change, style);
        }
    }
    out
}

/// One changed cell: its name, the verdicts that move (or why it no longer applies), and the
/// counterexamples that appear or vanish.
fn write_change(out: &mut String, change: &Change, style: DiffStyle) {
    let md = style.markdown;
    let k = change.key;
    let name = k.name();
    out.push_str(&if md { format!("- **{name}**\n") } else { format!("{name}\n") });
    if change.kind() == ChangeKind::NoLongerApplicable {
        let why = change.reason_after().unwrap_or_default();
        out.push_str(&if md { format!("  - n/a: {why}\n") } else { format!("  n/a: {why}\n") });
    }
    for ((name, was), (_, now)) in entries(&change.was).iter().zip(entries(&change.now)) {
        if *was != now {
            out.push_str(&if md {
                format!("  - `{name}`: {was} → {now}\n")
            } else {
                format!("  {name:<24} {was} -> {now}\n")
            });
        }
    }
    if !style.no_traces {
        // The new counterexamples (violated after, not before) and the vanished ones.
        for c in change.counterexamples() {
            let label = match c.appearance {
                Appearance::New => "new counterexample",
                Appearance::Vanished if change.kind() == ChangeKind::NoLongerApplicable => {
                    "counterexample outside the second profile"
                }
                Appearance::Vanished => "vanished counterexample",
            };
            let head = format!("{label} to {} ({} steps):\n", c.property, c.counterexample.len());
            if md {
                out.push_str(&format!("\n  {head}\n```\n{}```\n", trace_text(c.cell, c.counterexample, "", false)));
            } else {
                out.push_str(&format!("  {head}"));
                out.push_str(&trace_text(c.cell, c.counterexample, "    ", style.colour));
            }
        }
    }
    out.push('\n');
}
