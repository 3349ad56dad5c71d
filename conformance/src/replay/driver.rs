//! The driver: one method per model action (as quint-connect's drivers), over a [`Session`]
//! with a real server. Driven steps (the client's, the transport's, the environment's) are
//! performed; server steps are awaited with a bound and observed (a response frame, the
//! observer's count, a process exit), never assumed.

use super::evidence::Evidence;
use super::observer::{self, Source};
use super::pacing::{self, AttemptId, Hold};
use super::process::{LaunchSpec, ServerProcess};
use super::wire::{id_key, Connection, EventKind, WireEvent};
use super::{ReplayOptions, ReplayResult, Revision, StepRecord, Target, Verdict};
use mcp_once_model::profile::HttpCancel;
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Profile, State, Transport};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// Name the runner gives itself in `clientInfo`.
const CLIENT_NAME: &str = "mcp-once";

/// Why a replay stopped before its end.
#[derive(Debug)]
pub struct Stop {
    /// The verdict it leads to.
    pub verdict: Verdict,
    /// One line: what happened.
    pub reason: String,
}

fn stop(verdict: Verdict, reason: impl Into<String>) -> Stop {
    Stop { verdict, reason: reason.into() }
}

/// A live connection to the server under test, with everything it has said so far.
pub struct Session {
    /// The options.
    pub opts: ReplayOptions,
    /// The evidence log.
    pub evidence: Evidence,
    /// The wire revision.
    pub revision: Revision,
    server: Option<ServerProcess>,
    server_stdin: Option<tokio::process::ChildStdin>,
    conn: Option<Connection>,
    generation: u32,
    tx: UnboundedSender<WireEvent>,
    rx: UnboundedReceiver<WireEvent>,
    responses: HashMap<(u32, String), Vec<Value>>,
    failures: HashMap<(u32, String), String>,
    headers: HashSet<(u32, String)>,
    closed: HashMap<u32, String>,
    /// Protocol breaches the server committed, in order (output that is not JSON-RPC, a
    /// response to an id the runner never sent, more responses to an id than requests with it).
    pub garbage: Vec<String>,
    requests: HashMap<(u32, String), usize>,
    notifications: u64,
    exited: Option<String>,
    housekeeping: u64,
    /// Whether the tool takes `delay_before_ms` and `delay_after_ms` (pacing is possible).
    pub pace_args: bool,
    started_once: bool,
    last_logged: Option<f64>,
}

/// Poll interval for observers that cannot signal (a file, a command, a tool).
fn tick(opts: &ReplayOptions) -> Duration {
    match opts.observer.source {
        Source::Ledger { .. } => Duration::from_millis(5),
        _ => Duration::from_millis(50),
    }
}

impl Session {
    /// A session with no server started yet.
    pub fn new(opts: ReplayOptions, revision: Revision, evidence: Evidence) -> Session {
        let (tx, rx) = unbounded_channel();
        Session {
            opts,
            evidence,
            revision,
            server: None,
            server_stdin: None,
            conn: None,
            generation: 0,
            tx,
            rx,
            responses: HashMap::new(),
            failures: HashMap::new(),
            headers: HashSet::new(),
            closed: HashMap::new(),
            garbage: Vec::new(),
            requests: HashMap::new(),
            notifications: 0,
            exited: None,
            housekeeping: 0,
            pace_args: false,
            started_once: false,
            last_logged: None,
        }
    }

    /// The current connection's generation.
    pub fn generation(&self) -> u32 {
        self.generation
    }

    /// Whether the runner started the server process (and so can kill and restart it).
    pub fn can_restart(&self) -> bool {
        !matches!(self.opts.target, Target::Http { launch: None, .. })
    }

    /// Start (or restart) the server and connect: spawn it, wait until it answers the
    /// handshake, and on the first start check the tool exists.
    pub async fn start(&mut self) -> Result<(), String> {
        self.generation += 1;
        self.exited = None;
        let deadline = Instant::now() + self.opts.start_timeout;
        let gen = self.generation;
        match self.opts.target.clone() {
            Target::Stdio(spec) => {
                let (proc_, pipes) = self.spawn(&spec)?;
                self.conn = Some(Connection::stdio(
                    gen,
                    pipes.stdin,
                    pipes.stdout,
                    pipes.stderr,
                    self.tx.clone(),
                    self.evidence.clone(),
                ));
                self.server = Some(proc_);
            }
            Target::Http { url, launch } => {
                if let Some(spec) = launch {
                    let (proc_, pipes) = self.spawn(&spec)?;
                    tokio::spawn(log_lines(pipes.stdout, "server stdout", self.evidence.clone()));
                    tokio::spawn(log_lines(pipes.stderr, "server stderr", self.evidence.clone()));
                    self.server_stdin = Some(pipes.stdin);
                    self.server = Some(proc_);
                    self.wait_listening(&url, deadline).await?;
                }
                let conn =
                    Connection::http(gen, &url, self.tx.clone(), self.evidence.clone()).map_err(|e| e.to_string())?;
                self.conn = Some(conn);
            }
        }
        self.handshake(deadline).await?;
        if !self.started_once {
            self.started_once = true;
            self.discover_tool(deadline).await?;
        }
        Ok(())
    }

    fn spawn(&mut self, spec: &LaunchSpec) -> Result<(ServerProcess, super::process::Pipes), String> {
        let (p, pipes) = ServerProcess::spawn(spec).map_err(|e| format!("{e:#}"))?;
        self.evidence.record("process", json!({"event": "start", "pid": p.pid(), "argv": spec.argv}));
        Ok((p, pipes))
    }

    async fn wait_listening(&mut self, url: &str, deadline: Instant) -> Result<(), String> {
        let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
        let host = parsed.host_str().unwrap_or("127.0.0.1").trim_matches(['[', ']']).to_string();
        let port = parsed.port_or_known_default().unwrap_or(80);
        loop {
            if let Some(why) = self.check_exit() {
                return Err(format!("the launch command exited before the server listened ({why})"));
            }
            let attempt =
                tokio::time::timeout(Duration::from_millis(200), tokio::net::TcpStream::connect((host.as_str(), port)))
                    .await;
            if let Ok(Ok(_)) = attempt {
                self.evidence.record("process", json!({"event": "listening", "url": url}));
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "nothing listens on {host}:{port} within {} ms of the launch",
                    self.opts.start_timeout.as_millis()
                ));
            }
            // Nothing signals that a port opened; poll it with a bound.
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    fn with_meta(&self, mut params: Value) -> Value {
        if self.revision == Revision::R2026_07_28 {
            let meta =
                params.as_object_mut().expect("params are an object").entry("_meta").or_insert_with(|| json!({}));
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

    async fn handshake(&mut self, deadline: Instant) -> Result<(), String> {
        match self.revision {
            Revision::R2025_11_25 => {
                let params = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}});
                let result =
                    self.request_until("initialize", params, deadline).await.map_err(|e| format!("initialize: {e}"))?;
                let version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .ok_or("initialize: the result has no protocolVersion")?
                    .to_string();
                if version != "2025-11-25" {
                    self.evidence.note(format!("the server negotiated protocol {version}, not 2025-11-25"));
                }
                let conn = self.conn.as_ref().expect("connected");
                conn.set_protocol_version(&version);
                conn.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .await
                    .map_err(|e| format!("{e:#}"))?;
            }
            Revision::R2026_07_28 => {
                self.conn.as_ref().expect("connected").set_protocol_version("2026-07-28");
                let params = self.with_meta(json!({}));
                let result = self.request_until("server/discover", params, deadline).await.map_err(|e| {
                    format!("server/discover: {e} (does the server speak 2026-07-28? try --revision 2025-11-25)")
                })?;
                let versions = result
                    .get("supportedVersions")
                    .or_else(|| result.get("protocolVersions"))
                    .cloned()
                    .unwrap_or(Value::Null);
                if !versions.as_array().is_some_and(|v| v.iter().any(|x| x == "2026-07-28")) {
                    return Err(format!(
                        "server/discover does not list 2026-07-28 (it says {versions}); try --revision 2025-11-25"
                    ));
                }
            }
        }
        Ok(())
    }

    async fn discover_tool(&mut self, deadline: Instant) -> Result<(), String> {
        let params = self.with_meta(json!({}));
        let result =
            self.request_until("tools/list", params, deadline).await.map_err(|e| format!("tools/list: {e}"))?;
        let tools = result.get("tools").and_then(Value::as_array).ok_or("tools/list: the result has no tools list")?;
        let tool = tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(&self.opts.tool));
        let Some(tool) = tool else {
            let names: Vec<&str> = tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
            return Err(format!("the server has no tool `{}` (it lists: {})", self.opts.tool, names.join(", ")));
        };
        let props = tool.pointer("/inputSchema/properties");
        self.pace_args = self.opts.pace
            && ["delay_before_ms", "delay_after_ms"].iter().all(|k| props.and_then(|p| p.get(*k)).is_some());
        self.evidence.note(if self.pace_args {
            "the tool takes delay_before_ms and delay_after_ms: held steps are paced by them".to_string()
        } else {
            "the tool takes no delay arguments (or pacing is off): server steps run at their own speed, and their order is checked after the fact".to_string()
        });
        Ok(())
    }

    /// Send a request of the runner's own (a string id that model ids never take) and wait
    /// for its result within `deadline`.
    pub async fn request_until(&mut self, method: &str, params: Value, deadline: Instant) -> Result<Value, String> {
        self.housekeeping += 1;
        let id = json!(format!("mcp-once-{}", self.housekeeping));
        let conn = self.conn.as_ref().ok_or("no connection")?;
        let gen = conn.generation();
        conn.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
            .map_err(|e| format!("{e:#}"))?;
        let key = (gen, id_key(&id));
        *self.requests.entry(key.clone()).or_default() += 1;
        loop {
            if let Some(resp) = self.responses.get(&key).and_then(|v| v.first()) {
                return match (resp.get("result"), resp.get("error")) {
                    (Some(r), _) => Ok(r.clone()),
                    (_, Some(e)) => Err(format!("error {e}")),
                    _ => Err(format!("malformed response {resp}")),
                };
            }
            if let Some(f) = self.failures.get(&key) {
                return Err(f.clone());
            }
            if let Some(c) = self.closed.get(&gen) {
                return Err(self.with_garbage(c.clone()));
            }
            if let Some(why) = self.check_exit() {
                return Err(self.with_garbage(format!("the server exited ({why})")));
            }
            if Instant::now() >= deadline {
                return Err(self.with_garbage("no answer within the bound".into()));
            }
            self.pump(deadline).await;
        }
    }

    fn with_garbage(&self, reason: String) -> String {
        format!("{reason}{}", self.breach_note())
    }

    /// `"; the server broke the protocol: …"` naming the first breach, or nothing.
    pub fn breach_note(&self) -> String {
        self.garbage.first().map_or(String::new(), |g| format!("; the server broke the protocol: {g}"))
    }

    /// stdio: wait at most `bound` for connection `gen`'s stdout to close (its last output
    /// read). Returns at once over HTTP.
    pub async fn await_closed(&mut self, gen: u32, bound: Duration) {
        if self.opts.target.transport() != Transport::Stdio {
            return;
        }
        let deadline = Instant::now() + bound;
        while self.closed(gen).is_none() && Instant::now() < deadline {
            self.pump(deadline).await;
        }
    }

    /// Take in every event already waiting, without waiting for more.
    pub async fn drain(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            self.take(ev).await;
        }
    }

    /// Whether the server process (if the runner started one) has exited; reaps it.
    pub fn check_exit(&mut self) -> Option<String> {
        if let Some(why) = &self.exited {
            return Some(why.clone());
        }
        let status = self.server.as_mut()?.try_exit()?;
        let why = format!("{status}");
        self.evidence
            .record("process", json!({"event": "exit", "pid": self.server.as_ref().map(|s| s.pid()), "status": why}));
        self.exited = Some(why.clone());
        Some(why)
    }

    /// Wait for one event (or until `deadline`, or one poll tick) and take it in.
    pub async fn pump(&mut self, deadline: Instant) {
        let until = deadline.min(Instant::now() + tick(&self.opts));
        if let Ok(Some(ev)) = tokio::time::timeout_at(until, self.rx.recv()).await {
            self.take(ev).await;
            while let Ok(ev) = self.rx.try_recv() {
                self.take(ev).await;
            }
        }
    }

    async fn take(&mut self, ev: WireEvent) {
        let gen = ev.conn;
        match ev.kind {
            EventKind::Message(m) => {
                let method = m.get("method").and_then(Value::as_str).map(str::to_string);
                match (m.get("id").cloned(), method) {
                    (Some(id), None) => {
                        let key = (gen, id_key(&id));
                        let asked = self.requests.get(&key).copied().unwrap_or(0);
                        let answers = self.responses.entry(key).or_default();
                        answers.push(m);
                        if asked == 0 {
                            self.garbage.push(format!("a response to id {id}, which the runner never sent"));
                        } else if answers.len() > asked {
                            self.garbage.push(format!(
                                "{} responses to id {id}, sent {asked} time(s) (a duplicated response)",
                                answers.len()
                            ));
                        }
                    }
                    (Some(id), Some(method)) => {
                        // A request from the server: answer ping, refuse anything else.
                        let reply = if method == "ping" {
                            json!({"jsonrpc": "2.0", "id": id, "result": {}})
                        } else {
                            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": format!("mcp-once does not handle {method}")}})
                        };
                        if let Some(conn) = self.conn.as_ref().filter(|c| c.generation() == gen) {
                            let _ = conn.send(&reply).await;
                        }
                    }
                    (None, _) => self.notifications += 1,
                }
            }
            EventKind::Garbage(reason) => self.garbage.push(reason),
            EventKind::Headers { id, .. } => {
                self.headers.insert((gen, id_key(&id)));
            }
            EventKind::StreamEnd { id } => {
                let key = (gen, id_key(&id));
                if !self.responses.contains_key(&key) {
                    self.failures.entry(key).or_insert_with(|| "the response stream ended without a response".into());
                }
            }
            EventKind::StreamFailed { id, reason } => {
                self.failures.entry((gen, id_key(&id))).or_insert(reason);
            }
            EventKind::Closed(reason) => {
                self.closed.insert(gen, reason);
            }
        }
    }

    /// Read the observer once.
    pub async fn read_observer(&mut self) -> Result<f64, String> {
        match self.opts.observer.source.clone() {
            Source::Ledger { path, filter } => observer::read_ledger(&path, filter.as_ref()).await,
            Source::Command { argv } => observer::read_command(&argv, self.opts.step_timeout).await,
            Source::Tool { name, args, extract } => {
                if self.conn.is_none() || self.exited.is_some() {
                    return Err("the tool observer needs the server running".into());
                }
                let params = self.with_meta(json!({"name": name, "arguments": args}));
                let deadline = Instant::now() + self.opts.step_timeout;
                let result = self
                    .request_until("tools/call", params, deadline)
                    .await
                    .map_err(|e| format!("observer tool `{name}`: {e}"))?;
                observer::extract(&result, &extract)
            }
        }
    }

    /// Read the observer until two readings in a row agree (at most eight reads).
    pub async fn read_stable(&mut self) -> Result<f64, String> {
        let mut last = self.read_observer().await?;
        let mut seen = vec![last];
        for _ in 0..7 {
            let now = self.read_observer().await?;
            if now == last {
                // Log a reading when it changes, not every poll.
                if self.last_logged != Some(now) {
                    self.last_logged = Some(now);
                    self.evidence.record("observe", json!({"reading": now, "reads": seen.len() + 1}));
                }
                return Ok(now);
            }
            seen.push(now);
            last = now;
        }
        Err(format!("observer readings did not settle: {seen:?}"))
    }

    /// Send a raw message on the current connection.
    pub async fn send(&mut self, msg: &Value) -> Result<(), String> {
        let conn = self.conn.as_ref().ok_or("no connection to the server")?;
        if let (Some(id), Some(_)) = (msg.get("id"), msg.get("method")) {
            *self.requests.entry((conn.generation(), id_key(id))).or_default() += 1;
        }
        conn.send(msg).await.map_err(|e| format!("{e:#}"))
    }

    /// SIGKILL the server's process group and reap it.
    pub async fn kill(&mut self) -> Result<(), String> {
        let server =
            self.server.as_mut().ok_or("the runner did not start the server, so it cannot kill it (give --launch)")?;
        let pid = server.pid();
        let status = server.kill(Duration::from_secs(5)).await.map_err(|e| format!("{e:#}"))?;
        self.evidence.record(
            "process",
            json!({"event": "killed", "signal": "SIGKILL", "pid": pid, "status": format!("{status}")}),
        );
        self.exited = Some(format!("killed by the runner ({status})"));
        self.server_stdin = None;
        Ok(())
    }

    /// Close the connection and stop the server (SIGTERM, then SIGKILL after a grace period).
    pub async fn shutdown(&mut self) {
        if let Some(conn) = self.conn.as_ref() {
            conn.close().await;
        }
        self.server_stdin = None;
        if let Some(mut server) = self.server.take() {
            let pid = server.pid();
            let grace_ms = self.opts.stop_grace.as_millis() as u64;
            self.evidence
                .record("process", json!({"event": "stop", "pid": pid, "signal": "SIGTERM", "grace_ms": grace_ms}));
            match server.stop(self.opts.stop_grace).await {
                Ok(status) => self
                    .evidence
                    .record("process", json!({"event": "stopped", "pid": pid, "status": format!("{status}")})),
                Err(e) => self
                    .evidence
                    .record("process", json!({"event": "stop-failed", "pid": pid, "error": format!("{e:#}")})),
            }
        }
        // stdio: read what the server wrote before it stopped to the end (bounded), so that a
        // late breach (a duplicated response) is seen before the verdict.
        self.await_closed(self.generation, Duration::from_secs(1)).await;
        self.conn.take();
    }

    /// The responses received for `(gen, id)` so far.
    pub fn responses_for(&self, gen: u32, id: &Value) -> &[Value] {
        self.responses.get(&(gen, id_key(id))).map_or(&[], Vec::as_slice)
    }

    /// How many notifications the server has sent (any connection).
    pub fn notifications(&self) -> u64 {
        self.notifications
    }

    /// The failure of the request `(gen, id)`, if it failed.
    pub fn failure_for(&self, gen: u32, id: &Value) -> Option<&str> {
        self.failures.get(&(gen, id_key(id))).map(String::as_str)
    }

    /// Whether connection `gen` was closed by the server.
    pub fn closed(&self, gen: u32) -> Option<&str> {
        self.closed.get(&gen).map(String::as_str)
    }

    /// Whether HTTP response headers for `(gen, id)` arrived.
    pub fn has_headers(&self, gen: u32, id: &Value) -> bool {
        self.headers.contains(&(gen, id_key(id)))
    }

    /// Close the response stream of `(gen, id)` (HTTP).
    pub fn close_stream(&self, id: &Value) -> bool {
        self.conn.as_ref().is_some_and(|c| c.close_stream(id))
    }

    /// Build a `tools/call` for the tool under test, with the key (if any) where the options
    /// put it, and the pacing delays (if the tool takes them).
    /// `stagger` lengthens a held commit so that held commits keep the trace's order.
    pub fn call_message(&self, id: &Value, key: Option<&str>, hold: Hold, stagger: Duration) -> Value {
        let mut args: Map<String, Value> = self.opts.args.clone();
        if self.pace_args {
            let w = self.opts.window.as_millis() as u64;
            if hold.before_commit {
                args.insert("delay_before_ms".into(), json!(w + stagger.as_millis() as u64));
            }
            if hold.before_respond {
                args.insert("delay_after_ms".into(), json!(w));
            }
        }
        let mut params = json!({"name": self.opts.tool});
        if let Some(k) = key {
            match &self.opts.key_at {
                super::KeyPlacement::Params => params["idempotencyKey"] = json!(k),
                super::KeyPlacement::Meta(name) => params["_meta"] = json!({ name.clone(): k }),
                super::KeyPlacement::Arg(name) => {
                    args.insert(name.clone(), json!(k));
                }
            }
        }
        params["arguments"] = Value::Object(args);
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": self.with_meta(params)})
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // `ServerProcess` kills its group when dropped; nothing else to release.
        self.conn.take();
    }
}

async fn log_lines<R: tokio::io::AsyncRead + Unpin>(mut r: R, channel: &'static str, evidence: Evidence) {
    use tokio::io::AsyncReadExt;
    let mut splitter = super::frame::LineSplitter::new(4096);
    let mut buf = vec![0u8; 16 * 1024];
    let mut logged = 0usize;
    while let Ok(n) = r.read(&mut buf).await {
        if n == 0 {
            break;
        }
        for piece in splitter.push(&buf[..n]) {
            if let super::frame::Piece::Line(line) = piece {
                if logged < 200 {
                    logged += 1;
                    evidence.record("output", json!({"channel": channel, "line": String::from_utf8_lossy(&line)}));
                }
            }
        }
    }
}

/// One attempt as the runner sent it.
#[derive(Clone, Debug)]
struct Sent {
    id: Value,
    gen: u32,
    order: usize,
    cancelled: bool,
    stream_closed: bool,
}

/// Replays one trace against a session.
pub struct Driver<'t> {
    /// The session (server, connection, observer).
    pub session: Session,
    trace: &'t TraceFile,
    /// The trace's states as the model has them (empty if the trace is not a path of the model).
    path: Vec<State>,
    profile: Profile,
    holds: BTreeMap<AttemptId, Hold>,
    sent: BTreeMap<AttemptId, Sent>,
    nonce: String,
    baseline: f64,
    pre_crash: Option<i64>,
    steps: Vec<StepRecord>,
    notes: Vec<String>,
    trace_name: String,
    deferred: Vec<(AttemptId, Deferred)>,
}

/// A transport event the client has done but the server has not seen yet (HTTP): the model
/// keeps it in flight until the server reads it, so the runner delivers it then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Deferred {
    /// A `notifications/cancelled` POST.
    CancelNotification,
    /// Closing the attempt's response stream.
    CloseStream,
}

fn expected_effects(state: &State) -> u64 {
    state.ledger.iter().map(|n| u64::from(*n)).sum()
}

fn summarize(resp: &Value) -> String {
    if let Some(e) = resp.get("error") {
        return format!("error {}", e);
    }
    let r = resp.get("result").cloned().unwrap_or(Value::Null);
    let text: Vec<&str> = r
        .get("content")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(|x| x.get("text").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    let mut s = if text.is_empty() { r.to_string() } else { format!("\"{}\"", text.join(" ")) };
    if r.get("isError") == Some(&Value::Bool(true)) {
        s = format!("tool error {s}");
    }
    if s.len() > 160 {
        let mut cut = 160;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

impl<'t> Driver<'t> {
    /// A driver for `trace` (named `trace_name` in reports) under `profile`.
    pub fn new(session: Session, trace: &'t TraceFile, trace_name: &str, profile: Profile) -> Driver<'t> {
        let nonce = format!(
            "mcp-once-{:x}-{:x}",
            std::process::id(),
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        );
        let path = trace.validate(trace_name, &profile).map(|v| v.path.states).unwrap_or_default();
        Driver {
            session,
            holds: pacing::holds(&trace.actions),
            trace,
            path,
            profile,
            sent: BTreeMap::new(),
            nonce,
            baseline: 0.0,
            pre_crash: None,
            steps: Vec::new(),
            notes: Vec::new(),
            trace_name: trace_name.into(),
            deferred: Vec::new(),
        }
    }

    fn note(&mut self, text: String) {
        self.session.evidence.note(text.clone());
        self.notes.push(text);
    }

    /// Run the whole trace and reach a verdict. The server is always stopped at the end.
    pub async fn run(mut self) -> ReplayResult {
        let expected = self.path.last().map_or(0, expected_effects);
        let outcome = self.run_steps().await;
        let (verdict, reason, observed) = match outcome {
            Err(s) => (s.verdict, s.reason, self.effects_now().await.ok()),
            Ok(()) => match self.effects_now().await {
                Err(e) => (Verdict::Inconclusive, format!("the observer could not tell at the end: {e}"), None),
                Ok(n) if n < expected as i64 => (
                    Verdict::Inconclusive,
                    format!(
                        "the observer counts {n} effects at the end, fewer than the {expected} it saw step by step"
                    ),
                    Some(n),
                ),
                Ok(n) => {
                    let mut reason = format!(
                        "the server ran the call's side effect {n} times, as the model's trace says ({})",
                        self.trace.property
                    );
                    if n > expected as i64 {
                        reason = format!(
                            "the server ran the side effect {n} times, more than the trace's {expected} ({})",
                            self.trace.property
                        );
                    }
                    (Verdict::Confirmed, reason, Some(n))
                }
            },
        };
        let can_settle = self.session.opts.observer.outside_server();
        self.session.shutdown().await;
        // `not-reproduced` says the server behaved; one that broke JSON-RPC on the way (a
        // duplicated response, an id never sent, non-JSON output) cannot support that. Its
        // output has been read to the end by now (shutdown waits for it).
        self.session.drain().await;
        let (verdict, reason) = match (verdict, self.session.garbage.first().cloned()) {
            (Verdict::NotReproduced, Some(g)) => {
                (Verdict::Diverged, format!("the server broke the protocol: {g} (otherwise: {reason})"))
            }
            (Verdict::Confirmed, Some(g)) => {
                self.note(format!("the server also broke the protocol: {g}"));
                (verdict, reason)
            }
            _ => (verdict, reason),
        };
        let mut settled = None;
        if can_settle {
            if let (Ok(reading), Some(obs)) = (self.session.read_stable().await, observed) {
                if let Ok(n) = self.session.opts.observer.effects(self.baseline, reading) {
                    if n != obs {
                        settled = Some(n);
                        self.note(format!("{} more effect(s) after the last step, from attempts still running when the server was stopped", n - obs));
                    }
                }
            }
        }
        self.session.evidence.record(
            "verdict",
            json!({"verdict": verdict, "reason": reason, "expected_effects": expected, "observed_effects": observed}),
        );
        ReplayResult {
            verdict,
            property: self.trace.property.clone(),
            expected_effects: expected,
            observed_effects: observed,
            settled_effects: settled,
            reason,
            evidence: self.session.evidence.path().map(Into::into),
            trace: self.trace_name.clone(),
            target: self.session.opts.target.describe(),
            revision: self.session.revision,
            observer: self.session.opts.observer.describe(),
            steps: std::mem::take(&mut self.steps),
            notes: std::mem::take(&mut self.notes),
            wall_ms: self.session.evidence.elapsed_ms(),
        }
    }

    async fn effects_now(&mut self) -> Result<i64, String> {
        let r = self.session.read_stable().await?;
        self.session.opts.observer.effects(self.baseline, r)
    }

    async fn run_steps(&mut self) -> Result<(), Stop> {
        if self.path.len() != self.trace.actions.len() + 1 {
            return Err(stop(Verdict::Diverged, "the trace is not a path of the model"));
        }
        if self.trace.config.transport != self.session.opts.target.transport() {
            return Err(stop(
                Verdict::Diverged,
                format!(
                    "the trace is for {} and the server is given over {}",
                    self.trace.config.transport.as_str(),
                    self.session.opts.target.transport().as_str()
                ),
            ));
        }
        self.session.start().await.map_err(|e| stop(Verdict::Diverged, format!("the server did not start: {e}")))?;
        self.baseline = self
            .session
            .read_stable()
            .await
            .map_err(|e| stop(Verdict::Inconclusive, format!("the observer could not take a baseline: {e}")))?;
        self.session.evidence.record("baseline", json!({"reading": self.baseline}));
        let needs_hold = self.holds.values().any(|h| h.before_commit || h.before_respond);
        if needs_hold && !self.session.pace_args {
            self.note("the trace needs server steps held back, and the tool has no delay arguments: the replay can only take the server's own timing".into());
        }
        let actions = self.trace.actions.clone();
        for (i, action) in actions.iter().enumerate() {
            let state = self.path[i + 1].clone();
            self.session
                .evidence
                .record("step", json!({"step": i + 1, "action": action.to_string(), "phase": "begin"}));
            let (status, note) = self.step(action, &state).await?;
            let rec = StepRecord {
                step: i + 1,
                action: action.to_string(),
                status: status.into(),
                t_ms: self.session.evidence.elapsed_ms(),
                note,
            };
            self.session.evidence.record("step", json!({"step": rec.step, "action": rec.action, "phase": "done", "status": rec.status, "note": rec.note}));
            self.steps.push(rec);
        }
        if !self.deferred.is_empty() {
            let done = self.deliver_deferred(None).await?;
            self.note(format!("after the last step: {}", done.join("; ")));
        }
        Ok(())
    }

    fn failed_step(&mut self, action: &Action, why: &str) {
        let rec = StepRecord {
            step: self.steps.len() + 1,
            action: action.to_string(),
            status: "failed".into(),
            t_ms: self.session.evidence.elapsed_ms(),
            note: Some(why.into()),
        };
        self.steps.push(rec);
    }

    async fn step(&mut self, action: &Action, state: &State) -> Result<(&'static str, Option<String>), Stop> {
        let result = match *action {
            Action::ClientCall { call } => self.client_send(call, 0, state).await,
            Action::ClientRetry { call, attempt } | Action::FrameworkRetry { call, attempt } => self.client_send(call, attempt, state).await,
            Action::ClientTimeout { call, attempt } => self.client_timeout((call, attempt)),
            Action::ClientCancel { call, attempt } => self.client_cancel((call, attempt)).await,
            Action::ClientReceive { call, attempt } => self.client_receive((call, attempt)).await,
            Action::ClientSeesDisconnect { call, attempt } => self.client_sees_disconnect((call, attempt)).await,
            Action::StreamBreak { call, attempt } => self.stream_break((call, attempt)).await,
            Action::StepFails { .. } => Ok(("driven", Some("the framework step fails after the call returned (client-side)".into()))),
            Action::ClientQueryOutcome { .. } => Err(stop(Verdict::Diverged, "ClientQueryOutcome: the outcome query is a proposal with no method on real servers")),
            Action::ServerReceive { call, attempt } => self.server_receive((call, attempt)).await,
            Action::ServerReceiveCancel { call, attempt } => {
                let done = self.deliver_deferred(Some((call, attempt))).await;
                done.map(|d| ("delivered", Some(if d.is_empty() { "the cancellation was written to the server".to_string() } else { d.join("; ") })))
            }
            Action::ServerCommit { call, attempt } => self.server_commit((call, attempt), expected_effects(state)).await,
            Action::ServerStoreKey { .. } => Ok(("unobserved", Some("the key store is internal to the server; its effect shows in how the server answers later attempts".into()))),
            Action::ServerRespond { call, attempt } => self.server_respond((call, attempt)).await,
            Action::ServerCrash => self.server_crash().await,
            Action::ServerRestart => self.server_restart().await,
            Action::KeyExpires { .. } => Err(stop(Verdict::Diverged, "KeyExpires: the runner cannot make a server's key record expire")),
        };
        if let Err(s) = &result {
            self.failed_step(action, &s.reason.clone());
        }
        result
    }

    fn attempt(&self, a: AttemptId) -> Result<Sent, Stop> {
        self.sent
            .get(&a)
            .cloned()
            .ok_or_else(|| stop(Verdict::Diverged, format!("call {} attempt {} was never sent", a.0, a.1)))
    }

    /// The response to an attempt: responses to one id on one connection are matched to its
    /// attempts in the order they were sent.
    fn response(&self, a: AttemptId) -> Option<Value> {
        let s = self.sent.get(&a)?;
        let position = self.sent.values().filter(|o| o.gen == s.gen && o.id == s.id && o.order < s.order).count();
        self.session.responses_for(s.gen, &s.id).get(position).cloned()
    }

    async fn client_send(
        &mut self,
        call: u8,
        attempt: u8,
        state: &State,
    ) -> Result<(&'static str, Option<String>), Stop> {
        if self.session.check_exit().is_some() {
            return Err(stop(Verdict::Diverged, "the server is not running when the trace sends a request"));
        }
        let rec = state.attempts.get(call as usize).and_then(|row| row.get(attempt as usize)).ok_or_else(|| {
            stop(Verdict::Diverged, format!("the trace's state has no call {call} attempt {attempt}"))
        })?;
        let id = Value::from(rec.id);
        let key = Some(rec.key).filter(|k| *k > 0).map(|k| format!("{}-c{call}-k{k}", self.nonce));
        let hold = self.holds.get(&(call, attempt)).copied().unwrap_or_default();
        // Held commits end in the trace's commit order, a quarter window apart: two attempts
        // held alike would otherwise commit within a millisecond of each other, in either order.
        let rank = self
            .trace
            .actions
            .iter()
            .filter(|x| matches!(x, Action::ServerCommit { .. }))
            .position(|x| *x == Action::ServerCommit { call, attempt })
            .unwrap_or(0);
        let stagger = if hold.before_commit { self.session.opts.window / 4 * rank as u32 } else { Duration::ZERO };
        let msg = self.session.call_message(&id, key.as_deref(), hold, stagger);
        self.session
            .send(&msg)
            .await
            .map_err(|e| stop(Verdict::Diverged, format!("cannot send call {call} attempt {attempt}: {e}")))?;
        let order = self.sent.len();
        self.sent.insert(
            (call, attempt),
            Sent { id: id.clone(), gen: self.session.generation(), order, cancelled: false, stream_closed: false },
        );
        let mut note = format!("tools/call id {id}");
        if let Some(k) = key {
            note.push_str(&format!(", key {k}"));
        }
        if self.session.pace_args && (hold.before_commit || hold.before_respond) {
            let what = match (hold.before_commit, hold.before_respond) {
                (true, true) => "before the commit and before the response",
                (true, false) => "before the commit",
                _ => "before the response",
            };
            note.push_str(&format!(", held {} ms {what}", (self.session.opts.window + stagger).as_millis()));
        }
        Ok(("driven", Some(note)))
    }

    fn client_timeout(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        self.attempt(a)?;
        let note = match self.response(a) {
            Some(_) => "the client stops waiting; a response had already arrived unread".to_string(),
            None => "the client stops waiting".to_string(),
        };
        Ok(("driven", Some(note)))
    }

    async fn await_headers(&mut self, a: AttemptId, s: &Sent) -> Result<(), Stop> {
        let deadline = Instant::now() + self.session.opts.step_timeout;
        while !self.session.has_headers(s.gen, &s.id) {
            if let Some(f) = self.session.failure_for(s.gen, &s.id) {
                return Err(stop(Verdict::Diverged, format!("call {} attempt {}: the request failed: {f}", a.0, a.1)));
            }
            if Instant::now() >= deadline {
                return Err(stop(
                    Verdict::Inconclusive,
                    format!(
                        "call {} attempt {}: no HTTP response headers within {} ms",
                        a.0,
                        a.1,
                        self.session.opts.step_timeout.as_millis()
                    ),
                ));
            }
            self.session.pump(deadline).await;
        }
        Ok(())
    }

    async fn client_cancel(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        let s = self.attempt(a)?;
        self.sent.get_mut(&a).expect("sent").cancelled = true;
        if self.session.opts.target.transport() == Transport::Http {
            let knob = &self.profile.knobs.http_cancel;
            let (how, what) = match knob.value {
                HttpCancel::CloseStream => (Deferred::CloseStream, "closing the response stream"),
                _ => (Deferred::CancelNotification, "notifications/cancelled"),
            };
            if how == Deferred::CloseStream {
                self.sent.get_mut(&a).expect("sent").stream_closed = true;
            }
            self.deferred.push((a, how));
            let cite = format!("{} § {}", knob.cite.revision, knob.cite.section);
            return Ok(("driven", Some(format!("{what} ({cite}); on HTTP it travels apart from the request, so it reaches the server where the trace has it read (ServerReceiveCancel), or after the last step"))));
        }
        let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
        self.session
            .send(&msg)
            .await
            .map_err(|e| stop(Verdict::Diverged, format!("cannot send notifications/cancelled: {e}")))?;
        Ok(("driven", Some(format!("notifications/cancelled for id {}", s.id))))
    }

    /// Deliver the deferred transport events of `only` (or all of them).
    async fn deliver_deferred(&mut self, only: Option<AttemptId>) -> Result<Vec<String>, Stop> {
        let (now, later): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.deferred).into_iter().partition(|(a, _)| only.is_none_or(|o| o == *a));
        self.deferred = later;
        let mut done = Vec::new();
        for (a, how) in now {
            let s = self.attempt(a)?;
            if s.gen != self.session.generation() || self.session.check_exit().is_some() {
                done.push(format!("call {} attempt {}: dropped (its connection is gone)", a.0, a.1));
                continue;
            }
            match how {
                Deferred::CancelNotification => {
                    let msg = json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": s.id, "reason": "mcp-once replay: the client timed out"}});
                    self.session
                        .send(&msg)
                        .await
                        .map_err(|e| stop(Verdict::Diverged, format!("cannot send notifications/cancelled: {e}")))?;
                    done.push(format!("notifications/cancelled for id {} delivered", s.id));
                }
                Deferred::CloseStream => {
                    // The server must have the request before its stream can be closed on it.
                    self.await_headers(a, &s).await?;
                    let open = self.session.close_stream(&s.id);
                    done.push(format!(
                        "response stream of id {} closed{}",
                        s.id,
                        if open { "" } else { " (it had already ended)" }
                    ));
                }
            }
        }
        Ok(done)
    }

    async fn client_receive(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        let resp = self.await_response(a).await?;
        Ok(("observed", Some(summarize(&resp))))
    }

    async fn await_response(&mut self, a: AttemptId) -> Result<Value, Stop> {
        let s = self.attempt(a)?;
        if s.stream_closed {
            return Err(stop(
                Verdict::Diverged,
                format!("call {} attempt {}: its response stream was closed, so a response cannot be seen", a.0, a.1),
            ));
        }
        let deadline = Instant::now() + self.session.opts.step_timeout + self.session.opts.window * 2;
        loop {
            if let Some(r) = self.response(a) {
                return Ok(r);
            }
            if let Some(f) = self.session.failure_for(s.gen, &s.id) {
                return Err(stop(
                    Verdict::Diverged,
                    format!("call {} attempt {}: expected a response, the request failed: {f}", a.0, a.1),
                ));
            }
            if let Some(c) = self.session.closed(s.gen) {
                return Err(stop(Verdict::Diverged, format!("call {} attempt {}: expected a response, {c}", a.0, a.1)));
            }
            if Instant::now() >= deadline {
                let reason = self.session.breach_note();
                return Err(stop(
                    Verdict::Inconclusive,
                    format!(
                        "call {} attempt {}: no response within {} ms{reason}",
                        a.0,
                        a.1,
                        (self.session.opts.step_timeout + self.session.opts.window * 2).as_millis()
                    ),
                ));
            }
            self.session.pump(deadline).await;
        }
    }

    async fn client_sees_disconnect(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        let s = self.attempt(a)?;
        let deadline = Instant::now() + self.session.opts.step_timeout;
        loop {
            if let Some(r) = self.response(a) {
                return Err(stop(Verdict::Diverged, format!("call {} attempt {}: the server answered before the connection broke ({}); the pacing window was too short or the server has no delay arguments", a.0, a.1, summarize(&r))));
            }
            let seen = match self.session.opts.target.transport() {
                Transport::Stdio => self.session.closed(s.gen).map(str::to_string),
                Transport::Http => self.session.failure_for(s.gen, &s.id).map(str::to_string),
            };
            if let Some(why) = seen {
                return Ok(("observed", Some(why)));
            }
            if Instant::now() >= deadline {
                return Err(stop(
                    Verdict::Inconclusive,
                    format!(
                        "call {} attempt {}: the connection did not break within {} ms",
                        a.0,
                        a.1,
                        self.session.opts.step_timeout.as_millis()
                    ),
                ));
            }
            self.session.pump(deadline).await;
        }
    }

    async fn stream_break(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        self.attempt(a)?;
        if self.session.opts.target.transport() != Transport::Http {
            return Err(stop(Verdict::Diverged, "StreamBreak needs an HTTP response stream"));
        }
        self.sent.get_mut(&a).expect("sent").stream_closed = true;
        self.deferred.push((a, Deferred::CloseStream));
        Ok(("driven", Some("the client's response stream breaks; the server sees the connection close where the trace has it read the cancellation, or after the last step".into())))
    }

    async fn server_receive(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        let s = self.attempt(a)?;
        match self.session.opts.target.transport() {
            Transport::Stdio => {
                if self.session.closed(s.gen).is_some() || self.session.check_exit().is_some() {
                    return Err(stop(
                        Verdict::Diverged,
                        format!("call {} attempt {}: the server is gone before it could read the request", a.0, a.1),
                    ));
                }
                Ok(("delivered", Some("written to the live server's stdin; its commit or response confirms it".into())))
            }
            Transport::Http => {
                if s.stream_closed {
                    return Ok((
                        "delivered",
                        Some("the server had accepted the request before its stream was closed".into()),
                    ));
                }
                self.await_headers(a, &s).await?;
                Ok(("observed", Some("the server accepted the POST (response headers)".into())))
            }
        }
    }

    async fn server_commit(&mut self, a: AttemptId, expected: u64) -> Result<(&'static str, Option<String>), Stop> {
        let s = self.attempt(a)?;
        let held = self.holds.get(&a).is_some_and(|h| h.before_commit) && self.session.pace_args;
        let bound = self.session.opts.step_timeout + if held { self.session.opts.window } else { Duration::ZERO };
        let deadline = Instant::now() + bound;
        loop {
            let reading = self
                .session
                .read_stable()
                .await
                .map_err(|e| stop(Verdict::Inconclusive, format!("call {} attempt {}: {e}", a.0, a.1)))?;
            let n = self
                .session
                .opts
                .observer
                .effects(self.baseline, reading)
                .map_err(|e| stop(Verdict::Inconclusive, e))?;
            if n >= expected as i64 {
                let note = if n > expected as i64 {
                    format!("{n} effects observed, the trace has {expected} here")
                } else {
                    format!("{n} effect(s) observed")
                };
                return Ok(("observed", Some(note)));
            }
            if let Some(r) = self.response(a) {
                // The answer came and a fresh reading still shows no effect for it.
                let again = self.session.read_stable().await.map_err(|e| stop(Verdict::Inconclusive, e))?;
                if self
                    .session
                    .opts
                    .observer
                    .effects(self.baseline, again)
                    .map_err(|e| stop(Verdict::Inconclusive, e))?
                    < expected as i64
                {
                    return Err(stop(Verdict::NotReproduced, format!("call {} attempt {} was answered ({}) and the observer counts {n} effect(s) where the trace has {expected}: the server did not run the side effect the violation needs", a.0, a.1, summarize(&r))));
                }
                continue;
            }
            if let Some(f) = self.session.failure_for(s.gen, &s.id).map(str::to_string) {
                // A cancelled request may end without a response; only others have failed.
                if !s.cancelled && !s.stream_closed {
                    return Err(stop(
                        Verdict::Diverged,
                        format!("call {} attempt {}: the request failed before its effect was seen: {f}", a.0, a.1),
                    ));
                }
            }
            if let Some(why) = self.session.check_exit() {
                // What it wrote last (a partial frame) is read after it is reaped: take it in.
                self.session.await_closed(s.gen, Duration::from_secs(1)).await;
                return Err(stop(
                    Verdict::Diverged,
                    format!(
                        "call {} attempt {}: the server exited before its effect was seen ({why}){}",
                        a.0,
                        a.1,
                        self.session.breach_note()
                    ),
                ));
            }
            if let Some(c) = self.session.closed(s.gen).map(str::to_string) {
                // stdio: no answer can come on a closed stdout, so waiting out the bound tells nothing more.
                return Err(stop(
                    Verdict::Diverged,
                    format!(
                        "call {} attempt {}: {c} before its effect was seen{}",
                        a.0,
                        a.1,
                        self.session.breach_note()
                    ),
                ));
            }
            if Instant::now() >= deadline {
                let failed = match self.session.failure_for(s.gen, &s.id) {
                    Some(f) => format!("; its request failed: {f}"),
                    None if !s.stream_closed && self.session.has_headers(s.gen, &s.id) => {
                        "; its response stream stayed open without a response".to_string()
                    }
                    None => String::new(),
                };
                let failed = match self.session.notifications() {
                    0 => failed,
                    n => format!("{failed}; the server sent {n} notification(s) meanwhile"),
                };
                let why = if s.cancelled {
                    format!("; it was cancelled, and the server may have honoured that (the runner cannot tell a stopped call from a hung one){failed}")
                } else {
                    failed
                };
                let garbage = self.session.breach_note();
                return Err(stop(Verdict::Inconclusive, format!("call {} attempt {}: no effect and no answer within {} ms ({n} of {expected} effects){why}{garbage}", a.0, a.1, bound.as_millis())));
            }
            self.session.pump(deadline).await;
        }
    }

    async fn server_respond(&mut self, a: AttemptId) -> Result<(&'static str, Option<String>), Stop> {
        let resp = self.await_response(a).await?;
        Ok(("observed", Some(summarize(&resp))))
    }

    async fn server_crash(&mut self) -> Result<(&'static str, Option<String>), Stop> {
        if !self.session.can_restart() {
            return Err(stop(
                Verdict::Diverged,
                "ServerCrash: the runner did not start this HTTP server; give --launch so it can kill and restart it",
            ));
        }
        if !self.session.opts.observer.outside_server() {
            self.pre_crash = Some(self.effects_now().await.map_err(|e| stop(Verdict::Inconclusive, e))?);
        }
        self.session.kill().await.map_err(|e| stop(Verdict::Diverged, format!("ServerCrash: {e}")))?;
        Ok(("driven", Some("SIGKILL to the server's process group; reaped".into())))
    }

    async fn server_restart(&mut self) -> Result<(&'static str, Option<String>), Stop> {
        self.session
            .start()
            .await
            .map_err(|e| stop(Verdict::Diverged, format!("ServerRestart: the server did not come back: {e}")))?;
        if let Some(before) = self.pre_crash.take() {
            let after = self.effects_now().await.map_err(|e| stop(Verdict::Inconclusive, e))?;
            if before == 0 {
                return Err(stop(Verdict::Inconclusive, "the tool observer had no effect to show before the crash, so it cannot show that effects survive a restart"));
            }
            if after < before {
                return Err(stop(Verdict::Inconclusive, format!("the observer lost state across the restart ({before} effects before, {after} after): it cannot see effects across a restart")));
            }
        }
        Ok(("driven", Some("restarted and handshake answered".into())))
    }
}

/// The profile a trace was found under.
pub fn trace_profile(trace: &TraceFile) -> Result<Profile, String> {
    let origin = trace.meta.pointer("/profile/origin").and_then(Value::as_str).unwrap_or("");
    let by_origin = origin.strip_prefix("builtin:").map(str::to_string).unwrap_or_else(|| origin.to_string());
    Profile::load(&trace.config.profile)
        .or_else(|_| Profile::load(&by_origin))
        .map_err(|e| format!("cannot load the trace's profile `{}`: {e}", trace.config.profile))
}
