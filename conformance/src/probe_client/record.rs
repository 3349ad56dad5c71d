//! The record file: one JSON line per frame, attempt, effect, cancellation and answer, written
//! with one `write` each on a file opened for appending (so lines from the processes a client
//! restarts interleave whole) and never buffered, so it survives the server's own exit.

use serde_json::{json, Map, Value};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// An open record file.
pub struct Recorder {
    file: Mutex<File>,
}

impl Recorder {
    /// Open `path` for appending (created if missing).
    pub fn open(path: &Path) -> anyhow::Result<Recorder> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| anyhow::anyhow!("{}: cannot open the record file: {e}", path.display()))?;
        Ok(Recorder { file: Mutex::new(file) })
    }

    /// Append one line of `kind` with `fields`, the time and this process's id.
    pub fn write(&self, kind: &str, fields: Value) {
        let mut line = Map::new();
        line.insert("kind".into(), json!(kind));
        line.insert("t_ms".into(), json!(now_ms()));
        line.insert("pid".into(), json!(std::process::id()));
        if let Value::Object(more) = fields {
            line.extend(more);
        }
        let mut text = Value::Object(line).to_string();
        text.push('\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Err(e) = file.write_all(text.as_bytes()) {
            eprintln!("[mcp-once serve {}] record write failed: {e}", std::process::id());
        }
    }
}

/// Where a call's idempotency key was found, and the key: `params.idempotencyKey`, any `_meta`
/// entry whose name mentions a key or an idempotency/operation id, or an argument named so.
pub fn find_key(params: &Value) -> Option<(String, Value)> {
    if let Some(k) = params.get("idempotencyKey").filter(|k| !k.is_null()) {
        return Some(("params.idempotencyKey".into(), k.clone()));
    }
    let keyish = |name: &str| {
        let n = name.to_ascii_lowercase();
        n.contains("idempotency") || n.ends_with("key") || n.contains("operation") || n.contains("dedup")
    };
    if let Some(Value::Object(meta)) = params.get("_meta") {
        for (name, v) in meta {
            if keyish(name) && !v.is_null() {
                return Some((format!("_meta.{name}"), v.clone()));
            }
        }
    }
    if let Some(Value::Object(args)) = params.get("arguments") {
        for (name, v) in args {
            if keyish(name) && !v.is_null() {
                return Some((format!("arguments.{name}"), v.clone()));
            }
        }
    }
    None
}

/// One record file's lines (a torn last line is left out).
pub fn read(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => anyhow::bail!("{}: cannot read the record file: {e}", path.display()),
    };
    Ok(text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_found_wherever_they_are() {
        assert_eq!(find_key(&json!({"idempotencyKey": "a"})).unwrap().0, "params.idempotencyKey");
        let meta = json!({"_meta": {"progressToken": 1, "io.mcp-once/idempotencyKey": "m"}});
        assert_eq!(find_key(&meta).unwrap(), ("_meta.io.mcp-once/idempotencyKey".into(), json!("m")));
        let arg = json!({"arguments": {"amount": 1, "operation_id": "x"}});
        assert_eq!(find_key(&arg).unwrap().0, "arguments.operation_id");
        assert!(find_key(&json!({"arguments": {"amount": 1}})).is_none());
    }
}
