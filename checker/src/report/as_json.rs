//! The JSON format: every report as one pretty-printed JSON document.

use crate::report::confirm::ConfirmRecord;
use crate::report::json::{CellRecord, DiffRecord, MatrixRecord};
use crate::report::probe::probe_json;
use crate::report::probe_client;
use crate::report::render::{Kind, Renderer, Report};
use anyhow::Result;
use serde::Serialize;

/// One JSON document per report.
pub struct AsJson;

fn pretty(value: &impl Serialize) -> Result<String> {
    Ok(serde_json::to_string_pretty(value)? + "\n")
}

impl Renderer for AsJson {
    fn supports(&self, _: Kind) -> bool {
        true
    }

    fn render(&self, report: &Report<'_>) -> Result<String> {
        match report {
            Report::Cell { cell, conformant } => pretty(&CellRecord::of(cell).with_conformant(*conformant)),
            Report::ProfileMatrix { cells, .. } => pretty(&MatrixRecord::of(cells)),
            Report::Matrix { record, .. } | Report::Merged(record) => pretty(record),
            Report::Diff { diff, keys, bounds, .. } => pretty(&DiffRecord::of(diff, keys, bounds)),
            Report::Replay(result) => pretty(&result.to_json()),
            Report::Probe { checks, baseline, .. } => pretty(&probe_json(checks, *baseline)),
            Report::ProbeClient(r) => pretty(&probe_client::to_json(r)),
            Report::Confirm { results, .. } => pretty(&ConfirmRecord::of(results.to_vec())),
            Report::Bench(r) => pretty(r),
        }
    }
}
