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
use crate::callers::{foreign_answers, global_where_per_caller_required, partner};
use crate::config::{
    Cancellation, Config, Deployment, KeyLifetime, KeyScope, ServerImpl, StoreScope, TaskRecords, Tasks, Transport,
};
use crate::model::McpModel;
use crate::profile::{CancelledMessages, IdDedup, IdempotencyStore, InputRequired, KnobId, Profile, TaskCreation};
use crate::request_state::presented_state;
use crate::state::{Failure, ServerSide, State};
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
    /// **SHOULD NOT**: a step that does it does what the text advises against, and breaks nothing.
    ShouldNot,
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
            Keyword::ShouldNot => "SHOULD NOT",
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

    /// Who goes against the rule: `client` for a rule on what a client sends (a retry after a
    /// timeout), else `server`.
    pub fn party(&self) -> &'static str {
        match self.knob {
            KnobId::RetryAfterTimeout => "client",
            _ => "server",
        }
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
/// which that clause's SHOULD advises against. Not for a task-augmented request, whose task is
/// no longer the request's (`tasks.rs`).
fn ignores_required_cancel(config: &Config, profile: &Profile) -> bool {
    config.tasks == Tasks::None
        && config.transport == Transport::Http
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
    out.extend(server_misses_id_dedup(config, profile));
    out.extend(volatile_task_records(config, profile));
    if global_where_per_caller_required(config, profile) && binding(profile, KnobId::IdempotencyKeyScope) {
        out.push(Breach {
            knob: KnobId::IdempotencyKeyScope,
            keyword: Keyword::Must,
            what: "the server keeps one key record for every caller, which the profile requires scoped to the caller \
                   that sent its request"
                .into(),
        });
    }
    out
}

/// The rules of the profile the cell's server or client goes against by what it is: those of
/// [`server_breaches`], and a client rule a framework re-run goes against
/// (`retry_after_timeout`). This is what reports mark a cell with.
pub fn cell_breaches(config: &Config, profile: &Profile) -> Vec<Breach> {
    let mut out = server_breaches(config, profile);
    out.extend(client_retries_where_barred(config, profile));
    out
}

/// The servers of the same kind as the cell's that keep every MUST it breaks: instances that
/// share one store, every other parameter the same. Empty when the server breaks none (a SHOULD
/// it does not follow is not a breach); only configurations that apply under `profile`.
pub fn conformant_variants(config: &Config, profile: &Profile) -> Vec<Config> {
    if server_misses_id_dedup(config, profile).is_some_and(|b| b.binds()) {
        return id_dedup_variants(config, profile);
    }
    if global_where_per_caller_required(config, profile) {
        return vec![Config { key_scope: Some(KeyScope::PerCaller), ..config.clone() }];
    }
    if volatile_task_records(config, profile).is_some() {
        let durable = Config { task_records: TaskRecords::Durable, ..config.clone() };
        return vec![durable];
    }
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
    if let Some(b) = task_breach(model, after, action) {
        return vec![b];
    }
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
    out.extend(step_breaches(model, states, actions, i));
    out.extend(foreign_replay(model, &states[i], after));
    out
}

/// SEP-3182's sentence on the scope of key records, verbatim (§ Security Implications).
const KEY_SCOPE: &str = "\"Servers MUST scope their idempotency records to whatever authorization boundary already \
                         governs access to the underlying tool call — an OAuth-authenticated session, a stdio \
                         process's local user, a workspace or team boundary ... so that a key is only ever matched \
                         against a prior request from the same authorized caller.\"";

/// The flag of each answer the step from `before` to `after` takes from another caller's
/// record, under a profile that requires records scoped per caller.
fn foreign_replay(model: &McpModel, before: &State, after: &State) -> Vec<Breach> {
    if !global_where_per_caller_required(&model.config, &model.profile)
        || !binding(&model.profile, KnobId::IdempotencyKeyScope)
    {
        return Vec::new();
    }
    foreign_answers(before, after)
        .into_iter()
        .map(|(c, a)| {
            let (caller, other) = (model.caller(c), model.caller(partner(c)));
            Breach {
                knob: KnobId::IdempotencyKeyScope,
                keyword: Keyword::Must,
                what: format!(
                    "the server answers id {} (caller {caller}'s call {c}) with the result it stored for caller \
                     {other}'s request with the same key: caller {caller}'s tool never ran; SEP-3182: {KEY_SCOPE}",
                    after.attempts[c][a].id
                ),
            }
        })
        .collect()
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
    let keys = model.config.server.uses_keys();
    let carries = |a: u8| presented_state(after, c, a as usize, after.attempts[c][a as usize].round, keys);
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

// The two rules a profile author writes most often, on a server (`request_id_dedup`) and on a
// client (`retry_after_timeout`): the cells and the steps that go against them.

/// The keyword of the profile's rule on deduplicating by request id, and whether it asks for
/// an id table that outlives a crash; `None` where the profile asks nothing (or its text binds
/// nobody).
fn id_dedup_rule(profile: &Profile) -> Option<(Keyword, bool)> {
    let rule = match profile.knobs.request_id_dedup.value {
        IdDedup::Unspecified => return None,
        IdDedup::MustSession => (Keyword::Must, false),
        IdDedup::MustDurable => (Keyword::Must, true),
        IdDedup::ShouldSession => (Keyword::Should, false),
        IdDedup::ShouldDurable => (Keyword::Should, true),
    };
    binding(profile, KnobId::RequestIdDedup).then_some(rule)
}

/// The flag of a server that does not deduplicate `tools/call` by request id as the profile
/// asks: no id table, one that a crash forgets where the profile asks for a durable one, or one
/// per instance (a repeated id that reaches the other instance runs again).
fn server_misses_id_dedup(config: &Config, profile: &Profile) -> Option<Breach> {
    let (keyword, durable) = id_dedup_rule(profile)?;
    let scope = if durable { "durably, across a crash" } else { "within the session" };
    let server = config.server;
    let what = if !server.uses_ids() {
        format!("the server (`{server}`: {}) does not deduplicate `tools/call` by request id, which the profile asks of it {scope}", server.store())
    } else if durable && server != ServerImpl::DedupByIdDurable {
        format!("the server keeps its id table in memory, so a crash forgets the ids the profile asks it to deduplicate {scope}")
    } else if config.deployment.instances > 1 && config.store() == StoreScope::PerInstance {
        format!("each instance keeps an id table of its own, so a repeated id that reaches the other instance runs again; the profile asks for deduplication by request id {scope}")
    } else {
        return None;
    };
    Some(Breach { knob: KnobId::RequestIdDedup, keyword, what })
}

/// The servers that keep the profile's MUST on deduplicating by request id, every other
/// parameter of the cell the same (a durable id table where it asks for one; an id table in
/// memory too where a session is enough), where they apply and break no other MUST.
fn id_dedup_variants(config: &Config, profile: &Profile) -> Vec<Config> {
    [ServerImpl::DedupById, ServerImpl::DedupByIdDurable]
        .into_iter()
        .map(|server| {
            let deployment = Deployment { store: None, ..config.deployment };
            Config { server, key: KeyLifetime::None, deployment, ..config.clone() }.normalised()
        })
        .filter(|c| c.applicable(profile).is_ok())
        .filter(|c| server_breaches(c, profile).iter().all(|b| !b.binds()))
        .collect()
}

/// The flag of a cell whose client sends `tools/call` again after a timeout where the profile's
/// retry rule bars it for this tool's annotations. The model's client policies honour the rule
/// (their own retries after a timeout are not taken); a framework that re-runs the step around
/// the call reads no annotations, and re-runs it after a timeout all the same.
fn client_retries_where_barred(config: &Config, profile: &Profile) -> Option<Breach> {
    let rule = profile.knobs.retry_after_timeout.value;
    if !rule.bars(config.annotation) || !config.client.reruns_the_step() || !binding(profile, KnobId::RetryAfterTimeout)
    {
        return None;
    }
    let keyword = if rule.binds() { Keyword::MustNot } else { Keyword::ShouldNot };
    Some(Breach {
        knob: KnobId::RetryAfterTimeout,
        keyword,
        what: format!(
            "the framework around the client re-runs the step after a timeout, sending `tools/call` again for a tool \
             annotated `{}`, which the profile's rule (`{rule}`) does not let a client retry",
            config.annotation
        ),
    })
}

/// The flags of step `i` of a path against the two written rules:
/// - an effect the server takes for a request whose id an earlier request of the same call
///   carried and whose effect the server took already, within the rule's scope (the same
///   session: no moment in between with every instance down; durable: any time);
/// - a framework re-run after a timeout the profile's retry rule bars for this tool.
fn step_breaches(model: &McpModel, states: &[State], actions: &[Action], i: usize) -> Vec<Breach> {
    let mut out = Vec::new();
    let after = &states[i + 1];
    match actions[i] {
        Action::ServerCommit { call, attempt } => {
            let Some((keyword, durable)) = id_dedup_rule(&model.profile) else { return out };
            let c = call as usize;
            let id = after.attempts[c][attempt as usize].id;
            let earlier = (0..i).rev().find(|&j| {
                matches!(actions[j], Action::ServerCommit { call: c2, attempt: a2 }
                    if c2 == call && a2 != attempt && after.attempts[c][a2 as usize].id == id)
            });
            let Some(j) = earlier else { return out };
            let same_session = states[j + 1..=i].iter().all(|s| s.server.any_up());
            if durable || same_session {
                let scope = if durable { "durably" } else { "within the session" };
                out.push(Breach {
                    knob: KnobId::RequestIdDedup,
                    keyword,
                    what: format!(
                        "the server runs id {id} again, a request id whose effect it already took {scope}, where the \
                         profile asks it to deduplicate `tools/call` by request id"
                    ),
                });
            }
        }
        Action::FrameworkRetry { call, .. } if states[i].calls[call as usize].failure == Failure::Timeout => {
            if let Some(mut b) = client_retries_where_barred(&model.config, &model.profile) {
                b.what = format!(
                    "the framework re-runs the call after its timeout, for a tool annotated `{}`, where the profile's \
                     retry rule (`{}`) bars a retry",
                    model.config.annotation, model.profile.knobs.retry_after_timeout.value
                );
                out.push(b);
            }
        }
        _ => {}
    }
    out
}

/// The rule a step breaks under tasks: a `CreateTaskResult` returned for a task whose record is
/// in memory only, under a profile that requires it durable first (SEP-2663's MUST NOT).
fn task_breach(model: &McpModel, after: &State, action: &Action) -> Option<Breach> {
    let Action::ServerReceive { call, attempt, .. } = *action else { return None };
    let t = after.attempts[call as usize][attempt as usize];
    let created = model.config.tasks == Tasks::Augmented && t.server == ServerSide::Pending;
    let required = model.profile.knobs.task_creation.value == TaskCreation::DurableBeforeResult;
    if !(created && required && model.config.task_records == TaskRecords::Volatile) {
        return None;
    }
    Some(Breach {
        knob: KnobId::TaskCreation,
        keyword: Keyword::MustNot,
        what: format!(
            "the server returns the CreateTaskResult of task t{call}.{attempt} (id {}) while the task's record \
             is in memory only: a tasks/get after a crash would not resolve",
            t.id
        ),
    })
}

/// The rule the cell's server breaks by what it is: task records in memory only, under a
/// profile that requires them durable before the `CreateTaskResult`.
fn volatile_task_records(config: &Config, profile: &Profile) -> Option<Breach> {
    let breaks = config.tasks == Tasks::Augmented
        && config.task_records == TaskRecords::Volatile
        && profile.knobs.task_creation.value == TaskCreation::DurableBeforeResult;
    breaks.then(|| Breach {
        knob: KnobId::TaskCreation,
        keyword: Keyword::MustNot,
        what: "the server returns a CreateTaskResult for a task whose record is in memory only, which the profile \
               requires to be durably created first"
            .into(),
    })
}
