//! What the reference model reads from a cell: its parameters and the profile's knobs, turned
//! into plain facts once, each from the knob table of `specs/README.md`.

use crate::state::{CallPhase, Failure, World};
use mcp_once_model::config::{
    Cancellation, ClientPolicy, Config, HandlerKind, KeyLifetime, ServerImpl, StoreScope, Transport,
};
use mcp_once_model::profile::{
    Continuations, HttpCancel, IdScope, InProgress, KeySemantics, Profile, Resumability, Retention, RetryHorizon,
    RetryId, StdioCancel,
};

/// Everything the reference model's transitions read, fixed for one cell.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Rules {
    /// Logical calls.
    pub calls: usize,
    /// Retries (or framework re-runs) per call.
    pub retries: usize,
    /// Server crashes in one run.
    pub crashes: u8,
    /// Server instances behind the load balancer (1 or 2).
    pub instances: usize,
    /// Each instance keeps a store of its own (else one store, shared, or one instance).
    pub own_stores: bool,
    /// Stdio: one ordered pipe (else HTTP, one stream per request, read in any order).
    pub stdio: bool,
    /// The client policy.
    pub client: ClientPolicy,
    /// The key lifetime.
    pub key: KeyLifetime,
    /// The server preset.
    pub server: ServerImpl,
    /// The server's handling of a cancellation it reads.
    pub cancel: Cancellation,
    /// `request_id_scope`.
    pub id_scope: IdScope,
    /// `retry_request_id = same`: a retry carries the id it retries.
    pub same_id: bool,
    /// A timeout is followed by a cancellation the client sends (`timeout_sends_cancel`, and a
    /// way to cancel on this transport).
    pub cancel_on_timeout: bool,
    /// A broken HTTP response stream is a cancellation at the server.
    pub break_cancels: bool,
    /// Streams are resumed while the server lives (`sse_resumability = required`): no breaks.
    pub no_breaks: bool,
    /// `idempotency_semantics`.
    pub semantics: KeySemantics,
    /// `idempotency_in_progress`.
    pub in_progress: InProgress,
    /// A `key-expiring` server's record may leave before a retry comes.
    pub expiry: bool,
    /// Where the tool's handler takes its effect against its input requests (MRTR).
    pub handler: HandlerKind,
    /// How many input-required answers the handler gives before it completes (0 for
    /// `effect-only`).
    pub rounds: u8,
    /// `idempotency_continuations = included`: each round's request carries a key of its own
    /// (else a continuation carries none).
    pub keyed_continuations: bool,
}

/// The most requests the main model holds for one call (`specs/README.md`, "The tool's
/// handler"): a continuation that would leave no room for the call's later rounds and retries
/// is not sent.
pub const MAX_REQUESTS: usize = 4;

impl Rules {
    /// The facts of `config` under `profile`.
    pub fn new(config: &Config, profile: &Profile) -> Rules {
        // Written after the reference: a task-augmented tools/call (its CreateTaskResult, the
        // effect run in the task, the client polling) is not modelled here.
        if config.tasks != mcp_once_model::Tasks::None {
            panic!("the reference model does not cover task-augmented tools/call (--tasks {})", config.tasks);
        }
        // Written after the reference too: two callers presenting one key (`--callers 2`).
        if config.callers != 1 {
            panic!("the reference model does not cover two callers (--callers {})", config.callers);
        }
        let k = &profile.knobs;
        let http = config.transport == Transport::Http;
        let stdio_can_cancel = k.stdio_cancel.value == StdioCancel::Notification;
        Rules {
            calls: config.bounds.calls as usize,
            retries: config.bounds.retries as usize,
            crashes: config.bounds.crashes,
            instances: config.deployment.instances as usize,
            own_stores: config.deployment.instances > 1
                && config.deployment.store.unwrap_or(match config.server {
                    // The in-memory stores live in each process; the others outside them.
                    ServerImpl::DedupById | ServerImpl::KeyVolatile => StoreScope::PerInstance,
                    _ => StoreScope::Shared,
                }) == StoreScope::PerInstance,
            stdio: !http,
            client: config.client,
            key: config.key,
            server: config.server,
            cancel: config.cancel.unwrap_or(match config.server {
                ServerImpl::HonoursCancel => Cancellation::BeforeEffect,
                _ => Cancellation::Ignores,
            }),
            id_scope: k.request_id_scope.value,
            same_id: k.retry_request_id.value == RetryId::Same,
            cancel_on_timeout: k.timeout_sends_cancel.value && (http || stdio_can_cancel),
            break_cancels: http
                && (k.http_disconnect_is_cancel.value || k.http_cancel.value == HttpCancel::CloseStream),
            no_breaks: k.sse_resumability.value == Resumability::Required,
            semantics: k.idempotency_semantics.value,
            in_progress: k.idempotency_in_progress.value,
            expiry: config.server == ServerImpl::KeyExpiring
                && outlived(k.idempotency_retention.value, k.retry_horizon.value),
            handler: config.handler.kind,
            rounds: config.handler.rounds,
            keyed_continuations: k.idempotency_continuations.value == Continuations::Included,
        }
    }

    /// Whether the request of `round` takes the tool's effect (the table of `specs/README.md`,
    /// "The tool's handler"): every round for `effect-only` and `input-after-effect` (run from
    /// the start, it charges again), the last for `input-before-effect`, the first for the
    /// stateful handler (its `requestState` says the effect is done).
    pub fn effect_in(&self, round: u8) -> bool {
        match self.handler {
            HandlerKind::EffectOnly | HandlerKind::InputAfterEffect => true,
            HandlerKind::InputBeforeEffect => round == self.rounds,
            HandlerKind::InputAfterEffectStateful => round == 0,
            // Written after the reference: its refusal of a used `requestState` is not modelled
            // here, and no comparison asks for it.
            HandlerKind::InputBeforeEffectSingleUse => {
                panic!("the reference model does not cover the input-before-effect-single-use handler")
            }
        }
    }

    /// Whether the request of `round` is answered input-required (every round before the last).
    pub fn asks_input(&self, round: u8) -> bool {
        round < self.rounds
    }

    /// The answer a request of `round` gets from the handler, as an id table or key store keeps
    /// it: `Some(round)` for an input-required one, `None` for the final one.
    pub fn answer_of(&self, round: u8) -> Option<u8> {
        self.asks_input(round).then_some(round)
    }

    /// The retries (and re-runs) call `c` has used: its requests after the first that are not
    /// continuations.
    pub fn retries_used(&self, w: &World, c: usize) -> usize {
        w.calls[c].requests.iter().skip(1).filter(|r| !r.continues).count()
    }

    /// Whether call `c` may send the continuation of `round` and still have room, within
    /// [`MAX_REQUESTS`], for its later rounds and for the retries it has left (each a whole
    /// step's rounds under `framework-retry`).
    pub fn room_to_continue(&self, w: &World, c: usize, round: u8) -> bool {
        let later = usize::from(self.rounds.saturating_sub(round));
        let left = self.retries.saturating_sub(self.retries_used(w, c));
        let per_retry = if self.framework() { 1 + usize::from(self.rounds) } else { 1 };
        w.calls[c].requests.len() + 1 + later + left * per_retry <= MAX_REQUESTS
    }

    /// Whether the client itself sends the call again after `failure`.
    pub fn client_retries_after(&self, failure: Failure) -> bool {
        match self.client {
            ClientPolicy::NoRetry | ClientPolicy::FrameworkRetry => false,
            ClientPolicy::RetryOnTimeout => failure == Failure::Timeout,
            ClientPolicy::RetryOnDisconnect => failure == Failure::Disconnect,
            ClientPolicy::RetryAny => failure != Failure::StepError,
        }
    }

    /// Whether call `c` may still be sent again, by the client or by its framework.
    pub fn may_retry(&self, w: &World, c: usize) -> bool {
        let retries_used = self.retries_used(w, c);
        match w.calls[c].phase {
            CallPhase::Failed(why) if retries_used < self.retries => self.framework() || self.client_retries_after(why),
            _ => false,
        }
    }

    /// Whether call `c` is reported failed, for good.
    pub fn failed_for_good(&self, w: &World, c: usize) -> bool {
        matches!(w.calls[c].phase, CallPhase::Failed(_)) && !self.may_retry(w, c)
    }

    /// Whether the framework around the client re-runs the step (and so the call).
    pub fn framework(&self) -> bool {
        self.client == ClientPolicy::FrameworkRetry
    }

    /// The store instance `i` reads and writes.
    pub fn store_of(&self, i: usize) -> usize {
        if self.own_stores {
            i
        } else {
            0
        }
    }

    /// Whether the server keeps idempotency-key records.
    pub fn keys(&self) -> bool {
        matches!(
            self.server,
            ServerImpl::KeyVolatile
                | ServerImpl::KeyDurable
                | ServerImpl::KeyAfterEffect
                | ServerImpl::KeyExpiring
                | ServerImpl::ValidatesTaskId
        )
    }

    /// Whether the server keeps a table of JSON-RPC ids.
    pub fn ids(&self) -> bool {
        matches!(self.server, ServerImpl::DedupById | ServerImpl::DedupByIdDurable)
    }

    /// Whether the client asks for the outcome of a keyed call before it retries it.
    pub fn queries(&self) -> bool {
        self.semantics == KeySemantics::StatusQuery && self.key != KeyLifetime::None
    }
}

/// Whether a record kept for `retention` may be gone when a retry sent within `horizon` comes:
/// a window of unstated length may always be; a stated one is outlived by an unbounded horizon
/// or a longer one.
fn outlived(retention: Retention, horizon: RetryHorizon) -> bool {
    match retention {
        Retention::Bounded => true,
        Retention::Window(w) => match horizon {
            RetryHorizon::Unbounded => true,
            RetryHorizon::Within(h) => w < h,
        },
        Retention::Unbounded | Retention::None => false,
    }
}
