//! Multi round-trip requests (2026-07-28 `basic/patterns/mrtr.mdx`, SEP-2322) in a replay: the
//! continuation the runner sends for the model's `ClientContinue` (the same tool and
//! arguments, `inputResponses` answering the server's `inputRequests`, the exact
//! `requestState` it returned, under the new id the trace's state gives, and the key the
//! trace's state gives it: none where continuations are outside the key's scope, as SEP-3182
//! leaves them, its round's own where a profile puts them inside), and the check that an answer is of
//! the kind the trace's server gives (an input-required result where the model has
//! `RespondedInput` or, from an id table, `RespondedReplayInput`; a final result where it has
//! `RespondedOk` or `RespondedReplay`: an id table replays the answer stored for the id, of the
//! kind it was stored as, whatever the round of the request that finds it).

use crate::replay::driver::Driver;
use crate::replay::input::respond_to;
use crate::replay::link::Link;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{answer, summarize, Done, StepError};
use mcp_once_model::state::{Phase, ServerSide};
use mcp_once_model::State;
use serde_json::{Map, Value};

/// The result of a JSON-RPC response, if it is an input-required result.
pub fn input_required(resp: &Value) -> Option<&Value> {
    let result = resp.get("result")?;
    (result.get("resultType").and_then(Value::as_str) == Some("input_required")).then_some(result)
}

/// The params a continuation adds to the `tools/call` it repeats: `inputResponses` (one answer
/// per input request, by its name) and `requestState`, echoed exactly ("the client **MUST**
/// echo back the exact value of that field when retrying the original request").
pub fn continuation_params(result: &Value) -> Map<String, Value> {
    let mut params = Map::new();
    if let Some(requests) = result.get("inputRequests").and_then(Value::as_object) {
        let answers: Map<String, Value> = requests.iter().map(|(name, r)| (name.clone(), respond_to(r))).collect();
        params.insert("inputResponses".into(), Value::Object(answers));
    }
    if let Some(state) = result.get("requestState") {
        params.insert("requestState".into(), state.clone());
    }
    params
}

impl Driver<'_> {
    /// `ClientContinue`, or a `ClientRetry` of a continuation (an attempt past round 0): attempt
    /// `attempt` of `call` continues the input-required answer the client read last, sent as any
    /// attempt is ([`Driver::send_attempt`]: its id from the trace's state, held or paced as the
    /// trace needs) with the continuation's params; a retry repeats the same ones.
    pub(crate) async fn client_continue(&mut self, call: u8, attempt: u8, state: &State) -> Result<Done, StepError> {
        let rec = state.attempts[usize::from(call)][usize::from(attempt)];
        // A key on a continuation: its profile puts continuations inside the key's scope, one
        // key per round (`idempotency_continuations = included`); it is sent as any key is.
        let key = match rec.key {
            0 => "no key".to_string(),
            k => format!("key {}", self.script.key_name(call, k)),
        };
        let (from, result) = self.link().asked_for_input(call, attempt)?;
        let extra = continuation_params(&result);
        let answered: Vec<&str> = extra
            .get("inputResponses")
            .and_then(Value::as_object)
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        let how = format!(
            "continues attempt {}'s input-required answer (inputResponses for [{}], {}, {key})",
            from.1,
            answered.join(", "),
            if extra.contains_key("requestState") { "its requestState echoed" } else { "no requestState was given" }
        );
        let mut done = self.send_attempt(call, attempt, state, Some(&extra)).await?;
        done.note = format!("{}; {how}", done.note);
        Ok(done)
    }
}

impl Link<'_, '_> {
    /// The input-required answer continuation `attempt` of `call` answers: the latest earlier
    /// attempt of the call that the server answered with one (what the client read last).
    pub(crate) fn asked_for_input(&self, call: u8, attempt: u8) -> Result<(AttemptId, Value), StepError> {
        (0..attempt)
            .rev()
            .find_map(|a| {
                let resp = answer(&self.attempts.sent, self.session, (call, a))?;
                input_required(&resp).map(|r| ((call, a), r.clone()))
            })
            .ok_or_else(|| {
                StepError::diverged(format!("call {call} attempt {attempt}: a continuation, and no earlier attempt of the call was answered with an input-required result"),
                )
            })
    }

    /// Whether attempt `a`'s answer `resp` is of the kind the trace's `state` has: the server's
    /// answer (`RespondedInput` or `RespondedReplayInput` ask for input, `RespondedOk` or
    /// `RespondedReplay` are final) or what the client read (`ClientReceive`: the call left
    /// asking for input, or succeeded, as the answer's kind says). An error answer is judged
    /// elsewhere, except where the trace's handler asks for input (it diverges there).
    pub(crate) fn check_answer_kind(
        &self,
        a: AttemptId,
        state: &State,
        resp: &Value,
        read: bool,
    ) -> Result<(), StepError> {
        let asks = input_required(resp).is_some();
        let (c, i) = (usize::from(a.0), usize::from(a.1));
        let want = if read {
            match state.calls[c].phase {
                Phase::InputRequired => Some(true),
                Phase::Succeeded => Some(false),
                _ => None,
            }
        } else {
            match state.attempts[c][i].server {
                ServerSide::RespondedInput | ServerSide::RespondedReplayInput => Some(true),
                ServerSide::RespondedOk | ServerSide::RespondedReplay => Some(false),
                _ => None,
            }
        };
        match want {
            // An error reply is a failure the trace may have elsewhere, except where its handler
            // asks for input: name it there (a server refusing a client that cannot be asked).
            _ if resp.get("error").is_some() && want != Some(true) => Ok(()),
            Some(true) if resp.get("error").is_some() => Err(StepError::diverged(format!("call {} attempt {}: the server answered with an error where the trace's handler asks for input: {}", a.0, a.1, summarize(resp)),
            )),
            Some(true) if !asks => Err(StepError::diverged(format!("call {} attempt {}: the server gave a final result where the trace's handler asks for input (an input-required result)", a.0, a.1),
            )),
            Some(false) if asks => Err(StepError::diverged(format!("call {} attempt {}: the server asked for input where the trace's handler gives its final result", a.0, a.1),
            )),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_continuation_answers_every_request_and_echoes_the_state_exactly() {
        let result = json!({
            "resultType": "input_required",
            "inputRequests": {
                "confirm_1": {"method": "elicitation/create", "params": {"mode": "form", "message": "ok?",
                    "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean"},
                        "note": {"type": "string"}, "n": {"type": "integer"}}}}},
                "roots": {"method": "roots/list"}
            },
            "requestState": "{\"round\":1}"
        });
        let p = continuation_params(&result);
        assert_eq!(p["requestState"], json!("{\"round\":1}"));
        assert_eq!(
            p["inputResponses"]["confirm_1"],
            json!({"action": "accept", "content": {"confirm": true, "note": "yes", "n": 1}})
        );
        assert_eq!(p["inputResponses"]["roots"], json!({"roots": []}));
        assert!(input_required(&json!({"result": result})).is_some());
        assert!(input_required(&json!({"result": {"content": []}})).is_none());
    }
}
