//! The evidence log: every JSON-RPC frame both ways, every process start, kill and exit, every
//! observer reading and every trace step, with milliseconds since the run started. It is written
//! as JSON lines as it happens (`evidence.jsonl`), so an interrupted or crashed run keeps what
//! it saw, and kept in memory for the result and the report.

use crate::replay::types::{CrashMethod, ReplayVerdict, StepStatus};
use anyhow::{anyhow, Context};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Name of the log file inside the evidence folder.
pub const EVIDENCE_FILE: &str = "evidence.jsonl";

/// Largest frame text kept whole in the log; longer frames are cut (their length is logged).
const MAX_LOGGED_FRAME: usize = 64 * 1024;

/// Records also kept in memory (the file has them all): a server that floods its output must
/// not grow the runner without bound.
pub const MAX_KEPT_RECORDS: usize = 10_000;

/// One line of the log: when, in milliseconds since the run started, and what happened. Written
/// as one JSON object with the event's fields and its `kind` (keys in sorted order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Milliseconds since the run started.
    pub t_ms: f64,
    /// What happened.
    #[serde(flatten)]
    pub event: Event,
}

/// What a record says, by its `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Event {
    /// A server process started, listened, exited, was killed or stopped.
    Process(Process),
    /// A line an HTTP server's launch command printed.
    Output {
        /// `server stdout` or `server stderr`.
        channel: String,
        /// The line.
        line: String,
    },
    /// An observer reading that differs from the last one logged.
    Observe {
        /// The reading.
        reading: f64,
        /// Reads it took to settle.
        reads: usize,
    },
    /// The observer's reading before the first step.
    Baseline {
        /// The reading.
        reading: f64,
    },
    /// A trace step begun or done.
    Step(Step),
    /// The run's verdict.
    Verdict {
        /// The verdict.
        verdict: ReplayVerdict,
        /// Why.
        reason: String,
        /// The effect counts (absent when the run was interrupted).
        #[serde(flatten)]
        effects: Option<VerdictEffects>,
    },
    /// A crash point: how the kill between an attempt's effect and its response was made, and
    /// whether the response had left the server before it.
    CrashPoint {
        /// The attempt (`call C attempt A`).
        attempt: String,
        /// How it was made.
        method: CrashMethod,
        /// Whether the server had written the response before the kill.
        response_written: bool,
    },
    /// A decision of the runner, a reordering, a pacing choice.
    Note {
        /// The note.
        text: String,
    },
    /// A JSON-RPC frame sent or received.
    Frame(Frame),
    /// A transport event (HTTP responses and failures, streams closed).
    Transport(Transport),
    /// Server output that is not JSON-RPC.
    Garbage {
        /// Where it came from.
        channel: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A stdio server's stderr.
    Stderr(Stderr),
}

/// A process event, by its `event`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Process {
    /// Started from `argv` in its own process group (`pid` is also the group id).
    Start {
        /// Process (and group) id.
        pid: u32,
        /// The command.
        argv: Vec<String>,
    },
    /// An HTTP server accepts connections at `url`.
    Listening {
        /// The endpoint.
        url: String,
    },
    /// It exited by itself (reaped).
    Exit {
        /// Its id, if the runner started it.
        pid: Option<u32>,
        /// The exit status.
        status: String,
    },
    /// The runner SIGKILLed its group.
    Killed {
        /// `SIGKILL`.
        signal: String,
        /// Process id.
        pid: u32,
        /// The exit status.
        status: String,
    },
    /// The runner asked it to stop at the end of a run.
    Stop {
        /// Process id.
        pid: u32,
        /// `SIGTERM`.
        signal: String,
        /// Milliseconds before SIGKILL.
        grace_ms: u64,
    },
    /// It stopped.
    Stopped {
        /// Process id.
        pid: u32,
        /// The exit status.
        status: String,
    },
    /// Stopping it failed.
    StopFailed {
        /// Process id.
        pid: u32,
        /// Why.
        error: String,
    },
    /// A process outside the server's group still held its stdout or stderr after the group was
    /// gone (a child started in a session of its own): the runner SIGKILLed it.
    Stray {
        /// Process id.
        pid: u32,
        /// The pipe it held (`pipe:[inode]`).
        pipe: String,
    },
}

impl Process {
    /// The `event` name.
    pub fn name(&self) -> &'static str {
        match self {
            Process::Start { .. } => "start",
            Process::Listening { .. } => "listening",
            Process::Exit { .. } => "exit",
            Process::Killed { .. } => "killed",
            Process::Stop { .. } => "stop",
            Process::Stopped { .. } => "stopped",
            Process::StopFailed { .. } => "stop-failed",
            Process::Stray { .. } => "stray",
        }
    }

    /// The process id as the log has it: a number, `null` for an exit of a process the runner
    /// did not start, nothing when the event has no `pid`.
    pub fn pid_text(&self) -> String {
        match self {
            Process::Listening { .. } => String::new(),
            Process::Exit { pid: None, .. } => "null".into(),
            Process::Exit { pid: Some(pid), .. }
            | Process::Start { pid, .. }
            | Process::Killed { pid, .. }
            | Process::Stop { pid, .. }
            | Process::Stopped { pid, .. }
            | Process::StopFailed { pid, .. }
            | Process::Stray { pid, .. } => pid.to_string(),
        }
    }
}

/// A step record, by its `phase`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "phase", rename_all = "lowercase")]
pub enum Step {
    /// The runner starts the step.
    Begin {
        /// 1-based step number.
        step: usize,
        /// The action.
        action: String,
    },
    /// The step was realised.
    Done {
        /// 1-based step number.
        step: usize,
        /// The action.
        action: String,
        /// How.
        status: StepStatus,
        /// What the runner saw or did.
        note: Option<String>,
    },
}

/// The counts a verdict rests on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerdictEffects {
    /// Effects in the trace's last state.
    pub expected_effects: u64,
    /// Effects the observer counted (None if it could not tell).
    pub observed_effects: Option<i64>,
}

/// Which way a frame went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// From the server.
    In,
    /// To the server.
    Out,
}

/// A frame as logged: parsed JSON when it is JSON, its text otherwise, cut when overlong.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    /// Which way.
    pub dir: Direction,
    /// `stdio`, `http POST`, `http SSE`, `http JSON`.
    pub channel: String,
    /// Its length in bytes.
    pub bytes: usize,
    /// The frame, when it is JSON (and not cut).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub frame: Option<Value>,
    /// The text, when it is not JSON, or cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Whether the text was cut at [`MAX_LOGGED_FRAME`] bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated: Option<bool>,
}

/// A field that is there, even as `null`.
fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// A transport event, by its `event`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "kebab-case")]
pub enum Transport {
    /// The runner closed a request's response stream (HTTP).
    CloseStream {
        /// The request id.
        id: Value,
        /// Whether it was still open.
        was_open: bool,
    },
    /// The server's stdout closed.
    StdoutClosed,
    /// An HTTP request or its response stream failed.
    HttpFailed {
        /// The request id (None for a notification).
        id: Option<Value>,
        /// Why.
        reason: String,
    },
    /// HTTP response headers arrived.
    HttpResponse {
        /// The request id (None for a notification).
        id: Option<Value>,
        /// The HTTP status.
        status: u16,
        /// The content type, lower case.
        content_type: String,
    },
    /// A response stream ended normally.
    StreamEnd {
        /// The request id.
        id: Value,
    },
}

/// A stderr record: a line, or how many lines were not kept.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stderr {
    /// One line.
    Line {
        /// The line.
        line: String,
    },
    /// Lines past the limit, counted and not kept.
    Dropped {
        /// How many.
        dropped_lines: usize,
    },
}

impl Record {
    /// The process group a `process` `start` record names.
    pub fn started_pid(&self) -> Option<u32> {
        match self.event {
            Event::Process(Process::Start { pid, .. }) => Some(pid),
            _ => None,
        }
    }
}

/// Read `dir/evidence.jsonl`. A run killed mid-write may leave a torn last line, which is left
/// out; any other line that is not a record is an error.
pub fn read(dir: &Path) -> anyhow::Result<Vec<Record>> {
    let path = dir.join(EVIDENCE_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    parse(&text).map_err(|e| anyhow!("{}:{e}", path.display()))
}

/// Parse the lines of an evidence log (see [`read`]); an error starts with the line number.
pub fn parse(text: &str) -> Result<Vec<Record>, String> {
    let lines = text.lines().count();
    let mut out = Vec::with_capacity(lines);
    for (i, line) in text.lines().enumerate() {
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.push(r),
            Err(_) if i + 1 == lines => {}
            Err(e) => return Err(format!("{}: not an evidence record: {e}", i + 1)),
        }
    }
    Ok(out)
}

struct Inner {
    file: Option<File>,
    records: Vec<Record>,
}

/// A shared, append-only evidence log.
#[derive(Clone)]
pub struct Evidence {
    start: Instant,
    path: Option<PathBuf>,
    inner: Arc<Mutex<Inner>>,
}

impl Evidence {
    /// A log kept in memory and, when `dir` is given, written to `dir/evidence.jsonl` (the folder
    /// is created; an existing log there is replaced).
    pub fn new(dir: Option<&Path>) -> std::io::Result<Evidence> {
        let (file, path) = match dir {
            Some(d) => {
                std::fs::create_dir_all(d)?;
                let p = d.join(EVIDENCE_FILE);
                (Some(File::create(&p)?), Some(p))
            }
            None => (None, None),
        };
        Ok(Evidence { start: Instant::now(), path, inner: Arc::new(Mutex::new(Inner { file, records: Vec::new() })) })
    }

    /// Where the log is written, if anywhere.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Milliseconds since the run started.
    pub fn elapsed_ms(&self) -> f64 {
        (self.start.elapsed().as_secs_f64() * 1000.0 * 10.0).round() / 10.0
    }

    /// Append one record.
    pub fn record(&self, event: Event) {
        let record = Record { t_ms: self.elapsed_ms(), event };
        // Through a JSON map, so that the keys come out in sorted order.
        let line = serde_json::to_value(&record).expect("records serialise");
        let mut inner = self.inner.lock().expect("evidence lock");
        if let Some(f) = inner.file.as_mut() {
            let _ = writeln!(f, "{line}");
            let _ = f.flush();
        }
        if inner.records.len() < MAX_KEPT_RECORDS {
            inner.records.push(record);
        }
    }

    /// Log a frame sent (`Out`) or received (`In`) on `channel` (stdio, http POST …).
    pub fn frame(&self, dir: Direction, channel: &str, text: &str) {
        let mut frame =
            Frame { dir, channel: channel.into(), bytes: text.len(), frame: None, text: None, truncated: None };
        if text.len() > MAX_LOGGED_FRAME {
            let mut cut = MAX_LOGGED_FRAME;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            frame.text = Some(text[..cut].into());
            frame.truncated = Some(true);
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(v) => frame.frame = Some(v),
                Err(_) => frame.text = Some(text.into()),
            }
        }
        self.record(Event::Frame(frame));
    }

    /// Log a note (a decision of the runner, a reordering, a pacing choice).
    pub fn note(&self, text: impl Into<String>) {
        self.record(Event::Note { text: text.into() });
    }

    /// The records so far (the first [`MAX_KEPT_RECORDS`]; the file has every one).
    pub fn records(&self) -> Vec<Record> {
        self.inner.lock().expect("evidence lock").records.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Each record as the log had it when records were built field by field, and its type.
    fn cases() -> Vec<(Value, Event)> {
        let id = json!(1);
        vec![
            (
                json!({"kind": "process", "event": "start", "pid": 7, "argv": ["srv", "--x"]}),
                Event::Process(Process::Start { pid: 7, argv: vec!["srv".into(), "--x".into()] }),
            ),
            (
                json!({"kind": "process", "event": "listening", "url": "http://h/mcp"}),
                Event::Process(Process::Listening { url: "http://h/mcp".into() }),
            ),
            (
                json!({"kind": "process", "event": "exit", "pid": null, "status": "exit status: 1"}),
                Event::Process(Process::Exit { pid: None, status: "exit status: 1".into() }),
            ),
            (
                json!({"kind": "process", "event": "killed", "signal": "SIGKILL", "pid": 7, "status": "s"}),
                Event::Process(Process::Killed { signal: "SIGKILL".into(), pid: 7, status: "s".into() }),
            ),
            (
                json!({"kind": "process", "event": "stop", "pid": 7, "signal": "SIGTERM", "grace_ms": 3000}),
                Event::Process(Process::Stop { pid: 7, signal: "SIGTERM".into(), grace_ms: 3000 }),
            ),
            (
                json!({"kind": "process", "event": "stopped", "pid": 7, "status": "s"}),
                Event::Process(Process::Stopped { pid: 7, status: "s".into() }),
            ),
            (
                json!({"kind": "process", "event": "stop-failed", "pid": 7, "error": "e"}),
                Event::Process(Process::StopFailed { pid: 7, error: "e".into() }),
            ),
            (
                json!({"kind": "output", "channel": "server stdout", "line": "l"}),
                Event::Output { channel: "server stdout".into(), line: "l".into() },
            ),
            (json!({"kind": "observe", "reading": 2.0, "reads": 2}), Event::Observe { reading: 2.0, reads: 2 }),
            (json!({"kind": "baseline", "reading": 0.5}), Event::Baseline { reading: 0.5 }),
            (
                json!({"kind": "step", "step": 1, "action": "ClientCall(0)", "phase": "begin"}),
                Event::Step(Step::Begin { step: 1, action: "ClientCall(0)".into() }),
            ),
            (
                json!({"kind": "step", "step": 1, "action": "A", "phase": "done", "status": "driven", "note": "n"}),
                Event::Step(Step::Done {
                    step: 1,
                    action: "A".into(),
                    status: StepStatus::Driven,
                    note: Some("n".into()),
                }),
            ),
            (
                json!({"kind": "verdict", "verdict": "confirmed", "reason": "r", "expected_effects": 2, "observed_effects": null}),
                Event::Verdict {
                    verdict: ReplayVerdict::Confirmed,
                    reason: "r".into(),
                    effects: Some(VerdictEffects { expected_effects: 2, observed_effects: None }),
                },
            ),
            (
                json!({"kind": "verdict", "verdict": "interrupted", "reason": "r"}),
                Event::Verdict { verdict: ReplayVerdict::Interrupted, reason: "r".into(), effects: None },
            ),
            (json!({"kind": "note", "text": "t"}), Event::Note { text: "t".into() }),
            (
                json!({"kind": "crashpoint", "attempt": "call 0 attempt 0", "method": "ptrace", "response_written": false}),
                Event::CrashPoint {
                    attempt: "call 0 attempt 0".into(),
                    method: crate::replay::types::CrashMethod::Ptrace,
                    response_written: false,
                },
            ),
            (
                json!({"kind": "frame", "dir": "in", "channel": "stdio", "bytes": 4, "frame": null}),
                Event::Frame(Frame {
                    dir: Direction::In,
                    channel: "stdio".into(),
                    bytes: 4,
                    frame: Some(Value::Null),
                    text: None,
                    truncated: None,
                }),
            ),
            (
                json!({"kind": "frame", "dir": "out", "channel": "http POST", "bytes": 9, "text": "x", "truncated": true}),
                Event::Frame(Frame {
                    dir: Direction::Out,
                    channel: "http POST".into(),
                    bytes: 9,
                    frame: None,
                    text: Some("x".into()),
                    truncated: Some(true),
                }),
            ),
            (
                json!({"kind": "transport", "event": "close-stream", "id": id, "was_open": true}),
                Event::Transport(Transport::CloseStream { id: id.clone(), was_open: true }),
            ),
            (json!({"kind": "transport", "event": "stdout-closed"}), Event::Transport(Transport::StdoutClosed)),
            (
                json!({"kind": "transport", "event": "http-failed", "id": null, "reason": "r"}),
                Event::Transport(Transport::HttpFailed { id: None, reason: "r".into() }),
            ),
            (
                json!({"kind": "transport", "event": "http-response", "id": id, "status": 200, "content_type": "application/json"}),
                Event::Transport(Transport::HttpResponse {
                    id: Some(id.clone()),
                    status: 200,
                    content_type: "application/json".into(),
                }),
            ),
            (
                json!({"kind": "transport", "event": "stream-end", "id": id}),
                Event::Transport(Transport::StreamEnd { id: id.clone() }),
            ),
            (
                json!({"kind": "garbage", "channel": "stdio", "reason": "r"}),
                Event::Garbage { channel: "stdio".into(), reason: "r".into() },
            ),
            (json!({"kind": "stderr", "line": "l"}), Event::Stderr(Stderr::Line { line: "l".into() })),
            (json!({"kind": "stderr", "dropped_lines": 3}), Event::Stderr(Stderr::Dropped { dropped_lines: 3 })),
        ]
    }

    #[test]
    fn records_are_written_as_the_untyped_log_was_and_read_back() {
        for (mut old, event) in cases() {
            old["t_ms"] = json!(12.5);
            let record = Record { t_ms: 12.5, event };
            let written = serde_json::to_value(&record).unwrap().to_string();
            assert_eq!(written, old.to_string());
            assert_eq!(serde_json::from_str::<Record>(&written).unwrap(), record, "{written}");
        }
    }

    #[test]
    fn a_torn_last_line_is_left_out_and_any_other_bad_line_refused() {
        let good = r#"{"kind":"note","t_ms":1.0,"text":"a"}"#;
        assert_eq!(parse(&format!("{good}\n{good}\n{{\"kind\":\"no")).unwrap().len(), 2);
        let err = parse(&format!("{good}\n{{\"kind\":\"nothing\",\"t_ms\":1.0}}\n{good}\n")).unwrap_err();
        assert!(err.starts_with("2: not an evidence record"), "{err}");
    }

    #[test]
    fn the_log_file_reads_back_as_it_was_written() {
        let dir = std::env::temp_dir().join(format!("mcp-once-evidence-{}", std::process::id()));
        let log = Evidence::new(Some(&dir)).unwrap();
        log.note("one");
        log.frame(Direction::Out, "stdio", r#"{"jsonrpc":"2.0","method":"x"}"#);
        log.frame(Direction::In, "stdio", "not json");
        let back = read(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(back, log.records());
        assert_eq!(back.len(), 3);
    }
}
