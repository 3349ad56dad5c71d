//! `mcp-once fixture`: the bundled Rust (rmcp) ledger fixture server.

use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::{fixture, installed};
use std::process::ExitCode;

/// Options of `mcp-once fixture`.
#[derive(Args)]
pub struct FixtureArgs {
    /// Which SDK's fixture: rust (bundled). The TypeScript and Python ones run under node and python.
    #[arg(long, default_value = "rust")]
    sdk: String,
    #[command(flatten)]
    server: fixture::FixtureArgs,
}

/// Run `mcp-once fixture` (serves until its input closes or it is stopped).
pub fn run(a: FixtureArgs) -> Result<ExitCode> {
    if a.sdk != "rust" {
        let dir = installed::locate(None);
        let d = dir.display();
        let how = match a.sdk.as_str() {
            "typescript" => format!("node {d}/typescript/server.mjs --ledger PATH [--transport http --port N]"),
            "typescript-v2" => format!("node {d}/typescript/server-v2.mjs --ledger PATH [--transport http --port N]"),
            "python" => {
                format!("{d}/python/.venv/bin/python {d}/python/server.py --ledger PATH [--transport http --port N]")
            }
            other => return Err(anyhow!("--sdk {other}: unknown SDK (rust, typescript, typescript-v2, python)")),
        };
        let ready = installed::readiness(&dir).iter().any(|(sdk, ready)| *sdk == a.sdk && *ready);
        let before = if ready { String::new() } else { "after `mcp-once fixtures install`, ".into() };
        return Err(anyhow!(
            "--sdk {}: runs under its own runtime, not in this binary; {before}start it with: {how}",
            a.sdk
        ));
    }
    fixture::run_blocking(a.server.options())?;
    Ok(ExitCode::SUCCESS)
}
