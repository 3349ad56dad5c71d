//! The replay's judgement of the trace's own property, from evidence: what the client was told
//! for each logical call (a success result, a failure, nothing) against the effects the ledger
//! holds for that call.
//!
//! Each property is the model's predicate (`model/src/property.rs`) read on what really
//! happened: `at-most-once` fails when one call has two effects; `success-implies-effect` when
//! a call the client was told succeeded has none (it got another call's stored result, say);
//! `no-silent-effect` when a call reported failed for good has one; `exactly-once` when either
//! of the first two fails. A violation seen is `confirmed`; the property holding on facts all
//! established is `not-reproduced`; a fact the runner could not establish (which call an effect
//! belongs to) makes it `inconclusive`, never a pass.

use crate::replay::types::ReplayVerdict;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{McpModel, PropertyKind, State};
use serde_json::Value;
use std::fmt;

/// What the client was told about one logical call at the end of the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Told {
    /// A success result (a response that is neither a JSON-RPC error nor `isError`).
    Success,
    /// A failure: an error response, a timeout, a broken connection or stream, a failed step.
    Failure,
    /// Nothing yet: the client still waits (or the call was never made).
    Nothing,
}

impl fmt::Display for Told {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Told::Success => "told success",
            Told::Failure => "told failure",
            Told::Nothing => "told nothing",
        })
    }
}

/// One logical call as it ended on the real server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallOutcome {
    /// The call's number in the trace (0-based).
    pub call: usize,
    /// What the client was told.
    pub told: Told,
    /// For a failure: whether it is reported for good (no retry left, as the model has it).
    pub for_good: bool,
    /// Effects the observer attributes to this call (`None`: it cannot tell).
    pub effects: Option<u64>,
    /// What the client was told in words (the response, or the step that failed the call).
    pub detail: String,
}

/// The verdict on a property and why, in one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// confirmed, not-reproduced or inconclusive.
    pub verdict: ReplayVerdict,
    /// Why.
    pub reason: String,
}

fn judgement(verdict: ReplayVerdict, reason: String) -> Judgement {
    Judgement { verdict, reason }
}

/// The index of the first state of `path` where the trace's property fails (for the worst case:
/// where a call first has two effects). Commits before it are steps the violation needs; the
/// commit that reaches it, and any after, may be refused by a server that does better.
pub fn first_violation(model: &McpModel, kind: TraceKind, path: &[State]) -> Option<usize> {
    match kind.property() {
        Some(p) => path.iter().position(|s| !p.holds(model, s)),
        None => path.iter().position(|s| s.ledger.iter().any(|n| *n >= 2)),
    }
}

/// Whether some string in `v` contains `tag`.
fn mentions(v: &Value, tag: &str) -> bool {
    match v {
        Value::String(s) => s.contains(tag),
        Value::Array(a) => a.iter().any(|x| mentions(x, tag)),
        Value::Object(o) => o.values().any(|x| mentions(x, tag)),
        _ => false,
    }
}

/// Whether `options`' observer can tell which logical call an effect belongs to: a ledger whose
/// lines carry the call's tag, from `{{call}}` in the arguments. Without it, a run of several
/// calls is judged only where the counts alone decide.
pub fn tells_calls_apart(options: &crate::replay::types::ReplayOptions) -> bool {
    let tagged =
        serde_json::to_string(&options.args).is_ok_and(|a| a.contains(crate::replay::message::CALL_PLACEHOLDER));
    tagged && matches!(options.observer.source, crate::replay::observer::Source::Ledger { .. })
}

/// Effects per logical call from the ledger lines of this run: a line belongs to the call whose
/// tag (the `{{call}}` replacement in its arguments) it carries. `Err` when a line carries no
/// tag or several, so that the lines cannot be told apart.
pub fn attribute(lines: &[Value], tags: &[String]) -> Result<Vec<u64>, String> {
    let mut counts = vec![0u64; tags.len()];
    for (i, line) in lines.iter().enumerate() {
        let owners: Vec<usize> = (0..tags.len()).filter(|c| mentions(line, &tags[*c])).collect();
        match owners[..] {
            [c] => counts[c] += 1,
            [] => return Err(format!("effect {} of this run carries no call's tag", i + 1)),
            _ => return Err(format!("effect {} of this run carries several calls' tags", i + 1)),
        }
    }
    Ok(counts)
}

fn effects_text(n: Option<u64>) -> String {
    match n {
        Some(1) => "1 effect".into(),
        Some(n) => format!("{n} effects"),
        None => "an unknown number of effects".into(),
    }
}

/// Judge `property` on the calls' outcomes.
pub fn judge(property: PropertyKind, calls: &[CallOutcome]) -> Judgement {
    let unknown =
        "the observer cannot tell which call an effect belongs to (a ledger observer with `{{call}}` in --args can)";
    match property {
        // One client plays every call: nothing here can tell which caller an answer is for.
        PropertyKind::NoForeignReplay => judgement(
            ReplayVerdict::Inconclusive,
            "no-foreign-replay: the replay runner plays one caller, so it cannot present one key as two callers".into(),
        ),
        PropertyKind::AtMostOnce => {
            if let Some(c) = calls.iter().find(|c| c.effects.is_some_and(|n| n >= 2)) {
                return judgement(
                    ReplayVerdict::Confirmed,
                    format!("call {} took effect {} times (at-most-once)", c.call, c.effects.unwrap_or(0)),
                );
            }
            if calls.iter().any(|c| c.effects.is_none()) {
                return judgement(ReplayVerdict::Inconclusive, format!("at-most-once: {unknown}"));
            }
            judgement(ReplayVerdict::NotReproduced, "no call took effect more than once (at-most-once holds)".into())
        }
        PropertyKind::SuccessImpliesEffect => {
            let told: Vec<&CallOutcome> = calls.iter().filter(|c| c.told == Told::Success).collect();
            if let Some(c) = told.iter().find(|c| c.effects == Some(0)) {
                return judgement(
                    ReplayVerdict::Confirmed,
                    format!(
                        "call {} was told success ({}) and the ledger holds no effect of it (success-implies-effect)",
                        c.call, c.detail
                    ),
                );
            }
            if told.iter().any(|c| c.effects.is_none()) {
                return judgement(ReplayVerdict::Inconclusive, format!("success-implies-effect: {unknown}"));
            }
            if told.is_empty() {
                let said: Vec<String> =
                    calls.iter().map(|c| format!("call {} {} ({})", c.call, c.told, c.detail)).collect();
                return judgement(
                    ReplayVerdict::NotReproduced,
                    format!("no call was told success, so none succeeded without its effect: {}", said.join("; ")),
                );
            }
            let said: Vec<String> =
                told.iter().map(|c| format!("call {}: {}", c.call, effects_text(c.effects))).collect();
            judgement(
                ReplayVerdict::NotReproduced,
                format!("every call told success took effect ({}; success-implies-effect holds)", said.join(", ")),
            )
        }
        PropertyKind::NoSilentEffect => {
            let failed: Vec<&CallOutcome> = calls.iter().filter(|c| c.told == Told::Failure && c.for_good).collect();
            if let Some(c) = failed.iter().find(|c| c.effects.is_some_and(|n| n >= 1)) {
                return judgement(
                    ReplayVerdict::Confirmed,
                    format!(
                        "call {} was reported failed for good ({}) and took effect: {} (no-silent-effect)",
                        c.call,
                        c.detail,
                        effects_text(c.effects)
                    ),
                );
            }
            if failed.iter().any(|c| c.effects.is_none()) {
                return judgement(ReplayVerdict::Inconclusive, format!("no-silent-effect: {unknown}"));
            }
            if failed.is_empty() {
                return judgement(
                    ReplayVerdict::NotReproduced,
                    "no call was reported failed for good, so none failed silently".into(),
                );
            }
            judgement(
                ReplayVerdict::NotReproduced,
                "every call reported failed took no effect (no-silent-effect holds)".into(),
            )
        }
        PropertyKind::ExactlyOnce => {
            let once = judge(PropertyKind::AtMostOnce, calls);
            let success = judge(PropertyKind::SuccessImpliesEffect, calls);
            match (once.verdict, success.verdict) {
                (ReplayVerdict::Confirmed, _) => {
                    judgement(ReplayVerdict::Confirmed, format!("{} (exactly-once)", once.reason))
                }
                (_, ReplayVerdict::Confirmed) => {
                    judgement(ReplayVerdict::Confirmed, format!("{} (exactly-once)", success.reason))
                }
                (ReplayVerdict::NotReproduced, ReplayVerdict::NotReproduced) => {
                    judgement(ReplayVerdict::NotReproduced, format!("{}; {}", once.reason, success.reason))
                }
                _ => judgement(ReplayVerdict::Inconclusive, format!("exactly-once: {unknown}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outcome(call: usize, told: Told, for_good: bool, effects: Option<u64>) -> CallOutcome {
        CallOutcome { call, told, for_good, effects, detail: "x".into() }
    }

    #[test]
    fn lines_are_attributed_by_tag_or_not_at_all() {
        let tags = vec!["T-c0".to_string(), "T-c1".to_string()];
        let lines =
            vec![json!({"arguments": {"n": "T-c0"}}), json!({"arguments": {"n": ["T-c1"]}}), json!({"a": "T-c0"})];
        assert_eq!(attribute(&lines, &tags), Ok(vec![2, 1]));
        assert!(attribute(&[json!({"arguments": {}})], &tags).is_err());
        assert!(attribute(&[json!({"a": "T-c0 T-c1"})], &tags).is_err());
    }

    #[test]
    fn each_property_is_judged_on_its_own_facts() {
        use PropertyKind as P;
        use ReplayVerdict as V;
        let stolen = [outcome(0, Told::Nothing, false, Some(1)), outcome(1, Told::Success, false, Some(0))];
        assert_eq!(judge(P::SuccessImpliesEffect, &stolen).verdict, V::Confirmed);
        assert_eq!(judge(P::ExactlyOnce, &stolen).verdict, V::Confirmed);
        assert_eq!(judge(P::AtMostOnce, &stolen).verdict, V::NotReproduced);
        let ran = [outcome(0, Told::Nothing, false, Some(1)), outcome(1, Told::Success, false, Some(1))];
        assert_eq!(judge(P::SuccessImpliesEffect, &ran).verdict, V::NotReproduced);
        let blind = [outcome(0, Told::Nothing, false, None), outcome(1, Told::Success, false, None)];
        assert_eq!(judge(P::SuccessImpliesEffect, &blind).verdict, V::Inconclusive);
        let silent = [outcome(0, Told::Failure, true, Some(1))];
        assert_eq!(judge(P::NoSilentEffect, &silent).verdict, V::Confirmed);
        let retried = [outcome(0, Told::Failure, false, Some(1))];
        assert_eq!(judge(P::NoSilentEffect, &retried).verdict, V::NotReproduced);
        let twice = [outcome(0, Told::Success, false, Some(2))];
        assert_eq!(judge(P::AtMostOnce, &twice).verdict, V::Confirmed);
        assert_eq!(judge(P::ExactlyOnce, &twice).verdict, V::Confirmed);
    }
}
