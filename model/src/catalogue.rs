//! The built-in configurations: one catalogue of the retry scenarios observed on real SDKs
//! (used by the model's tests, the replay fixtures, the probe and the benchmark), and the default
//! matrix (every profile x transport x client policy x server implementation).

use crate::applicable::NotApplicable;
use crate::config::{
    Annotation, Bounds, Cancellation, ClientPolicy, Config, Deployment, Handler, HandlerKind, KeyLifetime, ServerImpl,
    Transport,
};
use crate::model::McpModel;
use crate::profile::{KeySemantics, Profile};
use crate::property::PropertyKind;
use crate::search::check::{check_property, shortest_after_crash, worst_case};
use crate::trace::{TraceFile, TraceKind};

/// A retry scenario: one logical call, the client's retry behaviour and the faults around it,
/// with what the probe calls its check and the effects its trace takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Short name (`timeout-cancel-retry`).
    pub name: &'static str,
    /// The probe's check id (`mcp-once-retry-after-timeout`).
    pub check_id: &'static str,
    /// The probe's check name.
    pub title: &'static str,
    /// What the probe checks.
    pub description: &'static str,
    /// The client's retry behaviour.
    pub client: ClientPolicy,
    /// Retries (or framework re-runs).
    pub retries: u8,
    /// Server crashes.
    pub crashes: u8,
    /// The idempotency key the client sends.
    pub key: KeyLifetime,
    /// Replay the shortest path to the worst case (the framework's three runs) instead of the
    /// shortest at-most-once counterexample.
    pub worst_case: bool,
    /// Side effects of the one logical call in the scenario's trace (for the three retry
    /// scenarios, the count measured on the official SDKs).
    pub effects: u8,
    /// The server behaviours the probe replays the scenario's traces for: each behaviour the
    /// model knows for an unkeyed call; for a keyed one, the key stores that break it.
    pub servers: &'static [ServerImpl],
    /// The trace must pass through a server crash (the shortest such counterexample): a check
    /// named for a crash replays a crash, even where a stream break alone is shorter (HTTP).
    pub needs_crash: bool,
    /// The transports the scenario exists on.
    pub transports: &'static [Transport],
    /// What the check takes for granted about the server and the client, in plain words.
    pub assumes: &'static str,
    /// The tool's handler (`effect-only` but for the two input-round scenarios).
    pub handler: Handler,
}

/// The handler of every scenario but the two input-round ones.
const EFFECT_ONLY: Handler = Handler { kind: HandlerKind::EffectOnly, rounds: 0 };

const BOTH: &[Transport] = &[Transport::Stdio, Transport::Http];

/// Scenarios 1 and 3: the client times out, cancels, and retries once.
pub const TIMEOUT_CANCEL_RETRY: Scenario = Scenario {
    name: "timeout-cancel-retry",
    check_id: "mcp-once-retry-after-timeout",
    title: "Retry after a client timeout",
    description: "A call the client timed out on (and cancelled) and then retried takes effect at most once",
    client: ClientPolicy::RetryOnTimeout,
    retries: 1,
    crashes: 0,
    key: KeyLifetime::None,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::Plain, ServerImpl::HonoursCancel],
    needs_crash: false,
    transports: BOTH,
    assumes: "a tool that runs longer than the client's timeout: the runner times out at once, whatever the tool's real speed",
    handler: EFFECT_ONLY,
};

/// Scenario 2: the server is SIGKILLed after its effect, restarted, and the call retried.
pub const KILL_RESTART_RETRY: Scenario = Scenario {
    name: "kill-restart-retry",
    check_id: "mcp-once-retry-after-restart",
    title: "Retry after a server crash and restart",
    description: "A call whose server was SIGKILLed after the effect, restarted, and retried takes effect at most once",
    client: ClientPolicy::RetryOnDisconnect,
    retries: 1,
    crashes: 1,
    key: KeyLifetime::None,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::Plain, ServerImpl::HonoursCancel],
    needs_crash: true,
    transports: BOTH,
    assumes: "the server can die between its effect and its response; the runner makes that point (the tool's delay arguments, strace holding the response's write, or an emulated loss)",
    handler: EFFECT_ONLY,
};

/// Scenario 4: an agent framework re-runs the failed step (three attempts, as LangGraph's
/// default RetryPolicy), and the call with it.
pub const FRAMEWORK_RERUN: Scenario = Scenario {
    name: "framework-rerun",
    check_id: "mcp-once-framework-rerun",
    title: "Framework re-run of the step",
    description: "A call whose agent-framework step is re-run on failure (three attempts, as LangGraph's default RetryPolicy) takes effect at most once",
    client: ClientPolicy::FrameworkRetry,
    retries: 2,
    crashes: 0,
    key: KeyLifetime::None,
    worst_case: true,
    effects: 3,
    servers: &[ServerImpl::Plain, ServerImpl::HonoursCancel],
    needs_crash: false,
    transports: BOTH,
    assumes: "an agent framework that re-runs the whole failed step, as LangGraph's default RetryPolicy does (three attempts)",
    handler: EFFECT_ONLY,
};

/// SEP-3182: the call carries one idempotency key, and is retried after SIGKILL and restart;
/// replayed with the traces that break a volatile store and a store written after the effect
/// (a durable, atomic store must not reproduce them).
pub const KEYED_RETRY: Scenario = Scenario {
    name: "keyed-kill-restart-retry",
    check_id: "sep-3182-retry-with-key-after-restart",
    title: "Keyed retry after a crash and restart",
    description: "A call carrying an idempotency key, whose server was SIGKILLed after the effect, restarted, and retried with the same key, takes effect at most once",
    client: ClientPolicy::RetryOnDisconnect,
    retries: 1,
    crashes: 1,
    key: KeyLifetime::PerCall,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::KeyVolatile, ServerImpl::KeyAfterEffect],
    needs_crash: true,
    transports: BOTH,
    assumes: "a client that sends one idempotency key per logical call and retries with it after the server died between its effect and its response",
    handler: EFFECT_ONLY,
};

/// Streamable HTTP: the response stream breaks (no crash), and the client retries the call.
pub const STREAM_BREAK_RETRY: Scenario = Scenario {
    name: "stream-break-retry",
    check_id: "mcp-once-retry-after-stream-break",
    title: "Retry after a broken response stream",
    description: "A call whose HTTP response stream broke before the response (the server kept running) and which the client then retried takes effect at most once",
    client: ClientPolicy::RetryOnDisconnect,
    retries: 1,
    crashes: 0,
    key: KeyLifetime::None,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::Plain, ServerImpl::HonoursCancel],
    needs_crash: false,
    transports: &[Transport::Http],
    assumes: "a response stream that breaks before its response while the server keeps running, and a client that retries on the break",
    handler: EFFECT_ONLY,
};

/// 2026-07-28 multi round-trip requests: the tool takes its effect, then asks for input; the
/// client answers and sends the continuation, which runs the handler from the start. Probed
/// only on a tool whose first answer is input-required.
pub const INPUT_ROUND_RERUN: Scenario = Scenario {
    name: "input-round-rerun",
    check_id: "mcp-once-input-round-rerun",
    title: "Continuation of an input round",
    description: "A call whose tool asks for input after its effect takes effect at most once when the client answers and sends the continuation",
    client: ClientPolicy::NoRetry,
    retries: 1,
    crashes: 0,
    key: KeyLifetime::None,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::Plain],
    needs_crash: false,
    transports: BOTH,
    assumes: "a tool that asks for input after its effect (its first answer is input-required), and a client that answers and sends the continuation with the requestState, as 2026-07-28 mrtr.mdx has it",
    handler: Handler { kind: HandlerKind::InputAfterEffect, rounds: 1 },
};

/// 2026-07-28 multi round-trip requests: the tool asks for input before its effect; the
/// continuation's response stream breaks and the client re-issues it, the same `requestState`
/// with it, so the server meets one `requestState` twice. "Servers for which a given
/// `requestState` must be consumed at most once ... **MUST** enforce that invariant
/// server-side" (mrtr.mdx): a tool whose effect must happen at most once is such a server.
/// Probed only on a tool whose first answer is input-required, over HTTP.
pub const REQUEST_STATE_REUSE: Scenario = Scenario {
    name: "request-state-reuse",
    check_id: "mcp-once-request-state-single-use",
    title: "One requestState consumed twice",
    description: "A continuation re-issued after its response stream broke, carrying the same requestState, does not take the tool's effect a second time (the server enforces single use of a requestState)",
    client: ClientPolicy::RetryOnDisconnect,
    retries: 1,
    crashes: 0,
    key: KeyLifetime::None,
    worst_case: false,
    effects: 2,
    servers: &[ServerImpl::Plain],
    needs_crash: false,
    transports: &[Transport::Http],
    assumes: "a tool that asks for input before its effect (its first answer is input-required) and must take that effect at most once, and a client that re-issues a continuation whose stream broke with the same requestState, as 2026-07-28 mrtr.mdx has it",
    handler: Handler { kind: HandlerKind::InputBeforeEffect, rounds: 1 },
};

/// The three retry scenarios of the problem statement (scenario 3 is scenario 1 over HTTP).
pub const RETRY_SCENARIOS: [Scenario; 3] = [TIMEOUT_CANCEL_RETRY, KILL_RESTART_RETRY, FRAMEWORK_RERUN];

/// The unkeyed scenarios the probe checks: the three retry scenarios and, over HTTP, the
/// stream break (a fault of its own, apart from a crash).
pub const PROBE_SCENARIOS: [Scenario; 4] =
    [TIMEOUT_CANCEL_RETRY, KILL_RESTART_RETRY, STREAM_BREAK_RETRY, FRAMEWORK_RERUN];

impl Scenario {
    /// One logical call with the scenario's retries and crashes.
    pub fn bounds(&self) -> Bounds {
        Bounds { calls: 1, retries: self.retries, crashes: self.crashes }
    }

    /// The model configuration of the scenario under `profile`, over `transport`, against a
    /// server that behaves as `server`.
    pub fn config(&self, profile: &str, transport: Transport, server: ServerImpl) -> Config {
        Config::builder(profile)
            .transport(transport)
            .client(self.client)
            .key(self.key)
            .server(server)
            .handler(self.handler.kind)
            .rounds(self.handler.rounds)
            .bounds(self.bounds())
            .build()
    }

    /// The trace the scenario is replayed with under `profile` (see [`replay_trace`]).
    pub fn trace(
        &self,
        profile: &Profile,
        transport: Transport,
        server: ServerImpl,
    ) -> Result<Option<TraceFile>, NotApplicable> {
        if !self.transports.contains(&transport) {
            return Ok(None);
        }
        let wanted = match (self.worst_case, self.needs_crash) {
            (true, _) => Wanted::WorstCase,
            (false, true) => Wanted::AfterCrash,
            (false, false) => Wanted::Shortest,
        };
        replay_trace(self.config(&profile.name, transport, server), profile, wanted)
    }
}

/// Which trace of a configuration a replay takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    /// The shortest at-most-once counterexample.
    Shortest,
    /// The shortest at-most-once counterexample that passes through a server crash.
    AfterCrash,
    /// The shortest path to the worst case (the most effects one call can take).
    WorstCase,
}

/// The model's trace for a one-call configuration, as a replay takes it (see [`Wanted`]);
/// `None` when the model has no such trace, an error when the configuration does not apply.
pub fn replay_trace(config: Config, profile: &Profile, wanted: Wanted) -> Result<Option<TraceFile>, NotApplicable> {
    let model = McpModel::new(config, profile.clone())?;
    let at_most_once = TraceKind::Counterexample(PropertyKind::AtMostOnce);
    let (kind, path) = match wanted {
        Wanted::WorstCase => (TraceKind::WorstCase, worst_case(&model).trace),
        Wanted::AfterCrash => (at_most_once, shortest_after_crash(&model, PropertyKind::AtMostOnce)),
        Wanted::Shortest => (at_most_once, check_property(&model, PropertyKind::AtMostOnce).counterexample),
    };
    let Some(path) = path else { return Ok(None) };
    Ok(Some(TraceFile::from_counterexample(&model, kind, &path, false)))
}

/// A configuration observed to double-execute on the official SDKs, with the count seen.
#[derive(Clone, Debug)]
pub struct Observed {
    /// Short name (`timeout-cancel-retry-stdio`).
    pub name: &'static str,
    /// What was observed.
    pub summary: &'static str,
    /// The configuration.
    pub config: Config,
    /// Side effects observed for one logical call.
    pub observed_effects: u8,
}

/// The four scenarios of the project's problem statement, as model configurations.
pub fn scenarios() -> Vec<Observed> {
    let seen = [
        (
            "timeout-cancel-retry-stdio",
            "stdio: client timeout, notifications/cancelled, then one retry",
            TIMEOUT_CANCEL_RETRY,
            Transport::Stdio,
        ),
        (
            "kill-restart-retry-stdio",
            "stdio: server SIGKILLed after its write, restarted, call retried (both requests carry id 1)",
            KILL_RESTART_RETRY,
            Transport::Stdio,
        ),
        (
            "timeout-cancel-retry-http",
            "Streamable HTTP: client timeout, cancellation, then one retry",
            TIMEOUT_CANCEL_RETRY,
            Transport::Http,
        ),
        (
            "framework-rerun",
            "a LangGraph node with its default RetryPolicy (3 attempts) re-runs the node, and the call",
            FRAMEWORK_RERUN,
            Transport::Stdio,
        ),
    ];
    seen.into_iter()
        .map(|(name, summary, s, transport)| Observed {
            name,
            summary,
            config: s.config("mcp-2025-11-25", transport, ServerImpl::Plain),
            observed_effects: s.effects,
        })
        .collect()
}

/// Bounds of the default matrix: two logical calls, one retry (two framework re-runs, so three
/// attempts, as LangGraph's default), one crash.
pub fn matrix_bounds(client: ClientPolicy) -> Bounds {
    let retries = if client.reruns_the_step() { 2 } else { 1 };
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
                        if client.reruns_the_step() {
                            keys.push(KeyLifetime::PerStep);
                        }
                        // A client that sends a new key on each retry: the cell a proposal's
                        // client rule (`idempotency_key_reuse`) rules out.
                        if client.sends_again() {
                            keys.push(KeyLifetime::PerAttempt);
                        }
                    }
                    for key in keys {
                        cells.push(
                            Config::builder(&p.name)
                                .transport(transport)
                                .client(client)
                                .key(key)
                                .server(server)
                                .bounds(matrix_bounds(client))
                                .build(),
                        );
                    }
                }
            }
        }
    }
    cells
}

/// The cells of [`matrix`], each under every cancellation handling in `cancels` (in that
/// order), where a server preset's own handling is written as no override. `[]` gives the
/// default matrix, each server under its preset's handling.
pub fn matrix_with_cancel(profiles: &[Profile], cancels: &[Cancellation]) -> Vec<Config> {
    matrix_with_axes(profiles, cancels, &[])
}

/// The cells of [`matrix_with_cancel`], each under every handler kind in `handlers` (in that
/// order; one input round where the handler asks). `[]` gives the default handler,
/// `effect-only`. A handler that asks for input under `framework-retry` takes 1 re-run, not 2:
/// every re-run starts the rounds over, and the model holds 4 requests per call. Cells whose
/// profile has no input-required results are kept, as not applicable.
pub fn matrix_with_axes(profiles: &[Profile], cancels: &[Cancellation], handlers: &[HandlerKind]) -> Vec<Config> {
    let mut cells = matrix(profiles);
    if !cancels.is_empty() {
        cells = cells
            .into_iter()
            .flat_map(|c| cancels.iter().map(move |x| Config { cancel: Some(*x), ..c.clone() }.normalised()))
            .collect();
    }
    if handlers.is_empty() {
        return cells;
    }
    cells
        .into_iter()
        .flat_map(|c| {
            handlers.iter().map(move |kind| {
                let mut cell = Config { handler: Handler::new(*kind, None), ..c.clone() };
                if *kind != HandlerKind::EffectOnly && cell.client.reruns_the_step() {
                    cell.bounds.retries = cell.bounds.retries.min(1);
                }
                cell
            })
        })
        .collect()
}

/// The tool handlers a profile's own matrix checks (`check --profile P` alone, `diff`), for
/// [`matrix_with_axes`]: every kind where the profile puts MRTR continuations inside the key's
/// scope (`idempotency_continuations = included`), since that rule changes nothing for a tool
/// that never asks for input; else `[]`, the default handler only. The single-use handler is
/// left to `--handler`: its cells are searched without the view's reductions (see `model.rs`),
/// and its two-call cells take minutes each.
pub fn own_handlers(profile: &Profile) -> Vec<HandlerKind> {
    match profile.knobs.idempotency_continuations.value {
        crate::profile::Continuations::Included => {
            HandlerKind::ALL.iter().copied().filter(|k| *k != HandlerKind::InputBeforeEffectSingleUse).collect()
        }
        _ => vec![],
    }
}

/// `cells`, each under every number of server instances in `instances` (in that order; each
/// cell's store as its preset keeps it). `[]` gives the cells as they are (one instance).
/// Cells where several instances cannot arise (stdio, 2025-11-25) are kept, as not applicable.
pub fn with_instances(cells: Vec<Config>, instances: &[u8]) -> Vec<Config> {
    if instances.is_empty() {
        return cells;
    }
    cells
        .into_iter()
        .flat_map(|c| {
            instances.iter().map(move |n| Config { deployment: Deployment { instances: *n, store: None }, ..c.clone() })
        })
        .collect()
}

/// The tool annotations a profile's own matrix checks (`check --profile P` alone), for
/// [`with_annotations`]: every one where the profile has a retry rule that reads them
/// (`retry_after_timeout`), since nothing else does; else `[]`, no annotation only.
pub fn own_annotations(profile: &Profile) -> Vec<Annotation> {
    match profile.knobs.retry_after_timeout.value.restricts() {
        true => Annotation::ALL.to_vec(),
        false => vec![],
    }
}

/// `cells`, each under every tool annotation in `annotations` (in that order). `[]` gives the
/// cells as they are (no annotation).
pub fn with_annotations(cells: Vec<Config>, annotations: &[Annotation]) -> Vec<Config> {
    if annotations.is_empty() {
        return cells;
    }
    cells.into_iter().flat_map(|c| annotations.iter().map(move |a| Config { annotation: *a, ..c.clone() })).collect()
}

/// The built-in profiles, loaded.
pub fn builtin_profiles() -> Vec<Profile> {
    Profile::builtin_names().into_iter().map(|n| Profile::load(n).expect("built-in profiles load")).collect()
}

/// The SEP-3182 cell the project holds safe, shared by tests and the benchmarks: HTTP, a client
/// that retries on any failure with one key per logical call, a durable key store, within
/// `bounds`.
pub fn keyed_safe_cell(bounds: Bounds) -> Config {
    Config::builder("sep-3182")
        .transport(Transport::Http)
        .client(ClientPolicy::RetryAny)
        .key(KeyLifetime::PerCall)
        .server(ServerImpl::KeyDurable)
        .bounds(bounds)
        .build()
}
