//! `mcp-once fixture`: the bundled Rust (rmcp) ledger fixture server.

use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::fixture;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once fixture`.
#[derive(Args)]
pub struct FixtureArgs {
    /// Which SDK's fixture: rust (bundled). The TypeScript and Python ones run under node and python.
    #[arg(long, default_value = "rust")]
    sdk: String,
    /// stdio or http (Streamable HTTP on 127.0.0.1).
    #[arg(long, default_value = "stdio")]
    transport: fixture::Transport,
    /// The model's server behaviour: plain, honours-cancel, dedup-by-id, dedup-by-id-durable, a
    /// SEP-3182 key store: key-volatile, key-durable, key-after-effect, key-expiring, or
    /// validates-task-id (SEP-1686's validating receiver; needs --outcome-query).
    #[arg(long, default_value = "plain")]
    variant: fixture::Variant,
    /// The ledger file: one fsynced JSON line per side effect.
    #[arg(long)]
    ledger: PathBuf,
    /// HTTP port on 127.0.0.1 (0: any free port; the server prints `listening URL` on stderr).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// key-expiring: records older than this many milliseconds are treated as absent.
    #[arg(long, default_value_t = 60_000)]
    retention_ms: u64,
    /// Key variants: serve the outcome-query proposal (no deduplication; `tasks/get` answers
    /// from the key's record).
    #[arg(long)]
    outcome_query: bool,
    /// How charge answers a cancellation, overriding the variant's (the model's --cancel):
    /// ignores, before-effect, interrupts (also between the effect and a key record after it).
    #[arg(long, value_parser = crate::args::parse::<mcp_once_model::Cancellation>)]
    cancel: Option<mcp_once_model::Cancellation>,
    /// How charge runs under multi round-trip requests (the model's --handler): effect-only,
    /// input-after-effect, input-before-effect, input-after-effect-stateful.
    #[arg(long, default_value = "effect-only", value_parser = crate::args::parse::<mcp_once_model::HandlerKind>)]
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

/// Run `mcp-once fixture` (serves until its input closes or it is stopped).
pub fn run(a: FixtureArgs) -> Result<ExitCode> {
    if a.sdk != "rust" {
        let how = match a.sdk.as_str() {
            "typescript" => "node conformance/fixtures/typescript/server.mjs --ledger PATH [--transport http --port N]",
            "typescript-v2" => "node conformance/fixtures/typescript/server-v2.mjs --ledger PATH [--transport http --port N]",
            "python" => "conformance/fixtures/python/.venv/bin/python conformance/fixtures/python/server.py --ledger PATH [--transport http --port N]",
            other => return Err(anyhow!("--sdk {other}: unknown SDK (rust, typescript, typescript-v2, python)")),
        };
        return Err(anyhow!(
            "--sdk {}: not bundled in this binary; after conformance/fixtures/install.sh run: {how}",
            a.sdk
        ));
    }
    fixture::run_blocking(fixture::FixtureOptions {
        transport: a.transport,
        port: a.port,
        ledger: a.ledger,
        variant: a.variant,
        retention_ms: a.retention_ms,
        cancel: a.cancel,
        handler: mcp_once_model::Handler::new(a.handler, a.rounds),
        instance: a.instance,
        shared_store: a.shared_store,
        outcome_query: a.outcome_query,
    })?;
    Ok(ExitCode::SUCCESS)
}
