//! Ledger integrity of the fixture servers (Rust, TypeScript, Python) under SIGKILL, and a
//! check that each one fsyncs its ledger line before it writes the reply.
//!
//! **Kills.** Each round starts a server (over stdio, or over Streamable HTTP: one session, each
//! call its own POST) on one shared ledger, pipelines a few `charge`
//! calls (each tagged with a unique `key` argument, with random `delay_before_ms` and
//! `delay_after_ms` of 0 to 2 ms), waits for a random number of replies,
//! then SIGKILLs the server after a random extra delay of up to 3 ms (the delay only places the
//! kill at a random point; nothing waits on time) and reaps it. It then reads every reply the
//! server had written before it died and checks the ledger:
//! - it is append-only: the bytes before the round are still its prefix (no committed line lost);
//! - every complete line is one JSON object (none malformed), and `ledger_count::count` counts
//!   exactly the complete lines: a torn tail (bytes after the last newline) would be reported and
//!   never counted, including at random cut points of the round's bytes (a simulated power cut);
//! - every call that got a reply has its line on disk, complete, at the `ledger_line` the reply
//!   names; no call ran twice; no line is of a call that was not sent.
//!
//! At least one kill must land between a commit and its reply (`committed_unreplied`): if none
//! has after the set rounds, more run (as many again, at least 20) and the test fails if still
//! none has.
//!
//! Rounds per server over stdio: `MCP_ONCE_KILLS_RUST` (default 440), `MCP_ONCE_KILLS_TYPESCRIPT`
//! (40), `MCP_ONCE_KILLS_PYTHON` (20); over HTTP `MCP_ONCE_KILLS_RUST_HTTP` (100),
//! `MCP_ONCE_KILLS_TYPESCRIPT_HTTP` (15), `MCP_ONCE_KILLS_PYTHON_HTTP` (10): 625 SIGKILLs in all
//! by default (the TypeScript and Python servers take 0.5 to 1.5 s to start, so they get
//! fewer); a reply counts once the client has read its whole frame. `MCP_ONCE_SEED` fixes the random
//! choices (the seed is printed). Figures are printed as one `ledger integrity:` line per
//! server and transport (`cargo test ... -- --nocapture`, or `scripts/reliability`).
//!
//! **fsync before reply.** Each server runs under `strace -f -y` (system calls `write`,
//! `writev`, `fsync`, `fdatasync`) for three sequential calls; for each call the trace must show
//! the ledger `write` of its line, then a successful `fsync` of the ledger, and only then the
//! `write` of the reply on the stdout pipe (matched by its inode: servers may write to a dup). strace must be installed (`scripts/test` installs it).
//!
//! **Torn tail.** A ledger that ends in a torn line (a crash mid-write, a power cut) gets a
//! newline from each server before its first append, so the new line is whole and counted and
//! the torn one is reported malformed, never counted.
//!
//! The TypeScript and Python servers need `conformance/fixtures/install.sh` (run by
//! `scripts/test`).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use mcp_once_conformance::ledger_count::count;
use mcp_once_testkit::fixtures::Server as Sdk;
use mcp_once_testkit::stdio::Peer as Server;
use mcp_once_testkit::{scratch, Scratch};
use serde_json::{json, Value};

mod http;

/// Upper bound of any single wait.
const BOUND: Duration = Duration::from_secs(30);

// ---------------------------------------------------------------------------------------------
// Servers

/// A fixture server's command line on `ledger` over `transport` (`stdio` or `http`, on a port
/// the system chooses).
fn argv(sdk: Sdk, ledger: &Path, transport: &str) -> Vec<String> {
    let extra: &[&str] = if transport == "http" { &["--port", "0"] } else { &[] };
    sdk.argv(Path::new(env!("CARGO_BIN_EXE_mcp-once-fixture")), ledger, transport, extra)
}

fn temp(name: &str) -> Scratch {
    scratch!("ledger-integrity", name)
}

/// A stdio server, past the initialize handshake.
fn stdio_server(argv: &[String]) -> Server {
    let mut server = Server::spawn(argv, BOUND);
    server.initialize("ledger-integrity");
    server
}

/// A running fixture server, over either transport.
enum Conn {
    Stdio(Server),
    Http(http::Peer),
}

impl Conn {
    /// Start a server, past the initialize handshake.
    fn start(argv: &[String], transport: &str) -> Conn {
        if transport == "http" {
            return Conn::Http(http::Peer::start(argv, BOUND));
        }
        Conn::Stdio(stdio_server(argv))
    }

    fn send(&mut self, message: &Value) {
        match self {
            Conn::Stdio(s) => s.send(message),
            Conn::Http(h) => h.send(message),
        }
    }

    fn next_response(&mut self) -> Value {
        match self {
            Conn::Stdio(s) => s.next_response(),
            Conn::Http(h) => h.next_response(),
        }
    }

    /// SIGKILL, reap, and every response frame the server wrote before it died.
    fn kill_and_collect(self) -> Vec<Value> {
        match self {
            Conn::Stdio(s) => s.kill_and_collect(),
            Conn::Http(h) => h.kill_and_collect(),
        }
    }
}

/// A `charge` call tagged `key: "k<id>"`, waiting `before` ms before its commit and `after` ms
/// between its commit and its reply.
fn charge(id: u64, before: u64, after: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "charge",
        "arguments": {"amount": 1, "key": format!("k{id}"), "delay_before_ms": before, "delay_after_ms": after}
    }})
}

// ---------------------------------------------------------------------------------------------
// Randomness (xorshift64*, seeded; no dependency)

struct Rng(u64);

impl Rng {
    fn seeded() -> (Rng, u64) {
        let seed = std::env::var("MCP_ONCE_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
            let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
            t.as_nanos() as u64 ^ u64::from(std::process::id())
        });
        (Rng(seed | 1), seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..=max`.
    fn upto(&mut self, max: u64) -> u64 {
        self.next() % (max + 1)
    }
}

// ---------------------------------------------------------------------------------------------
// Kill rounds

/// What the kill rounds of one server saw.
#[derive(Default, Debug)]
struct Figures {
    kills: usize,
    calls_sent: usize,
    replies: usize,
    /// Lines committed whose reply never left the server (killed in between).
    committed_unreplied: usize,
    lines_checked: usize,
    torn_tails: usize,
    lost: usize,
}

fn kills_for(sdk: Sdk, transport: &str, default: usize) -> usize {
    let suffix = if transport == "http" { "_HTTP" } else { "" };
    let var = format!("MCP_ONCE_KILLS_{}{suffix}", sdk.name().to_uppercase());
    std::env::var(&var).ok().map_or(default, |v| v.parse().unwrap_or_else(|_| panic!("{var}={v}: not a number")))
}

fn key_of(line: &Value) -> Option<u64> {
    line["arguments"]["key"].as_str()?.strip_prefix('k')?.parse().ok()
}

fn kill_rounds(sdk: Sdk, transport: &str, kills: usize) -> Figures {
    let scratch = temp(&format!("kills-{}-{transport}", sdk.name()));
    let ledger = scratch.join("ledger.jsonl");
    let argv = argv(sdk, &ledger, transport);
    let (mut rng, seed) = Rng::seeded();
    let mut figures = Figures::default();
    let mut next_id: u64 = 1;
    let mut seen_keys: HashSet<u64> = HashSet::new();
    // Past `kills` rounds, more (as many again, at least 20) until a kill has landed between a
    // commit and its reply: the window the checks above are about must have been hit.
    let limit = kills + kills.max(20);
    for round in 0.. {
        if round >= kills && (figures.committed_unreplied > 0 || round >= limit) {
            break;
        }
        let context = format!("{} {transport} round {round} (MCP_ONCE_SEED={seed})", sdk.name());
        let before = std::fs::read(&ledger).unwrap_or_default();
        let mut server = Conn::start(&argv, transport);

        let calls = 1 + rng.upto(7);
        let sent: Vec<u64> = (next_id..next_id + calls).collect();
        next_id += calls;
        for id in &sent {
            // Small random windows before the commit and between commit and reply.
            server.send(&charge(*id, rng.upto(2), rng.upto(2)));
        }
        let mut replies = Vec::new();
        for _ in 0..rng.upto(calls) {
            replies.push(server.next_response());
        }
        // Not synchronisation: a random extra delay puts the kill anywhere in the server's
        // work on the calls still in flight (reading, committing, fsyncing, replying).
        std::thread::sleep(Duration::from_micros(rng.upto(3000)));
        replies.extend(server.kill_and_collect().into_iter().filter(|f| f.get("id").is_some()));
        figures.kills += 1;
        figures.calls_sent += sent.len();

        let after = std::fs::read(&ledger).unwrap_or_default();
        assert!(after.starts_with(&before), "{context}: the ledger lost or changed committed bytes");
        let counted = count(&after, None);
        assert!(counted.malformed.is_empty(), "{context}: malformed lines {:?}", counted.malformed);
        if counted.torn_tail {
            figures.torn_tails += 1;
        }
        assert!(!counted.torn_tail, "{context}: torn tail after SIGKILL (one write(2) per line)");
        let text = std::str::from_utf8(&after).expect("UTF-8 ledger");
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("object")).collect();
        assert_eq!(counted.effects, lines.len());
        figures.lines_checked += lines.len() - count(&before, None).effects;

        // A simulated power cut in this round's bytes: a cut never counts a partial line.
        let new = &after[before.len()..];
        for _ in 0..4 {
            let cut = rng.upto(new.len() as u64) as usize;
            let c = count(&after[..before.len() + cut], None);
            let whole = after[..before.len() + cut].iter().filter(|b| **b == b'\n').count();
            assert_eq!(c.effects, whole, "{context}: cut at {cut}");
            assert_eq!(c.torn_tail, cut > 0 && new[cut - 1] != b'\n', "{context}: cut at {cut}");
        }

        // This round's lines: calls it sent, none twice, none that ran before.
        let mut round_keys = HashSet::new();
        for line in &lines[count(&before, None).effects..] {
            let key = key_of(line).unwrap_or_else(|| panic!("{context}: line without a key: {line}"));
            assert!(sent.contains(&key), "{context}: line of a call not sent this round: {line}");
            assert!(round_keys.insert(key) && seen_keys.insert(key), "{context}: call k{key} ran twice");
        }
        // Every reply: its line complete on disk, at the line number it names.
        let by_key: HashMap<u64, usize> =
            lines.iter().enumerate().filter_map(|(i, l)| key_of(l).map(|k| (k, i + 1))).collect();
        let mut lost = Vec::new();
        for reply in &replies {
            let id = reply["id"].as_u64().unwrap_or_else(|| panic!("{context}: reply {reply}"));
            if id == 0 {
                continue;
            }
            let result = reply.get("result").unwrap_or_else(|| panic!("{context}: error reply {reply}"));
            figures.replies += 1;
            match by_key.get(&id) {
                Some(at) => assert_eq!(
                    result["structuredContent"]["ledger_line"].as_u64(),
                    Some(*at as u64),
                    "{context}: {reply}"
                ),
                None => lost.push(id),
            }
        }
        figures.lost += lost.len();
        assert!(lost.is_empty(), "{context}: calls {lost:?} were answered but their lines are not in the ledger");
        let answered = replies.iter().filter(|r| r["id"].as_u64().is_some_and(|i| i > 0)).count();
        figures.committed_unreplied += round_keys.len() - answered;
    }
    println!(
        "ledger integrity: {} {transport}: {} SIGKILLs, {} calls sent, {} replies, {} lines checked, \
         {} committed without reply, {} torn tails, {} lost lines (seed {seed})",
        sdk.name(),
        figures.kills,
        figures.calls_sent,
        figures.replies,
        figures.lines_checked,
        figures.committed_unreplied,
        figures.torn_tails,
        figures.lost
    );
    figures
}

/// Kill rounds of one server over one transport, with the checks every run must pass.
fn survives_sigkills(sdk: Sdk, transport: &str, default_kills: usize) {
    let f = kill_rounds(sdk, transport, kills_for(sdk, transport, default_kills));
    assert_eq!((f.lost, f.torn_tails), (0, 0));
    assert!(f.committed_unreplied > 0, "no kill landed between a commit and its reply in {} rounds", f.kills);
}

#[test]
fn rust_ledger_survives_sigkills() {
    survives_sigkills(Sdk::Rust, "stdio", 440);
}

#[test]
fn typescript_ledger_survives_sigkills() {
    survives_sigkills(Sdk::TypeScript, "stdio", 40);
}

#[test]
fn python_ledger_survives_sigkills() {
    survives_sigkills(Sdk::Python, "stdio", 20);
}

#[test]
fn rust_http_ledger_survives_sigkills() {
    survives_sigkills(Sdk::Rust, "http", 100);
}

#[test]
fn typescript_http_ledger_survives_sigkills() {
    survives_sigkills(Sdk::TypeScript, "http", 15);
}

#[test]
fn python_http_ledger_survives_sigkills() {
    survives_sigkills(Sdk::Python, "http", 10);
}

// ---------------------------------------------------------------------------------------------
// fsync before reply, seen by strace

/// One system call in an strace log: where it started and ended (line indices), its name, its
/// arguments as printed at entry, and its result.
#[derive(Debug)]
struct Syscall {
    entry: usize,
    exit: usize,
    name: String,
    args: String,
    result: String,
}

/// Parse `strace -f -y` output (`PID  name(args) = result`, with `<unfinished ...>` and
/// `<... name resumed>` pairs when threads interleave).
fn parse_strace(log: &str) -> Vec<Syscall> {
    let mut done = Vec::new();
    let mut open: HashMap<&str, (usize, String, String)> = HashMap::new();
    for (i, line) in log.lines().enumerate() {
        let Some((pid, rest)) = line.trim_start().split_once(char::is_whitespace) else { continue };
        let rest = rest.trim_start();
        let result = |s: &str| s.rsplit_once(") = ").map_or(String::new(), |(_, r)| r.trim().to_string());
        if let Some(resumed) = rest.strip_prefix("<... ") {
            let name = resumed.split_whitespace().next().unwrap_or("").to_string();
            if let Some((entry, open_name, args)) = open.remove(pid) {
                assert_eq!(open_name, name, "strace line {}: resumed {name} after {open_name}", i + 1);
                done.push(Syscall { entry, exit: i, name, args, result: result(resumed) });
            }
        } else if let Some((name, args)) = rest.split_once('(') {
            let name = name.to_string();
            if rest.ends_with("<unfinished ...>") {
                open.insert(pid, (i, name, args.to_string()));
            } else {
                done.push(Syscall { entry: i, exit: i, name, result: result(args), args: args.to_string() });
            }
        }
    }
    done
}

fn fsync_precedes_reply(sdk: Sdk) {
    let strace = Command::new("strace").arg("-V").output();
    assert!(
        strace.is_ok_and(|o| o.status.success()),
        "strace is needed (scripts/test installs it: apt-get install strace)"
    );
    let scratch = temp(&format!("strace-{}", sdk.name()));
    let ledger = scratch.join("ledger.jsonl");
    let log_path = scratch.join("strace.log");
    let mut argv: Vec<String> =
        ["strace", "-f", "-y", "-qq", "-s", "65536", "-e", "trace=write,writev,pwrite64,pwritev,fsync,fdatasync", "-o"]
            .map(String::from)
            .to_vec();
    argv.push(log_path.display().to_string());
    argv.push("--".into());
    argv.extend(self::argv(sdk, &ledger, "stdio"));

    let mut server = stdio_server(&argv);
    let ids = [11u64, 12, 13];
    for id in ids {
        server.send(&charge(id, 0, 0));
        let reply = server.next_response();
        assert_eq!(reply["id"], id, "{reply}");
        assert!(reply["result"]["structuredContent"]["ledger_line"].is_u64(), "{reply}");
    }
    // Close stdin: the server exits, then strace; wait (bounded) for stdout EOF and the exit.
    server.close_stdin();
    server.await_stdout_closed();
    server.wait_exit();

    let log = std::fs::read_to_string(&log_path).expect("strace log");
    let ledger_fd = format!("<{}>", ledger.display());
    let stdout_fd = format!("<pipe:[{}]>", server.stdout_pipe);
    match fsync_order(&log, &ledger_fd, &stdout_fd, &ids) {
        Ok(lines) => {
            for (id, (write, fsync, reply)) in ids.iter().zip(lines) {
                println!(
                    "fsync before reply: {} call {id}: ledger write ends at strace line {write}, \
                     fsync returns 0 at line {fsync}, reply write starts at line {reply}",
                    sdk.name()
                );
            }
        }
        Err(e) => panic!("{}: {e}; strace log:\n{log}", sdk.name()),
    }
}

/// For each call id (tagged `key: "k<id>"`): the 1-based strace lines where its ledger write
/// ends, where a successful fsync of the ledger that started after that write returns, and
/// where the write of its reply (a frame with `"id":<id>` and `ledger_line`) on the stdout
/// pipe starts; `Err` when there is no such fsync before the reply, or no write or reply.
/// `ledger_fd` and `stdout_fd` are the descriptor decorations `strace -y` prints
/// (`</path/ledger.jsonl>`, `<pipe:[inode]>`).
fn fsync_order(log: &str, ledger_fd: &str, stdout_fd: &str, ids: &[u64]) -> Result<Vec<(usize, usize, usize)>, String> {
    let calls = parse_strace(log);
    let fd_is = |c: &Syscall, what: &str| c.args.trim_start_matches(|ch: char| ch.is_ascii_digit()).starts_with(what);
    let is_write = |c: &Syscall| c.name.starts_with("write") || c.name.starts_with("pwrite");
    let mut out = Vec::new();
    for id in ids {
        let key = format!("\\\"key\\\":\\\"k{id}\\\"");
        let write = calls
            .iter()
            .find(|c| is_write(c) && fd_is(c, ledger_fd) && c.args.contains(&key))
            .ok_or_else(|| format!("no ledger write of call {id}"))?;
        let reply_id = [format!("\\\"id\\\":{id},"), format!("\\\"id\\\":{id}}}")];
        let reply = calls
            .iter()
            .find(|c| {
                is_write(c)
                    && fd_is(c, stdout_fd)
                    && c.args.contains("ledger_line")
                    && reply_id.iter().any(|r| c.args.contains(r))
            })
            .ok_or_else(|| format!("no reply to call {id} on the stdout pipe"))?;
        let fsync = calls
            .iter()
            .find(|c| {
                (c.name == "fsync" || c.name == "fdatasync")
                    && fd_is(c, ledger_fd)
                    && c.result == "0"
                    && c.entry > write.exit
                    && c.exit < reply.entry
            })
            .ok_or_else(|| {
                format!(
                    "call {id}: no successful fsync of the ledger between its write (strace line {}) \
                     and its reply (line {})",
                    write.exit + 1,
                    reply.entry + 1
                )
            })?;
        out.push((write.exit + 1, fsync.exit + 1, reply.entry + 1));
    }
    Ok(out)
}

#[test]
fn fsync_order_rejects_a_reply_before_the_fsync_returns() {
    let good = "1  write(9</l>, \"{\\\"key\\\":\\\"k5\\\"}\\n\", 11) = 11\n\
                1  fsync(9</l> <unfinished ...>\n\
                2  write(2<pipe:[4]>, \"log\", 3) = 3\n\
                1  <... fsync resumed>) = 0\n\
                2  writev(11<pipe:[7]>, [{iov_base=\"{\\\"id\\\":5,\\\"ledger_line\\\":1}\"}], 1) = 20\n";
    assert_eq!(fsync_order(good, "</l>", "<pipe:[7]>", &[5]), Ok(vec![(1, 4, 5)]));
    // The reply starts while the fsync is still running: rejected.
    let racing = "1  write(9</l>, \"{\\\"key\\\":\\\"k5\\\"}\\n\", 11) = 11\n\
                  1  fsync(9</l> <unfinished ...>\n\
                  2  write(11<pipe:[7]>, \"{\\\"id\\\":5,\\\"ledger_line\\\":1}\", 20) = 20\n\
                  1  <... fsync resumed>) = 0\n";
    assert!(fsync_order(racing, "</l>", "<pipe:[7]>", &[5]).is_err());
    // No fsync at all, a failed fsync, an fsync of another file, a reply on another pipe.
    let no_fsync = "1  write(9</l>, \"{\\\"key\\\":\\\"k5\\\"}\", 11) = 11\n\
                    1  write(1<pipe:[7]>, \"{\\\"id\\\":5}ledger_line\", 20) = 20\n";
    assert!(fsync_order(no_fsync, "</l>", "<pipe:[7]>", &[5]).is_err());
    let failed = no_fsync.replace("1  write(1<", "1  fsync(9</l>) = -1 EIO (Input/output error)\n1  write(1<");
    assert!(fsync_order(&failed, "</l>", "<pipe:[7]>", &[5]).is_err());
    let other = no_fsync.replace("1  write(1<", "1  fsync(3</other>) = 0\n1  write(1<");
    assert!(fsync_order(&other, "</l>", "<pipe:[7]>", &[5]).is_err());
    let fixed = no_fsync.replace("1  write(1<", "1  fsync(9</l>) = 0\n1  write(1<");
    assert!(fsync_order(&fixed, "</l>", "<pipe:[7]>", &[5]).is_ok());
    assert!(fsync_order(&fixed, "</l>", "<pipe:[8]>", &[5]).is_err());
}

#[test]
fn strace_parser_pairs_unfinished_and_resumed_calls() {
    let log = "10  write(3</l>, \"x\", 1) = 1\n\
               10  fsync(3</l> <unfinished ...>\n\
               11  write(1<pipe:[7]>, \"y\", 1 <unfinished ...>\n\
               10  <... fsync resumed>) = 0\n\
               11  <... write resumed>) = 1\n";
    let calls = parse_strace(log);
    let summary: Vec<(&str, usize, usize, &str)> =
        calls.iter().map(|c| (c.name.as_str(), c.entry, c.exit, c.result.as_str())).collect();
    assert_eq!(summary, vec![("write", 0, 0, "1"), ("fsync", 1, 3, "0"), ("write", 2, 4, "1")]);
    assert!(calls[1].args.starts_with("3</l>"));
}

#[test]
fn rust_fsyncs_before_reply() {
    fsync_precedes_reply(Sdk::Rust);
}

#[test]
fn typescript_fsyncs_before_reply() {
    fsync_precedes_reply(Sdk::TypeScript);
}

#[test]
fn python_fsyncs_before_reply() {
    fsync_precedes_reply(Sdk::Python);
}

// ---------------------------------------------------------------------------------------------
// A torn tail left by an earlier crash

/// A ledger ending in a torn line (as a power cut or a kill mid-write leaves it): the server
/// ends it with a newline before its first append, so its new line is whole and counted, and the
/// torn line is reported malformed, never counted.
fn torn_tail_is_ended_before_the_next_line(sdk: Sdk) {
    let scratch = temp(&format!("torn-{}", sdk.name()));
    let ledger = scratch.join("ledger.jsonl");
    let whole = r#"{"request_id":1,"tool":"charge","arguments":{"amount":1,"key":"k1"}}"#;
    std::fs::write(&ledger, format!("{whole}\n{{\"request_id\":2,\"tool\":\"cha")).unwrap();
    let before = count(&std::fs::read(&ledger).unwrap(), None);
    assert_eq!((before.effects, before.torn_tail), (1, true));

    let mut server = stdio_server(&argv(sdk, &ledger, "stdio"));
    server.send(&charge(3, 0, 0));
    let reply = server.next_response();
    assert_eq!(reply["result"]["structuredContent"]["ledger_line"], 3, "{reply}");
    drop(server);

    let bytes = std::fs::read(&ledger).unwrap();
    let after = count(&bytes, None);
    assert_eq!((after.effects, after.complete_lines, after.torn_tail), (2, 3, false), "{}", sdk.name());
    assert_eq!(after.malformed, vec![2]);
    let last: Value = serde_json::from_str(std::str::from_utf8(&bytes).unwrap().lines().nth(2).unwrap()).unwrap();
    assert_eq!(key_of(&last), Some(3));
}

#[test]
fn rust_ends_a_torn_tail() {
    torn_tail_is_ended_before_the_next_line(Sdk::Rust);
}

#[test]
fn typescript_ends_a_torn_tail() {
    torn_tail_is_ended_before_the_next_line(Sdk::TypeScript);
}

#[test]
fn python_ends_a_torn_tail() {
    torn_tail_is_ended_before_the_next_line(Sdk::Python);
}
