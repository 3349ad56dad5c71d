//! The command line: the subcommands, their help texts and examples, and parsing with usage
//! errors folded into one line. Each subcommand's options live beside the function that runs it
//! (`crate::commands`).

use crate::commands::{
    bench, check, confirm, diff, explain, explore, fixture, fixtures, matrix, merge, probe, probe_client, profiles,
    replay, serve,
};
use clap::{Parser, Subcommand};

/// `mcp-once`'s command line.
#[derive(Parser)]
#[command(name = "mcp-once", version, about = "Prove, and show, when an MCP tool call can run twice.")]
pub struct Cli {
    /// The subcommand.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Check one configuration; with no configuration flags, the built-in default matrix.
    #[command(
        after_help = "Examples:\n  mcp-once check\n  mcp-once check --profile sep-3182 --transport http --client retry-any --server key-volatile --key per-call --crashes 1\n  mcp-once check --profile specs/proposals/my-sep.toml --server key-durable --key per-call --calls 2 --retries 2 --format json --out traces\n  mcp-once check --trace traces/mcp-2025-11-25__stdio__...__at-most-once.itf.json"
    )]
    Check(check::CheckArgs),
    /// Check every built-in cell (profiles x transports x client policies x servers) as a table.
    #[command(
        after_help = "Examples:\n  mcp-once matrix\n  mcp-once matrix --profile mcp-2026-07-28 --profile sep-3182 --format markdown --out traces\n  mcp-once matrix --shard 2/3 --format json > shard2.json"
    )]
    Matrix(matrix::MatrixArgs),
    /// Join the JSON of `matrix --shard K/N` runs into the whole matrix, as one run prints it.
    #[command(
        after_help = "Exit code: 1 a property is violated in some cell, 0 none, 2 the files are not every shard of one matrix.\nExamples:\n  mcp-once matrix --shard 1/3 --format json > s1.json   (and 2/3, 3/3, anywhere)\n  mcp-once merge s1.json s2.json s3.json --format json"
    )]
    Merge(merge::MergeArgs),
    /// Step through one configuration by hand in stateright's Explorer (a web UI on localhost).
    #[command(
        after_help = "Examples:\n  mcp-once explore --profile mcp-2025-11-25 --client retry-on-disconnect --crashes 1\n  then open http://127.0.0.1:3000/"
    )]
    Explore(explore::ExploreArgs),
    /// Model-check a proposed spec change: the matrix under two profiles, only the cells that change.
    #[command(
        after_help = "Exit code: 0 no cell changes, 1 some cells change, 2 trouble.\nExamples:\n  mcp-once diff mcp-2026-07-28 sep-3182\n  mcp-once diff mcp-2026-07-28 specs/proposals/my-proposal.toml --format markdown"
    )]
    Diff(diff::DiffArgs),
    /// Write an issue-ready Markdown report of a trace file (summary, cited steps, Mermaid diagram).
    #[command(
        after_help = "Examples:\n  mcp-once explain traces/mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c1r1k1__at-most-once.itf.json > issue.md\n  mcp-once explain TRACE --evidence out/ > issue.md   (with a replay's evidence folder)"
    )]
    Explain(explain::ExplainArgs),
    /// Run the bundled Rust (rmcp) ledger fixture server, over stdio or Streamable HTTP.
    #[command(
        after_help = "Examples:\n  mcp-once fixture --sdk rust --transport stdio --ledger ledger.jsonl\n  mcp-once fixture --sdk rust --transport http --port 8931 --variant key-durable --ledger ledger.jsonl\nThe TypeScript and Python fixtures: mcp-once fixtures install, then mcp-once fixture --sdk python says how to start one."
    )]
    Fixture(fixture::FixtureArgs),
    /// Install the TypeScript and Python ledger fixtures (pinned) where the commands find them,
    /// or print where that is.
    #[command(
        after_help = "Examples:\n  mcp-once fixtures install\n  mcp-once fixtures install --dir /opt/mcp-once-fixtures   (then confirm --fixtures /opt/mcp-once-fixtures)\n  mcp-once fixtures path"
    )]
    Fixtures(fixtures::FixturesArgs),
    /// Replay a trace against a real MCP server, injecting its faults and counting side effects.
    #[command(
        after_help = "Exit code: 1 confirmed, 0 not reproduced, 2 diverged, inconclusive or interrupted.\nExamples:\n  mcp-once replay traces/mcp-2025-11-25__stdio__retry-on-timeout__none__plain__c1r1k0__at-most-once.itf.json \\\n      --stdio \"node conformance/fixtures/typescript/server.mjs --ledger l.jsonl\" --args '{\"amount\":42}' --observe ledger:l.jsonl\n  mcp-once replay TRACE --http http://127.0.0.1:8931/mcp --launch \"mcp-once fixture --transport http --port 8931 --ledger l.jsonl\" \\\n      --args '{\"amount\":42}' --observe tool:ledger_count --evidence out/"
    )]
    Replay(replay::ReplayArgs),
    /// Conformance-test a server: replay the model's catalogue for its revision and transport
    /// (and, with --key-at, check SEP-3182 key semantics); results in the MCP conformance suite's shape.
    #[command(
        after_help = "Exit code: 1 a check failed, 2 a check could not be tested, 0 all passed.\nExamples:\n  mcp-once probe --stdio \"node conformance/fixtures/typescript/server.mjs --ledger l.jsonl\" --args '{\"amount\":42}' --observe ledger:l.jsonl\n  mcp-once probe --http http://127.0.0.1:8931/mcp --launch \"mcp-once fixture --transport http --port 8931 --variant key-durable --ledger l.jsonl\" \\\n      --args '{\"amount\":42}' --key-at params --observe ledger:l.jsonl --format json"
    )]
    Probe(probe::ProbeArgs),
    /// Serve one fault scenario to a client under test (what `probe-client` runs): a side-effecting
    /// tool `charge`, every frame and attempt appended to a record file.
    #[command(
        after_help = "Scenarios: ok, timeout, disconnect, error, is-error, never (each takes the effect first).\nExamples:\n  mcp-once serve --transport stdio --scenario timeout --record record.jsonl --hold-ms 3000\n  mcp-once serve --transport http --port 8931 --scenario disconnect --record record.jsonl"
    )]
    Serve(serve::ServeArgs),
    /// Probe a client: run its command once per fault scenario, find its retry and key policy,
    /// and say what the model makes of it under each built-in profile.
    #[command(
        after_help = "Exit code: 1 one logical call ran the tool twice, 2 the client could not be probed (did not start, never connected, made no call) or an outcome is unknown, 0 otherwise.\nExamples:\n  mcp-once probe-client --client \"python my_client.py\" --transport http --format json\n  mcp-once probe-client --client \"node client.mjs\" --scenario timeout --scenario disconnect --hold-ms 3000"
    )]
    ProbeClient(probe_client::ProbeClientArgs),
    /// Replay every counterexample of the default matrix (or of the cells chosen) on the fixture
    /// that implements its cell's server, or on a server given by --stdio/--http, and say which
    /// are confirmed.
    #[command(
        after_help = "Exit code: 0 every counterexample confirmed (on a given server: every one of a server behaviour it fits, plain or honours-cancel), 1 some not (not reproduced, diverged, inconclusive), 2 bad input.\nExamples:\n  mcp-once confirm\n  mcp-once confirm --profile mcp-2025-11-25 --transport stdio --server dedup-by-id-durable --format json\n  mcp-once confirm --sdk rust --sdk python --cells __http__ --jobs 4 --evidence confirm-evidence\n  mcp-once confirm --profile mcp-2025-11-25 --client retry-on-timeout --stdio \"node server.js\" --tool create_note \\\n      --args '{\"text\":\"{{call}}\"}' --observe sh:\"wc -l < notes.txt\""
    )]
    Confirm(confirm::ConfirmArgs),
    /// List the built-in profiles, or show one profile's knobs with their citations.
    #[command(after_help = "Examples:\n  mcp-once profiles\n  mcp-once profiles sep-3182")]
    Profiles(profiles::ProfilesArgs),
    /// Measure the checker: states, time and memory per cell, the default matrix, growth with the bounds.
    #[command(after_help = "Examples:\n  mcp-once bench --quick\n  mcp-once bench --format json > bench.json")]
    Bench(bench::BenchArgs),
}

/// Parse the command line; a usage error is one line (clap's text folded), exit 2.
pub fn parse() -> Cli {
    match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion) => {
            e.exit()
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
        Err(e) => {
            eprintln!("mcp-once: {} (see mcp-once --help)", mcp_once_conformance::usage::one_line(&e));
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// clap checks a command's definition (unique ids and groups, sane defaults) only in debug
    /// builds and only for the subcommand run; this checks every one.
    #[test]
    fn every_subcommand_is_well_formed() {
        Cli::command().debug_assert();
    }
}
