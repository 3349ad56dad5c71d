//! What the model says of a probed client: for each built-in profile, against a `plain` and a
//! `key-durable` server, whether one logical call can run twice (at-most-once), with the length
//! of the shortest trace, at small bounds (one call, the client's retries, one crash).

use crate::cells::builtins;
use mcp_once_conformance::probe_client::ClientProfile;
use mcp_once_model::{shortest_lengths, Bounds, Config, McpModel, PropertyKind, ServerImpl, Transport};
use serde::Serialize;

/// The most states one verdict's search may visit before it is reported unknown.
const MAX_STATES: usize = 2_000_000;

/// The servers a client is checked against.
pub const SERVERS: [ServerImpl; 2] = [ServerImpl::Plain, ServerImpl::KeyDurable];

/// One verdict of the model for the client.
#[derive(Clone, Debug, Serialize)]
pub struct ClientVerdict {
    /// Profile name.
    pub profile: String,
    /// Server behaviour.
    pub server: ServerImpl,
    /// `violated`, `holds`, `unknown` (the search stopped at its cap) or `not-applicable`.
    pub verdict: &'static str,
    /// Steps of the shortest trace to a second effect (violated only).
    pub steps: Option<usize>,
    /// Why it does not apply, or where the search stopped.
    pub note: Option<String>,
    /// The configuration checked (as `mcp-once check` flags).
    pub config: String,
}

impl ClientVerdict {
    /// The verdict in one sentence.
    pub fn sentence(&self) -> String {
        match (self.verdict, self.steps) {
            ("violated", Some(n)) => {
                format!("under {} a {} server can run one call twice ({n} steps)", self.profile, self.server)
            }
            ("holds", _) => format!("under {} a {} server runs one call at most once", self.profile, self.server),
            _ => format!(
                "under {} with a {} server: {} ({})",
                self.profile,
                self.server,
                self.verdict,
                self.note.as_deref().unwrap_or("")
            ),
        }
    }
}

/// The bounds the client is checked at: one call, its observed retries (1 to 2), one crash.
pub fn bounds_for(client: &ClientProfile) -> Bounds {
    Bounds { calls: 1, retries: client.attempts.saturating_sub(1).clamp(1, 2) as u8, crashes: 1 }
}

/// Check the model for `client` on `transport` under every built-in profile.
pub fn verdicts(client: &ClientProfile, transport: Transport) -> Vec<ClientVerdict> {
    let mut out = Vec::new();
    for profile in builtins() {
        for server in SERVERS {
            let config = Config::builder(&profile.name)
                .transport(transport)
                .client(client.policy.checked_as)
                .key(client.key.name)
                .server(server)
                .bounds(bounds_for(client))
                .build();
            let flags = config.to_string();
            let base = ClientVerdict {
                profile: profile.name.clone(),
                server,
                verdict: "not-applicable",
                steps: None,
                note: None,
                config: flags,
            };
            let model = match config.applicable(&profile).and_then(|()| McpModel::new(config, profile.clone())) {
                Ok(m) => m,
                Err(why) => {
                    out.push(ClientVerdict { note: Some(why.to_string()), ..base });
                    continue;
                }
            };
            out.push(match shortest_lengths(&model, &[PropertyKind::AtMostOnce], MAX_STATES) {
                None => ClientVerdict {
                    verdict: "unknown",
                    note: Some(format!("the search passed {MAX_STATES} states")),
                    ..base
                },
                Some(l) => match l.violations[0] {
                    Some(steps) => ClientVerdict { verdict: "violated", steps: Some(steps), ..base },
                    None => ClientVerdict { verdict: "holds", note: Some(format!("{} states", l.states)), ..base },
                },
            });
        }
    }
    out
}
