//! `diff` as text or Markdown: the cells that change, each verdict that moves, and the
//! counterexamples that appear or vanish.

use crate::compare::{Appearance, Diff, Signature};
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

/// The diff for a terminal (`markdown` false; traces coloured when `colour`) or as Markdown.
pub fn diff_text(diff: &Diff, markdown: bool, colour: bool) -> String {
    let md = markdown;
    let mut out = String::new();
    let h = |level: &str| if md { level.to_string() } else { String::new() };
    out.push_str(&format!(
        "{}{} -> {}: {} of the matrix's cells change\n\n",
        h("### "),
        diff.a,
        diff.b,
        diff.changes.len()
    ));
    for change in &diff.changes {
        let k = change.key;
        out.push_str(&format!("{}{} / {} / key {} / {}\n", h("#### "), k.transport, k.client, k.key, k.server));
        for ((name, was), (_, now)) in entries(&change.was).iter().zip(entries(&change.now)) {
            if *was != now {
                let what =
                    if md { format!("- `{name}`: {was} → {now}") } else { format!("  {name:<24} {was} -> {now}") };
                out.push_str(&what);
                out.push('\n');
            }
        }
        // The new counterexamples (violated after, not before) and the vanished ones.
        for c in change.counterexamples() {
            let label = match c.appearance {
                Appearance::New => "new counterexample",
                Appearance::Vanished => "vanished counterexample",
            };
            out.push_str(&format!(
                "{}  {label} to {} ({} steps):\n",
                if md { "\n" } else { "" },
                c.property,
                c.counterexample.len()
            ));
            if md {
                out.push_str(&format!("```\n{}```\n", trace_text(c.cell, c.counterexample, "", false)));
            } else {
                out.push_str(&trace_text(c.cell, c.counterexample, "    ", colour));
            }
        }
        out.push('\n');
    }
    out
}
