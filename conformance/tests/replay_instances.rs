//! Issue 12, item 2, on real processes: a SEP-3182 server deployed as two instances behind a
//! load balancer. The model's 7-step counterexample (`sep-3182 / http / retry-any / per-call /
//! key-durable / --instances 2 --store per-instance / crashes 0`) is replayed on two Rust
//! fixture processes on one ledger, the runner sending each attempt to the instance the
//! trace's `ServerReceive` names: the retry reaches the other instance while the first attempt
//! runs, and each instance, with a key store of its own, charges once (two ledger lines, one
//! from each process). The same trace on two processes sharing their store is not reproduced:
//! one process charges, and the other, reading the shared store, runs nothing. And a crash of
//! one instance: a server that records its key after the effect, on a shared store, killed
//! between the two; the retry, sent before the crash, reaches the instance still running and
//! charges again (confirmed: one ledger line from each process, the first process killed).
//! Every process group the runner started is gone after each replay.

mod common;

use common::{counterexample, durable_key_cell, run};
use mcp_once_conformance::replay::{ReplayResult, ReplayVerdict as Verdict};
use mcp_once_model::trace::TraceFile;
use mcp_once_model::{Action, Bounds, Config, Deployment, Profile, ServerImpl, StoreScope};
use mcp_once_testkit::jsonl::read as read_objects;
use mcp_once_testkit::process::started_groups;
use mcp_once_testkit::scratch;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The cell: SEP-3182 over HTTP, a client that retries on any failure with one key per call, a
/// durable key store, two instances keeping their store as `store` says.
fn cell(store: StoreScope) -> (Config, Profile) {
    let (config, profile) = durable_key_cell();
    (Config { deployment: Deployment { instances: 2, store: Some(store) }, ..config }, profile)
}

/// The per-instance cell's counterexample, checked to be the 7 steps the issue names: no
/// crash, the retry read by the other instance.
fn per_instance_trace() -> (TraceFile, Profile) {
    let (config, profile) = cell(StoreScope::PerInstance);
    let trace = counterexample(&config, &profile).expect("the model finds the cell violated");
    assert_eq!(trace.actions.len(), 7, "{:?}", trace.actions);
    assert!(!trace.actions.iter().any(|a| matches!(a, Action::ServerCrash { .. })), "no crash");
    let readers: BTreeSet<u8> = trace
        .actions
        .iter()
        .filter_map(|a| match *a {
            Action::ServerReceive { instance, .. } => Some(instance),
            _ => None,
        })
        .collect();
    assert_eq!(readers, BTreeSet::from([0, 1]), "each instance reads one attempt: {:?}", trace.actions);
    (trace, profile)
}

/// The instance and process of each ledger line.
fn writers(dir: &Path) -> Vec<(u64, u64)> {
    read_objects(&dir.join("ledger.jsonl"))
        .iter()
        .map(|l| (l.get("instance").and_then(Value::as_u64).unwrap_or(0), l["pid"].as_u64().expect("pid")))
        .collect()
}

/// The pids of the server processes the evidence says the runner started.
fn started(result: &ReplayResult) -> BTreeSet<u64> {
    let records = read_objects(result.evidence.as_ref().expect("evidence written"));
    started_groups(&records).into_iter().map(|p| p as u64).collect()
}

#[test]
fn a_retry_reaching_the_other_instance_is_confirmed_when_each_keeps_its_own_store() {
    let (trace, profile) = per_instance_trace();
    let (fixture, _) = cell(StoreScope::PerInstance);
    let dir = scratch!("replay-instances", "per-instance");
    let result = run(&trace, &fixture, &profile, &dir, "per-instance");
    let instances: BTreeSet<u64> = confirmed_on_two_processes(&result, &dir).into_iter().collect();
    assert_eq!(instances, BTreeSet::from([0, 1]), "one effect on each instance");
}

/// Assert that `result` is confirmed with two effects, each a ledger line of its own process,
/// both processes the runner's. Returns the instance of each line, in the ledger's order.
fn confirmed_on_two_processes(result: &ReplayResult, dir: &Path) -> Vec<u64> {
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    assert_eq!(result.observed_effects, Some(2), "{}", result.to_json());
    let lines = writers(dir);
    let pids: BTreeSet<u64> = lines.iter().map(|(_, p)| *p).collect();
    assert_eq!(pids.len(), 2, "two processes charged: {lines:?}");
    let started = started(result);
    assert!(pids.is_subset(&started), "the charging processes are the runner's: {pids:?} of {started:?}");
    lines.iter().map(|(i, _)| *i).collect()
}

#[test]
fn the_same_trace_on_instances_sharing_their_store_is_not_reproduced() {
    let (trace, profile) = per_instance_trace();
    let (fixture, _) = cell(StoreScope::Shared);
    let dir = scratch!("replay-instances", "shared");
    let result = run(&trace, &fixture, &profile, &dir, "shared");
    // Over HTTP the runner cannot see a server read a POST before it answers, so the two
    // requests, written a moment apart to two instances, may be read in either order. When the
    // retry's instance marks the shared key first, the first attempt is refused as in progress
    // before its stream can be broken: the trace's fault was not made, and the replay says so
    // (inconclusive, never not-reproduced on a path it did not take).
    match result.verdict {
        Verdict::NotReproduced => assert_eq!(result.fault_not_made, None, "{}", result.to_json()),
        Verdict::Inconclusive => {
            let why = result.fault_not_made.as_deref().unwrap_or_default();
            assert!(why.contains("in progress") && why.contains("could not be broken"), "{}", result.to_json());
        }
        other => panic!("{other:?}: {}", result.to_json()),
    }
    assert_eq!(result.observed_effects, Some(1), "{}", result.to_json());
    // One effect in all, over two processes sharing their store. Which instance took it, and
    // whether the other refused the retry as in progress or replayed it, depends on timing the
    // runner does not pin (the hold before a commit is a bound): not asserted.
    let lines = writers(&dir);
    assert_eq!(lines.len(), 1, "one effect in all: {lines:?}");
}

/// The crash cell: the key recorded after the effect, one store shared by two instances, one
/// crash. Its counterexample, checked to be the 8 steps where instance 0 takes the effect and is
/// killed before its record, and instance 1 reads the retry after the crash.
fn crash_trace() -> (TraceFile, Config, Profile) {
    let (config, profile) = cell(StoreScope::Shared);
    let config =
        Config { server: ServerImpl::KeyAfterEffect, bounds: Bounds { crashes: 1, ..config.bounds }, ..config };
    let trace = counterexample(&config, &profile).expect("the model finds the cell violated");
    let at = |want: &dyn Fn(&Action) -> bool| trace.actions.iter().position(want);
    let crash = at(&|a| *a == Action::ServerCrash { instance: 0 }).expect("instance 0 crashes");
    let first = at(&|a| matches!(a, Action::ServerCommit { attempt: 0, .. })).expect("the first attempt commits");
    let retry_read = at(&|a| matches!(a, Action::ServerReceive { attempt: 1, instance: 1, .. }))
        .expect("instance 1 reads the retry");
    let retry_sent = at(&|a| matches!(a, Action::ClientRetry { attempt: 1, .. })).expect("a retry");
    assert!(first < crash && retry_sent < crash && crash < retry_read, "{:?}", trace.actions);
    (trace, config, profile)
}

#[test]
fn a_retry_sent_before_one_instance_crashes_reaches_the_other_and_is_confirmed() {
    let (trace, fixture, profile) = crash_trace();
    let dir = scratch!("replay-instances", "crash");
    let result = run(&trace, &fixture, &profile, &dir, "crash");
    assert_eq!(confirmed_on_two_processes(&result, &dir), [0, 1], "instance 0 charges, then instance 1");
}
