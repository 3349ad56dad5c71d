//! The evidence log: every JSON-RPC frame both ways, every process start, kill and exit, every
//! observer reading and every trace step, with milliseconds since the run started. It is written
//! as JSON lines as it happens (`evidence.jsonl`), so an interrupted or crashed run keeps what
//! it saw, and kept in memory for the result and the report.

use serde_json::{json, Value};
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

struct Inner {
    file: Option<File>,
    records: Vec<Value>,
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

    /// Append one record of `kind` with the given fields.
    pub fn record(&self, kind: &str, mut fields: Value) {
        if let Value::Object(map) = &mut fields {
            map.insert("t_ms".into(), json!(self.elapsed_ms()));
            map.insert("kind".into(), json!(kind));
        }
        let mut inner = self.inner.lock().expect("evidence lock");
        if let Some(f) = inner.file.as_mut() {
            let _ = writeln!(f, "{fields}");
            let _ = f.flush();
        }
        if inner.records.len() < MAX_KEPT_RECORDS {
            inner.records.push(fields);
        }
    }

    /// Log a frame sent (`dir` = "out") or received ("in") on `channel` (stdio, http POST …).
    pub fn frame(&self, dir: &str, channel: &str, text: &str) {
        let mut fields = json!({"dir": dir, "channel": channel, "bytes": text.len()});
        if text.len() > MAX_LOGGED_FRAME {
            let mut cut = MAX_LOGGED_FRAME;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            fields["text"] = json!(&text[..cut]);
            fields["truncated"] = json!(true);
        } else {
            match serde_json::from_str::<Value>(text) {
                Ok(v) => fields["frame"] = v,
                Err(_) => fields["text"] = json!(text),
            }
        }
        self.record("frame", fields);
    }

    /// Log a note (a decision of the runner, a reordering, a pacing choice).
    pub fn note(&self, text: impl Into<String>) {
        self.record("note", json!({"text": text.into()}));
    }

    /// The records so far (the first [`MAX_KEPT_RECORDS`]; the file has every one).
    pub fn records(&self) -> Vec<Value> {
        self.inner.lock().expect("evidence lock").records.clone()
    }
}
