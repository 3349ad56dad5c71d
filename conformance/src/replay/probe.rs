//! The probe: conformance-test one server. It replays the model's shortest counterexamples for
//! the server's revision and transport (a retry after a timeout, a retry after a crash and a
//! restart, a framework re-run), under each server behaviour the model knows (cancellation
//! ignored or honoured), and, when a key placement is given, checks the SEP-3182 semantics
//! directly. Results are records shaped like the official MCP conformance suite's checks
//! (see [`crate::replay::checks`]).

use crate::replay::checks::{now_rfc3339, reference, CheckRecord, SpecReference, Status};
use crate::replay::driver::replay;
use crate::replay::evidence::Evidence;
use crate::replay::pacing::Hold;
use crate::replay::session::Session;
use crate::replay::types::{revision_for, write_result, ReplayOptions, ReplayResult, ReplayVerdict, Revision};
use mcp_once_model::catalogue::{Scenario, KEYED_RETRY, RETRY_SCENARIOS};
use mcp_once_model::rules;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{McpModel, Profile, Transport};
use serde_json::{json, Value};
use std::time::SystemTime;
use tokio::time::Instant;

/// The traces of one scenario: one per server behaviour, identical action sequences merged; each
/// with the citations of the rules behind its steps.
fn scenario_traces(
    s: &Scenario,
    profile: &Profile,
    transport: Transport,
) -> Result<Vec<(String, TraceFile, Vec<SpecReference>)>, String> {
    let mut out: Vec<(String, TraceFile, Vec<SpecReference>)> = Vec::new();
    for &server in s.servers {
        let Some(trace) = s.trace(profile, transport, server)? else { continue };
        if out.iter().any(|(_, t, _)| t.actions == trace.actions) {
            continue;
        }
        let config = s.config(&profile.name, transport, server);
        let model = McpModel::new(config, profile.clone())?;
        let mut refs: Vec<SpecReference> = Vec::new();
        for (_, _, c) in trace.actions.iter().flat_map(|a| rules::citations(&model, a)) {
            let r = reference(c);
            if !refs.iter().any(|x| x.id == r.id) {
                refs.push(r);
            }
        }
        out.push((format!("{}__{}__{}", s.check_id, transport.as_str(), server.as_str()), trace, refs));
    }
    Ok(out)
}

fn evidence_for(options: &ReplayOptions, sub: &str) -> Result<Evidence, String> {
    let dir = options.evidence_dir.as_ref().map(|d| d.join(sub));
    Evidence::new(dir.as_deref()).map_err(|e| format!("--evidence: {e}"))
}

async fn scenario_check(s: &Scenario, profile: &Profile, options: &ReplayOptions) -> CheckRecord {
    let transport = options.target.transport();
    let mut refs: Vec<SpecReference> = Vec::new();
    let mut runs: Vec<ReplayResult> = Vec::new();
    let mut problem: Option<String> = None;
    match scenario_traces(s, profile, transport) {
        Err(e) => problem = Some(format!("the model gives no trace: {e}")),
        Ok(traces) => {
            for (name, trace, trace_refs) in traces {
                for r in trace_refs {
                    if !refs.iter().any(|x| x.id == r.id) {
                        refs.push(r);
                    }
                }
                let evidence = match evidence_for(options, &name) {
                    Ok(e) => e,
                    Err(e) => {
                        problem = Some(e);
                        break;
                    }
                };
                let result = replay(&trace, &name, profile.clone(), options.clone(), evidence).await;
                let _ = write_result(&result);
                runs.push(result);
            }
        }
    }
    let confirmed = runs.iter().find(|r| r.verdict == ReplayVerdict::Confirmed);
    let untestable = runs.iter().find(|r| {
        matches!(r.verdict, ReplayVerdict::Diverged | ReplayVerdict::Inconclusive | ReplayVerdict::Interrupted)
    });
    let (status, error) = match (&problem, confirmed, untestable) {
        (Some(p), _, _) => (Status::Warning, Some(format!("Not testable: {p}"))),
        (None, Some(r), _) => (
            Status::Failure,
            Some(format!("the call took effect {} times: {}", r.observed_effects.unwrap_or(0), r.trace)),
        ),
        (None, None, Some(r)) => (Status::Warning, Some(format!("Not testable: {} ({})", r.reason, r.trace))),
        (None, None, None) if runs.is_empty() => {
            (Status::Warning, Some("Not testable: the model has no counterexample here".into()))
        }
        (None, None, None) => (Status::Success, None),
    };
    let details = json!({
        "untestable": status == Status::Warning,
        "replays": runs.iter().map(|r| json!({
            "trace": r.trace, "verdict": r.verdict, "expected_effects": r.expected_effects,
            "observed_effects": r.observed_effects, "reason": r.reason, "evidence": r.evidence,
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

/// The SEP-3182 citations for key checks, from the built-in profile.
fn sep_3182_refs() -> Vec<SpecReference> {
    match Profile::load("sep-3182") {
        Ok(p) => {
            let k = &p.knobs;
            let mut out = Vec::new();
            for c in [
                &k.idempotency_key.cite,
                &k.idempotency_semantics.cite,
                &k.idempotency_in_progress.cite,
                &k.idempotency_conflict.cite,
                &k.idempotency_retention.cite,
            ] {
                let r = reference(c);
                if !out.iter().any(|x: &SpecReference| x.id == r.id) {
                    out.push(r);
                }
            }
            out
        }
        Err(_) => Vec::new(),
    }
}

/// A small session-level script for the key checks.
struct KeyProbe {
    session: Session,
    nonce: String,
    next_id: u64,
    baseline: f64,
}

impl KeyProbe {
    async fn start(options: &ReplayOptions, revision: Revision, sub: &str) -> Result<KeyProbe, String> {
        let evidence = evidence_for(options, sub)?;
        let mut session = Session::new(options.clone(), revision, evidence);
        session.start().await.map_err(|e| format!("the server did not start: {e}"))?;
        let baseline = session.read_stable().await?;
        let nonce = format!(
            "mcp-once-probe-{:x}-{:x}",
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        );
        Ok(KeyProbe { session, nonce, next_id: 1, baseline })
    }

    fn key(&self, name: &str) -> String {
        format!("{}-{name}", self.nonce)
    }

    async fn send(
        &mut self,
        key: &str,
        hold: Hold,
        args: Option<serde_json::Map<String, Value>>,
    ) -> Result<Value, String> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut msg = self.session.call_message(&id, Some(key), hold, std::time::Duration::ZERO);
        if let Some(a) = args {
            let mut merged = a;
            if let Some(Value::Object(orig)) = msg.pointer("/params/arguments") {
                for (k, v) in orig {
                    if k.starts_with("delay_") || !merged.contains_key(k) {
                        merged.insert(k.clone(), v.clone());
                    }
                }
            }
            msg["params"]["arguments"] = Value::Object(merged);
        }
        self.session.send(&msg).await?;
        Ok(id)
    }

    async fn response(&mut self, id: &Value) -> Result<Value, String> {
        let deadline = Instant::now() + self.session.opts.step_timeout + self.session.opts.window * 2;
        let gen = self.session.generation();
        let seen = self
            .session
            .wait_until(deadline, async |s| {
                if let Some(r) = s.responses_for(gen, id).first() {
                    return Some(Ok(r.clone()));
                }
                if let Some(f) = s.failure_for(gen, id) {
                    return Some(Err(format!("request {id} failed: {f}")));
                }
                let c = s.closed(gen)?;
                Some(Err(format!("request {id}: {c}")))
            })
            .await;
        seen.unwrap_or_else(|| Err(format!("no response to request {id} within the bound")))
    }

    async fn call(&mut self, key: &str, args: Option<serde_json::Map<String, Value>>) -> Result<Value, String> {
        let id = self.send(key, Hold::default(), args).await?;
        self.response(&id).await
    }

    async fn effects(&mut self) -> Result<i64, String> {
        effects(&mut self.session, self.baseline).await
    }
}

/// Effects counted since `baseline`, from a settled reading.
async fn effects(session: &mut Session, baseline: f64) -> Result<i64, String> {
    let r = session.read_stable().await?;
    session.opts.observer.effects(baseline, r)
}

fn is_rejection(resp: &Value) -> bool {
    resp.get("error").is_some() || resp.pointer("/result/isError") == Some(&Value::Bool(true))
}

fn result_part(resp: &Value) -> Value {
    let r = resp.get("result").cloned().unwrap_or(Value::Null);
    json!({"content": r.get("content"), "structuredContent": r.get("structuredContent"), "isError": r.get("isError")})
}

/// Another set of arguments for the conflict check: the first number changed, or an extra field.
fn other_args(args: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    let mut out = args.clone();
    if let Some((k, v)) = args.iter().find(|(_, v)| v.is_number()) {
        out.insert(k.clone(), json!(v.as_f64().unwrap_or(0.0) + 1.0));
    } else {
        out.insert("mcp_once_variant".into(), json!(1));
    }
    out
}

type KeyOutcome = Result<(Status, Option<String>, Value), String>;

async fn completed_key_replay(p: &mut KeyProbe) -> KeyOutcome {
    let key = p.key("completed");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    let second = p.call(&key, None).await?;
    let after_second = p.effects().await?;
    let details = json!({"effects_after_first": after_first, "effects_after_second": after_second, "first": first, "second": second});
    if is_rejection(&first) {
        return Ok((
            Status::Warning,
            Some(format!("Not testable: the first call with a key failed: {first}")),
            details,
        ));
    }
    if after_second > after_first {
        return Ok((
            Status::Failure,
            Some(format!("the second call with the same key ran again ({after_second} effects)")),
            details,
        ));
    }
    if result_part(&first) != result_part(&second) {
        return Ok((
            Status::Failure,
            Some("the second call ran nothing but did not return the stored result".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn in_progress_rejected(p: &mut KeyProbe) -> KeyOutcome {
    if !p.session.pace_args {
        return Ok((
            Status::Warning,
            Some("Not testable: the tool takes no delay argument, so the runner cannot keep a call in progress".into()),
            json!({}),
        ));
    }
    let key = p.key("in-progress");
    // Held after its commit: once its effect is seen, the first call has surely taken the key
    // and is still running, whatever order the server scheduled things in.
    let first = p.send(&key, Hold { before_commit: false, before_respond: true }, None).await?;
    let deadline = Instant::now() + p.session.opts.step_timeout;
    let baseline = p.baseline;
    let seen = p
        .session
        .wait_until(deadline, async |s| match effects(s, baseline).await {
            Ok(n) if n < 1 => None,
            r => Some(r),
        })
        .await;
    seen.unwrap_or_else(|| Err("the first call's effect was not seen within the bound".into()))?;
    let second_id = p.send(&key, Hold::default(), None).await?;
    let second = p.response(&second_id).await?;
    let first_resp = p.response(&first).await?;
    let effects = p.effects().await?;
    // The first call's effect was seen before the duplicate was sent, so the duplicate is the
    // one a server must reject.
    let details = json!({"effects": effects, "first": first_resp, "duplicate": second});
    if effects > 1 {
        return Ok((
            Status::Failure,
            Some(format!("the duplicate ran while the first was in progress ({effects} effects)")),
            details,
        ));
    }
    if !is_rejection(&second) {
        return Ok((
            Status::Failure,
            Some(
                "the duplicate was not rejected while the first was in progress (it was answered as a success)".into(),
            ),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn conflict_rejected(p: &mut KeyProbe) -> KeyOutcome {
    let key = p.key("conflict");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    let changed = other_args(&p.session.opts.args);
    let second = p.call(&key, Some(changed.clone())).await?;
    let after_second = p.effects().await?;
    let details = json!({"effects_after_first": after_first, "effects_after_second": after_second, "other_arguments": changed, "second": second});
    if is_rejection(&first) {
        return Ok((
            Status::Warning,
            Some(format!("Not testable: the first call with a key failed: {first}")),
            details,
        ));
    }
    if after_second > after_first {
        return Ok((Status::Failure, Some("the same key with other arguments ran again".into()), details));
    }
    if !is_rejection(&second) {
        return Ok((
            Status::Failure,
            Some("the same key with other arguments was answered as a success, not rejected".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn survives_restart(p: &mut KeyProbe) -> KeyOutcome {
    if !p.session.can_restart() {
        return Ok((
            Status::Warning,
            Some("Not testable: give --launch so the runner can restart the server".into()),
            json!({}),
        ));
    }
    if !p.session.opts.observer.outside_server() {
        return Ok((
            Status::Warning,
            Some("Not testable: a tool observer may lose its count with the process; use ledger: or cmd:".into()),
            json!({}),
        ));
    }
    let key = p.key("restart");
    let first = p.call(&key, None).await?;
    let before = p.effects().await?;
    p.session.kill().await?;
    p.session.start().await.map_err(|e| format!("the server did not come back: {e}"))?;
    let second = p.call(&key, None).await?;
    let after = p.effects().await?;
    let details = json!({"effects_before_restart": before, "effects_after_retry": after, "first": first, "after_restart": second});
    if after > before {
        return Ok((
            Status::Failure,
            Some("dedup does not survive a restart: the same key ran again after SIGKILL and restart".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn key_checks(options: &ReplayOptions, revision: Revision) -> Vec<CheckRecord> {
    let refs = sep_3182_refs();
    let checks: [(&str, &str, &str); 4] = [
        (
            "sep-3182-completed-key-replay",
            "Completed key replays the stored result",
            "A second call with the key of a completed call returns the stored result and runs nothing",
        ),
        (
            "sep-3182-in-progress-rejected",
            "In-progress duplicate rejected",
            "A call with the key of a call still running is rejected and not run",
        ),
        (
            "sep-3182-key-conflict",
            "Same key, other arguments rejected",
            "A call that reuses a key with other arguments is rejected and not run",
        ),
        (
            "sep-3182-survives-restart",
            "Dedup survives a restart",
            "A call with the key of a completed call still runs nothing after the server is SIGKILLed and restarted",
        ),
    ];
    let mut out = Vec::new();
    for (i, (id, name, description)) in checks.iter().enumerate() {
        let outcome: KeyOutcome = async {
            let mut p = KeyProbe::start(options, revision, id).await?;
            let r = match i {
                0 => completed_key_replay(&mut p).await,
                1 => in_progress_rejected(&mut p).await,
                2 => conflict_rejected(&mut p).await,
                _ => survives_restart(&mut p).await,
            };
            p.session.shutdown().await;
            r
        }
        .await;
        let (status, error, mut details) =
            outcome.unwrap_or_else(|e| (Status::Warning, Some(format!("Not testable: {e}")), json!({})));
        details["untestable"] = json!(status == Status::Warning);
        out.push(CheckRecord {
            id: id.to_string(),
            name: name.to_string(),
            description: description.to_string(),
            status,
            timestamp: now_rfc3339(),
            spec_references: refs.clone(),
            details,
            error_message: error,
        });
    }
    out
}

/// Run the probe: the scenario catalogue for the revision and transport, then (with a key
/// placement) the SEP-3182 checks.
pub async fn probe(options: ReplayOptions, key_checks_on: bool) -> Result<Vec<CheckRecord>, String> {
    let revision = options.revision.unwrap_or(Revision::R2025_11_25);
    let profile_name = match revision {
        Revision::R2025_11_25 => "mcp-2025-11-25",
        Revision::R2026_07_28 => "mcp-2026-07-28",
    };
    let profile = Profile::load(profile_name).map_err(|e| e.to_string())?;
    let mut opts = options.clone();
    opts.revision = Some(revision_for(&options, &profile));
    let mut out = Vec::new();
    for s in &RETRY_SCENARIOS {
        out.push(scenario_check(s, &profile, &opts).await);
    }
    if key_checks_on {
        let sep = Profile::load("sep-3182").map_err(|e| e.to_string())?;
        out.push(scenario_check(&KEYED_RETRY, &sep, &opts).await);
        out.extend(key_checks(&opts, revision).await);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_a_trace_per_scenario_on_both_transports() {
        let profile = Profile::load("mcp-2025-11-25").unwrap();
        for t in [mcp_once_model::Transport::Stdio, mcp_once_model::Transport::Http] {
            for s in &RETRY_SCENARIOS {
                let traces = scenario_traces(s, &profile, t).unwrap();
                assert!(!traces.is_empty(), "{} over {}", s.check_id, t.as_str());
                assert!(traces.iter().all(|(_, _, refs)| !refs.is_empty()), "{} cites its rules", s.check_id);
            }
            let keyed = scenario_traces(&KEYED_RETRY, &Profile::load("sep-3182").unwrap(), t).unwrap();
            assert!(!keyed.is_empty(), "keyed scenario over {}", t.as_str());
        }
    }
}
