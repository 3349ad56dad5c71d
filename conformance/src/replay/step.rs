//! How a driver step ends, and what it acts on: [`Done`] (the step's status and note) or
//! [`StepError`] (what ended the replay, and so its verdict), the attempts as sent, responses
//! matched to attempts, and the awaited commit's check.

use crate::replay::pacing::AttemptId;
use crate::replay::session::Session;
use crate::replay::types::{ReplayVerdict, StepStatus};
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// Why a step ended the replay before its last step. Each kind leads to one verdict
/// ([`StepError::verdict`]); the text says what happened, for the report only.
#[derive(Debug)]
pub enum StepError {
    /// The server did something the trace does not, so the trace was not realised: `diverged`.
    Diverged(String),
    /// The runner cannot establish what happened (the observer failed, or what the trace needs
    /// cannot be seen on this server): `inconclusive`.
    CannotTell(String),
    /// A fault the trace needs could not be made (a reply came before a stream could break):
    /// `inconclusive`, and the replay records why.
    FaultNotMade(String),
    /// The violating attempt was answered without the side effect the violation needs: the
    /// server did not run the duplicate, `not-reproduced`.
    NoEffect(String),
}

impl StepError {
    /// A [`StepError::Diverged`].
    pub fn diverged(reason: impl Into<String>) -> StepError {
        StepError::Diverged(reason.into())
    }

    /// A [`StepError::CannotTell`].
    pub fn cannot_tell(reason: impl Into<String>) -> StepError {
        StepError::CannotTell(reason.into())
    }

    /// A [`StepError::FaultNotMade`].
    pub fn fault_not_made(reason: impl Into<String>) -> StepError {
        StepError::FaultNotMade(reason.into())
    }

    /// A [`StepError::NoEffect`].
    pub fn no_effect(reason: impl Into<String>) -> StepError {
        StepError::NoEffect(reason.into())
    }

    /// The verdict this ending leads to.
    pub fn verdict(&self) -> ReplayVerdict {
        match self {
            StepError::Diverged(_) => ReplayVerdict::Diverged,
            StepError::CannotTell(_) | StepError::FaultNotMade(_) => ReplayVerdict::Inconclusive,
            StepError::NoEffect(_) => ReplayVerdict::NotReproduced,
        }
    }

    /// What happened, in one line.
    pub fn reason(&self) -> &str {
        match self {
            StepError::Diverged(r) | StepError::CannotTell(r) | StepError::FaultNotMade(r) | StepError::NoEffect(r) => {
                r
            }
        }
    }

    /// What happened, in one line, taken out.
    pub fn into_reason(self) -> String {
        match self {
            StepError::Diverged(r) | StepError::CannotTell(r) | StepError::FaultNotMade(r) | StepError::NoEffect(r) => {
                r
            }
        }
    }
}

/// One attempt as the runner sent it.
#[derive(Clone, Debug)]
pub struct Sent {
    /// The request id.
    pub id: Value,
    /// The connection it went on.
    pub gen: u32,
    /// Its place among all attempts sent.
    pub order: usize,
    /// Whether the client cancelled it.
    pub cancelled: bool,
    /// Whether its response stream was closed (HTTP).
    pub stream_closed: bool,
}

/// A response in one short line: the error, or the tool result's text.
pub fn summarize(resp: &Value) -> String {
    if let Some(e) = resp.get("error") {
        return format!("error {}", e);
    }
    let r = resp.get("result").cloned().unwrap_or(Value::Null);
    if r.get("resultType").and_then(Value::as_str) == Some("input_required") {
        let asked: Vec<&str> = r
            .get("inputRequests")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let state = if r.get("requestState").is_some() { "with a requestState" } else { "no requestState" };
        return format!("input required (asks [{}], {state})", asked.join(", "));
    }
    let text: Vec<&str> = r
        .get("content")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(|x| x.get("text").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let mut s = if text.is_empty() { r.to_string() } else { format!("\"{}\"", text.join(" ")) };
    if r.get("isError") == Some(&Value::Bool(true)) {
        s = format!("tool error {s}");
    }
    if s.len() > 160 {
        let mut cut = 160;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// What a step did: how it was realised, and what the runner saw or did.
pub struct Done {
    /// How it was realised.
    pub status: StepStatus,
    /// What the runner saw or did.
    pub note: String,
}

impl Done {
    /// A step driven, with its note.
    pub fn driven(note: impl Into<String>) -> Done {
        Done { status: StepStatus::Driven, note: note.into() }
    }

    /// A step observed, with its note.
    pub fn observed(note: impl Into<String>) -> Done {
        Done { status: StepStatus::Observed, note: note.into() }
    }

    /// A step delivered, with its note.
    pub fn delivered(note: impl Into<String>) -> Done {
        Done { status: StepStatus::Delivered, note: note.into() }
    }

    /// A step unobserved, with its note.
    pub fn unobserved(note: impl Into<String>) -> Done {
        Done { status: StepStatus::Unobserved, note: note.into() }
    }
}

/// The response to attempt `a`: responses to one id on one connection are matched to its
/// attempts in the order they were sent.
pub fn answer(sent: &BTreeMap<AttemptId, Sent>, session: &Session, a: AttemptId) -> Option<Value> {
    let s = sent.get(&a)?;
    let position = sent.values().filter(|o| o.gen == s.gen && o.id == s.id && o.order < s.order).count();
    session.responses_for(s.gen, &s.id).get(position).cloned()
}

/// The commit a driver awaits: the effects the trace has once it is done, and whether it is the
/// trace's violating step (the first commit that takes a call past one effect) or after it.
#[derive(Clone, Copy, Debug)]
pub struct Commit {
    /// Effects of the trace once this commit is done.
    pub expected: u64,
    /// Whether this is the commit that violates the property, or one after it.
    pub violating: bool,
}

/// Whether a response refuses the call: a JSON-RPC error or a tool result with `isError: true`.
pub fn is_refusal(resp: &Value) -> bool {
    resp.get("error").is_some() || resp.pointer("/result/isError") == Some(&Value::Bool(true))
}

/// One look for attempt `a`'s effect (`ServerCommit`): done once the observer counts the
/// trace's expected effects, an error once the attempt can no longer show its effect, `None`
/// to wait on. `n` keeps the last count, for the message when the bound passes.
///
/// An attempt answered without its effect ends the replay: at the violating commit that is
/// `not-reproduced` (the server did not run the duplicate); at any earlier commit it is
/// `diverged`, since a step the violation needs did not happen, and a server that never ran the
/// effect has shown nothing about retries (no vacuous pass).
pub async fn commit_seen(
    session: &mut Session,
    sent: &BTreeMap<AttemptId, Sent>,
    baseline: f64,
    a: AttemptId,
    s: &Sent,
    want: Commit,
    n: &mut i64,
) -> Result<Option<Done>, StepError> {
    let Commit { expected, violating } = want;
    let counted = |n: i64| {
        Done::observed(if n > expected as i64 {
            format!("{n} effects observed, the trace has {expected} here")
        } else {
            format!("{n} effect(s) observed")
        })
    };
    let reading = session
        .read_stable()
        .await
        .map_err(|e| StepError::cannot_tell(format!("call {} attempt {}: {e}", a.0, a.1)))?;
    *n = session.opts.observer.effects(baseline, reading).map_err(StepError::cannot_tell)?;
    if *n >= expected as i64 {
        return Ok(Some(counted(*n)));
    }
    // A task's `CreateTaskResult` comes before its effect: the answer awaited is the task's.
    if let Some(r) = answer(sent, session, a).filter(|r| !crate::replay::task_wire::is_task_handle(r)) {
        // The answer came: a fresh reading must show the effect for it now.
        let again = session.read_stable().await.map_err(StepError::cannot_tell)?;
        let m = session.opts.observer.effects(baseline, again).map_err(StepError::cannot_tell)?;
        if m < expected as i64 && violating {
            return Err(StepError::no_effect(format!("call {} attempt {} was answered ({}) and the observer counts {m} effect(s) where the trace has {expected}: the server did not run the side effect the violation needs", a.0, a.1, summarize(&r))));
        }
        if m < expected as i64 {
            let how = if is_refusal(&r) { "refused" } else { "answered" };
            return Err(StepError::diverged(format!("call {} attempt {} was {how} ({}) and the observer counts {m} effect(s) where the trace has {expected}: an effect the trace needs before its violating step did not happen, so the trace was not realised", a.0, a.1, summarize(&r))));
        }
        *n = m;
        return Ok(Some(counted(m)));
    }
    if let Some(f) = session.failure_for(s.gen, &s.id).map(str::to_string) {
        // A cancelled request may end without a response; only others have failed.
        if !s.cancelled && !s.stream_closed {
            return Err(StepError::diverged(format!(
                "call {} attempt {}: the request failed before its effect was seen: {f}",
                a.0, a.1
            )));
        }
    }
    if let Some(why) = session.check_exit() {
        // What it wrote last (a partial frame) is read after it is reaped: take it in.
        session.await_closed(s.gen, Duration::from_secs(1)).await;
        return Err(StepError::diverged(format!(
            "call {} attempt {}: the server exited before its effect was seen ({why}){}",
            a.0,
            a.1,
            session.breach_note()
        )));
    }
    if let Some(c) = session.closed(s.gen).map(str::to_string) {
        // stdio: no answer can come on a closed stdout, so waiting out the bound tells nothing more.
        return Err(StepError::diverged(format!(
            "call {} attempt {}: {c} before its effect was seen{}",
            a.0,
            a.1,
            session.breach_note()
        )));
    }
    Ok(None)
}

/// Why attempt `a`'s effect was not seen within `bound` (`n` of `expected` effects counted).
pub fn commit_timeout(session: &Session, a: AttemptId, s: &Sent, bound: Duration, n: i64, expected: u64) -> StepError {
    let failed = match session.failure_for(s.gen, &s.id) {
        Some(f) => format!("; its request failed: {f}"),
        None if !s.stream_closed && session.has_headers(s.gen, &s.id) => {
            "; its response stream stayed open without a response".to_string()
        }
        None => String::new(),
    };
    let failed = match session.conduct.notifications() {
        0 => failed,
        k => format!("{failed}; the server sent {k} notification(s) meanwhile"),
    };
    let why = if s.cancelled {
        format!("; it was cancelled, and the server may have honoured that (the runner cannot tell a stopped call from a hung one){failed}")
    } else {
        failed
    };
    let garbage = session.stall_note();
    StepError::cannot_tell(format!(
        "call {} attempt {}: no effect and no answer within {} ms ({n} of {expected} effects){why}{garbage}",
        a.0,
        a.1,
        bound.as_millis()
    ))
}
