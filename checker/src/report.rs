//! Rendering results: the text a person reads and the JSON a pipeline reads.
//!
//! JSON shapes (stable; see README "JSON output"): `check` prints one object with `config`,
//! `results` (one entry per property: `property`, `verdict`, `states`, `seconds`, and for a
//! violation `trace` with `steps`, `effects`, `file`), `worst_effects` and `worst_trace`;
//! `matrix` prints `{"cells": [...]}` of such objects, a cell that does not apply having
//! `applicable: false` and a `reason`.

use crate::run::{Cell, Checked};
use mcp_once_model::rules;
use mcp_once_model::search::Counterexample;
use mcp_once_model::{Config, PropertyKind, Verdict};
use serde_json::{json, Value};
use std::fmt::Write;
use std::io::IsTerminal;

/// Whether to colour text (only on a terminal, and not when NO_COLOR is set).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The configuration as JSON (every parameter).
pub fn config_json(c: &Config) -> Value {
    json!({
        "profile": c.profile,
        "transport": c.transport,
        "client": c.client,
        "key": c.key,
        "server": c.server,
        "calls": c.bounds.calls,
        "retries": c.bounds.retries,
        "crashes": c.bounds.crashes,
    })
}

/// One cell as the JSON object `check --format json` prints.
pub fn cell_json(cell: &Cell) -> Value {
    let checked = match &cell.outcome {
        Err(reason) => return json!({"config": config_json(&cell.config), "applicable": false, "reason": reason}),
        Ok(c) => c,
    };
    let results: Vec<Value> = checked
        .results
        .iter()
        .map(|r| {
            let mut v = json!({
                "property": r.property,
                "verdict": r.verdict,
                "states": r.stats.states,
                "seconds": r.stats.seconds,
            });
            if let Some(cex) = &r.counterexample {
                v["trace"] = json!({
                    "steps": cex.len(),
                    "effects": cex.effects(),
                    "file": checked.files.get(r.property.as_str()),
                });
            }
            v
        })
        .collect();
    json!({
        "config": config_json(&cell.config),
        "applicable": true,
        "profile": {"name": checked.model.profile.name, "origin": checked.model.profile.origin},
        "results": results,
        "worst_effects": checked.worst.effects,
        "worst_trace": checked.files.get("worst-case"),
        "stats": checked.stats,
    })
}

/// A numbered trace: actor, action, what happened, and the rules behind each step.
pub fn trace_text(c: &Checked, cex: &Counterexample, indent: &str, colour: bool) -> String {
    let mut out = String::new();
    for (i, a) in cex.actions.iter().enumerate() {
        let what = rules::describe(&c.model, &cex.states[i], a, &cex.states[i + 1]);
        let _ = writeln!(out, "{indent}{:>2}. {:<11} {}", i + 1, a.actor().to_string(), paint(colour, "1", &a.to_string()));
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
                let _ = writeln!(out, "{:<24} {}  {}", r.property.as_str(), paint(colour, "32", "holds   "), r.property.meaning());
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
                if let Some(f) = c.files.get(r.property.as_str()) {
                    let _ = writeln!(out, "  trace written to {}", f.display());
                }
            }
        }
    }
    let _ = writeln!(out);
    match &c.worst.trace {
        Some(t) => {
            let _ = writeln!(out, "worst case: {} side effect(s) for one logical call, reached in {} steps", c.worst.effects, t.len());
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

/// A short cell verdict for tables: `holds`, `✗ 8/2` (steps/effects) or `n/a`.
pub fn short_verdict(cell: &Cell, p: PropertyKind) -> String {
    match &cell.outcome {
        Err(_) => "n/a".into(),
        Ok(c) => match c.results.iter().find(|r| r.property == p) {
            None => "-".into(),
            Some(r) if r.verdict == Verdict::Holds => "holds".into(),
            Some(r) => {
                let cex = r.counterexample.as_ref().expect("violated has a trace");
                format!("✗ {}/{}", cex.len(), cex.effects())
            }
        },
    }
}

/// Summary counts over cells: (checked, not applicable, cells where every property holds).
pub fn summary_counts(cells: &[Cell]) -> (usize, usize, usize) {
    let checked = cells.iter().filter(|c| c.outcome.is_ok()).count();
    let safe = cells.iter().filter(|c| matches!(&c.outcome, Ok(k) if !k.any_violated())).count();
    (checked, cells.len() - checked, safe)
}
