//! stdio: every line in and out is written to the record; rmcp reads stdin through a tap that
//! first keeps the raw params of each `tools/call` and notes each `notifications/cancelled`,
//! and writes through a tap that copies its lines to stdout.

use std::sync::Arc;

use rmcp::ServiceExt;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

use crate::probe_client::tool::{ProbeServer, Shared};

/// How long the session may finish its calls after stdin closes.
const EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

/// Serve one MCP connection on stdin/stdout until stdin reaches EOF.
pub(crate) async fn serve(shared: Arc<Shared>) -> anyhow::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let (tap_in, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, tap_out) = tokio::io::duplex(1 << 16);
    tokio::spawn(copy_lines(stdin, tap_in, shared.clone(), "in"));
    tokio::spawn(copy_lines(tap_out, stdout, shared.clone(), "out"));
    let service = match ProbeServer(shared.clone()).serve((rmcp_in, rmcp_out)).await {
        Ok(service) => service,
        Err(e) => {
            shared.record.write("end", json!({"why": format!("no MCP session: {e}")}));
            return Ok(());
        }
    };
    // rmcp's session waits for its handlers; a held one (never) would keep the process alive
    // after the client closed stdin, until the client kills it. Give them a moment, then go.
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let mut closed = shared.stdin_closed.subscribe();
    let why = tokio::select! {
        reason = &mut waiting => format!("stdio session ended ({:?})", reason?),
        _ = closed.wait_for(|c| *c) => match tokio::time::timeout(EOF_GRACE, &mut waiting).await {
            Ok(reason) => format!("stdio session ended ({:?})", reason?),
            Err(_) => format!("stdin closed; a call still held after {} ms is dropped", EOF_GRACE.as_millis()),
        },
    };
    shared.record.write("end", json!({"why": why}));
    Ok(())
}

/// Copy `from` to `to` line by line, recording each line as a frame (`dir` in or out); for
/// input, keep the params of tool calls and note cancellations first. EOF on stdin is noted.
async fn copy_lines(from: impl AsyncRead + Unpin, mut to: impl AsyncWrite + Unpin, shared: Arc<Shared>, dir: &str) {
    let mut reader = BufReader::new(from);
    let mut line = Vec::with_capacity(4096);
    let conn = format!("stdio:{}", std::process::id());
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let message: Value =
                    serde_json::from_slice(&line).unwrap_or_else(|_| json!(String::from_utf8_lossy(&line)));
                if dir == "in" {
                    note_incoming(&shared, &message, &conn, true);
                }
                shared.record.write("frame", json!({"dir": dir, "conn": conn, "message": message}));
                if to.write_all(&line).await.is_err() || to.flush().await.is_err() {
                    break;
                }
            }
        }
    }
    if dir == "in" {
        shared.record.write("eof", json!({"conn": conn}));
        shared.stdin_closed.send_replace(true);
    }
    let _ = to.shutdown().await;
}

/// Keep a tool call's raw params by id (stdio: `keep_params`); record a cancellation.
pub(crate) fn note_incoming(shared: &Shared, message: &Value, conn: &str, keep_params: bool) {
    let messages = match message {
        Value::Array(batch) => batch.iter().collect(),
        single => vec![single],
    };
    for m in messages {
        match m.get("method").and_then(Value::as_str) {
            Some("tools/call") if keep_params => {
                if let (Some(id), Some(params)) = (m.get("id"), m.get("params")) {
                    shared
                        .stdio_params
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(id.to_string(), params.clone());
                }
            }
            Some("notifications/cancelled") => {
                let params = m.get("params").cloned().unwrap_or(Value::Null);
                shared.record.write(
                    "cancelled",
                    json!({"conn": conn, "request_id": params.get("requestId"), "reason": params.get("reason")}),
                );
            }
            _ => {}
        }
    }
}
