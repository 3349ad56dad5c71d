//! What several of the model's test binaries build alike: the built-in matrix's models with a
//! given number of calls, its largest two-call cell, and a folder for a search's spill files.
//! (Each binary compiles this module and uses part of it.)
#![allow(dead_code)]

use mcp_once_model::catalogue::{builtin_profiles, matrix};
use mcp_once_model::*;
use std::path::Path;

/// The models of `cells`, each with `calls` logical calls (cells the model refuses left out).
pub fn models_of(cells: Vec<Config>, calls: u8) -> Vec<McpModel> {
    let profiles = builtin_profiles();
    cells
        .into_iter()
        .filter_map(|mut config| {
            config.bounds.calls = calls;
            let profile = profiles.iter().find(|p| p.name == config.profile).unwrap().clone();
            McpModel::new(config, profile).ok()
        })
        .collect()
}

/// Every cell of the built-in matrix, with `calls` logical calls.
pub fn matrix_models(calls: u8) -> Vec<McpModel> {
    models_of(matrix(&builtin_profiles()), calls)
}

/// The matrix's largest two-call cell: 2026-07-28 over HTTP, a client that retries as an agent
/// framework does, a server that deduplicates by JSON-RPC id.
pub fn largest_two_call_cell() -> McpModel {
    matrix_models(2)
        .into_iter()
        .find(|m| {
            m.config.profile == "mcp-2026-07-28"
                && m.config.transport == Transport::Http
                && m.config.client == ClientPolicy::FrameworkRetry
                && m.config.server == ServerImpl::DedupById
        })
        .expect("the cell is in the matrix")
}

/// A folder of its own for one search's spill files (the caller removes it).
pub fn spill_folder() -> &'static Path {
    Box::leak(tempfile::tempdir().unwrap().keep().into_boxed_path())
}
