//! Argument groups that several commands share: the configuration flags (`check`, `explore`),
//! the output format (`check`, `matrix`, `diff`), the property selection, and the server under
//! test (`replay`, `probe`).

use crate::cells::{builtins, profile_for};
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::replay::command::{Flag, ReplayCommand};
use mcp_once_conformance::replay::observer::{Observer, Source};
use mcp_once_conformance::replay::{KeyAt, ReplayOptions, Revision, Target, TargetError};
use mcp_once_model::budget::{available_bytes, parse_size};
use mcp_once_model::{
    Annotation, Budget, Cancellation, ClientPolicy, Config, HandlerKind, KeyLifetime, KeyScope, Profile, PropertyKind,
    Resumption, ServerImpl, StoreScope, TaskRecords, Tasks, Transport,
};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// A value parsed with its `FromStr` (the model's names), for clap.
pub fn parse<T: std::str::FromStr<Err = mcp_once_model::BadValue>>(s: &str) -> Result<T, mcp_once_model::BadValue> {
    s.parse()
}

/// The flags that choose one configuration; what is not given takes its default.
#[derive(Args)]
pub struct ConfigArgs {
    /// Profile: a built-in name (mcp-2025-11-25, mcp-2026-07-28, sep-3182, outcome-query) or a file.
    #[arg(long)]
    pub profile: Option<String>,
    /// Transport: stdio or http.
    #[arg(long, value_parser = parse::<Transport>)]
    pub transport: Option<Transport>,
    /// Client policy: no-retry, retry-on-timeout, retry-on-disconnect, retry-any, framework-retry.
    #[arg(long, value_parser = parse::<ClientPolicy>)]
    pub client: Option<ClientPolicy>,
    /// Idempotency key lifetime: none, per-call, per-attempt, per-step.
    #[arg(long, value_parser = parse::<KeyLifetime>)]
    pub key: Option<KeyLifetime>,
    /// Server: plain, honours-cancel, dedup-by-id, dedup-by-id-durable, key-volatile, key-durable, key-after-effect, key-expiring,
    /// validates-task-id (outcome-query only: SEP-1686's receiver that rejects a task id it has a record of, from receipt).
    /// Each name is a preset of (store, cancellation): plain = no store + ignores,
    /// honours-cancel = no store + before-effect, every other = its store + ignores.
    #[arg(long, value_parser = parse::<ServerImpl>)]
    pub server: Option<ServerImpl>,
    /// What the server's handler does on a cancellation, overriding the --server preset's:
    /// ignores, before-effect (dropped if it arrives before the effect), interrupts (stopped
    /// anywhere, between the effect and the key record too).
    #[arg(long, value_parser = parse::<Cancellation>)]
    pub cancel: Option<Cancellation>,
    /// The tool's handler under multi round-trip requests (2026-07-28 and proposals on it):
    /// effect-only (default), input-after-effect (takes its effect, then asks for input, and
    /// takes it again on every round), input-before-effect (asks first, takes its effect in the
    /// last round), input-after-effect-stateful (carries "effect done" in requestState),
    /// input-before-effect-single-use (asks first; its server refuses a requestState an earlier
    /// effect consumed, as mrtr.mdx requires of servers whose requestState is single-use).
    #[arg(long, value_parser = parse::<HandlerKind>)]
    pub handler: Option<HandlerKind>,
    /// Input rounds of a handler that asks for input (1 to 2; default 1).
    #[arg(long)]
    pub rounds: Option<u8>,
    /// Server instances behind a load balancer that sends each request to any running one
    /// (1 or 2; default 1; 2 needs HTTP and a profile with server_instances = several).
    #[arg(long)]
    pub instances: Option<u8>,
    /// Where several instances keep their store: shared (one store outside the processes;
    /// the default for durable stores) or per-instance (the default, and the only choice, for
    /// in-memory stores).
    #[arg(long, value_parser = parse::<StoreScope>)]
    pub store: Option<StoreScope>,
    /// What the tool's annotations say, read by a profile's rule on retries after a timeout
    /// (knob retry_after_timeout): none (default), idempotent (idempotentHint), read-only
    /// (readOnlyHint). The model's tool takes its effect on every run whatever it says: the
    /// annotations are hints.
    #[arg(long, value_parser = parse::<Annotation>)]
    pub annotation: Option<Annotation>,
    /// Whether broken SSE response streams are resumed (HTTP under a profile where a server
    /// MAY make them resumable: 2025-11-25): none (default: the server does not), offered (it
    /// does, but the client sends its request again rather than reconnect with Last-Event-ID),
    /// used (it does and the client reconnects: a break redelivers the response while the
    /// server process lives).
    #[arg(long, value_parser = parse::<Resumption>)]
    pub resumption: Option<Resumption>,
    /// Whether tools/call is task-augmented (under a profile with tasks: 2025-11-25,
    /// 2026-07-28): none (default), augmented (the server answers with a CreateTaskResult
    /// naming a task it created, the tool runs in the task, and a client that read the
    /// CreateTaskResult polls the task instead of retrying).
    #[arg(long, value_parser = parse::<Tasks>)]
    pub tasks: Option<Tasks>,
    /// With --tasks augmented, where the server keeps a task's record: durable (default: before
    /// the CreateTaskResult, as SEP-2663 requires; it and a completed task's result survive a
    /// crash) or volatile (in memory: lost with the process).
    #[arg(long, value_parser = parse::<TaskRecords>)]
    pub task_records: Option<TaskRecords>,
    /// Logical calls (1 to 4).
    #[arg(long)]
    pub calls: Option<u8>,
    /// Retries, or framework re-runs, per call (0 to 3).
    #[arg(long)]
    pub retries: Option<u8>,
    /// Server crashes (0 to 3).
    #[arg(long)]
    pub crashes: Option<u8>,
    /// Times the server may terminate the client's HTTP session (0 to 2; default 0; needs
    /// HTTP and a profile with session_termination = server-may-terminate: 2025-11-25).
    #[arg(long)]
    pub session_terminations: Option<u8>,
    #[command(flatten)]
    pub callers: CallerArgs,
}

/// The callers axis, shared by the commands that check cells (`check`, `explore`, `matrix`,
/// `diff`, `confirm`).
#[derive(Args, Clone, Copy, Default)]
pub struct CallerArgs {
    /// Callers sharing the server (1 or 2; default 1). With 2, call i is caller i mod 2's, and
    /// caller 1's calls present the idempotency key of caller 0's call before them (a key
    /// copied, guessed or derived alike: honest UUID keys never collide); needs a key-store
    /// server, a key, a profile with keys and at least 2 calls.
    #[arg(long)]
    pub callers: Option<u8>,
    /// With --callers 2, the scope of the server's key records: per-caller (a key is matched
    /// only against the same caller's requests, as SEP-3182 requires) or global (one record
    /// per key: the other caller is answered from it). Default: the profile's
    /// (idempotency_key_scope; global where it says nothing).
    #[arg(long, value_parser = parse::<KeyScope>)]
    pub key_scope: Option<KeyScope>,
}

impl CallerArgs {
    /// Put `c` under the flags given (what is not given keeps the cell's value).
    pub fn apply(&self, mut c: Config) -> Config {
        c.callers = self.callers.unwrap_or(c.callers);
        c.key_scope = self.key_scope.or(c.key_scope);
        c
    }

    /// The flags given, as written (for messages that name them).
    pub fn flags(&self) -> Vec<String> {
        let callers = self.callers.map(|v| format!("--callers {v}"));
        let scope = self.key_scope.map(|v| format!("--key-scope {v}"));
        callers.into_iter().chain(scope).collect()
    }

    /// Whether any was given.
    pub fn any(&self) -> bool {
        self.callers.is_some() || self.key_scope.is_some()
    }
}

impl ConfigArgs {
    /// Whether any configuration flag other than `--profile` was given.
    pub fn any_but_profile(&self) -> bool {
        self.transport.is_some()
            || self.client.is_some()
            || self.key.is_some()
            || self.server.is_some()
            || self.cancel.is_some()
            || self.handler.is_some()
            || self.rounds.is_some()
            || self.instances.is_some()
            || self.store.is_some()
            || self.annotation.is_some()
            || self.resumption.is_some()
            || self.tasks.is_some()
            || self.task_records.is_some()
            || self.calls.is_some()
            || self.retries.is_some()
            || self.crashes.is_some()
            || self.session_terminations.is_some()
            || self.callers.any()
    }

    /// The configuration, with defaults for what is not given, and its profile.
    pub fn resolve(&self) -> Result<(Config, Arc<Profile>)> {
        let mut loaded = builtins();
        let profile_name = self.profile.clone().unwrap_or_else(|| "mcp-2026-07-28".into());
        let profile = profile_for(&profile_name, &mut loaded)?;
        let config = Config::builder(&profile_name)
            .transport(self.transport)
            .client(self.client)
            .key(self.key)
            .server(self.server)
            .cancel(self.cancel)
            .handler(self.handler)
            .rounds(self.rounds)
            .instances(self.instances)
            .store(self.store)
            .annotation(self.annotation)
            .resumption(self.resumption)
            .tasks(self.tasks)
            .task_records(self.task_records)
            .calls(self.calls)
            .retries(self.retries)
            .crashes(self.crashes)
            .session_terminations(self.session_terminations)
            .callers(self.callers.callers)
            .key_scope(self.callers.key_scope)
            .build()
            .normalised();
        config.applicable(&profile).map_err(|reason| anyhow!("configuration does not apply: {reason}"))?;
        Ok((config, Arc::new(profile)))
    }
}

/// The share of the memory available at start that a search may use by default (the rest is
/// left to the system and to other work on the machine).
const DEFAULT_MEMORY_SHARE: (u64, u64) = (3, 4);

/// Where every search stops at the latest, and on how many threads it runs (`check`, `matrix`).
#[derive(Args, Clone)]
pub struct BudgetArgs {
    /// Stop a search before the process's resident memory passes SIZE (e.g. 512M, 4G; default:
    /// 3/4 of the memory available when mcp-once starts, from /proc/meminfo).
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    max_memory: Option<u64>,
    /// Stop a search after N unique states (default: no limit).
    #[arg(long, value_name = "N")]
    max_states: Option<usize>,
    /// Check only the states within N steps of the initial state (default: no bound); a
    /// property not violated within them is unknown, not holding.
    #[arg(long, value_name = "N")]
    max_depth: Option<usize>,
    /// At the memory budget, go on with the search on disk in DIR (unnamed temporary files,
    /// removed however mcp-once ends) instead of stopping; the verdicts and traces are the same.
    #[arg(long, value_name = "DIR")]
    spill_dir: Option<std::path::PathBuf>,
    /// With --spill-dir: stop before the spilled files pass SIZE (default: 3/4 of the space
    /// free in DIR when the search starts); searches that run at once share it.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, requires = "spill_dir")]
    max_disk: Option<u64>,
    /// Search N cells at a time (default: one per core); each search runs on one thread. The
    /// answers are the same for every N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
}

impl BudgetArgs {
    /// The threads to search on: `--threads`, or one per core.
    pub fn threads(&self) -> usize {
        self.threads.map_or_else(crate::cells::threads, usize::from)
    }

    /// The budget: the flags, with the default memory limit when `--max-memory` is not given.
    pub fn budget(&self) -> Result<Budget> {
        let spill_dir = match &self.spill_dir {
            None => None,
            Some(dir) if dir.is_dir() => Some(&*Box::leak(dir.clone().into_boxed_path())),
            Some(dir) => return Err(anyhow!("--spill-dir {}: not a folder", dir.display())),
        };
        let max_disk = self.max_disk.or_else(|| spill_dir.and_then(|d| free_bytes(d).map(|b| b / 4 * 3)));
        Ok(Budget {
            max_states: self.max_states,
            max_depth: self.max_depth,
            max_memory: self.max_memory.or_else(default_memory),
            spill_dir,
            max_disk,
            shared_by: 1,
        })
    }
}

/// Bytes free for an unprivileged user on the file system of `dir`.
pub fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    Some(s.f_bavail.saturating_mul(s.f_frsize))
}

/// The default memory budget: a share of `MemAvailable` (none if it cannot be read).
pub fn default_memory() -> Option<u64> {
    available_bytes().map(|b| b / DEFAULT_MEMORY_SHARE.1 * DEFAULT_MEMORY_SHARE.0)
}

/// The properties a `--property` value names: one, or every one for `all`.
pub fn properties(arg: &str) -> Result<Vec<PropertyKind>> {
    if arg == "all" {
        return Ok(PropertyKind::ALL.to_vec());
    }
    Ok(vec![arg.parse::<PropertyKind>().map_err(|e| anyhow!("--property: {e}"))?])
}

/// `--step-timeout-ms`'s default.
const STEP_TIMEOUT_MS: u64 = 10_000;
/// `--start-timeout-ms`'s default.
const START_TIMEOUT_MS: u64 = 20_000;
/// `--window-ms`'s default.
const WINDOW_MS: u64 = 1_000;
/// `--stop-grace-ms`'s default.
const STOP_GRACE_MS: u64 = 3_000;

/// The server under test, what to call on it, and how to count effects.
#[derive(Args, Clone)]
pub struct TargetArgs {
    /// A stdio server: the command that starts it (split into argv, no shell; started directly
    /// in its own process group, so SIGKILL reaches the server itself).
    #[arg(long, value_name = "CMD")]
    stdio: Option<String>,
    /// A Streamable HTTP server: its endpoint URL.
    #[arg(long, value_name = "URL")]
    http: Option<String>,
    /// With --http: the command that starts the server, so the runner can kill and restart it.
    #[arg(long, value_name = "CMD")]
    launch: Option<String>,
    /// Environment for the started server (KEY=VALUE; repeatable).
    #[arg(long = "env", value_name = "KEY=VALUE")]
    env: Vec<String>,
    /// Working directory for the started server.
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The side-effecting tool to call.
    #[arg(long, default_value = "charge")]
    tool: String,
    /// Its arguments, a JSON object.
    #[arg(long, default_value = "{}", value_name = "JSON")]
    args: String,
    /// Where an idempotency key goes: params (params.idempotencyKey), meta:NAME or arg:NAME
    /// (replay default: params; probe: given = also run the SEP-3182 key checks).
    #[arg(long, value_parser = parse::<KeyAt>)]
    pub key_at: Option<KeyAt>,
    /// How effects are counted (required): ledger:PATH (JSON lines), cmd:"CMD" (prints a number; split
    /// into argv with no shell, so no pipes or `<`), sh:"SCRIPT" (the same through `sh -c`,
    /// e.g. sh:"wc -l < outbox.txt") or tool:NAME[:/json/pointer|:re:REGEX] (a tool on the
    /// server; default pointer /count).
    // Required (checked in `observer`), but not marked so for clap: `confirm` takes these
    // options only when a server is given.
    #[arg(long, value_name = "OBSERVER")]
    observe: Option<String>,
    /// ledger: count only lines whose FIELD equals the JSON value.
    #[arg(long, value_name = "FIELD=JSON")]
    observe_filter: Option<String>,
    /// tool: the observer tool's arguments (a JSON object).
    #[arg(long, value_name = "JSON")]
    observe_args: Option<String>,
    /// How much a reading moves per effect (1 for a count; -42 for a balance that drops by 42).
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
    observe_step: f64,
    /// Protocol revision to speak (default: the trace profile's): 2025-11-25 or 2026-07-28.
    #[arg(long, value_parser = parse::<Revision>)]
    revision: Option<Revision>,
    /// Bound on each awaited step, in milliseconds.
    #[arg(long, default_value_t = STEP_TIMEOUT_MS)]
    step_timeout_ms: u64,
    /// Bound on a server start (process start to an answered handshake), in milliseconds.
    #[arg(long, default_value_t = START_TIMEOUT_MS)]
    start_timeout_ms: u64,
    /// How long the server is asked to hold a step that must wait for others (ms).
    #[arg(long, default_value_t = WINDOW_MS)]
    window_ms: u64,
    /// When the runner stops a server: how long after SIGTERM before SIGKILL (ms).
    #[arg(long, default_value_t = STOP_GRACE_MS)]
    stop_grace_ms: u64,
    /// Arguments (a JSON object, merged over --args) that keep the tool running after its
    /// effect, e.g. '{"sleep_after_s":3}': the in-progress key check sends its first call with
    /// them when the tool takes no delay_after_ms (without them that check is untestable).
    #[arg(long, value_name = "JSON")]
    hold_args: Option<String>,
    /// Do not pass delay_before_ms / delay_after_ms to the tool, even if it takes them.
    #[arg(long)]
    no_pace: bool,
    /// stdio: skip lines the server writes to stdout that are not JSON at all (a banner, a log
    /// line) instead of stopping at them; the probe reports them as a WARNING check.
    #[arg(long)]
    skip_non_json: bool,
}

impl TargetArgs {
    /// The runner's options (no evidence folder: the command that runs them names it).
    pub fn options(&self) -> Result<ReplayOptions> {
        let target = self.target()?;
        let args: serde_json::Value = serde_json::from_str(&self.args).map_err(|e| anyhow!("--args: not JSON: {e}"))?;
        let serde_json::Value::Object(args) = args else { return Err(anyhow!("--args: must be a JSON object")) };
        let hold_args = match self.hold_args.as_deref().map(serde_json::from_str::<serde_json::Value>) {
            None => None,
            Some(Ok(serde_json::Value::Object(h))) => Some(h),
            Some(Ok(_)) => return Err(anyhow!("--hold-args: must be a JSON object")),
            Some(Err(e)) => return Err(anyhow!("--hold-args: not JSON: {e}")),
        };
        let observer = self.observer()?;
        Ok(ReplayOptions {
            target,
            tool: self.tool.clone(),
            args,
            key_at: self.key_at.clone().unwrap_or(KeyAt::Params),
            observer,
            revision: self.revision,
            step_timeout: Duration::from_millis(self.step_timeout_ms),
            start_timeout: Duration::from_millis(self.start_timeout_ms),
            window: Duration::from_millis(self.window_ms),
            stop_grace: Duration::from_millis(self.stop_grace_ms),
            pace: !self.no_pace,
            hold_args,
            evidence_dir: None,
            key_retention: None,
            skip_non_json: self.skip_non_json,
            more_instances: Vec::new(),
            command: None,
        })
    }

    /// The command line as given, for `result.json`: what a report's Reproduce block prints.
    /// Timing flags are recorded where they differ from their defaults.
    pub fn command(&self, trace: &std::path::Path, evidence: Option<&std::path::Path>) -> ReplayCommand {
        let mut flags = Vec::new();
        let mut add = |name: &str, value: Option<String>| flags.extend(value.map(|v| Flag::with(name, v)));
        add("--stdio", self.stdio.clone());
        add("--http", self.http.clone());
        add("--launch", self.launch.clone());
        for e in &self.env {
            add("--env", Some(e.clone()));
        }
        add("--cwd", self.cwd.as_ref().map(|d| d.display().to_string()));
        add("--tool", Some(self.tool.clone()));
        add("--args", Some(self.args.clone()));
        add("--key-at", self.key_at.as_ref().map(key_at_text));
        add("--observe", self.observe.clone());
        add("--observe-filter", self.observe_filter.clone());
        add("--observe-args", self.observe_args.clone());
        add("--observe-step", (self.observe_step != 1.0).then(|| self.observe_step.to_string()));
        add("--revision", self.revision.map(|r| r.as_str().to_string()));
        for (name, ms, default) in [
            ("--step-timeout-ms", self.step_timeout_ms, STEP_TIMEOUT_MS),
            ("--start-timeout-ms", self.start_timeout_ms, START_TIMEOUT_MS),
            ("--window-ms", self.window_ms, WINDOW_MS),
            ("--stop-grace-ms", self.stop_grace_ms, STOP_GRACE_MS),
        ] {
            add(name, (ms != default).then(|| ms.to_string()));
        }
        add("--hold-args", self.hold_args.clone());
        for (name, on) in [("--no-pace", self.no_pace), ("--skip-non-json", self.skip_non_json)] {
            if on {
                flags.push(Flag::switch(name));
            }
        }
        ReplayCommand {
            cwd: std::env::current_dir().and_then(std::path::absolute).unwrap_or_default(),
            trace: trace.display().to_string(),
            flags,
            evidence: evidence.map(|d| d.display().to_string()),
        }
    }

    /// The server under test, from `--stdio` or `--http` (with `--launch`), `--env` and `--cwd`.
    fn target(&self) -> Result<Target> {
        let mut env = Vec::new();
        for e in &self.env {
            let (k, v) = e.split_once('=').ok_or_else(|| anyhow!("--env: `{e}` is not KEY=VALUE"))?;
            env.push((k.to_string(), v.to_string()));
        }
        let cwd = self.cwd.clone();
        match (&self.stdio, &self.http) {
            (Some(_), None) if self.launch.is_some() => Err(anyhow!("--launch goes with --http, not --stdio")),
            (Some(cmd), None) => Target::stdio(cmd, env, cwd).map_err(|e| anyhow!("--stdio: {e}")),
            (None, Some(url)) => Target::http(url, self.launch.as_deref(), env, cwd).map_err(|e| match e {
                TargetError::Command(e) => anyhow!("--launch: {e}"),
                e @ TargetError::NotHttpUrl { .. } => anyhow!("--http: {e}"),
            }),
            (Some(_), Some(_)) => Err(anyhow!("give either --stdio or --http, not both")),
            (None, None) => Err(anyhow!("give the server: --stdio \"CMD\" or --http URL [--launch \"CMD\"]")),
        }
    }

    /// How effects are counted, from `--observe`, `--observe-filter`, `--observe-args` and
    /// `--observe-step`.
    fn observer(&self) -> Result<Observer> {
        let observe = self.observe.as_deref().ok_or_else(|| {
            anyhow!(
                "--observe is required: how effects are counted (ledger:PATH, cmd:\"CMD\", sh:\"SCRIPT\" or tool:NAME)"
            )
        })?;
        let mut source = Source::parse(observe).map_err(|e| anyhow!("--observe: {e}"))?;
        match (&mut source, &self.observe_filter) {
            (_, None) => {}
            (Source::Ledger { filter, .. }, Some(f)) => {
                let (field, value) =
                    f.split_once('=').ok_or_else(|| anyhow!("--observe-filter: `{f}` is not FIELD=JSON"))?;
                let value = serde_json::from_str(value)
                    .map_err(|e| anyhow!("--observe-filter: the value of `{field}` is not JSON: {e}"))?;
                *filter = Some((field.to_string(), value));
            }
            (_, Some(_)) => return Err(anyhow!("--observe-filter applies to ledger: observers only")),
        }
        match (&mut source, &self.observe_args) {
            (_, None) => {}
            (Source::Tool { args, .. }, Some(a)) => {
                *args = serde_json::from_str(a).map_err(|e| anyhow!("--observe-args: not JSON: {e}"))?;
                if !args.is_object() {
                    return Err(anyhow!("--observe-args: must be a JSON object"));
                }
            }
            (_, Some(_)) => return Err(anyhow!("--observe-args applies to tool: observers only")),
        }
        Observer::new(source, self.observe_step).map_err(|e| anyhow!("--observe-step: {e}"))
    }
}

/// `--key-at`'s value as a user types it.
fn key_at_text(k: &KeyAt) -> String {
    match k {
        KeyAt::Params => "params".into(),
        KeyAt::Meta(name) => format!("meta:{name}"),
        KeyAt::Arg(name) => format!("arg:{name}"),
    }
}

/// `--summary FILE`, of the commands a CI runs (`probe`, `confirm`, `probe-client`).
#[derive(Args)]
pub struct SummaryArgs {
    /// Append a short Markdown summary (counts passed, failed and skipped; the failures and the
    /// skipped checks with their reasons) to this file, as a GitHub Actions job summary is:
    /// `--summary "$GITHUB_STEP_SUMMARY"`
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
}
