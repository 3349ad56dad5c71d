//! `mcp-once fixtures`: put the TypeScript and Python ledger fixtures where an installed
//! `mcp-once` finds them (`install`), or say where they are (`path`).

use anyhow::{anyhow, Result};
use clap::{Args, Subcommand};
use mcp_once_conformance::installed;
use std::path::PathBuf;
use std::process::ExitCode;

/// Options of `mcp-once fixtures`.
#[derive(Args)]
pub struct FixturesArgs {
    /// What to do.
    #[command(subcommand)]
    action: Action,
}

/// The actions of `mcp-once fixtures`.
#[derive(Subcommand)]
enum Action {
    /// Write the fixtures built into this binary to a folder and install their pinned packages
    /// there (npm ci, a Python venv with pip; needs node >= 20, python3 >= 3.10 and the registries).
    Install {
        /// The folder (default: $XDG_DATA_HOME/mcp-once/fixtures, else ~/.local/share/mcp-once/fixtures).
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Print the folder the commands take the fixtures from (a checkout's conformance/fixtures
    /// when run in one, else the data folder), and whether each SDK's fixture is installed there.
    Path,
}

/// Run `mcp-once fixtures`.
pub fn run(a: FixturesArgs) -> Result<ExitCode> {
    match a.action {
        Action::Install { dir } => {
            let dir = match dir.or_else(installed::data_dir) {
                Some(dir) => dir,
                None => return Err(anyhow!("no data folder: neither XDG_DATA_HOME nor HOME is set; give --dir")),
            };
            installed::install(&dir)?;
            println!("fixtures installed in {}", dir.display());
            Ok(ExitCode::SUCCESS)
        }
        Action::Path => {
            let dir = installed::locate(None);
            println!("{}", dir.display());
            for (sdk, ready) in installed::readiness(&dir) {
                eprintln!(
                    "  {sdk}: {}",
                    if ready { "installed" } else { "not installed (run: mcp-once fixtures install)" }
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
