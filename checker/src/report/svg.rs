//! A trace's sequence diagram as inline SVG, for the HTML report: one lifeline per lane, one
//! arrow or note per step, numbered as the trace is. Drawn from the typed steps of
//! `sequence.rs`, so it shows what the Mermaid diagram of the Markdown reports shows, with no
//! script and nothing fetched.

use crate::report::sequence::{Lane, SequenceStep};
use std::fmt::Write;

/// Horizontal centre of each lane.
fn x(lane: Lane) -> u32 {
    match lane {
        Lane::Client => 140,
        Lane::Transport => 420,
        Lane::Server => 700,
    }
}

const WIDTH: u32 = 840;
const TOP: u32 = 64;
const ROW: u32 = 38;

/// Text made safe inside an XML or HTML element or a quoted attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The diagram of `steps`, as an `<svg>` element; each step is a `<g class="step">` with its
/// number in `data-step`, a message as a `<line>` (class `dashed` for a failure or a loss) and
/// a note as a `<rect>`, each with its `<text>`.
pub fn sequence_svg(steps: &[SequenceStep], id: &str) -> String {
    let head = format!("head-{}", escape(id));
    let height = TOP + ROW * steps.len() as u32 + 24;
    let mut out = String::new();
    let _ = write!(
        out,
        r#"<svg class="sequence" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="sequence diagram, {} steps">"#,
        steps.len()
    );
    let _ = write!(
        out,
        r##"<defs><marker id="{head}" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#333"/></marker></defs>"##
    );
    for lane in Lane::ALL {
        let cx = x(lane);
        let _ = write!(
            out,
            r##"<g class="lane"><rect x="{}" y="8" width="140" height="30" rx="4" fill="#eef2f7" stroke="#556"/><text x="{cx}" y="28" text-anchor="middle" font-weight="bold">{}</text><line x1="{cx}" y1="38" x2="{cx}" y2="{}" stroke="#99a" stroke-dasharray="2 3"/></g>"##,
            cx - 70,
            lane.title(),
            height - 8
        );
    }
    for (i, step) in steps.iter().enumerate() {
        let n = i + 1;
        let y = TOP + ROW * i as u32 + ROW / 2;
        let label = escape(&format!("{n}. {}", step.label));
        let _ = write!(out, r#"<g class="step" data-step="{n}">"#);
        match step.to {
            Some(to) => {
                let (x1, x2) = (x(step.from), x(to));
                let dash = if step.dashed { r#" class="dashed" stroke-dasharray="6 4""# } else { "" };
                let _ = write!(
                    out,
                    r##"<line x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="#333" marker-end="url(#{head})"{dash}/><text x="{}" y="{}" text-anchor="middle">{label}</text>"##,
                    (x1 + x2) / 2,
                    y - 6
                );
            }
            None => {
                let cx = x(step.from);
                let effect = step.label.starts_with("EFFECT");
                let fill = if effect { "#fde2e1" } else { "#fff8d6" };
                let _ = write!(
                    out,
                    r##"<rect x="{}" y="{}" width="250" height="26" rx="3" fill="{fill}" stroke="#aa9"/><text x="{cx}" y="{}" text-anchor="middle">{label}</text>"##,
                    cx - 125,
                    y - 14,
                    y + 4
                );
            }
        }
        out.push_str("</g>");
    }
    out.push_str("</svg>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_step_is_drawn_once_and_text_is_escaped() {
        let steps = vec![
            SequenceStep { from: Lane::Client, to: Some(Lane::Transport), dashed: false, label: "a <b> & c".into() },
            SequenceStep { from: Lane::Transport, to: Some(Lane::Client), dashed: true, label: "lost".into() },
            SequenceStep { from: Lane::Server, to: None, dashed: false, label: "EFFECT id 1".into() },
        ];
        let svg = sequence_svg(&steps, "t");
        assert_eq!(svg.matches(r#"<g class="step""#).count(), 3, "{svg}");
        assert!(svg.contains("1. a &lt;b&gt; &amp; c"), "{svg}");
        assert_eq!(svg.matches(r#"class="dashed""#).count(), 1, "{svg}");
        assert!(svg.contains(r#"data-step="3"><rect"#), "{svg}");
    }
}
