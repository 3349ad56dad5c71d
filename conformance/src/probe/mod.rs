//! The probe: conformance-test one server with the model's catalogue, in the official MCP
//! conformance suite's check shape. It replays traces with the runner in [`crate::replay`].
//!
//! Layout: [`server`] (the entry: a [`preflight`] first, then one check per catalogue scenario),
//! [`key_checks`] (the SEP-3182 semantics checked directly, with [`other_args`] for the conflict
//! check), [`checks`] (the records and their text and JSON) and [`baseline`] (an expected-failures
//! file judged against them).

pub mod baseline;
pub mod checks;
pub mod key_checks;
pub mod other_args;
pub mod preflight;
pub mod server;

pub use server::{check_ids, every_check_id, probe, run_probe, ProbeError};
