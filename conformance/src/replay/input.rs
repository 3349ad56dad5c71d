//! What the runner's client answers to the server's input requests: an MRTR input round's
//! `inputRequests` (2026-07-28, answered in the continuation) and the same requests sent mid-call
//! (2025-11-25), where the client declared the capability ([`crate::replay::message::input_capabilities`]).

use serde_json::{json, Map, Value};

/// What a client answers to one input request: an elicitation accepted with a value for each
/// field of its form (`true`, `"yes"`, `1`), a sampling request with a text message, a roots
/// request with no roots. The fixture asks one yes/no question; other servers get the same
/// well-formed answers. Also the result of such a request sent mid-call (2025-11-25).
pub fn respond_to(request: &Value) -> Value {
    match request.get("method").and_then(Value::as_str) {
        Some("sampling/createMessage") => json!({
            "role": "assistant",
            "content": {"type": "text", "text": "yes"},
            "model": crate::replay::message::CLIENT_NAME
        }),
        Some("roots/list") => json!({"roots": []}),
        _ => {
            let fields = request.pointer("/params/requestedSchema/properties").and_then(Value::as_object);
            let content: Map<String, Value> = fields
                .into_iter()
                .flatten()
                .map(|(name, schema)| {
                    let value = match schema.get("type").and_then(Value::as_str) {
                        Some("boolean") => json!(true),
                        Some("number" | "integer") => json!(1),
                        _ => match schema.get("enum").and_then(Value::as_array).and_then(|e| e.first()) {
                            Some(first) => first.clone(),
                            None => json!("yes"),
                        },
                    };
                    (name.clone(), value)
                })
                .collect();
            json!({"action": "accept", "content": content})
        }
    }
}

/// The client's reply to a request the server sent it (`id`, `method`, the whole `request`):
/// ping answered; an input request answered ([`respond_to`]) where `capabilities` declare it
/// (2025-11-25 asks mid-call); anything else refused as a method the client does not handle.
pub fn client_reply(id: &Value, method: &str, request: &Value, capabilities: &Value) -> Value {
    let declared = |c: &str| capabilities.get(c).is_some();
    let answerable = matches!(
        (method, declared("elicitation"), declared("sampling"), declared("roots")),
        ("elicitation/create", true, _, _) | ("sampling/createMessage", _, true, _) | ("roots/list", _, _, true)
    );
    match method {
        "ping" => json!({"jsonrpc": "2.0", "id": id, "result": {}}),
        _ if answerable => json!({"jsonrpc": "2.0", "id": id, "result": respond_to(request)}),
        _ => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("mcp-once does not handle {method}")}})
        }
    }
}
