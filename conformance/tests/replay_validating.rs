//! SEP-1686's validating receiver on the Rust fixture (`--variant validates-task-id
//! --outcome-query`): a task id's record is on disk from receipt, a request with a known task
//! id is refused with `-32602` ("Task ID already exists", §7.1) and runs nothing, the record
//! of a task lost with its process survives SIGKILL, and a counterexample of the model's
//! `validates-task-id` server through such a refusal is replayed as confirmed. Real processes,
//! raw JSON-RPC frames, the real ledger; every wait is bounded and waits for an event.

mod common;

use std::path::Path;
use std::time::Duration;

use mcp_once_conformance::replay::sdk_fixtures::Sdk;
use mcp_once_conformance::replay::ReplayVerdict as Verdict;
use mcp_once_model::search::Counterexample;
use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::{Action, ClientPolicy, Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl};
use mcp_once_model::{State, Transport};
use mcp_once_testkit::jsonl::read_or_empty as read_objects;
use mcp_once_testkit::scratch;
use mcp_once_testkit::stdio::Peer;
use serde_json::{json, Value};
use stateright::Model;

const BOUND: Duration = Duration::from_secs(20);
const BIN: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

/// The 2026-07-28 per-request `_meta`, declaring the tasks extension rmcp asks of a client
/// that sends `tasks/get`.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "replay-validating-test", "version": "0"}
    })
}

fn start(ledger: &Path) -> Peer {
    let argv: Vec<String> = [BIN, "--ledger", &ledger.display().to_string(), "--variant", "validates-task-id"]
        .into_iter()
        .chain(["--outcome-query"])
        .map(String::from)
        .collect();
    Peer::spawn(&argv, BOUND)
}

fn call(id: i64, task_id: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "charge", "arguments": arguments, "idempotencyKey": task_id, "_meta": meta()}})
}

fn status(peer: &mut Peer, id: &str, task_id: &str) -> Value {
    let answer = peer.request(json!(id), "tasks/get", json!({"taskId": task_id, "_meta": meta()}));
    answer["result"]["status"].clone()
}

fn assert_task_exists(answer: &Value, task_id: &str) {
    assert_eq!(answer["error"]["code"], json!(-32602), "a known task id is Invalid params: {answer}");
    assert_eq!(answer["error"]["message"], json!(format!("Task ID already exists: {task_id}")), "{answer}");
}

#[test]
fn a_known_task_id_is_refused_while_its_task_runs_and_after_it_completed() {
    let dir = scratch!("replay-validating", "refuses");
    let ledger = dir.ledger();
    let mut f = start(&ledger);
    f.send(&call(1, "k", json!({"amount": 42, "delay_before_ms": 3000})));
    f.stderr_line("charge 1: task \"k\" created");
    assert_eq!(status(&mut f, "q1", "k"), "working");
    f.send(&call(2, "k", json!({"amount": 42})));
    assert_task_exists(&f.response(&json!(2)), "k");
    assert!(f.response(&json!(1)).get("result").is_some());
    assert_eq!(status(&mut f, "q2", "k"), "completed");
    f.send(&call(3, "k", json!({"amount": 42})));
    assert_task_exists(&f.response(&json!(3)), "k");
    // Another task id is another task.
    f.send(&call(4, "j", json!({"amount": 1})));
    assert!(f.response(&json!(4)).get("result").is_some());
    f.kill();
    assert_eq!(read_objects(&ledger).len(), 2, "one effect per task id");
}

#[test]
fn a_task_lost_with_its_process_keeps_its_id_after_a_restart() {
    let dir = scratch!("replay-validating", "restart");
    let ledger = dir.ledger();
    let mut f = start(&ledger);
    f.send(&call(1, "k", json!({"amount": 7, "delay_before_ms": 10000})));
    f.stderr_line("charge 1: task \"k\" created");
    f.kill();
    let mut g = start(&ledger);
    assert_eq!(status(&mut g, "q", "k"), "working", "the created task is on disk, not completed");
    g.send(&call(2, "k", json!({"amount": 7})));
    assert_task_exists(&g.response(&json!(2)), "k");
    g.kill();
    assert_eq!(read_objects(&ledger).len(), 0, "no effect: the task never ran, and its id is taken");
}

/// The model's path through a refusal: over HTTP the query overtakes the first request (still
/// on the network: unknown), the client retries, the first request creates the task and takes
/// its effect, the retry is refused, and with no retry left the caller is told the call failed.
fn refused_retry(m: &McpModel) -> Counterexample {
    let actions = [
        Action::ClientCall { call: 0 },
        Action::StreamBreak { call: 0, attempt: 0 },
        Action::ClientQueryOutcome { call: 0 },
        Action::ClientRetry { call: 0, attempt: 1 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ServerCommit { call: 0, attempt: 0 },
        Action::ServerReceive { call: 0, attempt: 1, instance: 0 },
        Action::ClientReceive { call: 0, attempt: 1 },
    ];
    let mut states: Vec<State> = m.init_states();
    for a in actions {
        let next = m.next_state(states.last().unwrap(), a).unwrap_or_else(|| panic!("{a} leads nowhere"));
        states.push(next);
    }
    assert!(!PropertyKind::NoSilentEffect.holds(m, states.last().unwrap()));
    Counterexample { states, actions: actions.to_vec(), index_path: String::new() }
}

#[test]
fn a_refused_retry_after_the_effect_is_confirmed_as_a_silent_effect() {
    let profile = Profile::load("outcome-query").unwrap();
    let config = Config::builder(&profile.name)
        .transport(Transport::Http)
        .client(ClientPolicy::RetryAny)
        .key(KeyLifetime::PerCall)
        .server(ServerImpl::ValidatesTaskId)
        .crashes(0)
        .build();
    let model = McpModel::new(config.clone(), profile.clone()).unwrap();
    let kind = TraceKind::Counterexample(PropertyKind::NoSilentEffect);
    let trace = TraceFile::from_counterexample(&model, kind, &refused_retry(&model), false);
    let dir = scratch!("replay-validating", "refused-retry");
    let result = common::run(&trace, &config, &profile, &dir, "validating-refused-retry");
    assert_eq!(result.verdict, Verdict::Confirmed, "{}", result.to_json());
    assert_eq!(result.observed_effects, Some(1), "{}", result.to_json());
    let refused = result.steps.iter().rev().find(|s| s.action.starts_with("ClientReceive")).expect("the refusal");
    let note = refused.note.as_deref().unwrap_or("");
    assert!(note.contains("-32602") && note.contains("Task ID already exists"), "{note}");
    // The other SDKs' fixtures have no validating receiver: said, never replayed on another.
    for sdk in [Sdk::TypeScript, Sdk::Python] {
        let why = common::paths().options_for_cell(sdk, &config, &profile, &dir).unwrap_err().to_string();
        assert!(why.contains("validates-task-id") && why.contains("only the Rust fixture"), "{why}");
    }
}
