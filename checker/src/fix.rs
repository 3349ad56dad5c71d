//! The suggested fix of an issue report: the configurations, near the one a trace violates,
//! under which the model proves the property holds. Which parameters may change depends on
//! whose issue it is: the server's implementation, the client's retry policy, or the spec
//! (another profile, whose idempotency key the client sends and a server keeps).

use crate::cells::{builtins, run_cells, threads};
use anyhow::Result;
use clap::ValueEnum;
use mcp_once_model::{Budget, ClientPolicy, Config, KeyLifetime, Options, Profile, PropertyKind, ServerImpl, Verdict};
use std::sync::Arc;

/// Whose issue a report is: what its title and suggested fix address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Audience {
    /// The server's SDK or implementation.
    Server,
    /// The client's or framework's retry policy.
    Client,
    /// The specification: a missing dedup key or delivery guarantee.
    Spec,
}

impl Audience {
    /// Its name, as `--for` takes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Audience::Server => "server",
            Audience::Client => "client",
            Audience::Spec => "spec",
        }
    }
}

/// The search behind a suggested fix: what was tried, and what holds.
pub struct Fix {
    /// Configurations checked.
    pub tried: usize,
    /// Those under which the property holds (exhaustive search), nearest first.
    pub holds: Vec<Config>,
}

/// Server behaviours in the order a fix prefers them: a durable record first (it survives a
/// crash), the server as it is last.
const SERVERS: [ServerImpl; 9] = [
    ServerImpl::KeyDurable,
    ServerImpl::ValidatesTaskId,
    ServerImpl::DedupByIdDurable,
    ServerImpl::HonoursCancel,
    ServerImpl::DedupById,
    ServerImpl::KeyExpiring,
    ServerImpl::KeyAfterEffect,
    ServerImpl::KeyVolatile,
    ServerImpl::Plain,
];

/// At most this many searches per report: each is one exhaustive check of a small cell.
const MAX_CANDIDATES: usize = 24;

/// States a candidate's search may visit before it counts as undecided (not a fix).
const MAX_STATES: usize = 2_000_000;

/// The configurations a fix for `audience` may move to from `cfg`, nearest first: one
/// parameter changed where one suffices, the idempotency key added where the profile has one.
fn candidates(cfg: &Config, audience: Audience, profiles: &[Profile]) -> Vec<(Config, Arc<Profile>)> {
    let shared: Vec<Arc<Profile>> = profiles.iter().cloned().map(Arc::new).collect();
    let here = shared.iter().find(|p| p.name == cfg.profile);
    let keys = [cfg.key, KeyLifetime::PerCall];
    let mut out: Vec<(Config, Arc<Profile>)> = Vec::new();
    let mut push = |c: Config, p: &Arc<Profile>| {
        if c != *cfg && c.applicable(p).is_ok() && !out.iter().any(|(o, _)| *o == c) {
            out.push((c, Arc::clone(p)));
        }
    };
    match audience {
        Audience::Server => {
            if let Some(p) = here {
                for key in keys {
                    for server in SERVERS {
                        push(Config { key, server, ..cfg.clone() }, p);
                    }
                }
            }
        }
        Audience::Client => {
            if let Some(p) = here {
                for key in keys {
                    for &client in ClientPolicy::ALL {
                        push(Config { key, client, ..cfg.clone() }, p);
                    }
                }
            }
        }
        Audience::Spec => {}
    }
    // Another profile: the key a proposal defines, kept by a server as it says.
    for p in shared.iter().filter(|p| p.name != cfg.profile) {
        for server in SERVERS.into_iter().filter(|s| s.uses_keys()) {
            push(Config { profile: p.name.clone(), key: KeyLifetime::PerCall, server, ..cfg.clone() }, p);
        }
    }
    out.truncate(MAX_CANDIDATES);
    out
}

/// Check the candidates for `audience` near `cfg` for `property` under `budget` and keep those
/// where it holds. Without a state limit and a spill folder in `budget`, each search stops at
/// [`MAX_STATES`]; with a spill folder it may go on on disk until the disk budget.
pub fn search(cfg: &Config, property: PropertyKind, audience: Audience, budget: Budget) -> Result<Fix> {
    let profiles = builtins();
    let configs = candidates(cfg, audience, &profiles);
    let tried = configs.len();
    let order: Vec<Config> = configs.iter().map(|(c, _)| c.clone()).collect();
    let max_states = budget.max_states.or(if budget.spill_dir.is_some() { None } else { Some(MAX_STATES) });
    let budget = Budget { max_states, ..budget };
    let options = Options { worst: false, budget };
    let cells = run_cells(configs, &[property], options, None, threads(), &|| {})?;
    let holds = order
        .into_iter()
        .filter(|c| {
            cells.iter().any(|cell| {
                cell.config == *c
                    && matches!(&cell.outcome, Ok(k) if k.results.iter().all(|r| r.verdict == Verdict::Holds))
            })
        })
        .collect();
    Ok(Fix { tried, holds })
}
