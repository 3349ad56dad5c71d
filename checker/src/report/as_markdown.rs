//! The Markdown format, for an issue or a pull request: the checker's reports and the client
//! probe's (a replay, a server probe, a confirmation run and a benchmark have none).

use crate::report::diff::{diff_text, DiffStyle};
use crate::report::markdown::check_markdown;
use crate::report::probe_client;
use crate::report::render::{Kind, Renderer, Report};
use crate::report::table::{matrix_table, records_table};
use anyhow::{anyhow, Result};

/// Markdown, with Mermaid sequence diagrams where a report has a trace.
pub struct AsMarkdown;

impl Renderer for AsMarkdown {
    fn supports(&self, kind: Kind) -> bool {
        match kind {
            Kind::Check | Kind::Matrix | Kind::Merge | Kind::Diff | Kind::ProbeClient => true,
            Kind::Replay | Kind::Probe | Kind::Confirm | Kind::Bench => false,
        }
    }

    fn render(&self, report: &Report<'_>) -> Result<String> {
        Ok(match report {
            Report::Cell { cell, conformant } => check_markdown(cell, *conformant),
            Report::ProfileMatrix { cells, .. } | Report::Matrix { cells, .. } => matrix_table(cells, true),
            Report::Merged(record) => records_table(&record.cells, true),
            Report::Diff { diff, bounds, no_traces } => {
                diff_text(diff, bounds, DiffStyle { markdown: true, colour: false, no_traces: *no_traces })
            }
            Report::ProbeClient(r) => probe_client::to_markdown(r),
            other => return Err(anyhow!("no Markdown for {:?}", other.kind())),
        })
    }
}
