//! The entry points: replay one trace (`mcp-once replay`) and the runtimes it runs on (interrupted
//! by SIGINT or SIGTERM); the probe (`mcp-once probe`) runs on them too.

use crate::replay::driver::replay;
use crate::replay::evidence::{Event, Evidence};
use crate::replay::process;
use crate::replay::types::{revision_for, write_result, ReplayOptions, ReplayResult, ReplayVerdict, Revision};
use anyhow::{anyhow, Result};
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Config, Profile};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A result for a run that ended before it could reach a verdict of its own.
pub fn interrupted(
    trace: &str,
    cell: &Config,
    property: TraceKind,
    options: &ReplayOptions,
    evidence: &Evidence,
    why: &str,
) -> ReplayResult {
    evidence.record(Event::Verdict { verdict: ReplayVerdict::Interrupted, reason: why.into(), effects: None });
    ReplayResult {
        verdict: ReplayVerdict::Interrupted,
        property,
        expected_effects: 0,
        observed_effects: None,
        settled_effects: None,
        reason: why.into(),
        fault_not_made: None,
        evidence: evidence.path().map(PathBuf::from),
        trace: trace.into(),
        cell: Some(cell.clone()),
        target: options.target.describe(),
        revision: options.revision.unwrap_or(Revision::R2025_11_25),
        observer: options.observer.describe(),
        steps: Vec::new(),
        notes: Vec::new(),
        wall_ms: evidence.elapsed_ms(),
        command: options.command.clone(),
    }
}

/// Read a trace file and check it against the model (a trace the model cannot take is refused,
/// not replayed). Returns the trace and the profile it was found under.
pub fn load_trace(path: &Path) -> Result<(TraceFile, Profile)> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| anyhow!("{name}: {e}"))?;
    let trace = TraceFile::parse(&name, &text)?;
    let profile = trace_profile(&trace).map_err(|e| anyhow!("{name}: {e}"))?;
    trace.validate(&name, &profile)?;
    Ok((trace, profile))
}

/// Run `work` to completion on a fresh single-threaded runtime (for callers without one).
pub fn block_on<T>(work: impl std::future::Future<Output = T>) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    Ok(rt.block_on(work))
}

/// Run `work` on a fresh runtime; SIGINT or SIGTERM stops it, kills every server process group
/// the runner started, and yields `None` (the caller reports an interrupted run).
pub fn block_on_interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<Option<T>> {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let out = rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        tokio::select! {
            v = work => Ok::<_, anyhow::Error>(Some(v)),
            _ = int.recv() => Ok(None),
            _ = term.recv() => Ok(None),
        }
    });
    process::kill_all_groups();
    rt.shutdown_timeout(Duration::from_secs(2));
    out
}

/// `mcp-once replay`: load the trace, replay it, write `result.json` beside the evidence, and
/// return the result (an interrupted run returns an `interrupted` result with the evidence so far).
pub fn run_replay(path: &Path, options: ReplayOptions) -> Result<ReplayResult> {
    let (trace, profile) = load_trace(path)?;
    let evidence = Evidence::new(options.evidence_dir.as_deref()).map_err(|e| anyhow!("--evidence: {e}"))?;
    let name = path.display().to_string();
    let result =
        match block_on_interruptible(replay(&trace, &name, profile.clone(), options.clone(), evidence.clone()))? {
            Some(r) => r,
            None => {
                let mut r = interrupted(
                    &name,
                    &trace.config,
                    trace.property,
                    &options,
                    &evidence,
                    "interrupted by a signal; every server process group was killed",
                );
                r.revision = revision_for(&options, &profile);
                r
            }
        };
    write_result(&result)?;
    Ok(result)
}

/// The profile a trace was found under.
fn trace_profile(trace: &TraceFile) -> Result<Profile, String> {
    let origin = trace.meta.pointer("/profile/origin").and_then(Value::as_str).unwrap_or("");
    let by_origin = origin.strip_prefix("builtin:").map(str::to_string).unwrap_or_else(|| origin.to_string());
    Profile::load(&trace.config.profile)
        .or_else(|_| Profile::load(&by_origin))
        .map_err(|e| format!("cannot load the trace's profile `{}`: {e}", trace.config.profile))
}
