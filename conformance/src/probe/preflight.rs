//! The probe's preflight: before any check, the runner makes sure a check could show something.
//! It starts the server once (handshake, the tool listed and its schema read), takes one settled
//! observer reading, and makes one plain call of the tool with the given arguments, which must
//! move the observer by exactly one effect (a tool that asks for input before any effect has
//! its input rounds answered first). A server that refuses the call, or runs it without a
//! visible effect, has shown nothing about retries: every check it would feed is untestable, with
//! the preflight's reason, and none can be a SUCCESS. With a key placement it also makes one
//! keyed call, so that a server that only takes keyed calls can still have its keys checked.

use crate::replay::continuation::{continuation_params, input_required};
use crate::replay::evidence::Evidence;
use crate::replay::message::{self, Logical};
use crate::replay::pacing::Hold;
use crate::replay::session::{NonJsonLines, Session};
use crate::replay::step::{is_refusal, summarize};
use crate::replay::types::{KeyAt, ReplayOptions, Revision};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// What the preflight found.
#[derive(Clone, Debug)]
pub struct Preflight {
    /// The tool as `tools/list` gave it (name, description, input schema).
    pub tool: Value,
    /// Whether the tool takes the fixtures' delay arguments.
    pub pace_args: bool,
    /// Why unkeyed checks cannot be tested (the plain call was refused or moved the observer
    /// by other than one effect), if so.
    pub keyless: Result<(), String>,
    /// Why keyed checks cannot be tested, if so (`None` without a key placement).
    pub keyed: Option<Result<(), String>>,
    /// One line per finding, in order, for the report.
    pub findings: Vec<String>,
    /// stdio: the lines of stdout that were not JSON, skipped (`--skip-non-json`).
    pub non_json: NonJsonLines,
    /// Whether the plain call was answered with an input-required result (2026-07-28): the
    /// tool asks for input.
    pub asks_input: bool,
}

impl Preflight {
    /// The names of the arguments the tool's input schema declares.
    pub fn declared_args(&self) -> Vec<String> {
        self.tool
            .pointer("/inputSchema/properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}

/// Whether a preflight finding says the server does not implement keys where they are sent
/// (then the key checks fail, rather than being untestable).
pub fn not_implemented(finding: &str) -> bool {
    finding.starts_with(NOT_IMPLEMENTED)
}

const NOT_IMPLEMENTED: &str = "not implemented";

/// Await the response to the runner's request `id` on the current connection, within the step
/// bound (and two pacing windows).
pub(crate) async fn await_response(session: &mut Session, id: &Value) -> Result<Value, String> {
    let deadline = Instant::now() + session.opts.step_timeout + session.opts.window * 2;
    let gen = session.generation();
    let seen = session
        .wait_until(deadline, async |s| {
            if let Some(r) = s.responses_for(gen, id).first() {
                return Some(Ok(r.clone()));
            }
            if let Some(f) = s.failure_for(gen, id) {
                return Some(Err(format!("the request failed: {f}")));
            }
            let c = s.closed(gen)?;
            Some(Err(format!("{c}{}", s.breach_note())))
        })
        .await;
    let ms = (session.opts.step_timeout + session.opts.window * 2).as_millis();
    seen.unwrap_or_else(|| Err(format!("no answer within {ms} ms{}", session.stall_note())))
}

/// The most input rounds the preflight answers before it judges a call.
const MAX_INPUT_ROUNDS: usize = 3;

/// One call of the tool (with `key`, if given): its first answer, its last, and the effects it
/// moved the observer by from `before`. A tool that asks for input before taking any effect is
/// answered (its continuations sent, with the requestState echoed) until it completes, so that
/// a tool whose effect lies behind an input round shows it; one that took its effect before
/// asking is judged on that first answer.
async fn one_call(
    session: &mut Session,
    id: &str,
    key: Option<&str>,
    before: f64,
) -> Result<(Value, Value, i64), String> {
    let first = one_request(session, id, key, before, None).await?;
    let mut last = first.clone();
    for round in 1..=MAX_INPUT_ROUNDS {
        let Some(result) = input_required(&last) else { break };
        let now = session.read_stable().await.map_err(|e| format!("the observer: {e}"))?;
        if session.opts.observer.effects(before, now)? != 0 {
            break;
        }
        let extra = continuation_params(result);
        last = one_request(session, &format!("{id}-round-{round}"), key, before, Some(extra)).await?;
    }
    let after = session.read_stable().await.map_err(|e| format!("the observer: {e}"))?;
    // What the server wrote with its answer (a second answer to the same id) is taken in
    // before the call is judged, so that a breach is named with it.
    session.settle().await;
    let moved = session.opts.observer.effects(before, after)?;
    Ok((first, last, moved))
}

/// One `tools/call` request of [`one_call`] (with a continuation's `extra` params) and its answer.
async fn one_request(
    session: &mut Session,
    id: &str,
    key: Option<&str>,
    before: f64,
    extra: Option<serde_json::Map<String, Value>>,
) -> Result<Value, String> {
    let tag = format!("{id}-{:x}", std::process::id());
    let id = json!(id);
    let mut msg = session.call_message(&id, Logical { key, tag: &tag }, Hold::default(), Duration::ZERO);
    if let (Some(extra), Some(params)) = (extra, msg.get_mut("params").and_then(Value::as_object_mut)) {
        params.extend(extra);
    }
    session.send(&msg).await?;
    match await_response(session, &id).await {
        Ok(a) => Ok(a),
        Err(e) => {
            let reading = session.read_stable().await.ok();
            let moved = reading.and_then(|r| session.opts.observer.effects(before, r).ok());
            let effect = match moved {
                Some(0) => "no effect".to_string(),
                Some(n) => format!("{n} effect(s)"),
                None => "an effect the observer could not read".to_string(),
            };
            Err(format!("one call of the tool with the given arguments: {effect} and {e}"))
        }
    }
}

/// Whether one call's outcome shows one effect: `Err` names what the server did instead.
fn judge(what: &str, answer: &Value, moved: i64) -> Result<(), String> {
    match (is_refusal(answer), moved) {
        (false, 1) => Ok(()),
        (true, 0) => Err(format!("{what} was refused ({}) and took no effect", summarize(answer))),
        (true, n) => Err(format!("{what} was refused ({}) yet moved the observer by {n} effects", summarize(answer))),
        (false, 0) => Err(format!(
            "{what} was answered ({}) but the observer did not move: the observer does not see this tool's effect, or the tool took none",
            summarize(answer)
        )),
        (false, n) => Err(format!(
            "{what} moved the observer by {n} effects, not one (is --observe-step right?): answer {}",
            summarize(answer)
        )),
    }
}

/// Run the preflight. `Err` is a setup error that leaves nothing testable: the server did not
/// start, has no such tool, or the observer cannot be read.
pub async fn preflight(
    options: &ReplayOptions,
    revision: Revision,
    evidence: Evidence,
    keyed: bool,
) -> Result<Preflight, String> {
    let mut session = Session::new(options.clone(), revision, evidence);
    // The preflight finds out whether the tool asks for input: the client says it can be asked.
    session.capabilities = message::input_capabilities();
    let result = run(&mut session, keyed).await;
    session.shutdown().await;
    result
}

async fn run(session: &mut Session, keyed: bool) -> Result<Preflight, String> {
    session.start().await.map_err(|e| e.sentence())?;
    let tool = session.tool.clone().unwrap_or(Value::Null);
    let mut findings = vec![format!("the server started and lists the tool `{}`", session.opts.tool)];
    let baseline = session.read_stable().await.map_err(|e| format!("the observer: {e}"))?;
    findings.push(format!("the observer reads {baseline} (two readings agree)"));
    let (answer, last, moved) = one_call(session, "mcp-once-preflight-plain", None, baseline).await?;
    let keyless = judge("one plain call of the tool with the given arguments", &last, moved)
        .map_err(|e| format!("{e}{}", session.breach_note()));
    findings.push(match &keyless {
        Ok(()) if last != answer => format!(
            "one plain call took exactly one effect once its input round was answered (answer {}, then {})",
            summarize(&answer),
            summarize(&last)
        ),
        Ok(()) => format!("one plain call took exactly one effect (answer {})", summarize(&answer)),
        Err(e) => e.clone(),
    });
    let keyed = if keyed {
        let declared = tool.pointer("/inputSchema/properties").and_then(Value::as_object);
        let outcome = match &session.opts.key_at {
            KeyAt::Arg(name) if !declared.is_some_and(|p| p.contains_key(name)) => Err(format!(
                "{NOT_IMPLEMENTED}: the tool's input schema declares no `{name}` argument, so a key sent there is dropped (--key-at arg:{name})"
            )),
            _ => {
                let before = session.read_stable().await.map_err(|e| format!("the observer: {e}"))?;
                let key = format!("mcp-once-preflight-{:x}", std::process::id());
                let (_, last, moved) = one_call(session, "mcp-once-preflight-keyed", Some(&key), before).await?;
                judge("one call carrying a fresh idempotency key", &last, moved)
                    .map_err(|e| format!("{e}{}", session.breach_note()))
            }
        };
        findings.push(match &outcome {
            Ok(()) => "one keyed call took exactly one effect".to_string(),
            Err(e) => e.clone(),
        });
        Some(outcome)
    } else {
        None
    };
    let asks_input = input_required(&answer).is_some();
    if asks_input {
        findings.push(
            "the tool asks for input (its answer is input-required): the input-round checks run (under 2026-07-28)"
                .into(),
        );
    }
    Ok(Preflight {
        tool,
        pace_args: session.pace_args,
        keyless,
        keyed,
        findings,
        non_json: session.conduct.non_json.clone(),
        asks_input,
    })
}
