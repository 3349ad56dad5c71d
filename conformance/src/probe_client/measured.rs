//! What `probe-client --records DIR` leaves for a report to name the client by: `client.json`,
//! the client command as given, its `clientInfo` from the handshake it sent, the transport, and
//! the model's names for what it did (`explain --for client --client-record DIR` reads it).

use crate::probe_client::classify::ClientProfile;
use crate::probe_client::runner::ScenarioRun;
use mcp_once_model::{ClientPolicy, KeyLifetime};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// The file's name in the records folder.
pub const CLIENT_FILE: &str = "client.json";

/// A name and a version, as a peer's `clientInfo` gives them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NameVersion {
    /// `name`.
    pub name: String,
    /// `version`.
    pub version: String,
}

/// The client `probe-client` measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeasuredClient {
    /// The client command, as given.
    pub command: String,
    /// The transport it was probed over (`stdio`, `http`).
    pub transport: String,
    /// The `clientInfo` of the first `initialize` it sent (None: it sent none, or no name).
    pub client_info: Option<NameVersion>,
    /// The model's retry policy it was checked as.
    pub policy: ClientPolicy,
    /// The model's key lifetime for it.
    pub key: KeyLifetime,
}

impl MeasuredClient {
    /// The record of a probe of `command` over `transport`: the `clientInfo` from the scenario
    /// runs' records, the model's names from `profile`.
    pub fn of(command: &str, transport: &str, runs: &[ScenarioRun], profile: &ClientProfile) -> MeasuredClient {
        MeasuredClient {
            command: command.into(),
            transport: transport.into(),
            client_info: runs.iter().flat_map(|r| &r.record).find_map(client_info),
            policy: profile.policy.checked_as,
            key: profile.key.name,
        }
    }

    /// Write `dir/client.json`.
    pub fn write(&self, dir: &Path) -> anyhow::Result<()> {
        let path = dir.join(CLIENT_FILE);
        let text = serde_json::to_string_pretty(self)? + "\n";
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("{}: cannot write: {e}", path.display()))
    }

    /// Read `dir/client.json`.
    pub fn read(dir: &Path) -> anyhow::Result<MeasuredClient> {
        let path = dir.join(CLIENT_FILE);
        let text =
            std::fs::read_to_string(&path).map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", path.display()))?;
        serde_json::from_str(&text).map_err(|e| anyhow::anyhow!("{}: not a probe-client record: {e}", path.display()))
    }
}

/// The `clientInfo` of a record line that is an `initialize` request the client sent.
fn client_info(line: &Value) -> Option<NameVersion> {
    if line["kind"] != "frame" || line["dir"] != "in" || line["message"]["method"] != "initialize" {
        return None;
    }
    let info = &line["message"]["params"]["clientInfo"];
    Some(NameVersion { name: info["name"].as_str()?.into(), version: info["version"].as_str()?.into() })
}
