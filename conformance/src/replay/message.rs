//! The JSON-RPC messages the runner writes itself: a `tools/call` of the tool under test (its
//! key where the options put it, the pacing delays where the tool takes them) and the 2026-07-28
//! per-request `_meta` fields.

use crate::replay::pacing::Hold;
use crate::replay::types::{KeyAt, ReplayOptions, Revision};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// The client name the runner gives servers.
pub const CLIENT_NAME: &str = "mcp-once";

/// `params` with the per-request `_meta` fields 2026-07-28 requires (unchanged for 2025-11-25).
pub fn with_meta(revision: Revision, mut params: Value) -> Value {
    if revision == Revision::R2026_07_28 {
        let meta = params.as_object_mut().expect("params are an object").entry("_meta").or_insert_with(|| json!({}));
        if let Some(m) = meta.as_object_mut() {
            m.insert("io.modelcontextprotocol/protocolVersion".into(), json!("2026-07-28"));
            m.insert("io.modelcontextprotocol/clientCapabilities".into(), json!({}));
            m.insert(
                "io.modelcontextprotocol/clientInfo".into(),
                json!({"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}),
            );
        }
    }
    params
}

/// The capabilities the runner's client declares for a trace whose tool asks for input (an MRTR
/// input round): form elicitation, sampling and roots, the requests it answers
/// (`continuation.rs`). A trace without input rounds declares none.
pub fn input_capabilities() -> Value {
    json!({"elicitation": {"form": {}}, "sampling": {}, "roots": {}})
}

/// `msg`'s params with `capabilities` as the client's under 2026-07-28 (each request carries
/// them in `_meta`); unchanged under 2025-11-25, where `initialize` declares them.
pub fn declare(revision: Revision, capabilities: &Value, mut msg: Value) -> Value {
    if revision == Revision::R2026_07_28 {
        if let Some(meta) = msg.pointer_mut("/params/_meta").and_then(Value::as_object_mut) {
            meta.insert("io.modelcontextprotocol/clientCapabilities".into(), capabilities.clone());
        }
    }
    msg
}

/// The placeholder in `--args` string values that becomes the logical call's own tag: the same
/// for every attempt of one logical call, different for every other call (so a tool that
/// ignores a repeated request by content, such as "create entity NAME", is tested by retries,
/// not by calls that were never the same).
pub const CALL_PLACEHOLDER: &str = "{{call}}";

/// Which logical call a request belongs to: its idempotency key (if any) and its tag.
#[derive(Clone, Copy, Debug)]
pub struct Logical<'a> {
    /// The idempotency key, where the options put it.
    pub key: Option<&'a str>,
    /// Replaces [`CALL_PLACEHOLDER`] in the arguments.
    pub tag: &'a str,
}

/// `v` with [`CALL_PLACEHOLDER`] replaced by `tag` in every string.
fn tagged(v: &Value, tag: &str) -> Value {
    match v {
        Value::String(s) if s.contains(CALL_PLACEHOLDER) => Value::String(s.replace(CALL_PLACEHOLDER, tag)),
        Value::Array(a) => Value::Array(a.iter().map(|x| tagged(x, tag)).collect()),
        Value::Object(o) => Value::Object(o.iter().map(|(k, x)| (k.clone(), tagged(x, tag))).collect()),
        other => other.clone(),
    }
}

/// The arguments of a call of `logical` (the placeholder replaced).
pub fn call_args(args: &Map<String, Value>, logical: Logical<'_>) -> Map<String, Value> {
    args.iter().map(|(k, v)| (k.clone(), tagged(v, logical.tag))).collect()
}

/// Which delay arguments the tool under test takes: the runner holds a server step only
/// through them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DelayArgs {
    /// `delay_before_ms` and `delay_after_ms`: holds before the commit and before the response.
    pub commit: bool,
    /// `delay_task_result_ms`: a hold of a task-augmented call's `CreateTaskResult`, after the
    /// task is created and its work started.
    pub task_result: bool,
}

/// A `tools/call` of the tool in `opts` with request id `id` for `logical` (its key where the
/// options put it, its tag in the arguments), and (where `delays` says the tool takes them) the
/// pacing delays `hold` asks for. `stagger` lengthens a held commit so that held commits keep
/// the trace's order.
pub fn tool_call(
    opts: &ReplayOptions,
    revision: Revision,
    delays: DelayArgs,
    id: &Value,
    logical: Logical<'_>,
    hold: Hold,
    stagger: Duration,
) -> Value {
    let key = logical.key;
    let mut args: Map<String, Value> = call_args(&opts.args, logical);
    let w = opts.window.as_millis() as u64;
    if delays.commit {
        if hold.before_commit {
            args.insert("delay_before_ms".into(), json!(w + stagger.as_millis() as u64));
        }
        if hold.before_respond {
            args.insert("delay_after_ms".into(), json!(w));
        }
    }
    if delays.task_result && hold.before_task_result {
        args.insert("delay_task_result_ms".into(), json!(w));
    }
    let mut params = json!({"name": opts.tool});
    if let Some(k) = key {
        match &opts.key_at {
            KeyAt::Params => params["idempotencyKey"] = json!(k),
            KeyAt::Meta(name) => params["_meta"] = json!({ name.clone(): k }),
            KeyAt::Arg(name) => {
                args.insert(name.clone(), json!(k));
            }
        }
    }
    params["arguments"] = Value::Object(args);
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": with_meta(revision, params)})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_placeholder_is_the_calls_tag_everywhere_in_the_arguments() {
        let args = json!({"entities": [{"name": "e-{{call}}", "n": 1}], "note": "{{call}}/{{call}}", "plain": "x"});
        let out = call_args(args.as_object().unwrap(), Logical { key: None, tag: "T" });
        assert_eq!(Value::Object(out), json!({"entities": [{"name": "e-T", "n": 1}], "note": "T/T", "plain": "x"}));
    }
}
