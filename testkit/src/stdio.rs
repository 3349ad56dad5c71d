//! A JSON-RPC peer on a child's stdio, one message per line: the tests' own tiny client for the
//! fixture servers. Every read is bounded; the child is SIGKILLed and reaped when dropped.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One running server process spoken to over stdin and stdout.
pub struct Peer {
    /// The process.
    pub child: Child,
    stdin: Option<ChildStdin>,
    /// stdout lines: a JSON frame, or the line that is not JSON.
    frames: Receiver<Result<Value, String>>,
    stderr_lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// Responses read while waiting for another id.
    pending: Vec<Value>,
    /// Inode of the pipe that is the child's stdout (servers may write to a dup of fd 1).
    pub stdout_pipe: u64,
    /// Bound on each wait.
    pub bound: Duration,
}

impl Peer {
    /// Start `argv` (program first) with piped stdio; every wait is bounded by `bound`.
    pub fn spawn(argv: &[String], bound: Duration) -> Peer {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {argv:?}: {e}"));
        let stdout = child.stdout.take().expect("stdout");
        let stdout_pipe =
            std::fs::metadata(format!("/proc/self/fd/{}", stdout.as_raw_fd())).expect("stat the stdout pipe").ino();
        let (tx, frames) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str::<Value>(&line).map_err(|_| line)).is_err() {
                    break;
                }
            }
        });
        // Drain stderr (the server never blocks on it); keep it for failure reports.
        let stderr = child.stderr.take().expect("stderr");
        let (line_tx, stderr_lines) = mpsc::channel();
        let log = Arc::new(Mutex::new(String::new()));
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = line_tx.send(line);
            }
        });
        Peer {
            stdin: child.stdin.take(),
            child,
            frames,
            stderr_lines,
            stderr: log,
            pending: Vec::new(),
            stdout_pipe,
            bound,
        }
    }

    /// Write one message as a line.
    pub fn send(&mut self, message: &Value) {
        let mut line = serde_json::to_vec(message).expect("serialise");
        line.push(b'\n');
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(&line).and_then(|()| stdin.flush()).expect("write to the server's stdin");
    }

    /// Close the child's stdin (a stdio server's cue to exit).
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// The next response (a frame with an id and no method), held ones first; notifications
    /// are skipped, a non-JSON line fails.
    pub fn next_response(&mut self) -> Value {
        if !self.pending.is_empty() {
            return self.pending.remove(0);
        }
        self.read_until(|_| true)
    }

    /// The response with this id; responses to other ids are held for later.
    pub fn response(&mut self, id: &Value) -> Value {
        if let Some(i) = self.pending.iter().position(|f| &f["id"] == id) {
            return self.pending.remove(i);
        }
        self.read_until(|f| &f["id"] == id)
    }

    /// Whether responses have been read and held while waiting for another id.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    fn read_until(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + self.bound;
        loop {
            match self.frames.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(f)) if f.get("id").is_some() && f.get("method").is_none() => {
                    if wanted(&f) {
                        return f;
                    }
                    self.pending.push(f);
                }
                Ok(Ok(_notification_or_request)) => {}
                Ok(Err(line)) => panic!("non-JSON line on the server's stdout: {line:?}"),
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no response within {:?}; stderr:\n{}", self.bound, self.stderr_text())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server's stdout closed; stderr:\n{}", self.stderr_text())
                }
            }
        }
    }

    /// Send a request and wait for its response.
    pub fn request(&mut self, id: Value, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.response(&id)
    }

    /// The `initialize` handshake at 2025-11-25 (id 0), then `notifications/initialized`;
    /// returns the `initialize` response, which must be a result.
    pub fn initialize(&mut self, client_name: &str) -> Value {
        let init = self.request(
            json!(0),
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": client_name, "version": "0"}}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// The next stderr line that contains `needle`.
    pub fn stderr_line(&self, needle: &str) -> String {
        let deadline = Instant::now() + self.bound;
        loop {
            match self.stderr_lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(_) => panic!("no stderr line with {needle:?}; stderr so far:\n{}", self.stderr_text()),
            }
        }
    }

    /// Everything the server wrote on stderr so far.
    pub fn stderr_text(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Wait for stdout to reach EOF (the server, and any wrapper around it, closed it).
    pub fn await_stdout_closed(&mut self) {
        let deadline = Instant::now() + self.bound;
        loop {
            match self.frames.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => return,
                Err(RecvTimeoutError::Timeout) => panic!("stdout still open after {:?}", self.bound),
            }
        }
    }

    /// Wait for the process to exit by itself.
    pub fn wait_exit(&mut self) -> ExitStatus {
        crate::wait::child_exit(&mut self.child, self.bound)
            .unwrap_or_else(|| panic!("the server still runs after {:?}", self.bound))
    }

    /// SIGKILL and reap.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGKILL, reap, and return every JSON frame the server wrote before it died (stdout read
    /// to EOF, bounded). A last line cut short by the kill is not a frame and is left out.
    pub fn kill_and_collect(mut self) -> Vec<Value> {
        self.kill();
        let mut frames = std::mem::take(&mut self.pending);
        let deadline = Instant::now() + self.bound;
        loop {
            match self.frames.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(f)) => frames.push(f),
                Ok(Err(_torn)) => {}
                Err(RecvTimeoutError::Disconnected) => return frames,
                Err(RecvTimeoutError::Timeout) => panic!("stdout not at EOF {:?} after the kill", self.bound),
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!("--- server stderr ---\n{}", self.stderr_text());
        }
    }
}
