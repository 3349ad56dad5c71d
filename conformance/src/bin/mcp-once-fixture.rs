//! `mcp-once-fixture`: the Rust (rmcp) ledger fixture MCP server, see
//! `mcp_once_conformance::fixture`.
//!
//!   mcp-once-fixture --ledger PATH [--transport stdio|http] [--port N] [--variant NAME]
//!                    [--retention-ms N] [--outcome-query] [--cancel HOW] [--handler KIND] [--rounds N]
//!
//! A missing `--ledger` or a bad value prints one line on stderr and exits with status 2.

use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::Parser;
use mcp_once_conformance::fixture::{self, FixtureOptions, Transport, Variant};

/// Ledger fixture MCP server on the Rust SDK (rmcp).
#[derive(Parser, Debug)]
#[command(name = "mcp-once-fixture", version)]
struct Cli {
    /// The ledger file (created if missing, only ever appended to).
    #[arg(long)]
    ledger: PathBuf,
    /// stdio or http.
    #[arg(long, default_value = "stdio")]
    transport: Transport,
    /// HTTP port on 127.0.0.1; 0 = any free port.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// plain, key-volatile, key-durable, key-after-effect or key-expiring.
    #[arg(long, default_value = "plain")]
    variant: Variant,
    /// key-expiring: records older than this many milliseconds are treated as absent.
    #[arg(long, default_value_t = 60_000)]
    retention_ms: u64,
    /// Key variants: serve the outcome-query proposal (no deduplication; `tasks/get` answers
    /// from the key's record).
    #[arg(long)]
    outcome_query: bool,
    /// How charge answers a cancellation, overriding the variant's: ignores, before-effect,
    /// interrupts (also between the effect and a key record written after it).
    #[arg(long)]
    cancel: Option<mcp_once_model::Cancellation>,
    /// How charge runs under multi round-trip requests (2026-07-28): effect-only,
    /// input-after-effect, input-before-effect, input-after-effect-stateful.
    #[arg(long, default_value = "effect-only")]
    handler: mcp_once_model::HandlerKind,
    /// Input rounds of a handler that asks (1 or 2; default 1).
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=2))]
    rounds: Option<u8>,
    /// Which server instance this process is when several serve one ledger (the model's
    /// --instances 2): its lines name it, and its own key store reloads only its records.
    #[arg(long, value_name = "N")]
    instance: Option<u8>,
    /// Share the key store with the other instances on this ledger (the model's --store
    /// shared): records read from the ledger and in-progress marks under a file lock.
    #[arg(long)]
    shared_store: bool,
}

fn main() {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => e.exit(),
        Err(e) => {
            eprintln!(
                "mcp-once-fixture: {} (usage: mcp-once-fixture --ledger PATH [--transport stdio|http] [--port N] [--variant NAME] [--retention-ms N] [--outcome-query] [--cancel HOW] [--handler KIND] [--rounds N] [--instance N] [--shared-store])",
                mcp_once_conformance::usage::one_line(&e)
            );
            std::process::exit(2);
        }
    };
    let opts = FixtureOptions {
        transport: cli.transport,
        port: cli.port,
        ledger: cli.ledger,
        variant: cli.variant,
        retention_ms: cli.retention_ms,
        outcome_query: cli.outcome_query,
        cancel: cli.cancel,
        handler: mcp_once_model::Handler::new(cli.handler, cli.rounds),
        instance: cli.instance,
        shared_store: cli.shared_store,
    };
    let code = match fixture::run_blocking(opts) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mcp-once-fixture: {e:#}");
            1
        }
    };
    // Exit at once: a call still in flight gets no reply (its ledger line, if written, stays).
    std::process::exit(code);
}
