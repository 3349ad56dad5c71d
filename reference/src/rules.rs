//! What the reference model reads from a cell: its parameters and the profile's knobs, turned
//! into plain facts once, each from the knob table of `specs/README.md`.

use crate::state::{CallPhase, Failure, World};
use mcp_once_model::config::{Cancellation, ClientPolicy, Config, KeyLifetime, ServerImpl, StoreScope, Transport};
use mcp_once_model::profile::{
    HttpCancel, IdScope, InProgress, KeySemantics, Profile, Resumability, Retention, RetryHorizon, RetryId, StdioCancel,
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
}

impl Rules {
    /// The facts of `config` under `profile`.
    pub fn new(config: &Config, profile: &Profile) -> Rules {
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
        }
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
        let retries_used = w.calls[c].requests.len().saturating_sub(1);
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
