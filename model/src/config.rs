//! The parameters of one model configuration: transport, client policy, key lifetime, server
//! implementation (a preset of key store and cancellation handling, the latter overridable)
//! and bounds. The spec profile is the remaining parameter (see [`crate::profile`]).
//!
//! Every name here is typed by users (`--client retry-on-timeout`); keep them stable.

pub use crate::annotation::Annotation;
pub use crate::handler::{Handler, HandlerKind};
pub use crate::knob_values::KeyScope;
use crate::named::named_enum;
pub use crate::resumption::Resumption;
use crate::state::Failure;
pub use crate::tasks::{TaskRecords, Tasks};
use serde::{Deserialize, Serialize};
use std::fmt;

named_enum!(
    /// The transport between client and server.
    Transport {
        /// One child process; JSON-RPC frames on its stdin and stdout, read in order.
        Stdio = "stdio",
        /// Streamable HTTP: one POST and one SSE response stream per request.
        Http = "http",
    }
);

named_enum!(
    /// When the client (or the framework around it) sends the call again.
    ClientPolicy {
        /// Never: a failed attempt is reported as a failed call.
        NoRetry = "no-retry",
        /// After a client timeout (and its cancellation).
        RetryOnTimeout = "retry-on-timeout",
        /// After a transport error: connection closed, stream broken.
        RetryOnDisconnect = "retry-on-disconnect",
        /// After any failure: timeout, transport error or error reply.
        RetryAny = "retry-any",
        /// The client never retries, but the framework around it re-runs the whole step
        /// (the call included) when the step fails, even after the call returned (LangGraph's
        /// RetryPolicy). `--retries N` gives N re-runs, so N+1 attempts.
        FrameworkRetry = "framework-retry",
    }
);

named_enum!(
    /// How long one idempotency key (or operation id) lives on the client.
    KeyLifetime {
        /// No key is sent.
        None = "none",
        /// One key for the logical call: every retry and every framework re-run reuses it.
        PerCall = "per-call",
        /// A new key for every attempt (a client bug: nothing can be deduplicated).
        PerAttempt = "per-attempt",
        /// One key per framework step: client retries reuse it, a framework re-run makes a new one.
        PerStep = "per-step",
    }
);

named_enum!(
    /// What the server's handler does when it reads the cancellation of a request it runs
    /// (`notifications/cancelled`, or a closed response stream where the revision makes that a
    /// cancellation).
    Cancellation {
        /// Nothing: the handler runs to its end.
        Ignores = "ignores",
        /// Checks once, before its effect: a request cancelled before then is dropped; once
        /// the effect has started the handler runs to its end.
        BeforeEffect = "before-effect",
        /// The handler is stopped wherever it is (the Python SDK cancels the handler's task):
        /// before the effect the request is dropped; between the effect and a separate key
        /// record the record is never written.
        Interrupts = "interrupts",
    }
);

named_enum!(
    /// Where the server's instances keep their key records (or id table), with `--instances 2`.
    StoreScope {
        /// One store every instance reads and writes (a database outside the processes):
        /// what SEP-3182 requires of a horizontally scaled server.
        Shared = "shared",
        /// Each instance its own store: a record written by one instance is unseen by the
        /// other (the only place an in-memory store can be).
        PerInstance = "per-instance",
    }
);

/// How the server is deployed: how many instances behind a load balancer that sends each
/// request to any running instance, and where their store is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Deployment {
    /// Server instances (1 or 2).
    pub instances: u8,
    /// Where the instances keep their store, where it differs from the preset's (`None`: the
    /// preset's; see [`Config::store`]). Meaningful with two instances only.
    pub store: Option<StoreScope>,
}

impl Default for Deployment {
    fn default() -> Self {
        Deployment { instances: 1, store: None }
    }
}

impl Deployment {
    /// Largest number of server instances the model takes.
    pub const MAX_INSTANCES: u8 = 2;
}

named_enum!(
    /// What the server does about duplicates: a preset of (key store, cancellation handling);
    /// `--cancel` overrides the cancellation handling ([`ServerImpl::preset_cancel`]).
    ServerImpl {
        /// No store; ignores cancellation.
        Plain = "plain",
        /// No store; drops a request whose cancellation arrives before its effect commits.
        HonoursCancel = "honours-cancel",
        /// Remembers JSON-RPC ids it has seen, in memory (lost on a crash), and answers a
        /// repeated id with the remembered result.
        DedupById = "dedup-by-id",
        /// Like `dedup-by-id`, but the id table survives a crash (kept with the ledger).
        DedupByIdDurable = "dedup-by-id-durable",
        /// Idempotency key records kept in memory only.
        KeyVolatile = "key-volatile",
        /// Key records stored durably, in the same atomic write as the effect.
        KeyDurable = "key-durable",
        /// Key records stored durably, but in a separate write after the effect.
        KeyAfterEffect = "key-after-effect",
        /// Durable and atomic, but a record can expire (bounded retention).
        KeyExpiring = "key-expiring",
        /// SEP-1686's validating receiver (§4.2.3, under `task_id_validation = may-reject`):
        /// the record of an operation (task) id is written durably when the request is read
        /// (the task exists from creation), completes atomically with the effect, survives a
        /// crash, and a later request with that id is rejected with an error (-32602) whether
        /// its task is running, completed, or was cancelled or lost with its process.
        ValidatesTaskId = "validates-task-id",
    }
);

impl ServerImpl {
    /// The cancellation handling this preset has when `--cancel` is not given: `before-effect`
    /// for `honours-cancel`, `ignores` for every other.
    pub fn preset_cancel(self) -> Cancellation {
        match self {
            Self::HonoursCancel => Cancellation::BeforeEffect,
            _ => Cancellation::Ignores,
        }
    }
    /// The key store (or id table) of this preset, in words: what a `--server` name keeps
    /// apart from its cancellation handling.
    pub fn store(self) -> &'static str {
        match self {
            Self::Plain | Self::HonoursCancel => "no store",
            Self::DedupById => "id table in memory",
            Self::DedupByIdDurable => "id table, durable",
            Self::KeyVolatile => "key records in memory",
            Self::KeyDurable => "key records, durable, atomic with the effect",
            Self::KeyAfterEffect => "key records, durable, written after the effect",
            Self::KeyExpiring => "key records, durable, atomic, expiring",
            Self::ValidatesTaskId => "task records, durable from receipt; a known task id is rejected",
        }
    }
    /// Where this preset keeps its store when it runs as several instances: in the process's
    /// memory (so per instance) for the in-memory presets, shared for the durable ones.
    pub fn preset_store(self) -> StoreScope {
        match self {
            Self::DedupById | Self::KeyVolatile => StoreScope::PerInstance,
            _ => StoreScope::Shared,
        }
    }
    /// Whether this preset keeps a store at all (key records or an id table).
    pub fn has_store(self) -> bool {
        self.uses_keys() || self.uses_ids()
    }
    /// Whether this implementation keeps idempotency-key records.
    pub fn uses_keys(self) -> bool {
        matches!(
            self,
            Self::KeyVolatile | Self::KeyDurable | Self::KeyAfterEffect | Self::KeyExpiring | Self::ValidatesTaskId
        )
    }
    /// Whether this implementation rejects a request whose key (task id) it has a record of,
    /// written from receipt and kept across a crash (`validates-task-id`).
    pub fn validates_ids(self) -> bool {
        self == Self::ValidatesTaskId
    }
    /// Whether this implementation deduplicates by JSON-RPC id.
    pub fn uses_ids(self) -> bool {
        matches!(self, Self::DedupById | Self::DedupByIdDurable)
    }
}

impl ClientPolicy {
    /// Whether the client itself retries after this kind of failure.
    pub fn retries_after(self, failure: Failure) -> bool {
        use Failure as F;
        match self {
            Self::NoRetry | Self::FrameworkRetry => false,
            Self::RetryOnTimeout => failure == F::Timeout,
            Self::RetryOnDisconnect => failure == F::Disconnect,
            Self::RetryAny => matches!(failure, F::Timeout | F::Disconnect | F::ErrorReply),
        }
    }

    /// Whether the caller re-runs the whole step around the call (an agent framework's retry
    /// policy), rather than the client retrying the call itself.
    pub fn reruns_the_step(self) -> bool {
        match self {
            Self::FrameworkRetry => true,
            Self::NoRetry | Self::RetryOnTimeout | Self::RetryOnDisconnect | Self::RetryAny => false,
        }
    }

    /// Whether a failed call is ever sent again, by the client or by a re-run of its step.
    pub fn sends_again(self) -> bool {
        match self {
            Self::NoRetry => false,
            Self::RetryOnTimeout | Self::RetryOnDisconnect | Self::RetryAny | Self::FrameworkRetry => true,
        }
    }

    /// Whether what the client does next depends on how the attempt failed (a timeout, a
    /// disconnect, an error reply). When it does not, the search may forget the failure's kind.
    pub fn acts_on_the_failure_kind(self) -> bool {
        match self {
            Self::RetryOnTimeout | Self::RetryOnDisconnect => true,
            // Never retries; re-runs after any failure of its step; retries after every
            // failure a call can have.
            Self::NoRetry | Self::FrameworkRetry | Self::RetryAny => false,
        }
    }
}

/// How far the model explores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Bounds {
    /// Logical tool calls the client makes (1 to 4).
    pub calls: u8,
    /// Retries (or framework re-runs) per logical call (0 to 3).
    pub retries: u8,
    /// Server crashes (SIGKILL) in one run (0 to 3).
    pub crashes: u8,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds { calls: 1, retries: 1, crashes: 1 }
    }
}

/// One model configuration, without the profile itself (named by `profile`).
///
/// In files it carries `cancel` always (the effective cancellation handling); a file without
/// it means the server preset's.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(into = "ConfigFile", from = "ConfigFile")]
pub struct Config {
    /// Profile name or path.
    pub profile: String,
    /// Transport.
    pub transport: Transport,
    /// Client retry policy.
    pub client: ClientPolicy,
    /// Idempotency key lifetime.
    pub key: KeyLifetime,
    /// Server implementation.
    pub server: ServerImpl,
    /// Cancellation handling, where it differs from the server preset's (`None`: the
    /// preset's; see [`Config::cancel`]).
    pub cancel: Option<Cancellation>,
    /// The tool's handler under multi round-trip requests (default: `effect-only`).
    pub handler: Handler,
    /// Server instances and where their store is (default: one instance).
    pub deployment: Deployment,
    /// What the tool's annotations say (default: none), read by a profile's retry rule.
    pub annotation: Annotation,
    /// Whether broken response streams are resumed (default: none), where a profile lets a
    /// server make them resumable.
    pub resumption: Resumption,
    /// Whether `tools/call` is task-augmented (default: none), where the profile has tasks.
    pub tasks: Tasks,
    /// Where a task-augmented call's task record is kept (default: durable).
    pub task_records: TaskRecords,
    /// Bounds.
    pub bounds: Bounds,
    /// Callers sharing the server (1 or 2, default 1; see `callers.rs`): with 2, call `i` is
    /// caller `i mod 2`'s, and caller 1's calls present the key of the call before them.
    pub callers: u8,
    /// The scope of the server's key records, where it differs from the profile's
    /// (`None`: the profile's; see `McpModel::key_scope`). Meaningful with two callers only.
    pub key_scope: Option<KeyScope>,
    /// How many times the server may terminate the client's HTTP session (0 to
    /// [`MAX_SESSION_TERMINATIONS`]; a bound like `bounds.crashes`, kept here so that
    /// `Bounds` stays the three every cell has). Default 0.
    pub session_terminations: u8,
}

/// Largest number of session terminations the model takes.
pub const MAX_SESSION_TERMINATIONS: u8 = 2;

/// How a [`Config`] is written to and read from files.
#[derive(Serialize, Deserialize)]
struct ConfigFile {
    profile: String,
    transport: Transport,
    client: ClientPolicy,
    key: KeyLifetime,
    server: ServerImpl,
    #[serde(default)]
    cancel: Option<Cancellation>,
    #[serde(default, skip_serializing_if = "is_default_handler")]
    handler: Handler,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    instances: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    store: Option<StoreScope>,
    #[serde(default, skip_serializing_if = "is_no_annotation")]
    annotation: Annotation,
    #[serde(default, skip_serializing_if = "is_no_resumption")]
    resumption: Resumption,
    #[serde(default, skip_serializing_if = "is_no_tasks")]
    tasks: Tasks,
    #[serde(default, skip_serializing_if = "is_durable")]
    task_records: TaskRecords,
    bounds: Bounds,
    #[serde(default, skip_serializing_if = "is_zero")]
    session_terminations: u8,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    callers: u8,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key_scope: Option<KeyScope>,
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

fn is_no_annotation(a: &Annotation) -> bool {
    *a == Annotation::None
}

fn is_no_resumption(r: &Resumption) -> bool {
    *r == Resumption::None
}

fn is_no_tasks(t: &Tasks) -> bool {
    *t == Tasks::None
}

fn is_durable(r: &TaskRecords) -> bool {
    *r == TaskRecords::Durable
}

fn one() -> u8 {
    1
}

fn is_one(n: &u8) -> bool {
    *n == 1
}

fn is_default_handler(h: &Handler) -> bool {
    *h == Handler::default()
}

impl From<Config> for ConfigFile {
    fn from(c: Config) -> Self {
        let cancel = Some(c.cancel());
        // Like `cancel`, the store in force is written, where there is a choice of store.
        let store = (c.deployment.instances > 1).then(|| c.store());
        ConfigFile {
            profile: c.profile,
            transport: c.transport,
            client: c.client,
            key: c.key,
            server: c.server,
            cancel,
            handler: c.handler,
            instances: c.deployment.instances,
            store,
            annotation: c.annotation,
            resumption: c.resumption,
            tasks: c.tasks,
            task_records: c.task_records,
            bounds: c.bounds,
            session_terminations: c.session_terminations,
            callers: c.callers,
            key_scope: c.key_scope,
        }
    }
}

impl From<ConfigFile> for Config {
    fn from(f: ConfigFile) -> Self {
        Config {
            profile: f.profile,
            transport: f.transport,
            client: f.client,
            key: f.key,
            server: f.server,
            cancel: f.cancel,
            handler: f.handler,
            deployment: Deployment { instances: f.instances, store: f.store },
            annotation: f.annotation,
            resumption: f.resumption,
            tasks: f.tasks,
            task_records: f.task_records,
            bounds: f.bounds,
            session_terminations: f.session_terminations,
            callers: f.callers,
            key_scope: f.key_scope,
        }
        .normalised()
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "--profile {} --transport {} --client {} --key {} --server {}{}{}{}{}{}{} --calls {} --retries {} --crashes {}{}{}",
            self.profile,
            self.transport,
            self.client,
            self.key,
            self.server,
            match self.cancel.filter(|c| *c != self.server.preset_cancel()) {
                Some(c) => format!(" --cancel {c}"),
                None => String::new(),
            },
            self.handler,
            self.deployment_flags(),
            match self.annotation {
                Annotation::None => String::new(),
                a => format!(" --annotation {a}"),
            },
            match self.resumption {
                Resumption::None => String::new(),
                r => format!(" --resumption {r}"),
            },
            match (self.tasks, self.task_records) {
                (Tasks::None, _) => String::new(),
                (t, TaskRecords::Durable) => format!(" --tasks {t}"),
                (t, r) => format!(" --tasks {t} --task-records {r}"),
            },
            self.bounds.calls,
            self.bounds.retries,
            self.bounds.crashes,
            match self.session_terminations {
                0 => String::new(),
                n => format!(" --session-terminations {n}"),
            },
            self.caller_flags()
        )
    }
}

impl Config {
    /// The cancellation handling in force: the override, else the server preset's.
    pub fn cancel(&self) -> Cancellation {
        self.cancel.unwrap_or(self.server.preset_cancel())
    }

    /// Where the instances keep their store: the override, else the server preset's.
    pub fn store(&self) -> StoreScope {
        self.deployment.store.unwrap_or(self.server.preset_store())
    }

    /// Which store instance `instance` reads and writes: the one store when it is shared (or
    /// there is one instance), else its own.
    pub fn store_of(&self, instance: u8) -> usize {
        match self.store() {
            StoreScope::Shared => 0,
            StoreScope::PerInstance => instance as usize,
        }
    }

    /// The flags that give this cell's callers and their records' scope (empty for one caller
    /// and the profile's scope).
    fn caller_flags(&self) -> String {
        let callers = match self.callers {
            1 => String::new(),
            n => format!(" --callers {n}"),
        };
        match self.key_scope {
            Some(s) => format!("{callers} --key-scope {s}"),
            None => callers,
        }
    }

    /// The flags that give this cell's deployment (empty for one instance).
    fn deployment_flags(&self) -> String {
        let d = self.deployment;
        match (d.instances, d.store) {
            (1, None) => String::new(),
            (n, None) => format!(" --instances {n}"),
            (n, Some(s)) => format!(" --instances {n} --store {s}"),
        }
    }

    /// The same configuration with an override equal to the preset's value dropped, so that
    /// `--server plain --cancel ignores` and `--server plain` are one cell (and likewise for
    /// `--store`).
    pub fn normalised(mut self) -> Config {
        self.cancel = self.cancel.filter(|c| *c != self.server.preset_cancel());
        let preset = self.server.preset_store();
        self.deployment.store = self.deployment.store.filter(|s| *s != preset);
        self
    }

    /// The (store, cancellation) pair this cell is, in words: `key-after-effect (key records,
    /// durable, written after the effect; cancellation: interrupts)`.
    pub fn server_pair(&self) -> String {
        format!("{} ({}; cancellation: {})", self.server, self.server.store(), self.cancel())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_acts_on_the_failure_kind_exactly_when_its_retries_tell_the_kinds_apart() {
        let kinds = [Failure::Timeout, Failure::Disconnect, Failure::ErrorReply];
        for &policy in ClientPolicy::ALL {
            let answers: Vec<bool> = kinds.iter().map(|&f| policy.retries_after(f)).collect();
            let tells_apart = answers.iter().any(|&a| a != answers[0]);
            assert_eq!(policy.acts_on_the_failure_kind(), tells_apart, "{policy}: {answers:?}");
        }
    }
}
