//! Which profile knob allows each step, and what the step means in plain words. This is how a
//! counterexample carries its citations: every step names the knobs behind it, and every knob
//! names its clause.

use crate::action::Action;
use crate::config::{ServerImpl, Transport};
pub use crate::conformance::{breaches, breaches_at, Breach, Keyword};
use crate::model::McpModel;
use crate::profile::{Citation, KnobId, RetryHorizon, Revision};
use crate::state::{ClientSide, ServerSide, State};

/// The knobs whose values allow `action` under this model's configuration, taking the model
/// to `after`.
pub fn knobs_for(model: &McpModel, after: &State, action: &Action) -> Vec<KnobId> {
    let mut knobs = step_knobs(model, after, action);
    knobs.extend(crate::task_steps::knobs(model, after, action));
    // With several instances, which instance reads a request is the load balancer's choice,
    // which the profile allows; where each has its own store, the profile's store rule (a MUST
    // of SEP-3182) is what that server breaks.
    let cfg = &model.config;
    if cfg.deployment.instances > 1 && matches!(action, Action::ServerReceive { .. }) {
        knobs.push(KnobId::ServerInstances);
        let own_store = cfg.store() == crate::config::StoreScope::PerInstance && cfg.server.has_store();
        if own_store && model.profile.knobs.idempotency_store.value != crate::profile::IdempotencyStore::None {
            knobs.push(KnobId::IdempotencyStore);
        }
    }
    // A retry or re-run that carries a key: the client half of a key proposal allows it.
    let reuse = model.profile.knobs.idempotency_key_reuse.value;
    if cfg.key != crate::config::KeyLifetime::None
        && reuse != crate::profile::KeyReuse::Unspecified
        && matches!(action, Action::ClientRetry { .. } | Action::FrameworkRetry { .. })
    {
        knobs.push(KnobId::IdempotencyKeyReuse);
    }
    // The rules a profile writes on request ids and on retries after a timeout, where set.
    let k = &model.profile.knobs;
    let after_timeout =
        |call: u8, attempt: u8| retry_cause(model, after, call, attempt) == [KnobId::TimeoutSendsCancel];
    match *action {
        Action::ClientRetry { call, attempt } | Action::FrameworkRetry { call, attempt }
            if k.retry_after_timeout.value.restricts() && after_timeout(call, attempt) =>
        {
            knobs.push(KnobId::RetryAfterTimeout)
        }
        Action::ServerReceive { .. } if k.request_id_dedup.value != crate::profile::IdDedup::Unspecified => {
            knobs.push(KnobId::RequestIdDedup)
        }
        _ => {}
    }
    // Two callers: which records a request is read against is the records' scope.
    if let Action::ServerReceive { call, attempt, .. } = *action {
        if after.attempts[call as usize][attempt as usize].foreign {
            knobs.push(KnobId::IdempotencyKeyScope);
        }
    }
    knobs
}

/// The knobs behind `action` on one instance.
fn step_knobs(model: &McpModel, after: &State, action: &Action) -> Vec<KnobId> {
    use KnobId as K;
    let http = model.config.transport == Transport::Http;
    let server = model.config.server;
    // Whether the profile says anything about continuations and keys (else only MRTR is cited).
    let scoped = model.profile.knobs.idempotency_continuations.value != crate::profile::Continuations::None;
    match action {
        Action::ClientCall { .. } => vec![K::RequestIdScope],
        Action::ClientTimeout { .. } => vec![K::TimeoutSendsCancel],
        Action::ClientCancel { .. } => vec![if http { K::HttpCancel } else { K::StdioCancel }],
        Action::ClientReceive { .. } => vec![],
        // A request answered 404 under an ended session fails like one whose connection closed.
        Action::ClientSeesDisconnect { .. } if http && after.server.session_ends > 0 && after.server.crashes == 0 => {
            vec![K::SessionTermination]
        }
        Action::ClientSeesDisconnect { .. } if http && after.server.session_ends > 0 => {
            vec![K::SseResumability, K::SessionTermination]
        }
        Action::ClientSeesDisconnect { .. } => vec![if http { K::SseResumability } else { K::StdioRestart }],
        Action::ClientQueryOutcome { .. } => vec![K::IdempotencySemantics],
        Action::ClientRetry { call, attempt } => {
            [retry_cause(model, after, *call, *attempt), vec![K::RetryRequestId, K::RequestIdScope]].concat()
        }
        Action::StepFails { .. } => vec![],
        Action::FrameworkRetry { call, attempt } => {
            [retry_cause(model, after, *call, *attempt), vec![K::RequestIdScope]].concat()
        }
        Action::StreamBreak { .. } => vec![K::SseResumability, K::HttpDisconnectIsCancel],
        Action::ServerReceive { call, attempt, .. } if after.attempts[*call as usize][*attempt as usize].round > 0 => {
            if server.uses_keys() && scoped {
                vec![K::InputRequired, K::IdempotencyContinuations]
            } else {
                vec![K::InputRequired]
            }
        }
        // The validating receiver: every request with a task id reads its record (SEP-1686
        // §4.2.3), and rejects the id where one exists.
        Action::ServerReceive { .. } if server.validates_ids() => {
            vec![K::IdempotencyKey, K::IdempotencySemantics, K::TaskIdValidation]
        }
        Action::ServerReceive { .. } if server.uses_keys() => {
            vec![K::IdempotencyKey, K::IdempotencySemantics, K::IdempotencyInProgress]
        }
        Action::ServerReceive { .. } if server.uses_ids() => vec![K::RequestIdScope],
        Action::ServerReceive { .. } => vec![],
        // On HTTP the cancellation a server reads may be a closed stream: the knob saying that
        // a disconnect is a cancellation allows the step too (2026-07-28: it MUST be one).
        Action::ServerReceiveCancel { .. } if http && model.profile.knobs.http_disconnect_is_cancel.value => {
            vec![K::HttpCancel, K::HttpDisconnectIsCancel]
        }
        Action::ServerReceiveCancel { .. } if http => vec![K::HttpCancel],
        Action::ServerReceiveCancel { .. } => vec![K::StdioCancel],
        Action::ServerCommit { .. } if server == ServerImpl::KeyAfterEffect => vec![K::IdempotencyCrashWindow],
        Action::ServerCommit { .. } => vec![],
        Action::ServerStoreKey { .. } => vec![K::IdempotencyCrashWindow],
        // The single-use handler refuses a consumed requestState (mrtr.mdx, quoted in the note
        // of input_required).
        Action::ServerRespond { call, attempt }
            if after.attempts[*call as usize][*attempt as usize].server == ServerSide::RespondedError =>
        {
            vec![K::InputRequired]
        }
        Action::ServerRespond { .. } => vec![],
        Action::ServerCrash { .. } => vec![],
        Action::ServerRestart { .. } => vec![K::StdioRestart],
        Action::KeyExpires { .. } if model.profile.knobs.retry_horizon.value != RetryHorizon::Unbounded => {
            vec![K::IdempotencyRetention, K::RetryHorizon]
        }
        Action::KeyExpires { .. } => vec![K::IdempotencyRetention],
        Action::ClientContinue { .. } if model.config.key != crate::config::KeyLifetime::None && scoped => {
            vec![K::InputRequired, K::IdempotencyContinuations]
        }
        Action::ClientContinue { .. } => vec![K::InputRequired],
        Action::SessionTerminated {} => vec![K::SessionTermination, K::RequestIdScope],
    }
}

/// The knob whose clause speaks of how the attempt before `(call, attempt)` ended, which the
/// retry (or re-run) follows: a timeout (the sender stops waiting, and cancels), a request lost
/// over HTTP with its response stream, or one lost on stdio with its server process. Nothing
/// for an attempt that was answered (an error reply, or a success the step then failed after).
fn retry_cause(model: &McpModel, after: &State, call: u8, attempt: u8) -> Vec<KnobId> {
    let Some(before) = (attempt as usize).checked_sub(1) else { return vec![] };
    match after.attempts[call as usize][before].client {
        ClientSide::Abandoned => vec![KnobId::TimeoutSendsCancel],
        ClientSide::Broken if model.config.transport == Transport::Http => vec![KnobId::ReissueLostRequest],
        ClientSide::Broken => vec![KnobId::StdioRestart],
        _ => vec![],
    }
}

/// The citations behind `action` (taking the model to `after`), as (knob, value, citation).
pub fn citations<'m>(model: &'m McpModel, after: &State, action: &Action) -> Vec<(KnobId, String, &'m Citation)> {
    let table = model.profile.knob_table();
    knobs_for(model, after, action)
        .into_iter()
        .filter_map(|k| table.iter().find(|(n, ..)| *n == k).map(|(n, v, c, _)| (*n, v.clone(), *c)))
        .collect()
}

/// One sentence saying what `action` did, taking `before` to `after`, and what it did to the
/// duplicates waiting on a key (`idempotency_in_progress = wait`): they are answered in the step
/// that ends the request they wait on.
pub fn describe(model: &McpModel, before: &State, action: &Action, after: &State) -> String {
    let task_step = crate::task_steps::describe(model, before, action, after);
    let mut out = task_step.unwrap_or_else(|| describe_step(model, before, action, after));
    for (c, attempts) in after.attempts.iter().enumerate() {
        for (a, t) in attempts.iter().enumerate() {
            let woken = match (before.attempts[c][a].server, t.server) {
                (ServerSide::Waiting, ServerSide::RespondedReplay) => "replays the stored result",
                (ServerSide::Waiting, ServerSide::RespondedReplayInput) => "replays the stored input-required answer",
                (ServerSide::Waiting, ServerSide::Pending) => {
                    "starts the tool (the request it waited on left no record)"
                }
                _ => continue,
            };
            out.push_str(&format!("; id {}, which waited on the same key, now {woken}", t.id));
        }
    }
    for (c, a) in crate::callers::foreign_answers(before, after) {
        let other = crate::callers::partner(c);
        out.push_str(&format!(
            "; the result id {} is answered with is caller {}'s (stored for call {other}'s request with the same key): caller {}'s tool never ran for it",
            after.attempts[c][a].id,
            model.caller(other),
            model.caller(c)
        ));
    }
    out
}

fn describe_step(model: &McpModel, before: &State, action: &Action, after: &State) -> String {
    let http = model.config.transport == Transport::Http;
    let id = |c: u8, a: u8| after.attempts[c as usize][a as usize].id;
    let key = |c: u8, a: u8| match after.attempts[c as usize][a as usize].key {
        0 => String::new(),
        // Two callers: caller 1's call presents the key of caller 0's call before it.
        k if model.caller(c as usize) == 1 => {
            format!(", idempotency key k{}.{} (caller 1 presents the key of caller 0's call {})", c - 1, k - 1, c - 1)
        }
        k => format!(", idempotency key k{c}.{}", k - 1),
    };
    match *action {
        Action::ClientCall { call } => {
            format!("client sends tools/call for logical call {call} (JSON-RPC id {}{})", id(call, 0), key(call, 0))
        }
        Action::ClientTimeout { call, attempt } => {
            format!("client times out waiting for id {} and stops waiting", id(call, attempt))
        }
        Action::ClientCancel { call, attempt } => {
            let how = if http && model.profile.knobs.http_cancel.value == crate::profile::HttpCancel::CloseStream {
                "closes the response stream of"
            } else {
                "sends notifications/cancelled for"
            };
            format!("client {how} id {}", id(call, attempt))
        }
        Action::ClientReceive { call, attempt } => {
            let t = after.attempts[call as usize][attempt as usize];
            let what = match t.server {
                ServerSide::RespondedReplay if model.config.handler.asks_input(t.round) => {
                    "the replayed final result stored for this id (its own round would ask for input)".into()
                }
                ServerSide::RespondedReplay if model.config.server.uses_ids() => {
                    match crate::session::id_owner(model, after, call, attempt) {
                        Some(owner) if owner != call => format!(
                            "the replayed result stored for id {} by logical call {owner}'s request (another call's result)",
                            t.id
                        ),
                        _ => "the replayed result of an earlier request".to_string(),
                    }
                }
                ServerSide::RespondedReplay if t.foreign => format!(
                    "the result stored for caller {}'s request with the same key (another caller's result)",
                    model.caller(crate::callers::partner(call as usize))
                ),
                ServerSide::RespondedReplay => "the replayed result of an earlier request".to_string(),
                ServerSide::RespondedError if model.config.server.validates_ids() => {
                    "an error (-32602: the task id already exists)".into()
                }
                ServerSide::RespondedError => "an error (duplicate in progress)".into(),
                ServerSide::RespondedInput => "an input-required result (MRTR)".into(),
                ServerSide::RespondedReplayInput if model.config.server.uses_keys() => {
                    "the replayed input-required answer stored with its key".into()
                }
                ServerSide::RespondedReplayInput => format!(
                    "the replayed input-required answer stored for id {} (the input request of round {})",
                    t.id, t.replayed_round
                ),
                _ => "a success result".into(),
            };
            format!(
                "client receives {what} for id {}; logical call {call} is now {:?}",
                id(call, attempt),
                after.calls[call as usize].phase
            )
        }
        Action::ClientSeesDisconnect { call, attempt } if http && after.server.session_ends > 0 => {
            let how = if after.server.crashes == 0 {
                "is answered HTTP 404 (its session was ended before the server read it)"
            } else {
                "fails: answered HTTP 404 under the ended session, or its connection closed with the process"
            };
            format!("client's request id {} {how}; it fails with a transport error", id(call, attempt))
        }
        Action::ClientSeesDisconnect { call, attempt } => {
            format!("client sees the connection close; id {} fails with a transport error", id(call, attempt))
        }
        Action::ClientQueryOutcome { call } => {
            let answer =
                if after.calls[call as usize].queried { "unknown" } else { "completed, with its stored result" };
            format!("client asks the server for the outcome of logical call {call}: {answer}")
        }
        Action::ClientRetry { call, attempt } => format!(
            "client retries logical call {call} as attempt {attempt} (JSON-RPC id {}{})",
            id(call, attempt),
            key(call, attempt)
        ),
        Action::StepFails { call } => {
            format!("the step around logical call {call} raises an error after the call returned")
        }
        Action::FrameworkRetry { call, attempt } => format!(
            "framework re-runs the step: logical call {call} is sent again as attempt {attempt} (JSON-RPC id {}{})",
            id(call, attempt),
            key(call, attempt)
        ),
        Action::StreamBreak { call, attempt } => {
            let resumable = match model.config.resumption {
                crate::config::Resumption::Offered => {
                    " (the server made the stream resumable, but the client does not reconnect with Last-Event-ID)"
                }
                _ => "",
            };
            format!(
                "the HTTP response stream of id {} breaks; the client sees a transport error{resumable}",
                id(call, attempt)
            )
        }
        Action::ServerReceive { call, attempt, instance } => {
            let t = after.attempts[call as usize][attempt as usize];
            let replayed_input = if model.config.server.uses_keys() {
                "recognises a repeated key and replays the input-required answer stored with it".to_string()
            } else {
                format!(
                    "recognises an answered id and replays the input-required answer stored for id {} (round {}'s)",
                    t.id, t.replayed_round
                )
            };
            let what = match t.server {
                ServerSide::RespondedReplay => "recognises a duplicate and replays the stored result",
                ServerSide::RespondedReplayInput => &replayed_input,
                ServerSide::RespondedError if model.config.server.validates_ids() => {
                    "rejects it with -32602: its task id is already associated with a task (SEP-1686 §4.2.3), which \
                     it does not run again"
                }
                ServerSide::RespondedError => "rejects it: a request with this key (or id) is in progress",
                ServerSide::Waiting => {
                    "holds it: a request with this key is in progress, and it waits for that one to end"
                }
                ServerSide::Pending if unrecognised_duplicate(model, before, call, attempt, instance) => {
                    "starts the tool, though a request with this key is still running (no in-progress rule: the \
                     duplicate is not recognised)"
                }
                _ if model.config.deployment.instances > 1
                    && model.config.store() == crate::config::StoreScope::PerInstance
                    && model.config.server.has_store() =>
                {
                    "starts the tool (its own store has no record of the call)"
                }
                ServerSide::Pending if model.config.server.validates_ids() && t.key != 0 => {
                    "creates a task for its task id (a durable record) and starts the tool"
                }
                _ => "starts the tool",
            };
            format!(
                "{} reads tools/call id {} and {what}{}",
                server_name(model, instance),
                id(call, attempt),
                cancel_unread(after, call, attempt)
            )
        }
        Action::ServerReceiveCancel { call, attempt } => {
            let (was, now) = (
                before.attempts[call as usize][attempt as usize].server,
                after.attempts[call as usize][attempt as usize].server,
            );
            let what = match now {
                ServerSide::Dropped if was != now => "stops the tool before its effect".to_string(),
                ServerSide::Interrupted if was != now => format!(
                    "interrupts the handler between its effect and its idempotency record, so the record is never \
                     written ({})",
                    stop_processing(model.profile.revision)
                ),
                _ => "ignores it (already done)".to_string(),
            };
            format!("server reads the cancellation of id {} and {what}", id(call, attempt))
        }
        Action::ServerCommit { call, attempt } => format!(
            "server commits the side effect of id {} (logical call {call} now has {} in the ledger){}{}",
            id(call, attempt),
            after.ledger[call as usize],
            cancel_unread(after, call, attempt),
            rerun_effect(model, after, call, attempt)
        ),
        Action::ServerStoreKey { call, attempt } => {
            format!("server stores the idempotency record of id {}, after the effect", id(call, attempt))
        }
        Action::ServerRespond { call, attempt } => {
            let t = after.attempts[call as usize][attempt as usize];
            let without = before.attempts[call as usize][attempt as usize].server == ServerSide::Pending;
            match (t.server, without) {
                (ServerSide::RespondedError, _) => {
                    let x = model.consumed_state(after, call as usize, attempt as usize);
                    let state_of = x.map_or(0, |x| after.attempts[call as usize][x].id);
                    format!(
                        "server refuses id {} with an error and takes no effect: the requestState it carries (of id \
                         {state_of}'s input-required answer) was consumed by an earlier effect, and this handler \
                         enforces its single use",
                        id(call, attempt)
                    )
                }
                (ServerSide::RespondedInput, true) if t.round > 0 && model.config.handler.effect_in(0) => format!(
                    "server answers id {} with another input-required result, without the effect (its requestState says it is done)",
                    id(call, attempt)
                ),
                (ServerSide::RespondedInput, true) => {
                    format!("server answers id {} with an input-required result, before any effect", id(call, attempt))
                }
                (ServerSide::RespondedInput, false) => {
                    format!("server answers id {} with an input-required result, after its effect", id(call, attempt))
                }
                (_, true) => format!(
                    "server writes the result of id {} without taking the effect again (its requestState says it is done)",
                    id(call, attempt)
                ),
                _ => format!("server writes the result of id {}", id(call, attempt)),
            }
        }
        Action::ServerCrash { instance } if model.config.deployment.instances > 1 => format!(
            "{}'s process is killed (SIGKILL): its memory and the requests it holds are lost, the ledger is kept",
            server_name(model, instance)
        ),
        Action::ServerCrash { .. } => {
            "server process is killed (SIGKILL): memory and unread requests are lost, the ledger is kept".into()
        }
        Action::ServerRestart { instance } if model.config.deployment.instances > 1 => {
            format!("{}'s process is started again", server_name(model, instance))
        }
        Action::ServerRestart { .. } => match model.profile.knobs.request_id_scope.value {
            crate::profile::IdScope::Session => {
                "server process is started again (a new session: request ids start over)".into()
            }
            crate::profile::IdScope::Outstanding => "server process is started again".into(),
        },
        Action::KeyExpires { call, key } => {
            format!("the record of key k{call}.{} leaves the server's retention window", key - 1)
        }
        Action::ClientContinue { call, attempt } => {
            let scope = if model.config.key != crate::config::KeyLifetime::None {
                "; no idempotency key: a continuation is outside the key's scope"
            } else {
                ""
            };
            format!(
                "client answers the input request and sends tools/call for logical call {call} again with inputResponses \
                 and requestState, as a new request (JSON-RPC id {}, round {}{scope}); the handler runs from the start",
                id(call, attempt),
                after.attempts[call as usize][attempt as usize].round
            )
        }
        Action::SessionTerminated {} => crate::session::describe_end(model, before, after),
    }
}

/// Whether attempt `(call, attempt)`, read by `instance`, is a duplicate of a request still
/// running that a dedup server with no in-progress rule does not recognise.
fn unrecognised_duplicate(model: &McpModel, before: &State, call: u8, attempt: u8, instance: u8) -> bool {
    let t = before.attempts[call as usize][attempt as usize];
    model.rules.semantics == crate::profile::KeySemantics::Dedup
        && model.rules.in_progress == crate::profile::InProgress::None
        && model.config.server.uses_keys()
        && t.key != 0
        && before.keys_running[model.config.store_of(instance)][call as usize] & McpModel::key_bit(t.key) != 0
}

/// Where the effect of `(call, attempt)` is taken by a continuation of a handler that takes its
/// effect in every round it runs (`input-after-effect`), words saying that the handler, not the
/// request's key or lack of one, takes it again; empty otherwise.
fn rerun_effect(model: &McpModel, after: &State, call: u8, attempt: u8) -> &'static str {
    let handler = model.config.handler;
    let round = after.attempts[call as usize][attempt as usize].round;
    if round > 0 && handler.effect_in(0) && handler.effect_in(round) {
        "; the handler takes its effect in every round it runs, so this continuation charges again whatever key it \
         carries"
    } else {
        ""
    }
}

/// Where the cancellation of `(call, attempt)` is on its way but not yet read, so the server
/// goes on without it (a closed stream or a notification it has not seen yet), words saying
/// so; empty otherwise.
fn cancel_unread(after: &State, call: u8, attempt: u8) -> &'static str {
    let unread =
        after.inbox.iter().any(|m| m.is_cancel() && m.call() == call as usize && m.attempt() == attempt as usize);
    if unread {
        "; its cancellation has not reached the server yet"
    } else {
        ""
    }
}

/// "server", or "server instance N" where the run has several.
fn server_name(model: &McpModel, instance: u8) -> String {
    if model.config.deployment.instances > 1 {
        format!("server instance {instance}")
    } else {
        "server".into()
    }
}

/// The clause that lets a server stop a handler it has started, verbatim, with its page: the
/// list's lead-in and its first item, "Stop processing the cancelled request".
pub fn stop_processing(revision: Revision) -> String {
    let (page, lead) = match revision {
        Revision::R2025_11_25 => (
            "docs/specification/2025-11-25/basic/utilities/cancellation.mdx",
            "Receivers of cancellation notifications",
        ),
        Revision::R2026_07_28 => (
            "docs/specification/2026-07-28/basic/patterns/cancellation.mdx",
            "Servers receiving cancellation notifications",
        ),
    };
    format!("{page} § Behavior Requirements: \"{lead} **SHOULD**:\" ... \"Stop processing the cancelled request\"")
}
