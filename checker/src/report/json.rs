//! The JSON a pipeline reads.
//!
//! Shapes (stable; see README "JSON output"): `check` prints one object with `config`,
//! `results` (one entry per property: `property`, `verdict`, `states`, `seconds`, and for a
//! violation `trace` with `steps`, `effects`, `file`), `worst_effects` and `worst_trace`;
//! `matrix` prints `{"cells": [...]}` of such objects, a cell that does not apply having
//! `applicable: false` and a `reason`; `diff` prints `{"a", "b", "changed": [{"before", "after"}]}`.

use crate::compare::Diff;
use crate::run::Cell;
use mcp_once_model::Config;
use serde_json::{json, Value};

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

/// The cells of a matrix as `matrix --format json` prints them.
pub fn matrix_json(cells: &[Cell]) -> Value {
    json!({"cells": cells.iter().map(cell_json).collect::<Vec<_>>()})
}

/// The cells that change between two profiles, as `diff --format json` prints them.
pub fn diff_json(diff: &Diff) -> Value {
    let cells: Vec<Value> = diff
        .changes
        .iter()
        .map(|c| json!({"before": c.before.map(cell_json), "after": c.after.map(cell_json)}))
        .collect();
    json!({"a": diff.a, "b": diff.b, "changed": cells})
}
