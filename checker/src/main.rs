//! `mcp-once`: model-check MCP tool calls for at-most-once execution under each revision of the
//! specification and each proposal.
//!
//! Exit codes (as Maelstrom's): 0 every checked property holds, 1 a property is violated, 2 no
//! verdict could be established (bad input, a configuration that does not apply).
//!
//! Layout: `cli` parses, `commands` has one file per subcommand (its options and the function
//! that runs it), `run` runs the searches, `compare` reduces cells to comparable verdicts, `confirm` replays their counterexamples, `shard` splits the matrix and joins its
//! shards, and
//! `report` renders everything that is printed.

mod args;
mod benchmark;
mod cells;
mod cli;
mod client_verdicts;
mod commands;
mod compare;
mod confirm;
mod conformant;
mod fix;
mod key_effect;
mod report;
mod shard;

use cli::Command;
use commands::{
    bench, check, diff, explain, explore, fixture, fixtures, matrix, merge, probe, probe_client, profiles, replay,
    serve,
};
use std::process::ExitCode;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let result = match cli::parse().command {
        Command::Check(a) => check::run(a),
        Command::Matrix(a) => matrix::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Explore(a) => explore::run(a),
        Command::Fixture(a) => fixture::run(a),
        Command::Fixtures(a) => fixtures::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Probe(a) => probe::run(a),
        Command::Serve(a) => serve::run(a),
        Command::ProbeClient(a) => probe_client::run(a),
        Command::Confirm(a) => commands::confirm::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Explain(a) => explain::run(a),
        Command::Profiles(a) => profiles::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("mcp-once: {}", e.to_string().replace('\n', " "));
            ExitCode::from(2)
        }
    }
}
