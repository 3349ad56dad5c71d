//! `mcp-once fixture`: the bundled Rust (rmcp) ledger fixture server.

use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_conformance::fixture;
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
    fixture::run_blocking(a.server.options())?;
    Ok(ExitCode::SUCCESS)
}
