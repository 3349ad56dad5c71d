//! The session: a live server under test (its process, the connection to it, the events it sent
//! grouped by request, the observer) and one bounded wait, [`Session::wait_until`], that every
//! awaited step goes through.

use crate::replay::breach::ProtocolBreach;
use crate::replay::conduct::Conduct;
use crate::replay::evidence::{Event, Evidence, Process};
use crate::replay::input::client_reply;
use crate::replay::instance::Instance;
use crate::replay::message;
use crate::replay::observer::Source;
use crate::replay::pacing::Hold;
use crate::replay::process::{LaunchSpec, Pipes, ServerProcess};
use crate::replay::responses::{RequestKey, Responses};
use crate::replay::server_log::ServerLog;
pub use crate::replay::start_error::{NonJsonLines, StartError};
use crate::replay::strays;
use crate::replay::tracer::{self, Tracer};
use crate::replay::types::{ReplayOptions, Revision, Target};
use crate::replay::wire::{log_lines, Connection, EventKind, WireEvent};
use mcp_once_model::Transport;
use serde_json::{json, Value};
use std::os::fd::AsRawFd;
use std::time::Duration;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver, UnboundedSender};
use tokio::time::Instant;

/// A live connection to the server under test, with everything it has said so far.
pub struct Session {
    /// The options.
    pub opts: ReplayOptions,
    /// The evidence log.
    pub evidence: Evidence,
    /// The wire revision.
    pub revision: Revision,
    /// The server instances, by number: one, or those of a deployment behind a load balancer
    /// (see [`crate::replay::instances`]); the session's steps act on the selected one.
    pub(crate) instances: Vec<Instance>,
    /// The selected instance.
    pub(crate) active: u8,
    /// The last connection generation handed out (over every instance).
    generations: u32,
    tx: UnboundedSender<WireEvent>,
    rx: UnboundedReceiver<WireEvent>,
    /// The requests sent and what came back for each.
    responses: Responses,
    /// What the server did besides answering: breaches, non-JSON output, notifications, how
    /// each connection ended.
    pub conduct: Conduct,
    /// Whether the tool takes `delay_before_ms` and `delay_after_ms` (pacing is possible).
    pub pace_args: bool,
    /// Whether the tool takes `delay_task_result_ms` (a task's `CreateTaskResult` can be held).
    pub task_result_arg: bool,
    /// The tool under test as `tools/list` gave it, once the server started.
    pub tool: Option<Value>,
    /// The client capabilities the runner declares (none, or [`message::input_capabilities`]
    /// for a trace whose tool asks for input).
    pub capabilities: Value,
    /// The server's capabilities as its last handshake gave them (`initialize`'s, or
    /// `server/discover`'s; null before a start).
    pub server_capabilities: Value,
    started_once: bool,
    starting: bool,
    pub(crate) last_logged: Option<f64>,
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
        let targets = std::iter::once(opts.target.clone()).chain(opts.more_instances.iter().cloned());
        Session {
            instances: targets.map(Instance::new).collect(),
            active: 0,
            generations: 0,
            opts,
            evidence,
            revision,
            tx,
            rx,
            responses: Responses::default(),
            conduct: Conduct::default(),
            pace_args: false,
            task_result_arg: false,
            tool: None,
            capabilities: json!({}),
            server_capabilities: Value::Null,
            started_once: false,
            starting: false,
            last_logged: None,
        }
    }

    /// The selected instance.
    pub(crate) fn at(&self) -> &Instance {
        &self.instances[usize::from(self.active)]
    }

    /// The selected instance, to change.
    pub(crate) fn at_mut(&mut self) -> &mut Instance {
        &mut self.instances[usize::from(self.active)]
    }

    /// The HTTP server's stderr lines (the selected instance's).
    pub(crate) fn server_log(&self) -> &ServerLog {
        &self.at().server_log
    }

    /// The current connection's generation.
    pub fn generation(&self) -> u32 {
        self.at().generation
    }

    /// Whether the runner started the server process (and so can kill and restart it).
    pub fn can_restart(&self) -> bool {
        !matches!(self.at().target, Target::Http { launch: None, .. })
    }

    /// Start (or restart) the server and connect: spawn it, wait until it answers the
    /// handshake, and on the first start check the tool exists.
    /// A protocol breach, an exit or a refused connection ends the start at once.
    pub async fn start(&mut self) -> Result<(), StartError> {
        self.starting = true;
        let started = self.start_now().await;
        self.starting = false;
        match started {
            // Output that is not JSON at all ended the start: say that, not what it broke.
            Err(StartError::Other(_)) if !self.conduct.non_json.first.is_empty() && !self.opts.skip_non_json => {
                // The lines already read after the first, to quote them too (no waiting).
                self.pump(Instant::now()).await;
                Err(StartError::NonJsonStdout { first: self.conduct.non_json.first.clone() })
            }
            other => other,
        }
    }

    async fn start_now(&mut self) -> Result<(), StartError> {
        self.generations += 1;
        self.at_mut().generation = self.generations;
        self.at_mut().exited = None;
        let deadline = Instant::now() + self.opts.start_timeout;
        let gen = self.at().generation;
        match self.at().target.clone() {
            Target::Stdio(spec) => {
                let (proc_, pipes) = self.spawn(&spec)?;
                self.at_mut().stdout_pipe = tracer::pipe_name(pipes.stdout.as_raw_fd());
                self.at_mut().conn = Some(Connection::stdio(
                    gen,
                    pipes.stdin,
                    pipes.stdout,
                    pipes.stderr,
                    self.tx.clone(),
                    self.evidence.clone(),
                ));
                self.at_mut().server = Some(proc_);
            }
            Target::Http { url, launch } => {
                if let Some(spec) = launch {
                    self.ensure_port_free(&url).await?;
                    let (proc_, pipes) = self.spawn(&spec)?;
                    tokio::spawn(log_lines(pipes.stdout, "server stdout", self.evidence.clone(), None));
                    let tap = Some(self.at().server_log.clone());
                    tokio::spawn(log_lines(pipes.stderr, "server stderr", self.evidence.clone(), tap));
                    self.at_mut().server_stdin = Some(pipes.stdin);
                    self.at_mut().server = Some(proc_);
                    self.wait_listening(&url, deadline).await?;
                }
                let conn =
                    Connection::http(gen, &url, self.tx.clone(), self.evidence.clone()).map_err(|e| e.to_string())?;
                self.at_mut().conn = Some(conn);
            }
        }
        self.handshake(deadline).await?;
        if !self.started_once {
            self.started_once = true;
            self.discover_tool(deadline).await?;
        }
        Ok(())
    }

    fn spawn(&mut self, spec: &LaunchSpec) -> Result<(ServerProcess, Pipes), String> {
        let (p, pipes) = ServerProcess::spawn(spec).map_err(|e| format!("{e:#}"))?;
        let fds = [pipes.stdout.as_raw_fd(), pipes.stderr.as_raw_fd()];
        self.at_mut().server_pipes = fds.into_iter().filter_map(tracer::pipe_name).collect();
        self.evidence.record(Event::Process(Process::Start { pid: p.pid(), argv: spec.argv.clone() }));
        Ok((p, pipes))
    }

    /// Send a request of the runner's own (a string id that model ids never take) and wait
    /// for its result within `deadline`.
    pub(crate) async fn request_until(
        &mut self,
        method: &str,
        params: Value,
        deadline: Instant,
    ) -> Result<Value, String> {
        let id = self.own_id();
        let conn = self.at().conn.as_ref().ok_or("no connection")?;
        let gen = conn.generation();
        conn.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
            .map_err(|e| format!("{e:#}"))?;
        let key = RequestKey::new(gen, &id);
        self.responses.sent(key.clone());
        let answer = self
            .wait_until(deadline, async |s| {
                if let Some(resp) = s.responses.answers(&key).first() {
                    return Some(match (resp.get("result"), resp.get("error")) {
                        (Some(r), _) => Ok(r.clone()),
                        (_, Some(e)) => Err(format!("error {e}")),
                        _ => Err(format!("malformed response {resp}")),
                    });
                }
                if let Some(f) = s.responses.failure(&key) {
                    return Some(Err(f.to_string()));
                }
                if let Some(c) = s.conduct.closed(gen) {
                    return Some(Err(s.with_breach_note(c.to_string())));
                }
                if s.starting && !s.conduct.breaches.is_empty() {
                    // (the caller names the method)
                    return Some(Err(format!("no answer yet{}", s.breach_note())));
                }
                let why = s.check_exit()?;
                Some(Err(s.with_breach_note(format!("the server exited ({why})"))))
            })
            .await;
        answer.unwrap_or_else(|| Err(format!("no answer within the bound{}", self.stall_note())))
    }

    /// A new id for a request of the runner's own: a string, which model ids never are.
    pub(crate) fn own_id(&mut self) -> Value {
        json!(format!("mcp-once-{}", self.responses.own_request()))
    }

    /// HTTP: open a new session with the server, which runs on, after its old session ended.
    /// The old connection is kept (its response streams stay open for the answers still to come
    /// on them); a new one, of a new generation and with no session id, makes the handshake.
    pub(crate) async fn open_new_session(&mut self) -> Result<(), String> {
        let Target::Http { url, .. } = self.at().target.clone() else {
            return Err("a session is ended and opened again only over HTTP".into());
        };
        self.generations += 1;
        let gen = self.generations;
        let conn = Connection::http(gen, &url, self.tx.clone(), self.evidence.clone()).map_err(|e| e.to_string())?;
        if let Some(old) = self.at_mut().conn.replace(conn) {
            self.at_mut().retired.push(old);
        }
        self.at_mut().generation = gen;
        self.handshake(Instant::now() + self.opts.start_timeout).await
    }

    fn with_breach_note(&self, reason: String) -> String {
        format!("{reason}{}", self.breach_note())
    }

    /// `"; the server broke the protocol: …"` naming the first breach, or nothing.
    pub fn breach_note(&self) -> String {
        self.conduct.breach_note()
    }

    /// For a wait that ran out on the current connection: [`Conduct::stall_note`].
    pub fn stall_note(&self) -> String {
        self.conduct.stall_note(self.at().generation)
    }

    /// stdio: wait at most `bound` for connection `gen`'s stdout to close (its last output
    /// read). Returns at once over HTTP.
    pub async fn await_closed(&mut self, gen: u32, bound: Duration) {
        if self.at().target.transport() != Transport::Stdio {
            return;
        }
        self.wait_until(Instant::now() + bound, async |s| s.closed(gen).map(drop)).await;
    }

    /// The live connection (once started).
    pub(crate) fn connection(&self) -> &Connection {
        self.at().conn.as_ref().expect("connected")
    }

    /// stdio: take in the rest of the read that carried the last message (a second answer
    /// written with the first), within a short bound; then everything already waiting.
    pub async fn settle(&mut self) {
        let bound = Instant::now() + Duration::from_secs(1);
        self.wait_until(bound, async |s| (!s.conduct.mid_read).then_some(())).await;
        self.drain().await;
    }

    /// Take in every event already waiting, without waiting for more.
    pub async fn drain(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            self.take(ev).await;
        }
    }

    /// Whether the server process (if the runner started one) has exited; reaps it.
    pub fn check_exit(&mut self) -> Option<String> {
        if let Some(why) = &self.at().exited {
            return Some(why.clone());
        }
        let status = self.at_mut().server.as_mut()?.try_exit()?;
        let why = format!("{status}");
        self.evidence.record(Event::Process(Process::Exit {
            pid: self.at().server.as_ref().map(|s| s.pid()),
            status: why.clone(),
        }));
        self.at_mut().exited = Some(why.clone());
        Some(why)
    }

    /// Wait until `check` has an answer, taking in what the server sends between checks; `None`
    /// if `deadline` passes first. `check` runs at once, then after each event, and at least
    /// every poll tick (observers that cannot signal are read again then). Every awaited step
    /// of the runner is one call of this.
    pub async fn wait_until<T>(
        &mut self,
        deadline: Instant,
        mut check: impl AsyncFnMut(&mut Session) -> Option<T>,
    ) -> Option<T> {
        loop {
            if let Some(done) = check(self).await {
                return Some(done);
            }
            if Instant::now() >= deadline {
                return None;
            }
            self.pump(deadline).await;
        }
    }

    /// Wait for one event (or until `deadline`, or one poll tick) and take it in.
    async fn pump(&mut self, deadline: Instant) {
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
                self.conduct.mid_read = gen == self.at().generation && self.at().target.transport() == Transport::Stdio;
                let method = m.get("method").and_then(Value::as_str).map(str::to_string);
                match (m.get("id").cloned(), method) {
                    (Some(id), None) => {
                        if let Some(breach) = self.responses.answer(RequestKey::new(gen, &id), id, m) {
                            self.conduct.breaches.push(breach);
                        }
                    }
                    (Some(id), Some(method)) => {
                        let reply = client_reply(&id, &method, &m, &self.capabilities);
                        if let Some(conn) = self.at().conn.as_ref().filter(|c| c.generation() == gen) {
                            let _ = conn.send(&reply).await;
                        }
                    }
                    (None, _) => self.conduct.notified(),
                }
            }
            EventKind::Garbage(reason) => self.conduct.breaches.push(reason),
            EventKind::NonJson(line) => {
                if !self.opts.skip_non_json {
                    self.conduct.breaches.push(ProtocolBreach::NotJson { line: line.clone() });
                }
                self.conduct.non_json.push(line);
            }
            // A stream to break at its headers was broken by its own task there
            // (`Connection::break_at_headers`): an event stream, its reply still to come. (A JSON
            // body comes with its headers: too late, and left to the commit.)
            EventKind::Headers { id, status, sse } => {
                self.responses.headers_arrived(RequestKey::new(gen, &id), status, sse)
            }
            EventKind::StreamEnd { id } => self.responses.stream_ended(RequestKey::new(gen, &id)),
            EventKind::StreamFailed { id, reason } => self.responses.fail(RequestKey::new(gen, &id), reason),
            EventKind::Closed(reason) => self.conduct.closed_with(gen, reason),
            EventKind::ReadEnd { unfinished } => self.conduct.read_ended(gen, unfinished),
        }
    }

    /// Send a raw message on the current connection.
    pub(crate) async fn send(&mut self, msg: &Value) -> Result<(), String> {
        let instance = &self.instances[usize::from(self.active)];
        let conn = instance.conn.as_ref().ok_or("no connection to the server")?;
        if let (Some(id), Some(_)) = (msg.get("id"), msg.get("method")) {
            self.responses.sent(RequestKey::new(conn.generation(), id));
        }
        conn.send(msg).await.map_err(|e| format!("{e:#}"))
    }

    /// SIGKILL the server's process group and reap it.
    pub(crate) async fn kill(&mut self) -> Result<(), String> {
        let instance = &mut self.instances[usize::from(self.active)];
        let server = instance
            .server
            .as_mut()
            .ok_or("the runner did not start the server, so it cannot kill it (give --launch)")?;
        let pid = server.pid();
        if let Some(mut t) = instance.tracer.take() {
            // The group dies first (a held write is never made); then the tracer goes, so the
            // dead group is reported to the runner at once and not when strace's delay ends.
            server.signal_kill();
            t.finish(Duration::ZERO).await;
        }
        let status = server.kill(Duration::from_secs(5)).await.map_err(|e| format!("{e:#}"))?;
        self.evidence.record(Event::Process(Process::Killed {
            signal: "SIGKILL".into(),
            pid,
            status: format!("{status}"),
        }));
        self.at_mut().exited = Some(format!("killed by the runner ({status})"));
        self.at_mut().server_stdin = None;
        strays::kill_strays(std::mem::take(&mut self.at_mut().server_pipes), &self.evidence).await;
        Ok(())
    }

    /// stdio: hold each write of the server to its stdout for `hold` (see [`tracer`]); `Err`
    /// says why that cannot be done here.
    pub(crate) async fn hold_responses(&mut self, hold: Duration) -> Result<(), String> {
        let pid = self.at().server.as_ref().ok_or("no server process")?.pid();
        let bound = self.opts.start_timeout;
        let tracer = Tracer::attach(pid, self.at().stdout_pipe.as_deref(), hold, self.evidence.clone(), bound).await?;
        self.at_mut().tracer = Some(tracer);
        Ok(())
    }

    /// Close the connection and stop the server (SIGTERM, then SIGKILL after a grace period).
    pub async fn shutdown(&mut self) {
        if let Some(conn) = self.at().conn.as_ref() {
            conn.close().await;
        }
        for old in std::mem::take(&mut self.at_mut().retired) {
            old.close().await;
        }
        self.at_mut().server_stdin = None;
        if let Some(mut t) = self.at_mut().tracer.take() {
            t.finish(Duration::ZERO).await;
        }
        if let Some(mut server) = self.at_mut().server.take() {
            let pid = server.pid();
            let grace_ms = self.opts.stop_grace.as_millis() as u64;
            self.evidence.record(Event::Process(Process::Stop { pid, signal: "SIGTERM".into(), grace_ms }));
            match server.stop(self.opts.stop_grace).await {
                Ok(status) => {
                    self.evidence.record(Event::Process(Process::Stopped { pid, status: format!("{status}") }))
                }
                Err(e) => self.evidence.record(Event::Process(Process::StopFailed { pid, error: format!("{e:#}") })),
            }
            strays::kill_strays(std::mem::take(&mut self.at_mut().server_pipes), &self.evidence).await;
        }
        // stdio: read what the server wrote before it stopped to the end (bounded), so that a
        // late breach (a duplicated response) is seen before the verdict.
        self.await_closed(self.at().generation, Duration::from_secs(1)).await;
        self.at_mut().conn.take();
    }

    /// The responses received for `(gen, id)` so far.
    pub fn responses_for(&self, gen: u32, id: &Value) -> &[Value] {
        self.responses.answers(&RequestKey::new(gen, id))
    }

    /// The failure of the request `(gen, id)`, if it failed.
    pub fn failure_for(&self, gen: u32, id: &Value) -> Option<&str> {
        self.responses.failure(&RequestKey::new(gen, id))
    }

    /// Record that the request `(gen, id)` failed on the client's side (its write failed).
    pub fn fail_request(&mut self, gen: u32, id: &Value, reason: String) {
        self.responses.fail(RequestKey::new(gen, id), reason);
    }

    /// Whether connection `gen` was closed by the server.
    pub fn closed(&self, gen: u32) -> Option<&str> {
        self.conduct.closed(gen)
    }

    /// Whether HTTP response headers for `(gen, id)` arrived.
    pub fn has_headers(&self, gen: u32, id: &Value) -> bool {
        self.responses.has_headers(&RequestKey::new(gen, id))
    }

    /// The HTTP status the response headers for `(gen, id)` came with, once they came.
    pub fn status_for(&self, gen: u32, id: &Value) -> Option<u16> {
        self.responses.status(&RequestKey::new(gen, id))
    }

    /// HTTP: close the response stream of `(gen, id)` the moment its headers open an event
    /// stream, as a client whose stream broke once the server had the request.
    pub fn close_once_accepted(&mut self, gen: u32, id: &Value) {
        // Headers already in: the commit decides (they may have come with the reply).
        let key = RequestKey::new(gen, id);
        if !self.responses.has_headers(&key) {
            if let Some(c) = self.at().conn.as_ref().filter(|c| c.generation() == gen) {
                c.break_at_headers(id);
                self.responses.break_at_headers(key);
            }
        }
    }

    /// For a stream given to [`Session::close_once_accepted`]: `Some(open)` once it was closed
    /// at its headers (whether it was still open then), `None` while they have not come.
    pub fn closed_at_headers(&self, gen: u32, id: &Value) -> Option<bool> {
        self.responses.closed_at_headers(&RequestKey::new(gen, id))
    }

    /// Close the response stream of `(gen, id)` (HTTP).
    pub fn close_stream(&self, id: &Value) -> bool {
        self.at().conn.as_ref().is_some_and(|c| c.close_stream(id))
    }

    /// The delay arguments the tool takes, as far as pacing is on.
    pub fn delay_args(&self) -> message::DelayArgs {
        message::DelayArgs { commit: self.pace_args, task_result: self.task_result_arg }
    }

    /// A `tools/call` of the tool under test (see [`message::tool_call`]).
    pub fn call_message(&self, id: &Value, logical: message::Logical<'_>, hold: Hold, stagger: Duration) -> Value {
        let msg = message::tool_call(&self.opts, self.revision, self.delay_args(), id, logical, hold, stagger);
        message::declare(self.revision, &self.capabilities, msg)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // `ServerProcess` kills its group when dropped; nothing else to release.
        self.at_mut().conn.take();
    }
}
