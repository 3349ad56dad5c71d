//! What the runner is given (the target, the options) and what it returns (the verdict, the
//! step records, the result), shared by the driver, the probe and the entry points.

use crate::replay::observer;
use crate::replay::process::{split_command, CommandLineError, LaunchSpec};
use anyhow::{anyhow, Result};
use mcp_once_model::trace::TraceKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The server under test.
#[derive(Clone, Debug)]
pub enum Target {
    /// A stdio server the runner starts (and kills, and restarts) itself.
    Stdio(LaunchSpec),
    /// A Streamable HTTP endpoint, with the command that starts it when the runner may kill
    /// and restart it.
    Http {
        /// The endpoint URL.
        url: String,
        /// How to start the server (None: it is already running and cannot be restarted).
        launch: Option<LaunchSpec>,
    },
}

/// Why a target could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// The server's (or its launcher's) command line.
    #[error(transparent)]
    Command(#[from] CommandLineError),
    /// The endpoint is not an http(s) URL with a host.
    #[error("`{url}` is not an http(s) URL with a host{}", why.as_ref().map(|w| format!(" ({w})")).unwrap_or_default())]
    NotHttpUrl {
        /// What was given.
        url: String,
        /// What the URL parser said, when it refused it.
        why: Option<String>,
    },
}

impl Target {
    /// A stdio server started from a command line (split as a POSIX shell quotes it, never run
    /// by one), with extra environment variables and a working directory.
    pub fn stdio(command: &str, env: Vec<(String, String)>, cwd: Option<PathBuf>) -> Result<Target, TargetError> {
        Ok(Target::Stdio(LaunchSpec { argv: split_command(command)?, env, cwd }))
    }

    /// A Streamable HTTP endpoint; with `launch`, the command line that starts its server (run
    /// with `env` in `cwd`), so that the runner may kill and restart it.
    pub fn http(
        url: &str,
        launch: Option<&str>,
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    ) -> Result<Target, TargetError> {
        let not_http = |why: Option<String>| TargetError::NotHttpUrl { url: url.to_string(), why };
        let parsed = reqwest::Url::parse(url).map_err(|e| not_http(Some(e.to_string())))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(not_http(None));
        }
        let launch = launch.map(|l| split_command(l).map(|argv| LaunchSpec { argv, env, cwd })).transpose()?;
        Ok(Target::Http { url: url.to_string(), launch })
    }

    /// The model transport this target speaks.
    pub fn transport(&self) -> mcp_once_model::Transport {
        match self {
            Target::Stdio(_) => mcp_once_model::Transport::Stdio,
            Target::Http { .. } => mcp_once_model::Transport::Http,
        }
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        match self {
            Target::Stdio(l) => format!("stdio: {}", l.argv.join(" ")),
            Target::Http { url, launch: Some(l) } => format!("http: {url} (started by {})", l.argv.join(" ")),
            Target::Http { url, launch: None } => format!("http: {url}"),
        }
    }
}

/// Where the idempotency key goes when a trace uses one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyAt {
    /// `params.idempotencyKey` (SEP-3182).
    Params,
    /// `params._meta[NAME]`.
    Meta(String),
    /// `params.arguments[NAME]`.
    Arg(String),
}

impl std::str::FromStr for KeyAt {
    type Err = mcp_once_model::BadValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once(':') {
            None if s == "params" => Ok(KeyAt::Params),
            Some(("meta", name)) if !name.is_empty() => Ok(KeyAt::Meta(name.into())),
            Some(("arg", name)) if !name.is_empty() => Ok(KeyAt::Arg(name.into())),
            _ => Err(mcp_once_model::BadValue::new(s, format!("`{s}` is not params, meta:NAME or arg:NAME"))),
        }
    }
}

/// The wire protocol revision the runner speaks: the model's revisions.
pub use mcp_once_model::Revision;

/// Everything a replay (or a probe) needs besides the trace.
#[derive(Clone, Debug)]
pub struct ReplayOptions {
    /// The server under test.
    pub target: Target,
    /// The side-effecting tool to call.
    pub tool: String,
    /// Its arguments (a JSON object).
    pub args: serde_json::Map<String, Value>,
    /// Where a key goes.
    pub key_at: KeyAt,
    /// How effects are counted.
    pub observer: observer::Observer,
    /// Wire revision (None: the trace's profile's revision).
    pub revision: Option<Revision>,
    /// Bound on each awaited step.
    pub step_timeout: Duration,
    /// Bound on a server start (process start to an answered handshake).
    pub start_timeout: Duration,
    /// How long a held step is held (see [`pacing`]).
    pub window: Duration,
    /// How long a server is given to exit after SIGTERM before it is SIGKILLed, when the runner
    /// stops it at the end of a run.
    pub stop_grace: Duration,
    /// Whether to ask the server to hold steps (when its tool offers delay arguments).
    pub pace: bool,
    /// Arguments, merged over `args`, that keep the tool running after its effect (a sleep, a
    /// slow path): how the in-progress key check keeps a call in progress on a tool without
    /// delay arguments. None: only the delay arguments can.
    pub hold_args: Option<serde_json::Map<String, Value>>,
    /// Where to write the evidence log and the result.
    pub evidence_dir: Option<PathBuf>,
    /// How long the server keeps a key record, when the runner set it (the `key-expiring`
    /// fixture's `--retention-ms`): a `KeyExpires` step waits until that long has passed since
    /// the record was written. None: the runner cannot make a record expire.
    pub key_retention: Option<Duration>,
    /// stdio: skip lines of stdout that are not JSON at all (a banner, a log line) instead of
    /// taking them as a breach of the protocol; they are counted and quoted in the evidence.
    pub skip_non_json: bool,
    /// The further server instances of a deployment behind a load balancer (instance 1, ...),
    /// for a trace of the model's `--instances 2`: each request goes to the instance the
    /// trace's `ServerReceive` names. Empty: one server, `target`.
    pub more_instances: Vec<Target>,
    /// The command line that asked for this replay, as given, recorded in the result (None:
    /// not run from `mcp-once replay`).
    pub command: Option<crate::replay::command::ReplayCommand>,
}

/// A replay's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayVerdict {
    /// The steps were realised and the server produced the model's effects: the property is
    /// violated for real.
    Confirmed,
    /// The steps were realised and the server did not do the effect the violation needs.
    NotReproduced,
    /// A worst case of at most one effect per call ran as the model has it: it reproduced the
    /// effects, and they show no duplicate to confirm.
    Ran,
    /// A step could not be realised (named in the reason).
    Diverged,
    /// The observer could not tell.
    Inconclusive,
    /// The runner was interrupted (SIGINT, SIGTERM).
    Interrupted,
}

impl ReplayVerdict {
    /// The process exit code: 1 confirmed, 0 not reproduced or ran, 2 otherwise.
    pub fn exit_code(self) -> u8 {
        match self {
            ReplayVerdict::Confirmed => 1,
            ReplayVerdict::NotReproduced | ReplayVerdict::Ran => 0,
            ReplayVerdict::Diverged | ReplayVerdict::Inconclusive | ReplayVerdict::Interrupted => 2,
        }
    }

    /// The verdict's name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayVerdict::Confirmed => "confirmed",
            ReplayVerdict::NotReproduced => "not-reproduced",
            ReplayVerdict::Ran => "ran",
            ReplayVerdict::Diverged => "diverged",
            ReplayVerdict::Inconclusive => "inconclusive",
            ReplayVerdict::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for ReplayVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the runner made a server crash between an attempt's effect and its response.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CrashMethod {
    /// The tool's own delay arguments held the response (the ledger fixtures).
    DelayArgs,
    /// strace held the server's write of the response to its stdout (stdio, no hooks needed).
    Ptrace,
    /// Nothing held the response: once the observer showed the effect the group was killed,
    /// and a response that had already reached the runner was treated as lost.
    EmulatedLoss,
}

/// How a trace step was realised.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    /// The runner did it (a client, transport or environment step).
    Driven,
    /// The runner saw the server do it (a response frame, the observer's count, a process exit).
    Observed,
    /// Written to the server; its commit or response confirms it later.
    Delivered,
    /// Internal to the server, with nothing to see at the time (a key stored).
    Unobserved,
    /// It could not be realised (the note says why).
    Failed,
}

impl StepStatus {
    /// The status's name.
    pub fn as_str(self) -> &'static str {
        match self {
            StepStatus::Driven => "driven",
            StepStatus::Observed => "observed",
            StepStatus::Delivered => "delivered",
            StepStatus::Unobserved => "unobserved",
            StepStatus::Failed => "failed",
        }
    }
}

impl fmt::Display for StepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// How one trace step went.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    /// 1-based step number in the trace.
    pub step: usize,
    /// The action.
    pub action: String,
    /// How it was realised.
    pub status: StepStatus,
    /// Milliseconds since the run started, when the step was done or seen.
    pub t_ms: f64,
    /// What the runner saw or did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The result of a replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// The verdict.
    pub verdict: ReplayVerdict,
    /// What the trace shows: the property it violates, or the worst case.
    pub property: TraceKind,
    /// Effects in the trace's last state.
    pub expected_effects: u64,
    /// Effects the observer counted when the last step was done (None if it could not tell).
    pub observed_effects: Option<i64>,
    /// Effects counted after the server was stopped, if that differs (held attempts finishing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled_effects: Option<i64>,
    /// One line: why this verdict.
    pub reason: String,
    /// The fault the trace needs that the runner could not make, when that stopped its steps
    /// (a verdict then comes from what the observer counted alone, never from that fault).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault_not_made: Option<String>,
    /// The evidence log, if written.
    pub evidence: Option<PathBuf>,
    /// The trace file.
    pub trace: String,
    /// The trace's cell (its configuration), so that evidence can be matched to its trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cell: Option<mcp_once_model::Config>,
    /// The server under test.
    pub target: String,
    /// The wire revision spoken.
    pub revision: Revision,
    /// The observer.
    pub observer: String,
    /// Each step.
    pub steps: Vec<StepRecord>,
    /// Things the runner noticed (pacing, reorderings, extra effects).
    pub notes: Vec<String>,
    /// Wall time in milliseconds.
    pub wall_ms: f64,
    /// The `mcp-once replay` command line that made this result, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<crate::replay::command::ReplayCommand>,
}

impl ReplayResult {
    /// The JSON form (what `result.json` holds).
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("results serialise")
    }
}

/// Write `result.json` next to the evidence log, if there is one.
pub fn write_result(result: &ReplayResult) -> Result<()> {
    if let Some(log) = &result.evidence {
        let dir = log.parent().ok_or_else(|| anyhow!("evidence path has no folder"))?;
        std::fs::write(dir.join(RESULT_FILE), serde_json::to_string_pretty(&result.to_json())? + "\n")?;
    }
    Ok(())
}

/// Name of the result file inside the evidence folder.
pub const RESULT_FILE: &str = "result.json";

/// Read `dir/result.json` as `mcp-once replay --evidence DIR` writes it.
pub fn read_result(dir: &std::path::Path) -> Result<ReplayResult> {
    use anyhow::Context;
    let path = dir.join(RESULT_FILE);
    let text = std::fs::read_to_string(&path).with_context(|| format!("{}: cannot read", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a replay result", path.display()))
}

/// The wire revision for a profile, unless the options name one.
pub fn revision_for(options: &ReplayOptions, profile: &mcp_once_model::Profile) -> Revision {
    options.revision.unwrap_or(profile.revision)
}
