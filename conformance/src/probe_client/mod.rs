//! Probing a client: `mcp-once serve`, an MCP server (rmcp; stdio and Streamable HTTP) whose
//! one side-effecting tool follows a named fault scenario and writes every frame, attempt,
//! effect, cancellation and answer to a record file; and the `probe-client` runner, which
//! starts a client command against it once per scenario and classifies what the client did
//! from that record.
//!
//! The client contract (the official conformance suite's client mode, plus two variables): the
//! command gets the server's URL (HTTP) or the command line that starts the server (stdio, to
//! split on whitespace) as its last argument, and `MCP_CONFORMANCE_SCENARIO`, `MCP_ONCE_TOOL`
//! and `MCP_ONCE_ARGS` (JSON) in its environment; it makes one logical call and exits.

mod classify;
mod http;
pub mod measured;
mod record;
mod runner;
mod scenario;
mod serve;
mod stdio;
mod tool;

pub use classify::{classify, ClientProfile, KeyFound, Observed, PolicyFound};
pub use record::{find_key, read as read_record};
pub use runner::{run_scenario, ClientCommand, ProbeError, RunOptions, ScenarioRun};
pub use scenario::{Scenario, ServeOptions, Transport, ARGS, TOOL};
pub use serve::{run, run_blocking, InProcess};
