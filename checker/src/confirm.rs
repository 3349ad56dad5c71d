//! `mcp-once confirm`'s work: every counterexample the search of `check` finds in the chosen
//! cells (the shortest per violated property, and the worst case), replayed on the fixture
//! variant that implements the cell's server, over the cell's transport and revision, on each
//! SDK asked for, `jobs` replays at a time; or, for a server given by a command or URL (one
//! nobody here wrote), on that server, one replay at a time, with the crash points the runner
//! makes on any server.
//!
//! Counterexamples go from the search to the runner as types (`TraceFile::from_counterexample`,
//! no file written and read back). Each replay has its own folder (ledger, evidence,
//! `result.json`) and, over HTTP, its own free loopback port. A replay that cannot run (an SDK
//! that cannot be the cell's server, or does not speak its revision; a fixture not installed)
//! is `inconclusive` with the reason, never left out and never a pass. SIGINT or SIGTERM kills
//! every server process group the runner started; replays under way or not yet started are
//! `interrupted`.

use crate::cells::{cell_name, Cell};
use mcp_once_conformance::replay::confirmed_trace::write_confirmed_trace;
use mcp_once_conformance::replay::evidence::Evidence;
use mcp_once_conformance::replay::sdk_fixtures::{FixturePaths, Sdk};
use mcp_once_conformance::replay::{process, replay, write_result, ReplayOptions, ReplayVerdict};
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Config, Profile, ServerImpl};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

/// One counterexample to replay on one SDK.
pub struct Job {
    /// The cell it was found in.
    pub config: Config,
    /// The cell's profile (its revision is the one spoken).
    pub profile: Arc<Profile>,
    /// Which trace: a property's counterexample or the worst case.
    pub kind: TraceKind,
    /// The trace, typed.
    pub trace: TraceFile,
    /// Where it is replayed.
    pub on: Replayer,
}

/// Where a counterexample is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replayer {
    /// On this SDK's fixture variant for the cell's server.
    Fixture(Sdk),
    /// On the server given by `--stdio` or `--http` (the same for every cell).
    Server,
}

impl Replayer {
    /// Its name in reports: the SDK's (`rust`, `typescript`, `python`) or `server`.
    pub fn name(self) -> &'static str {
        match self {
            Replayer::Fixture(sdk) => sdk.as_str(),
            Replayer::Server => "server",
        }
    }
}

/// What one replay of `confirm` found (one row of the table, one entry of the JSON's `results`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Confirmation {
    /// The cell, by name (`mcp-2025-11-25__stdio__retry-on-disconnect__none__dedup-by-id-durable__c2r1k1`).
    pub cell: String,
    /// Which trace: a property's counterexample or the worst case.
    pub property: TraceKind,
    /// The SDK whose fixture it was replayed on (`rust`, `typescript`, `python`), or `server`
    /// for the server given by a command or URL.
    pub sdk: String,
    /// The cell's server behaviour: the model server the trace is a counterexample for (on a
    /// given server, which behaviour's counterexamples it reproduces says which it has).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behaviour: Option<ServerImpl>,
    /// confirmed, not-reproduced, diverged, inconclusive or interrupted.
    pub verdict: ReplayVerdict,
    /// Why, in one line (the runner's reason, or why the replay could not run).
    pub reason: String,
    /// The replay's folder (ledger, `evidence/evidence.jsonl`, `evidence/result.json`), if it ran.
    pub evidence: Option<PathBuf>,
}

/// How `confirm` replays.
pub struct ConfirmOptions {
    /// Where the fixtures are and how to start the Rust one.
    pub paths: FixturePaths,
    /// The server given by a command or URL, with its tool, arguments and observer (the jobs
    /// of [`Replayer::Server`] run on it; each replay starts it afresh).
    pub server: Option<ReplayOptions>,
    /// The folder under which each replay gets its own folder.
    pub evidence: PathBuf,
    /// Replays at a time.
    pub jobs: usize,
}

/// Every counterexample of the checked `cells` (one per violated property, then the worst case
/// when it has a trace), on each of `on`, in the cells' order. Cells that do not apply have none.
pub fn jobs(cells: &[Cell], on: &[Replayer]) -> Vec<Job> {
    let mut jobs = Vec::new();
    for cell in cells {
        let Ok(checked) = &cell.outcome else { continue };
        let mut traces: Vec<(TraceKind, &mcp_once_model::search::Counterexample)> = checked
            .results
            .iter()
            .filter_map(|r| Some((TraceKind::Counterexample(r.property), r.counterexample.as_ref()?)))
            .collect();
        traces.extend(checked.worst.trace.as_ref().map(|t| (TraceKind::WorstCase, t)));
        for (kind, path) in traces {
            let verified = !checked.unverified.contains(&kind);
            let trace = TraceFile::from_counterexample(&checked.model, kind, path, verified);
            for &replayer in on {
                jobs.push(Job {
                    config: cell.config.clone(),
                    profile: checked.model.profile.clone(),
                    kind,
                    trace: trace.clone(),
                    on: replayer,
                });
            }
        }
    }
    jobs
}

/// Replay every job, `options.jobs` at a time; `on_done` is called after each. The results are
/// in the jobs' order. SIGINT or SIGTERM stops the run: every server process group is killed,
/// the replays under way end on their bounded waits, and they and the ones not started are
/// `interrupted`.
pub fn confirm(jobs: &[Job], options: &ConfirmOptions, on_done: &(dyn Fn() + Sync)) -> Vec<Confirmation> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<Confirmation>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..options.jobs.max(1))
            .map(|_| {
                scope.spawn(|| {
                    while !stop.load(Ordering::SeqCst) {
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(job) = jobs.get(i) else { break };
                        let mut result = replay_one(job, options);
                        if stop.load(Ordering::SeqCst) {
                            // Its server group may have been killed under it: not a verdict.
                            result.reason = format!(
                                "interrupted by a signal during this replay (every server group was killed; the runner said: {})",
                                result.reason
                            );
                            result.verdict = ReplayVerdict::Interrupted;
                        }
                        *slots[i].lock().unwrap() = Some(result);
                        on_done();
                    }
                })
            })
            .collect();
        scope.spawn(move || {
            for w in workers {
                let _ = w.join();
            }
            let _ = done_tx.send(());
        });
        if watch_signals(done_rx) {
            stop.store(true, Ordering::SeqCst);
            process::kill_all_groups();
        }
    });
    slots
        .into_iter()
        .zip(jobs)
        .map(|(slot, job)| {
            slot.into_inner().unwrap().unwrap_or_else(|| {
                not_run(job, ReplayVerdict::Interrupted, "interrupted by a signal before this replay started".into())
            })
        })
        .collect()
}

/// Wait until `done` fires (false) or SIGINT/SIGTERM arrives (true).
fn watch_signals(done: tokio::sync::oneshot::Receiver<()>) -> bool {
    let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else {
        let _ = done.blocking_recv();
        return false;
    };
    rt.block_on(async {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut int), Ok(mut term)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) else {
            let _ = done.await;
            return false;
        };
        tokio::select! {
            _ = done => false,
            _ = int.recv() => true,
            _ = term.recv() => true,
        }
    })
}

/// A result for a job that did not run.
fn not_run(job: &Job, verdict: ReplayVerdict, reason: String) -> Confirmation {
    Confirmation {
        cell: cell_name(&job.config),
        property: job.kind,
        sdk: job.on.name().into(),
        behaviour: Some(job.config.server),
        verdict,
        reason,
        evidence: None,
    }
}

/// The folder of one replay: `EVIDENCE/CELL/PROPERTY/SDK` (`.../server` on a given server).
pub fn replay_dir(root: &Path, job: &Job) -> PathBuf {
    root.join(cell_name(&job.config)).join(job.kind.property_name()).join(job.on.name())
}

/// The runner's options for `job` with its folder `dir`: its SDK's fixture variant for the
/// cell's server, or the given server; either way over the cell's transport, speaking the cell's
/// revision. `Err` says why it cannot run.
fn options_for(job: &Job, options: &ConfirmOptions, dir: &Path) -> Result<ReplayOptions, String> {
    let server = job.config.server;
    let revision = job.profile.revision;
    let mut opts = match job.on {
        Replayer::Fixture(sdk) => {
            let runnable = sdk.variant_for(server).and_then(|_| sdk.speaks(revision));
            let runnable = runnable.and_then(|_| sdk.cancel_option(server, job.config.cancel));
            runnable.and_then(|_| sdk.handler_options(job.config.handler)).map_err(|why| why.to_string())?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
            options.paths.options_for_cell(sdk, &job.config, &job.profile, dir).map_err(|why| why.to_string())?
        }
        Replayer::Server => {
            let mut opts = options.server.clone().ok_or("no server was given to replay on")?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: cannot create: {e}", dir.display()))?;
            opts.evidence_dir = Some(dir.join("evidence"));
            opts
        }
    };
    opts.revision = Some(revision);
    Ok(opts)
}

/// Replay one job where it says, over the cell's transport, speaking the cell's revision.
fn replay_one(job: &Job, options: &ConfirmOptions) -> Confirmation {
    let dir = replay_dir(&options.evidence, job);
    let opts = match options_for(job, options, &dir) {
        Ok(o) => o,
        Err(why) => return not_run(job, ReplayVerdict::Inconclusive, why),
    };
    let evidence = match Evidence::new(opts.evidence_dir.as_deref()) {
        Ok(e) => e,
        Err(e) => return not_run(job, ReplayVerdict::Inconclusive, format!("evidence: {e}")),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
    let Ok(runtime) = runtime else {
        return not_run(job, ReplayVerdict::Inconclusive, "cannot start an async runtime".into());
    };
    let name = format!("{}__{}", cell_name(&job.config), job.kind.property_name());
    let result = runtime.block_on(replay(&job.trace, &name, Profile::clone(&job.profile), opts, evidence));
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    let mut reason = result.reason.clone();
    if let Err(why) = write_confirmed_trace(&result, &job.trace, &job.profile) {
        reason.push_str(&format!(" (the confirmed trace was not written: {why})"));
    }
    if let Err(e) = write_result(&result) {
        reason.push_str(&format!(" (result.json not written: {e})"));
    }
    Confirmation {
        cell: cell_name(&job.config),
        property: job.kind,
        sdk: job.on.name().into(),
        behaviour: Some(job.config.server),
        verdict: result.verdict,
        reason,
        evidence: Some(dir),
    }
}

/// The server behaviours whose counterexamples were replayed (plain, then honours-cancel) and,
/// of them, those whose every counterexample was confirmed (or, for a worst case of one
/// effect per call, ran): on a given server, the behaviours its replays fit. Both when no
/// replay told them apart; none when the server fits neither.
pub fn behaviours(results: &[Confirmation]) -> Vec<(ServerImpl, bool)> {
    [ServerImpl::Plain, ServerImpl::HonoursCancel]
        .into_iter()
        .filter_map(|b| {
            let of: Vec<_> = results.iter().filter(|r| r.behaviour == Some(b)).collect();
            let fits = of.iter().all(|r| matches!(r.verdict, ReplayVerdict::Confirmed | ReplayVerdict::Ran));
            (!of.is_empty()).then_some((b, fits))
        })
        .collect()
}
