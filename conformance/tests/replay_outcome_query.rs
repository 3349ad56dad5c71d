//! An `outcome-query` counterexample whose path asks for a call's outcome, replayed on each
//! fixture's key store serving the proposal (`--outcome-query`): the runner realises the
//! model's `ClientQueryOutcome` as `tasks/get` and checks the server answers as the model does.
//! Real processes, a real SIGKILL; after the replay every process group the runner started is
//! gone.

use mcp_once_conformance::replay::evidence::Evidence;
use mcp_once_conformance::replay::sdk_fixtures::{FixturePaths, Sdk};
use mcp_once_conformance::replay::{replay, ReplayVerdict as Verdict, Revision};
use mcp_once_model::search::check_property;
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Action, Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl, Transport};
use mcp_once_testkit::process::assert_groups_gone;
use mcp_once_testkit::{fixtures, jsonl, scratch};

/// A volatile record is lost with the process: after a crash the query answers "unknown"
/// (`tasks/get`: -32602), the client retries, and the call runs twice.
#[test]
fn a_query_answered_unknown_after_a_crash_is_confirmed() {
    let profile = Profile::load("outcome-query").unwrap();
    let config = Config::builder(&profile.name).key(KeyLifetime::PerCall).server(ServerImpl::KeyVolatile).build();
    let model = McpModel::new(config, profile.clone()).unwrap();
    let path = check_property(&model, PropertyKind::AtMostOnce).counterexample.expect("a counterexample");
    let trace =
        TraceFile::from_counterexample(&model, TraceKind::Counterexample(PropertyKind::AtMostOnce), &path, false);
    assert!(
        trace.actions.iter().any(|a| matches!(a, Action::ClientQueryOutcome { .. })),
        "the path asks for the outcome: {:?}",
        trace.actions
    );

    // On every fixture: the TypeScript fixture's tasks/get is a low-level handler, the Python
    // one an extension method, rmcp's its own. The profile's revision is 2026-07-28, which the
    // TypeScript SDK 1.32.2 does not speak: it is replayed over 2025-11-25 (the fixture options'
    // default), where tasks/get is the same request.
    for sdk in Sdk::ALL {
        let name = format!("outcome-query-volatile-crash-{}", sdk.as_str());
        let dir = scratch!("replay-outcome-query", &name);
        let paths = FixturePaths {
            fixtures_dir: fixtures::dir(),
            rust_fixture: vec![env!("CARGO_BIN_EXE_mcp-once-fixture").into()],
        };
        let mut opts = paths
            .options_for_profile(sdk, ServerImpl::KeyVolatile, &profile, Transport::Stdio, &dir)
            .unwrap_or_else(|e| panic!("{e}"));
        if sdk.speaks(Revision::R2026_07_28).is_ok() {
            opts.revision = None;
        }
        let evidence = Evidence::new(opts.evidence_dir.as_deref()).expect("evidence");
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime");
        let result = rt.block_on(replay(&trace, &name, profile.clone(), opts, evidence));
        assert_groups_gone(&jsonl::read(result.evidence.as_ref().expect("evidence written")), &name);

        assert_eq!(result.verdict, Verdict::Confirmed, "{name}: {}", result.to_json());
        assert_eq!(result.observed_effects, Some(2), "{name}: {}", result.to_json());
        let query = result.steps.iter().find(|s| s.action.starts_with("ClientQueryOutcome")).expect("a query step");
        let note = query.note.as_deref().unwrap_or("");
        assert!(note.starts_with("tasks/get taskId ") && note.contains("unknown"), "{name}: {note}");
    }
}
