//! Whether a cell's server, and each step of its traces, keeps the rules of its profile. Some
//! servers the model checks break a MUST of their profile by what they are, not by chance:
//! instances with stores of their own, where the proposal says the store MUST be visible to
//! every instance. Others only go against a SHOULD: a server that goes on with a request whose
//! response stream was closed, where the revision says it SHOULD stop work on it. A step breaks
//! a MUST only where the text defines the breach: a request read by an instance whose store the
//! others cannot see, a response written after the server read the request's cancellation, a
//! second consumption of one `requestState`. A counterexample of a server that breaks a MUST
//! shows what a non-conformant server does; [`conformant_variants`] names the servers of the
//! same kind that keep the MUST, whose counterexample (where they have one) is the one a report
//! shows first.

use crate::action::Action;
use crate::config::{Cancellation, Config, StoreScope, Transport};
use crate::model::McpModel;
use crate::profile::{CancelledMessages, IdempotencyStore, InputRequired, KnobId, Profile};
use crate::request_state::answered_request;
use crate::state::{ServerSide, State};
use std::fmt;

/// The keyword of the clause a flag rests on, as the text words it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keyword {
    /// **MUST**: a step against it breaks a requirement.
    Must,
    /// **MUST NOT**: a step that does it breaks a requirement.
    MustNot,
    /// **SHOULD**: a step against it does what the text advises against, and breaks nothing.
    Should,
}

impl Keyword {
    /// Whether a step against the clause breaks a requirement (MUST, MUST NOT), not advice.
    pub fn binds(self) -> bool {
        matches!(self, Keyword::Must | Keyword::MustNot)
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Keyword::Must => "MUST",
            Keyword::MustNot => "MUST NOT",
            Keyword::Should => "SHOULD",
        })
    }
}

/// A rule of the profile that a server goes against: the server itself (see
/// [`server_breaches`]), or one step of a trace (see [`breaches`] and [`breaches_at`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breach {
    /// The knob whose clause it goes against.
    pub knob: KnobId,
    /// That clause's own keyword: a MUST (or MUST NOT) broken, or a SHOULD gone against.
    pub keyword: Keyword,
    /// What the server (or the step) does against it, in words.
    pub what: String,
}

impl Breach {
    /// Whether it breaks a requirement (a MUST or MUST NOT), not only advice (a SHOULD).
    pub fn binds(&self) -> bool {
        self.keyword.binds()
    }

    /// How a report heads it: "breaks the MUST NOT of KNOB", or "does what the SHOULD of KNOB
    /// advises against".
    pub fn heading(&self) -> String {
        if self.binds() {
            format!("breaks the {} of {}", self.keyword, self.knob)
        } else {
            format!("does what the {} of {} advises against", self.keyword, self.knob)
        }
    }
}

/// The closing sentence of streamable-http.mdx § Cancellation (2026-07-28), whose SHOULD a
/// server that goes on with a cancelled request goes against.
const STOP_WORK: &str = "\"The server **SHOULD** stop work on the cancelled request as soon as practical\"";

/// Whether the profile's value of `knob` binds: its text is normative (a changelog's MUST binds
/// nobody).
fn binding(profile: &Profile, knob: KnobId) -> bool {
    profile.knob_table().iter().any(|(k, _, cite, _)| *k == knob && cite.normative)
}

/// Whether the server ignores the close of a response stream that the profile says it MUST
/// treat as a cancellation (Streamable HTTP under 2026-07-28): it goes on with the request,
/// which that clause's SHOULD advises against.
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

/// The rules of the profile that the cell's server goes against by what it is, whatever the
/// trace: MUSTs it breaks, and SHOULDs it does not follow.
pub fn server_breaches(config: &Config, profile: &Profile) -> Vec<Breach> {
    let mut out = Vec::new();
    if ignores_required_cancel(config, profile) {
        out.push(Breach {
            knob: KnobId::HttpDisconnectIsCancel,
            keyword: Keyword::Should,
            what: format!(
                "the server goes on with a request whose response stream was closed, which the profile makes the \
                 cancellation of that request; {STOP_WORK} advises against that. It sends nothing more for the \
                 request, so it breaks no MUST"
            ),
        });
    }
    if own_stores_where_shared_required(config, profile) {
        out.push(Breach {
            knob: KnobId::IdempotencyStore,
            keyword: Keyword::Must,
            what:
                "each instance keeps a key store of its own, which the profile requires to be visible to every instance"
                    .into(),
        });
    }
    out
}

/// The servers of the same kind as the cell's that keep every MUST it breaks: instances that
/// share one store, every other parameter the same. Empty when the server breaks none (a SHOULD
/// it does not follow is not a breach); only configurations that apply under `profile`.
pub fn conformant_variants(config: &Config, profile: &Profile) -> Vec<Config> {
    if !own_stores_where_shared_required(config, profile) {
        return Vec::new();
    }
    let mut deployment = config.deployment;
    deployment.store = Some(StoreScope::Shared);
    Some(Config { deployment, ..config.clone() }.normalised())
        .into_iter()
        .filter(|c| c.applicable(profile).is_ok())
        .collect()
}

/// The rules of the profile that `action` (taking the model to `after`) shows the server going
/// against, read from that step alone:
/// - a request read by an instance with its own key store, where the store MUST be visible to
///   every instance (a MUST);
/// - the close of a response stream (a cancellation, or a stream that breaks) of a request the
///   server has read and not yet taken effect of, under a server that ignores it where it MUST
///   treat it as a cancellation. A close before any instance read the request is not marked:
///   a cancellation never overtakes its request, so no server could act on it there. Going on
///   with the request goes against a SHOULD, not a MUST.
///
/// [`breaches_at`] adds the rules a step can break only given the steps before it.
pub fn breaches(model: &McpModel, after: &State, action: &Action) -> Vec<Breach> {
    let cfg = &model.config;
    let profile = &model.profile;
    match *action {
        Action::ServerReceive { instance, .. } if own_stores_where_shared_required(cfg, profile) => vec![Breach {
            knob: KnobId::IdempotencyStore,
            keyword: Keyword::Must,
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
                keyword: Keyword::Should,
                what: format!(
                    "the server goes on with id {}, whose response stream this closes (a cancellation, by the \
                     profile's MUST) before its effect; {STOP_WORK}",
                    t.id
                ),
            }]
        }
        _ => vec![],
    }
}

/// The rules of the profile that step `i` of a path (its `states`, first to last, and the
/// `actions` between them) shows the server going against: those of
/// [`breaches`], and those a step breaks only given the steps before it:
/// - a response written for a request after the server read its cancellation (2026-07-28: the
///   server "**MUST NOT** send any further messages for it"; 2025-11-25: receivers **SHOULD**
///   "Not send a response for the cancelled request"); a response written before the server
///   read it is the race both revisions ask to be handled, and is not marked;
/// - an effect taken on a `requestState` that an earlier effect already consumed (2026-07-28
///   `mrtr.mdx`: "Servers for which a given `requestState` must be consumed at most once (e.g.,
///   one-time redemptions) **MUST** enforce that invariant server-side"; the tool's effect is
///   one that must happen at most once).
pub fn breaches_at(model: &McpModel, states: &[State], actions: &[Action], i: usize) -> Vec<Breach> {
    let (after, action) = (&states[i + 1], actions[i]);
    let mut out = breaches(model, after, &action);
    out.extend(message_after_cancellation(model, &actions[..i], after, action));
    out.extend(second_consumption(model, &actions[..i], after, action));
    out
}

/// The flag of a response to a request whose cancellation the server read in `earlier`.
fn message_after_cancellation(model: &McpModel, earlier: &[Action], after: &State, action: Action) -> Option<Breach> {
    let Action::ServerRespond { call, attempt } = action else { return None };
    if !earlier.contains(&Action::ServerReceiveCancel { call, attempt }) {
        return None;
    }
    let (keyword, rule) = match model.profile.knobs.cancelled_request_messages.value {
        CancelledMessages::Unspecified => return None,
        CancelledMessages::MustNotSend => {
            (Keyword::MustNot, "the server \"**MUST NOT** send any further messages for it\"")
        }
        CancelledMessages::ShouldNotRespond => {
            (Keyword::Should, "receivers **SHOULD** \"Not send a response for the cancelled request\"")
        }
    };
    let id = after.attempts[call as usize][attempt as usize].id;
    Some(Breach {
        knob: KnobId::CancelledRequestMessages,
        keyword,
        what: format!("the server writes a response for id {id} after it read that request's cancellation; {rule}"),
    })
}

/// The MRTR sentence a second consumption of one `requestState` breaks, verbatim.
const SINGLE_USE: &str = "\"Servers for which a given `requestState` must be consumed at most once (e.g., one-time \
                          redemptions) **MUST** enforce that invariant server-side.\"";

/// The flag of an effect taken on a `requestState` whose effect an attempt in `earlier` took.
fn second_consumption(model: &McpModel, earlier: &[Action], after: &State, action: Action) -> Option<Breach> {
    let Action::ServerCommit { call, attempt } = action else { return None };
    if model.profile.knobs.input_required.value == InputRequired::None {
        return None;
    }
    let c = call as usize;
    let carries = |a: u8| answered_request(after, c, a as usize, after.attempts[c][a as usize].round);
    let state = carries(attempt)?;
    let first = earlier.iter().find_map(|x| match *x {
        Action::ServerCommit { call: c2, attempt: a2 } if c2 == call && a2 != attempt && carries(a2) == Some(state) => {
            Some(a2)
        }
        _ => None,
    })?;
    let id = |a: usize| after.attempts[c][a].id;
    Some(Breach {
        knob: KnobId::InputRequired,
        keyword: Keyword::Must,
        what: format!(
            "the server takes the effect of id {} on the requestState of id {}'s input-required answer, which id {} \
             already consumed (the tool's effect must happen at most once); mrtr.mdx: {SINGLE_USE}",
            id(attempt as usize),
            id(state),
            id(first as usize)
        ),
    })
}
