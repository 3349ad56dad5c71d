//! Check records shaped like the official MCP conformance suite's checks (`id`, `name`,
//! `description`, `status`, `timestamp`, `specReferences`, `details`, `errorMessage`), so that
//! the probe's results can sit beside its `checks.json`, and their text and JSON forms.

use serde::Serialize;
use serde_json::Value;

/// A check's status, as the conformance suite spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Status {
    /// The server behaved as required.
    #[serde(rename = "SUCCESS")]
    Success,
    /// It did not.
    #[serde(rename = "FAILURE")]
    Failure,
    /// A SHOULD of the spec not met (the server stayed correct, less helpfully).
    #[serde(rename = "WARNING")]
    Warning,
    /// The runner could not establish an outcome: reported as the conformance suite reports a
    /// check that cannot be exercised, a FAILURE whose message starts "Not testable:", with
    /// `details.untestable`; never a pass, and it sets the exit code to 2, not 1.
    #[serde(rename = "FAILURE")]
    Untestable,
}

impl Status {
    /// The status as the text output spells it (untestable ones apart from failures).
    pub fn label(self) -> &'static str {
        match self {
            Status::Success => "SUCCESS",
            Status::Failure => "FAILURE",
            Status::Warning => "WARNING",
            Status::Untestable => "UNTESTED",
        }
    }
}

/// A spec clause a check rests on.
#[derive(Clone, Debug, Serialize)]
pub struct SpecReference {
    /// Revision, file and section.
    pub id: String,
    /// Where to read it.
    pub url: String,
}

/// One check result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckRecord {
    /// Stable id (`mcp-once-retry-after-timeout`, `sep-3182-completed-key-replay`, …).
    pub id: String,
    /// Short name.
    pub name: String,
    /// What is checked.
    pub description: String,
    /// Outcome.
    pub status: Status,
    /// When it finished (RFC 3339).
    pub timestamp: String,
    /// The clauses it rests on.
    pub spec_references: Vec<SpecReference>,
    /// Verdicts, counts, evidence paths.
    pub details: Value,
    /// Why it failed or could not be tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

/// RFC 3339 in UTC with milliseconds, as the conformance suite writes its timestamps.
const TIMESTAMP: &[time::format_description::BorrowedFormatItem<'static>] =
    time::macros::format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// `t` in that form.
pub fn rfc3339(t: time::OffsetDateTime) -> String {
    t.to_offset(time::UtcOffset::UTC).format(TIMESTAMP).expect("a UTC date formats")
}

/// Now, in that form.
pub fn now_rfc3339() -> String {
    rfc3339(time::OffsetDateTime::now_utc())
}

/// Where to read a citation: the spec site for spec pages, the repository otherwise.
pub fn reference(c: &mcp_once_model::Citation) -> SpecReference {
    let url = match c.path.strip_prefix("docs/specification/") {
        Some(rest) => format!(
            "https://modelcontextprotocol.io/specification/{}",
            rest.trim_end_matches(".mdx").trim_end_matches("/index")
        ),
        None => format!("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/{}", c.path),
    };
    SpecReference { id: format!("{} {} § {}", c.revision, c.path, c.section), url }
}

/// The probe's exit code: 1 if a check failed, 2 if none failed and one could not be tested,
/// 0 otherwise (warnings, unmet SHOULDs, do not fail a run).
pub fn exit_code(checks: &[CheckRecord]) -> u8 {
    if checks.iter().any(|c| c.status == Status::Failure) {
        1
    } else if checks.iter().any(|c| c.status == Status::Untestable) {
        2
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
        let at = time::OffsetDateTime::from_unix_timestamp_nanos(1_796_060_023_045_678_901).unwrap();
        assert_eq!(rfc3339(at), "2026-11-30T17:33:43.045Z");
        let leap_day = time::OffsetDateTime::from_unix_timestamp(951_782_400).unwrap();
        assert_eq!(rfc3339(leap_day), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn citations_become_spec_urls() {
        let c = mcp_once_model::Citation {
            revision: "2025-11-25".into(),
            path: "docs/specification/2025-11-25/basic/lifecycle.mdx".into(),
            section: "Timeouts".into(),
            quote: String::new(),
            note: None,
            normative: true,
        };
        assert_eq!(reference(&c).url, "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle");
    }
}
