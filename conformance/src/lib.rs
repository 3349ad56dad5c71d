//! # mcp-once conformance
//!
//! Turns model counterexamples into evidence on real MCP servers. This crate is where the
//! replay runner and the probe grow (see ARCHITECTURE.md); today it holds the replay plan: how
//! each step of the model's action vocabulary becomes something a runner drives or awaits
//! ([`plan`]), and the Rust ledger fixture server on the Rust MCP SDK ([`fixture`], binary
//! `mcp-once-fixture`).

pub mod fixture;
pub mod plan;
pub mod replay;
pub mod usage;
