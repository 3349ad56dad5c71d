//! What a renderer is given: a command's [`Report`] as typed data, of one [`Kind`] per
//! command, and the [`Renderer`] trait every format implements (see `format.rs`).

use crate::cells::Cell;
use crate::compare::Diff;
use crate::confirm::Confirmation;
use crate::conformant::Conformant;
use crate::key_effect::KeyEffect;
use crate::report::bench::BenchReport;
use crate::report::json::MatrixRecord;
use crate::report::probe_client::ProbeClientReport;
use anyhow::Result;
use mcp_once_conformance::probe::baseline::BaselineResult;
use mcp_once_conformance::probe::checks::CheckRecord;
use mcp_once_conformance::replay::ReplayResult;
use mcp_once_model::PropertyKind;
use std::path::Path;

/// What a command prints, one kind per command (a `--format` offers the formats of its kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `check`: one cell, or the matrix of a profile.
    Check,
    /// `matrix`.
    Matrix,
    /// `merge`.
    Merge,
    /// `diff`.
    Diff,
    /// `replay`.
    Replay,
    /// `probe`.
    Probe,
    /// `probe-client`.
    ProbeClient,
    /// `confirm`.
    Confirm,
    /// `bench`.
    Bench,
}

/// A report, as typed data, borrowed from the command that made it.
pub enum Report<'a> {
    /// One checked cell, with the conformant servers' results where its server breaks a MUST.
    Cell {
        /// The cell.
        cell: &'a Cell,
        /// The conformant variants, if checked.
        conformant: Option<&'a Conformant>,
    },
    /// `check` of a whole profile: its matrix, with the properties asked and the time taken.
    ProfileMatrix {
        /// The cells.
        cells: &'a [Cell],
        /// The properties checked.
        properties: &'a [PropertyKind],
        /// Wall time of the run.
        seconds: f64,
    },
    /// `matrix`: the cells and their record (with the shard, if one).
    Matrix {
        /// The cells.
        cells: &'a [Cell],
        /// Their record.
        record: &'a MatrixRecord<'a>,
    },
    /// `merge`: the shards' records joined.
    Merged(&'a MatrixRecord<'a>),
    /// `diff` of two profiles.
    Diff {
        /// The diff.
        diff: &'a Diff<'a>,
        /// What the second profile's key does against the same behaviours without it.
        keys: &'a KeyEffect<'a>,
        /// The bounds its cells were checked at, in words.
        bounds: &'a str,
        /// Leave the counterexample traces out.
        no_traces: bool,
        /// Show the shortest trace of each key-bearing cell the key leaves violated.
        still_violated_traces: bool,
    },
    /// One replay.
    Replay(&'a ReplayResult),
    /// The probe's checks, judged against an expected-failures file when one was given.
    Probe {
        /// The checks.
        checks: &'a [CheckRecord],
        /// The judgement against the baseline.
        baseline: Option<&'a BaselineResult>,
        /// The `--evidence` folder, if one was given.
        evidence: Option<&'a Path>,
    },
    /// `probe-client`.
    ProbeClient(&'a ProbeClientReport),
    /// `confirm`: every replay, and the folder holding their evidence.
    Confirm {
        /// The replays.
        results: &'a [Confirmation],
        /// The evidence folder.
        evidence: &'a Path,
        /// The cells whose traces were replayed, as checked.
        cells: &'a [Cell],
    },
    /// `bench`.
    Bench(&'a BenchReport),
}

impl Report<'_> {
    /// The kind of output this is.
    pub fn kind(&self) -> Kind {
        match self {
            Report::Cell { .. } | Report::ProfileMatrix { .. } => Kind::Check,
            Report::Matrix { .. } => Kind::Matrix,
            Report::Merged(_) => Kind::Merge,
            Report::Diff { .. } => Kind::Diff,
            Report::Replay(_) => Kind::Replay,
            Report::Probe { .. } => Kind::Probe,
            Report::ProbeClient(_) => Kind::ProbeClient,
            Report::Confirm { .. } => Kind::Confirm,
            Report::Bench(_) => Kind::Bench,
        }
    }
}

/// One output format.
pub trait Renderer: Sync {
    /// Whether this format renders reports of `kind`.
    fn supports(&self, kind: Kind) -> bool;
    /// The report, as printed (ending in a newline); called only for a kind it supports.
    fn render(&self, report: &Report<'_>) -> Result<String>;
}
