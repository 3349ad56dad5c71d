//! `--summary FILE`: a short Markdown summary of a `probe`, `confirm` or `probe-client` run,
//! appended to FILE as GitHub Actions job summaries are (`--summary "$GITHUB_STEP_SUMMARY"`):
//! the counts passed, failed and skipped, then a table of the failures and one of the checks
//! skipped, each with its reason. It reads the same cases as the JUnit format (`report/ci.rs`).

use crate::report::ci::{suite, CiOutcome, CiSuite};
use crate::report::render::Report;
use anyhow::{anyhow, Result};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

/// Text safe in one cell of a Markdown table: one line, pipes escaped.
fn cell(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|")
}

/// The summary's Markdown.
pub fn summary_markdown(cases: &CiSuite) -> String {
    let passed = cases.count(|o| *o == CiOutcome::Passed);
    let failed = cases.count(|o| matches!(o, CiOutcome::Failed(_)));
    let skipped = cases.count(|o| matches!(o, CiOutcome::Skipped(_)));
    let mark = if failed > 0 {
        "❌"
    } else if skipped > 0 {
        "⚠️"
    } else {
        "✅"
    };
    let mut s = format!(
        "### {mark} {}: {passed} passed, {failed} failed, {skipped} skipped (of {})\n\n",
        cases.name,
        cases.cases.len()
    );
    let table = |s: &mut String, title: &str, pick: fn(&CiOutcome) -> Option<&String>| {
        let rows: Vec<String> = cases
            .cases
            .iter()
            .filter_map(|c| pick(&c.outcome).map(|why| (c, why)))
            .map(|(c, why)| format!("| {} | `{}` | {} |\n", cell(&c.group), cell(&c.name), cell(why)))
            .collect();
        if !rows.is_empty() {
            let _ = write!(s, "**{title}**\n\n| group | check | reason |\n|---|---|---|\n{}\n", rows.concat());
        }
    };
    table(&mut s, "Failed", |o| match o {
        CiOutcome::Failed(why) => Some(why),
        _ => None,
    });
    table(&mut s, "Skipped (not tested, or an expected failure)", |o| match o {
        CiOutcome::Skipped(why) => Some(why),
        _ => None,
    });
    s
}

/// Append the summary of `report` to `path` (created if missing); an error names the file.
pub fn append(path: &Path, report: &Report<'_>) -> Result<()> {
    let Some(cases) = suite(report) else { return Err(anyhow!("--summary: not available for this command")) };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| anyhow!("--summary {}: {e}", path.display()))?;
    file.write_all(summary_markdown(&cases).as_bytes()).map_err(|e| anyhow!("--summary {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ci::CiCase;

    #[test]
    fn the_summary_counts_and_lists_failures_with_their_reasons() {
        let case = |name: &str, outcome| CiCase {
            group: "g".into(),
            name: name.into(),
            outcome,
            notes: Vec::new(),
            evidence: Vec::new(),
        };
        let cases = CiSuite {
            name: "mcp-once probe",
            cases: vec![
                case("a", CiOutcome::Passed),
                case("b", CiOutcome::Failed("ran | twice\nagain".into())),
                case("c", CiOutcome::Skipped("Not testable".into())),
            ],
        };
        let md = summary_markdown(&cases);
        assert!(md.starts_with("### ❌ mcp-once probe: 1 passed, 1 failed, 1 skipped (of 3)\n"), "{md}");
        assert!(md.contains("| g | `b` | ran \\| twice again |\n"), "{md}");
        assert!(md.contains("| g | `c` | Not testable |\n"), "{md}");
    }
}
