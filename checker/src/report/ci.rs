//! The checks of `probe`, `confirm` and `probe-client` as a CI system counts them: one
//! [`CiCase`] per check (probe), per replay (confirm: cell × property × SDK) or per scenario
//! (probe-client), each passed, failed or skipped with its reason, and the evidence it left.
//! The JUnit format (`as_junit.rs`) and the job summary (`summary.rs`) both render these, so
//! the two always agree on what failed.
//!
//! What is never a pass: a check that could not be tested (untestable, inconclusive, diverged,
//! interrupted) is skipped with its reason. Against `--expected-failures`, a listed failure is
//! skipped as expected (as test runners report an expected failure) and a listed check that
//! now passes fails (a stale baseline), so the failures counted are the ones that set the exit
//! code.

use crate::confirm::Confirmation;
use crate::report::probe_client::ProbeClientReport;
use crate::report::render::Report;
use mcp_once_conformance::probe::baseline::BaselineResult;
use mcp_once_conformance::probe::checks::{CheckRecord, Status};
use mcp_once_conformance::replay::ReplayVerdict;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// What became of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CiOutcome {
    /// It passed.
    Passed,
    /// It failed, with the reason.
    Failed(String),
    /// It was not tested (or its failure is expected), with the reason.
    Skipped(String),
}

/// One check, as a CI test case.
#[derive(Clone, Debug)]
pub struct CiCase {
    /// The group it belongs to (JUnit's `classname`): the command, or confirm's cell.
    pub group: String,
    /// Its name (a check id, `PROPERTY on SDK`, a scenario's check id).
    pub name: String,
    /// What became of it.
    pub outcome: CiOutcome,
    /// Lines worth reading beside the outcome (a warning, what a passing check noted).
    pub notes: Vec<String>,
    /// The files and folders it left (evidence, records).
    pub evidence: Vec<PathBuf>,
}

/// The cases of one run, under the command's name.
#[derive(Clone, Debug)]
pub struct CiSuite {
    /// `mcp-once probe`, `mcp-once confirm`, `mcp-once probe-client`.
    pub name: &'static str,
    /// One per check.
    pub cases: Vec<CiCase>,
}

impl CiSuite {
    /// How many cases have an outcome like `pick`.
    pub fn count(&self, pick: fn(&CiOutcome) -> bool) -> usize {
        self.cases.iter().filter(|c| pick(&c.outcome)).count()
    }
}

/// The cases of `report`, for the kinds a CI runs (probe, confirm, probe-client).
pub fn suite(report: &Report<'_>) -> Option<CiSuite> {
    match report {
        Report::Probe { checks, baseline, evidence } => Some(CiSuite {
            name: "mcp-once probe",
            cases: checks.iter().map(|c| probe_case(c, *baseline, *evidence)).collect(),
        }),
        Report::Confirm { results, .. } => {
            let fitting = fitting_behaviours(results);
            Some(CiSuite {
                name: "mcp-once confirm",
                cases: results.iter().map(|r| confirm_case(r, &fitting)).collect(),
            })
        }
        Report::ProbeClient(r) => Some(CiSuite { name: "mcp-once probe-client", cases: client_cases(r) }),
        _ => None,
    }
}

/// A check's outcome by its status alone (no baseline).
fn by_status(c: &CheckRecord) -> (CiOutcome, Vec<String>) {
    let message = c.error_message.clone().unwrap_or_default();
    match c.status {
        Status::Success => (CiOutcome::Passed, Vec::new()),
        Status::Failure => (CiOutcome::Failed(message), Vec::new()),
        // An unmet SHOULD does not fail a run: a pass, with the warning beside it.
        Status::Warning => (CiOutcome::Passed, vec![format!("WARNING: {message}")]),
        Status::Untestable => (CiOutcome::Skipped(message), Vec::new()),
    }
}

/// A check's outcome judged against the expected failures, as the exit code judges it.
fn against(c: &CheckRecord, b: &BaselineResult) -> (CiOutcome, Vec<String>) {
    let listed = |ids: &[String]| ids.contains(&c.id);
    let message = c.error_message.clone().unwrap_or_default();
    if c.status == Status::Untestable {
        (CiOutcome::Skipped(message), Vec::new())
    } else if listed(&b.expected) {
        (CiOutcome::Skipped(format!("expected failure (listed in --expected-failures): {message}")), Vec::new())
    } else if listed(&b.stale) {
        (
            CiOutcome::Failed(
                "listed in --expected-failures but passes now: remove it from the file (a stale baseline)".into(),
            ),
            Vec::new(),
        )
    } else if listed(&b.unexpected) {
        let what = if c.status == Status::Warning { "WARNING not in --expected-failures: " } else { "" };
        (CiOutcome::Failed(format!("{what}{message}")), Vec::new())
    } else {
        by_status(c)
    }
}

/// The evidence a probe check left: its replays' folders, else its own folder under the
/// `--evidence` folder (the preflight, a key check).
fn probe_evidence(c: &CheckRecord, evidence: Option<&Path>) -> Vec<PathBuf> {
    let replays: Vec<PathBuf> = c
        .details
        .get("replays")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|r| r.get("evidence").and_then(Value::as_str))
        .map(PathBuf::from)
        .collect();
    if !replays.is_empty() {
        return replays;
    }
    evidence.map(|d| d.join(&c.id)).filter(|d| d.is_dir()).into_iter().collect()
}

fn probe_case(c: &CheckRecord, baseline: Option<&BaselineResult>, evidence: Option<&Path>) -> CiCase {
    let (outcome, mut notes) = match baseline {
        Some(b) => against(c, b),
        None => by_status(c),
    };
    notes.push(c.description.clone());
    CiCase { group: "mcp-once probe".into(), name: c.id.clone(), outcome, notes, evidence: probe_evidence(c, evidence) }
}

/// On a server given by `--stdio`/`--http`: the server behaviours its replays fit (none for
/// fixtures, or for a server that fits neither).
fn fitting_behaviours(results: &[Confirmation]) -> Vec<mcp_once_model::ServerImpl> {
    let on_server: Vec<Confirmation> = results.iter().filter(|r| r.sdk == "server").cloned().collect();
    crate::confirm::behaviours(&on_server).into_iter().filter(|(_, fits)| *fits).map(|(b, _)| b).collect()
}

/// A replay of `confirm`: confirmed (or, for a worst case of one effect per call, ran) passes;
/// not reproduced fails; a replay that could not follow its trace or tell is skipped. On a given
/// server that fits one behaviour, a replay of the other behaviour not confirmed is skipped:
/// it is a counterexample of a server this one is not.
fn confirm_case(r: &Confirmation, fitting: &[mcp_once_model::ServerImpl]) -> CiCase {
    let other = !fitting.is_empty() && r.behaviour.is_some_and(|b| !fitting.contains(&b));
    let outcome = match r.verdict {
        ReplayVerdict::Confirmed | ReplayVerdict::Ran => CiOutcome::Passed,
        _ if other => CiOutcome::Skipped(format!(
            "{}: {} (a counterexample of a server that is {}; this server's replays fit {})",
            r.verdict.as_str(),
            r.reason,
            r.behaviour.map(|b| b.to_string()).unwrap_or_default(),
            fitting.iter().map(|b| b.to_string()).collect::<Vec<_>>().join(" and ")
        )),
        ReplayVerdict::NotReproduced => CiOutcome::Failed(format!("not reproduced: {}", r.reason)),
        ReplayVerdict::Diverged | ReplayVerdict::Inconclusive | ReplayVerdict::Interrupted => {
            CiOutcome::Skipped(format!("{}: {}", r.verdict.as_str(), r.reason))
        }
    };
    let notes =
        if outcome == CiOutcome::Passed { vec![format!("{}: {}", r.verdict.as_str(), r.reason)] } else { Vec::new() };
    CiCase {
        group: r.cell.clone(),
        name: format!("{} on {}", r.property, r.sdk),
        outcome,
        notes,
        evidence: r.evidence.iter().cloned().collect(),
    }
}

/// One case per scenario check of `probe-client`, with its record and the client's output when
/// `--records` kept them.
fn client_cases(r: &ProbeClientReport) -> Vec<CiCase> {
    r.checks
        .iter()
        .zip(&r.scenarios)
        .map(|(c, o)| {
            let (outcome, mut notes) = by_status(c);
            notes.push(c.description.clone());
            let evidence = match &r.records {
                Some(dir) => ["record.jsonl", "client.out", "client.err"]
                    .iter()
                    .map(|f| dir.join(format!("{}.{f}", o.scenario)))
                    .filter(|p| p.is_file())
                    .collect(),
                None => Vec::new(),
            };
            CiCase { group: "mcp-once probe-client".into(), name: c.id.clone(), outcome, notes, evidence }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(id: &str, status: Status, message: Option<&str>) -> CheckRecord {
        CheckRecord {
            id: id.into(),
            name: id.into(),
            description: format!("what {id} checks"),
            status,
            timestamp: "2026-12-05T00:00:00.000Z".into(),
            spec_references: Vec::new(),
            details: json!({"replays": [{"evidence": format!("ev/{id}")}]}),
            error_message: message.map(String::from),
        }
    }

    #[test]
    fn untested_checks_are_skipped_and_warnings_pass_with_a_note() {
        let checks = [
            check("a", Status::Success, None),
            check("b", Status::Failure, Some("ran twice")),
            check("c", Status::Untestable, Some("Not testable: no effect")),
            check("d", Status::Warning, Some("a SHOULD")),
        ];
        let s = suite(&Report::Probe { checks: &checks, baseline: None, evidence: None }).unwrap();
        let outcomes: Vec<&CiOutcome> = s.cases.iter().map(|c| &c.outcome).collect();
        assert_eq!(
            outcomes,
            [
                &CiOutcome::Passed,
                &CiOutcome::Failed("ran twice".into()),
                &CiOutcome::Skipped("Not testable: no effect".into()),
                &CiOutcome::Passed
            ]
        );
        assert_eq!(s.cases[3].notes[0], "WARNING: a SHOULD");
        assert_eq!(s.cases[1].evidence, [PathBuf::from("ev/b")]);
    }

    #[test]
    fn against_a_baseline_expected_failures_are_skipped_and_stale_entries_fail() {
        let checks = [check("a", Status::Failure, Some("ran twice")), check("b", Status::Success, None)];
        let b = BaselineResult { expected: vec!["a".into()], stale: vec!["b".into()], ..BaselineResult::default() };
        let s = suite(&Report::Probe { checks: &checks, baseline: Some(&b), evidence: None }).unwrap();
        assert!(
            matches!(&s.cases[0].outcome, CiOutcome::Skipped(m) if m.starts_with("expected failure") && m.ends_with("ran twice"))
        );
        assert!(matches!(&s.cases[1].outcome, CiOutcome::Failed(m) if m.contains("stale")));
    }

    #[test]
    fn on_a_given_server_the_other_behaviours_misses_are_skipped_not_failed() {
        use mcp_once_model::ServerImpl;
        let replay = |behaviour: ServerImpl, verdict: ReplayVerdict| Confirmation {
            cell: format!("c__{behaviour}"),
            property: mcp_once_model::trace::TraceKind::WorstCase,
            sdk: "server".into(),
            behaviour: Some(behaviour),
            verdict,
            reason: "why".into(),
            evidence: None,
        };
        let fits_plain = [
            replay(ServerImpl::Plain, ReplayVerdict::Confirmed),
            replay(ServerImpl::HonoursCancel, ReplayVerdict::NotReproduced),
        ];
        let fitting = fitting_behaviours(&fits_plain);
        assert_eq!(fitting, [ServerImpl::Plain]);
        let other = confirm_case(&fits_plain[1], &fitting).outcome;
        assert!(matches!(&other, CiOutcome::Skipped(m) if m.contains("fit plain")), "{other:?}");
        // A server that fits neither fails on both misses.
        let neither = [
            replay(ServerImpl::Plain, ReplayVerdict::NotReproduced),
            replay(ServerImpl::HonoursCancel, ReplayVerdict::NotReproduced),
        ];
        let fitting = fitting_behaviours(&neither);
        assert!(fitting.is_empty());
        assert!(neither.iter().all(|r| matches!(confirm_case(r, &fitting).outcome, CiOutcome::Failed(_))));
    }
}
