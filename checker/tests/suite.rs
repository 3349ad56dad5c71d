//! mcp-once's checks as official-conformance-suite scenarios (`suite/`), run as a suite
//! maintainer would, on the Rust fixture over Streamable HTTP: the harness (`suite/src/run.ts`,
//! the suite's RunContext; its npm package cannot load an outside scenario) against `mcp-once
//! probe` on the same server, check by check (mcp-once's status kept, the suite's graded by the
//! clause's keyword); every check in the suite's shape, field by field against the checks.json
//! the pinned suite package itself writes on that server (under the Node 22 it needs, from
//! npm); the scenarios' vitest (a passing and a broken example); the traceability YAML and the
//! everything-server baseline naming only scenarios that exist.

use mcp_once_testkit::fixtures::listening_url;
use mcp_once_testkit::process::Group;
use mcp_once_testkit::{scratch, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use yaml_rust2::YamlLoader;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

fn suite_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../suite");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/conformance").is_dir(),
        "suite/ is not installed: run scripts/test (it runs npm ci in suite/)"
    );
    dir
}

/// The fields of the suite's `ConformanceCheck`, and the statuses it knows.
const CHECK_FIELDS: &[&str] = &[
    "id",
    "name",
    "description",
    "status",
    "timestamp",
    "specReferences",
    "source",
    "details",
    "metadata",
    "errorMessage",
    "logs",
];
const STATUSES: &[&str] = &["SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"];

/// The JSON kind of a value, for comparing shapes.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `check` has the suite's shape: only its fields, the required ones present, a known status.
fn assert_suite_shape(check: &Value, suite_kinds: &BTreeMap<String, &'static str>) {
    let obj = check.as_object().unwrap_or_else(|| panic!("not an object: {check}"));
    for required in ["id", "name", "description", "status", "timestamp"] {
        assert!(obj.get(required).is_some_and(Value::is_string), "{required} missing: {check}");
    }
    for (field, value) in obj {
        assert!(CHECK_FIELDS.contains(&field.as_str()), "{field} is no field of the suite's checks: {check}");
        if let Some(want) = suite_kinds.get(field) {
            assert_eq!(kind(value), *want, "{field} as the suite writes it: {check}");
        }
    }
    assert!(STATUSES.contains(&check["status"].as_str().unwrap()), "{check}");
    for r in check["specReferences"].as_array().into_iter().flatten() {
        assert!(r["id"].is_string() && (r.get("url").is_none() || r["url"].is_string()), "{r}");
    }
}

/// The suite's grading of a measured probe result: a failure is INFO for the keyless retry
/// checks (no MUST or SHOULD asks for at-most-once), FAILURE for SEP-3182's (its MUSTs) and
/// for the single use of a requestState (mrtr.mdx's MUST).
fn graded(id: &str, probe_status: &str, untestable: bool) -> &'static str {
    match (probe_status, untestable) {
        ("FAILURE", false) if !id.starts_with("sep-3182-") && id != MRTR => "INFO",
        ("FAILURE", _) => "FAILURE",
        ("SUCCESS", _) => "SUCCESS",
        ("WARNING", _) => "WARNING",
        (other, _) => panic!("probe status {other}"),
    }
}

/// The MRTR scenario: it needs a tool that asks for input before its effect.
const MRTR: &str = "mcp-once-request-state-single-use";

/// A fixture server over HTTP on a port the system picks (`extra`: its flags), its URL and its
/// ledger; the process group dies with the returned handle.
fn fixture(dir: &Path, name: &str, extra: &[&str]) -> (Group, String, PathBuf) {
    let ledger = dir.join(format!("{name}.jsonl"));
    let mut argv: Vec<String> =
        [BIN, "fixture", "--transport", "http", "--port", "0", "--variant", "plain", "--ledger"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    argv.push(ledger.display().to_string());
    argv.extend(extra.iter().map(|s| s.to_string()));
    let server = Group::spawn(&argv, false);
    let url = server.stderr_until(Duration::from_secs(30), listening_url).expect("the fixture listens");
    (server, url, ledger)
}

/// What the harness and probe said of the same checks on one server.
struct Both {
    /// The harness's exit code.
    code: i32,
    /// Scenario → its checks.
    scenarios: serde_json::Map<String, Value>,
    /// Check id → probe's status and whether it was untestable.
    probed: BTreeMap<String, (String, bool)>,
}

/// The harness's checks of `scenarios` on `url`, and probe's of the same checks on the same
/// server, at `revision`.
fn harness_and_probe(suite: &Path, url: &str, ledger: &Path, scenarios: &[&str], revision: &str) -> Both {
    let observe = format!("ledger:{}", ledger.display());
    let mut harness = assert_cmd::Command::new(suite.join("node_modules/.bin/tsx"));
    harness.current_dir(suite).args(["src/run.ts", "--url", url, "--spec-version", revision]);
    for s in scenarios {
        harness.args(["--scenario", s]);
    }
    let out = harness
        .env("MCP_ONCE", BIN)
        .env("MCP_ONCE_ARGS", r#"{"amount":42}"#)
        .env("MCP_ONCE_OBSERVE", &observe)
        .env("MCP_ONCE_KEY_AT", "params")
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or_else(|| panic!("killed: {}", text(&out.stderr)));
    let report: Value =
        serde_json::from_str(&text(&out.stdout)).unwrap_or_else(|e| panic!("{e}: {}", text(&out.stderr)));
    let probe = assert_cmd::Command::new(BIN)
        .args(["probe", "--http", url, "--revision", revision, "--checks", &scenarios.join(",")])
        .args(["--args", r#"{"amount":42}"#, "--observe", &observe, "--key-at", "params", "--format", "json"])
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    let probed: Value =
        serde_json::from_str(&text(&probe.stdout)).unwrap_or_else(|e| panic!("{e}: {}", text(&probe.stderr)));
    let status = probed["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let s = (c["status"].as_str().unwrap().to_string(), c["details"]["untestable"] == true);
            (c["id"].as_str().unwrap().to_string(), s)
        })
        .collect();
    Both { code, scenarios: report["scenarios"].as_object().unwrap().clone(), probed: status }
}

/// The fields of the checks the suite's own package writes for `tools-list` on `url` (run under
/// the Node 22 it needs), with their JSON kinds.
fn suite_check_kinds(suite: &Path, url: &str, out_dir: &Path) -> BTreeMap<String, &'static str> {
    let run = assert_cmd::Command::new(suite.join("node_modules/.bin/node"))
        .current_dir(suite)
        .arg("node_modules/@modelcontextprotocol/conformance/dist/index.js")
        .args(["server", "--url", url, "--scenario", "tools-list", "-o"])
        .arg(out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(run.status.success(), "the suite runs on the fixture: {}{}", text(&run.stdout), text(&run.stderr));
    let written = std::fs::read_dir(out_dir).unwrap().next().unwrap().unwrap().path().join("checks.json");
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    let mut kinds = BTreeMap::new();
    for c in theirs.as_array().unwrap() {
        for (field, value) in c.as_object().unwrap() {
            assert!(CHECK_FIELDS.contains(&field.as_str()), "the suite writes {field}: update CHECK_FIELDS");
            kinds.insert(field.clone(), kind(value));
        }
    }
    assert!(kinds.len() >= 6, "{kinds:?}");
    kinds
}

#[test]
fn the_suite_shaped_scenarios_give_probes_verdicts_in_the_suites_shape() {
    let suite = suite_dir();
    let dir = scratch!("suite", "scenarios");
    let (plain, url, ledger) = fixture(&dir, "plain", &[]);
    let suite_kinds = suite_check_kinds(&suite, &url, &dir.join("suite-out"));
    let keyless_and_keyed = [
        "mcp-once-retry-after-timeout",
        "mcp-once-retry-after-stream-break",
        "mcp-once-framework-rerun",
        "sep-3182-completed-key-replay",
        "sep-3182-in-progress-rejected",
        "sep-3182-key-conflict",
    ];
    let Both { code, mut scenarios, mut probed } =
        harness_and_probe(&suite, &url, &ledger, &keyless_and_keyed, "2025-11-25");
    assert_eq!(code, 1, "SEP-3182's MUSTs fail on plain");
    drop(plain);
    let (mrtr, url, ledger) = fixture(&dir, "mrtr", &["--handler", "input-before-effect"]);
    let more = harness_and_probe(&suite, &url, &ledger, &[MRTR], "2026-07-28");
    assert_eq!(more.code, 1, "the requestState runs twice: {:?}", more.scenarios);
    drop(mrtr);
    scenarios.extend(more.scenarios);
    probed.extend(more.probed);
    let ids: Vec<&str> = scenarios.keys().map(String::as_str).collect();
    assert_eq!(ids.len(), 7, "{ids:?}");

    for (id, checks) in &scenarios {
        let own: Vec<&Value> = checks.as_array().unwrap().iter().filter(|c| c["id"] == id.as_str()).collect();
        assert_eq!(own.len(), 1, "{id}: {checks}");
        let c = own[0];
        assert_suite_shape(c, &suite_kinds);
        let (status, untestable) = &probed[id];
        assert!(!untestable, "{id} measured on the fixture: {c}");
        assert_eq!(c["details"]["mcpOnceStatus"], status.as_str(), "{id}: the harness's check is probe's");
        assert_eq!(c["status"], graded(id, status, *untestable), "{id}: graded by the clause's keyword: {c}");
    }

    // The scenarios' own vitest: a passing and a deliberately broken example of each kind.
    let vitest = assert_cmd::Command::new(suite.join("node_modules/.bin/vitest"))
        .current_dir(&suite)
        .args(["run", "--reporter", "verbose"])
        .env("MCP_ONCE", BIN)
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    let said = format!("{}{}", text(&vitest.stdout), text(&vitest.stderr));
    assert!(vitest.status.success(), "{said}");
    assert!(said.matches("passing example").count() >= 2 && said.matches("broken example").count() >= 2, "{said}");

    // The traceability rows and the baseline name only scenarios that exist, and every
    // scenario with a MUST behind it is traced.
    let mut traced = Vec::new();
    for file in ["src/seps/sep-3182.yaml", "src/seps/sep-2322.yaml"] {
        let yaml = std::fs::read_to_string(suite.join(file)).unwrap();
        let doc = &YamlLoader::load_from_str(&yaml).unwrap()[0];
        for row in doc["requirements"].as_vec().unwrap() {
            assert!(row["text"].as_str().is_some_and(|t| t.contains("MUST")), "{file}: {row:?}");
            assert!(row["check"].as_str().is_some() != row["excluded"].as_str().is_some(), "{file}: {row:?}");
            traced.extend(row["check"].as_str().map(String::from));
        }
    }
    for id in &traced {
        assert!(ids.contains(&id.as_str()), "{id} traced but no scenario");
    }
    for id in &ids {
        let must = graded(id, "FAILURE", false) == "FAILURE";
        assert_eq!(traced.contains(&id.to_string()), must, "{id}: traced exactly when a MUST grades it");
    }
    let baseline = std::fs::read_to_string(suite.join("expected-failures.everything-server.yml")).unwrap();
    let listed = YamlLoader::load_from_str(&baseline).unwrap()[0]["server"].as_vec().unwrap().clone();
    let mut listed: Vec<&str> = listed.iter().map(|y| y.as_str().unwrap()).collect();
    let mut all = ids.clone();
    listed.sort();
    all.sort();
    assert_eq!(listed, all, "the baseline lists every scenario");
}
