//! `mcp-once serve`: the fault-injecting MCP server that `probe-client` runs a client against,
//! one named scenario per process, every frame and attempt appended to a record file.

use anyhow::Result;
use clap::Args;
use mcp_once_conformance::probe_client::{self, Scenario, ServeOptions, Transport};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Options of `mcp-once serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// stdio or http (Streamable HTTP on 127.0.0.1; `listening URL` is printed on stderr).
    #[arg(long, default_value = "stdio")]
    transport: Transport,
    /// What the tool does after its effect: ok, timeout, disconnect, error, is-error, never.
    #[arg(long, default_value = "ok")]
    scenario: Scenario,
    /// The record file (JSONL, appended to; share it between the processes a client restarts).
    #[arg(long)]
    record: PathBuf,
    /// HTTP port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// The longest a held answer waits (timeout, never), in milliseconds.
    #[arg(long, default_value_t = 5_000)]
    hold_ms: u64,
}

/// Run `mcp-once serve` until its input closes or it is stopped.
pub fn run(a: ServeArgs) -> Result<ExitCode> {
    probe_client::run_blocking(ServeOptions {
        transport: a.transport,
        port: a.port,
        scenario: a.scenario,
        record: a.record,
        hold: Duration::from_millis(a.hold_ms),
    })?;
    // A held call may still be parked on the runtime: leave at once.
    std::process::exit(0)
}
