//! `mcp-once explore`: one configuration in stateright's Explorer, a web UI on localhost.

use crate::args::{properties, ConfigArgs};
use anyhow::{anyhow, Result};
use clap::Args;
use mcp_once_model::{Check, McpModel};
use std::process::ExitCode;

/// Options of `mcp-once explore`.
#[derive(Args)]
pub struct ExploreArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// The property the Explorer marks (at-most-once, no-silent-effect, success-implies-effect, exactly-once).
    #[arg(long, default_value = "at-most-once")]
    property: String,
    /// Address to serve on (loopback only by default).
    #[arg(long, default_value = "127.0.0.1:3000")]
    address: String,
}

/// Run `mcp-once explore` (serves until interrupted).
pub fn run(a: ExploreArgs) -> Result<ExitCode> {
    use stateright::Model;
    let (config, profile) = a.config.resolve()?;
    let property = properties(&a.property)?[0];
    let model = McpModel::new(config, profile).map_err(|e| anyhow!(e))?;
    let address: std::net::SocketAddr = a.address.parse().map_err(|e| anyhow!("--address {}: {e}", a.address))?;
    std::net::TcpListener::bind(address).map_err(|e| anyhow!("--address {address}: cannot listen: {e}"))?;
    eprintln!("mcp-once: Explorer for {} on http://{address}/ (Ctrl-C to stop)", model.config);
    mcp_once_model::WithCheck { model, check: Check::Property(property) }.checker().serve(address);
    Ok(ExitCode::SUCCESS)
}
