//! The text a person reads in a terminal: one checked configuration, and numbered traces.

use crate::cells::{Cell, Checked};
use crate::conformant::{Conformant, ConformantAnswer};
use mcp_once_model::conformance;
use mcp_once_model::explanation::explain_path;
use mcp_once_model::search::{Counterexample, Stats};
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{End, PropertyKind, Verdict, WorstSearch};
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
    for step in explain_path(&c.model, cex) {
        let a = step.action;
        let _ = writeln!(
            out,
            "{indent}{:>2}. {:<11} {}",
            step.number,
            a.actor().to_string(),
            paint(colour, "1", &a.to_string())
        );
        let _ = writeln!(out, "{indent}    {:<11} {}", "", step.what);
        for (knob, value, cite) in &step.rules {
            let rule = format!("{knob} = {value}: {cite}");
            let _ = writeln!(out, "{indent}    {:<11} {}", "", paint(colour, "2", &rule));
        }
        for b in &step.breaches {
            let breach = format!("{}: {}", b.heading(), b.what);
            let colour_code = if b.binds() { "31" } else { "33" };
            let _ = writeln!(out, "{indent}    {:<11} {}", "", paint(colour, colour_code, &breach));
        }
    }
    out
}

/// What the conformant servers say of property `p`, before the cell's own trace: the
/// shortest conformant counterexample, or that none is reached.
/// `same`: its steps are the cell's own (then the cell's trace is not repeated).
fn conformant_text(k: &Conformant, p: PropertyKind, same: bool, colour: bool) -> String {
    let mut out = String::new();
    match k.answer(p) {
        ConformantAnswer::Reached(v, cex) => {
            let _ = writeln!(
                out,
                "  a conformant server ({}) reaches the same violation in {} steps, {} effect(s) for one call{}:",
                k.change(&v.model.config),
                cex.len(),
                cex.effects(),
                if same { ", by the same steps as this cell's own server" } else { "" }
            );
            out.push_str(&trace_text(v, cex, "  ", colour));
            if let Some(f) = v.files.get(TraceKind::Counterexample(p)) {
                let _ = writeln!(out, "  trace written to {}", f.display());
            }
            if !same {
                let _ = writeln!(out, "  the trace of this cell's own server, which breaks the MUST:");
            }
        }
        ConformantAnswer::NotReached => {
            let _ = writeln!(
                out,
                "  no conformant server of this kind reaches it ({}): the trace below is of a non-conformant server only",
                k.variants_hold()
            );
        }
        ConformantAnswer::Unknown => {
            let _ = writeln!(
                out,
                "  whether a conformant server of this kind reaches it is unknown: the search of {} stopped at its budget first; the trace below is of a non-conformant server",
                k.variant_names()
            );
        }
    }
    out
}

/// The text report of one checked configuration, with the conformant servers' answers where
/// its server breaks a MUST of the profile.
pub fn check_text(cell: &Cell, conformant: Option<&Conformant>, colour: bool) -> String {
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
    for b in conformance::cell_breaches(&c.model.config, p) {
        let (line, colour_code) = if b.binds() {
            (format!("this {} breaks a {} of the profile ({}): {}", b.party(), b.keyword, b.knob, b.what), "31")
        } else {
            let advice = format!("does what a {} of the profile advises against", b.keyword);
            (format!("this {} {advice} ({}): {}", b.party(), b.knob, b.what), "33")
        };
        let _ = writeln!(out, "{}", paint(colour, colour_code, &line));
    }
    for r in &c.results {
        let _ = writeln!(out);
        match &r.counterexample {
            None if r.verdict == Verdict::Unknown => {
                let depth = c.stopped().map_or(0, |(_, d)| d);
                let _ = writeln!(
                    out,
                    "{:<24} {}  no violation within {depth} steps; the search stopped at its budget first",
                    r.property.as_str(),
                    paint(colour, "33", "unknown ")
                );
            }
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
                let same = conformant.is_some_and(|k| k.same_steps(r.property, cex));
                if let Some(k) = conformant {
                    out.push_str(&conformant_text(k, r.property, same, colour));
                }
                if !same {
                    out.push_str(&trace_text(c, cex, "  ", colour));
                }
                if let Some(f) = c.files.get(TraceKind::Counterexample(r.property)) {
                    let _ = writeln!(out, "  trace written to {}", f.display());
                }
            }
        }
    }
    let _ = writeln!(out);
    let worst = &c.worst;
    match (worst.search, &worst.trace) {
        (WorstSearch::NotSearched, _) => {
            let _ = writeln!(out, "worst case: not searched (use --worst)");
        }
        (WorstSearch::Partial, Some(t)) => {
            let _ = writeln!(
                out,
                "worst case: at least {} side effect(s) for one logical call (reached in {} steps; the search stopped at its budget)",
                worst.effects,
                t.len()
            );
        }
        (WorstSearch::Partial, None) => {
            let _ =
                writeln!(out, "worst case: unknown (no side effect reached before the search stopped at its budget)");
        }
        (WorstSearch::Exhaustive, Some(t)) => {
            let _ = writeln!(
                out,
                "worst case: {} side effect(s) for one logical call, reached in {} steps",
                worst.effects,
                t.len()
            );
        }
        (WorstSearch::Exhaustive, None) => {
            let _ = writeln!(out, "worst case: no side effect is reachable");
        }
    }
    for kind in &c.unverified {
        let what = kind.property_name();
        let _ = writeln!(
            out,
            "({what}: its length was not re-checked by stateright, whose search reached the budget first)"
        );
    }
    for gap in crate::report::markdown::not_covered(&c.model) {
        let _ = writeln!(out, "does not cover: {gap}");
    }
    let s = c.stats;
    let how = match c.end {
        End::Exhaustive => "exhaustively".to_string(),
        End::Answered => "and stopped at the shortest counterexample asked for".to_string(),
        End::Stopped { why, depth_completed } => {
            format!("and stopped: {why}; every state within {depth_completed} steps was checked")
        }
    };
    let _ = writeln!(
        out,
        "explored {} unique states ({} generated, depth {}) {how} in {:.2} s; {}",
        s.states,
        s.generated,
        s.depth,
        s.seconds,
        fingerprint_line(s)
    );
    out
}

/// The width of the fingerprints a search remembered states by and, past a million states, the
/// estimated chance that two shared one (so that one was never explored), as TLC reports.
pub fn fingerprint_line(s: Stats) -> String {
    match s.collision_probability() {
        Some(p) => format!("{}-bit fingerprints, estimated chance of a collision {p:.1e}", s.fingerprint_bits),
        None => format!("{}-bit fingerprints", s.fingerprint_bits),
    }
}
