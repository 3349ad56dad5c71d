//! `mcp-once probe-client`: run a client command against `serve` once per fault scenario,
//! classify its retry and key behaviour from the records, and say what the model makes of it.

use crate::args::SummaryArgs;
use crate::client_verdicts::{bounds_for, verdicts};
use crate::report::format::{formats_for, print, Format};
use crate::report::probe_client::{checks, ProbeClientReport};
use crate::report::render::{Kind, Report};
use crate::report::summary;
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::probe::checks::exit_code;
use mcp_once_conformance::probe_client::measured::MeasuredClient;
use mcp_once_conformance::probe_client::{
    classify, run_scenario, ClientCommand, Observed, RunOptions, Scenario, Transport,
};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `mcp-once probe-client`.
#[derive(Args)]
pub struct ProbeClientArgs {
    /// The client command (split as a shell would, run without one); it gets the server's URL
    /// (http) or the serve command line (stdio) as its last argument.
    #[arg(long = "client", value_name = "CMD")]
    client: String,
    /// stdio or http.
    #[arg(long, default_value = "stdio")]
    transport: Transport,
    /// A scenario to run (repeat for several; default: all of ok, timeout, disconnect, error,
    /// is-error, never).
    #[arg(long = "scenario", value_name = "NAME")]
    scenarios: Vec<Scenario>,
    /// The longest the server holds an answer (timeout, never), in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    hold_ms: u64,
    /// The client must send its first MCP frame within this many seconds.
    #[arg(long, default_value_t = 10.0)]
    connect_within: f64,
    /// The longest one scenario's client may run, in seconds (then it is killed).
    #[arg(long, default_value_t = 60.0)]
    bound: f64,
    /// Keep the records and the client's output in this folder, with `client.json` (the client
    /// command and its clientInfo, for `explain --for client --client-record DIR`; default: a
    /// temporary folder, removed at the end).
    #[arg(long, value_name = "DIR")]
    records: Option<PathBuf>,
    /// Output format: text, json, markdown or junit (one test case per scenario).
    #[arg(long, default_value = "text", value_parser = formats_for(Kind::ProbeClient))]
    format: Format,
    #[command(flatten)]
    summary: SummaryArgs,
}

/// Run `mcp-once probe-client`: exit 1 a scenario ran the tool more than once for one call, 2
/// the client could not be probed or an outcome could not be established, 0 otherwise.
pub fn run(a: ProbeClientArgs) -> Result<ExitCode> {
    let client = ClientCommand::parse(&a.client)?;
    let secs = |what: &str, s: f64| {
        Duration::try_from_secs_f64(s)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| anyhow!("{what} {s}: not a positive number of seconds"))
    };
    let scenarios = if a.scenarios.is_empty() { Scenario::ALL.to_vec() } else { a.scenarios.clone() };
    let (folder, temporary) = match &a.records {
        Some(dir) => (dir.clone(), false),
        None => (std::env::temp_dir().join(format!("mcp-once-probe-client-{}", std::process::id())), true),
    };
    std::fs::create_dir_all(&folder).map_err(|e| anyhow!("{}: {e}", folder.display()))?;
    let opts = RunOptions {
        transport: a.transport,
        hold: Duration::from_millis(a.hold_ms),
        connect_within: secs("--connect-within", a.connect_within)?,
        bound: secs("--bound", a.bound)?,
        serve_exe: std::env::current_exe()?,
        folder: folder.clone(),
    };
    let mut observed = Vec::new();
    let mut runs = Vec::new();
    let mut failure = None;
    for s in &scenarios {
        match run_scenario(&client, *s, &opts) {
            Ok(run) => {
                observed.push(Observed::of(&run));
                runs.push(run);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if temporary {
        let _ = std::fs::remove_dir_all(&folder);
    }
    if let Some(e) = failure {
        return Err(anyhow!("probe-client: {e}"));
    }
    let profile = classify(&observed);
    if !temporary {
        // For `explain --for client --client-record DIR`: the client by command and clientInfo.
        MeasuredClient::of(&client.text, a.transport.as_str(), &runs, &profile).write(&folder)?;
    }
    let found = ProbeClientReport {
        command: client.text.clone(),
        transport: a.transport,
        verdicts: verdicts(&profile, a.transport),
        bounds: bounds_for(&profile),
        checks: checks(&observed),
        client: profile,
        scenarios: observed,
        records: a.records.clone(),
    };
    let report = Report::ProbeClient(&found);
    print(a.format, &report)?;
    if let Some(path) = &a.summary.summary {
        summary::append(path, &report)?;
    }
    Ok(ExitCode::from(exit_code(&found.checks)))
}
