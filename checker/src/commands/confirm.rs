//! `mcp-once confirm`: every counterexample of the default matrix (or of the cells chosen)
//! replayed on the fixture that implements its cell's server, on the SDKs chosen; or, with
//! `--stdio`/`--http`, on a server nobody here wrote, under the cells whose server a plain
//! server can be (no store of ids or keys: `plain`, `honours-cancel`).

use crate::args::{BudgetArgs, ConfigArgs, SummaryArgs, TargetArgs};
use crate::cells::{
    builtins, cell_name, matrix_cells, profile_for, progress, run_with_progress, threads, with_instances,
};
use crate::confirm::{behaviours, confirm, jobs, ConfirmOptions, Replayer};
use crate::report::format::{formats_for, print, Format};
use crate::report::render::{Kind, Report};
use crate::report::summary;
use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use mcp_once_conformance::replay::sdk_fixtures::{FixtureError, FixturePaths, Sdk};
use mcp_once_conformance::replay::ReplayVerdict;
use mcp_once_model::{Config, HandlerKind, Options, Profile, PropertyKind, ServerImpl};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// An SDK whose fixture replays: rust (bundled), typescript (1.x), typescript-v2
/// (`@modelcontextprotocol/server` 2.x), python (conformance/fixtures).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SdkArg {
    Rust,
    Typescript,
    #[value(name = "typescript-v2")]
    TypescriptV2,
    Python,
}

impl SdkArg {
    fn sdk(self) -> Sdk {
        match self {
            SdkArg::Rust => Sdk::Rust,
            SdkArg::Typescript => Sdk::TypeScript,
            SdkArg::TypescriptV2 => Sdk::TypeScriptV2,
            SdkArg::Python => Sdk::Python,
        }
    }
}

/// Options of `mcp-once confirm`.
#[derive(Args)]
pub struct ConfirmArgs {
    /// The cells: the default matrix's cells with these parameters (each flag given narrows it;
    /// none: every applicable cell); `--cancel` puts each under that cancellation handling.
    #[command(flatten)]
    config: ConfigArgs,
    /// Only the cells whose name (PROFILE__TRANSPORT__CLIENT__KEY__SERVER__cCrRkK) contains one of
    /// these (repeatable).
    #[arg(long, value_name = "FILTER", num_args = 1..)]
    cells: Vec<String>,
    /// The SDKs whose fixtures replay (repeatable; default: rust).
    #[arg(long, value_enum)]
    sdk: Vec<SdkArg>,
    /// Instead of the fixtures: a server nobody here wrote (`--stdio CMD`, or `--http URL` with
    /// `--launch CMD` so that it can be killed and restarted), its tool, arguments and observer,
    /// as `replay` takes them. Its counterexamples are those of the cells with servers `plain`
    /// and `honours-cancel` (the behaviours a server with no store of ids or keys has), each
    /// replayed on a fresh start of it, one at a time; which behaviour's counterexamples it
    /// reproduces says which it has.
    #[command(flatten)]
    server: Option<TargetArgs>,
    /// Replays at a time (default: one per core; 1 with --stdio/--http).
    #[arg(long, value_name = "N")]
    jobs: Option<usize>,
    /// Write each replay's ledger and evidence under this folder (default: a new folder in the
    /// system's temporary folder; its path is printed).
    #[arg(long, value_name = "DIR")]
    evidence: Option<PathBuf>,
    /// Where the TypeScript and Python fixtures are (default: conformance/fixtures in a checkout,
    /// else the folder `mcp-once fixtures install` wrote).
    #[arg(long, value_name = "DIR")]
    fixtures: Option<PathBuf>,
    #[command(flatten)]
    budget: BudgetArgs,
    /// Output format (junit: one test case per replay, cell × property × SDK; a replay that
    /// could not follow its trace or tell is skipped with its reason; html: one page, the
    /// verdict grid with each trace drawn and each replay's verdict and evidence).
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::Confirm))]
    format: Format,
    #[command(flatten)]
    summary: SummaryArgs,
}

/// Whether `c` has every parameter the flags give (on a given server, `--calls` sets the
/// number of calls instead: see [`cells`]).
fn selected(a: &ConfirmArgs, c: &Config) -> bool {
    let f = &a.config;
    f.transport.is_none_or(|t| t == c.transport)
        && f.client.is_none_or(|v| v == c.client)
        && f.key.is_none_or(|v| v == c.key)
        && f.server.is_none_or(|v| v == c.server)
        && (a.server.is_some() || f.calls.is_none_or(|v| v == c.bounds.calls))
        && f.retries.is_none_or(|v| v == c.bounds.retries)
        && f.crashes.is_none_or(|v| v == c.bounds.crashes)
}

/// The cell filters given, as flags (for an error that names them).
fn filters(a: &ConfirmArgs) -> Vec<String> {
    let f = &a.config;
    let mut out: Vec<String> = [
        f.profile.as_ref().map(|v| format!("--profile {v}")),
        f.transport.map(|v| format!("--transport {v}")),
        f.client.map(|v| format!("--client {v}")),
        f.key.map(|v| format!("--key {v}")),
        f.server.map(|v| format!("--server {v}")),
        f.calls.map(|v| format!("--calls {v}")),
        f.retries.map(|v| format!("--retries {v}")),
        f.crashes.map(|v| format!("--crashes {v}")),
        f.cancel.map(|v| format!("--cancel {v}")),
        f.handler.map(|v| format!("--handler {v}")),
        f.rounds.map(|v| format!("--rounds {v}")),
        f.instances.map(|v| format!("--instances {v}")),
        f.annotation.map(|v| format!("--annotation {v}")),
        f.resumption.map(|v| format!("--resumption {v}")),
        f.session_terminations.map(|v| format!("--session-terminations {v}")),
        f.tasks.map(|v| format!("--tasks {v}")),
        f.task_records.map(|v| format!("--task-records {v}")),
        f.store.map(|v| format!("--store {v}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    out.extend(f.callers.flags());
    out.extend(a.cells.iter().map(|c| format!("--cells {c}")));
    out
}

/// Why the counterexamples of cell `c` cannot be replayed on a server nobody here wrote (None:
/// they can): the runner can start, kill and restart such a server, end its HTTP session (the
/// client's DELETE) and count its effects, but cannot give it a store, an input round, a
/// second instance or a second caller (it plays one client).
fn not_for_given_server(c: &Config) -> Option<&'static str> {
    if !matches!(c.server, ServerImpl::Plain | ServerImpl::HonoursCancel) {
        Some("its server keeps a store of request ids or keys")
    } else if c.cancel.is_some() {
        Some("its server's cancellation handling is set by --cancel")
    } else if c.handler.kind != HandlerKind::EffectOnly {
        Some("its tool asks for input (MRTR)")
    } else if c.deployment.instances > 1 {
        Some("its server runs as several instances")
    } else if c.callers > 1 {
        Some("its calls come from two callers, and the runner plays one")
    } else {
        None
    }
}

/// The applicable cells of the default matrix the flags select; an error when there are none.
fn cells(a: &ConfirmArgs) -> Result<Vec<(Config, Arc<Profile>)>> {
    let mut loaded = builtins();
    let profiles = match &a.config.profile {
        Some(p) => vec![profile_for(p, &mut loaded).map_err(|e| anyhow!("--profile {p}: {e}"))?],
        None => loaded.clone(),
    };
    // `--cancel` puts every cell under that handling (a preset's own written as no override),
    // as `matrix --cancel` does; the fixtures that take it are started with it.
    let cancels: Vec<_> = a.config.cancel.into_iter().collect();
    // The same for `--handler` (its cells run on the fixtures that take it, the Rust and Python
    // ones; on the others they come out inconclusive with the reason).
    let handlers: Vec<_> = a.config.handler.into_iter().collect();
    // `--instances N` puts every cell in a deployment of N instances (each store where its
    // preset keeps it, or where `--store` says), as `matrix --instances` does.
    if a.config.store.is_some() && a.config.instances.is_none_or(|n| n < 2) {
        bail!("--store applies to several server instances (--instances 2)");
    }
    let instances: Vec<u8> = a.config.instances.into_iter().collect();
    let cells: Vec<_> = with_instances(matrix_cells(&profiles, &cancels, &handlers), &instances)
        .into_iter()
        .map(|(mut c, p)| {
            c.deployment.store = a.config.store.or(c.deployment.store);
            // The axes outside the default matrix put every cell under the value given; the
            // cells where it does not apply drop out below.
            c.annotation = a.config.annotation.unwrap_or(c.annotation);
            c.resumption = a.config.resumption.unwrap_or(c.resumption);
            c.session_terminations = a.config.session_terminations.unwrap_or(c.session_terminations);
            c.handler.rounds = a.config.rounds.unwrap_or(c.handler.rounds);
            c.tasks = a.config.tasks.unwrap_or(c.tasks);
            c.task_records = a.config.task_records.unwrap_or(c.task_records);
            let c = a.config.callers.apply(c);
            (c.normalised(), p)
        })
        .filter(|(c, p)| c.applicable(p).is_ok() && selected(a, c))
        .filter(|(c, _)| a.cells.is_empty() || a.cells.iter().any(|f| cell_name(c).contains(f.as_str())))
        .collect();
    if cells.is_empty() {
        bail!("no applicable cell of the default matrix has {}", filters(a).join(" "));
    }
    let Some(server) = &a.server else { return Ok(cells) };
    // A given server is replayed over its own transport, speaking the revision asked for (if
    // any), under the cells a server with no store can be.
    let options = server.options()?;
    let transport = options.target.transport();
    let (mut cells, left): (Vec<_>, Vec<_>) = cells
        .into_iter()
        .filter(|(c, p)| c.transport == transport && options.revision.is_none_or(|r| r == p.revision))
        .partition(|(c, _)| not_for_given_server(c).is_none());
    let mut why: Vec<&str> = left.iter().filter_map(|(c, _)| not_for_given_server(c)).collect();
    why.sort();
    why.dedup();
    if cells.is_empty() {
        let left_why =
            if why.is_empty() { String::new() } else { format!(" (the cells selected: {})", why.join("; ")) };
        bail!(
            "no cell of the default matrix with {} can be replayed on the given {} server{}: its counterexamples are those of the servers plain and honours-cancel{left_why}",
            filters(a).join(" "),
            transport.as_str(),
            options.revision.map(|r| format!(" speaking {}", r.as_str())).unwrap_or_default()
        );
    }
    if !left.is_empty() {
        eprintln!(
            "mcp-once: {} cells left out, their counterexamples need what the runner cannot give a server it did not write ({})",
            left.len(),
            why.join("; ")
        );
    }
    // An observer that only counts cannot tell two calls' effects apart, so the counterexamples
    // of several calls would come out inconclusive: each cell is taken at one call instead (its
    // other bounds as in the matrix), unless --calls gives the number.
    let calls = a.config.calls.or((!mcp_once_conformance::replay::judge::tells_calls_apart(&options)).then_some(1));
    if let Some(n) = calls {
        if a.config.calls.is_none() {
            eprintln!(
                "mcp-once: the observer cannot tell calls apart (a ledger with `{{{{call}}}}` in --args can), so each cell is taken at one call"
            );
        }
        for (c, _) in &mut cells {
            c.bounds.calls = n;
        }
        cells.dedup_by(|x, y| x.0 == y.0);
    }
    Ok(cells)
}

/// Run `mcp-once confirm`: exit 0 when every counterexample is confirmed (and every worst case
/// of one effect per call ran), 1 otherwise.
pub fn run(a: ConfirmArgs) -> Result<ExitCode> {
    if a.jobs == Some(0) {
        bail!("--jobs 0: at least 1");
    }
    let server = match &a.server {
        None => None,
        Some(_) if !a.sdk.is_empty() => {
            bail!("--sdk chooses fixtures; with --stdio/--http the replays run on the server given")
        }
        Some(_) if a.fixtures.is_some() => bail!("--fixtures goes with the fixtures, not with --stdio/--http"),
        Some(_) if a.jobs.is_some_and(|n| n > 1) => {
            bail!("--jobs: one server given, so its replays run one at a time (they share its observer)")
        }
        Some(t) => Some(t.options()?),
    };
    let configs = cells(&a)?;
    let fixtures_dir = mcp_once_conformance::installed::locate(a.fixtures.as_deref());
    let exe = std::env::current_exe()?;
    let paths = FixturePaths {
        fixtures_dir,
        rust_fixture: vec![exe.display().to_string(), "fixture".into(), "--sdk".into(), "rust".into()],
    };
    let mut sdks: Vec<Sdk> = Vec::new();
    let asked = if a.sdk.is_empty() && server.is_none() { &[SdkArg::Rust][..] } else { &a.sdk[..] };
    for s in asked {
        if !sdks.contains(&s.sdk()) {
            sdks.push(s.sdk());
        }
    }
    // A fixture that is not installed is a set-up error, said once before any search (not one
    // inconclusive replay per counterexample).
    for &sdk in &sdks {
        if let Err(e @ FixtureError::NotInstalled { .. }) = paths.argv(sdk, Path::new("ledger.jsonl"), &[]) {
            bail!("--sdk: {e}");
        }
    }
    let evidence = a.evidence.clone().unwrap_or_else(|| {
        let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        std::env::temp_dir().join(format!("mcp-once-confirm-{secs}-{}", std::process::id()))
    });
    std::fs::create_dir_all(&evidence).map_err(|e| anyhow!("--evidence {}: {e}", evidence.display()))?;
    eprintln!("mcp-once: evidence in {}", evidence.display());
    let on: Vec<Replayer> = match &server {
        Some(_) => vec![Replayer::Server],
        None => sdks.iter().map(|&s| Replayer::Fixture(s)).collect(),
    };
    let jobs_at_once = if server.is_some() { 1 } else { a.jobs.unwrap_or_else(threads) };
    let given = server.is_some();
    let options = ConfirmOptions { paths, server, evidence: evidence.clone(), jobs: jobs_at_once };
    // The search `check` runs: every property (shortest counterexamples) and the worst case.
    let checked = run_with_progress(
        "checking",
        configs,
        PropertyKind::ALL,
        Options { worst: true, budget: a.budget.budget()?, threads: 1 },
        None,
        a.budget.threads(),
    )?;
    let jobs = jobs(&checked, &on);
    let bar = progress(jobs.len(), "replaying", "replays");
    let results = confirm(&jobs, &options, &|| {
        if let Some(b) = &bar {
            b.inc(1);
        }
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    // On a given server, every counterexample of the behaviour it shows must be confirmed; the
    // other behaviour's are replayed to tell which it has.
    let all_confirmed = if given {
        behaviours(&results).iter().any(|(_, fits)| *fits)
    } else {
        results.iter().all(|r| matches!(r.verdict, ReplayVerdict::Confirmed | ReplayVerdict::Ran))
    };
    let report = Report::Confirm { results: &results, evidence: &evidence, cells: &checked };
    print(a.format, &report)?;
    if let Some(path) = &a.summary.summary {
        summary::append(path, &report)?;
    }
    Ok(if all_confirmed { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
