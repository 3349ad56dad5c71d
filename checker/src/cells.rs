//! Running cells: one exhaustive pass per configuration, on every core, with results shared
//! between cells whose models read the same rules (a proposal that changes only key knobs gives
//! the same model as its base revision for every cell without a key), the largest searches
//! first.

use anyhow::Result;
use mcp_once_model::catalogue::builtin_profiles;
use mcp_once_model::search::{check_property_within, shortest_to_effects_within, Counterexample, Stats, WorstCase};
use mcp_once_model::trace::{to_itf, TraceKind};
use mcp_once_model::{
    explore_with, BehaviourKey, Budget, Cancellation, CheckResult, Config, End, HandlerKind, McpModel, NotApplicable,
    Options, Profile, PropertyKind, ServerImpl, Transport, WorstSearch,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::sync::Mutex;

/// The outcome of one cell.
pub struct Cell {
    /// The configuration.
    pub config: Config,
    /// `Err(why)` when the configuration does not apply under its profile.
    pub outcome: Result<Checked, NotApplicable>,
}

/// A cell that was checked.
pub struct Checked {
    /// The model (with its profile), for rendering traces.
    pub model: McpModel,
    /// One result per property asked for.
    pub results: Vec<CheckResult>,
    /// The worst case.
    pub worst: WorstCase,
    /// Counts for the pass.
    pub stats: Stats,
    /// How the pass ended (exhaustive, answered, or stopped at the budget).
    pub end: End,
    /// Whether the search went on on disk past its memory budget, and how much it wrote.
    pub spilled: Option<mcp_once_model::Spilled>,
    /// The traces whose length the independent search could not confirm within the budget.
    pub unverified: Vec<TraceKind>,
    /// Trace files written.
    pub files: TraceFiles,
    /// Whether the search was shared with an earlier cell with the same rules (not re-run).
    pub shared: bool,
    /// Wall time of the independent length checks of this cell's traces (0 where the search
    /// was shared: its traces were checked once, with the cell that ran it).
    pub verify_seconds: f64,
}

impl Checked {
    /// Whether any checked property is violated.
    pub fn any_violated(&self) -> bool {
        self.results.iter().any(|r| r.counterexample.is_some())
    }

    /// Why the search stopped before it was exhaustive, if it reached its budget.
    pub fn stopped(&self) -> Option<(mcp_once_model::Stop, usize)> {
        match self.end {
            End::Stopped { why, depth_completed } => Some((why, depth_completed)),
            _ => None,
        }
    }
}

/// The trace files written for one cell: a counterexample per violated property, and the
/// worst case.
#[derive(Default)]
pub struct TraceFiles {
    /// Counterexamples, by property.
    counterexamples: HashMap<PropertyKind, PathBuf>,
    /// The worst case's trace.
    worst_case: Option<PathBuf>,
}

impl TraceFiles {
    /// The file the trace of `kind` was written to, if it was.
    pub fn get(&self, kind: TraceKind) -> Option<&Path> {
        match kind {
            TraceKind::Counterexample(p) => self.counterexamples.get(&p).map(PathBuf::as_path),
            TraceKind::WorstCase => self.worst_case.as_deref(),
        }
    }

    /// Record that the trace of `kind` was written to `path`.
    fn insert(&mut self, kind: TraceKind, path: PathBuf) {
        match kind {
            TraceKind::Counterexample(p) => {
                self.counterexamples.insert(p, path);
            }
            TraceKind::WorstCase => self.worst_case = Some(path),
        }
    }
}

/// Find a profile by name among `loaded`, or load it (by name or path) and remember it.
pub fn profile_for(name: &str, loaded: &mut Vec<Profile>) -> Result<Profile> {
    if let Some(p) = loaded.iter().find(|p| p.name == name || p.origin == name) {
        return Ok(p.clone());
    }
    let p = Profile::load(name)?;
    loaded.push(p.clone());
    Ok(p)
}

/// The built-in profiles.
pub fn builtins() -> Vec<Profile> {
    builtin_profiles()
}

/// The default matrix's cells under each cancellation handling in `cancels` (none: each
/// server's preset, the default matrix), with their profiles.
pub fn matrix_cells(
    profiles: &[Profile],
    cancels: &[Cancellation],
    handlers: &[HandlerKind],
) -> Vec<(Config, Arc<Profile>)> {
    with_profiles(mcp_once_model::catalogue::matrix_with_axes(profiles, cancels, handlers), profiles)
}

/// Each of `cells` with its profile among `profiles`, one shared copy per profile.
pub fn with_profiles(cells: Vec<Config>, profiles: &[Profile]) -> Vec<(Config, Arc<Profile>)> {
    let shared: Vec<Arc<Profile>> = profiles.iter().cloned().map(Arc::new).collect();
    cells
        .into_iter()
        .map(|c| {
            let p = shared.iter().find(|p| p.name == c.profile).expect("a cell's profile is among those given");
            (c, Arc::clone(p))
        })
        .collect()
}

/// `cells`, each with every number of server instances in `instances` (none: as they are).
pub fn with_instances(cells: Vec<(Config, Arc<Profile>)>, instances: &[u8]) -> Vec<(Config, Arc<Profile>)> {
    if instances.is_empty() {
        return cells;
    }
    cells
        .into_iter()
        .flat_map(|(c, p)| {
            mcp_once_model::catalogue::with_instances(vec![c], instances).into_iter().map(move |c| (c, p.clone()))
        })
        .collect()
}

/// The exit code for checked cells: 2 when the one cell asked for does not apply or its search
/// stopped at the budget; otherwise 1 when a property is violated, 0 if not.
pub fn exit_code(cells: &[Cell]) -> ExitCode {
    let any_violated = cells.iter().any(|c| matches!(&c.outcome, Ok(k) if k.any_violated()));
    let any_inapplicable = cells.iter().any(|c| c.outcome.is_err());
    let one_stopped = cells.len() == 1 && matches!(&cells[0].outcome, Ok(k) if k.stopped().is_some());
    if one_stopped {
        ExitCode::from(2)
    } else if any_violated {
        ExitCode::from(1)
    } else if any_inapplicable && cells.len() == 1 {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    }
}

/// The number of threads to search on: one per core.
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A progress bar on standard error when it is a terminal (none in pipes and CI logs), counting
/// `len` things called `unit` ("cells", "replays").
pub fn progress(len: usize, what: &str, unit: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(len as u64);
    let template = format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit}, {{elapsed}}");
    let style = indicatif::ProgressStyle::with_template(&template).expect("template").progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(what.to_string());
    Some(bar)
}

/// Run cells on `threads` threads with a progress bar on a terminal.
pub fn run_with_progress(
    what: &str,
    configs: Vec<(Config, Arc<Profile>)>,
    props: &[PropertyKind],
    options: Options,
    out: Option<&Path>,
    threads: usize,
) -> Result<Vec<Cell>> {
    let bar = progress(configs.len(), what, "cells");
    let tick = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };
    let cells = run_cells(configs, props, options, out, threads, &tick);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    cells
}

/// A file name for the trace of `kind` under `config` (no directories).
pub fn trace_name(config: &Config, kind: TraceKind) -> String {
    format!("{}__{}.itf.json", cell_name(config), kind.property_name())
}

/// A cell's name, usable as a file or folder name: its parameters joined by `__`
/// (`mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c2r1k1`); a cancellation override
/// follows the server (`key-after-effect-cancel-interrupts`), and so do a handler and a
/// deployment other than the default.
pub fn cell_name(config: &Config) -> String {
    let profile = Path::new(&config.profile)
        .file_stem()
        .map_or_else(|| config.profile.clone(), |s| s.to_string_lossy().into_owned());
    let b = config.bounds;
    let cancel = config.cancel.map(|c| format!("-cancel-{c}")).unwrap_or_default();
    // A handler other than the default follows too (`key-durable-handler-input-after-effect`,
    // `-rounds-2` where it asks twice): cells differing only in their handler are different cells.
    let h = config.handler;
    let handler = match (h == mcp_once_model::Handler::default(), h.rounds) {
        (true, _) => String::new(),
        (false, 1) => format!("-handler-{}", h.kind),
        (false, n) => format!("-handler-{}-rounds-{n}", h.kind),
    };
    // So do several instances and a store other than the preset's (`-instances-2-store-shared`).
    let d = config.deployment;
    let deployment = match (d.instances, d.store) {
        (1, _) => String::new(),
        (n, None) => format!("-instances-{n}"),
        (n, Some(s)) => format!("-instances-{n}-store-{s}"),
    };
    // And the axes outside the default matrix, where they are not at their default.
    let mut more = String::new();
    if config.annotation != mcp_once_model::Annotation::None {
        more.push_str(&format!("-annotation-{}", config.annotation));
    }
    if config.resumption != mcp_once_model::Resumption::None {
        more.push_str(&format!("-resumption-{}", config.resumption));
    }
    if config.tasks != mcp_once_model::Tasks::None {
        more.push_str(&format!("-tasks-{}", config.tasks));
        if config.task_records != mcp_once_model::TaskRecords::Durable {
            more.push_str(&format!("-task-records-{}", config.task_records));
        }
    }
    if config.session_terminations > 0 {
        more.push_str(&format!("-session-terminations-{}", config.session_terminations));
    }
    if config.callers > 1 {
        more.push_str(&format!("-callers-{}", config.callers));
    }
    if let Some(scope) = config.key_scope {
        more.push_str(&format!("-key-scope-{scope}"));
    }
    format!(
        "{profile}__{}__{}__{}__{}{cancel}{handler}{deployment}{more}__c{}r{}k{}",
        config.transport, config.client, config.key, config.server, b.calls, b.retries, b.crashes
    )
}

fn memo_key(m: &McpModel) -> BehaviourKey {
    // Everything the model reads (not the profile's name: citations differ between profiles, so
    // traces are rendered per cell).
    m.behaviour_key()
}

/// One search's answers and their independent length checks, shared by every cell whose model
/// reads the same rules (the checks' answer depends only on the model's behaviour too).
#[derive(Clone)]
struct Found {
    results: Vec<CheckResult>,
    worst: WorstCase,
    stats: Stats,
    end: End,
    spilled: Option<mcp_once_model::Spilled>,
    /// The traces left unconfirmed, or the internal error the checks found.
    unverified: Result<Vec<TraceKind>, String>,
    verify_seconds: f64,
}

/// A guess at how long a cell's search takes, for ordering (larger first): more calls and
/// attempts, framework re-runs, HTTP's unordered messages and id tables make the most states.
fn cost_guess(c: &Config) -> (u8, u8, bool, bool, u8) {
    let server = match c.server {
        ServerImpl::DedupById | ServerImpl::DedupByIdDurable => 2,
        ServerImpl::HonoursCancel => 1,
        _ => 0,
    };
    (c.bounds.calls, c.bounds.retries, c.client.reruns_the_step(), c.transport == Transport::Http, server)
}

/// The order to take cells in: one cell per distinct search, largest guess first, so that the
/// long searches start at once and do not end up alone at the end; then the cells that share
/// a search.
fn schedule(configs: &[(Config, Arc<Profile>)]) -> Vec<usize> {
    let mut firsts = Vec::new();
    let mut rest = Vec::new();
    let mut keys = std::collections::HashSet::new();
    for (i, (config, profile)) in configs.iter().enumerate() {
        match McpModel::new(config.clone(), profile.clone()) {
            Ok(m) if keys.insert(memo_key(&m)) => firsts.push(i),
            _ => rest.push(i),
        }
    }
    firsts.sort_by_key(|i| std::cmp::Reverse(cost_guess(&configs[*i].0)));
    rest.sort_by_key(|i| std::cmp::Reverse(cost_guess(&configs[*i].0)));
    firsts.extend(rest);
    firsts
}

/// Check every cell, `threads` at a time, each search under `options` on one thread, writing
/// traces under
/// `out` if given. The budget is the process's: memory is read as the whole process's, and a
/// search on disk keeps to its share of the memory and disk budgets (`Budget::shared_by`).
/// `on_done` is called once per finished cell (for progress).
pub fn run_cells(
    configs: Vec<(Config, Arc<Profile>)>,
    properties: &[PropertyKind],
    options: Options,
    out: Option<&Path>,
    threads: usize,
    on_done: &(dyn Fn() + Sync),
) -> Result<Vec<Cell>> {
    if let Some(dir) = out {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("{}: cannot create output folder: {e}", dir.display()))?;
    }
    // The searches that run at once share the budget: each one on disk keeps to its share.
    let searches = configs.iter().filter(|(c, p)| c.applicable(p).is_ok()).count();
    let shared_by = threads.clamp(1, searches.max(1));
    // Cells at a time, one thread each; fewer cells than threads (`check` on one cell) share
    // the threads out, each search building its successors and deciding which are new on its
    // share (`Options::threads`).
    let per_search = (threads.max(1) / searches.max(1)).max(1);
    let options = Options { budget: Budget { shared_by, ..options.budget }, threads: per_search, ..options };
    let order = schedule(&configs);
    let next = AtomicUsize::new(0);
    let memo: Mutex<HashMap<BehaviourKey, std::sync::Arc<std::sync::OnceLock<Found>>>> = Mutex::new(HashMap::new());
    let slots: Vec<Mutex<Option<Cell>>> = configs.iter().map(|_| Mutex::new(None)).collect();
    let error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..threads.max(1) {
            scope.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let (config, profile) = &configs[i];
                    let cell = match McpModel::new(config.clone(), profile.clone()) {
                        Err(reason) => Cell { config: config.clone(), outcome: Err(reason) },
                        Ok(model) => {
                            let once = memo.lock().unwrap().entry(memo_key(&model)).or_default().clone();
                            let mut shared = true;
                            let found = once
                                .get_or_init(|| {
                                    shared = false;
                                    let e = explore_with(&model, properties, options);
                                    let started = std::time::Instant::now();
                                    let unverified = verify_minimal(&model, &e.results, &e.worst, &options.budget)
                                        .map_err(|e| e.to_string());
                                    Found {
                                        results: e.results,
                                        worst: e.worst,
                                        stats: e.stats,
                                        end: e.end,
                                        spilled: e.spilled,
                                        unverified,
                                        verify_seconds: started.elapsed().as_secs_f64(),
                                    }
                                })
                                .clone();
                            let Found { results, worst, stats, end, spilled, .. } = found;
                            let unverified = found.unverified.unwrap_or_else(|e| {
                                *error.lock().unwrap() = Some(anyhow::anyhow!(e));
                                Vec::new()
                            });
                            let verify_seconds = if shared { 0.0 } else { found.verify_seconds };
                            let mut checked = Checked {
                                model,
                                results,
                                worst,
                                stats,
                                end,
                                spilled,
                                unverified,
                                files: TraceFiles::default(),
                                shared,
                                verify_seconds,
                            };
                            if let Some(dir) = out {
                                if let Err(e) = write_traces(&mut checked, dir) {
                                    *error.lock().unwrap() = Some(e);
                                }
                            }
                            Cell { config: config.clone(), outcome: Ok(checked) }
                        }
                    };
                    *slots[i].lock().unwrap() = Some(cell);
                    on_done();
                }
            });
        }
    });
    if let Some(e) = error.into_inner().unwrap() {
        return Err(e);
    }
    Ok(slots.into_iter().map(|s| s.into_inner().unwrap().expect("every cell ran")).collect())
}

/// Bytes per state stateright's breadth-first search is given in the budget: its table of
/// fingerprints and parents, and its frontier of full states with their paths (about 135 bytes
/// a unique state measured, and a state generated is at most one unique state).
const STATERIGHT_BYTES_PER_STATE: u64 = 200;

/// How many states (repeats included) the independent stateright searches may generate within
/// `budget`: `None` when there is no budget.
fn stateright_cap(budget: &Budget) -> Option<usize> {
    // Its share of the memory: the searches that run at once verify at once too.
    let by_memory = budget.max_memory.map(|m| (budget.share(m) / STATERIGHT_BYTES_PER_STATE) as usize);
    // stateright counts repeats; a breadth-first pass generates about 6 to 8 states per unique one.
    let by_states = budget.max_states.map(|n| n.saturating_mul(8));
    by_memory.into_iter().chain(by_states).min()
}

/// Check every counterexample's length, and an exhaustive worst case's, against stateright's
/// breadth-first search run on that property alone (an independent search); a difference is a
/// bug in mcp-once. Returns the traces stateright could not confirm within the budget (its
/// search stopped there first).
fn verify_minimal(
    model: &McpModel,
    results: &[CheckResult],
    worst: &WorstCase,
    budget: &Budget,
) -> Result<Vec<TraceKind>> {
    let cap = stateright_cap(budget).unwrap_or(usize::MAX);
    let mut unverified = Vec::new();
    if let Some(t) = &worst.trace {
        if worst.search != WorstSearch::Exhaustive {
            unverified.push(TraceKind::WorstCase);
        } else {
            match shortest_to_effects_within(model, worst.effects, cap) {
                None => unverified.push(TraceKind::WorstCase),
                Some(found) if found.as_ref().map(|c| c.len()) == Some(t.len()) => {}
                Some(found) => anyhow::bail!(
                    "internal error: worst case under {}: {} steps, stateright finds {:?}",
                    model.config,
                    t.len(),
                    found.map(|c| c.len())
                ),
            }
        }
    }
    for r in results {
        let Some(cex) = &r.counterexample else { continue };
        let Some(independent) = check_property_within(model, r.property, cap) else {
            unverified.push(TraceKind::Counterexample(r.property));
            continue;
        };
        let len = independent.counterexample.as_ref().map(|c| c.len());
        if len != Some(cex.len()) {
            anyhow::bail!(
                "internal error: `{}` under {}: counterexample of {} steps, stateright finds {:?}",
                r.property,
                model.config,
                cex.len(),
                len
            );
        }
    }
    Ok(unverified)
}

/// Write the cell's counterexamples and worst case as ITF files in `dir`, and remember where.
fn write_traces(c: &mut Checked, dir: &Path) -> Result<()> {
    let mut traces: Vec<(TraceKind, &Counterexample)> = c
        .results
        .iter()
        .filter_map(|r| Some((TraceKind::Counterexample(r.property), r.counterexample.as_ref()?)))
        .collect();
    traces.extend(c.worst.trace.as_ref().map(|t| (TraceKind::WorstCase, t)));
    let mut files = TraceFiles::default();
    for (kind, cex) in traces {
        let path = dir.join(trace_name(&c.model.config, kind));
        let verified = !c.unverified.contains(&kind);
        let text = serde_json::to_string_pretty(&to_itf(&c.model, kind, cex, verified))? + "\n";
        std::fs::write(&path, text).map_err(|e| anyhow::anyhow!("{}: cannot write trace: {e}", path.display()))?;
        files.insert(kind, path);
    }
    c.files = files;
    Ok(())
}
