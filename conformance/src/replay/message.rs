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

/// A `tools/call` of the tool in `opts` with request id `id`, the key (if any) where the
/// options put it, and (`pace_args`: the tool takes them) the pacing delays `hold` asks for.
/// `stagger` lengthens a held commit so that held commits keep the trace's order.
pub fn tool_call(
    opts: &ReplayOptions,
    revision: Revision,
    pace_args: bool,
    id: &Value,
    key: Option<&str>,
    hold: Hold,
    stagger: Duration,
) -> Value {
    let mut args: Map<String, Value> = opts.args.clone();
    if pace_args {
        let w = opts.window.as_millis() as u64;
        if hold.before_commit {
            args.insert("delay_before_ms".into(), json!(w + stagger.as_millis() as u64));
        }
        if hold.before_respond {
            args.insert("delay_after_ms".into(), json!(w));
        }
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
