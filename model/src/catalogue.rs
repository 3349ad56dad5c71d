//! The built-in configurations: the four scenarios observed on real SDKs, and the default
//! matrix (every profile x transport x client policy x server implementation).

use crate::config::{Bounds, ClientPolicy, Config, KeyLifetime, ServerImpl, Transport};
use crate::profile::{KeySemantics, Profile};

/// A configuration observed to double-execute on the official SDKs, with the count seen.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Short name (`timeout-cancel-retry-stdio`).
    pub name: &'static str,
    /// What was observed.
    pub summary: &'static str,
    /// The configuration.
    pub config: Config,
    /// Side effects observed for one logical call.
    pub observed_effects: u8,
}

fn config(profile: &str, transport: Transport, client: ClientPolicy, server: ServerImpl, bounds: Bounds) -> Config {
    Config { profile: profile.into(), transport, client, key: KeyLifetime::None, server, bounds }
}

/// The four scenarios of the project's problem statement, as model configurations.
pub fn scenarios() -> Vec<Scenario> {
    let one = |retries, crashes| Bounds { calls: 1, retries, crashes };
    vec![
        Scenario {
            name: "timeout-cancel-retry-stdio",
            summary: "stdio: client timeout, notifications/cancelled, then one retry",
            config: config(
                "mcp-2025-11-25",
                Transport::Stdio,
                ClientPolicy::RetryOnTimeout,
                ServerImpl::Plain,
                one(1, 0),
            ),
            observed_effects: 2,
        },
        Scenario {
            name: "kill-restart-retry-stdio",
            summary: "stdio: server SIGKILLed after its write, restarted, call retried (both requests carry id 1)",
            config: config(
                "mcp-2025-11-25",
                Transport::Stdio,
                ClientPolicy::RetryOnDisconnect,
                ServerImpl::Plain,
                one(1, 1),
            ),
            observed_effects: 2,
        },
        Scenario {
            name: "timeout-cancel-retry-http",
            summary: "Streamable HTTP: client timeout, cancellation, then one retry",
            config: config(
                "mcp-2025-11-25",
                Transport::Http,
                ClientPolicy::RetryOnTimeout,
                ServerImpl::Plain,
                one(1, 0),
            ),
            observed_effects: 2,
        },
        Scenario {
            name: "framework-rerun",
            summary: "a LangGraph node with its default RetryPolicy (3 attempts) re-runs the node, and the call",
            config: config(
                "mcp-2025-11-25",
                Transport::Stdio,
                ClientPolicy::FrameworkRetry,
                ServerImpl::Plain,
                one(2, 0),
            ),
            observed_effects: 3,
        },
    ]
}

/// Bounds of the default matrix: two logical calls, one retry (two framework re-runs, so three
/// attempts, as LangGraph's default), one crash.
pub fn matrix_bounds(client: ClientPolicy) -> Bounds {
    let retries = if client == ClientPolicy::FrameworkRetry { 2 } else { 1 };
    Bounds { calls: 2, retries, crashes: 1 }
}

/// Every cell of the default matrix for `profiles`, in a stable order. Cells that do not apply
/// under their profile are included; [`Config::applicable`] says why.
pub fn matrix(profiles: &[Profile]) -> Vec<Config> {
    let mut cells = Vec::new();
    for p in profiles {
        let keyed = p.knobs.idempotency_semantics.value != KeySemantics::None;
        for &transport in Transport::ALL {
            for &client in ClientPolicy::ALL {
                for &server in ServerImpl::ALL {
                    let mut keys = vec![KeyLifetime::None];
                    if keyed && server.uses_keys() {
                        keys = vec![KeyLifetime::PerCall];
                        if client == ClientPolicy::FrameworkRetry {
                            keys.push(KeyLifetime::PerStep);
                        }
                    }
                    for key in keys {
                        cells.push(Config {
                            profile: p.name.clone(),
                            transport,
                            client,
                            key,
                            server,
                            bounds: matrix_bounds(client),
                        });
                    }
                }
            }
        }
    }
    cells
}

/// The built-in profiles, loaded.
pub fn builtin_profiles() -> Vec<Profile> {
    Profile::builtin_names().into_iter().map(|n| Profile::load(n).expect("built-in profiles load")).collect()
}
