//! The end of a replay (an `impl` of [`Driver`] apart from its steps): each logical call's
//! outcome gathered from the run (what the client was told, from the responses read and the
//! client steps driven; its effects, from the ledger lines of this run) and the trace's own
//! property judged on them ([`judge`]).

use crate::replay::driver::Driver;
use crate::replay::judge::{self, CallOutcome, Judgement, Told};
use crate::replay::observed::{Counted, Observed};
use crate::replay::observer::{read_ledger_lines, Source};
use crate::replay::step::{answer, is_refusal, summarize};
use crate::replay::types::ReplayVerdict;
use mcp_once_model::state::{Failure, Phase};
use mcp_once_model::PropertyKind;
use serde_json::Value;

impl Driver<'_> {
    /// The verdict on the trace's property once every step was realised and the observer counts
    /// `n` effects in all. `None` for the worst case, and for at-most-once when the effects
    /// cannot be told apart by call: the effect count decides those.
    pub(crate) async fn judge_property(&mut self, n: i64) -> Option<Judgement> {
        let property = self.script.trace.property.property()?;
        let valid = self.script.trace.validate(&self.script.name, &self.script.profile).ok()?;
        let last = valid.path.states.last()?.clone();
        let calls = usize::from(valid.model.config.bounds.calls);
        let effects = self.effects_per_call(calls, n).await;
        if let Err(why) = &effects {
            if property == PropertyKind::AtMostOnce {
                self.note(format!("effects counted in all, not per call: {why}"));
                return None;
            }
        }
        let mut outcomes = Vec::new();
        for c in 0..calls {
            let call = last.calls[c];
            let response = last.latest(c).and_then(|a| match self.task_calls() {
                true => self.told_answer((c as u8, a as u8)),
                false => answer(&self.attempts.sent, &self.session, (c as u8, a as u8)),
            });
            let from_response = || match &response {
                Some(r) if is_refusal(r) => (Told::Failure, format!("answered {}", summarize(r))),
                Some(r) => (Told::Success, format!("answered {}", summarize(r))),
                None => (Told::Nothing, "no response was read".to_string()),
            };
            // The latest attempt's own failure, if it had one (a write to a server that was down).
            let failed = last
                .latest(c)
                .and_then(|a| self.attempts.sent.get(&(c as u8, a as u8)))
                .and_then(|s| self.session.failure_for(s.gen, &s.id))
                .map(str::to_string);
            let (told, detail) = match (call.phase, call.failure) {
                (Phase::Succeeded, _) if self.script.told_by_query(c) => {
                    (Told::Success, "the outcome query (tasks/get) answered completed, with the stored result".into())
                }
                (Phase::Succeeded, _) | (Phase::Failed, Failure::ErrorReply) => from_response(),
                (Phase::Failed, Failure::Timeout) => (Told::Failure, "the client timed out".into()),
                (Phase::Failed, Failure::Disconnect) => match failed {
                    Some(f) => (Told::Failure, format!("the client was told its request failed: {f}")),
                    None => (Told::Failure, "the client saw its connection close or its stream break".into()),
                },
                (Phase::Failed, Failure::StepError) => {
                    (Told::Failure, "the framework step failed after the call returned".into())
                }
                (Phase::Failed, Failure::None) => (Told::Failure, "the call failed".into()),
                (Phase::Idle, _) => (Told::Nothing, "the call was never made".into()),
                (Phase::Waiting | Phase::CancelPending, _) => (Told::Nothing, "the client still waits".into()),
                (Phase::InputRequired, _) => {
                    (Told::Nothing, "the client was asked for input and has not sent the continuation".into())
                }
            };
            outcomes.push(CallOutcome {
                call: c,
                told,
                for_good: valid.model.finally_failed(&last, c),
                effects: effects.as_ref().ok().map(|e| e[c]),
                detail,
            });
        }
        let mut judged = judge::judge(property, &outcomes);
        if let (Err(why), ReplayVerdict::Inconclusive) = (&effects, judged.verdict) {
            judged.reason = format!("{} ({why})", judged.reason);
        }
        Some(judged)
    }

    /// The facts of the run once `n` effects are counted in all: per call where the ledger's
    /// call tags (or a single call) tell them apart, else in all; and per call whether the
    /// client read a final success answer to any of its attempts.
    pub(crate) async fn observed(&mut self, n: i64) -> Option<Observed> {
        let calls = usize::from(self.script.trace.config.bounds.calls);
        let effects = u64::try_from(n).ok()?;
        let counted = match self.effects_per_call(calls, n).await {
            Ok(per_call) => Counted::PerCall(per_call),
            Err(_) => Counted::InAll { effects, calls },
        };
        let told_success = (0..calls)
            .map(|c| {
                let mine = self.attempts.sent.keys().filter(|(call, _)| usize::from(*call) == c);
                mine.filter_map(|a| self.told_answer(*a)).any(|r| is_final_success(&r))
            })
            .collect();
        Some(Observed { counted, told_success })
    }

    /// Effects per logical call: with one call, all `n`; otherwise from the ledger lines of this
    /// run (those after the baseline), by the call tag each carries.
    async fn effects_per_call(&mut self, calls: usize, n: i64) -> Result<Vec<u64>, String> {
        if calls == 1 {
            return Ok(vec![u64::try_from(n).map_err(|_| format!("{n} effects"))?]);
        }
        let Source::Ledger { path, filter } = &self.session.opts.observer.source else {
            return Err("the observer is not a ledger, so its effects carry no call".into());
        };
        if self.session.opts.observer.step != 1.0 {
            return Err("the ledger observer counts other than one line per effect".into());
        }
        let lines = read_ledger_lines(path, filter.as_ref()).await?;
        let skip = self.baseline.max(0.0) as usize;
        let tags: Vec<String> = (0..calls).map(|c| self.script.call_tag(c as u8)).collect();
        judge::attribute(lines.get(skip..).unwrap_or_default(), &tags)
    }
}

/// Whether `resp` is a final success: neither an error nor `isError`, nor an MRTR
/// input-required answer.
fn is_final_success(resp: &Value) -> bool {
    !is_refusal(resp) && resp.pointer("/result/resultType").and_then(Value::as_str) != Some("input_required")
}
