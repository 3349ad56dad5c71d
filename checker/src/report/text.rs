//! The text a person reads in a terminal: one checked configuration, and numbered traces.

use crate::run::{Cell, Checked};
use mcp_once_model::rules;
use mcp_once_model::search::Counterexample;
use mcp_once_model::trace::TraceKind;
use std::fmt::Write;
use std::io::IsTerminal;

/// Whether to colour text (only on a terminal, and not when NO_COLOR is set).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// `text` in the ANSI style `code` when `on`.
fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// A numbered trace: actor, action, what happened, and the rules behind each step.
pub fn trace_text(c: &Checked, cex: &Counterexample, indent: &str, colour: bool) -> String {
    let mut out = String::new();
    for (i, a) in cex.actions.iter().enumerate() {
        let what = rules::describe(&c.model, &cex.states[i], a, &cex.states[i + 1]);
        let _ =
            writeln!(out, "{indent}{:>2}. {:<11} {}", i + 1, a.actor().to_string(), paint(colour, "1", &a.to_string()));
        let _ = writeln!(out, "{indent}    {:<11} {what}", "");
        for (knob, value, cite) in rules::citations(&c.model, a) {
            let rule = format!("{knob} = {value}: {cite}");
            let _ = writeln!(out, "{indent}    {:<11} {}", "", paint(colour, "2", &rule));
        }
    }
    out
}

/// The text report of one checked configuration.
pub fn check_text(cell: &Cell, colour: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mcp-once check {}", cell.config);
    let c = match &cell.outcome {
        Err(reason) => {
            let _ = writeln!(out, "not applicable: {reason}");
            return out;
        }
        Ok(c) => c,
    };
    let p = &c.model.profile;
    let _ = writeln!(out, "profile {} ({}), from {}", p.name, p.title, p.origin);
    for r in &c.results {
        let _ = writeln!(out);
        match &r.counterexample {
            None => {
                let _ = writeln!(
                    out,
                    "{:<24} {}  {}",
                    r.property.as_str(),
                    paint(colour, "32", "holds   "),
                    r.property.meaning()
                );
            }
            Some(cex) => {
                let _ = writeln!(
                    out,
                    "{:<24} {}  {}; shortest counterexample: {} steps, {} effect(s) for one call",
                    r.property.as_str(),
                    paint(colour, "31;1", "VIOLATED"),
                    r.property.meaning(),
                    cex.len(),
                    cex.effects()
                );
                out.push_str(&trace_text(c, cex, "  ", colour));
                if let Some(f) = c.files.get(TraceKind::Counterexample(r.property)) {
                    let _ = writeln!(out, "  trace written to {}", f.display());
                }
            }
        }
    }
    let _ = writeln!(out);
    match &c.worst.trace {
        Some(t) => {
            let _ = writeln!(
                out,
                "worst case: {} side effect(s) for one logical call, reached in {} steps",
                c.worst.effects,
                t.len()
            );
        }
        None => {
            let _ = writeln!(out, "worst case: no side effect is reachable");
        }
    }
    let s = c.stats;
    let _ = writeln!(
        out,
        "explored {} unique states ({} generated, depth {}) exhaustively in {:.2} s",
        s.states, s.generated, s.depth, s.seconds
    );
    out
}
