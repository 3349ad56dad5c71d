//! End-to-end tests of the Rust ledger fixture (`mcp-once-fixture`): real processes, raw
//! JSON-RPC frames over stdio or HTTP, the real ledger file. Every wait is bounded; nothing
//! sleeps to synchronise (waits are for a frame, a ledger line, a stderr line or an exit).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_once_testkit::jsonl::read_or_empty as read_objects;
use mcp_once_testkit::stdio::Peer as Fixture;
use mcp_once_testkit::wait::wait_until;
use mcp_once_testkit::{scratch, Scratch};
use serde_json::{json, Value};

/// Upper bound for any single wait in these tests.
const BOUND: Duration = Duration::from_secs(20);
const BIN: &str = env!("CARGO_BIN_EXE_mcp-once-fixture");

fn temp(name: &str) -> Scratch {
    scratch!("fixture-rust", name)
}

/// Wait (bounded) until the file has at least `n` lines; return them all.
fn wait_lines(path: &Path, n: usize) -> Vec<Value> {
    wait_until(&format!("{}: {n} line(s)", path.display()), BOUND, || {
        let lines = read_objects(path);
        (lines.len() >= n).then_some(lines)
    })
}

fn keys_file(ledger: &Path) -> PathBuf {
    PathBuf::from(format!("{}.keys", ledger.display()))
}

// ---------------------------------------------------------------------------------------------
// The fixture process, spoken to over stdio (the test kit's peer)

/// Start the fixture with these arguments (no handshake).
fn spawn(args: &[&str]) -> Fixture {
    let argv: Vec<String> = std::iter::once(BIN).chain(args.iter().copied()).map(String::from).collect();
    Fixture::spawn(&argv, BOUND)
}

/// A stdio fixture of `variant` on `ledger`, past the initialize handshake.
fn stdio(variant: &str, ledger: &Path, extra: &[&str]) -> Fixture {
    let ledger = ledger.to_str().unwrap();
    let mut args = vec!["--transport", "stdio", "--variant", variant, "--ledger", ledger];
    args.extend_from_slice(extra);
    let mut f = spawn(&args);
    let init = f.initialize("fixture-rust-test");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    f
}

/// `tools/call` of `charge` with these extra params (`arguments`, `idempotencyKey`, `_meta`).
trait Charge {
    /// Send the call, do not wait.
    fn send_charge(&mut self, id: Value, params: Value);
    /// Send the call and wait for its response.
    fn charge(&mut self, id: Value, params: Value) -> Value;
}

impl Charge for Fixture {
    fn send_charge(&mut self, id: Value, params: Value) {
        let mut p = params;
        p["name"] = json!("charge");
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": p}));
    }

    fn charge(&mut self, id: Value, params: Value) -> Value {
        self.send_charge(id.clone(), params);
        self.response(&id)
    }
}

/// The successful result of a response, or a panic showing the response.
fn result(response: &Value) -> &Value {
    assert!(response.get("error").is_none(), "unexpected error: {response}");
    &response["result"]
}

fn error_type(response: &Value) -> &str {
    response["error"]["data"]["type"].as_str().unwrap_or_else(|| panic!("not a typed error: {response}"))
}

fn text_of(response: &Value) -> &str {
    result(response)["content"][0]["text"].as_str().unwrap()
}

// ---------------------------------------------------------------------------------------------
// stdio, plain

#[test]
fn plain_two_charges_two_lines_with_wire_ids() {
    let dir = temp("plain");
    let ledger = dir.ledger();
    let mut f = stdio("plain", &ledger, &[]);
    let pid = f.child.id();

    let r1 = f.charge(
        json!(7),
        json!({
            "arguments": {"amount": 42, "currency": "usd", "key": "arg-key"},
            "idempotencyKey": "params-key",
            "_meta": {"io.mcp-once/idempotencyKey": "meta-key"}
        }),
    );
    assert_eq!(text_of(&r1), "charged 42 usd");
    assert_eq!(result(&r1)["structuredContent"], json!({"charged": 42, "ledger_line": 1}));
    // Same key again: plain never deduplicates. String id, key from _meta this time.
    let r2 = f.charge(
        json!("call-8"),
        json!({"arguments": {"amount": 42, "key": "arg-key"}, "_meta": {"io.mcp-once/idempotencyKey": "params-key"}}),
    );
    assert_eq!(text_of(&r2), "charged 42");

    let lines = wait_lines(&ledger, 2);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["request_id"], json!(7));
    assert_eq!(lines[1]["request_id"], json!("call-8"));
    assert_eq!(lines[0]["arguments"], json!({"amount": 42, "currency": "usd", "key": "arg-key"}));
    assert_eq!(lines[0]["idempotency_key"], "params-key");
    assert_eq!(lines[1]["idempotency_key"], "params-key");
    for line in &lines {
        assert_eq!(line["tool"], "charge");
        assert_eq!(line["pid"], json!(pid));
        assert_eq!(line["transport"], "stdio");
        assert_eq!(line["sdk"], "rust");
        assert!(line.get("record").is_none(), "plain writes no record: {line}");
        let time = line["time"].as_str().unwrap();
        assert!(time.len() == 24 && time.ends_with('Z') && &time[10..11] == "T", "{time}");
    }
    // The key falls back to arguments.key, then null.
    f.charge(json!(9), json!({"arguments": {"amount": 1, "key": "arg-key"}}));
    f.charge(json!(10), json!({"arguments": {"amount": 1.5}}));
    let lines = wait_lines(&ledger, 4);
    assert_eq!(lines[2]["idempotency_key"], "arg-key");
    assert_eq!(lines[3]["idempotency_key"], Value::Null);

    let count = f.request(json!(11), "tools/call", json!({"name": "ledger_count", "arguments": {}}));
    assert_eq!(result(&count)["structuredContent"], json!({"count": 4}));
    assert_eq!(text_of(&count), "4");

    // A bad call is refused without a ledger line.
    let bad = f.charge(json!(12), json!({"arguments": {"currency": "usd"}}));
    assert!(bad.get("error").is_some() || result(&bad)["isError"] == json!(true), "{bad}");
    assert_eq!(read_objects(&ledger).len(), 4);

    // stdin EOF: the server exits by itself, status 0.
    f.close_stdin();
    let status = f.wait_exit();
    assert!(status.success(), "{status:?}");
}

// ---------------------------------------------------------------------------------------------
// stdio, SEP-3182 variants

#[test]
fn key_durable_replays_and_survives_sigkill() {
    let dir = temp("durable");
    let ledger = dir.ledger();
    let call = json!({"arguments": {"amount": 5, "currency": "eur"}, "idempotencyKey": "d-1"});

    let mut f = stdio("key-durable", &ledger, &[]);
    let first = f.charge(json!(2), call.clone());
    let again = f.charge(json!(3), call.clone());
    assert_eq!(result(&again), result(&first));
    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["idempotency_key"], "d-1");
    assert_eq!(lines[0]["record"]["structuredContent"], result(&first)["structuredContent"]);
    // delay_* knobs are not part of the comparison.
    let knobbed = f.charge(
        json!(4),
        json!({"arguments": {"amount": 5, "currency": "eur", "delay_before_ms": 1}, "idempotencyKey": "d-1"}),
    );
    assert_eq!(result(&knobbed), result(&first));

    // SIGKILL, restart on the same ledger: the record was in the effect's own line.
    f.kill();
    let mut f = stdio("key-durable", &ledger, &[]);
    let after = f.charge(json!(2), call.clone());
    assert_eq!(result(&after), result(&first));
    assert_eq!(read_objects(&ledger).len(), 1);

    // Same key, other arguments: conflict, nothing runs.
    let conflict = f.charge(json!(3), json!({"arguments": {"amount": 6, "currency": "eur"}, "idempotencyKey": "d-1"}));
    assert_eq!(error_type(&conflict), "idempotency_key_conflict");
    assert_eq!(conflict["error"]["data"]["idempotencyKey"], "d-1");
    assert_eq!(read_objects(&ledger).len(), 1);

    // A new key runs.
    f.charge(json!(4), json!({"arguments": {"amount": 5, "currency": "eur"}, "idempotencyKey": "d-2"}));
    assert_eq!(read_objects(&ledger).len(), 2);
}

#[test]
fn key_volatile_forgets_on_restart() {
    let dir = temp("volatile");
    let ledger = dir.ledger();
    let call = json!({"arguments": {"amount": 3}, "_meta": {"io.mcp-once/idempotencyKey": "v-1"}});

    let mut f = stdio("key-volatile", &ledger, &[]);
    let first = f.charge(json!(2), call.clone());
    let again = f.charge(json!(3), call.clone());
    assert_eq!(result(&again), result(&first));
    assert_eq!(read_objects(&ledger).len(), 1);
    assert!(read_objects(&ledger)[0].get("record").is_none());

    f.kill();
    let mut f = stdio("key-volatile", &ledger, &[]);
    let after = f.charge(json!(2), call);
    assert_eq!(text_of(&after), "charged 3");
    assert_eq!(read_objects(&ledger).len(), 2, "the record died with the process");
}

#[test]
fn key_after_effect_sigkill_between_effect_and_record_runs_twice() {
    let dir = temp("after-effect");
    let ledger = dir.ledger();
    let keys = keys_file(&ledger);

    let mut f = stdio("key-after-effect", &ledger, &[]);
    f.send_charge(json!(2), json!({"arguments": {"amount": 8, "delay_after_ms": 60000}, "idempotencyKey": "ae-1"}));
    let lines = wait_lines(&ledger, 1);
    assert!(lines[0].get("record").is_none(), "{lines:?}");
    f.kill(); // SIGKILL inside delay_after_ms: effect on disk, no key record
    assert!(read_objects(&keys).is_empty());

    let mut f = stdio("key-after-effect", &ledger, &[]);
    let retry = f.charge(json!(2), json!({"arguments": {"amount": 8}, "idempotencyKey": "ae-1"}));
    assert_eq!(text_of(&retry), "charged 8");
    assert_eq!(read_objects(&ledger).len(), 2, "the retry ran the effect again");
    let records = read_objects(&keys);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["idempotency_key"], "ae-1");

    // Now the record exists: repeats replay, also after a restart.
    assert_eq!(
        result(&f.charge(json!(3), json!({"arguments": {"amount": 8}, "idempotencyKey": "ae-1"}))),
        result(&retry)
    );
    f.kill();
    let mut f = stdio("key-after-effect", &ledger, &[]);
    assert_eq!(
        result(&f.charge(json!(2), json!({"arguments": {"amount": 8}, "idempotencyKey": "ae-1"}))),
        result(&retry)
    );
    let conflict = f.charge(json!(3), json!({"arguments": {"amount": 9}, "idempotencyKey": "ae-1"}));
    assert_eq!(error_type(&conflict), "idempotency_key_conflict");
    assert_eq!(read_objects(&ledger).len(), 2);
}

/// A duplicate sent while the first call with the key is still executing is refused with an
/// in-progress error and runs nothing; the first call then completes normally.
fn in_progress_duplicate(variant: &str) {
    let dir = temp(&format!("in-progress-{variant}"));
    let ledger = dir.ledger();
    let mut f = stdio(variant, &ledger, &[]);
    f.send_charge(json!(2), json!({"arguments": {"amount": 4, "delay_after_ms": 3000}, "idempotencyKey": "ip-1"}));
    wait_lines(&ledger, 1); // the first call is committed and now in its delay_after_ms
    let dup = f.charge(json!(3), json!({"arguments": {"amount": 4}, "idempotencyKey": "ip-1"}));
    assert_eq!(error_type(&dup), "idempotency_key_in_progress", "{dup}");
    assert_eq!(dup["error"]["data"]["idempotencyKey"], "ip-1");
    assert_eq!(dup["error"]["code"], -32000);
    assert!(!f.has_pending(), "the first call replied before the duplicate was refused");
    // Different arguments while running: conflict.
    let other = f.charge(json!(4), json!({"arguments": {"amount": 5}, "idempotencyKey": "ip-1"}));
    assert_eq!(error_type(&other), "idempotency_key_conflict", "{other}");
    let first = f.response(&json!(2));
    assert_eq!(text_of(&first), "charged 4");
    assert_eq!(read_objects(&ledger).len(), 1);
}

#[test]
fn in_progress_key_durable() {
    in_progress_duplicate("key-durable");
}

#[test]
fn in_progress_key_volatile() {
    in_progress_duplicate("key-volatile");
}

#[test]
fn in_progress_key_after_effect() {
    in_progress_duplicate("key-after-effect");
}

#[test]
fn in_progress_key_expiring() {
    in_progress_duplicate("key-expiring");
}

#[test]
fn key_expiring_record_older_than_retention_is_absent() {
    let dir = temp("expiring");
    let ledger = dir.ledger();
    // delay_after_ms (a knob, not compared) makes the record at least 5 ms old at the repeat.
    let call = json!({"arguments": {"amount": 2, "delay_after_ms": 5}, "idempotencyKey": "x-1"});

    let mut f = stdio("key-expiring", &ledger, &["--retention-ms", "1"]);
    f.charge(json!(2), call.clone());
    f.charge(json!(3), call.clone());
    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 2, "an expired key runs again");
    assert!(lines.iter().all(|l| l.get("record").is_some()));
    f.kill();

    // Control: with a long retention the same sequence replays (and survives a restart).
    let dir2 = temp("expiring-long");
    let ledger2 = dir2.ledger();
    let mut f = stdio("key-expiring", &ledger2, &["--retention-ms", "600000"]);
    let first = f.charge(json!(2), call.clone());
    assert_eq!(result(&f.charge(json!(3), call.clone())), result(&first));
    f.kill();
    let mut f = stdio("key-expiring", &ledger2, &["--retention-ms", "600000"]);
    assert_eq!(result(&f.charge(json!(2), call)), result(&first));
    assert_eq!(read_objects(&ledger2).len(), 1);
}

#[test]
fn without_a_key_every_variant_is_plain() {
    for variant in ["key-volatile", "key-durable", "key-after-effect", "key-expiring"] {
        let dir = temp(&format!("nokey-{variant}"));
        let ledger = dir.ledger();
        let mut f = stdio(variant, &ledger, &[]);
        f.charge(json!(2), json!({"arguments": {"amount": 1}}));
        f.charge(json!(3), json!({"arguments": {"amount": 1}}));
        assert_eq!(read_objects(&ledger).len(), 2, "{variant}");
        assert!(read_objects(&keys_file(&ledger)).is_empty(), "{variant}");
    }
}

#[test]
fn bad_command_line_exits_2_with_one_line() {
    for args in [&[][..], &["--ledger", "x", "--variant", "nope"][..], &["--ledger", "x", "--port", "70000"][..]] {
        let out = Command::new(BIN).args(args).stdin(Stdio::null()).output().expect("run");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.trim_end().lines().count(), 1, "{args:?}: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

// ---------------------------------------------------------------------------------------------
// Streamable HTTP

struct HttpReply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl HttpReply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages in the body: a JSON body, or the `data:` of each SSE event.
    fn messages(&self) -> Vec<Value> {
        if self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
            let body = self.body.replace("\r\n", "\n");
            body.split("\n\n")
                .filter_map(|event| {
                    let data: Vec<&str> = event
                        .lines()
                        .filter_map(|l| l.strip_prefix("data:"))
                        .map(|d| d.strip_prefix(' ').unwrap_or(d))
                        .collect();
                    let data = data.join("\n");
                    (!data.trim().is_empty()).then(|| serde_json::from_str(&data).expect("SSE data is JSON"))
                })
                .collect()
        } else if self.body.trim().is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(&self.body).expect("JSON body")]
        }
    }
}

/// A minimal HTTP/1.1 POST to `/mcp` (one request per connection), bounded by [`BOUND`].
fn post(port: u16, host: &str, headers: &[(&str, &str)], body: &str) -> HttpReply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("send request");

    let deadline = Instant::now() + BOUND;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(!left.is_zero(), "HTTP response not complete within {BOUND:?}: {:?}", String::from_utf8_lossy(&raw));
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) => panic!("HTTP read failed: {e}; so far {:?}", String::from_utf8_lossy(&raw)),
        }
    }
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("end of HTTP head");
    let head = String::from_utf8(raw[..split].to_vec()).unwrap();
    let mut body = raw[split + 4..].to_vec();
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect();
    let chunked =
        headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    HttpReply { status, headers, body: String::from_utf8(body).unwrap() }
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let eol = data.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size_text = std::str::from_utf8(&data[..eol]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).expect("chunk size");
        data = &data[eol + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

#[test]
fn http_charge_records_one_line_and_rejects_foreign_host_and_origin() {
    let dir = temp("http");
    let ledger = dir.ledger();
    let f = spawn(&[
        "--transport",
        "http",
        "--port",
        "0",
        "--variant",
        "key-durable",
        "--ledger",
        ledger.to_str().unwrap(),
    ]);
    let listening = f.stderr_line("listening http://");
    let port: u16 = listening
        .strip_prefix("listening http://127.0.0.1:")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected listening line {listening:?}"))
        .parse()
        .unwrap();
    let host = format!("127.0.0.1:{port}");

    let init = post(
        port,
        &host,
        &[],
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "fixture-rust-test", "version": "0"}}})
        .to_string(),
    );
    assert_eq!(init.status, 200, "{}", init.body);
    let session = init.header("mcp-session-id").expect("session id").to_string();
    let init_messages = init.messages();
    assert!(
        init_messages.iter().any(|m| m["id"] == 0 && m["result"]["protocolVersion"] == "2025-11-25"),
        "{}",
        init.body
    );
    let session_headers = [("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];

    let initialized = post(port, &host, &session_headers, r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(initialized.status, 202, "{}", initialized.body);

    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "charge", "arguments": {"amount": 9, "currency": "chf"}, "idempotencyKey": "h-1"}});
    let reply = post(port, &format!("localhost:{port}"), &session_headers, &call.to_string());
    assert_eq!(reply.status, 200, "{}", reply.body);
    let response = reply.messages().into_iter().find(|m| m["id"] == 5).expect("response to id 5");
    assert_eq!(text_of(&response), "charged 9 chf");

    let lines = read_objects(&ledger);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["request_id"], json!(5));
    assert_eq!(lines[0]["transport"], "http");
    assert_eq!(lines[0]["idempotency_key"], "h-1", "params.idempotencyKey reached the handler over HTTP");
    assert_eq!(lines[0]["pid"], json!(f.child.id()));

    // Same key over HTTP: replayed, no new line.
    let again = post(
        port,
        &host,
        &session_headers,
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call",
        "params": {"name": "charge", "arguments": {"amount": 9, "currency": "chf"}, "idempotencyKey": "h-1"}})
        .to_string(),
    );
    let again = again.messages().into_iter().find(|m| m["id"] == 6).expect("response to id 6");
    assert_eq!(result(&again), result(&response));

    // DNS-rebinding protection: foreign Host or Origin → 403, nothing runs.
    let call7 = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": "charge", "arguments": {"amount": 1}}})
    .to_string();
    let evil_host = post(port, "evil.example", &session_headers, &call7);
    assert_eq!(evil_host.status, 403, "{}", evil_host.body);
    let no_port = post(port, "127.0.0.1", &session_headers, &call7);
    assert_eq!(no_port.status, 403, "{}", no_port.body);
    let mut with_origin = session_headers.to_vec();
    with_origin.push(("Origin", "http://evil.example"));
    let evil_origin = post(port, &host, &with_origin, &call7);
    assert_eq!(evil_origin.status, 403, "{}", evil_origin.body);
    assert_eq!(read_objects(&ledger).len(), 1);

    // SIGTERM: the process exits promptly with status 0.
    let mut f = f;
    let status = Command::new("kill").args(["-TERM", &f.child.id().to_string()]).status().expect("run kill");
    assert!(status.success());
    let exit = f.wait_exit();
    assert_eq!(exit.code(), Some(0), "{exit:?}");
}
