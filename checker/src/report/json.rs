//! The JSON a pipeline reads, as serde types built from the typed results.
//!
//! Shapes (stable; see README "JSON output"): `check` prints one object with `config`,
//! `results` (one entry per property: `property`, `verdict`, `states`, `seconds`, and for a
//! violation `trace` with `steps`, `effects`, `file`), `search` (and `stopped` at a budget),
//! `worst_effects`, `worst_search` and `worst_trace`, where the server breaks a MUST of the
//! profile `breaks` (the knobs), where it does what a SHOULD advises against `advised_against`
//! (the knobs) and, from `check`, `conformant` (per property, what the
//! conformant servers of its kind reach); `matrix` prints `{"cells": [...]}` of
//! such objects (and `shard` for one shard; `merge` reads these records back), a cell that
//! does not apply having `applicable: false` and a `reason`; `diff` prints
//! `{"a", "b", "changed": [{"before", "after"}]}`.
//!
//! Every object's fields are declared in alphabetical order: the output has always listed keys
//! that way (it was built as `serde_json::Value`, whose maps are sorted), and scripts compare it
//! byte for byte.

use crate::cells::Cell;
use crate::compare::{ChangeKind, Diff};
use crate::conformant::{Conformant, ConformantAnswer};
use crate::key_effect::{KeyEffect, KeyOutcome};
use mcp_once_model::conformance;
use mcp_once_model::search::Stats;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{
    Annotation, Cancellation, ClientPolicy, Config, End, HandlerKind, KeyLifetime, KeyScope, PropertyKind, Resumption,
    ServerImpl, StoreScope, TaskRecords, Tasks, Transport, Verdict, WorstSearch,
};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

/// A configuration, every parameter at the top level.
#[derive(Serialize, Deserialize)]
pub struct ConfigRecord<'a> {
    /// The tool's annotation where it is not `none` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotation: Option<Annotation>,
    /// Logical calls.
    pub calls: u8,
    /// Callers sharing the server, where there are more than one (absent: one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callers: Option<u8>,
    /// Cancellation handling, where `--cancel` overrides the server preset's (absent: the
    /// preset's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancel: Option<Cancellation>,
    /// Client policy.
    pub client: ClientPolicy,
    /// Server crashes.
    pub crashes: u8,
    /// The tool's handler where it is not `effect-only` (absent: effect-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handler: Option<HandlerKind>,
    /// Server instances where there are more than one (absent: one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instances: Option<u8>,
    /// Idempotency key lifetime.
    pub key: KeyLifetime,
    /// The scope of the key records, where `--key-scope` sets one other than the profile's
    /// (absent: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_scope: Option<KeyScope>,
    /// Profile name or path.
    #[serde(borrow)]
    pub profile: Cow<'a, str>,
    /// Whether broken response streams are resumed, where they are (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resumption: Option<Resumption>,
    /// Retries per call.
    pub retries: u8,
    /// The handler's input rounds, where it asks for input (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<u8>,
    /// Server implementation.
    pub server: ServerImpl,
    /// Times the server ends the client's HTTP session, where it does (absent: 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_terminations: Option<u8>,
    /// Where the instances keep their store, where `--store` overrides the preset's (absent:
    /// the preset's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreScope>,
    /// Where a task's record is kept, under task-augmented calls, where not durable (absent:
    /// durable).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_records: Option<TaskRecords>,
    /// Whether `tools/call` is task-augmented, where it is (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<Tasks>,
    /// Transport.
    pub transport: Transport,
}

impl<'a> ConfigRecord<'a> {
    /// The record of `c`.
    pub fn of(c: &'a Config) -> Self {
        ConfigRecord {
            annotation: Some(c.annotation).filter(|a| *a != Annotation::None),
            calls: c.bounds.calls,
            callers: Some(c.callers).filter(|n| *n != 1),
            cancel: c.cancel,
            client: c.client,
            crashes: c.bounds.crashes,
            handler: Some(c.handler.kind).filter(|k| *k != HandlerKind::EffectOnly),
            instances: Some(c.deployment.instances).filter(|n| *n != 1),
            key: c.key,
            key_scope: c.key_scope,
            profile: Cow::Borrowed(&c.profile),
            resumption: Some(c.resumption).filter(|r| *r != Resumption::None),
            retries: c.bounds.retries,
            rounds: Some(c.handler.rounds).filter(|r| *r != 0),
            server: c.server,
            session_terminations: Some(c.session_terminations).filter(|n| *n != 0),
            store: c.deployment.store,
            task_records: Some(c.task_records).filter(|r| *r != TaskRecords::Durable),
            tasks: Some(c.tasks).filter(|t| *t != Tasks::None),
            transport: c.transport,
        }
    }
}

/// The profile a cell was checked under.
#[derive(Serialize, Deserialize)]
pub struct ProfileRecord<'a> {
    /// Its name.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Where it was loaded from (`builtin:NAME` or a path).
    #[serde(borrow)]
    pub origin: Cow<'a, str>,
}

/// A shortest counterexample: its length, its end, and the file it was written to.
#[derive(Serialize, Deserialize)]
pub struct TraceRecord<'a> {
    /// Side effects for one logical call at its end.
    pub effects: u8,
    /// The trace file, if traces were written (`null` otherwise).
    #[serde(borrow)]
    pub file: Option<Cow<'a, Path>>,
    /// Steps.
    pub steps: usize,
}

/// One property's result in a cell.
#[derive(Serialize, Deserialize)]
pub struct ResultRecord<'a> {
    /// The property.
    pub property: PropertyKind,
    /// Wall time of the search.
    pub seconds: f64,
    /// Unique states explored.
    pub states: usize,
    /// The counterexample, when violated (absent when the property holds).
    #[serde(skip_serializing_if = "Option::is_none", borrow)]
    pub trace: Option<TraceRecord<'a>>,
    /// Holds or violated.
    pub verdict: Verdict,
}

/// The counts of a cell's search.
#[derive(Serialize, Deserialize)]
pub struct StatsRecord {
    /// Largest depth reached.
    pub depth: usize,
    /// States generated, repeats included.
    pub generated: usize,
    /// Wall time.
    pub seconds: f64,
    /// Unique states explored.
    pub states: usize,
    /// Bits of the fingerprints the states were remembered by.
    #[serde(default)]
    pub fingerprint_bits: u32,
    /// Past a million states: the estimated chance that two states shared a fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collision_probability: Option<f64>,
}

impl StatsRecord {
    /// The record of `s`.
    pub fn of(s: Stats) -> Self {
        StatsRecord {
            depth: s.depth,
            generated: s.generated,
            seconds: s.seconds,
            states: s.states,
            fingerprint_bits: s.fingerprint_bits,
            collision_probability: s.collision_probability(),
        }
    }
}

/// How a cell's search ended.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SearchEnd {
    /// Every reachable state was explored.
    Exhaustive,
    /// It stopped at the last shortest counterexample asked for (the worst case not asked).
    Answered,
    /// It stopped at its budget (see `stopped`).
    Stopped,
}

/// Why a search stopped at its budget.
#[derive(Serialize, Deserialize)]
pub struct StopRecord {
    /// Every state within this many steps was checked.
    pub depth_completed: usize,
    /// The one-line reason (which budget, its figures).
    pub reason: String,
}

/// One cell as `check --format json` prints it.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub enum CellRecord<'a> {
    /// A cell that was checked.
    Checked {
        /// The knobs whose SHOULD the cell's server does not follow, by what it is (absent: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        advised_against: Vec<String>,
        /// Always `true`.
        applicable: bool,
        /// The knobs whose MUST the cell's server breaks by what it is (absent: none).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        breaks: Vec<String>,
        /// The configuration.
        #[serde(borrow)]
        config: ConfigRecord<'a>,
        /// Where the server breaks a MUST and a property is violated (`check` of one cell): what
        /// the conformant servers of its kind say of each property (absent otherwise).
        #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
        conformant: Option<Vec<ConformantRecord<'a>>>,
        /// Its profile.
        #[serde(borrow)]
        profile: ProfileRecord<'a>,
        /// One result per property asked for.
        #[serde(borrow)]
        results: Vec<ResultRecord<'a>>,
        /// How the search ended.
        search: SearchEnd,
        /// The search's counts.
        stats: Box<StatsRecord>,
        /// Why it stopped, when it reached its budget (absent otherwise).
        #[serde(skip_serializing_if = "Option::is_none")]
        stopped: Option<StopRecord>,
        /// The worst case: side effects for one logical call (a lower bound unless
        /// `worst_search` is `exhaustive`).
        worst_effects: u8,
        /// How far the worst case was searched: exhaustive, not-searched or partial.
        worst_search: WorstSearch,
        /// The worst case's trace file, if written.
        #[serde(borrow)]
        worst_trace: Option<Cow<'a, Path>>,
    },
    /// A cell whose configuration does not apply under its profile.
    NotApplicable {
        /// Always `false`.
        applicable: bool,
        /// The configuration.
        #[serde(borrow)]
        config: ConfigRecord<'a>,
        /// Which kind of reason: out-of-range, outside-profile, meaningless or not-modelled
        /// (a combination the model does not represent: a gap in its coverage).
        #[serde(borrow)]
        why: Cow<'a, str>,
        /// Why it does not apply, in words.
        #[serde(borrow)]
        reason: Cow<'a, str>,
    },
}

impl<'a> CellRecord<'a> {
    /// The record of `cell`.
    pub fn of(cell: &'a Cell) -> Self {
        let config = ConfigRecord::of(&cell.config);
        let checked = match &cell.outcome {
            Err(reason) => {
                let (why, reason) = (Cow::Borrowed(reason.kind()), Cow::Owned(reason.to_string()));
                return CellRecord::NotApplicable { applicable: false, config, why, reason };
            }
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
                    file: checked.files.get(TraceKind::Counterexample(r.property)).map(Cow::Borrowed),
                    steps: cex.len(),
                }),
                verdict: r.verdict,
            })
            .collect();
        let p = &checked.model.profile;
        let (search, stopped) = match checked.end {
            End::Exhaustive => (SearchEnd::Exhaustive, None),
            End::Answered => (SearchEnd::Answered, None),
            End::Stopped { why, depth_completed } => {
                (SearchEnd::Stopped, Some(StopRecord { depth_completed, reason: why.to_string() }))
            }
        };
        let all = conformance::cell_breaches(&checked.model.config, p);
        let knobs = |binds: bool| all.iter().filter(|b| b.binds() == binds).map(|b| b.knob.to_string()).collect();
        let (breaks, advised_against) = (knobs(true), knobs(false));
        CellRecord::Checked {
            advised_against,
            applicable: true,
            breaks,
            config,
            conformant: None,
            profile: ProfileRecord { name: Cow::Borrowed(&p.name), origin: Cow::Borrowed(&p.origin) },
            results,
            search,
            stats: Box::new(StatsRecord::of(checked.stats)),
            stopped,
            worst_effects: checked.worst.effects,
            worst_search: checked.worst.search,
            worst_trace: checked.files.get(TraceKind::WorstCase).map(Cow::Borrowed),
        }
    }
}

impl<'a> CellRecord<'a> {
    /// The record with the conformant servers' answers, where they were checked.
    pub fn with_conformant(mut self, k: Option<&'a Conformant>) -> Self {
        if let (CellRecord::Checked { conformant, results, .. }, Some(k)) = (&mut self, k) {
            *conformant = Some(results.iter().map(|r| ConformantRecord::of(k, r.property)).collect());
        }
        self
    }
}

/// What the conformant servers of a cell's kind say of one property: `violated` with the
/// shortest such counterexample and its server, `holds` where none reaches the violation, or
/// `unknown` where a search stopped at its budget first.
#[derive(Serialize, Deserialize)]
pub struct ConformantRecord<'a> {
    /// The conformant server whose counterexample is the shortest (absent unless violated).
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub config: Option<ConfigRecord<'a>>,
    /// The property.
    pub property: PropertyKind,
    /// The shortest conformant counterexample (absent unless violated).
    #[serde(default, skip_serializing_if = "Option::is_none", borrow)]
    pub trace: Option<TraceRecord<'a>>,
    /// Whether a conformant server reaches the violation.
    pub verdict: Verdict,
}

impl<'a> ConformantRecord<'a> {
    /// The record of what `k` says of `p`.
    fn of(k: &'a Conformant, p: PropertyKind) -> Self {
        let (config, trace, verdict) = match k.answer(p) {
            ConformantAnswer::Reached(v, cex) => (
                Some(ConfigRecord::of(&v.model.config)),
                Some(TraceRecord {
                    effects: cex.effects(),
                    file: v.files.get(TraceKind::Counterexample(p)).map(Cow::Borrowed),
                    steps: cex.len(),
                }),
                Verdict::Violated,
            ),
            ConformantAnswer::NotReached => (None, None, Verdict::Holds),
            ConformantAnswer::Unknown => (None, None, Verdict::Unknown),
        };
        ConformantRecord { config, property: p, trace, verdict }
    }
}

/// The cells of a matrix, as `matrix --format json` prints them.
#[derive(Serialize, Deserialize)]
pub struct MatrixRecord<'a> {
    /// One record per cell, in the matrix's order.
    #[serde(borrow)]
    pub cells: Vec<CellRecord<'a>>,
    /// Which shard of the matrix these cells are (absent for a whole matrix).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRecord>,
}

/// A shard of a matrix: the cells whose index (from 0, in the matrix's order) modulo `count`
/// is `index - 1`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// Cells of the whole matrix.
    pub cells: usize,
    /// How many shards the matrix was split into (N of `--shard K/N`).
    pub count: usize,
    /// This shard's number, from 1 (K of `--shard K/N`).
    pub index: usize,
    /// The profiles of the whole matrix, in order.
    pub profiles: Vec<String>,
}

impl<'a> MatrixRecord<'a> {
    /// The record of `cells`, a whole matrix.
    pub fn of(cells: &'a [Cell]) -> Self {
        MatrixRecord { cells: cells.iter().map(CellRecord::of).collect(), shard: None }
    }
}

/// One cell that changes, before and after (`null` where the matrix has no such cell).
#[derive(Serialize)]
pub struct ChangeRecord<'a> {
    /// Under the second profile.
    pub after: Option<CellRecord<'a>>,
    /// Under the first profile.
    pub before: Option<CellRecord<'a>>,
    /// What the change comes to: fixed, regressed, no-longer-applicable, newly-applicable or
    /// other.
    pub kind: ChangeKind,
}

/// The cells that change between two profiles, as `diff --format json` prints them.
#[derive(Serialize)]
pub struct DiffRecord<'a> {
    /// The first profile's name.
    pub a: &'a str,
    /// The second profile's name.
    pub b: &'a str,
    /// The bounds the cells were checked at, in words.
    pub bounds: &'a str,
    /// How many cells the two matrices have between them.
    pub cells: usize,
    /// How many changes of each kind (kinds with none left out): the bottom line.
    pub summary: BTreeMap<ChangeKind, usize>,
    /// The cells that change.
    pub changed: Vec<ChangeRecord<'a>>,
    /// How many cells do not change.
    pub unchanged: usize,
    /// How many of those violate some property under both profiles.
    pub unchanged_violated: usize,
    /// What the second profile's key does: its key-bearing cells against their keyless
    /// baselines (the same client and server under the first profile without a key).
    pub keys: KeysRecord,
}

/// What a key does, as `diff --format json` prints it.
#[derive(Serialize)]
pub struct KeysRecord {
    /// How many cells of the second profile send a key (and have a keyless baseline run).
    pub cells: usize,
    /// Per property, how many pairs come to each outcome (fixed, still-violated, regressed,
    /// held-already, undecided, no-baseline; outcomes with none left out), among the pairs
    /// whose cell checks it; a property none checks is left out.
    pub per_property: BTreeMap<PropertyKind, BTreeMap<KeyOutcome, usize>>,
    /// Per property some cell checks, the cells (by name) the key leaves violated.
    pub still_violated: BTreeMap<PropertyKind, Vec<String>>,
}

impl KeysRecord {
    /// The record of `keys`.
    pub fn of(keys: &KeyEffect) -> KeysRecord {
        // A property no key-bearing cell checks (no-foreign-replay with one caller) has no entry.
        let per_property =
            PropertyKind::ALL.iter().map(|p| (*p, keys.counts(*p))).filter(|(_, counts)| !counts.is_empty()).collect();
        let still_violated = PropertyKind::ALL
            .iter()
            .filter(|p| !keys.counts(**p).is_empty())
            .map(|p| (*p, keys.still_violated(*p).iter().map(|pair| pair.name()).collect()))
            .collect();
        KeysRecord { cells: keys.pairs.len(), per_property, still_violated }
    }
}

impl<'a> DiffRecord<'a> {
    /// The record of `diff` and its `keys`, checked at `bounds`.
    pub fn of(diff: &Diff<'a>, keys: &KeyEffect, bounds: &'a str) -> Self {
        let changed = diff
            .changes
            .iter()
            .map(|c| ChangeRecord {
                after: c.after.map(CellRecord::of),
                before: c.before.map(CellRecord::of),
                kind: c.kind(),
            })
            .collect();
        let summary = diff.counts().into_iter().collect();
        DiffRecord {
            a: diff.a,
            b: diff.b,
            bounds,
            cells: diff.cells,
            summary,
            changed,
            unchanged: diff.unchanged.0,
            unchanged_violated: diff.unchanged.1,
            keys: KeysRecord::of(keys),
        }
    }
}
