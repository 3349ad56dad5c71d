//! JUnit XML as a CI system reads it: parsed by the `junit-parser` crate (not mcp-once's own
//! code), then held to what any reader relies on: one `<testsuite>` of the command's name, its
//! `tests`, `failures`, `errors` and `skipped` attributes equal to the test cases it holds of
//! each kind, and the counts a test expects.

// Each test binary that includes this module uses a part of it.
#![allow(dead_code)]

use junit_parser::{TestCase, TestSuite};

/// The counts a run's report must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Test cases.
    pub tests: u64,
    /// Failed ones.
    pub failures: u64,
    /// Skipped ones.
    pub skipped: u64,
}

/// The one test suite of `xml`, named `name`, checked against `want`; an error says what is
/// wrong (not XML, no such suite, counts that disagree).
pub fn validate(xml: &str, name: &str, want: Counts) -> Result<TestSuite, String> {
    let parsed =
        junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).map_err(|e| format!("not JUnit XML: {e}"))?;
    let [suite] = parsed.suites.as_slice() else {
        return Err(format!("{} test suites, not one", parsed.suites.len()));
    };
    if suite.name != name {
        return Err(format!("the suite is `{}`, not `{name}`", suite.name));
    }
    let of = |pick: fn(&TestCase) -> bool| suite.cases.iter().filter(|c| pick(c)).count() as u64;
    let held = Counts {
        tests: suite.cases.len() as u64,
        failures: of(|c| c.status.is_failure()),
        skipped: of(|c| c.status.is_skipped()),
    };
    let declared = Counts { tests: suite.tests, failures: suite.failures, skipped: suite.skipped };
    if declared != held {
        return Err(format!("the suite declares {declared:?} but holds {held:?}"));
    }
    if suite.errors != 0 || of(|c| c.status.is_error()) != 0 {
        return Err("errors reported: mcp-once reports failures and skips only".into());
    }
    if parsed.tests != held.tests || parsed.failures != held.failures || parsed.skipped != held.skipped {
        return Err(format!(
            "<testsuites> declares {} tests, {} failures, {} skipped; its suite holds {held:?}",
            parsed.tests, parsed.failures, parsed.skipped
        ));
    }
    if held != want {
        return Err(format!("expected {want:?}, the report holds {held:?}"));
    }
    Ok(suite.clone())
}

/// The `[[ATTACHMENT|path]]` paths a test case's `<system-out>` names.
pub fn attachments(case: &TestCase) -> Vec<String> {
    let out = case.system_out.as_deref().unwrap_or("");
    out.lines().filter_map(|l| l.strip_prefix("[[ATTACHMENT|")?.strip_suffix("]]")).map(String::from).collect()
}

/// A failure's or skip's `message`, or None for a pass.
pub fn message(case: &TestCase) -> Option<&str> {
    if case.status.is_failure() {
        Some(case.status.failure_as_ref().message.as_str())
    } else if case.status.is_skipped() {
        Some(case.status.skipped_as_ref().message.as_str())
    } else {
        None
    }
}
