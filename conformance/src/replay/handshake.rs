//! Starting a server (more of [`Session`]'s methods): waiting for a launched HTTP server to listen, the handshake of each
//! revision (`initialize` or `server/discover`), and finding the tool under test in `tools/list`.

use crate::replay::evidence::{Event, Process};
use crate::replay::message::{self, CLIENT_NAME};
use crate::replay::session::Session;
use crate::replay::start_error::StartError;
use crate::replay::types::Revision;
use serde_json::{json, Value};
use std::time::Duration;
use tokio::time::Instant;

impl Session {
    /// Refuse to launch a server whose port already answers: whatever listens there (a server
    /// left from an earlier run, another process given the same port) is what the runner would
    /// then test, not the server it starts.
    pub(crate) async fn ensure_port_free(&self, url: &str) -> Result<(), String> {
        let (host, port) = host_port(url)?;
        let attempt =
            tokio::time::timeout(Duration::from_millis(200), tokio::net::TcpStream::connect((host.as_str(), port)))
                .await;
        match attempt {
            Ok(Ok(_)) => Err(format!(
                "something already listens on {host}:{port} before the launch command ran: the runner would test it, not the server it starts (stop it, or give the server a free port)"
            )),
            _ => Ok(()),
        }
    }

    pub(crate) async fn wait_listening(&mut self, url: &str, deadline: Instant) -> Result<(), String> {
        let (host, port) = host_port(url)?;
        // Nothing signals that a port opened; poll it, one bounded connect per check.
        let listening = self
            .wait_until(deadline, async |s| {
                if let Some(why) = s.check_exit() {
                    return Some(Err(format!("the launch command exited before the server listened ({why})")));
                }
                let attempt = tokio::time::timeout(
                    Duration::from_millis(200),
                    tokio::net::TcpStream::connect((host.as_str(), port)),
                )
                .await;
                if let Ok(Ok(_)) = attempt {
                    s.evidence.record(Event::Process(Process::Listening { url: url.into() }));
                    return Some(Ok(()));
                }
                None
            })
            .await;
        listening.unwrap_or_else(|| {
            Err(format!(
                "nothing listens on {host}:{port} within {} ms of the launch",
                self.opts.start_timeout.as_millis()
            ))
        })
    }

    pub(crate) fn with_meta(&self, params: Value) -> Value {
        let params = message::with_meta(self.revision, params);
        let msg = message::declare(self.revision, &self.capabilities, json!({ "params": params }));
        msg["params"].clone()
    }

    pub(crate) async fn handshake(&mut self, deadline: Instant) -> Result<(), String> {
        match self.revision {
            Revision::R2025_11_25 => {
                let params = json!({"protocolVersion": "2025-11-25", "capabilities": self.capabilities, "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")}});
                let result =
                    self.request_until("initialize", params, deadline).await.map_err(|e| format!("initialize: {e}"))?;
                let version = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .ok_or("initialize: the result has no protocolVersion")?
                    .to_string();
                self.server_capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
                if version != "2025-11-25" {
                    self.evidence.note(format!("the server negotiated protocol {version}, not 2025-11-25"));
                }
                let conn = self.connection();
                conn.set_protocol_version(&version);
                conn.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
                    .await
                    .map_err(|e| format!("{e:#}"))?;
            }
            Revision::R2026_07_28 => {
                self.connection().set_protocol_version("2026-07-28");
                let params = self.with_meta(json!({}));
                let result = self.request_until("server/discover", params, deadline).await.map_err(|e| {
                    format!("server/discover: {e} (does the server speak 2026-07-28? try --revision 2025-11-25)")
                })?;
                let versions = result
                    .get("supportedVersions")
                    .or_else(|| result.get("protocolVersions"))
                    .cloned()
                    .unwrap_or(Value::Null);
                self.server_capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
                if !versions.as_array().is_some_and(|v| v.iter().any(|x| x == "2026-07-28")) {
                    return Err(format!(
                        "server/discover does not list 2026-07-28 (it says {versions}); try --revision 2025-11-25"
                    ));
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn discover_tool(&mut self, deadline: Instant) -> Result<(), StartError> {
        let params = self.with_meta(json!({}));
        let result =
            self.request_until("tools/list", params, deadline).await.map_err(|e| format!("tools/list: {e}"))?;
        let tools = result
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| StartError::Other("tools/list: the result has no tools list".into()))?;
        let tool = tools.iter().find(|t| t.get("name").and_then(Value::as_str) == Some(&self.opts.tool));
        let Some(tool) = tool else {
            let names: Vec<&str> = tools.iter().filter_map(|t| t.get("name").and_then(Value::as_str)).collect();
            return Err(StartError::NoTool {
                tool: self.opts.tool.clone(),
                listed: names.into_iter().map(str::to_string).collect(),
            });
        };
        self.tool = Some(tool.clone());
        let props = tool.pointer("/inputSchema/properties");
        let takes = |k: &str| props.and_then(|p| p.get(k)).is_some();
        self.pace_args = self.opts.pace && takes("delay_before_ms") && takes("delay_after_ms");
        self.task_result_arg = self.opts.pace && takes("delay_task_result_ms");
        self.evidence.note(if self.pace_args {
            "the tool takes delay_before_ms and delay_after_ms: held steps are paced by them".to_string()
        } else {
            "the tool takes no delay arguments (or pacing is off): server steps run at their own speed, and their order is checked after the fact".to_string()
        });
        Ok(())
    }
}

/// The host and port an endpoint URL connects to.
fn host_port(url: &str) -> Result<(String, u16), String> {
    let parsed = reqwest::Url::parse(url).map_err(|e| e.to_string())?;
    let host = parsed.host_str().unwrap_or("127.0.0.1").trim_matches(['[', ']']).to_string();
    Ok((host, parsed.port_or_known_default().unwrap_or(80)))
}
