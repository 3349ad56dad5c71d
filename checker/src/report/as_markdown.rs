//! The Markdown format, for an issue or a pull request: the checker's reports and the client
//! probe's (a replay, a server probe, a confirmation run and a benchmark have none).

use crate::report::diff::{diff_text, DiffStyle};
use crate::report::issue::GITHUB_LIMIT;
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
            Report::Diff { diff, keys, bounds, no_traces, still_violated_traces } => {
                let style = DiffStyle {
                    markdown: true,
                    colour: false,
                    no_traces: *no_traces,
                    still_violated_traces: *still_violated_traces,
                };
                let text = diff_text(diff, keys, bounds, style);
                if text.len() > GITHUB_LIMIT && !*no_traces {
                    format!(
                        "> This diff is {} characters, past the {GITHUB_LIMIT} a GitHub comment takes: `--no-traces` leaves the counterexample traces out.\n\n{text}",
                        text.len()
                    )
                } else {
                    text
                }
            }
            Report::ProbeClient(r) => probe_client::to_markdown(r),
            other => return Err(anyhow!("no Markdown for {:?}", other.kind())),
        })
    }
}
