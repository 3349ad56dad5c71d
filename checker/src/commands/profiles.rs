//! `mcp-once profiles`: the built-in profiles, or one profile's knobs with their citations.

use crate::cells::{builtins, profile_for};
use crate::report::profiles::{profile_knobs, profile_list};
use anyhow::Result;
use clap::Args;
use std::process::ExitCode;

/// Options of `mcp-once profiles`.
#[derive(Args)]
pub struct ProfilesArgs {
    /// A profile name or file to show.
    profile: Option<String>,
}

/// Run `mcp-once profiles`.
pub fn run(a: ProfilesArgs) -> Result<ExitCode> {
    let mut loaded = builtins();
    match a.profile {
        None => crate::report::format::emit(&profile_list(&loaded))?,
        Some(name) => crate::report::format::emit(&profile_knobs(&profile_for(&name, &mut loaded)?))?,
    }
    Ok(ExitCode::SUCCESS)
}
