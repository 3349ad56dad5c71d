//! `diff` as text or Markdown: a bottom line (how many cells are fixed, regressed, no longer
//! applicable...), the bounds and a legend, then the cells that change, grouped by what the
//! change comes to, each verdict that moves, and (unless left out) the counterexamples that
//! appear or vanish.

use crate::compare::{Appearance, Change, ChangeKind, Diff, ShortVerdict, Signature};
use crate::key_effect::{KeyEffect, KeyOutcome};
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
    /// Show the shortest trace of each key-bearing cell whose duplicates the key leaves.
    pub still_violated_traces: bool,
}

/// The legend of the verdicts a diff shows.
const LEGEND: &str = "holds: no state within the bounds violates it; ✗ s/e: violated, its shortest \
counterexample has s steps and reaches e side effects for one logical call; unknown: the search \
stopped at its budget first; n/a: the configuration is outside the profile (the reason is given); \
worst n: the most side effects one logical call reaches within the bounds.";

/// The diff, opening with what the second profile's key does (`keys`), written as `style`
/// says; `bounds` says in words what bounds its cells were checked at.
pub fn diff_text(diff: &Diff, keys: &KeyEffect, bounds: &str, style: DiffStyle) -> String {
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
    out.push_str(&key_section(keys, style));
    let counts = diff.counts();
    let mut parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {}", k.word())).collect();
    let (same, same_violated) = diff.unchanged;
    parts.push(format!("{same} unchanged ({same_violated} of them violate a property under both)"));
    let line = format!("Bottom line: {}.", parts.join(", "));
    out.push_str(&if md { format!("**{line}**\n\n") } else { format!("{line}\n\n") });
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

/// The verdict of `p` in a pair's cell, as the diff shows it.
fn verdict(cell: &crate::cells::Cell, p: PropertyKind) -> String {
    ShortVerdict::of(cell, p).to_string()
}

/// The opening answer to "does the key fix duplicates?": per property, how the second profile's
/// key-bearing cells compare with the same behaviour without a key, and the cells whose
/// at-most-once the key leaves violated (with their shortest traces when asked for).
fn key_section(keys: &KeyEffect, style: DiffStyle) -> String {
    if keys.pairs.is_empty() {
        return String::new();
    }
    let md = style.markdown;
    let mut out = format!(
        "{}Does the key fix duplicates? {} has {} cells where the client sends a key; each is compared with its keyless baseline, the same client and server under {} without a key (a server that keeps key records then runs every call, as `plain` does, with its own cancellation handling):\n\n",
        if md { "#### " } else { "" },
        keys.b,
        keys.pairs.len(),
        keys.a
    );
    for p in PropertyKind::ALL {
        let counts = keys.counts(*p);
        if counts.is_empty() {
            continue;
        }
        let parts: Vec<String> =
            KeyOutcome::ALL.iter().filter_map(|o| counts.get(o).map(|n| format!("{n} {}", o.word()))).collect();
        out.push_str(&if md {
            format!("- `{}`: {}\n", p.as_str(), parts.join(", "))
        } else {
            format!("  {:<24} {}\n", p.as_str(), parts.join(", "))
        });
    }
    let still = keys.still_violated(PropertyKind::AtMostOnce);
    if still.is_empty() {
        out.push_str("\nNo key-bearing cell runs a call twice where its keyless baseline does.\n\n");
        return out;
    }
    out.push_str(&format!(
        "\nThe key leaves duplicates (at-most-once still violated) in {} cell{}:\n",
        still.len(),
        if still.len() == 1 { "" } else { "s" }
    ));
    for pair in still {
        let p = PropertyKind::AtMostOnce;
        let line =
            format!("{}: {} (without the key {})", pair.name(), verdict(pair.keyed, p), verdict(pair.baseline, p));
        out.push_str(&if md { format!("- {line}\n") } else { format!("  {line}\n") });
        if style.still_violated_traces {
            let checked = pair.keyed.outcome.as_ref().expect("a pair's keyed cell applies");
            let cex = checked.results.iter().find(|r| r.property == p).and_then(|r| r.counterexample.as_ref());
            if let Some(cex) = cex {
                if md {
                    out.push_str(&format!("\n```\n{}```\n", trace_text(checked, cex, "", false)));
                } else {
                    out.push_str(&trace_text(checked, cex, "    ", style.colour));
                }
            }
        }
    }
    if !style.still_violated_traces {
        out.push_str(&format!(
            "{}(--still-violated-traces shows each one's shortest trace.)\n",
            if md { "\n" } else { "  " }
        ));
    }
    out.push('\n');
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
    if change.kind() == ChangeKind::NewlyApplicable {
        let why = change.reason_before().unwrap_or_default();
        out.push_str(&if md { format!("  - n/a before: {why}\n") } else { format!("  n/a before: {why}\n") });
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
                Appearance::Changed => "changed counterexample (the one after)",
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
