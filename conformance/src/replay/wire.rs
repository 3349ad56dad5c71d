//! The runner's raw JSON-RPC client connection, over stdio (newline-delimited frames on the
//! server's pipes) or Streamable HTTP (one POST per message; a request's response comes as JSON
//! or as an SSE stream). Raw frames, not an SDK client, because the faults need what SDK
//! clients do not offer: chosen request ids (the same id again), unknown params such as
//! `idempotencyKey`, and closing one request's response stream.
//!
//! Everything the server sends arrives as [`WireEvent`]s on one channel, tagged with the
//! connection's generation, so that the driver sees one ordered history and can ignore what a
//! dead connection still delivers.

use crate::replay::breach::{Channel, ProtocolBreach};
use crate::replay::evidence::{Direction, Event, Evidence, Stderr, Transport};
use crate::replay::frame::{classify, not_json, quote, Frame, LineSplitter, Piece, MAX_FRAME};
use crate::replay::server_log::ServerLog;
use anyhow::{anyhow, Result};
use futures::StreamExt;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

/// Something the server (or the transport) did.
#[derive(Clone, Debug)]
pub enum EventKind {
    /// A JSON-RPC message from the server.
    Message(Value),
    /// Output that breaks the protocol, with what is wrong.
    Garbage(ProtocolBreach),
    /// stdio: a line of stdout that is not JSON at all (a banner, a log line), quoted.
    NonJson(String),
    /// HTTP: the response headers for request `id` arrived with `status`; `sse`: they open an
    /// event stream (the reply comes after them), not a JSON body (the reply comes with them).
    Headers { id: Value, status: u16, sse: bool },
    /// HTTP: the response (stream) for request `id` ended normally.
    StreamEnd { id: Value },
    /// HTTP: the request or its response stream failed (connection refused, reset, bad status).
    StreamFailed { id: Value, reason: String },
    /// stdio: the server's stdout closed (or could not be read).
    Closed(String),
    /// stdio: the end of one read of stdout (its frames were sent before this), with the bytes
    /// of a frame read so far and no newline yet (0: the read ended on a frame's end).
    ReadEnd { unfinished: usize },
}

/// An event with the generation of the connection it came from.
#[derive(Clone, Debug)]
pub struct WireEvent {
    /// Connection generation (a restart makes a new connection).
    pub conn: u32,
    /// What happened.
    pub kind: EventKind,
}

/// The key by which a JSON-RPC id is compared (its JSON text, so `1` and `"1"` differ).
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

struct HttpShared {
    client: reqwest::Client,
    url: String,
    session: Mutex<Option<String>>,
    protocol: Mutex<Option<String>>,
    streams: Mutex<HashMap<String, JoinHandle<()>>>,
    /// Requests whose stream the client breaks the moment its headers open an event stream.
    break_at_headers: Mutex<std::collections::HashSet<String>>,
}

enum Kind {
    Stdio { stdin: tokio::sync::Mutex<Option<ChildStdin>>, tasks: Vec<JoinHandle<()>> },
    Http(Arc<HttpShared>),
}

/// One client connection to a server.
pub struct Connection {
    generation: u32,
    kind: Kind,
    tx: UnboundedSender<WireEvent>,
    evidence: Evidence,
}

/// Bytes of a non-2xx HTTP body kept for the reason.
const MAX_ERROR_BODY: usize = 2048;

impl Connection {
    /// A connection over a stdio server's pipes. Reads stdout (frames) and stderr (logged)
    /// until they close.
    pub fn stdio(
        generation: u32,
        stdin: ChildStdin,
        stdout: ChildStdout,
        stderr: ChildStderr,
        tx: UnboundedSender<WireEvent>,
        evidence: Evidence,
    ) -> Connection {
        let reader = tokio::spawn(read_stdout(generation, stdout, tx.clone(), evidence.clone()));
        let logger = tokio::spawn(log_stderr(stderr, evidence.clone()));
        Connection {
            generation,
            kind: Kind::Stdio { stdin: tokio::sync::Mutex::new(Some(stdin)), tasks: vec![reader, logger] },
            tx,
            evidence,
        }
    }

    /// A connection to a Streamable HTTP endpoint.
    pub fn http(generation: u32, url: &str, tx: UnboundedSender<WireEvent>, evidence: Evidence) -> Result<Connection> {
        let client = reqwest::Client::builder()
            .no_proxy()
            .connect_timeout(std::time::Duration::from_secs(5))
            .build()
            .map_err(|e| anyhow!("cannot build an HTTP client: {e}"))?;
        let shared = HttpShared {
            client,
            url: url.to_string(),
            session: Mutex::new(None),
            protocol: Mutex::new(None),
            streams: Mutex::new(HashMap::new()),
            break_at_headers: Mutex::new(Default::default()),
        };
        Ok(Connection { generation, kind: Kind::Http(Arc::new(shared)), tx, evidence })
    }

    /// This connection's generation.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// HTTP only: send `MCP-Protocol-Version: version` on later requests.
    pub fn set_protocol_version(&self, version: &str) {
        if let Kind::Http(h) = &self.kind {
            *h.protocol.lock().expect("lock") = Some(version.to_string());
        }
    }

    /// HTTP: the `MCP-Session-Id` the server gave at initialization, if it gave one.
    pub fn session_id(&self) -> Option<String> {
        match &self.kind {
            Kind::Http(h) => h.session.lock().expect("lock").clone(),
            Kind::Stdio { .. } => None,
        }
    }

    /// HTTP: DELETE the MCP endpoint under this connection's session id, as a client ending its
    /// session does, waiting at most `bound` for the answer: its status and the start of its
    /// body, or why none came.
    pub async fn delete_session(&self, bound: std::time::Duration) -> Result<(u16, String)> {
        let Kind::Http(h) = &self.kind else { return Err(anyhow!("a session is ended by DELETE only over HTTP")) };
        let session = h.session.lock().expect("lock").clone().ok_or_else(|| anyhow!("no session id to end"))?;
        self.evidence.note(format!("http DELETE {} with MCP-Session-Id {session}", h.url));
        let mut req = h.client.delete(&h.url).header("mcp-session-id", &session).timeout(bound);
        if let Some(v) = h.protocol.lock().expect("lock").clone() {
            req = req.header("mcp-protocol-version", v);
        }
        let resp = req.send().await.map_err(|e| anyhow!("{}", error_chain(&e)))?;
        let status = resp.status().as_u16();
        let content_type =
            resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
        self.evidence.record(Event::Transport(Transport::HttpResponse { id: None, status, content_type }));
        let body = capped_body(resp, MAX_ERROR_BODY).await.unwrap_or_default();
        Ok((status, body.trim().to_string()))
    }

    /// Send one message. For HTTP the POST runs in the background; its response (and any
    /// failure) arrives as events.
    pub async fn send(&self, msg: &Value) -> Result<()> {
        let text = msg.to_string();
        match &self.kind {
            Kind::Stdio { stdin, .. } => {
                self.evidence.frame(Direction::Out, "stdio", &text);
                let mut guard = stdin.lock().await;
                let pipe = guard.as_mut().ok_or_else(|| anyhow!("stdin already closed"))?;
                let mut line = text.into_bytes();
                line.push(b'\n');
                pipe.write_all(&line).await.map_err(|e| anyhow!("cannot write to the server's stdin: {e}"))?;
                pipe.flush().await.map_err(|e| anyhow!("cannot write to the server's stdin: {e}"))?;
                Ok(())
            }
            Kind::Http(h) => {
                self.evidence.frame(Direction::Out, "http POST", &text);
                let id = msg.get("id").cloned().filter(|_| msg.get("method").is_some());
                let task = tokio::spawn(post(
                    self.generation,
                    h.clone(),
                    text,
                    id.clone(),
                    self.tx.clone(),
                    self.evidence.clone(),
                ));
                if let Some(id) = id {
                    h.streams.lock().expect("lock").insert(id_key(&id), task);
                }
                Ok(())
            }
        }
    }

    /// HTTP: break the response stream of request `id` in its own task, the moment its headers
    /// open an event stream (the reply still to come); a JSON body, which comes with its
    /// headers, is read as usual.
    pub fn break_at_headers(&self, id: &Value) {
        if let Kind::Http(h) = &self.kind {
            h.break_at_headers.lock().expect("lock").insert(id_key(id));
        }
    }

    /// HTTP: close the response stream of request `id` (drop its connection). Returns whether
    /// a stream was open.
    pub fn close_stream(&self, id: &Value) -> bool {
        match &self.kind {
            Kind::Http(h) => match h.streams.lock().expect("lock").remove(&id_key(id)) {
                Some(task) => {
                    let open = !task.is_finished();
                    task.abort();
                    self.evidence.record(Event::Transport(Transport::CloseStream { id: id.clone(), was_open: open }));
                    open
                }
                None => false,
            },
            Kind::Stdio { .. } => false,
        }
    }

    /// Close the client side: stdio closes the server's stdin; HTTP aborts every open stream.
    pub async fn close(&self) {
        match &self.kind {
            Kind::Stdio { stdin, .. } => {
                stdin.lock().await.take();
            }
            Kind::Http(h) => {
                for (_, task) in h.streams.lock().expect("lock").drain() {
                    task.abort();
                }
            }
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        match &self.kind {
            Kind::Stdio { tasks, .. } => tasks.iter().for_each(|t| t.abort()),
            Kind::Http(h) => h.streams.lock().expect("lock").drain().for_each(|(_, t)| t.abort()),
        }
    }
}

async fn read_stdout(generation: u32, mut stdout: ChildStdout, tx: UnboundedSender<WireEvent>, evidence: Evidence) {
    let send = |kind| {
        let _ = tx.send(WireEvent { conn: generation, kind });
    };
    let mut splitter = LineSplitter::new(MAX_FRAME);
    let mut buf = vec![0u8; 64 * 1024];
    let mut overlong_reported = false;
    loop {
        let n = match stdout.read(&mut buf).await {
            Ok(0) => {
                let pending = splitter.pending();
                if pending > 0 {
                    evidence.record(Event::Garbage {
                        channel: "stdio".into(),
                        reason: format!("{pending} bytes after the last newline"),
                    });
                    send(EventKind::Garbage(ProtocolBreach::EndedInsideFrame { bytes: pending }));
                }
                evidence.record(Event::Transport(Transport::StdoutClosed));
                send(EventKind::Closed("the server closed its stdout".into()));
                return;
            }
            Ok(n) => n,
            Err(e) => {
                send(EventKind::Closed(format!("cannot read the server's stdout: {e}")));
                return;
            }
        };
        for piece in splitter.push(&buf[..n]) {
            match piece {
                Piece::Overlong { bytes } => {
                    let breach = ProtocolBreach::Overlong { bytes: Some(bytes), bound: MAX_FRAME };
                    evidence.record(Event::Garbage { channel: "stdio".into(), reason: breach.to_string() });
                    if !overlong_reported {
                        send(EventKind::Garbage(breach));
                    }
                    overlong_reported = false;
                }
                Piece::Line(line) => {
                    let text = String::from_utf8_lossy(&line);
                    match classify(&line) {
                        Frame::Blank => {}
                        Frame::Messages(msgs) => {
                            evidence.frame(Direction::In, "stdio", &text);
                            msgs.into_iter().for_each(|m| send(EventKind::Message(m)));
                        }
                        Frame::Garbage(_) if not_json(&line) => {
                            evidence.frame(Direction::In, "stdio", &text);
                            send(EventKind::NonJson(quote(&text)));
                        }
                        Frame::Garbage(reason) => {
                            evidence.frame(Direction::In, "stdio", &text);
                            send(EventKind::Garbage(ProtocolBreach::BadFrame { channel: Channel::Stdout, reason }));
                        }
                    }
                }
            }
        }
        send(EventKind::ReadEnd { unfinished: splitter.pending() });
        // A server that writes past the bound and no newline may never write one: say so now,
        // not at a newline or an end of stream that may never come.
        if splitter.pending() > MAX_FRAME && !overlong_reported {
            overlong_reported = true;
            let breach = ProtocolBreach::Overlong { bytes: None, bound: MAX_FRAME };
            evidence.record(Event::Garbage { channel: "stdio".into(), reason: breach.to_string() });
            send(EventKind::Garbage(breach));
        }
    }
}

/// Lines of stderr kept in the evidence (the rest are counted, never buffered).
const MAX_STDERR_LINES: usize = 200;

async fn log_stderr(mut stderr: ChildStderr, evidence: Evidence) {
    let mut splitter = LineSplitter::new(4096);
    let mut buf = vec![0u8; 16 * 1024];
    let (mut logged, mut dropped) = (0usize, 0usize);
    while let Ok(n) = stderr.read(&mut buf).await {
        if n == 0 {
            break;
        }
        for piece in splitter.push(&buf[..n]) {
            match piece {
                Piece::Line(line) if logged < MAX_STDERR_LINES => {
                    logged += 1;
                    evidence.record(Event::Stderr(Stderr::Line { line: String::from_utf8_lossy(&line).into_owned() }));
                }
                _ => dropped += 1,
            }
        }
    }
    if dropped > 0 {
        evidence.record(Event::Stderr(Stderr::Dropped { dropped_lines: dropped }));
    }
}

async fn post(
    generation: u32,
    h: Arc<HttpShared>,
    body: String,
    id: Option<Value>,
    tx: UnboundedSender<WireEvent>,
    evidence: Evidence,
) {
    let send = |kind| {
        let _ = tx.send(WireEvent { conn: generation, kind });
    };
    let fail = |reason: String| {
        evidence.record(Event::Transport(Transport::HttpFailed { id: id.clone(), reason: reason.clone() }));
        if let Some(id) = &id {
            send(EventKind::StreamFailed { id: id.clone(), reason });
        }
    };
    let mut req = h
        .client
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body.clone());
    if let Some(s) = h.session.lock().expect("lock").clone() {
        req = req.header("mcp-session-id", s);
    }
    let protocol = h.protocol.lock().expect("lock").clone();
    if let Some(v) = protocol {
        if v.as_str() >= "2026-07-28" {
            // SEP-2243 standard headers, which 2026-07-28 servers may require: the method,
            // and the name a request acts on (printable ASCII names only; a task's id for
            // `tasks/get`, as the tasks extension has it).
            let msg: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
            if let Some(method) = msg.get("method").and_then(Value::as_str) {
                req = req.header("mcp-method", method);
                let name = match method {
                    "tools/call" | "prompts/get" => msg.pointer("/params/name"),
                    "resources/read" => msg.pointer("/params/uri"),
                    "tasks/get" => msg.pointer("/params/taskId"),
                    _ => None,
                };
                if let Some(n) = name.and_then(Value::as_str).filter(|n| n.bytes().all(|b| (0x20..0x7f).contains(&b))) {
                    req = req.header("mcp-name", n);
                }
            }
        }
        req = req.header("mcp-protocol-version", v);
    }
    let resp = match req.send().await {
        Ok(r) => r,
        Err(e) => return fail(format!("HTTP request failed: {}", error_chain(&e))),
    };
    let status = resp.status().as_u16();
    if let Some(s) = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()) {
        *h.session.lock().expect("lock") = Some(s.to_string());
    }
    let content_type =
        resp.headers().get("content-type").and_then(|v| v.to_str().ok()).unwrap_or("").to_ascii_lowercase();
    evidence.record(Event::Transport(Transport::HttpResponse {
        id: id.clone(),
        status,
        content_type: content_type.clone(),
    }));
    if let Some(id) = &id {
        send(EventKind::Headers { id: id.clone(), status, sse: content_type.starts_with("text/event-stream") });
    }
    if !resp.status().is_success() {
        let body = capped_body(resp, MAX_ERROR_BODY).await.unwrap_or_default();
        return fail(format!("HTTP {status}: {}", body.trim()));
    }
    let Some(id) = id.clone() else { return };
    let sse = content_type.starts_with("text/event-stream");
    if sse && h.break_at_headers.lock().expect("lock").remove(&id_key(&id)) {
        // The client's stream breaks here, before any event of it is read.
        evidence.record(Event::Transport(Transport::CloseStream { id, was_open: true }));
        return;
    }
    if sse {
        let mut events = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
        while let Some(item) = events.next().await {
            match item {
                Ok(sse) => {
                    let Some(data) = sse.data else { continue };
                    evidence.frame(Direction::In, "http SSE", &data);
                    match classify(data.as_bytes()) {
                        Frame::Messages(msgs) => msgs.into_iter().for_each(|m| send(EventKind::Message(m))),
                        Frame::Blank => {}
                        Frame::Garbage(reason) => {
                            send(EventKind::Garbage(ProtocolBreach::BadFrame { channel: Channel::SseData, reason }))
                        }
                    }
                }
                Err(e) => return fail(format!("SSE stream broke: {e}")),
            }
        }
        evidence.record(Event::Transport(Transport::StreamEnd { id: id.clone() }));
        send(EventKind::StreamEnd { id });
    } else if content_type.starts_with("application/json") {
        match capped_body(resp, MAX_FRAME).await {
            Ok(text) => {
                evidence.frame(Direction::In, "http JSON", &text);
                match classify(text.as_bytes()) {
                    Frame::Messages(msgs) => msgs.into_iter().for_each(|m| send(EventKind::Message(m))),
                    Frame::Blank => {}
                    Frame::Garbage(reason) => {
                        send(EventKind::Garbage(ProtocolBreach::BadFrame { channel: Channel::HttpBody, reason }))
                    }
                }
                send(EventKind::StreamEnd { id });
            }
            Err(reason) => fail(reason),
        }
    } else {
        fail(format!("HTTP {status} with content type `{content_type}`, expected JSON or an SSE stream"));
    }
}

async fn capped_body(resp: reqwest::Response, cap: usize) -> Result<String, String> {
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| format!("HTTP body broke: {}", error_chain(&e)))?;
        if body.len() + chunk.len() > cap {
            return Err(format!("HTTP body over the {cap}-byte bound"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(inner) = source {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        source = inner.source();
    }
    s
}

/// Log a server's output stream line by line (its first 200 lines) as `channel`, and keep
/// every line in `tap` where one is given.
pub async fn log_lines<R: tokio::io::AsyncRead + Unpin>(
    mut r: R,
    channel: &'static str,
    evidence: Evidence,
    tap: Option<ServerLog>,
) {
    use tokio::io::AsyncReadExt;
    let mut splitter = LineSplitter::new(4096);
    let mut buf = vec![0u8; 16 * 1024];
    let mut logged = 0usize;
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        for piece in splitter.push(&buf[..n]) {
            if let Piece::Line(line) = piece {
                if let Some(tap) = &tap {
                    tap.push(String::from_utf8_lossy(&line).into_owned());
                }
                if logged < 200 {
                    logged += 1;
                    evidence.record(Event::Output {
                        channel: channel.into(),
                        line: String::from_utf8_lossy(&line).into_owned(),
                    });
                }
            }
        }
    }
}
