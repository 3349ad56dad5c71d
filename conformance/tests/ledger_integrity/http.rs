//! A Streamable HTTP peer for the kill rounds: the fixture server started in its own process
//! group on a free port, one MCP session, each call its own POST read to the end in a task,
//! and every complete response frame (JSON body or SSE `data:` event) handed to the test.

use futures::StreamExt;
use mcp_once_testkit::fixtures::listening_url;
use mcp_once_testkit::process::Group;
use serde_json::{json, Value};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tokio::runtime::Runtime;
use tokio::task::JoinHandle;

/// The revision the peer speaks.
const REVISION: &str = "2025-11-25";

/// A fixture server over Streamable HTTP and the runtime its POSTs run on.
pub struct Peer {
    group: Group,
    rt: Runtime,
    client: reqwest::Client,
    url: String,
    session: Option<String>,
    calls: Vec<JoinHandle<()>>,
    frames_tx: mpsc::Sender<Value>,
    frames: mpsc::Receiver<Value>,
    bound: Duration,
}

impl Peer {
    /// Start `argv` (which must ask for `--transport http --port 0`), wait for its `listening`
    /// line and open a session (initialize, then `notifications/initialized`).
    pub fn start(argv: &[String], bound: Duration) -> Peer {
        let group = Group::spawn(argv, false);
        let url = group
            .stderr_until(bound, listening_url)
            .unwrap_or_else(|seen| panic!("{argv:?} printed no listening line within {bound:?}:\n{seen}"));
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let client = reqwest::Client::builder().timeout(bound).build().expect("client");
        let (frames_tx, frames) = mpsc::channel();
        let mut peer = Peer { group, rt, client, url, session: None, calls: Vec::new(), frames_tx, frames, bound };
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": REVISION, "capabilities": {},
            "clientInfo": {"name": "ledger-integrity", "version": "0"}
        }});
        let (session, answer) = peer.rt.block_on(post(&peer.client, &peer.url, None, &init));
        assert!(answer.iter().any(|f| f.get("result").is_some()), "initialize was not answered: {answer:?}");
        peer.session = session;
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        peer.rt.block_on(post(&peer.client, &peer.url, peer.session.as_deref(), &initialized));
        peer
    }

    /// POST `message` in a task of its own; its response frames arrive in [`Peer::next_response`].
    pub fn send(&mut self, message: &Value) {
        let (client, url, session) = (self.client.clone(), self.url.clone(), self.session.clone());
        let (message, tx) = (message.clone(), self.frames_tx.clone());
        self.calls.push(self.rt.spawn(async move {
            for frame in post(&client, &url, session.as_deref(), &message).await.1 {
                let _ = tx.send(frame);
            }
        }));
    }

    /// The next response frame of any call, within the bound.
    pub fn next_response(&mut self) -> Value {
        self.frames.recv_timeout(self.bound).unwrap_or_else(|_| panic!("no response within {:?}", self.bound))
    }

    /// SIGKILL the server's group, reap it, let every POST end (the connections close with
    /// the process), and return every frame the server wrote before it died.
    pub fn kill_and_collect(mut self) -> Vec<Value> {
        self.group.kill();
        let deadline = Instant::now() + self.bound;
        for call in std::mem::take(&mut self.calls) {
            let left = deadline.saturating_duration_since(Instant::now());
            self.rt
                .block_on(async { tokio::time::timeout(left, call).await })
                .unwrap_or_else(|_| panic!("a POST still open {:?} after the kill", self.bound))
                .expect("the POST task");
        }
        self.frames.try_iter().collect()
    }
}

/// POST one message; the session id the server gave (if any) and every complete frame of the
/// answer. A connection cut mid-answer keeps the frames that were whole.
async fn post(
    client: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    message: &Value,
) -> (Option<String>, Vec<Value>) {
    let mut req = client
        .post(url)
        .header("Accept", "application/json, text/event-stream")
        .header("Content-Type", "application/json")
        .header("MCP-Protocol-Version", REVISION)
        .body(message.to_string());
    if let Some(s) = session {
        req = req.header("Mcp-Session-Id", s);
    }
    let Ok(resp) = req.send().await else { return (None, Vec::new()) };
    let session = resp.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
    let sse = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("text/event-stream"));
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(Ok(chunk)) = stream.next().await {
        body.extend_from_slice(&chunk);
    }
    let frames = if sse { sse_frames(&body) } else { serde_json::from_slice(&body).into_iter().collect() };
    (session, frames)
}

/// The JSON of every complete SSE event (ended by a blank line) with `data:`; a torn last event
/// is not a frame.
fn sse_frames(body: &[u8]) -> Vec<Value> {
    let text = String::from_utf8_lossy(body).replace("\r\n", "\n");
    let complete = text.rsplit_once("\n\n").map_or("", |(events, _torn)| events);
    complete
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event.lines().filter_map(|l| l.strip_prefix("data:")).map(str::trim_start).collect();
            serde_json::from_str(&data.join("\n")).ok()
        })
        .collect()
}
