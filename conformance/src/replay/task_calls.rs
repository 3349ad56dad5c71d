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
use crate::replay::task_wire::{no_such_task, status_of, task_id_of};
use crate::replay::types::Revision;
use mcp_once_model::State;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

impl Driver<'_> {
    /// Whether the trace's calls are task-augmented.
    pub(crate) fn task_calls(&self) -> bool {
        self.script.task_calls()
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
