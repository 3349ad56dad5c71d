//! What the model says of a probed client: for each built-in profile, against a `plain` and a
//! `key-durable` server, whether one logical call can run twice (at-most-once), with the length
//! of the shortest trace, at small bounds (one call, the client's retries, one crash). The
//! client's key counts under a profile only where it travels where that profile puts a key:
//! elsewhere the profile's servers do not see it, and the client is checked with key `none`.

use crate::cells::builtins;
use mcp_once_conformance::probe_client::ClientProfile;
use mcp_once_model::profile::KeyPlacement;
use mcp_once_model::{
    shortest_lengths, Bounds, Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl, Transport,
};
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
    /// The key lifetime checked: the client's, or `none` where the profile's servers would not
    /// see its key.
    pub key: KeyLifetime,
    /// Why the client's key is not the one checked, if it is not.
    pub key_note: Option<String>,
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
        let said = self.said();
        match &self.key_note {
            Some(_) => format!("{said}, the client checked with key none (its key does not reach this server)"),
            None => said,
        }
    }

    fn said(&self) -> String {
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

/// The key the client is checked with under `profile`: its own where it travels where the
/// profile puts a key, else `none`, with the reason.
pub fn key_under(client: &ClientProfile, profile: &Profile) -> (KeyLifetime, Option<String>) {
    let Some(sent) = client.key.placement() else { return (KeyLifetime::None, None) };
    let at = client.key.at.as_deref().unwrap_or("?");
    let wanted = profile.knobs.idempotency_key.value;
    if wanted == KeyPlacement::None {
        let why = format!(
            "{} defines no idempotency key: its servers ignore the key in {at} (checked with key none)",
            profile.name
        );
        return (KeyLifetime::None, Some(why));
    }
    if sent != wanted {
        let place = match wanted {
            KeyPlacement::Params => "params.idempotencyKey",
            KeyPlacement::Meta => "an entry of _meta",
            _ => "a tool argument",
        };
        let why = format!(
            "the key travels in {at}, but under {} a server reads it from {place} and would not see it (checked with key none)",
            profile.name
        );
        return (KeyLifetime::None, Some(why));
    }
    (client.key.name, None)
}

/// Check the model for `client` on `transport` under every built-in profile.
pub fn verdicts(client: &ClientProfile, transport: Transport) -> Vec<ClientVerdict> {
    let mut out = Vec::new();
    for profile in builtins() {
        let (key, key_note) = key_under(client, &profile);
        for server in SERVERS {
            let config = Config::builder(&profile.name)
                .transport(transport)
                .client(client.policy.checked_as)
                .key(key)
                .server(server)
                .bounds(bounds_for(client))
                .build();
            let flags = config.to_string();
            let base = ClientVerdict {
                profile: profile.name.clone(),
                server,
                key,
                key_note: key_note.clone(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_once_conformance::probe_client::{KeyFound, PolicyFound};
    use mcp_once_model::ClientPolicy;

    fn client(at: Option<&str>) -> ClientProfile {
        ClientProfile {
            policy: PolicyFound {
                name: Some(ClientPolicy::RetryOnTimeout),
                checked_as: ClientPolicy::RetryOnTimeout,
                outside: None,
                unobserved: Vec::new(),
            },
            key: KeyFound {
                name: if at.is_some() { KeyLifetime::PerCall } else { KeyLifetime::None },
                note: None,
                at: at.map(String::from),
            },
            attempts: 2,
            cancels_on_timeout: Some(true),
            retry_id: None,
            new_connection: Some(false),
            timeout_ms: Some(1000),
            notes: Vec::new(),
        }
    }

    fn sep_key_durable(client: &ClientProfile) -> ClientVerdict {
        verdicts(client, Transport::Http)
            .into_iter()
            .find(|v| v.profile == "sep-3182" && v.server == ServerImpl::KeyDurable)
            .expect("sep-3182 is built in")
    }

    /// The key counts under SEP-3182 only in `params.idempotencyKey`, under a `_meta` proposal
    /// only in `_meta`; the released revisions define none, so their servers are checked with
    /// key `none` whatever the client sends.
    #[test]
    fn a_key_counts_only_where_the_profile_puts_it() {
        for profile in builtins() {
            let in_params = profile.knobs.idempotency_key.value == KeyPlacement::Params;
            let (key, note) = key_under(&client(Some("params.idempotencyKey")), &profile);
            assert_eq!(
                (key, note.is_none()),
                if in_params { (KeyLifetime::PerCall, true) } else { (KeyLifetime::None, false) },
                "{}",
                profile.name
            );
            let in_meta = profile.knobs.idempotency_key.value == KeyPlacement::Meta;
            let (key, _) = key_under(&client(Some("_meta.idempotencyKey")), &profile);
            assert_eq!(key == KeyLifetime::PerCall, in_meta, "{}", profile.name);
            let (key, note) = key_under(&client(Some("arguments.idempotency_key")), &profile);
            assert_eq!(key, KeyLifetime::None, "{}", profile.name);
            assert!(note.unwrap().contains("arguments.idempotency_key"));
            assert_eq!(key_under(&client(None), &profile), (KeyLifetime::None, None));
        }
        let in_params = sep_key_durable(&client(Some("params.idempotencyKey")));
        assert_eq!((in_params.key, in_params.verdict), (KeyLifetime::PerCall, "holds"), "{in_params:?}");
        let in_arguments = sep_key_durable(&client(Some("arguments.idempotency_key")));
        assert_eq!((in_arguments.key, in_arguments.verdict), (KeyLifetime::None, "violated"), "{in_arguments:?}");
        assert!(in_arguments.sentence().contains("checked with key none"));
    }
}
