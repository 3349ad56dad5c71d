//! The three official-SDK ledger fixtures and the catalogue's retry scenarios as ready-made
//! replays: which command starts each fixture, which model trace each scenario is for each SDK,
//! and the options the runner uses. Shared by the replay tests and `mcp-once bench`.

use crate::fixture::Variant;
use crate::replay::message::CALL_PLACEHOLDER;
use crate::replay::observer::Observer;
use crate::replay::process::LaunchSpec;
use crate::replay::types::{KeyAt, ReplayOptions, Revision, Target};
use mcp_once_model::catalogue::{replay_trace, Scenario, Wanted};
use mcp_once_model::profile::{InProgress, KeySemantics};
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{
    Bounds, Cancellation, ClientPolicy, Config, Handler, HandlerKind, KeyLifetime, NotApplicable, Profile,
    ProfileError, ServerImpl, Transport,
};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why a fixture replay cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    /// The SDK's fixture cannot be this cell: a variant, option or revision it does not have.
    #[error("{0}")]
    Cannot(String),
    /// The SDK's fixture is not installed.
    #[error("the {sdk} fixture is not installed in {}: run `mcp-once fixtures install` (in a checkout: conformance/fixtures/install.sh), or give the folder with --fixtures", dir.display())]
    NotInstalled {
        /// The SDK, in words.
        sdk: &'static str,
        /// The fixtures folder looked in.
        dir: PathBuf,
    },
    /// No loopback port could be had for an HTTP fixture.
    #[error("no free port: {0}")]
    NoPort(std::io::Error),
    /// The profile does not load.
    #[error(transparent)]
    Profile(#[from] ProfileError),
    /// The configuration does not apply under the profile.
    #[error(transparent)]
    NotApplicable(#[from] NotApplicable),
    /// The model has no trace of the kind asked for.
    #[error("the model has no trace for this configuration")]
    NoTrace,
}

/// An official MCP SDK with a ledger fixture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sdk {
    /// `@modelcontextprotocol/sdk` 1.32.2 (`conformance/fixtures/typescript/server.mjs`).
    TypeScript,
    /// `@modelcontextprotocol/server` 2.4.0, the SDK's v2 line (`conformance/fixtures/typescript/server-v2.mjs`).
    TypeScriptV2,
    /// Python `mcp` 2.3.0 (`conformance/fixtures/python`).
    Python,
    /// rmcp 3.11.0 (`mcp-once-fixture`, or `mcp-once fixture`).
    Rust,
}

impl Sdk {
    /// The three SDKs the bench and the cross-SDK tests compare (TypeScript on its 1.x line).
    pub const ALL: [Sdk; 3] = [Sdk::TypeScript, Sdk::Python, Sdk::Rust];

    /// Short name.
    pub fn as_str(self) -> &'static str {
        match self {
            Sdk::TypeScript => "typescript",
            Sdk::TypeScriptV2 => "typescript-v2",
            Sdk::Python => "python",
            Sdk::Rust => "rust",
        }
    }

    /// The `--variant` that makes this SDK's fixture the model's server `server`, or why the SDK
    /// cannot be it. Every fixture has every behaviour, the SEP-3182 key stores and their
    /// `--outcome-query` included, except SEP-1686's validating receiver (`validates-task-id`),
    /// which only the Rust fixture has.
    /// (The Python SDK itself interrupts a cancelled handler; its fixture's variants of a server
    /// that ignores cancellation shield their handler from it.)
    pub fn variant_for(self, server: ServerImpl) -> Result<&'static str, FixtureError> {
        if server.validates_ids() && self != Sdk::Rust {
            return Err(FixtureError::Cannot(format!(
                "the {} fixture has no {server} variant (SEP-1686's validating receiver): only the Rust fixture's is",
                self.as_str()
            )));
        }
        Ok(Variant::for_server(server).as_str())
    }

    /// The `--cancel` that makes this SDK's fixture of `server` handle cancellation as `cancel`
    /// says (`None`: the server's preset, no option), or why it cannot. Only the Rust fixture
    /// takes `--cancel`; the Python fixture's variants other than `honours-cancel` shield their
    /// handler from the SDK's own interruption and write a key record written after the effect
    /// in a `finally`, so none of them can be interrupted between the two; the TypeScript
    /// fixtures have no way to stop a handler once it runs.
    pub fn cancel_option(
        self,
        server: ServerImpl,
        cancel: Option<Cancellation>,
    ) -> Result<Option<String>, FixtureError> {
        match (self, cancel) {
            (_, None) => Ok(None),
            (Sdk::Rust, Some(c)) => Ok(Some(c.as_str().to_string())),
            (sdk, Some(c)) => Err(FixtureError::Cannot(format!(
                "the {} fixture takes no --cancel: none of its variants is {server} with --cancel {c} (only the Rust fixture's is)",
                sdk.as_str()
            ))),
        }
    }

    /// The options that make this SDK's fixture answer `tools/call` with tasks as the cell's
    /// `--tasks` and `--task-records` say (none without tasks), or why it cannot: the Rust
    /// fixture takes them (rmcp 3.11 serves the tasks extension, SEP-2663); the others have no
    /// task-augmented `tools/call`.
    pub fn task_options(self, config: &Config) -> Result<Vec<String>, FixtureError> {
        match (config.tasks, self) {
            (mcp_once_model::Tasks::None, _) => Ok(Vec::new()),
            (tasks, Sdk::Rust) if !matches!(config.server, ServerImpl::Plain | ServerImpl::HonoursCancel) => {
                Err(FixtureError::Cannot(format!(
                    "the rust fixture runs charge in a task (--tasks {tasks}) with no store of ids or keys only (servers plain and honours-cancel), not {}",
                    config.server
                )))
            }
            (tasks, Sdk::Rust) => Ok(vec![
                "--tasks".into(),
                tasks.as_str().into(),
                "--task-records".into(),
                config.task_records.as_str().into(),
            ]),
            (tasks, sdk) => Err(FixtureError::Cannot(format!(
                "the {} fixture answers tools/call with the tool's own result: it has no task-augmented tools/call (--tasks {tasks}; the Rust fixture has)",
                sdk.as_str()
            ))),
        }
    }

    /// The options that make this SDK's fixture run its tool as the model's MRTR `handler`
    /// (none for the default, `effect-only`), or why it cannot: the Rust and Python fixtures
    /// take `--handler` and `--rounds` (rmcp 3.11 returns an `InputRequiredResult` from a tool
    /// and hands the handler the continuation's `inputResponses` and `requestState`; Python
    /// `mcp` 2.3.0 lets a tool body return one and reads the continuation on its `Context`, and
    /// seals the `requestState`); the TypeScript fixtures have no tool that asks for input yet.
    pub fn handler_options(self, handler: Handler) -> Result<Vec<String>, FixtureError> {
        if handler == Handler::default() {
            return Ok(Vec::new());
        }
        match self {
            // The single-use handler is `input-before-effect` on a fixture that enforces the
            // single use of each requestState (`--single-use-request-state`: the Rust one only).
            Sdk::Rust if handler.single_use() => Ok(vec![
                "--handler".into(),
                HandlerKind::InputBeforeEffect.as_str().into(),
                "--rounds".into(),
                handler.rounds.to_string(),
                "--single-use-request-state".into(),
            ]),
            sdk if handler.single_use() => Err(FixtureError::Cannot(format!(
                "the {} fixture does not enforce the single use of a requestState: it takes no --handler {} (only the Rust fixture's does, with --single-use-request-state)",
                sdk.as_str(),
                handler.kind
            ))),
            Sdk::Rust | Sdk::Python => Ok(vec![
                "--handler".into(),
                handler.kind.as_str().into(),
                "--rounds".into(),
                handler.rounds.to_string(),
            ]),
            sdk => Err(FixtureError::Cannot(format!(
                "the {} fixture has no tool that asks for input (MRTR): it takes no --handler {} (only the Rust and Python fixtures' do)",
                sdk.as_str(),
                handler.kind
            ))),
        }
    }

    /// Whether this SDK's fixture speaks the wire revision `revision`, or why not: the
    /// TypeScript SDK 1.32.2 has no `server/discover` (2026-07-28); its v2 line (2.4.0), rmcp
    /// and Python speak both.
    pub fn speaks(self, revision: Revision) -> Result<(), FixtureError> {
        match (self, revision) {
            (Sdk::TypeScript, Revision::R2026_07_28) => Err(FixtureError::Cannot(
                "the TypeScript SDK 1.32.2 does not speak 2026-07-28 (no server/discover)".into(),
            )),
            _ => Ok(()),
        }
    }

    /// How the model describes this SDK's server as it is (no `--variant`): the Python SDK
    /// interrupts a cancelled handler; the TypeScript SDK (both lines) and rmcp run it to its commit.
    pub fn server_impl(self) -> ServerImpl {
        match self {
            Sdk::Python => ServerImpl::HonoursCancel,
            Sdk::TypeScript | Sdk::TypeScriptV2 | Sdk::Rust => ServerImpl::Plain,
        }
    }
}

/// The key retention the `key-expiring` fixture variant is started with for replays.
pub const KEY_RETENTION: Duration = Duration::from_millis(5000);

/// Where the fixtures live and how to start the Rust one.
#[derive(Clone, Debug)]
pub struct FixturePaths {
    /// The fixtures folder (`installed::locate`: a checkout's `conformance/fixtures` or the data
    /// folder `mcp-once fixtures install` wrote).
    pub fixtures_dir: PathBuf,
    /// Program and leading arguments that start the Rust fixture (e.g. `mcp-once-fixture`, or
    /// `mcp-once fixture --sdk rust`).
    pub rust_fixture: Vec<String>,
}

impl FixturePaths {
    /// The argv that starts `sdk`'s fixture on `ledger`, with `extra` options; an error names
    /// a fixture that is not installed.
    pub fn argv(&self, sdk: Sdk, ledger: &Path, extra: &[String]) -> Result<Vec<String>, FixtureError> {
        let dir = &self.fixtures_dir;
        // A script fixture: its SDK's name, the file an install leaves (for Python, the
        // interpreter), the script.
        let script = match sdk {
            Sdk::TypeScript => {
                Some(("TypeScript", "typescript/node_modules/@modelcontextprotocol/sdk", "typescript/server.mjs"))
            }
            Sdk::TypeScriptV2 => Some((
                "TypeScript v2",
                "typescript/node_modules/@modelcontextprotocol/server",
                "typescript/server-v2.mjs",
            )),
            Sdk::Python => Some(("Python", "python/.venv/bin/python", "python/server.py")),
            Sdk::Rust => None,
        };
        let mut argv: Vec<String> = match script {
            None => self.rust_fixture.clone(),
            Some((name, installed, _)) if !dir.join(installed).exists() => {
                return Err(FixtureError::NotInstalled { sdk: name, dir: dir.clone() })
            }
            Some((_, installed, script)) => {
                let program =
                    if sdk == Sdk::Python { dir.join(installed).display().to_string() } else { "node".into() };
                vec![program, dir.join(script).display().to_string()]
            }
        };
        argv.extend(["--ledger".to_string(), ledger.display().to_string()]);
        argv.extend(extra.iter().cloned());
        Ok(argv)
    }

    /// Runner options for `sdk`'s fixture variant that implements the model's server `server`
    /// (see [`Sdk::variant_for`]), as [`FixturePaths::options`] has them.
    pub fn options_for(
        &self,
        sdk: Sdk,
        server: ServerImpl,
        transport: Transport,
        dir: &Path,
    ) -> Result<ReplayOptions, FixtureError> {
        self.variant_options(sdk, server, false, &[], transport, dir)
    }

    /// [`FixturePaths::options_for`] for a cell under `profile`: a key server of a profile whose
    /// keys only name calls for an outcome query (`idempotency_semantics = status-query`) is
    /// the variant started with `--outcome-query`, which records but does not deduplicate.
    pub fn options_for_profile(
        &self,
        sdk: Sdk,
        server: ServerImpl,
        profile: &Profile,
        transport: Transport,
        dir: &Path,
    ) -> Result<ReplayOptions, FixtureError> {
        let status_query = server.uses_keys() && profile.knobs.idempotency_semantics.value == KeySemantics::StatusQuery;
        in_progress_built_in(server, profile)?;
        self.variant_options(sdk, server, status_query, &[], transport, dir)
    }

    /// [`FixturePaths::options_for_profile`] for the cell `config` (its server, transport,
    /// cancellation handling and handler): a cell with `--cancel` or `--handler` starts the
    /// fixture with it where the SDK's fixture takes it ([`Sdk::cancel_option`],
    /// [`Sdk::handler_options`]), and is refused with the reason where not (and so is a cell
    /// with task-augmented calls or two callers, which no fixture or runner plays).
    pub fn options_for_cell(
        &self,
        sdk: Sdk,
        config: &Config,
        profile: &Profile,
        dir: &Path,
    ) -> Result<ReplayOptions, FixtureError> {
        // One replay plays one client: nothing presents one key as two callers.
        if config.callers > 1 {
            return Err(FixtureError::Cannot(format!(
                "the replay runner plays one caller, so it cannot present one key as {} callers (--callers {})",
                config.callers, config.callers
            )));
        }
        let server = config.server;
        let status_query = server.uses_keys() && profile.knobs.idempotency_semantics.value == KeySemantics::StatusQuery;
        let mut more: Vec<String> = match sdk.cancel_option(server, config.cancel)? {
            Some(cancel) => vec!["--cancel".into(), cancel],
            None => Vec::new(),
        };
        more.extend(sdk.handler_options(config.handler)?);
        more.extend(sdk.task_options(config)?);
        in_progress_built_in(server, profile)?;
        if config.deployment.instances == 1 {
            return self.variant_options(sdk, server, status_query, &more, config.transport, dir);
        }
        more.extend(instance_options(sdk, config)?);
        let mut opts =
            self.variant_options(sdk, server, status_query, &with_instance(&more, 0), config.transport, dir)?;
        for i in 1..config.deployment.instances {
            let other =
                self.variant_options(sdk, server, status_query, &with_instance(&more, i), config.transport, dir)?;
            opts.more_instances.push(other.target);
        }
        Ok(opts)
    }

    /// The variant's options: `--outcome-query` and `more` (`--cancel`, `--handler`) when asked, and for `key-expiring` a retention
    /// short enough to wait out in a replay, long enough for every step a trace takes while its
    /// record must still be held.
    fn variant_options(
        &self,
        sdk: Sdk,
        server: ServerImpl,
        outcome_query: bool,
        more: &[String],
        transport: Transport,
        dir: &Path,
    ) -> Result<ReplayOptions, FixtureError> {
        let ms = KEY_RETENTION.as_millis().to_string();
        let mut extra = vec!["--variant", sdk.variant_for(server)?];
        if outcome_query {
            extra.push("--outcome-query");
        }
        extra.extend(more.iter().map(String::as_str));
        let expiring = server == ServerImpl::KeyExpiring;
        if expiring {
            extra.extend(["--retention-ms", &ms]);
        }
        let mut opts = self.options(sdk, transport, dir, &extra)?;
        if expiring {
            opts.key_retention = Some(KEY_RETENTION);
        }
        Ok(opts)
    }

    /// Runner options for `sdk`'s fixture over `transport`, counting effects in `dir/ledger.jsonl`
    /// and writing evidence to `dir/evidence`. HTTP gets a free loopback port. The arguments
    /// carry the logical call's tag (`order`), so each ledger line names its call.
    pub fn options(
        &self,
        sdk: Sdk,
        transport: Transport,
        dir: &Path,
        extra: &[&str],
    ) -> Result<ReplayOptions, FixtureError> {
        let ledger = dir.join("ledger.jsonl");
        let mut more: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        let target = match transport {
            Transport::Stdio => {
                Target::Stdio(LaunchSpec { argv: self.argv(sdk, &ledger, &more)?, ..Default::default() })
            }
            Transport::Http => {
                let port = free_port().map_err(FixtureError::NoPort)?;
                more.extend(["--transport".into(), "http".into(), "--port".into(), port.to_string()]);
                Target::Http {
                    url: format!("http://127.0.0.1:{port}/mcp"),
                    launch: Some(LaunchSpec { argv: self.argv(sdk, &ledger, &more)?, ..Default::default() }),
                }
            }
        };
        Ok(ReplayOptions {
            target,
            tool: "charge".into(),
            args: json!({"amount": 42, "order": CALL_PLACEHOLDER}).as_object().cloned().expect("an object"),
            key_at: KeyAt::Params,
            observer: Observer::ledger(ledger.clone()),
            revision: Some(Revision::R2025_11_25),
            step_timeout: Duration::from_secs(15),
            start_timeout: Duration::from_secs(30),
            window: Duration::from_millis(1000),
            stop_grace: Duration::from_secs(3),
            pace: true,
            hold_args: None,
            evidence_dir: Some(dir.join("evidence")),
            key_retention: None,
            skip_non_json: false,
            more_instances: Vec::new(),
            command: None,
        })
    }
}

/// Ports this process has handed out to fixtures: a port the system gives for a bind to port 0
/// is free only until it is released, and the system may give it again at once, so two
/// fixtures started side by side (the jobs of `confirm`, a test's threads) could be told the
/// same port and a runner would reach the other one's server.
static HANDED_OUT: std::sync::Mutex<std::collections::BTreeSet<u16>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// A free loopback port that no other fixture of this process has been given.
fn free_port() -> std::io::Result<u16> {
    for _ in 0..64 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        if HANDED_OUT.lock().expect("port registry lock").insert(port) {
            return Ok(port);
        }
    }
    Err(std::io::Error::other("64 ports in a row were ones already handed out"))
}

/// The fixture options of a deployment of several instances (`--shared-store` when its store
/// is shared), or why `sdk`'s fixture cannot be one: only the Rust fixture runs as several
/// processes on one ledger (the TypeScript and Python ones keep their key store in the process
/// and reload every record of the ledger at start-up, so two of them can neither share a store
/// nor keep their own).
fn instance_options(sdk: Sdk, config: &Config) -> Result<Vec<String>, FixtureError> {
    if sdk != Sdk::Rust {
        return Err(FixtureError::Cannot(format!(
            "the {} fixture keeps its key store inside its process and reloads the whole ledger: it cannot be two instances sharing a store, nor two with their own (only the Rust fixture can)",
            sdk.as_str()
        )));
    }
    let server = config.server;
    let shared = server.has_store() && config.store() == mcp_once_model::StoreScope::Shared;
    let durable_keys = matches!(server, ServerImpl::KeyDurable | ServerImpl::KeyExpiring | ServerImpl::KeyAfterEffect);
    if shared && !durable_keys {
        return Err(FixtureError::Cannot(format!(
            "the Rust fixture shares a store across processes through the ledger, which {server} does not keep its store in"
        )));
    }
    if server == ServerImpl::DedupByIdDurable {
        return Err(FixtureError::Cannot("the Rust fixture's dedup-by-id-durable keeps one id table per ledger, so two instances on one ledger cannot have their own".into()));
    }
    Ok(if shared { vec!["--shared-store".into()] } else { Vec::new() })
}

/// `more` with `--instance N`.
fn with_instance(more: &[String], instance: u8) -> Vec<String> {
    let mut out = more.to_vec();
    out.extend(["--instance".into(), instance.to_string()]);
    out
}

/// The model's trace for a one-call configuration (see [`Wanted`]).
#[allow(clippy::too_many_arguments)]
pub fn model_trace(
    profile: &str,
    transport: Transport,
    client: ClientPolicy,
    key: KeyLifetime,
    server: ServerImpl,
    retries: u8,
    crashes: u8,
    wanted: Wanted,
) -> Result<(TraceFile, Profile), FixtureError> {
    let profile = Profile::load(profile)?;
    let config = Config::builder(&profile.name)
        .transport(transport)
        .client(client)
        .key(key)
        .server(server)
        .bounds(Bounds { calls: 1, retries, crashes })
        .build();
    let trace = replay_trace(config, &profile, wanted)?.ok_or(FixtureError::NoTrace)?;
    Ok((trace, profile))
}

/// The trace of `scenario` for `sdk`'s server over `transport` (2025-11-25).
pub fn scenario_trace(
    scenario: &Scenario,
    sdk: Sdk,
    transport: Transport,
) -> Result<(TraceFile, Profile), FixtureError> {
    let profile = Profile::load("mcp-2025-11-25")?;
    let trace = scenario.trace(&profile, transport, sdk.server_impl())?.ok_or(FixtureError::NoTrace)?;
    Ok((trace, profile))
}

/// The fixtures' key stores reject a duplicate that arrives while the first request runs
/// (SEP-3182's rule); a profile with another in-progress rule has no fixture that follows it.
fn in_progress_built_in(server: ServerImpl, profile: &Profile) -> Result<(), FixtureError> {
    let k = &profile.knobs;
    let rule = k.idempotency_in_progress.value;
    if server.uses_keys() && k.idempotency_semantics.value == KeySemantics::Dedup && rule != InProgress::Reject {
        return Err(FixtureError::Cannot(format!(
            "the fixture key stores reject a duplicate in progress; profile {} has idempotency_in_progress = {rule}, which no fixture follows",
            profile.name
        )));
    }
    Ok(())
}
