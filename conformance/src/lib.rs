//! # mcp-once conformance
//!
//! Turns model counterexamples into evidence on real MCP servers: the replay runner and the
//! probe ([`replay`]: each model action becomes a step the runner drives, or a server step it
//! awaits and observes), the ledger counter its observer uses ([`ledger_count`]), and the Rust
//! ledger fixture server on the Rust MCP SDK ([`fixture`], binary `mcp-once-fixture`).

pub mod fixture;
pub mod installed;
pub mod ledger_count;
pub mod probe;
pub mod probe_client;
pub mod replay;
pub mod usage;
