//! The text format: every report as a terminal shows it.

use crate::report::bench::bench_text;
use crate::report::confirm::confirm_text;
use crate::report::diff::{diff_text, DiffStyle};
use crate::report::probe::probe_text;
use crate::report::probe_client;
use crate::report::render::{Kind, Renderer, Report};
use crate::report::replay_result::replay_text;
use crate::report::table::{matrix_summary, matrix_table, records_table};
use crate::report::text::{check_text, colour};
use anyhow::Result;

/// Text for a terminal (coloured when stdout is one).
pub struct AsText;

impl Renderer for AsText {
    fn supports(&self, _: Kind) -> bool {
        true
    }

    fn render(&self, report: &Report<'_>) -> Result<String> {
        Ok(match report {
            Report::Cell { cell, conformant } => check_text(cell, *conformant, colour()),
            Report::ProfileMatrix { cells, properties, seconds } => matrix_summary(cells, properties, *seconds),
            Report::Matrix { cells, .. } => matrix_table(cells, false),
            Report::Merged(record) => records_table(&record.cells, false),
            Report::Diff { diff, keys, bounds, no_traces, still_violated_traces } => {
                let style = DiffStyle {
                    markdown: false,
                    colour: colour(),
                    no_traces: *no_traces,
                    still_violated_traces: *still_violated_traces,
                };
                diff_text(diff, keys, bounds, style)
            }
            Report::Replay(result) => replay_text(result),
            Report::Probe { checks, baseline, .. } => probe_text(checks, *baseline),
            Report::ProbeClient(r) => probe_client::to_text(r),
            Report::Confirm { results, evidence, .. } => confirm_text(results, evidence),
            Report::Bench(r) => bench_text(r),
        })
    }
}
