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

/// The suite's grading of a measured probe result: a failure is INFO for the keyless checks
/// (no MUST or SHOULD asks for at-most-once), FAILURE for SEP-3182's (its MUSTs).
fn graded(id: &str, probe_status: &str, untestable: bool) -> &'static str {
    match (probe_status, untestable) {
        ("FAILURE", false) if !id.starts_with("sep-3182-") => "INFO",
        ("FAILURE", _) => "FAILURE",
        ("SUCCESS", _) => "SUCCESS",
        ("WARNING", _) => "WARNING",
        (other, _) => panic!("probe status {other}"),
    }
}

#[test]
fn the_suite_shaped_scenarios_give_probes_verdicts_in_the_suites_shape() {
    let suite = suite_dir();
    let dir = scratch!("suite", "scenarios");
    let ledger = dir.join("ledger.jsonl");
    let argv: Vec<String> = [BIN, "fixture", "--transport", "http", "--port", "0", "--variant", "plain", "--ledger"]
        .iter()
        .map(|s| s.to_string())
        .chain([ledger.display().to_string()])
        .collect();
    let server = Group::spawn(&argv, false);
    let url = server.stderr_until(Duration::from_secs(30), listening_url).expect("the fixture listens");

    // The scenarios through the harness.
    let observe = format!("ledger:{}", ledger.display());
    let env = [
        ("MCP_ONCE", BIN.to_string()),
        ("MCP_ONCE_ARGS", r#"{"amount":42}"#.to_string()),
        ("MCP_ONCE_OBSERVE", observe.clone()),
        ("MCP_ONCE_KEY_AT", "params".to_string()),
    ];
    let out = assert_cmd::Command::new(suite.join("node_modules/.bin/tsx"))
        .current_dir(&suite)
        .args(["src/run.ts", "--url", &url])
        .envs(env.iter().map(|(k, v)| (k, v)))
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "SEP-3182's MUSTs fail on plain: {}", text(&out.stderr));
    let report: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let scenarios = report["scenarios"].as_object().unwrap();
    let ids: Vec<&str> = scenarios.keys().map(String::as_str).collect();
    assert_eq!(ids.len(), 6, "{ids:?}");

    // The same checks by probe, on the same server.
    let probe = assert_cmd::Command::new(BIN)
        .args(["probe", "--http", &url, "--checks", &ids.join(","), "--args", r#"{"amount":42}"#])
        .args(["--observe", &observe, "--key-at", "params", "--format", "json"])
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    let probed: Value = serde_json::from_str(&text(&probe.stdout)).unwrap();
    let probe_status: BTreeMap<&str, (&str, bool)> = probed["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["id"].as_str().unwrap(), (c["status"].as_str().unwrap(), c["details"]["untestable"] == true)))
        .collect();

    // The suite's own package on the same server: its checks.json gives the field shapes.
    let out_dir = dir.join("suite-out");
    let run = assert_cmd::Command::new(suite.join("node_modules/.bin/node"))
        .current_dir(&suite)
        .arg("node_modules/@modelcontextprotocol/conformance/dist/index.js")
        .args(["server", "--url", &url, "--scenario", "tools-list", "-o"])
        .arg(&out_dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(run.status.success(), "the suite runs on the fixture: {}{}", text(&run.stdout), text(&run.stderr));
    let written = std::fs::read_dir(&out_dir).unwrap().next().unwrap().unwrap().path().join("checks.json");
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(&written).unwrap()).unwrap();
    let mut suite_kinds = BTreeMap::new();
    for c in theirs.as_array().unwrap() {
        for (field, value) in c.as_object().unwrap() {
            assert!(CHECK_FIELDS.contains(&field.as_str()), "the suite writes {field}: update CHECK_FIELDS");
            suite_kinds.insert(field.clone(), kind(value));
        }
    }
    assert!(suite_kinds.len() >= 6, "{suite_kinds:?}");

    for (id, checks) in scenarios {
        let own: Vec<&Value> = checks.as_array().unwrap().iter().filter(|c| c["id"] == id.as_str()).collect();
        assert_eq!(own.len(), 1, "{id}: {checks}");
        let c = own[0];
        assert_suite_shape(c, &suite_kinds);
        let (status, untestable) = probe_status[id.as_str()];
        assert!(!untestable, "{id} measured on the fixture: {c}");
        assert_eq!(c["details"]["mcpOnceStatus"], status, "{id}: the harness's check is probe's");
        assert_eq!(c["status"], graded(id, status, untestable), "{id}: graded by the clause's keyword: {c}");
    }
    drop(server);

    // The scenarios' own vitest: a passing and a deliberately broken example.
    let vitest = assert_cmd::Command::new(suite.join("node_modules/.bin/vitest"))
        .current_dir(&suite)
        .args(["run", "--reporter", "verbose"])
        .env("MCP_ONCE", BIN)
        .timeout(Duration::from_secs(900))
        .output()
        .unwrap();
    let said = format!("{}{}", text(&vitest.stdout), text(&vitest.stderr));
    assert!(vitest.status.success(), "{said}");
    assert!(said.contains("passing example") && said.contains("broken example"), "{said}");

    // The traceability rows and the baseline name only scenarios that exist.
    let yaml = std::fs::read_to_string(suite.join("src/seps/sep-3182.yaml")).unwrap();
    let doc = &YamlLoader::load_from_str(&yaml).unwrap()[0];
    let rows = doc["requirements"].as_vec().unwrap();
    let traced: Vec<&str> = rows.iter().filter_map(|r| r["check"].as_str()).collect();
    assert_eq!(traced.len(), 3, "{traced:?}");
    for row in rows {
        assert!(row["text"].as_str().is_some_and(|t| t.contains("MUST")), "{row:?}");
        assert!(row["check"].as_str().is_some() != row["excluded"].as_str().is_some(), "a check or a reason: {row:?}");
    }
    for id in &traced {
        assert!(ids.contains(id), "{id} traced but no scenario");
    }
    let baseline = std::fs::read_to_string(suite.join("expected-failures.everything-server.yml")).unwrap();
    let listed = YamlLoader::load_from_str(&baseline).unwrap()[0]["server"].as_vec().unwrap().clone();
    let mut listed: Vec<&str> = listed.iter().map(|y| y.as_str().unwrap()).collect();
    let mut all = ids.clone();
    listed.sort();
    all.sort();
    assert_eq!(listed, all, "the baseline lists every scenario");
}
