//! Whether a cell's server is one its profile allows. Some servers the model checks break a
//! MUST of their profile by what they are, not by chance: a server that ignores the close of a
//! response stream, where the revision says the server MUST treat it as a cancellation, or
//! instances with stores of their own, where the proposal says the store MUST be visible to
//! every instance. A counterexample of such a server shows what a non-conformant server does;
//! [`conformant_variants`] names the servers of the same kind that keep the MUST, whose
//! counterexample (where they have one) is the one a report shows first.

use crate::action::Action;
use crate::config::{Cancellation, Config, StoreScope, Transport};
use crate::model::McpModel;
use crate::profile::{IdempotencyStore, KnobId, Profile};
use crate::state::{ServerSide, State};

/// A MUST of the profile that a server breaks: the server itself (see [`server_breaches`]),
/// or one step of a trace (see [`breaches`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// The knob whose rule is broken.
    pub knob: KnobId,
    /// What the server (or the step) does against it, in words.
    pub what: String,
}

/// Whether the profile's value of `knob` binds: its text is normative (a changelog's MUST binds
/// nobody).
fn binding(profile: &Profile, knob: KnobId) -> bool {
    profile.knob_table().iter().any(|(k, _, cite, _)| *k == knob && cite.normative)
}

/// Whether the server ignores the close of a response stream that the profile says it MUST
/// treat as a cancellation (Streamable HTTP under 2026-07-28).
fn ignores_required_cancel(config: &Config, profile: &Profile) -> bool {
    config.transport == Transport::Http
        && profile.knobs.http_disconnect_is_cancel.value
        && binding(profile, KnobId::HttpDisconnectIsCancel)
        && config.cancel() == Cancellation::Ignores
}

/// Whether the instances keep stores of their own where the profile says the store MUST be
/// visible to every instance (SEP-3182).
fn own_stores_where_shared_required(config: &Config, profile: &Profile) -> bool {
    config.deployment.instances > 1
        && config.store() == StoreScope::PerInstance
        && config.server.has_store()
        && profile.knobs.idempotency_store.value == IdempotencyStore::Shared
        && binding(profile, KnobId::IdempotencyStore)
}

/// The MUSTs of the profile that the cell's server breaks by what it is, whatever the trace.
pub fn server_breaches(config: &Config, profile: &Profile) -> Vec<Breach> {
    let mut out = Vec::new();
    if ignores_required_cancel(config, profile) {
        out.push(Breach {
            knob: KnobId::HttpDisconnectIsCancel,
            what: "the server ignores the close of a request's response stream, which the profile says it MUST treat as the cancellation of that request (a server that does may still stop the handler before its effect)".into(),
        });
    }
    if own_stores_where_shared_required(config, profile) {
        out.push(Breach {
            knob: KnobId::IdempotencyStore,
            what:
                "each instance keeps a key store of its own, which the profile requires to be visible to every instance"
                    .into(),
        });
    }
    out
}

/// The servers of the same kind as the cell's that keep every MUST it breaks: each breach
/// replaced by the choices that keep it (a server that treats the close as a cancellation
/// stops before its effect, or wherever it is; instances share one store), every other
/// parameter the same. Empty when the server breaks none; only configurations that apply
/// under `profile`.
pub fn conformant_variants(config: &Config, profile: &Profile) -> Vec<Config> {
    let (ignores, own_stores) =
        (ignores_required_cancel(config, profile), own_stores_where_shared_required(config, profile));
    if !ignores && !own_stores {
        return Vec::new();
    }
    let cancels = if ignores {
        vec![Some(Cancellation::BeforeEffect), Some(Cancellation::Interrupts)]
    } else {
        vec![config.cancel]
    };
    let mut deployment = config.deployment;
    if own_stores {
        deployment.store = Some(StoreScope::Shared);
    }
    cancels
        .into_iter()
        .map(|cancel| Config { cancel, deployment, ..config.clone() }.normalised())
        .filter(|c| c.applicable(profile).is_ok())
        .collect()
}

/// The MUSTs of the profile that `action` (taking the model to `after`) shows the server
/// breaking, marked on that step of a trace:
/// - a request read by an instance with its own key store, where the store MUST be visible to
///   every instance;
/// - the close of a response stream (a cancellation, or a stream that breaks) of a request the
///   server has read and not yet taken effect of, under a server that ignores it where it MUST
///   treat it as a cancellation. A close before any instance read the request is not marked:
///   a cancellation never overtakes its request, so no server could act on it there.
///
/// Every other step the model takes is one its profile allows.
pub fn breaches(model: &McpModel, after: &State, action: &Action) -> Vec<Breach> {
    let cfg = &model.config;
    let profile = &model.profile;
    match *action {
        Action::ServerReceive { instance, .. } if own_stores_where_shared_required(cfg, profile) => vec![Breach {
            knob: KnobId::IdempotencyStore,
            what: format!(
                "server instance {instance} reads it with its own key store, which the profile requires to be visible to every instance"
            ),
        }],
        Action::ClientCancel { call, attempt } | Action::StreamBreak { call, attempt }
            if ignores_required_cancel(cfg, profile) =>
        {
            let t = after.attempts[call as usize][attempt as usize];
            let before_effect = matches!(t.server, ServerSide::Pending | ServerSide::Waiting);
            if !before_effect {
                return vec![];
            }
            vec![Breach {
                knob: KnobId::HttpDisconnectIsCancel,
                what: format!(
                    "the server ignores this close of id {}'s response stream, which it MUST treat as the cancellation of that request (the request has not yet taken effect)",
                    t.id
                ),
            }]
        }
        _ => vec![],
    }
}
