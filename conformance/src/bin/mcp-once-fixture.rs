//! `mcp-once-fixture`: the Rust (rmcp) ledger fixture MCP server, see
//! `mcp_once_conformance::fixture`.
//!
//!   mcp-once-fixture --ledger PATH [--transport stdio|http] [--port N] [--variant NAME]
//!                    [--retention-ms N] [--outcome-query] [--cancel HOW] [--handler KIND] [--rounds N]
//!
//! A missing `--ledger` or a bad value prints one line on stderr and exits with status 2.

use clap::error::ErrorKind;
use clap::Parser;
use mcp_once_conformance::fixture::{self, FixtureArgs};

/// Ledger fixture MCP server on the Rust SDK (rmcp).
#[derive(Parser, Debug)]
#[command(name = "mcp-once-fixture", version)]
struct Cli {
    #[command(flatten)]
    server: FixtureArgs,
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
    let code = match fixture::run_blocking(cli.server.options()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("mcp-once-fixture: {e:#}");
            1
        }
    };
    // Exit at once: a call still in flight gets no reply (its ledger line, if written, stays).
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
