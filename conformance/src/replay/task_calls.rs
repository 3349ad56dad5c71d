//! Task-augmented `tools/call` (a trace of a `--tasks augmented` cell): whether the server
//! declares it, read from its capabilities at the handshake, and why such a trace cannot be
//! replayed with plain calls.
//!
//! A trace of such a cell has the server answer each `tools/call` with a `CreateTaskResult`
//! and the client, once it read one, poll the task. Replayed with plain `tools/call`s, the
//! server would answer with the tool's own result and the replay would be another cell's: so
//! the runner never does that. Where the server does not declare task-augmented `tools/call`,
//! the replay is inconclusive, naming the capability it lacks; where it does, the replay is
//! inconclusive too, as the runner does not send task-augmented requests yet.

use crate::replay::types::Revision;
use serde_json::Value;

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
/// `capabilities` under `revision`: every answer is a reason (the replay is inconclusive).
pub fn refusal(revision: Revision, capabilities: &Value) -> String {
    let path = capability_path(revision);
    if declares_task_calls(revision, capabilities) {
        format!(
            "the trace's tools/calls are task-augmented (--tasks augmented) and the server declares them ({path}), but the runner does not send task-augmented requests or poll tasks yet; plain tools/calls would replay another cell"
        )
    } else {
        format!(
            "the trace's tools/calls are task-augmented (--tasks augmented) and the server does not declare task-augmented tools/call ({path} is absent from its {} answer): plain tools/calls would replay another cell",
            match revision {
                Revision::R2025_11_25 => "initialize",
                Revision::R2026_07_28 => "server/discover",
            }
        )
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
        let why = refusal(Revision::R2025_11_25, &json!({"tools": {}}));
        assert!(why.contains("capabilities.tasks.requests.tools.call is absent"), "{why}");
        let why = refusal(Revision::R2026_07_28, &json!({"extensions": {TASKS_EXTENSION: {}}}));
        assert!(why.contains("does not send task-augmented requests"), "{why}");
    }
}
