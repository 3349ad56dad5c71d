//! `--format junit` and `--summary FILE` on `probe`, `confirm` and `probe-client`, as a CI
//! system reads them: the XML parsed by the `junit-parser` crate (`common/junit.rs`), one test
//! case per check, its counts against the same run's JSON (failures as failures, checks that
//! could not be tested as skipped, never as passes), the evidence named as attachments that
//! exist, the exit code the command's own; the summary appended to the file, its counts the
//! XML's. Real servers and clients; every wait is the runner's own, bounded.

#[path = "common/junit.rs"]
mod junit;

use junit::{attachments, message, validate, Counts};
use mcp_once_testkit::{fixtures, mcp_once, scratch, text, Scratch};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// What a summary file held before the run: the run must append after it.
const EARLIER: &str = "## An earlier step's summary\n\n";

/// `mcp-once ARGS --format FORMAT` with `--summary` into `summary` (after [`EARLIER`]): stdout and
/// the exit code.
fn run(args: &[String], format: &str, summary: &Path) -> (String, i32) {
    std::fs::write(summary, EARLIER).unwrap();
    let out = mcp_once!()
        .args(args)
        .args(["--format", format, "--summary"])
        .arg(summary)
        .timeout(Duration::from_secs(300))
        .output()
        .unwrap();
    (text(&out.stdout), out.status.code().unwrap_or_else(|| panic!("killed: {}", text(&out.stderr))))
}

/// The counts of the conformance-suite-shaped checks of a JSON report: FAILURE as failures,
/// untestable ones (`details.untestable`) as skipped.
fn check_counts(checks: &[Value]) -> Counts {
    let untestable = |c: &&Value| c["details"]["untestable"] == true;
    Counts {
        tests: checks.len() as u64,
        failures: checks.iter().filter(|c| c["status"] == "FAILURE" && !untestable(c)).count() as u64,
        skipped: checks.iter().filter(untestable).count() as u64,
    }
}

/// The summary appended to `path`: what was there first, then a heading with the counts.
fn assert_summary(path: &Path, command: &str, want: Counts) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let added = text.strip_prefix(EARLIER).unwrap_or_else(|| panic!("appended, not overwritten: {text}"));
    let passed = want.tests - want.failures - want.skipped;
    let head = format!(
        "mcp-once {command}: {passed} passed, {} failed, {} skipped (of {})\n",
        want.failures, want.skipped, want.tests
    );
    assert!(added.starts_with("### ") && added.lines().next().unwrap().ends_with(head.trim_end()), "{added}");
    added.to_string()
}

fn probe_args(dir: &Scratch, more: &[&str]) -> Vec<String> {
    let ledger = dir.join("ledger.jsonl");
    let mut args: Vec<String> = vec![
        "probe".into(),
        "--stdio".into(),
        format!("{BIN} fixture --sdk rust --ledger {}", ledger.display()),
        "--args".into(),
        r#"{"amount":1}"#.into(),
        "--observe".into(),
        format!("ledger:{}", ledger.display()),
    ];
    args.extend(more.iter().map(|s| s.to_string()));
    args
}

/// The Rust fixture without keys over stdio: the keyless retries fail; as JUnit, one case per
/// check with the JSON's counts, each failure with its reason and its replays' evidence attached;
/// against an expected-failures file listing them, they are skipped as expected and the run
/// exits 0, as the command does.
#[test]
fn probe_as_junit_has_a_case_per_check_and_honours_the_expected_failures() {
    let dir = scratch!("junit", "probe");
    let summary = dir.join("summary.md");
    let (json, code) = run(&probe_args(&dir, &[]), "json", &summary);
    assert_eq!(code, 1, "keyless retries run twice: {json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let checks = v["checks"].as_array().unwrap();
    let want = check_counts(checks);
    assert!(want.failures >= 3, "{v:#}");

    let evidence = dir.join("evidence");
    let ev = evidence.display().to_string();
    let (xml, code) = run(&probe_args(&dir, &["--evidence", &ev]), "junit", &summary);
    assert_eq!(code, 1, "the exit code stays the probe's");
    let suite = validate(&xml, "mcp-once probe", want).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let ids: Vec<&str> = checks.iter().map(|c| c["id"].as_str().unwrap()).collect();
    let names: Vec<&str> = suite.cases.iter().map(|c| c.original_name.as_str()).collect();
    assert_eq!(names, ids, "one case per check, in order");
    for (case, check) in suite.cases.iter().zip(checks) {
        if check["status"] == "FAILURE" {
            // The reason, as the JSON gives it (the same check's text in another run).
            let m = message(case).unwrap();
            assert!(m.starts_with("the call took effect"), "{m} against {}", check["errorMessage"]);
            let files = attachments(case);
            assert!(!files.is_empty(), "a failure names its evidence: {case:?}");
            assert!(files.iter().all(|f| Path::new(f).starts_with(&evidence) && Path::new(f).exists()), "{files:?}");
        }
    }
    let added = assert_summary(&summary, "probe", want);
    assert!(added.contains("| `mcp-once-retry-after-timeout` |"), "failures listed with reasons: {added}");

    let baseline = dir.join("expected-failures.yml");
    let failed: Vec<&str> =
        checks.iter().filter(|c| c["status"] == "FAILURE").map(|c| c["id"].as_str().unwrap()).collect();
    std::fs::write(
        &baseline,
        format!("server:\n{}", failed.iter().map(|id| format!("  - {id}\n")).collect::<String>()),
    )
    .unwrap();
    let file = baseline.display().to_string();
    let (xml, code) = run(&probe_args(&dir, &["--expected-failures", &file]), "junit", &summary);
    assert_eq!(code, 0, "only expected failures: {xml}");
    let judged = Counts { tests: want.tests, failures: 0, skipped: want.skipped + want.failures };
    let suite = validate(&xml, "mcp-once probe", judged).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    for case in suite.cases.iter().filter(|c| failed.contains(&c.original_name.as_str())) {
        assert!(message(case).unwrap().starts_with("expected failure"), "{case:?}");
    }
    assert_summary(&summary, "probe", judged);
}

/// A cell on the Rust fixture (confirmed: passes) and on the TypeScript 1.x one, which does not
/// speak its revision (inconclusive: skipped with the reason, never a pass); exit 1 as the JSON
/// run's.
#[test]
fn confirm_as_junit_skips_what_it_could_not_replay() {
    let dir = scratch!("junit", "confirm");
    let fixtures = fixtures::dir().display().to_string();
    let args: Vec<String> = [
        "confirm",
        "--profile",
        "mcp-2026-07-28",
        "--transport",
        "stdio",
        "--server",
        "plain",
        "--client",
        "retry-on-timeout",
        "--sdk",
        "rust",
        "--sdk",
        "typescript",
        "--jobs",
        "2",
        "--fixtures",
        &fixtures,
        "--evidence",
        &dir.join("evidence").display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    let summary = dir.join("summary.md");
    let (xml, code) = run(&args, "junit", &summary);
    assert_eq!(code, 1, "a replay that is not confirmed: exit 1");
    let parsed = junit_parser::from_reader(std::io::Cursor::new(xml.as_bytes())).unwrap();
    let cases = &parsed.suites[0].cases;
    let rust: Vec<_> = cases.iter().filter(|c| c.original_name.ends_with(" on rust")).collect();
    let typescript: Vec<_> = cases.iter().filter(|c| c.original_name.ends_with(" on typescript")).collect();
    assert!(!rust.is_empty() && rust.len() == typescript.len(), "{xml}");
    let want = Counts { tests: cases.len() as u64, failures: 0, skipped: typescript.len() as u64 };
    validate(&xml, "mcp-once confirm", want).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    for c in &typescript {
        let m = message(c).unwrap();
        assert!(m.starts_with("inconclusive: ") && m.contains("does not speak 2026-07-28"), "{m}");
        assert!(attachments(c).is_empty(), "no replay, no evidence");
    }
    for c in &rust {
        assert!(c.status.is_success(), "{c:?}");
        assert!(c.classname.as_deref().unwrap().starts_with("mcp-2026-07-28__stdio__retry-on-timeout"), "{c:?}");
        let files = attachments(c);
        assert!(files.len() == 1 && Path::new(&files[0]).join("ledger.jsonl").is_file(), "{files:?}");
    }
    let added = assert_summary(&summary, "confirm", want);
    assert!(added.contains("does not speak 2026-07-28"), "{added}");
}

/// The Python SDK client with a retry-on-timeout wrapper: it runs the tool twice under the
/// timeout scenario (a failure, with the client's records attached) and once under `ok`.
#[test]
fn probe_client_as_junit_fails_the_scenario_that_ran_twice() {
    let dir = scratch!("junit", "probe-client");
    let records = dir.join("records");
    let client = format!(
        "{} {} --retry-on-timeout",
        fixtures::python("python"),
        fixtures::dir().join("clients/python_sdk.py").display()
    );
    let args: Vec<String> = [
        "probe-client",
        "--client",
        &client,
        "--scenario",
        "ok",
        "--scenario",
        "timeout",
        "--hold-ms",
        "3000",
        "--bound",
        "30",
        "--records",
        &records.display().to_string(),
    ]
    .map(String::from)
    .to_vec();
    let summary = dir.join("summary.md");
    let (xml, code) = run(&args, "junit", &summary);
    assert_eq!(code, 1, "{xml}");
    let want = Counts { tests: 2, failures: 1, skipped: 0 };
    let suite = validate(&xml, "mcp-once probe-client", want).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let timeout =
        suite.cases.iter().find(|c| c.original_name == "mcp-once-client-timeout").expect("a case per scenario");
    assert!(message(timeout).unwrap().contains("the tool ran 2 times for one logical call"), "{timeout:?}");
    let files = attachments(timeout);
    assert!(files.iter().any(|f| f.ends_with("timeout.record.jsonl")), "{files:?}");
    assert!(files.iter().all(|f| Path::new(f).is_file()), "{files:?}");
    assert_summary(&summary, "probe-client", want);
}

/// The validation a CI reader's parser gives catches a report that is wrong: not XML to its
/// end, no test suite, a count that disagrees with the cases, or other counts than expected.
#[test]
fn the_validation_rejects_malformed_reports() {
    let dir = scratch!("junit", "malformed");
    let (xml, code) = run(&probe_args(&dir, &["--checks", "mcp-once-retry-after-timeout"]), "junit", &dir.join("s.md"));
    assert_eq!(code, 1, "{xml}");
    let want = Counts { tests: 2, failures: 1, skipped: 0 };
    validate(&xml, "mcp-once probe", want).unwrap_or_else(|e| panic!("{e}:\n{xml}"));
    let open = xml.find("<testsuite ").unwrap();
    let close = xml.find("</testsuite>").unwrap() + "</testsuite>".len();
    let broken = [
        ("cut short", xml[..xml.len() / 2].to_string()),
        ("no test suite", format!("{}{}", &xml[..open], &xml[close..])),
        ("a wrong failure count", xml.replacen(r#"failures="1""#, r#"failures="0""#, 2)),
        (
            "a failure turned into a pass",
            xml.replacen("<failure ", "<skipped ", 1).replacen("</failure>", "</skipped>", 1),
        ),
    ];
    for (what, doc) in broken {
        assert_ne!(doc, xml, "{what}: the mutation applies");
        assert!(validate(&doc, "mcp-once probe", want).is_err(), "{what} passed validation:\n{doc}");
    }
    assert!(validate(&xml, "mcp-once probe", Counts { failures: 0, ..want }).is_err(), "other counts");
}
