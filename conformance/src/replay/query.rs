//! The outcome query (an `impl` of [`Link`]: the session and the attempts): the `outcome-query` proposal's
//! `ClientQueryOutcome` step, realised as `tasks/get` with the call's key as its `taskId`, and
//! the answer judged against the model's answer in the trace.
//!
//! The proposal names calls with requestor-chosen task ids (SEP-1686) and its query is the task
//! primitive's `tasks/get` (2025-11-25 `basic/utilities/tasks.mdx`, "Getting Tasks"). The
//! model's query answers "completed, with its stored result" (the call succeeds) or "unknown"
//! (the client may retry); it is never taken while the server has a run of the key in progress.
//! On the wire: a result with `status: "completed"` and the stored `result`, or the error the
//! tasks utility gives a nonexistent `taskId` (`-32602`, Invalid params).

use crate::replay::link::Link;
use crate::replay::step::{Done, StepError};
use mcp_once_model::State;
use serde_json::{json, Value};
use tokio::time::Instant;

/// The tasks extension's capability key, which rmcp requires of a client that sends `tasks/get`.
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// What the server answered to the outcome query.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    /// `status: "completed"` with a result.
    Completed,
    /// `status: "working"`.
    Working,
    /// `-32602`: no such task.
    Unknown,
}

impl Link<'_, '_> {
    /// `ClientQueryOutcome { call }`: ask the server for the outcome of `call`'s latest key
    /// and check the answer is the model's (`state` is the state after the step).
    pub(crate) async fn client_query_outcome(&mut self, call: u8, state: &State) -> Result<Done, StepError> {
        if self.session.check_exit().is_some() {
            return Err(StepError::diverged("the server is not running when the trace asks for an outcome"));
        }
        let c = usize::from(call);
        let key = state.latest(c).map(|a| state.attempts[c][a].key).filter(|k| *k > 0).ok_or_else(|| {
            StepError::diverged(format!("the trace asks for the outcome of call {call}, which has no key"))
        })?;
        let task_id = self.script.key_name(call, key);
        let expected = if state.calls[c].queried { Answer::Unknown } else { Answer::Completed };
        let mut params = self.session.with_meta(json!({ "taskId": task_id }));
        if let Some(caps) = params.pointer_mut("/_meta/io.modelcontextprotocol~1clientCapabilities") {
            *caps = json!({ "extensions": { TASKS_EXTENSION: {} } });
        }
        let deadline = Instant::now() + self.session.opts.step_timeout;
        let (answer, shown) = match self.session.request_until("tasks/get", params, deadline).await {
            Ok(result) => {
                let status = result.get("status").and_then(Value::as_str).unwrap_or("");
                match status {
                    "completed" if result.get("result").is_some_and(Value::is_object) => {
                        (Answer::Completed, format!("completed, with the result {}", short(&result["result"])))
                    }
                    "working" => (Answer::Working, "working".to_string()),
                    _ => {
                        return Err(StepError::diverged(format!(
                            "tasks/get for call {call} answered {}, not a task the trace knows",
                            short(&result)
                        )))
                    }
                }
            }
            Err(e) if unknown_task(&e) => (Answer::Unknown, format!("unknown ({e})")),
            Err(e) => return Err(StepError::diverged(format!("tasks/get for call {call} (task {task_id}): {e}"))),
        };
        if answer != expected {
            let want = match expected {
                Answer::Completed => "completed, with its stored result",
                _ => "unknown (no record of the call)",
            };
            return Err(StepError::diverged(format!(
                "tasks/get for call {call} answered {shown} where the trace's server answers {want}"
            )));
        }
        Ok(Done::observed(format!("tasks/get taskId {task_id}: {shown}")))
    }
}

/// Whether a `request_until` error is the JSON-RPC error for a nonexistent task (`-32602`):
/// answered as a JSON-RPC error, or over Streamable HTTP as a 4xx response whose body is that
/// error response (the Python SDK 2.3.0 answers a 2026-07-28 request's error with HTTP 400).
fn unknown_task(error: &str) -> bool {
    let rpc_error = match error.strip_prefix("error ") {
        Some(e) => serde_json::from_str::<Value>(e).ok(),
        None => error
            .strip_prefix("HTTP 4")
            .and_then(|rest| rest.split_once(": "))
            .and_then(|(_, body)| serde_json::from_str::<Value>(body).ok())
            .and_then(|response| response.get("error").cloned()),
    };
    rpc_error.is_some_and(|e| e.get("code").and_then(Value::as_i64) == Some(-32602))
}

/// `v` as compact JSON, cut to 200 characters.
fn short(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 200 {
        let cut = (0..=200).rev().find(|i| s.is_char_boundary(*i)).unwrap_or(0);
        s.truncate(cut);
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_invalid_params_is_an_unknown_task() {
        assert!(unknown_task(r#"error {"code":-32602,"message":"Failed to retrieve task: Task not found"}"#));
        assert!(!unknown_task(r#"error {"code":-32601,"message":"tasks/get"}"#));
        assert!(!unknown_task("no answer within the bound"));
        let http = r#"HTTP 400: {"jsonrpc":"2.0","id":"mcp-once-3","error":{"code":-32602,"message":"Failed to retrieve task: Task not found (k)"}}"#;
        assert!(unknown_task(http), "the Python SDK's 2026-07-28 HTTP answer");
        assert!(!unknown_task(r#"HTTP 400: {"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"bad"}}"#));
        assert!(!unknown_task(r#"HTTP 500: {"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"x"}}"#));
    }
}
