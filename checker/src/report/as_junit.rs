//! The JUnit XML format, for a CI system's test report: `probe`, `confirm` and `probe-client`
//! (`report/ci.rs` decides each case's outcome), written by the `quick-junit` crate. One
//! `<testsuite>` per run, one `<testcase>` per check; a failure is `<failure message=…>`, a
//! check that could not be tested is `<skipped message=…>`, and the evidence a check left is
//! named in its `<system-out>` as `[[ATTACHMENT|path]]` lines, which GitLab and Jenkins show as
//! the case's attachments.

use crate::report::ci::{suite, CiOutcome, CiSuite};
use crate::report::render::{Kind, Renderer, Report};
use anyhow::{anyhow, Result};
use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};

/// JUnit XML.
pub struct AsJunit;

impl Renderer for AsJunit {
    fn supports(&self, kind: Kind) -> bool {
        match kind {
            Kind::Probe | Kind::Confirm | Kind::ProbeClient => true,
            Kind::Check | Kind::Matrix | Kind::Merge | Kind::Diff | Kind::Replay | Kind::Bench => false,
        }
    }

    fn render(&self, report: &Report<'_>) -> Result<String> {
        let cases = suite(report).ok_or_else(|| anyhow!("no JUnit XML for {:?}", report.kind()))?;
        let mut xml = junit(&cases).to_string()?;
        if !xml.ends_with('\n') {
            xml.push('\n');
        }
        Ok(xml)
    }
}

/// The JUnit report of one run's cases.
pub fn junit(cases: &CiSuite) -> quick_junit::Report {
    let mut suite = TestSuite::new(cases.name);
    for c in &cases.cases {
        let status = match &c.outcome {
            CiOutcome::Passed => TestCaseStatus::success(),
            CiOutcome::Failed(why) => {
                let mut s = TestCaseStatus::non_success(NonSuccessKind::Failure);
                s.set_message(why.as_str());
                s
            }
            CiOutcome::Skipped(why) => {
                let mut s = TestCaseStatus::skipped();
                s.set_message(why.as_str());
                s
            }
        };
        let mut case = TestCase::new(c.name.as_str(), status);
        case.set_classname(c.group.as_str());
        let mut out: Vec<String> = c.notes.clone();
        out.extend(c.evidence.iter().map(|p| format!("[[ATTACHMENT|{}]]", p.display())));
        if !out.is_empty() {
            case.set_system_out(out.join("\n") + "\n");
        }
        suite.add_test_case(case);
    }
    let mut report = quick_junit::Report::new(cases.name);
    report.add_test_suite(suite);
    report
}
