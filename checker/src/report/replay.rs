//! A replay's evidence as an issue report reads it: the peers' names and versions from the
//! handshake, the call's frames and what the client was told, and the "replay on a real
//! server" section with the wire log folded to what shows the bug.

use mcp_once_conformance::replay::evidence::{self, Direction, Event, Frame, Process, Record, Transport};
use mcp_once_conformance::replay::ReplayResult;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Longest frame text quoted on one line of a report; the evidence file has it whole.
const MAX_LINE: usize = 600;

/// A peer's `serverInfo` or `clientInfo`: name and version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
}

impl std::fmt::Display for Peer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` {}", self.name, self.version)
    }
}

/// A replay's evidence folder, read: `result.json` and `evidence.jsonl`.
pub struct ReplayEvidence {
    /// The result.
    pub result: ReplayResult,
    /// Every record of the log.
    pub records: Vec<Record>,
    /// The log file.
    pub log_path: PathBuf,
}

/// The first object under `key` anywhere in `v` (the handshake's `serverInfo`, a 2026-07-28
/// request's `_meta` entry), as a peer.
fn find_peer(v: &Value, key: &str) -> Option<Peer> {
    match v {
        Value::Object(map) => {
            for (k, inner) in map {
                if k == key || k.ends_with(&format!("/{key}")) {
                    if let (Some(name), Some(version)) = (inner["name"].as_str(), inner["version"].as_str()) {
                        return Some(Peer { name: name.into(), version: version.into() });
                    }
                }
            }
            map.values().find_map(|inner| find_peer(inner, key))
        }
        Value::Array(items) => items.iter().find_map(|inner| find_peer(inner, key)),
        _ => None,
    }
}

impl ReplayEvidence {
    /// Read the folder `replay --evidence DIR` wrote.
    pub fn load(dir: &Path) -> anyhow::Result<ReplayEvidence> {
        let result = mcp_once_conformance::replay::read_result(dir)?;
        let records = evidence::read(dir)?;
        Ok(ReplayEvidence { result, records, log_path: dir.join(evidence::EVIDENCE_FILE) })
    }

    /// The frames one way, with their records.
    fn frames(&self, dir: Direction) -> impl Iterator<Item = (&Record, &Frame, &Value)> {
        self.records.iter().filter_map(move |r| match &r.event {
            Event::Frame(f) if f.dir == dir => f.frame.as_ref().map(|v| (r, f, v)),
            _ => None,
        })
    }

    /// The server's `serverInfo`, from the first handshake answer that has one.
    pub fn server_info(&self) -> Option<Peer> {
        self.frames(Direction::In).find_map(|(_, _, v)| find_peer(&v["result"], "serverInfo"))
    }

    /// The client's `clientInfo`, from the first request that carries one.
    pub fn client_info(&self) -> Option<Peer> {
        self.frames(Direction::Out).find_map(|(_, _, v)| find_peer(&v["params"], "clientInfo"))
    }

    /// The ids of the `tools/call` requests sent, in order.
    pub fn call_ids(&self) -> Vec<Value> {
        self.frames(Direction::Out)
            .filter(|(_, _, v)| v["method"] == "tools/call")
            .map(|(_, _, v)| v["id"].clone())
            .collect()
    }

    /// The `tools/call` request with `id`: its arguments, for the reproduce command.
    pub fn call_request(&self, id: &Value) -> Option<&Value> {
        self.frames(Direction::Out).find(|(_, _, v)| v["method"] == "tools/call" && v["id"] == *id).map(|(_, _, v)| v)
    }

    /// What the client was told about the request `id`: the server's answer, if any.
    pub fn answer(&self, id: &Value) -> Option<(&Record, &Value)> {
        self.frames(Direction::In).find(|(_, _, v)| v["id"] == *id && v.get("method").is_none()).map(|(r, _, v)| (r, v))
    }

    /// Whether a record shows the bug: the handshake's answer, the calls and their answers,
    /// cancellations, effects counted, crash points, processes started, killed or exited, and
    /// the transport events of the calls.
    fn shows_the_bug(&self, r: &Record, ids: &[Value]) -> bool {
        match &r.event {
            Event::Frame(f) => match &f.frame {
                Some(v) => {
                    matches!(v["method"].as_str(), Some("tools/call" | "notifications/cancelled" | "initialize"))
                        || ids.contains(&v["id"])
                        || find_peer(&v["result"], "serverInfo").is_some()
                }
                None => true,
            },
            Event::Process(p) => !matches!(p, Process::Stop { .. } | Process::Stopped { .. }),
            Event::Transport(Transport::CloseStream { id, .. } | Transport::StreamEnd { id }) => ids.contains(id),
            Event::Transport(Transport::HttpFailed { .. } | Transport::StdoutClosed) => true,
            Event::Transport(Transport::HttpResponse { .. }) => false,
            Event::Observe { .. } | Event::Baseline { .. } | Event::CrashPoint { .. } | Event::Verdict { .. } => true,
            Event::Step(_) | Event::Note { .. } | Event::Output { .. } | Event::Garbage { .. } | Event::Stderr(_) => {
                false
            }
        }
    }

    /// One record as a wire-log line (None for records the log does not show).
    pub fn line(&self, r: &Record) -> Option<String> {
        let json = |v: f64| Value::from(v).to_string();
        let what = match &r.event {
            Event::Frame(f) => {
                let arrow = if f.dir == Direction::Out { "client -> server" } else { "server -> client" };
                let body = f.frame.as_ref().map(Value::to_string).or_else(|| f.text.clone()).unwrap_or_default();
                let body = if body.len() > MAX_LINE {
                    let mut cut = MAX_LINE;
                    while !body.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    format!("{}... ({} bytes)", &body[..cut], f.bytes)
                } else {
                    body
                };
                format!("{arrow} [{}] {body}", f.channel)
            }
            Event::Process(p @ Process::Start { argv, .. }) => {
                format!("process start {}: {}", p.pid_text(), argv.join(" "))
            }
            Event::Process(p) => format!("process {} {}", p.name(), p.pid_text()),
            Event::Observe { reading, .. } => format!("observer reads {}", json(*reading)),
            Event::Baseline { reading } => format!("observer baseline {}", json(*reading)),
            Event::CrashPoint { attempt, method, response_written } => {
                let written =
                    if *response_written { "had been written (treated as lost)" } else { "never left the server" };
                let how = serde_json::to_value(method).ok()?;
                format!("crash point, {attempt}: {}, the response {written}", how.as_str().unwrap_or("?"))
            }
            Event::Transport(t) => format!("transport {}", serde_json::to_value(t).ok()?),
            Event::Verdict { verdict, .. } => format!("verdict {verdict}"),
            _ => return None,
        };
        Some(format!("{:>9.1} ms  {what}", r.t_ms))
    }

    /// The "replay on a real server" section: verdict, counts, steps and the wire log folded to
    /// the records that show the bug, at most `budget` characters of log.
    pub fn section(&self, budget: usize) -> String {
        let result = &self.result;
        let json = |v: Value| v.to_string();
        let mut out = String::new();
        out.push_str("\n## Replay on a real server\n\n");
        out.push_str(&format!("**Verdict: {}.** {}\n\n", result.verdict, result.reason));
        out.push_str(&format!("- Server: `{}` (protocol revision {})\n", result.target, result.revision.as_str()));
        out.push_str(&format!(
            "- Effects: expected {}, observed {} (observer: {})\n",
            result.expected_effects,
            json(result.observed_effects.into()),
            result.observer
        ));
        if let Some(n) = result.settled_effects {
            out.push_str(&format!("- Effects after the server stopped: {n}\n"));
        }
        out.push_str(&format!("- Evidence: `{}` ({} records)\n\n", self.log_path.display(), self.records.len()));
        if !result.steps.is_empty() {
            out.push_str("| # | step | status | ms | what the runner saw or did |\n|---|---|---|---|---|\n");
            for st in &result.steps {
                out.push_str(&format!(
                    "| {} | `{}` | {} | {} | {} |\n",
                    st.step,
                    st.action,
                    st.status,
                    json(st.t_ms.into()),
                    st.note.as_deref().unwrap_or_default().replace('|', "\\|")
                ));
            }
            out.push('\n');
        }
        for n in &result.notes {
            out.push_str(&format!("- Note: {n}\n"));
        }
        out.push_str("\n<details><summary>Wire log (the call's frames both ways, effects, faults, processes)</summary>\n\n```text\n");
        let ids = self.call_ids();
        let mut left_out: BTreeMap<&str, usize> = BTreeMap::new();
        let mut used = 0;
        let mut cut_at = None;
        for r in &self.records {
            let shown = self.shows_the_bug(r, &ids).then(|| self.line(r)).flatten();
            let Some(line) = shown else {
                *left_out.entry(kind_name(&r.event)).or_default() += 1;
                continue;
            };
            if cut_at.is_some() || used + line.len() + 1 > budget {
                cut_at.get_or_insert(r.t_ms);
                *left_out.entry("records past the report's size limit").or_default() += 1;
                continue;
            }
            used += line.len() + 1;
            out.push_str(&line);
            out.push('\n');
        }
        out.push_str("```\n\n");
        if !left_out.is_empty() {
            let what: Vec<String> = left_out.iter().map(|(k, n)| format!("{n} {k}")).collect();
            out.push_str(&format!(
                "Left out of this log: {}. The full log is `{}`.\n\n",
                what.join(", "),
                self.log_path.display()
            ));
        }
        out.push_str("</details>\n");
        out
    }
}

/// What a left-out record was, for the note under the folded log.
fn kind_name(e: &Event) -> &'static str {
    match e {
        Event::Frame(_) => "other frames (handshake notifications, listings)",
        Event::Process(_) => "process stop records",
        Event::Output { .. } | Event::Stderr(_) => "server output lines",
        Event::Step(_) => "step records (in the table above)",
        Event::Note { .. } => "runner notes",
        Event::Garbage { .. } => "non-JSON-RPC output records",
        Event::Transport(_) => "transport records of other requests",
        _ => "other records",
    }
}
