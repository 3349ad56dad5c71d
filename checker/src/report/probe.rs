//! What `mcp-once probe` prints: one line per check as the MCP conformance suite's console
//! shows it (`timestamp [id] STATUS description`), or its JSON `{"checks": [...]}`; with an
//! expected-failures file, the judgement against it.

use mcp_once_conformance::probe::baseline::BaselineResult;
use mcp_once_conformance::probe::checks::{CheckRecord, Status};
use serde_json::{json, Value};
use std::fmt::Write;

/// The conformance-suite-shaped JSON: `{"checks": [...]}`, and `baseline` when judged.
pub fn probe_json(checks: &[CheckRecord], baseline: Option<&BaselineResult>) -> Value {
    let mut out = json!({"checks": checks});
    if let Some(b) = baseline {
        out["baseline"] = json!({
            "expected": b.expected, "unexpected": b.unexpected, "stale": b.stale,
            "untestable": b.untestable, "notRun": b.not_run, "exitCode": b.exit_code(),
        });
    }
    out
}

/// One line per check, its message, assumption, replays and findings below it, the revision
/// spoken and the counts; then the baseline's judgement.
pub fn probe_text(checks: &[CheckRecord], baseline: Option<&BaselineResult>) -> String {
    let width = checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut s = String::new();
    for c in checks {
        let _ = writeln!(s, "{} [{:<width$}] {:<7} {}", c.timestamp, c.id, c.status.label(), c.description);
        let pad = format!("{:>24} {:<width$}  ", "", "");
        if let Some(e) = &c.error_message {
            let _ = writeln!(s, "{pad}{e}");
        }
        if let Some(a) = c.details.get("assumes").and_then(Value::as_str) {
            let _ = writeln!(s, "{pad}assumes {a}");
        }
        for r in c.details.get("replays").and_then(Value::as_array).into_iter().flatten() {
            let effects = match (r.get("observed_effects").and_then(Value::as_i64), r.get("expected_effects")) {
                (Some(n), Some(e)) => format!(", {n} of {e} effects"),
                _ => String::new(),
            };
            let verdict = r.get("verdict").and_then(Value::as_str).unwrap_or("?");
            let trace = r.get("trace").and_then(Value::as_str).unwrap_or("?");
            // The trace is named after the model server it is a counterexample for, not the
            // server under test.
            let of = match r.get("counterexample_of").and_then(Value::as_str) {
                Some(server) => format!(" (the model's counterexample for a `{server}` server)"),
                None => String::new(),
            };
            let _ = writeln!(s, "{pad}replay {trace}{of}: {verdict}{effects}");
        }
        for f in c.details.get("findings").and_then(Value::as_array).into_iter().flatten() {
            let _ = writeln!(s, "{pad}{}", f.as_str().unwrap_or(""));
        }
    }
    if let Some(r) = checks.iter().find_map(|c| c.details.get("revision").and_then(Value::as_str)) {
        let _ = writeln!(s, "protocol revision spoken: {r}");
    }
    let count = |st: Status| checks.iter().filter(|c| c.status == st).count();
    let _ = writeln!(
        s,
        "{} checks: {} success, {} failure, {} warning, {} not testable",
        checks.len(),
        count(Status::Success),
        count(Status::Failure),
        count(Status::Warning),
        count(Status::Untestable)
    );
    if let Some(b) = baseline {
        s.push_str(&baseline_text(b));
    }
    s
}

/// The judgement against the expected failures, in a few lines.
fn baseline_text(b: &BaselineResult) -> String {
    let mut s = String::new();
    let mut list = |title: &str, ids: &[String]| {
        if !ids.is_empty() {
            let _ = writeln!(s, "{title}: {}", ids.join(", "));
        }
    };
    list("expected failures (in the baseline)", &b.expected);
    list("stale baseline entries (now passing: remove them)", &b.stale);
    list("unexpected failures (not in the baseline)", &b.unexpected);
    list("not testable (the exit code stays 2)", &b.untestable);
    list("not run here (another transport's, a key check without --key-at, or not selected)", &b.not_run);
    s.push_str(match b.exit_code() {
        0 => "baseline check passed: every failure is expected\n",
        1 => "baseline check failed\n",
        _ => "baseline check incomplete: some checks could not be tested\n",
    });
    s
}
