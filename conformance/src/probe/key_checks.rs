//! The SEP-3182 key checks of the probe: a completed key replays its stored result, a key in
//! progress is rejected, a key reused with other arguments is rejected, and the store survives a
//! SIGKILL and restart. Each runs on a server of its own, after the preflight showed that one
//! keyed call takes exactly one effect.

use crate::probe::checks::{now_rfc3339, reference, CheckRecord, SpecReference, Status};
use crate::probe::other_args::other_args;
use crate::probe::preflight::{await_response, not_implemented, Preflight};
use crate::replay::evidence::Evidence;
use crate::replay::message::{call_args, Logical, CALL_PLACEHOLDER};
use crate::replay::pacing::Hold;
use crate::replay::session::Session;
use crate::replay::step::{is_refusal, summarize};
use crate::replay::types::{ReplayOptions, Revision};
use mcp_once_model::Profile;
use serde_json::{json, Value};
use std::time::SystemTime;
use tokio::time::Instant;

fn evidence_for(options: &ReplayOptions, sub: &str) -> Result<Evidence, String> {
    let dir = options.evidence_dir.as_ref().map(|d| d.join(sub));
    Evidence::new(dir.as_deref()).map_err(|e| format!("--evidence: {e}"))
}

/// The SEP-3182 citations for key checks, from the built-in profile.
pub fn sep_3182_refs() -> Vec<SpecReference> {
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
        session.start().await.map_err(|e| e.sentence())?;
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
        let logical = Logical { key: Some(key), tag: key };
        let mut msg = self.session.call_message(&id, logical, hold, std::time::Duration::ZERO);
        if let Some(a) = args {
            let mut merged = call_args(&a, logical);
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
        await_response(&mut self.session, id).await
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

fn result_part(resp: &Value) -> Value {
    let r = resp.get("result").cloned().unwrap_or(Value::Null);
    json!({"content": r.get("content"), "structuredContent": r.get("structuredContent"), "isError": r.get("isError")})
}

type KeyOutcome = Result<(Status, Option<String>, Value), String>;

async fn completed_key_replay(p: &mut KeyProbe) -> KeyOutcome {
    let key = p.key("completed");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    let second = p.call(&key, None).await?;
    let after_second = p.effects().await?;
    let details = json!({"effects_after_first": after_first, "effects_after_second": after_second, "first": first, "second": second});
    if is_refusal(&first) {
        return Ok((
            Status::Untestable,
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

/// How the in-progress check keeps its first call running: the tool's `delay_after_ms`
/// (pacing), or the user's `--hold-args`; None when neither can.
fn holding_args(p: &KeyProbe, declared: &[String]) -> Result<Option<serde_json::Map<String, Value>>, String> {
    match &p.session.opts.hold_args {
        Some(h) => {
            let undeclared: Vec<&str> = h.keys().filter(|k| !declared.contains(k)).map(String::as_str).collect();
            if !undeclared.is_empty() {
                return Err(format!(
                    "the tool's schema does not declare the --hold-args argument(s) {}, so the SDK would drop them and nothing would hold the call",
                    undeclared.join(", ")
                ));
            }
            let mut merged = p.session.opts.args.clone();
            merged.extend(h.clone());
            Ok(Some(merged))
        }
        None if p.session.pace_args => Ok(None),
        None => Err("the tool takes no delay argument and no --hold-args were given, so the runner cannot keep a call in progress".into()),
    }
}

/// Where the first call of the in-progress check stood when the runner looked.
enum FirstCall {
    /// Its effect is seen and its response has not come: it is in progress past its effect.
    Running,
    /// It answered before its effect was seen: nothing held it.
    Answered,
}

async fn in_progress_rejected(p: &mut KeyProbe, declared: &[String]) -> KeyOutcome {
    let args = match holding_args(p, declared) {
        Ok(a) => a,
        Err(e) => return Ok((Status::Untestable, Some(format!("Not testable: {e}")), json!({}))),
    };
    let held_by = if args.is_some() { "--hold-args" } else { "delay_after_ms" };
    let key = p.key("in-progress");
    // Held after its commit: once its effect is seen, the first call has surely taken the key
    // and is still running, whatever order the server scheduled things in.
    let first = p.send(&key, Hold { before_respond: true, ..Hold::default() }, args).await?;
    let deadline = Instant::now() + p.session.opts.step_timeout;
    let baseline = p.baseline;
    let gen = p.session.generation();
    let seen = p
        .session
        .wait_until(deadline, async |s| {
            if !s.responses_for(gen, &first).is_empty() {
                return Some(Ok(FirstCall::Answered));
            }
            match effects(s, baseline).await {
                Ok(n) if n < 1 => None,
                Ok(_) => Some(Ok(FirstCall::Running)),
                Err(e) => Some(Err(e)),
            }
        })
        .await;
    match seen.unwrap_or_else(|| Err("the first call's effect was not seen within the bound".into()))? {
        FirstCall::Running => {}
        FirstCall::Answered => {
            let why = format!(
                "Not testable: the first call was answered before its effect was seen, so {held_by} did not keep it running after its effect"
            );
            return Ok((Status::Untestable, Some(why), json!({"held_by": held_by})));
        }
    }
    let second_id = p.send(&key, Hold::default(), None).await?;
    let second = p.response(&second_id).await?;
    let first_resp = p.response(&first).await?;
    let effects = p.effects().await?;
    // The first call's effect was seen before the duplicate was sent, so the duplicate is the
    // one a server must reject.
    let details = json!({"effects": effects, "held_by": held_by, "first": first_resp, "duplicate": second});
    if effects > 1 {
        return Ok((
            Status::Failure,
            Some(format!("the duplicate ran while the first was in progress ({effects} effects)")),
            details,
        ));
    }
    if !is_refusal(&second) {
        // SEP-3182 says a server SHOULD reject it: unmet, that is a warning, not a failure (the
        // duplicate took no effect, so at-most-once held).
        return Ok((
            Status::Warning,
            Some(
                "SHOULD not met: the duplicate was answered as a success, not rejected, while the first was in progress (it took no effect)".into(),
            ),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

/// The same key with other arguments: rejected and not run. The other arguments are another
/// value the schema allows for one argument (`other_args.rs`), first proved acceptable by a
/// control call under a fresh key (it must succeed with one effect); only then is a refusal under
/// the reused key a conflict rejection, and not the server refusing those arguments anyway.
async fn conflict_rejected(p: &mut KeyProbe, schema: &Value) -> KeyOutcome {
    let (field, changed) = match other_args(&p.session.opts.args, schema, CALL_PLACEHOLDER) {
        Ok(x) => x,
        Err(e) => return Ok((Status::Untestable, Some(format!("Not testable: {e}")), json!({}))),
    };
    let key = p.key("conflict");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    if is_refusal(&first) {
        let details = json!({"first": first});
        return Ok((
            Status::Untestable,
            Some(format!("Not testable: the first call with a key failed: {first}")),
            details,
        ));
    }
    let control_key = p.key("conflict-control");
    let control = p.call(&control_key, Some(changed.clone())).await?;
    let after_control = p.effects().await?;
    let mut details = json!({"effects_after_first": after_first, "changed_argument": field, "other_arguments": changed, "control": control, "effects_after_control": after_control});
    if is_refusal(&control) || after_control != after_first + 1 {
        let how = if is_refusal(&control) {
            format!("refused them ({})", summarize(&control))
        } else {
            format!("took {} effect(s) for them", after_control - after_first)
        };
        return Ok((
            Status::Untestable,
            Some(format!("Not testable: under a fresh key the server {how}, so a refusal of `{field}` changed under the reused key would not show a key conflict")),
            details,
        ));
    }
    let second = p.call(&key, Some(changed)).await?;
    let after_second = p.effects().await?;
    details["second"] = second.clone();
    details["effects_after_second"] = json!(after_second);
    if after_second > after_control {
        return Ok((Status::Failure, Some("the same key with other arguments ran again".into()), details));
    }
    if !is_refusal(&second) {
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
            Status::Untestable,
            Some("Not testable: give --launch so the runner can restart the server".into()),
            json!({}),
        ));
    }
    if !p.session.opts.observer.outside_server() {
        return Ok((
            Status::Untestable,
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

/// The key checks: id, name, description.
pub const KEY_CHECKS: [(&str, &str, &str); 4] = [
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

/// The four SEP-3182 key checks, after a preflight whose keyed call showed one effect (any other
/// preflight outcome is reported on each check: a key argument the tool does not declare as a
/// failure, "not implemented"; anything else as untestable).
pub async fn key_checks(
    options: &ReplayOptions,
    revision: Revision,
    preflight: &Preflight,
    wanted: &dyn Fn(&str) -> bool,
) -> Vec<CheckRecord> {
    let refs = sep_3182_refs();
    let mut out = Vec::new();
    for (i, (id, name, description)) in KEY_CHECKS.iter().enumerate() {
        if !wanted(id) {
            continue;
        }
        let outcome: KeyOutcome = async {
            match &preflight.keyed {
                Some(Ok(())) => {}
                Some(Err(e)) if not_implemented(e) => {
                    return Ok((Status::Failure, Some(e.clone()), json!({})));
                }
                Some(Err(_)) => {
                    let why = "Not testable: the preflight's keyed call took no single effect (mcp-once-preflight)";
                    return Ok((Status::Untestable, Some(why.into()), json!({})));
                }
                None => {
                    return Ok((Status::Untestable, Some("Not testable: no key placement given".into()), json!({})))
                }
            }
            let mut p = KeyProbe::start(options, revision, id).await?;
            let r = match i {
                0 => completed_key_replay(&mut p).await,
                1 => in_progress_rejected(&mut p, &preflight.declared_args()).await,
                2 => conflict_rejected(&mut p, preflight.tool.get("inputSchema").unwrap_or(&Value::Null)).await,
                _ => survives_restart(&mut p).await,
            };
            p.session.shutdown().await;
            r
        }
        .await;
        let (status, error, mut details) =
            outcome.unwrap_or_else(|e| (Status::Untestable, Some(format!("Not testable: {e}")), json!({})));
        details["untestable"] = json!(status == Status::Untestable);
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
