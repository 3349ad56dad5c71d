//! The suggested fix of an issue report: the configurations, near the one a trace violates,
//! under which the model proves the property holds. Which parameters may change depends on
//! whose issue it is: the server's implementation, the client's retry policy, or the spec
//! (another profile, whose idempotency key the client sends and a server keeps).

use crate::cells::{builtins, run_cells};
use anyhow::Result;
use clap::ValueEnum;
use mcp_once_model::config::Bounds;
use mcp_once_model::profile::ProfileKind;
use mcp_once_model::{
    Budget, ClientPolicy, Config, KeyLifetime, KeyScope, Options, Profile, PropertyKind, ServerImpl, Verdict,
};
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

/// The search behind a suggested fix: what was tried, at which bounds, and what holds.
pub struct Fix {
    /// Configurations checked.
    pub tried: usize,
    /// The bounds every candidate was checked at: the trace's, raised to [`LEAST_BOUNDS`].
    pub bounds: Bounds,
    /// Those under which the property holds (exhaustive search), nearest first, each with the
    /// proposal it needs (none when it stays within the trace's own profile or a revision).
    pub holds: Vec<(Config, Option<Needs>)>,
}

/// A proposal a fix depends on: not part of any released revision.
#[derive(Clone, Debug)]
pub struct Needs {
    /// The proposal's profile name.
    pub name: String,
    /// Its title.
    pub title: String,
    /// Where its text lives, if the profile says.
    pub source: Option<String>,
}

/// The least bounds a fix is checked at: two calls, two retries each and one crash. A fix that
/// holds only within a trace's own small bounds (no crash, one retry) may fail the first time a
/// server restarts or a client retries twice, so none is suggested on that evidence alone.
pub const LEAST_BOUNDS: Bounds = Bounds { calls: 2, retries: 2, crashes: 1 };

/// The bounds a fix for a trace at `trace` is checked at: each of the trace's, raised to
/// [`LEAST_BOUNDS`]'s where it is smaller.
pub fn fix_bounds(trace: Bounds) -> Bounds {
    Bounds {
        calls: trace.calls.max(LEAST_BOUNDS.calls),
        retries: trace.retries.max(LEAST_BOUNDS.retries),
        crashes: trace.crashes.max(LEAST_BOUNDS.crashes),
    }
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

/// The configurations a fix for `audience` may move to from `cfg` (its bounds already those
/// the fix is checked at), nearest first: one parameter changed where one suffices, the
/// idempotency key added where the profile has one.
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
                // Two callers: the nearest server change is records scoped per caller.
                if cfg.callers > 1 {
                    push(Config { key_scope: Some(KeyScope::PerCaller), ..cfg.clone() }, p);
                }
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

/// Check the candidates for `audience` near `cfg` for `property` under `budget`, at
/// [`fix_bounds`] of `cfg`'s, and keep those where it holds. Without a state limit and a spill
/// folder in `budget`, each search stops at [`MAX_STATES`] (a search stopped there is no
/// fix); with a spill folder it may go on on disk until the disk budget.
/// The candidates are searched `threads` at a time.
pub fn search(cfg: &Config, property: PropertyKind, audience: Audience, budget: Budget, threads: usize) -> Result<Fix> {
    let profiles = builtins();
    let bounds = fix_bounds(cfg.bounds);
    let at_bounds = Config { bounds, ..cfg.clone() };
    let configs = candidates(&at_bounds, audience, &profiles);
    let tried = configs.len();
    let needs = |c: &Config| {
        profiles.iter().find(|p| p.name == c.profile && p.kind == ProfileKind::Proposal).map(|p| Needs {
            name: p.name.clone(),
            title: p.title.clone(),
            source: p.source.clone(),
        })
    };
    let order: Vec<Config> = configs.iter().map(|(c, _)| c.clone()).collect();
    let max_states = budget.max_states.or(if budget.spill_dir.is_some() { None } else { Some(MAX_STATES) });
    let budget = Budget { max_states, ..budget };
    let options = Options { worst: false, budget, threads: 1 };
    let cells = run_cells(configs, &[property], options, None, threads, &|| {})?;
    let holds = order
        .into_iter()
        .filter(|c| {
            cells.iter().any(|cell| {
                cell.config == *c
                    && matches!(&cell.outcome, Ok(k) if k.results.iter().all(|r| r.verdict == Verdict::Holds))
            })
        })
        .map(|c| {
            let needs = needs(&c);
            (c, needs)
        })
        .collect();
    Ok(Fix { tried, bounds, holds })
}
