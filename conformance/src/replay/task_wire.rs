//! The wire of task-augmented `tools/call`, for each revision (what [`crate::replay::task_calls`]
//! drives): where a server declares it, the task request, a `CreateTaskResult`'s task id, a
//! task's status. 2025-11-25 (`basic/utilities/tasks.mdx`): the request carries `params.task`,
//! the server declares `capabilities.tasks.requests.tools.call`, a `CreateTaskResult` is
//! `{task: {taskId, status, ...}}`. 2026-07-28 (the tasks extension, SEP-2663): the client
//! declares the extension in each request's capabilities and the server chooses to make a
//! task, declaring `capabilities.extensions["io.modelcontextprotocol/tasks"]`; a
//! `CreateTaskResult` is `{resultType: "task", taskId, status, ...}`.

use crate::replay::types::Revision;
use serde_json::{json, Value};

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
pub(crate) fn status_of(task: &Value) -> &str {
    task.get("status").and_then(Value::as_str).unwrap_or("")
}

/// Whether a `tasks/get` error says the server has no such task (`-32602`, as both texts have
/// it for an unknown `taskId`).
pub(crate) fn no_such_task(error: &str) -> bool {
    error.contains("-32602")
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
