//! The JSON a pipeline reads, as serde types built from the typed results.
//!
//! Shapes (stable; see README "JSON output"): `check` prints one object with `config`,
//! `results` (one entry per property: `property`, `verdict`, `states`, `seconds`, and for a
//! violation `trace` with `steps`, `effects`, `file`), `worst_effects` and `worst_trace`;
//! `matrix` prints `{"cells": [...]}` of such objects, a cell that does not apply having
//! `applicable: false` and a `reason`; `diff` prints `{"a", "b", "changed": [{"before", "after"}]}`.
//!
//! Every object's fields are declared in alphabetical order: the output has always listed keys
//! that way (it was built as `serde_json::Value`, whose maps are sorted), and scripts compare it
//! byte for byte.

use crate::compare::Diff;
use crate::run::Cell;
use mcp_once_model::search::Stats;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{ClientPolicy, Config, KeyLifetime, PropertyKind, ServerImpl, Transport, Verdict};
use serde::Serialize;
use std::path::Path;

/// A configuration, every parameter at the top level.
#[derive(Serialize)]
pub struct ConfigRecord<'a> {
    /// Logical calls.
    pub calls: u8,
    /// Client policy.
    pub client: ClientPolicy,
    /// Server crashes.
    pub crashes: u8,
    /// Idempotency key lifetime.
    pub key: KeyLifetime,
    /// Profile name or path.
    pub profile: &'a str,
    /// Retries per call.
    pub retries: u8,
    /// Server implementation.
    pub server: ServerImpl,
    /// Transport.
    pub transport: Transport,
}

impl<'a> ConfigRecord<'a> {
    /// The record of `c`.
    pub fn of(c: &'a Config) -> Self {
        ConfigRecord {
            calls: c.bounds.calls,
            client: c.client,
            crashes: c.bounds.crashes,
            key: c.key,
            profile: &c.profile,
            retries: c.bounds.retries,
            server: c.server,
            transport: c.transport,
        }
    }
}

/// The profile a cell was checked under.
#[derive(Serialize)]
pub struct ProfileRecord<'a> {
    /// Its name.
    pub name: &'a str,
    /// Where it was loaded from (`builtin:NAME` or a path).
    pub origin: &'a str,
}

/// A shortest counterexample: its length, its end, and the file it was written to.
#[derive(Serialize)]
pub struct TraceRecord<'a> {
    /// Side effects for one logical call at its end.
    pub effects: u8,
    /// The trace file, if traces were written (`null` otherwise).
    pub file: Option<&'a Path>,
    /// Steps.
    pub steps: usize,
}

/// One property's result in a cell.
#[derive(Serialize)]
pub struct ResultRecord<'a> {
    /// The property.
    pub property: PropertyKind,
    /// Wall time of the search.
    pub seconds: f64,
    /// Unique states explored.
    pub states: usize,
    /// The counterexample, when violated (absent when the property holds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRecord<'a>>,
    /// Holds or violated.
    pub verdict: Verdict,
}

/// The counts of a cell's search.
#[derive(Serialize)]
pub struct StatsRecord {
    /// Largest depth reached.
    pub depth: usize,
    /// States generated, repeats included.
    pub generated: usize,
    /// Wall time.
    pub seconds: f64,
    /// Unique states explored.
    pub states: usize,
}

impl StatsRecord {
    /// The record of `s`.
    pub fn of(s: Stats) -> Self {
        StatsRecord { depth: s.depth, generated: s.generated, seconds: s.seconds, states: s.states }
    }
}

/// One cell as `check --format json` prints it.
#[derive(Serialize)]
#[serde(untagged)]
pub enum CellRecord<'a> {
    /// A cell that was checked.
    Checked {
        /// Always `true`.
        applicable: bool,
        /// The configuration.
        config: ConfigRecord<'a>,
        /// Its profile.
        profile: ProfileRecord<'a>,
        /// One result per property asked for.
        results: Vec<ResultRecord<'a>>,
        /// The search's counts.
        stats: StatsRecord,
        /// The worst case: side effects for one logical call.
        worst_effects: u8,
        /// The worst case's trace file, if written.
        worst_trace: Option<&'a Path>,
    },
    /// A cell whose configuration does not apply under its profile.
    NotApplicable {
        /// Always `false`.
        applicable: bool,
        /// The configuration.
        config: ConfigRecord<'a>,
        /// Why it does not apply.
        reason: &'a str,
    },
}

impl<'a> CellRecord<'a> {
    /// The record of `cell`.
    pub fn of(cell: &'a Cell) -> Self {
        let config = ConfigRecord::of(&cell.config);
        let checked = match &cell.outcome {
            Err(reason) => return CellRecord::NotApplicable { applicable: false, config, reason },
            Ok(c) => c,
        };
        let results = checked
            .results
            .iter()
            .map(|r| ResultRecord {
                property: r.property,
                seconds: r.stats.seconds,
                states: r.stats.states,
                trace: r.counterexample.as_ref().map(|cex| TraceRecord {
                    effects: cex.effects(),
                    file: checked.files.get(TraceKind::Counterexample(r.property)),
                    steps: cex.len(),
                }),
                verdict: r.verdict,
            })
            .collect();
        let p = &checked.model.profile;
        CellRecord::Checked {
            applicable: true,
            config,
            profile: ProfileRecord { name: &p.name, origin: &p.origin },
            results,
            stats: StatsRecord::of(checked.stats),
            worst_effects: checked.worst.effects,
            worst_trace: checked.files.get(TraceKind::WorstCase),
        }
    }
}

/// The cells of a matrix, as `matrix --format json` prints them.
#[derive(Serialize)]
pub struct MatrixRecord<'a> {
    /// One record per cell, in the matrix's order.
    pub cells: Vec<CellRecord<'a>>,
}

impl<'a> MatrixRecord<'a> {
    /// The record of `cells`.
    pub fn of(cells: &'a [Cell]) -> Self {
        MatrixRecord { cells: cells.iter().map(CellRecord::of).collect() }
    }
}

/// One cell that changes, before and after (`null` where the matrix has no such cell).
#[derive(Serialize)]
pub struct ChangeRecord<'a> {
    /// Under the second profile.
    pub after: Option<CellRecord<'a>>,
    /// Under the first profile.
    pub before: Option<CellRecord<'a>>,
}

/// The cells that change between two profiles, as `diff --format json` prints them.
#[derive(Serialize)]
pub struct DiffRecord<'a> {
    /// The first profile's name.
    pub a: &'a str,
    /// The second profile's name.
    pub b: &'a str,
    /// The cells that change.
    pub changed: Vec<ChangeRecord<'a>>,
}

impl<'a> DiffRecord<'a> {
    /// The record of `diff`.
    pub fn of(diff: &Diff<'a>) -> Self {
        let changed = diff
            .changes
            .iter()
            .map(|c| ChangeRecord { after: c.after.map(CellRecord::of), before: c.before.map(CellRecord::of) })
            .collect();
        DiffRecord { a: diff.a, b: diff.b, changed }
    }
}
