//! What several of the model's test binaries build alike: the built-in matrix's models with a
//! given number of calls, a two-call cell by its axes, the largest one, and a folder for a
//! search's spill files. (Each binary compiles this module and uses part of it.)
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

/// A cell of the two-call matrix by its axes (the matrix's bounds: one retry, one crash).
pub fn cell(profile: &str, transport: Transport, client: ClientPolicy, server: ServerImpl) -> McpModel {
    matrix_models(2)
        .into_iter()
        .find(|m| {
            let c = &m.config;
            c.profile == profile && c.transport == transport && c.client == client && c.server == server
        })
        .expect("the cell is in the matrix")
}

/// The matrix's largest two-call cell: 2026-07-28 over HTTP, a client that retries as an agent
/// framework does, a server that deduplicates by JSON-RPC id.
pub fn largest_two_call_cell() -> McpModel {
    cell("mcp-2026-07-28", Transport::Http, ClientPolicy::FrameworkRetry, ServerImpl::DedupById)
}

/// A folder of its own for one search's spill files (the caller removes it).
pub fn spill_folder() -> &'static Path {
    Box::leak(tempfile::tempdir().unwrap().keep().into_boxed_path())
}
