//! The probe: conformance-test one server. It replays the model's shortest counterexamples for
//! the server's revision and transport (a retry after a timeout, a retry after a crash and a
//! restart, a framework re-run), under each server behaviour the model knows (cancellation
//! ignored or honoured), and, when a key placement is given, checks the SEP-3182 semantics
//! directly. Everything starts with a preflight ([`crate::probe::preflight`]): a check whose
//! calls cannot take an observed effect is untestable, never a SUCCESS. Results are records
//! shaped like the official MCP conformance suite's checks (see [`crate::probe::checks`]).

use crate::probe::checks::{now_rfc3339, reference, CheckRecord, SpecReference, Status};
use crate::probe::key_checks::{key_checks, KEY_CHECKS};
use crate::probe::preflight::{not_implemented, preflight, Preflight};
use crate::replay::confirmed_trace::write_confirmed_trace;
use crate::replay::driver::replay;
use crate::replay::evidence::Evidence;
use crate::replay::session::NonJsonLines;
use crate::replay::types::{
    revision_for, write_result, ReplayOptions, ReplayResult, ReplayVerdict, Revision, RESULT_FILE,
};
use mcp_once_model::catalogue::{Scenario, INPUT_ROUND_RERUN, KEYED_RETRY, PROBE_SCENARIOS, REQUEST_STATE_REUSE};
use mcp_once_model::rules;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{McpModel, Profile, ServerImpl, Transport};
use serde_json::json;

/// One trace of a scenario: its replay's name, the model server it is a counterexample for,
/// the trace, and the spec references its steps cite.
type ScenarioTrace = (String, ServerImpl, TraceFile, Vec<SpecReference>);

/// The traces of one scenario: one per server behaviour, identical action sequences merged; each
/// with the citations of the rules behind its steps.
fn scenario_traces(s: &Scenario, profile: &Profile, transport: Transport) -> Result<Vec<ScenarioTrace>, String> {
    let mut out: Vec<ScenarioTrace> = Vec::new();
    for &server in s.servers {
        let Some(trace) = s.trace(profile, transport, server).map_err(|e| e.to_string())? else { continue };
        if out.iter().any(|(_, _, t, _)| t.actions == trace.actions) {
            continue;
        }
        let config = s.config(&profile.name, transport, server);
        let model = McpModel::new(config, profile.clone()).map_err(|e| e.to_string())?;
        let mut refs: Vec<SpecReference> = Vec::new();
        let states = mcp_once_model::search::replay(&model, &trace.actions)
            .map_err(|(step, why)| format!("{}: step {step}: {why}", s.check_id))?;
        for (_, _, c) in trace.actions.iter().enumerate().flat_map(|(i, a)| rules::citations(&model, &states[i + 1], a))
        {
            let r = reference(c);
            if !refs.iter().any(|x| x.id == r.id) {
                refs.push(r);
            }
        }
        out.push((format!("{}__{}__{}", s.check_id, transport.as_str(), server.as_str()), server, trace, refs));
    }
    Ok(out)
}

/// Why the probe could not run at all (a check that ran and failed is a record, not this).
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A check was asked for by an id that is not one of this transport's checks.
    #[error("no check `{id}` here (the checks over {transport}: {})", known.join(", "))]
    UnknownCheck {
        /// The id asked for.
        id: String,
        /// The transport of the target (`stdio` or `http`).
        transport: &'static str,
        /// The checks there are.
        known: Vec<&'static str>,
    },
    /// The evidence folder could not be made or written.
    #[error("the evidence folder {}: {source}", dir.display())]
    Evidence {
        /// The folder asked for.
        dir: std::path::PathBuf,
        /// What the file system said.
        source: std::io::Error,
    },
    /// A built-in profile did not load (a defect of this build).
    #[error(transparent)]
    Profile(#[from] mcp_once_model::ProfileError),
}

fn evidence_for(options: &ReplayOptions, sub: &str) -> Result<Evidence, ProbeError> {
    let dir = options.evidence_dir.as_ref().map(|d| d.join(sub));
    Evidence::new(dir.as_deref()).map_err(|source| ProbeError::Evidence { dir: dir.unwrap_or_default(), source })
}

/// One scenario's check: each of its traces replayed on a fresh server. A confirmed trace is a
/// FAILURE (saying so first when the check's own fault could not be made); a trace not reproduced (its effects before the violating step all seen, the
/// violating one not) is a SUCCESS; a trace for another server behaviour diverges, and tells
/// nothing; with no trace either way the check is untestable.
async fn scenario_check(
    s: &Scenario,
    profile: &Profile,
    options: &ReplayOptions,
    ready: &Result<(), String>,
) -> CheckRecord {
    let transport = options.target.transport();
    let mut refs: Vec<SpecReference> = Vec::new();
    let mut runs: Vec<ReplayResult> = Vec::new();
    // The model server each replayed trace is a counterexample for (its name ends with it).
    let mut of_server: Vec<ServerImpl> = Vec::new();
    let mut problem: Option<String> = ready.as_ref().err().map(|e| {
        if not_implemented(e) {
            e.clone()
        } else {
            format!("the preflight's call did not take exactly one observed effect (see {PREFLIGHT_ID})")
        }
    });
    match scenario_traces(s, profile, transport) {
        Err(e) => problem = Some(format!("the model gives no trace: {e}")),
        Ok(traces) => {
            for (name, server, trace, trace_refs) in traces {
                for r in trace_refs {
                    if !refs.iter().any(|x| x.id == r.id) {
                        refs.push(r);
                    }
                }
                if problem.is_some() {
                    continue;
                }
                let evidence = match evidence_for(options, &name) {
                    Ok(e) => e,
                    Err(e) => {
                        problem = Some(e.to_string());
                        break;
                    }
                };
                let mut result = replay(&trace, &name, profile.clone(), options.clone(), evidence).await;
                if let Err(why) = write_confirmed_trace(&result, &trace, profile) {
                    result.notes.push(format!("the confirmed trace was not written: {why}"));
                }
                let _ = write_result(&result);
                runs.push(result);
                of_server.push(server);
            }
        }
    }
    let with = |v: ReplayVerdict| runs.iter().find(|r| r.verdict == v);
    let (status, error) = match (&problem, with(ReplayVerdict::Confirmed), with(ReplayVerdict::NotReproduced)) {
        (Some(p), _, _) if not_implemented(p) => (Status::Failure, Some(p.clone())),
        (Some(p), _, _) => (Status::Untestable, Some(format!("Not testable: {p}"))),
        (None, Some(r), _) => {
            let n = r.settled_effects.or(r.observed_effects).unwrap_or(0);
            // The duplicate was counted, so the check fails; but when the fault it is named
            // after was never made, it says so first: the duplicate came another way.
            let lead = match &r.fault_not_made {
                Some(_) => format!("the call took effect {n} times, though not through this check's fault, which the runner could not make"),
                None => format!("the call took effect {n} times"),
            };
            (Status::Failure, Some(format!("{lead}: {} ({})", r.trace, r.reason)))
        }
        (None, None, Some(_)) => (Status::Success, None),
        (None, None, None) => match runs.first() {
            None => (Status::Untestable, Some("Not testable: the model has no counterexample here".into())),
            Some(_) => {
                let why: Vec<String> =
                    runs.iter().map(|r| format!("{}: {} ({})", r.trace, r.reason, r.verdict.as_str())).collect();
                (
                    Status::Untestable,
                    Some(format!("Not testable: no replay reached its violating step: {}", why.join("; "))),
                )
            }
        },
    };
    let details = json!({
        "untestable": status == Status::Untestable,
        "revision": options.revision.map(|r| r.as_str()),
        "assumes": s.assumes,
        "replays": runs.iter().zip(&of_server).map(|(r, server)| json!({
            "trace": r.trace, "counterexample_of": server.as_str(), "verdict": r.verdict, "expected_effects": r.expected_effects,
            "observed_effects": r.observed_effects, "settled_effects": r.settled_effects,
            "reason": r.reason, "fault_not_made": r.fault_not_made, "evidence": r.evidence,
        })).collect::<Vec<_>>(),
    });
    CheckRecord {
        id: s.check_id.into(),
        name: s.title.into(),
        description: s.description.into(),
        status,
        timestamp: now_rfc3339(),
        spec_references: refs,
        details,
        error_message: error,
    }
}

/// The preflight as a check record of its own, first in the list.
fn preflight_record(outcome: &Result<Preflight, String>) -> CheckRecord {
    let (status, error, findings) = match outcome {
        // The reason is the message; findings only add what it does not say.
        Err(e) => (Status::Untestable, Some(format!("Not testable: {e}")), Vec::new()),
        Ok(p) => match (&p.keyless, &p.keyed) {
            (Ok(()), None | Some(Ok(()))) => (Status::Success, None, p.findings.clone()),
            (Err(e), _) | (Ok(()), Some(Err(e))) => {
                let others = p.findings.iter().filter(|f| *f != e).cloned().collect();
                (Status::Untestable, Some(format!("Not testable: {e}")), others)
            }
        },
    };
    CheckRecord {
        id: PREFLIGHT_ID.into(),
        name: "Preflight".into(),
        description: "The server starts, lists the tool, and one call of it with the given arguments moves the observer by exactly one effect".into(),
        status,
        timestamp: now_rfc3339(),
        spec_references: Vec::new(),
        details: json!({"untestable": status == Status::Untestable, "findings": findings}),
        error_message: error,
    }
}

/// A scenario's check that could not run here, asked for by `--checks`: untestable, with why.
fn not_run(s: &Scenario, why: &str) -> CheckRecord {
    CheckRecord {
        id: s.check_id.into(),
        name: s.title.into(),
        description: s.description.into(),
        status: Status::Untestable,
        timestamp: now_rfc3339(),
        spec_references: Vec::new(),
        details: json!({"untestable": true, "assumes": s.assumes}),
        error_message: Some(why.into()),
    }
}

/// The non-JSON lines of stdout that `--skip-non-json` skipped in the preflight, as a WARNING:
/// the server broke the stdio transport's rule, and the probe went on past it as asked.
fn non_json_record(lines: &NonJsonLines) -> CheckRecord {
    let quoted: Vec<String> = lines.first.iter().map(|l| format!("`{l}`")).collect();
    CheckRecord {
        id: NON_JSON_ID.into(),
        name: "Stdout carries only MCP messages".into(),
        description: "Over stdio the server writes nothing to its stdout that is not a valid MCP message".into(),
        status: Status::Warning,
        timestamp: now_rfc3339(),
        spec_references: vec![SpecReference {
            id: "2025-11-25 basic/transports.mdx: stdio".into(),
            url: "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio".into(),
        }],
        details: json!({"untestable": false, "lines": lines.count, "first": lines.first}),
        error_message: Some(format!(
            "the server wrote {} line(s) that are not JSON to its stdout (first: {}), skipped as --skip-non-json asks; the stdio transport says \"The server MUST NOT write anything to its stdout that is not a valid MCP message\", and a client that reads them as messages fails",
            lines.count,
            quoted.join(", ")
        )),
    }
}

/// The id of the check that reports a stdout carrying lines that are not JSON.
pub const NON_JSON_ID: &str = "mcp-once-stdout-non-json";

/// A check that ran on a server of its own (the preflight, a key check) leaves its record as the
/// `result.json` of its evidence folder, as every replay does.
fn save_record(options: &ReplayOptions, record: &CheckRecord) {
    let Some(dir) = options.evidence_dir.as_ref().map(|d| d.join(&record.id)) else { return };
    if dir.is_dir() {
        if let Ok(text) = serde_json::to_string_pretty(record) {
            let _ = std::fs::write(dir.join(RESULT_FILE), text + "\n");
        }
    }
}

/// The preflight check's id.
pub const PREFLIGHT_ID: &str = "mcp-once-preflight";

/// The ids of the checks the probe runs over `transport` (with the key checks or not), in order.
pub fn check_ids(transport: Transport, keyed: bool) -> Vec<&'static str> {
    let mut ids = vec![PREFLIGHT_ID];
    ids.extend(PROBE_SCENARIOS.iter().filter(|s| s.transports.contains(&transport)).map(|s| s.check_id));
    ids.push(INPUT_ROUND_RERUN.check_id);
    if REQUEST_STATE_REUSE.transports.contains(&transport) {
        ids.push(REQUEST_STATE_REUSE.check_id);
    }
    if keyed {
        ids.push(KEYED_RETRY.check_id);
        ids.extend(KEY_CHECKS.iter().map(|c| c.0));
    }
    ids
}

/// The ids of every check the probe has, over either transport, the key checks included: what
/// an expected-failures file may name.
pub fn every_check_id() -> Vec<&'static str> {
    let mut ids = check_ids(Transport::Stdio, true);
    for id in check_ids(Transport::Http, true) {
        if !ids.contains(&id) {
            ids.push(id);
        }
    }
    ids
}

/// `mcp-once probe` on its own runtime: [`probe`], or `None` when a signal interrupted it
/// (every server process group is killed then). The outer error is the runtime's; the inner one
/// says why the probe could not run.
pub fn run_probe(
    options: ReplayOptions,
    key_checks: bool,
    only: &[String],
) -> anyhow::Result<Option<Result<Vec<CheckRecord>, ProbeError>>> {
    crate::replay::block_on_interruptible(probe(options, key_checks, only))
}

/// Run the probe: the preflight, the scenario catalogue for the revision and transport, then
/// (with a key placement) the SEP-3182 checks. `only` selects checks by id (the preflight
/// always runs). A setup error in the preflight (the server did not start, has no such tool, an
/// observer that cannot be read) stops the probe there: it is reported once, on the preflight.
pub async fn probe(
    options: ReplayOptions,
    key_checks_on: bool,
    only: &[String],
) -> Result<Vec<CheckRecord>, ProbeError> {
    let revision = options.revision.unwrap_or(Revision::R2025_11_25);
    let profile_name = match revision {
        Revision::R2025_11_25 => "mcp-2025-11-25",
        Revision::R2026_07_28 => "mcp-2026-07-28",
    };
    let profile = Profile::load(profile_name)?;
    let mut opts = options.clone();
    opts.revision = Some(revision_for(&options, &profile));
    let transport = opts.target.transport();
    let known = check_ids(transport, key_checks_on);
    if let Some(bad) = only.iter().find(|id| !known.contains(&id.as_str())) {
        return Err(ProbeError::UnknownCheck { id: bad.clone(), transport: transport.as_str(), known });
    }
    let wanted = |id: &str| only.is_empty() || only.iter().any(|o| o == id);
    let evidence = evidence_for(&opts, PREFLIGHT_ID)?;
    let pre = preflight(&opts, revision, evidence, key_checks_on).await;
    let mut out = vec![preflight_record(&pre)];
    save_record(&opts, &out[0]);
    let Ok(pre) = pre else { return Ok(out) };
    if pre.non_json.count > 0 {
        out.push(non_json_record(&pre.non_json));
    }
    for s in PROBE_SCENARIOS.iter().filter(|s| s.transports.contains(&transport) && wanted(s.check_id)) {
        out.push(scenario_check(s, &profile, &opts, &pre.keyless).await);
    }
    // A tool that asks for input: its continuation (and, over HTTP, a continuation re-issued
    // with the same requestState), where multi round-trip requests exist.
    for s in [&INPUT_ROUND_RERUN, &REQUEST_STATE_REUSE] {
        if !s.transports.contains(&transport) || !wanted(s.check_id) {
            continue;
        }
        match (pre.asks_input, revision) {
            (true, Revision::R2026_07_28) => out.push(scenario_check(s, &profile, &opts, &pre.keyless).await),
            (asks, _) if !only.is_empty() => out.push(not_run(s, if asks {
                "Not testable: the tool asks for input, and multi round-trip requests are 2026-07-28's (give --revision 2026-07-28)"
            } else {
                "Not testable: the tool asks for no input (its answer to the preflight's call is not input-required)"
            })),
            _ => {}
        }
    }
    if key_checks_on {
        let keyed = pre.keyed.clone().unwrap_or(Ok(()));
        if wanted(KEYED_RETRY.check_id) {
            let sep = Profile::load("sep-3182")?;
            out.push(scenario_check(&KEYED_RETRY, &sep, &opts, &keyed).await);
        }
        for record in key_checks(&opts, revision, &pre, &wanted).await {
            save_record(&opts, &record);
            out.push(record);
        }
        keyless_failures_need_a_client_key(&mut out);
    }
    Ok(out)
}

/// On a server that passed every key check it ran, a keyless check's failure is none of the
/// server's to fix: its client sends no key, and nothing in the request lets any server tell
/// the retry from a new call. Each such failure says so, and what a client must do.
fn keyless_failures_need_a_client_key(out: &mut [CheckRecord]) {
    let keyed = |id: &str| id == KEYED_RETRY.check_id || KEY_CHECKS.iter().any(|c| c.0 == id);
    let key_records: Vec<&CheckRecord> = out.iter().filter(|r| keyed(&r.id)).collect();
    if key_records.is_empty() || key_records.iter().any(|r| r.status != Status::Success) {
        return;
    }
    let keyless = |id: &str| PROBE_SCENARIOS.iter().any(|s| s.check_id == id) || id == INPUT_ROUND_RERUN.check_id;
    for r in out.iter_mut().filter(|r| keyless(&r.id) && r.status == Status::Failure) {
        let message = r.error_message.take().unwrap_or_default();
        r.error_message = Some(format!(
            "{message}. This server passes the key checks: here the client sends no key, so no server change can pass this check; a client must send one idempotency key per logical call, the same on every retry and re-run"
        ));
        r.details["needs_client_key"] = serde_json::Value::Bool(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_a_trace_per_scenario_on_both_transports() {
        let profile = Profile::load("mcp-2025-11-25").unwrap();
        for t in [mcp_once_model::Transport::Stdio, mcp_once_model::Transport::Http] {
            for s in PROBE_SCENARIOS.iter().filter(|s| s.transports.contains(&t)) {
                let traces = scenario_traces(s, &profile, t).unwrap();
                assert!(!traces.is_empty(), "{} over {}", s.check_id, t.as_str());
                assert!(traces.iter().all(|(_, _, _, refs)| !refs.is_empty()), "{} cites its rules", s.check_id);
            }
            let keyed = scenario_traces(&KEYED_RETRY, &Profile::load("sep-3182").unwrap(), t).unwrap();
            assert!(!keyed.is_empty(), "keyed scenario over {}", t.as_str());
            let input = scenario_traces(&INPUT_ROUND_RERUN, &Profile::load("mcp-2026-07-28").unwrap(), t).unwrap();
            assert_eq!(input.len(), 1, "the input-round scenario over {}", t.as_str());
            let actions = &input[0].2.actions;
            assert!(actions.iter().any(|a| matches!(a, mcp_once_model::Action::ClientContinue { .. })), "{actions:?}");
        }
    }
}
