//! # mcp-once conformance
//!
//! Turns model counterexamples into evidence on real MCP servers. This crate is where the
//! replay runner and the probe grow (see ARCHITECTURE.md); today it holds the replay plan: how
//! each step of the model's action vocabulary becomes something a runner drives or awaits
//! ([`plan`]), the Rust ledger fixture server on the Rust MCP SDK ([`fixture`], binary
//! `mcp-once-fixture`), and the ledger observer that counts effects ([`ledger_count`]).

pub mod fixture;
pub mod ledger_count;
pub mod plan;
pub mod usage;
