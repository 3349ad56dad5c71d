//! Task-augmented `tools/call` (a trace of a `--tasks augmented` cell; the model's
//! `tasks.rs` says what each step means): whether the server declares it, the request made a
//! task request, the client's reads of a task, and what the client was finally told.
//!
//! A trace of such a cell has the server answer each `tools/call` with a `CreateTaskResult`
//! and the client, once it read one, poll the task. Replayed with plain `tools/call`s, the
//! server would answer with the tool's own result and the replay would be another cell's: so
//! the runner never does that. Where the server does not declare task-augmented `tools/call`
//! at its handshake, the replay is inconclusive, naming the capability it lacks. Otherwise:
//! - 2025-11-25 (`basic/utilities/tasks.mdx`): the request carries `params.task`, the
//!   `CreateTaskResult` is `{task: {taskId, status, ...}}`, `tasks/get` answers the task and
//!   `tasks/result` its result;
//! - 2026-07-28 (the tasks extension, SEP-2663): the client declares the extension in each
//!   request's capabilities and the server chooses to make a task; the `CreateTaskResult` is
//!   `{resultType: "task", taskId, status, ...}` and `tasks/get` carries a completed task's
//!   `result` inline.
//!
//! The trace's `ClientReceive` of an attempt whose task the client does not hold yet reads its
//! `CreateTaskResult`; one whose task it holds is the poll (`tasks/get` until the task ends,
//! then its result) that finds it completed; a `ClientSeesDisconnect` of one it holds, the poll
//! that finds its work gone (failed, or no such task). A `ServerRespond` (the task completing)
//! is observed with `tasks/get` where the runner saw the `CreateTaskResult` on the wire.

use crate::replay::driver::Driver;
use crate::replay::pacing::AttemptId;
use crate::replay::step::{summarize, Done, StepError};
use crate::replay::types::Revision;
use mcp_once_model::{State, Tasks};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

/// The tasks extension's identifier (SEP-2663), the key a 2026-07-28 server declares under
/// `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Where a server under `revision` declares task-augmented `tools/call`, as a path in its
/// capabilities (for a reason a user reads).
pub fn capability_path(revision: Revision) -> String {
    match revision {
        Revision::R2025_11_25 => "capabilities.tasks.requests.tools.call".into(),
        Revision::R2026_07_28 => format!("capabilities.extensions[\"{TASKS_EXTENSION}\"]"),
    }
}

/// Whether `capabilities` (the server's, from `initialize` or `server/discover`) declare
/// task-augmented `tools/call` under `revision`: 2025-11-25 `basic/utilities/tasks.mdx`
/// § Capabilities (`tasks.requests.tools.call`), 2026-07-28 the tasks extension.
pub fn declares_task_calls(revision: Revision, capabilities: &Value) -> bool {
    match revision {
        Revision::R2025_11_25 => capabilities.pointer("/tasks/requests/tools/call").is_some_and(Value::is_object),
        Revision::R2026_07_28 => capabilities.get("extensions").and_then(|e| e.get(TASKS_EXTENSION)).is_some(),
    }
}

/// Why a trace whose calls are task-augmented cannot be replayed on a server with
/// `capabilities` under `revision` (None: it can, the server declares them).
pub fn refusal(revision: Revision, capabilities: &Value) -> Option<String> {
    let path = capability_path(revision);
    if declares_task_calls(revision, capabilities) {
        None
    } else {
        Some(format!(
            "the trace's tools/calls are task-augmented (--tasks augmented) and the server does not declare task-augmented tools/call ({path} is absent from its {} answer): plain tools/calls would replay another cell",
            match revision {
                Revision::R2025_11_25 => "initialize",
                Revision::R2026_07_28 => "server/discover",
            }
        ))
    }
}

/// The client capabilities the runner declares for a trace of task-augmented calls: `base`
/// with the tasks extension (what a 2026-07-28 server reads before it makes a task).
pub fn client_capabilities(base: &Value) -> Value {
    let mut caps = base.clone();
    if let Some(map) = caps.as_object_mut() {
        map.insert("extensions".into(), json!({ TASKS_EXTENSION: {} }));
    }
    caps
}

/// `msg` (a `tools/call`) made a task request under `revision`: 2025-11-25's `params.task`
/// (no ttl asked: the receiver's own); under 2026-07-28 the declared extension is the request.
pub fn augment(revision: Revision, msg: &mut Value) {
    if let (Revision::R2025_11_25, Some(params)) = (revision, msg.get_mut("params").and_then(Value::as_object_mut)) {
        params.insert("task".into(), json!({}));
    }
}

/// The task id a `CreateTaskResult` names under `revision` (None: `resp` is not one).
pub fn task_id_of(revision: Revision, resp: &Value) -> Option<String> {
    let result = resp.get("result")?;
    let id = match revision {
        Revision::R2025_11_25 => result.pointer("/task/taskId"),
        Revision::R2026_07_28 => {
            (result.get("resultType").and_then(Value::as_str) == Some("task")).then(|| result.get("taskId")).flatten()
        }
    };
    id.and_then(Value::as_str).map(str::to_string)
}

/// Whether `resp` is a `CreateTaskResult` of either revision (an answer that tells no
/// outcome: the task's effect may come after it).
pub fn is_task_handle(resp: &Value) -> bool {
    task_id_of(Revision::R2025_11_25, resp).is_some() || task_id_of(Revision::R2026_07_28, resp).is_some()
}

/// A task's status as `tasks/get` answers it (2025-11-25 and 2026-07-28 alike).
fn status_of(task: &Value) -> &str {
    task.get("status").and_then(Value::as_str).unwrap_or("")
}

/// Whether a `tasks/get` error says the server has no such task (`-32602`, as both texts have
/// it for an unknown `taskId`).
fn no_such_task(error: &str) -> bool {
    error.contains("-32602")
}

impl Driver<'_> {
    /// Whether the trace's calls are task-augmented.
    pub(crate) fn task_calls(&self) -> bool {
        self.script.trace.config.tasks == Tasks::Augmented
    }

    /// Whether the client holds attempt `a`'s task before the step being driven.
    pub(crate) fn holds_task(&self, a: AttemptId) -> bool {
        let before = &self.script.path[self.script.at];
        self.task_calls() && before.attempts[usize::from(a.0)][usize::from(a.1)].task
    }

    /// `ClientReceive` of a task attempt: the `CreateTaskResult` read (the client now holds
    /// the task), or, for a task it holds, the poll that finds it completed.
    pub(crate) async fn task_receive(&mut self, a: AttemptId, state: &State) -> Result<Done, StepError> {
        if !self.holds_task(a) {
            let resp = self.link().await_response(a).await?;
            let Some(id) = task_id_of(self.session.revision, &resp) else {
                return Err(StepError::diverged(format!(
                    "call {} attempt {}: the trace's server answers a CreateTaskResult, the server answered {}",
                    a.0,
                    a.1,
                    summarize(&resp)
                )));
            };
            debug_assert!(state.attempts[usize::from(a.0)][usize::from(a.1)].task);
            self.attempts.tasks.insert(a, id.clone());
            return Ok(Done::observed(format!("CreateTaskResult: task {id}; the client polls it from now on")));
        }
        let id = self.held_task(a)?;
        let task = self.poll_until_ended(&id).await?;
        if status_of(&task) != "completed" {
            return Err(StepError::diverged(format!(
                "call {} attempt {}: the trace's poll finds task {id} completed, tasks/get answered status {:?}",
                a.0,
                a.1,
                status_of(&task)
            )));
        }
        let result = self.task_result(&id, &task).await?;
        let answer = json!({ "result": result });
        let shown = summarize(&answer);
        self.attempts.task_results.insert(a, answer);
        Ok(Done::observed(format!("tasks/get: task {id} completed; its result: {shown}")))
    }

    /// `ClientSeesDisconnect` of an attempt whose task the client holds: the poll that finds the
    /// task's work gone (failed, or no such task any more).
    pub(crate) async fn task_gone(&mut self, a: AttemptId) -> Result<Done, StepError> {
        let id = self.held_task(a)?;
        let params = self.session.with_meta(json!({ "taskId": id }));
        let deadline = Instant::now() + self.session.opts.step_timeout;
        match self.session.request_until("tasks/get", params, deadline).await {
            Err(e) if no_such_task(&e) => Ok(Done::observed(format!("tasks/get: no task {id} ({e})"))),
            Err(e) => Err(StepError::diverged(format!("tasks/get for task {id}: {e}"))),
            Ok(task) if matches!(status_of(&task), "failed" | "cancelled") => {
                Ok(Done::observed(format!("tasks/get: task {id} {}", status_of(&task))))
            }
            Ok(task) => Err(StepError::diverged(format!(
                "call {} attempt {}: the trace's poll finds task {id} gone, tasks/get answered status {:?}",
                a.0,
                a.1,
                status_of(&task)
            ))),
        }
    }

    /// `ServerRespond` of a task attempt (the task completes): observed with `tasks/get` where
    /// the `CreateTaskResult` is on the wire, whether or not the client read it.
    pub(crate) async fn task_completes(&mut self, a: AttemptId) -> Result<Done, StepError> {
        let id = match self.attempts.tasks.get(&a) {
            Some(id) => Some(id.clone()),
            None => self.response(a).and_then(|r| task_id_of(self.session.revision, &r)),
        };
        let Some(id) = id else {
            return Ok(Done::unobserved(
                "the task completes; no CreateTaskResult of it is on the wire, so it shows in the ledger and later answers",
            ));
        };
        let task = self.poll_until_ended(&id).await?;
        match status_of(&task) {
            "completed" => Ok(Done::observed(format!("tasks/get: task {id} completed"))),
            other => Err(StepError::diverged(format!(
                "call {} attempt {}: the trace's task {id} completes, tasks/get answered status {other:?}",
                a.0, a.1
            ))),
        }
    }

    /// The task id the client holds for attempt `a`.
    fn held_task(&self, a: AttemptId) -> Result<String, StepError> {
        self.attempts.tasks.get(&a).cloned().ok_or_else(|| {
            StepError::diverged(format!("call {} attempt {}: the client holds no task id (none was read)", a.0, a.1))
        })
    }

    /// `tasks/get` for `id` until the task ends (a terminal status), within the step's bound:
    /// polling is the protocol's own way to learn it, at the task's `pollInterval` (at most
    /// 100 ms).
    async fn poll_until_ended(&mut self, id: &str) -> Result<Value, StepError> {
        let deadline = Instant::now() + self.session.opts.step_timeout + self.session.opts.window * 2;
        loop {
            let params = self.session.with_meta(json!({ "taskId": id }));
            let task = self
                .session
                .request_until("tasks/get", params, deadline)
                .await
                .map_err(|e| StepError::diverged(format!("tasks/get for task {id}: {e}")))?;
            if matches!(status_of(&task), "completed" | "failed" | "cancelled") {
                return Ok(task);
            }
            let interval = task.get("pollInterval").and_then(Value::as_u64).unwrap_or(10).min(100);
            if Instant::now() + Duration::from_millis(interval) >= deadline {
                return Err(StepError::cannot_tell(format!(
                    "task {id} did not end within the bound (tasks/get: status {:?})",
                    status_of(&task)
                )));
            }
            tokio::time::sleep(Duration::from_millis(interval)).await;
        }
    }

    /// A completed task's result: 2026-07-28's `tasks/get` carries it inline; 2025-11-25's
    /// `tasks/result` answers it.
    async fn task_result(&mut self, id: &str, task: &Value) -> Result<Value, StepError> {
        match self.session.revision {
            Revision::R2026_07_28 => task
                .get("result")
                .cloned()
                .ok_or_else(|| StepError::diverged(format!("tasks/get: task {id} completed without its result"))),
            Revision::R2025_11_25 => {
                let params = self.session.with_meta(json!({ "taskId": id }));
                let deadline = Instant::now() + self.session.opts.step_timeout;
                self.session
                    .request_until("tasks/result", params, deadline)
                    .await
                    .map_err(|e| StepError::diverged(format!("tasks/result for task {id}: {e}")))
            }
        }
    }

    /// What the client was finally told for attempt `a`: under tasks the result its poll read
    /// (a `CreateTaskResult` tells no outcome), else the response.
    pub(crate) fn told_answer(&self, a: AttemptId) -> Option<Value> {
        if self.task_calls() {
            self.attempts.task_results.get(&a).cloned()
        } else {
            self.response(a)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_revision_reads_its_own_capability() {
        let old = json!({"tasks": {"requests": {"tools": {"call": {}}}}});
        let new = json!({"extensions": {TASKS_EXTENSION: {}}});
        assert!(declares_task_calls(Revision::R2025_11_25, &old));
        assert!(!declares_task_calls(Revision::R2025_11_25, &new));
        assert!(declares_task_calls(Revision::R2026_07_28, &new));
        assert!(!declares_task_calls(Revision::R2026_07_28, &old));
        assert!(!declares_task_calls(Revision::R2025_11_25, &json!({"tasks": {"list": {}}})));
    }

    #[test]
    fn the_refusal_names_the_capability() {
        let why = refusal(Revision::R2025_11_25, &json!({"tools": {}})).unwrap();
        assert!(why.contains("capabilities.tasks.requests.tools.call is absent"), "{why}");
        assert_eq!(refusal(Revision::R2026_07_28, &json!({"extensions": {TASKS_EXTENSION: {}}})), None);
    }

    #[test]
    fn a_create_task_result_is_read_as_each_revision_writes_it() {
        let old = json!({"result": {"task": {"taskId": "t1", "status": "working"}}});
        let new = json!({"result": {"resultType": "task", "taskId": "t2", "status": "working"}});
        assert_eq!(task_id_of(Revision::R2025_11_25, &old).as_deref(), Some("t1"));
        assert_eq!(task_id_of(Revision::R2026_07_28, &new).as_deref(), Some("t2"));
        assert_eq!(
            task_id_of(Revision::R2026_07_28, &json!({"result": {"taskId": "t", "resultType": "complete"}})),
            None
        );
        assert_eq!(task_id_of(Revision::R2025_11_25, &json!({"result": {"content": []}})), None);
        let mut msg = json!({"params": {"name": "charge"}});
        augment(Revision::R2025_11_25, &mut msg);
        assert_eq!(msg["params"]["task"], json!({}));
    }
}
