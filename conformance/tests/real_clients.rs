//! The duplicate-call scenarios 1-3 reproduced by the official SDK *clients* themselves, with no
//! mcp-once client code in the loop: the TypeScript SDK 1.32.2 client
//! (`fixtures/typescript/scenario-client.mjs`) and the Python `mcp` 2.3.0 client
//! (`fixtures/python/scenario_client.py`), each against the three ledger fixture servers
//! (TypeScript SDK, Python `mcp`, rmcp), as real processes.
//!
//! 1. stdio: a request timeout (1 s, more on a slow machine: [`Margins`]) while the tool holds its
//!    reply (three timeouts) after its commit; the SDK times out (-32001) and sends
//!    `notifications/cancelled`; the caller retries once → 2 ledger lines.
//! 2. stdio: the server is SIGKILLed once its ledger line is on disk, before it replies; the SDK
//!    reports the closed connection (-32000); a new server process, the same call again → 2 lines
//!    with the same request id, from two pids.
//! 3. Streamable HTTP (loopback): as 1 → 2 lines.
//!
//! 4. LangGraph 1.2.24: a node with the default `RetryPolicy` calls `charge` through
//!    langchain-mcp-adapters 0.3.2 (on `mcp` 1.30.0; `fixtures/langgraph/scenario_graph.py`), gets
//!    its result, then fails with a `ConnectionError`; LangGraph re-runs the node twice → 3 lines,
//!    each with request id 1, from three server processes (the adapter opens one per call).
//!
//! And a contrast to 1 in which the tool holds *before* its commit, so the cancellation reaches
//! the server first: the TypeScript and rmcp servers still commit the cancelled call (2 lines);
//! the Python server interrupts it (1 line, the retry's). This is why 1-3 hold the reply
//! *after* the commit: that is the "done but not acknowledged" window the scenarios need.
//!
//! `replay_sdks.rs` shows the same counts with mcp-once's own raw client; this shows that an
//! application using the SDKs' clients as they come gets them too. The ledger is counted here
//! with `ledger_count`, not trusted from the client scripts, whose JSON summary line says what the
//! SDK reported (errors, the ids it put on the wire, the revision it negotiated).
//!
//! Every client process runs in its own process group and is waited for with a bound (the group
//! is SIGKILLed when it runs out); every server pid in the ledger must be gone once its client
//! has exited (an SDK that leaves its stdio server running fails the case). Waits are on a
//! frame, a line or a process exit, never a fixed sleep. The cases run in parallel threads, one
//! per core at once (at most four). Needs `conformance/fixtures/install.sh` to have run; a
//! missing install fails the tests, it is never skipped.

use mcp_once_conformance::ledger_count;
use mcp_once_conformance::replay::sdk_fixtures::{FixturePaths, Sdk};
use mcp_once_testkit::process::{pid_gone_within, Group, Slots};
use mcp_once_testkit::stdio::Peer;
use mcp_once_testkit::{fixtures, scratch};
use serde_json::{json, Value};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The timing margins of the timeout scenarios, which follow the machine: derived from how long
/// a Python fixture server (the slowest of the three to start) takes to answer `initialize`
/// here, measured once per test binary. A machine slow to start a server is slow to commit a
/// call too, and the commit must land before the SDK's timeout (else the Python server, which
/// interrupts a cancelled handler, rightly does not commit, and the test measures the load).
#[derive(Debug)]
struct Margins {
    /// The SDK timeout of the first attempt: twice the start-up, at least 1 s and at most 5 s
    /// (the retry waits out a hold of three timeouts within the 20 s the client scripts give a
    /// step).
    timeout_ms: u64,
    /// The hold between commit and reply: three timeouts (the reply cannot beat the timeout).
    delay_after_ms: u64,
    /// The contrast case's hold before the commit: 2.5 timeouts (the cancellation comes first).
    delay_before_ms: u64,
}

fn margins() -> &'static Margins {
    static MARGINS: OnceLock<Margins> = OnceLock::new();
    MARGINS.get_or_init(|| {
        let dir = scratch!("real-clients", "startup");
        let argv = paths().argv(Sdk::Python, &dir.ledger(), &[]).unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        let mut server = Peer::spawn(&argv, CLIENT_BOUND);
        server.initialize("real-clients-startup");
        let startup_ms = started.elapsed().as_millis() as u64;
        server.kill();
        let timeout_ms = ((2 * startup_ms).div_ceil(100) * 100).clamp(1000, 5000);
        let m = Margins { timeout_ms, delay_after_ms: 3 * timeout_ms, delay_before_ms: 5 * timeout_ms / 2 };
        println!("margins: a Python server started in {startup_ms} ms: {m:?}");
        m
    })
}

/// Cases running at once across the whole test binary: one per core, at most four. Each holds
/// a client and one or two servers (node or python start-up is CPU-heavy); more at once than
/// the cores can run slows every one of them, and with them the commits the margins are for.
fn max_concurrent_cases() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 4)
}
/// Bound on one client process (it bounds each of its own steps at 20 s).
const CLIENT_BOUND: Duration = Duration::from_secs(90);
/// Bound on an HTTP fixture's start-up (the `listening` line) and on a process going away.
const START_BOUND: Duration = Duration::from_secs(30);
const EXIT_BOUND: Duration = Duration::from_secs(10);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ClientSdk {
    TypeScript,
    Python,
    /// LangGraph + langchain-mcp-adapters (its MCP client is `mcp` 1.30.0).
    LangGraph,
}

impl ClientSdk {
    fn as_str(self) -> &'static str {
        match self {
            ClientSdk::TypeScript => "typescript",
            ClientSdk::Python => "python",
            ClientSdk::LangGraph => "langgraph",
        }
    }

    /// The version of the MCP SDK the client runs on.
    fn version(self) -> &'static str {
        match self {
            ClientSdk::TypeScript => "1.32.2",
            ClientSdk::Python => "2.3.0",
            ClientSdk::LangGraph => "1.30.0",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    /// 1: stdio, timeout, cancellation, retry.
    TimeoutStdio,
    /// 2: stdio, SIGKILL after the commit, new process, retry.
    KillStdio,
    /// 3: Streamable HTTP, timeout, cancellation, retry.
    TimeoutHttp,
    /// 1 with the hold before the commit: the cancellation arrives before it.
    CancelBeforeCommitStdio,
    /// 4: stdio, LangGraph re-runs a node whose tool call went through.
    FrameworkRerunStdio,
}

impl Scenario {
    fn script_arg(self) -> &'static str {
        match self {
            Scenario::TimeoutStdio | Scenario::TimeoutHttp | Scenario::CancelBeforeCommitStdio => "timeout",
            Scenario::KillStdio => "kill",
            Scenario::FrameworkRerunStdio => "rerun",
        }
    }

    fn transport(self) -> &'static str {
        match self {
            Scenario::TimeoutStdio
            | Scenario::KillStdio
            | Scenario::CancelBeforeCommitStdio
            | Scenario::FrameworkRerunStdio => "stdio",
            Scenario::TimeoutHttp => "http",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Scenario::CancelBeforeCommitStdio => "cancel-before-commit",
            other => other.script_arg(),
        }
    }

    /// The `charge` arguments the client sends (and the ledger must record).
    fn arguments(self, m: &Margins) -> Value {
        match self {
            Scenario::CancelBeforeCommitStdio => {
                json!({"amount": 42, "delay_before_ms": m.delay_before_ms, "delay_after_ms": 0})
            }
            Scenario::FrameworkRerunStdio => json!({"amount": 42}),
            _ => json!({"amount": 42, "delay_after_ms": m.delay_after_ms}),
        }
    }

    /// The client script's options for the delays.
    fn delay_options(self, m: &Margins) -> Vec<String> {
        match self {
            Scenario::CancelBeforeCommitStdio => {
                vec!["--delay-before-ms".into(), m.delay_before_ms.to_string(), "--delay-after-ms".into(), "0".into()]
            }
            Scenario::FrameworkRerunStdio => vec![],
            _ => vec!["--delay-after-ms".into(), m.delay_after_ms.to_string()],
        }
    }

    /// How long the tool holds before it replies (the first attempt must give up before that).
    fn hold_ms(self, m: &Margins) -> u64 {
        match self {
            Scenario::CancelBeforeCommitStdio => m.delay_before_ms,
            _ => m.delay_after_ms,
        }
    }

    /// The ledger lines for the one logical call, as measured. 1-3: two, on every server. The
    /// contrast case: the Python SDK interrupts a cancelled handler (`CancelledError` in its
    /// `delay_before_ms` sleep), so the first attempt never commits and only the retry's line
    /// is written; the TypeScript SDK and rmcp only signal the cancellation to a handler that
    /// does not look, so it still commits, and the retry commits again.
    fn effects(self, server: Sdk) -> usize {
        match (self, server) {
            (Scenario::CancelBeforeCommitStdio, Sdk::Python) => 1,
            (Scenario::FrameworkRerunStdio, _) => 3,
            _ => 2,
        }
    }
}

/// The revision a pair negotiates, as measured: the TypeScript 1.x client only speaks the
/// `initialize` era (2025-11-25). The Python 2.3.0 client probes `server/discover` first: the
/// Python 2.3.0 and rmcp 3.11 fixtures answer it (2026-07-28, no `initialize` at all); the
/// TypeScript 1.x server does not, and the client falls back to `initialize` (2025-11-25).
fn expected_revision(client: ClientSdk, server: Sdk) -> &'static str {
    match (client, server) {
        // mcp 1.30.0 (under the LangGraph adapters) only knows `initialize`, up to 2025-11-25.
        (ClientSdk::TypeScript | ClientSdk::LangGraph, _) | (ClientSdk::Python, Sdk::TypeScript) => "2025-11-25",
        // The TypeScript v2 server answers `server/discover` too (it is not in this matrix).
        (ClientSdk::Python, Sdk::Python | Sdk::Rust | Sdk::TypeScriptV2) => "2026-07-28",
    }
}

/// The JSON-RPC id of the first `tools/call` on a fresh connection: the TypeScript client
/// numbers from 0 (`initialize`), so 1; the Python client from 1, after `server/discover` (and,
/// on a fallback, `initialize`): 2 at 2026-07-28, 3 at 2025-11-25. Scenario 2's two lines carry
/// this same id, from two processes.
fn first_call_id(client: ClientSdk, server: Sdk) -> i64 {
    match (client, expected_revision(client, server)) {
        (ClientSdk::TypeScript | ClientSdk::LangGraph, _) => 1,
        (ClientSdk::Python, "2026-07-28") => 2,
        (ClientSdk::Python, _) => 3,
    }
}

fn paths() -> FixturePaths {
    FixturePaths { fixtures_dir: fixtures::dir(), rust_fixture: vec![env!("CARGO_BIN_EXE_mcp-once-fixture").into()] }
}

/// The argv that starts `client`'s scenario script; a missing install fails the test.
fn client_argv(client: ClientSdk) -> Vec<String> {
    let dir = fixtures::dir();
    match client {
        ClientSdk::TypeScript => vec!["node".into(), fixtures::typescript_script("scenario-client.mjs")],
        ClientSdk::Python => {
            vec![fixtures::python("python"), dir.join("python/scenario_client.py").display().to_string()]
        }
        ClientSdk::LangGraph => {
            vec![fixtures::python("langgraph"), dir.join("langgraph/scenario_graph.py").display().to_string()]
        }
    }
}

/// The cases running now (at most [`max_concurrent_cases`]).
static RUNNING: Slots = Slots::new();

/// What one case produced.
struct Outcome {
    label: String,
    client: ClientSdk,
    server: Sdk,
    scenario: Scenario,
    summary: Value,
    ledger: Vec<Value>,
    count: ledger_count::LedgerCount,
    wall: Duration,
    /// Problems found while running (a bound ran out, a process outlived its client).
    problems: Vec<String>,
    client_stderr: String,
}

fn run_case(client: ClientSdk, server: Sdk, scenario: Scenario) -> Outcome {
    let _slot = RUNNING.take(max_concurrent_cases());
    let label =
        format!("{}-client-{}-server-{}-{}", client.as_str(), server.as_str(), scenario.transport(), scenario.label());
    let dir = scratch!("real-clients", &label);
    let ledger = dir.ledger();
    let m = margins();
    let started = Instant::now();
    let mut problems = Vec::new();
    let fixtures = paths();

    let mut argv = client_argv(client);
    argv.extend([scenario.script_arg().into(), "--amount".into(), "42".into()]);
    if scenario != Scenario::FrameworkRerunStdio {
        argv.extend(["--ledger".into(), ledger.display().to_string(), "--timeout-ms".into(), m.timeout_ms.to_string()]);
        argv.extend(scenario.delay_options(m));
    }

    // HTTP: the test starts the server and waits for its `listening` line; stdio: the client
    // spawns it (the SDK's own transport), and for scenario 2 a second one.
    let mut http_server = None;
    match scenario {
        Scenario::TimeoutHttp => {
            // Port 0: the server binds a port the system chooses and names it in its
            // `listening` line (no free-port probe that another process could race).
            let extra = ["--transport".to_string(), "http".into(), "--port".into(), "0".into()];
            let server_argv = fixtures.argv(server, &ledger, &extra).unwrap_or_else(|e| panic!("{e}"));
            let mut spawned = Group::spawn(&server_argv, false);
            let url = spawned.stderr_until(START_BOUND, fixtures::listening_url).unwrap_or_else(|seen| {
                spawned.stop(EXIT_BOUND);
                panic!("{label}: no `listening` line within {START_BOUND:?}; stderr:\n{seen}")
            });
            argv.extend(["--url".into(), url]);
            http_server = Some(spawned);
        }
        Scenario::TimeoutStdio
        | Scenario::KillStdio
        | Scenario::CancelBeforeCommitStdio
        | Scenario::FrameworkRerunStdio => {
            argv.extend(["--stdio".into(), "--".into()]);
            argv.extend(fixtures.argv(server, &ledger, &[]).unwrap_or_else(|e| panic!("{e}")));
        }
    }

    let mut proc = Group::spawn(&argv, true);
    let status = proc.wait(CLIENT_BOUND);
    let stdout = match status {
        Some(_) => proc.stdout(EXIT_BOUND),
        None => {
            problems.push(format!("the client ran past {CLIENT_BOUND:?} and was SIGKILLed"));
            Vec::new()
        }
    };
    if let Some(status) = status.filter(|s| !s.success()) {
        problems.push(format!("the client exited with {status}"));
    }
    let summary: Value = String::from_utf8_lossy(&stdout)
        .lines()
        .last()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    if let Some(server) = &mut http_server {
        server.stop(EXIT_BOUND);
    }

    let bytes = std::fs::read(&ledger).unwrap_or_default();
    let count = ledger_count::count(&bytes, None);
    let lines: Vec<Value> =
        String::from_utf8_lossy(&bytes).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    // Every server process that wrote a line is gone now that its client has exited (stdio: the
    // SDK's transport closed it; http: stopped above).
    for pid in lines.iter().filter_map(|l| l["pid"].as_i64()) {
        if !pid_gone_within(pid as i32, EXIT_BOUND) {
            problems.push(format!(
                "server pid {pid} was still running {EXIT_BOUND:?} after its client exited (SIGKILLed now)"
            ));
        }
    }
    let client_stderr = proc.stderr_so_far();
    Outcome {
        label,
        client,
        server,
        scenario,
        summary,
        ledger: lines,
        count,
        wall: started.elapsed(),
        problems,
        client_stderr,
    }
}

/// Checks one outcome; returns the problems found (empty: the case passed).
fn check(o: &Outcome) -> Vec<String> {
    let mut bad = o.problems.clone();
    let mut expect = |ok: bool, what: String| {
        if !ok {
            bad.push(what);
        }
    };
    let s = &o.summary;
    expect(s["failure"].is_null(), format!("the client script failed: {}", s["failure"]));
    expect(
        s["client"] == o.client.as_str() && s["client_sdk_version"] == o.client.version(),
        format!("client {} {}", s["client"], s["client_sdk_version"]),
    );
    expect(s["transport"] == o.scenario.transport(), format!("transport {}", s["transport"]));

    // The ledger: two effects for the one logical call (one in the contrast case on the Python
    // server), nothing torn or malformed.
    let effects = o.scenario.effects(o.server);
    expect(o.count.effects == effects, format!("{} effects in the ledger, want {effects}", o.count.effects));
    expect(!o.count.torn_tail && o.count.malformed.is_empty(), format!("ledger damaged: {:?}", o.count));
    for line in &o.ledger {
        expect(
            line["sdk"] == o.server.as_str() && line["transport"] == o.scenario.transport(),
            format!("ledger line from another server: {line}"),
        );
        expect(line["arguments"] == o.scenario.arguments(margins()), format!("arguments as sent: {line}"));
    }

    let attempts = s["attempts"].as_array().cloned().unwrap_or_default();
    let connections = s["connections"].as_array().cloned().unwrap_or_default();
    if o.scenario == Scenario::FrameworkRerunStdio {
        // The node ran three times (the default RetryPolicy's max_attempts), each tool call
        // succeeded, the graph finally raised the node's ConnectionError.
        expect(
            s["langgraph_version"] == "1.2.24" && s["adapters_version"] == "0.3.2",
            format!("langgraph {} adapters {}", s["langgraph_version"], s["adapters_version"]),
        );
        expect(
            attempts.len() == 3 && attempts.iter().all(|a| a["ok"] == true && a["text"] == "charged 42"),
            format!("3 node attempts, each charge answered: {attempts:?}"),
        );
        expect(
            s["graph_error"]["class"] == "ConnectionError",
            format!("the graph raised the node's ConnectionError: {}", s["graph_error"]),
        );
        // One session for get_tools, then one per tool call, each a new server process.
        expect(
            connections.len() == 4
                && connections.iter().all(|c| c["protocol_version"] == expected_revision(o.client, o.server)),
            format!("4 sessions at 2025-11-25: {connections:?}"),
        );
        let ids: Vec<&Value> = o.ledger.iter().map(|l| &l["request_id"]).collect();
        expect(
            ids.iter().all(|id| **id == json!(first_call_id(o.client, o.server))),
            format!("every line carries request id 1: {ids:?}"),
        );
        let mut pids: Vec<i64> = o.ledger.iter().filter_map(|l| l["pid"].as_i64()).collect();
        pids.sort_unstable();
        pids.dedup();
        expect(pids.len() == o.ledger.len(), format!("each effect from its own server process: {pids:?}"));
        return bad;
    }
    expect(attempts.len() == 2, format!("{} attempts, want 2 (the call and one retry)", attempts.len()));
    if attempts.len() != 2 || o.ledger.len() != effects {
        return bad;
    }
    let (first, retry) = (&attempts[0], &attempts[1]);
    expect(retry["ok"] == true && retry["text"] == "charged 42", format!("the retry succeeded: {retry}"));
    for c in &connections {
        expect(
            c["protocol_version"] == expected_revision(o.client, o.server),
            format!("negotiated {}, want {}", c["protocol_version"], expected_revision(o.client, o.server)),
        );
    }
    let ids: Vec<&Value> = o.ledger.iter().map(|l| &l["request_id"]).collect();
    let pids: Vec<&Value> = o.ledger.iter().map(|l| &l["pid"]).collect();
    let sent: Vec<&Value> =
        if effects == 2 { vec![&first["request_id"], &retry["request_id"]] } else { vec![&retry["request_id"]] };
    expect(ids == sent, format!("ledger ids {ids:?} are the ids the SDK sent for the committed attempts {sent:?}"));

    match o.scenario {
        Scenario::TimeoutStdio | Scenario::TimeoutHttp | Scenario::CancelBeforeCommitStdio => {
            // The SDK's own timeout: -32001 after about the timeout given, well before the reply
            // (held three timeouts, or two and a half) could have come; then its own notifications/cancelled for that id.
            expect(
                first["ok"] == false && first["error"]["code"] == -32001,
                format!("attempt 1 failed with -32001 (request timeout): {first}"),
            );
            let message = first["error"]["message"].as_str().unwrap_or_default();
            match o.client {
                ClientSdk::TypeScript => expect(
                    message == "MCP error -32001: Request timed out"
                        && first["error"]["data"] == json!({"timeout": margins().timeout_ms}),
                    format!("TS timeout error: {first}"),
                ),
                ClientSdk::Python => {
                    expect(message == "Request 'tools/call' timed out", format!("Python timeout error: {first}"))
                }
                ClientSdk::LangGraph => unreachable!("LangGraph only runs scenario 4"),
            }
            let ms = first["ms"].as_u64().unwrap_or(0);
            let m = margins();
            expect(
                (m.timeout_ms - 10..o.scenario.hold_ms(m)).contains(&ms),
                format!("attempt 1 gave up after {ms} ms"),
            );
            let cancelled = s["cancelled"].as_array().cloned().unwrap_or_default();
            expect(
                cancelled.len() == 1 && cancelled[0]["requestId"] == first["request_id"],
                format!("one notifications/cancelled for id {}: {cancelled:?}", first["request_id"]),
            );
            // One connection, one server process, two ids on it. (The Python server interrupts
            // the cancelled handler, but only during delay_after_ms: its commit came first.)
            expect(connections.len() == 1, format!("{} connections, want 1", connections.len()));
            expect(
                first["request_id"] != retry["request_id"],
                format!("two distinct ids on one connection: {first} {retry}"),
            );
            expect(pids.iter().all(|p| p == &pids[0]), format!("every effect from one server process: {pids:?}"));
            expect(retry["ledger_line"] == effects, format!("the retry's reply names ledger line {effects}: {retry}"));
            if o.scenario == Scenario::TimeoutStdio && o.client == ClientSdk::TypeScript {
                expect(
                    &connections[0]["pid"] == pids[0],
                    format!("the ledger pid is the one the SDK spawned: {}", connections[0]["pid"]),
                );
            }
        }
        Scenario::FrameworkRerunStdio => unreachable!("checked above"),
        Scenario::KillStdio => {
            // The SDK sees the pipe close: -32000 Connection closed, at once.
            expect(
                first["ok"] == false && first["error"]["code"] == -32000,
                format!("attempt 1 failed with -32000: {first}"),
            );
            let message = first["error"]["message"].as_str().unwrap_or_default();
            expect(message.ends_with("Connection closed"), format!("attempt 1: Connection closed: {first}"));
            expect(
                s["killed_pid"] == *pids[0],
                format!("the killed pid {} wrote the first line {}", s["killed_pid"], pids[0]),
            );
            expect(
                s["cancelled"].as_array().is_some_and(|c| c.is_empty()),
                format!("no cancellation on a dead connection: {}", s["cancelled"]),
            );
            expect(
                connections.len() == 2,
                format!("{} connections, want 2 (a new server process for the retry)", connections.len()),
            );
            expect(pids[0] != pids[1], format!("the retry ran on another process: {pids:?}"));
            // Ids start over with the new process and transport: both lines carry the same id.
            let want = first_call_id(o.client, o.server);
            expect(
                *ids[0] == json!(want) && *ids[1] == json!(want),
                format!("both lines carry request id {want}: {ids:?}"),
            );
            if o.client == ClientSdk::TypeScript {
                expect(
                    &connections[0]["pid"] == pids[0] && &connections[1]["pid"] == pids[1],
                    "the ledger pids are the ones the SDK spawned".into(),
                );
            }
        }
    }
    bad
}

/// Runs the client × server cases of `scenario` in parallel, prints one line per case, and
/// fails with every failed case's problems and its client's log.
fn scenario_cases(scenario: Scenario) {
    let clients = match scenario {
        Scenario::FrameworkRerunStdio => vec![ClientSdk::LangGraph],
        _ => vec![ClientSdk::TypeScript, ClientSdk::Python],
    };
    let started = Instant::now();
    let outcomes: Vec<Outcome> = std::thread::scope(|scope| {
        let handles: Vec<_> = clients
            .into_iter()
            .flat_map(|client| Sdk::ALL.into_iter().map(move |server| (client, server)))
            .map(|(client, server)| scope.spawn(move || run_case(client, server, scenario)))
            .collect();
        handles.into_iter().map(|h| h.join().expect("case thread")).collect()
    });
    let mut failures = Vec::new();
    for o in &outcomes {
        let problems = check(o);
        // What the caller saw first: the first attempt's error, or for LangGraph the graph's.
        let first = if o.scenario == Scenario::FrameworkRerunStdio {
            json!({"error": {"code": o.summary["graph_error"]["class"], "message": o.summary["graph_error"]["message"]}})
        } else {
            o.summary["attempts"][0].clone()
        };
        println!(
            "{:<62} effects={} ids={} pids={} first error={} {} revision={} wall={:.1}s {}",
            o.label,
            o.count.effects,
            json!(o.ledger.iter().map(|l| l["request_id"].clone()).collect::<Vec<_>>()),
            json!(o.ledger.iter().map(|l| l["pid"].clone()).collect::<Vec<_>>()),
            first["error"]["code"],
            first["error"]["message"],
            o.summary["connections"][0]["protocol_version"],
            o.wall.as_secs_f64(),
            if problems.is_empty() { "ok" } else { "FAILED" }
        );
        if !problems.is_empty() {
            failures.push(format!(
                "{}:\n  - {}\n  summary: {}\n  client stderr:\n{}",
                o.label,
                problems.join("\n  - "),
                o.summary,
                o.client_stderr
            ));
        }
    }
    println!("{scenario:?}: {} cases in {:.1}s", outcomes.len(), started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), outcomes.len(), failures.join("\n\n"));
}

#[test]
fn scenario_1_stdio_timeout_cancel_retry_with_the_sdk_clients() {
    scenario_cases(Scenario::TimeoutStdio);
}

#[test]
fn scenario_2_stdio_sigkill_restart_retry_with_the_sdk_clients() {
    scenario_cases(Scenario::KillStdio);
}

#[test]
fn scenario_3_http_timeout_cancel_retry_with_the_sdk_clients() {
    scenario_cases(Scenario::TimeoutHttp);
}

#[test]
fn scenario_4_langgraph_retry_policy_reruns_the_tool_call() {
    scenario_cases(Scenario::FrameworkRerunStdio);
}

#[test]
fn cancellation_before_the_commit_only_the_python_server_drops_the_call() {
    scenario_cases(Scenario::CancelBeforeCommitStdio);
}
