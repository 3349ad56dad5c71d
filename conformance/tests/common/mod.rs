//! What the replay tests of single cells share: the fixture paths, the model's shortest
//! counterexample for a cell, and one replay of it on the Rust fixture (or another SDK's) started
//! for the cell (its `--cancel`, `--handler`), with every process group the runner started
//! checked gone.

use mcp_once_conformance::replay::evidence::Evidence;
use mcp_once_conformance::replay::sdk_fixtures::{FixturePaths, Sdk};
use mcp_once_conformance::replay::{replay, ReplayResult};
use mcp_once_model::search::check_property;
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Bounds, Config, McpModel, Profile, PropertyKind};
use mcp_once_testkit::jsonl::read as read_objects;
use mcp_once_testkit::process::assert_groups_gone;
use std::path::Path;

/// Where the fixtures are: the SDK fixtures' folder and this package's Rust fixture binary.
pub fn paths() -> FixturePaths {
    FixturePaths {
        fixtures_dir: mcp_once_testkit::fixtures::dir(),
        rust_fixture: vec![env!("CARGO_BIN_EXE_mcp-once-fixture").into()],
    }
}

/// The cell the single-cell replay tests start from: SEP-3182 over HTTP, a client that
/// retries on any failure with one key per call, a durable key store, one call, one retry, no
/// crash, the default handler and one instance (each test changes its own axis).
#[allow(dead_code)] // replay_validating builds its own cell and trace
pub fn durable_key_cell() -> (Config, Profile) {
    let profile = Profile::load("sep-3182").unwrap();
    let config = mcp_once_model::catalogue::keyed_safe_cell(Bounds { calls: 1, retries: 1, crashes: 0 });
    (config, profile)
}

/// The model's shortest at-most-once counterexample for the cell, if it has one.
#[allow(dead_code)] // replay_validating builds its own cell and trace
pub fn counterexample(config: &Config, profile: &Profile) -> Option<TraceFile> {
    let model = McpModel::new(config.clone(), profile.clone()).unwrap();
    let path = check_property(&model, PropertyKind::AtMostOnce).counterexample?;
    Some(TraceFile::from_counterexample(&model, TraceKind::Counterexample(PropertyKind::AtMostOnce), &path, false))
}

/// Replay `trace` on the Rust fixture started for the cell `fixture`, in `dir`.
#[allow(dead_code)] // every test binary compiles this module; replay_mrtr calls `run_on` only
pub fn run(trace: &TraceFile, fixture: &Config, profile: &Profile, dir: &Path, name: &str) -> ReplayResult {
    run_on(Sdk::Rust, trace, fixture, profile, dir, name)
}

/// Replay `trace` on `sdk`'s fixture started for the cell `fixture`, in `dir`.
pub fn run_on(
    sdk: Sdk,
    trace: &TraceFile,
    fixture: &Config,
    profile: &Profile,
    dir: &Path,
    name: &str,
) -> ReplayResult {
    let mut opts = paths().options_for_cell(sdk, fixture, profile, dir).unwrap_or_else(|e| panic!("{e}"));
    opts.revision = None;
    let evidence = Evidence::new(opts.evidence_dir.as_deref()).expect("evidence");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
    let result = rt.block_on(replay(trace, name, profile.clone(), opts, evidence));
    assert_groups_gone(&read_objects(result.evidence.as_ref().expect("evidence written")), name);
    result
}
