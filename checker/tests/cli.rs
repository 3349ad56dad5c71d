//! The `mcp-once` binary, run as a user runs it, on real files.

use mcp_once_testkit::stdio::Peer;
use mcp_once_testkit::{jsonl, mcp_once, scratch, text, trace_in, Scratch};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn temp(name: &str) -> Scratch {
    scratch!("cli", name)
}

fn stdout(out: &std::process::Output) -> String {
    text(&out.stdout)
}

fn stderr(out: &std::process::Output) -> String {
    text(&out.stderr)
}

/// Check at-most-once under 2025-11-25 with `args`, writing traces to `dir`; the trace file.
fn at_most_once_trace(dir: &Path, args: &[&str]) -> PathBuf {
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--property", "at-most-once"])
        .args(args)
        .arg("--out")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    trace_in(dir, "at-most-once")
}

#[test]
fn check_without_arguments_runs_the_default_matrix_and_summarises_it() {
    let out = mcp_once!().arg("check").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "violations found: exit 1; stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("default matrix: 460 cells (340 checked, 120 not applicable)"), "{text}");
    let safe_line = text
        .lines()
        .find(|l| l.contains("sep-3182") && l.contains("stdio") && l.contains("retry-any") && l.contains("key-durable"))
        .unwrap_or_else(|| panic!("SEP-3182 durable retry-any cell listed as safe: {text}"));
    assert!(safe_line.contains("exactly-once holds"), "{safe_line}");
    // No plain server with a retrying client is listed as safe.
    assert!(!text.lines().any(|l| l.contains(" plain ") && l.contains("retry-on-timeout")), "{text}");
    // The cells where at-most-once holds, derived: a client that never retries sends one
    // attempt, so nothing can run twice: every applicable no-retry cell, 2 transports x (4
    // servers under mcp-2025-11-25 + 4 under mcp-2026-07-28, which define no key, + 8 under
    // sep-3182, which adds the 4 key stores, and 9 under outcome-query, which adds them and
    // SEP-1686's validating receiver) = 50. A retrying client
    // is safe only where a retry can never run again what ran: SEP-3182's durable store with
    // one key per logical call (a per-step key is new on every framework re-run), under each
    // of the 4 retrying policies, 2 transports x 4 = 8; and outcome-query's durable store on
    // stdio with the 3 policies that ask before retrying (retry-on-timeout,
    // retry-on-disconnect, retry-any; the framework re-runs without asking): the status query
    // does not deduplicate, but over stdio it is read after the request it asks about, so it
    // answers "completed" once that attempt committed, and "unknown" only when it never will
    // (the process ended); over HTTP it can overtake the request it asks about = 3; and the
    // same 3 with a new key per attempt (the query asks about the attempt that failed, by that
    // attempt's own key) = 3. The validating receiver (outcome-query's validates-task-id) runs
    // a task id once, whatever the transport: with one key per logical call under the 4
    // retrying policies, 2 transports x 4 = 8; with a new key per attempt, as the durable store
    // on stdio = 3.
    let derived = 2 * (4 + 4 + 8 + 9) + 2 * 4 + 3 + 3 + 2 * 4 + 3;
    let listed: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.starts_with("cells where at-most-once holds"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .map(|l| l.split_whitespace().take(5).collect())
        .collect();
    for cell in &listed {
        let [profile, transport, client, key, server] = cell[..] else { panic!("not a cell line: {cell:?}") };
        let safe = client == "no-retry"
            || (profile == "sep-3182" && key == "per-call" && server == "key-durable")
            || ((profile, transport) == ("outcome-query", "stdio")
                && (server == "key-durable" || server == "validates-task-id")
                && client != "framework-retry")
            || (profile, key, server) == ("outcome-query", "per-call", "validates-task-id");
        assert!(safe, "at-most-once holds in a cell the derivation does not name: {cell:?}");
    }
    assert_eq!(listed.len(), derived, "{text}");
    let summary = format!(
        "summary: 340 cells checked; every checked property holds in 0; at-most-once holds in {derived}; worst case 3 effects"
    );
    assert!(text.contains(&summary), "{text}");
}

/// A cell off the default axes names them in its JSON `config`, so a pipeline can tell it from
/// the same cell on the defaults (whose `config` has none of them).
#[test]
fn check_json_config_names_every_axis_that_is_not_at_its_default() {
    let cells: [(&str, &[(&str, Value)]); 4] = [
        (
            "--profile mcp-2025-11-25 --transport http --client no-retry --server dedup-by-id --calls 2 --crashes 0 --session-terminations 1 --property success-implies-effect",
            &[("session_terminations", json!(1))],
        ),
        (
            "--profile mcp-2025-11-25 --transport http --client retry-any --server plain --calls 1 --crashes 0 --resumption used --property at-most-once",
            &[("resumption", json!("used"))],
        ),
        (
            "--profile mcp-2026-07-28 --transport http --client retry-any --server plain --calls 1 --crashes 0 --tasks augmented --task-records volatile --property at-most-once",
            &[("tasks", json!("augmented")), ("task_records", json!("volatile"))],
        ),
        (
            "--profile specs/proposals/id-dedup-and-annotated-retry.toml --client retry-on-timeout --server plain --annotation idempotent --property at-most-once",
            &[("annotation", json!("idempotent"))],
        ),
    ];
    let axes = ["annotation", "resumption", "session_terminations", "tasks", "task_records"];
    for (flags, expected) in cells {
        let config = |flags: &str| {
            let out = mcp_once!()
                .current_dir(env!("CARGO_MANIFEST_DIR").to_string() + "/..")
                .arg("check")
                .args(flags.split(' '))
                .args(["--format", "json"])
                .output()
                .unwrap();
            assert!(matches!(out.status.code(), Some(0 | 1)), "{flags}: {}", stderr(&out));
            serde_json::from_str::<Value>(&stdout(&out)).unwrap()["config"].clone()
        };
        let off = config(flags);
        for (axis, value) in expected {
            assert_eq!(off[*axis], *value, "{flags}: {off}");
        }
        // The same cell with the axes at their defaults carries none of them.
        let mut words: Vec<&str> = flags.split(' ').collect();
        for (axis, _) in expected {
            let flag = format!("--{}", axis.replace('_', "-"));
            let at = words.iter().position(|w| *w == flag).unwrap();
            words.drain(at..at + 2);
        }
        let on = config(&words.join(" "));
        for axis in axes {
            assert!(on.get(axis).is_none(), "{}: {on}", words.join(" "));
        }
    }
}

#[test]
fn check_json_reports_every_property_with_trace_files_that_validate() {
    let dir = temp("json");
    let out = mcp_once!()
        .args(["check", "--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-disconnect"])
        .args(["--server", "plain", "--calls", "1", "--retries", "1", "--crashes", "1", "--format", "json", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["config"]["client"], "retry-on-disconnect");
    assert_eq!(v["config"]["crashes"], 1);
    assert_eq!(v["worst_effects"], 2);
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4);
    let amo = &results[0];
    assert_eq!(amo["property"], "at-most-once");
    assert_eq!(amo["verdict"], "violated");
    assert_eq!(amo["trace"]["steps"], 9);
    assert_eq!(amo["trace"]["effects"], 2);
    assert!(amo["states"].as_u64().unwrap() > 10);
    assert_eq!(results[2]["property"], "success-implies-effect");
    assert_eq!(results[2]["verdict"], "holds");
    assert!(results[2].get("trace").is_none());
    for f in [amo["trace"]["file"].as_str().unwrap(), v["worst_trace"].as_str().unwrap()] {
        let ok = mcp_once!().args(["check", "--trace", f]).output().unwrap();
        assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
        assert!(stdout(&ok).contains("valid"), "{}", stdout(&ok));
    }
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(amo["trace"]["file"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(doc["#meta"]["format"], "ITF");
    assert_eq!(doc["#meta"]["vocabulary"], "mcp-once-actions/v1");
    assert_eq!(doc["#meta"]["minimal"], true);
    assert_eq!(doc["states"][0]["mbt::actionTaken"]["tag"], "init");
    assert_eq!(doc["states"][4]["mbt::actionTaken"], json!({"tag": "ServerCrash", "value": {"#tup": []}}));
    assert_eq!(doc["states"][7]["mbt::actionTaken"]["value"], json!({"call": 0, "attempt": 1}));
    assert_eq!(doc["states"][6]["#meta"]["rules"][0]["knob"], "stdio_restart");
}

#[test]
fn a_corrupt_trace_is_rejected_with_its_step_and_reason() {
    let dir = temp("corrupt");
    let file = at_most_once_trace(&dir, &["--client", "retry-on-timeout", "--crashes", "0"]);
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    // Step 5 claims the server read the retry before the first request: not possible on stdio.
    doc["states"][5]["mbt::actionTaken"] = json!({"tag": "ServerReceive", "value": {"call": 0, "attempt": 1}});
    let bad = dir.join("edited.itf.json");
    std::fs::write(&bad, doc.to_string()).unwrap();
    let out = mcp_once!().args(["check", "--trace"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("step 5") && err.contains("ServerReceive(call 0, attempt 1) is not possible here"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    // A property no trace can show is refused, not read as some default.
    let mut renamed: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    renamed["#meta"]["property"] = json!("at-most-twice");
    std::fs::write(&bad, renamed.to_string()).unwrap();
    let out = mcp_once!().args(["check", "--trace"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("edited.itf.json") && err.contains("unknown property `at-most-twice`"), "{err}");
    assert!(err.contains("worst-case"), "the error lists what a trace may show: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    std::fs::write(&bad, "{ not json").unwrap();
    let out = mcp_once!().args(["check", "--trace"]).arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not JSON"));
}

#[test]
fn a_malformed_profile_is_rejected_with_file_and_line() {
    let dir = temp("profile");
    let path = dir.join("mine.toml");
    std::fs::write(&path, "name = \"mine\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"mcp-2026-07-28\"\n[knobs.request_id_scope]\nvalue = \"forever\"\n").unwrap();
    let out = mcp_once!().args(["check", "--profile"]).arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains(&format!("{}:7:9: unknown variant `forever`", path.display())), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_proposal_file_is_checked_like_a_builtin() {
    let dir = temp("proposal");
    let path = dir.join("atomic-keys.toml");
    let cite = "revision = \"x\"\npath = \"seps/x.md\"\nsection = \"s\"\nquote = \"q\"\n";
    std::fs::write(&path, format!(
        "name = \"atomic-keys\"\ntitle = \"SEP-3182 with the record atomic with the effect\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n[knobs.idempotency_crash_window]\nvalue = \"closed\"\n[knobs.idempotency_crash_window.cite]\n{cite}"
    )).unwrap();
    let out =
        mcp_once!().args(["check", "--profile"]).arg(&path).args(["--server", "key-after-effect"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "key-after-effect is outside this proposal");
    assert!(stderr(&out).contains("requires the key record to be atomic"), "{}", stderr(&out));
    let out = mcp_once!()
        .args(["check", "--profile"])
        .arg(&path)
        .args(["--server", "key-durable", "--client", "retry-any", "--property", "at-most-once"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert!(stdout(&out).contains("at-most-once             holds"), "{}", stdout(&out));
}

/// `--tasks augmented`: the duplicate task under a lost `CreateTaskResult` (7 steps), the holding
/// cell without retries, and a one-line refusal (exit 2) where the profile has no tasks or the
/// task-record flag has no task to apply to.
#[test]
fn tasks_answer_with_the_duplicate_task_or_holds_and_refuse_where_there_are_none() {
    let cell =
        ["check", "--profile", "mcp-2025-11-25", "--transport", "http", "--server", "plain", "--tasks", "augmented"];
    let bounds = ["--calls", "1", "--retries", "1", "--property", "at-most-once"];
    let out = mcp_once!().args(cell).args(bounds).args(["--client", "retry-any", "--crashes", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("shortest counterexample: 7 steps, 2 effect(s)"), "{text}");
    assert!(text.contains("the CreateTaskResult is lost, the client has no task id"), "{text}");
    assert!(text.contains("task t0.1 takes the side effect"), "{text}");
    let out = mcp_once!().args(cell).args(bounds).args(["--client", "no-retry", "--crashes", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("at-most-once             holds"), "{}", stdout(&out));
    let dir = temp("no-tasks");
    let path = dir.join("no-tasks.toml");
    let cite = "revision = \"x\"\npath = \"seps/x.md\"\nsection = \"s\"\nquote = \"q\"\n";
    std::fs::write(&path, format!(
        "name = \"no-tasks\"\ntitle = \"2025-11-25 without tasks\"\nkind = \"proposal\"\nrevision = \"2025-11-25\"\nextends = \"mcp-2025-11-25\"\n[knobs.task_creation]\nvalue = \"none\"\n[knobs.task_creation.cite]\n{cite}"
    )).unwrap();
    let out = mcp_once!().args(["check", "--profile"]).arg(&path).args(["--tasks", "augmented"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("task_creation = none") && err.trim().lines().count() == 1, "{err}");
    let out = mcp_once!().args(["check", "--task-records", "volatile"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("needs --tasks augmented"), "{}", stderr(&out));
}

#[test]
fn matrix_json_lists_every_cell_of_a_profile() {
    let out = mcp_once!().args(["matrix", "--profile", "mcp-2026-07-28", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * 5 * 9);
    let na: Vec<&Value> = cells.iter().filter(|c| c["applicable"] == false).collect();
    assert_eq!(na.len(), 2 * 5 * 5, "key stores (and the validating receiver) do not apply without a key");
    assert!(na[0]["reason"].as_str().unwrap().contains("defines no idempotency key"));
    // The profile's text rules them out; none is a gap in what the model covers.
    assert!(
        na.iter().all(|c| c["why"] == "outside-profile"),
        "{:?}",
        na.iter().find(|c| c["why"] != "outside-profile")
    );
}

#[test]
fn unknown_names_are_rejected_with_the_choices() {
    let out = mcp_once!().args(["check", "--server", "magic"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("key-durable"), "{}", stderr(&out));
    let out = mcp_once!().args(["check", "--profile", "mcp-1999"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unknown profile `mcp-1999`"));
}

#[test]
fn profiles_shows_each_knob_with_its_citation() {
    let out = mcp_once!().args(["profiles", "sep-3182"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(text.contains("idempotency_key = params   (set by sep-3182)"), "{text}");
    assert!(text.contains("http_disconnect_is_cancel = true   (set by mcp-2026-07-28)"), "{text}");
    assert!(text.contains("seps/sep-3182-request-idempotency.md"), "{text}");
}

#[test]
fn explain_writes_an_issue_report_with_a_well_formed_mermaid_sequence() {
    let dir = temp("explain");
    let file = at_most_once_trace(&dir, &["--client", "retry-on-disconnect", "--crashes", "1"]);
    let out = mcp_once!().arg("explain").arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = stdout(&out);
    // Without evidence the issue is the spec's: the title names the profile and what happened.
    assert!(
        md.starts_with("## mcp-2025-11-25 (")
            && md.lines().next().unwrap().contains("one tools/call takes effect 2 times"),
        "{md}"
    );
    assert!(md.contains("executes one logical tool call 2 times"), "{md}");
    for section in ["### Expected", "### Actual", "### Why the spec allows it", "### Suggested fix", "### Reproduce"] {
        assert!(md.contains(section), "{section}: {md}");
    }
    assert!(md.contains("| steps (shortest) | 9 |"), "{md}");
    assert!(md.contains("allowed by `request_id_scope = session`"), "{md}");
    assert!(
        md.contains("mcp-once check --profile mcp-2025-11-25 --transport stdio --client retry-on-disconnect"),
        "{md}"
    );
    // The Mermaid block: a sequenceDiagram with the three participants and one line per step,
    // each an arrow between declared participants or a note over one.
    let block = md.split("```mermaid\n").nth(1).unwrap().split("```").next().unwrap();
    let lines: Vec<&str> = block.lines().collect();
    assert_eq!(lines[0], "sequenceDiagram");
    assert_eq!(
        &lines[1..4],
        ["    participant C as Client", "    participant T as Transport", "    participant S as Server"]
    );
    assert_eq!(lines.len(), 4 + 9);
    for l in &lines[4..] {
        let l = l.trim();
        let ok = ["C->>T: ", "T->>S: ", "S->>T: ", "T->>C: ", "T-->>C: ", "C->>S: ", "Note over C: ", "Note over S: "]
            .iter()
            .any(|p| l.starts_with(p));
        assert!(ok && !l.contains(';') && !l.contains('#'), "not a Mermaid sequence line: {l}");
    }
    assert!(block.contains("Note over S: 4. SIGKILL"));
    assert_eq!(mermaid_parse(&md), vec!["ok sequence"]);
}

/// Parse every Mermaid block of `markdown` with the real Mermaid parser (Node.js, the pinned
/// `mermaid` package that scripts/test installs in checker/tests/mermaid).
fn mermaid_parse(markdown: &str) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mermaid");
    assert!(
        dir.join("node_modules/mermaid").is_dir(),
        "the Mermaid parser is not installed: run scripts/test (it runs npm ci in {})",
        dir.display()
    );
    // One folder per call: tests run in parallel, and `temp` empties its folder.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let scratch = temp(&format!("mermaid-{n}"));
    let file = scratch.join("report.md");
    std::fs::write(&file, markdown).unwrap();
    let out = std::process::Command::new("node").arg(dir.join("parse.mjs")).arg(&file).output().expect("node runs");
    let text = stdout(&out);
    assert!(out.status.success(), "Mermaid rejects a block: {text}{}", stderr(&out));
    text.lines().map(String::from).collect()
}

#[test]
fn every_trace_of_two_profiles_explains_to_mermaid_that_parses() {
    let dir = temp("explain-all");
    let out = mcp_once!()
        .args(["matrix", "--profile", "sep-3182", "--profile", "outcome-query", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let mut all = String::new();
    let mut kinds = std::collections::BTreeSet::new();
    let files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    assert!(files.len() > 200, "{} traces", files.len());
    for f in &files {
        let out = mcp_once!().arg("explain").arg(f).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}: {}", f.display(), stderr(&out));
        let md = stdout(&out);
        for kind in ["StreamBreak", "ServerCrash", "KeyExpires", "ClientQueryOutcome", "FrameworkRetry", "ClientCancel"]
        {
            if md.contains(&format!("`{kind}")) {
                kinds.insert(kind);
            }
        }
        all.push_str(&md);
    }
    assert_eq!(kinds.len(), 6, "traces cover every kind of fault step: {kinds:?}");
    let parsed = mermaid_parse(&all);
    assert_eq!(parsed.len(), files.len());
    assert!(parsed.iter().all(|l| l == "ok sequence"));
}

#[test]
fn fixture_runs_the_rust_ledger_server_over_stdio() {
    let dir = temp("fixture");
    let ledger = dir.ledger();
    let argv: Vec<String> = [env!("CARGO_BIN_EXE_mcp-once"), "fixture", "--sdk", "rust", "--transport", "stdio"]
        .into_iter()
        .map(String::from)
        .chain(["--variant".into(), "key-durable".into(), "--ledger".into(), ledger.display().to_string()])
        .collect();
    let mut server = Peer::spawn(&argv, Duration::from_secs(20));
    assert!(server.initialize("cli-test")["result"]["serverInfo"].is_object());
    for id in [7, 8] {
        let reply = server.request(
            json!(id),
            "tools/call",
            json!({"name": "charge", "arguments": {"amount": 42, "currency": "usd"}, "idempotencyKey": "k-1"}),
        );
        assert!(reply["result"]["content"][0]["text"].as_str().unwrap().contains("charged 42"), "{reply}");
    }
    server.close_stdin();
    let lines = jsonl::read(&ledger);
    assert_eq!(lines.len(), 1, "the durable key store runs the repeated key once: {lines:?}");
    assert_eq!(lines[0]["request_id"], 7);
    assert_eq!(lines[0]["idempotency_key"], "k-1");
    assert_eq!(lines[0]["sdk"], "rust");
    // Standard input closed: the server exits by itself, closing its stdout (bounded waits).
    server.await_stdout_closed();
    assert!(server.wait_exit().success());
}

#[test]
fn bench_quick_prints_every_part_in_json() {
    // Shape only: benchmarks are not timed tests.
    let out = mcp_once!().args(["bench", "--quick", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(v["machine"]["cpus"].as_u64().unwrap() >= 1);
    let cell = &v["cells"][0];
    for key in ["generated", "unique", "depth", "seconds", "states_per_second", "peak_rss_mib", "bytes_per_state"] {
        assert!(cell[key].is_number(), "{key}: {cell}");
    }
    assert_eq!(cell["at_most_once"], "holds");
    assert_eq!(cell["end"], "exhaustive");
    assert_eq!(cell["fingerprint_bits"], 128, "every row says how states were remembered: {cell}");
    assert_eq!(v["largest"], json!([]), "--quick skips the largest cells");
    assert_eq!(v["matrix"]["checked"], 340);
    assert!(v["matrix"]["seconds"].is_number());
    // On more than one core, the matrix on one thread and on every core, compared.
    if v["machine"]["cpus"].as_u64().unwrap() > 1 {
        let t = &v["matrix"]["threads_compared"];
        assert_eq!(t["same_answers"], true, "{t}");
        assert_eq!(t["one_thread"].as_array().unwrap().len(), 1, "one round with --quick: {t}");
        assert_eq!(t["every_core"].as_array().unwrap().len(), 1, "{t}");
    }
    let growth = v["growth"].as_array().unwrap();
    assert!(growth.len() >= 4, "{growth:?}");
    // The quick growth goes from 1 call to 2 (or the model's bound, if lower), one call more
    // each row, each row larger than the last; none spilled, so none reports disk.
    let calls: Vec<&Value> = growth.iter().filter(|r| r["name"].as_str().unwrap().starts_with("calls:")).collect();
    let counts: Vec<String> = calls
        .iter()
        .map(|r| r["config"].as_str().unwrap().split("--calls ").nth(1).unwrap().split(' ').next().unwrap().to_string())
        .collect();
    let top = 2.min(mcp_once_model::state::MAX_CALLS);
    assert_eq!(counts, (1..=top).map(|c| c.to_string()).collect::<Vec<_>>(), "{growth:?}");
    let states: Vec<u64> = calls.iter().map(|r| r["unique"].as_u64().unwrap()).collect();
    assert!(states.windows(2).all(|w| w[0] < w[1]), "states grow with calls: {states:?}");
    for r in growth {
        assert_eq!(r["end"], "exhaustive", "{r}");
        assert!(r["disk_peak_mib"].is_null() && r["peak_rss_mib"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert!(
        v["replay"]["skipped"].as_str().unwrap().contains("not run"),
        "--quick skips the replay part: {}",
        v["replay"]
    );
    let text = mcp_once!().args(["bench", "--quick", "--only", "cells"]).output().unwrap();
    assert!(stdout(&text).contains("B/state") && stdout(&text).contains("P(coll)"), "{}", stdout(&text));
}

#[test]
fn bench_runs_the_largest_cells_within_the_budget_and_says_where_each_stopped() {
    // The largest cells within the CLI's bounds, each in its own process under a small memory
    // budget: none is killed, each stops under its budget and reports how deep it got and what
    // it decided (at-most-once is violated a few steps in, long before any budget).
    let out =
        mcp_once!().args(["bench", "--only", "largest", "--max-memory", "300M", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let rows = v["largest"].as_array().unwrap();
    assert_eq!(rows.len(), 9, "{rows:?}");
    let servers: std::collections::BTreeSet<&str> = rows
        .iter()
        .map(|r| r["config"].as_str().unwrap().split("--server ").nth(1).unwrap().split(' ').next().unwrap())
        .collect();
    assert_eq!(servers.len(), 8, "every server behaviour: {servers:?}");
    // The issue-16 cell (c3 r2 k1) first, then the eight at the model's bounds.
    assert!(rows[0]["config"].as_str().unwrap().contains("--calls 3 --retries 2 --crashes 1"), "{}", rows[0]);
    let bounds = format!(
        "--calls {} --retries {} --crashes {}",
        mcp_once_model::state::MAX_CALLS,
        mcp_once_model::state::MAX_ATTEMPTS - 1,
        mcp_once_model::state::MAX_CRASHES
    );
    for r in &rows[1..] {
        assert!(r["config"].as_str().unwrap().contains(&bounds), "{r}");
    }
    for r in rows {
        let end = r["end"].as_str().unwrap();
        assert!(end.starts_with("stopped at depth ") && end.contains("memory budget"), "{r}");
        assert!(r["peak_rss_mib"].as_f64().unwrap() <= 300.0, "over its budget: {r}");
        assert!(r["unique"].as_u64().unwrap() > 100_000, "{r}");
        assert_eq!(r["at_most_once"], "violated", "{r}");
        assert!(r["disk_peak_mib"].is_null(), "no --spill-dir, no disk: {r}");
    }
    assert!(v["cells"].as_array().unwrap().is_empty() && v["growth"].as_array().unwrap().is_empty());
}

#[test]
fn bench_plot_writes_the_growth_with_calls_as_svg() {
    let dir = temp("bench-plot");
    let file = dir.join("growth.svg");
    let out = mcp_once!().args(["bench", "--quick", "--only", "growth", "--plot"]).arg(&file).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let svg = std::fs::read_to_string(&file).unwrap();
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    // Well-formed: every element opened is closed, in order.
    let mut open = Vec::new();
    for tag in svg.split('<').skip(1) {
        let name: String = tag.trim_start_matches('/').chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        let head = tag.split('>').next().unwrap();
        if tag.starts_with('/') {
            assert_eq!(open.pop(), Some(name.clone()), "</{name}> closes nothing open");
        } else if !head.ends_with('/') {
            open.push(name);
        }
    }
    assert!(open.is_empty(), "left open: {open:?}");
    // One line per figure, through a point per number of calls (1 and 2 with --quick).
    for series in ["states", "seconds", "peak-mib"] {
        let at = svg.find(&format!(r#"<polyline class="series" data-series="{series}" points=""#)).expect(series);
        let points = svg[at..].split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        assert_eq!(points.split(' ').count(), 2, "{series}: {points}");
    }
    assert_eq!(svg.matches("<polyline").count(), 3, "{svg}");
    assert_eq!(svg.matches(r#"class="axis-label""#).count(), 3, "{svg}");
    assert_eq!(svg.matches(">calls</text>").count(), 3, "each panel's x axis says calls: {svg}");
    assert!(svg.contains(">unique states</text>") && svg.contains(">wall seconds</text>"), "{svg}");

    // A file in a folder that does not exist: refused at once, before the bench runs.
    let missing = dir.join("no-such-folder").join("growth.svg");
    let out = mcp_once!().args(["bench", "--quick", "--only", "growth", "--plot"]).arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&missing.display().to_string()) && err.contains("does not exist"), "{err}");
    assert!(stdout(&out).is_empty(), "nothing run: {}", stdout(&out));
}

#[test]
fn check_format_markdown_prints_markdown() {
    let args = ["check", "--profile", "mcp-2025-11-25", "--client", "retry-on-timeout", "--crashes", "0"];
    let out = mcp_once!().args(args).args(["--format", "markdown"]).output().unwrap();
    let md = stdout(&out);
    assert_eq!(out.status.code(), Some(1), "a violation exits 1: {md}");
    assert!(md.starts_with("# mcp-once check --profile mcp-2025-11-25"), "{md}");
    assert!(md.contains("| property | verdict | shortest counterexample |\n|---|---|---|"), "{md}");
    assert!(md.contains("| `at-most-once` | **violated** | 8 steps, 2 effect(s) for one call |"), "{md}");
    assert!(md.contains("## `at-most-once` violated"), "each counterexample's report: {md}");
    assert!(md.contains("```mermaid") && md.contains("tools/call, retry (call 0, id 2)"), "{md}");
    assert!(md.contains("| bounds | 1 call, 1 retry, 0 crashes |"), "{md}");
}

#[test]
fn a_2026_07_28_report_marks_the_changelog_must_as_not_normative() {
    // A stream break and a retry: every retry step cites the changelog's "clients MUST re-issue".
    let cell = [
        "check",
        "--profile",
        "mcp-2026-07-28",
        "--transport",
        "http",
        "--client",
        "retry-on-disconnect",
        "--crashes",
        "0",
        "--property",
        "at-most-once",
    ];
    for format in ["text", "markdown"] {
        let out = mcp_once!().args(cell).args(["--format", format]).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let report = stdout(&out);
        let cited: Vec<&str> = report.lines().filter(|l| l.contains("changelog.mdx")).collect();
        assert!(!cited.is_empty(), "{format}: the retry step cites the changelog:\n{report}");
        for line in cited {
            assert!(line.contains("not normative"), "{format}: a changelog MUST printed as normative: {line}");
        }
    }
    let out = mcp_once!().args(["profiles", "mcp-2026-07-28"]).output().unwrap();
    let text = stdout(&out);
    assert!(text.lines().filter(|l| l.contains("changelog.mdx")).all(|l| l.contains("not normative")), "{text}");
}

// `--threads N` (cells at a time): the same answers on one thread as on several, and a bad
// count refused.

/// The JSON of `mcp-once ARGS --format json`, its times taken out, and the exit code.
fn answers_without_times(args: &[&str]) -> (Value, Option<i32>) {
    fn drop_times(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.ends_with("seconds"));
                m.values_mut().for_each(drop_times);
            }
            Value::Array(a) => a.iter_mut().for_each(drop_times),
            _ => {}
        }
    }
    let out = mcp_once!().args(args).args(["--format", "json"]).output().unwrap();
    let mut v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    drop_times(&mut v);
    (v, out.status.code())
}

#[test]
fn a_matrix_gives_the_same_report_on_one_thread_and_on_two() {
    let matrix = ["matrix", "--profile", "sep-3182"];
    let (one, code_one) = answers_without_times(&[&matrix[..], &["--threads", "1"]].concat());
    let (two, code_two) = answers_without_times(&[&matrix[..], &["--threads", "2"]].concat());
    assert_eq!(code_one, code_two);
    assert!(one["cells"].as_array().unwrap().len() > 50, "{one}");
    assert_eq!(one, two, "the same report but for the times");
}

#[test]
fn one_cell_searched_on_two_threads_gives_the_report_of_one_thread() {
    // One cell: the two threads share its search (a fingerprint table split between them).
    let cell = ["check", "--profile", "sep-3182", "--transport", "http", "--client", "retry-any", "--key", "per-call"];
    let cell = [&cell[..], &["--server", "key-durable", "--calls", "3", "--retries", "2", "--crashes", "1"]].concat();
    let (one, code_one) = answers_without_times(&[&cell[..], &["--threads", "1"]].concat());
    let (two, code_two) = answers_without_times(&[&cell[..], &["--threads", "2"]].concat());
    assert_eq!(code_one, Some(1), "no-silent-effect is violated: {one}");
    assert_eq!(code_one, code_two);
    assert_eq!(one, two, "the same report but for the times");
}

#[test]
fn four_calls_are_checked_and_a_fifth_is_refused_naming_the_bound() {
    let cell = ["check", "--profile", "mcp-2026-07-28", "--transport", "stdio", "--client", "retry-any"];
    let four = [&cell[..], &["--server", "plain", "--calls", "4", "--retries", "1", "--crashes", "0"]].concat();
    let out = mcp_once!().args(&four).args(["--property", "at-most-once"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}{}", text(&out.stdout), text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains("at-most-once") && printed.contains("VIOLATED"), "{printed}");
    let five = [&cell[..], &["--server", "plain", "--calls", "5"]].concat();
    let out = mcp_once!().args(&five).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--calls 5 is out of range (1 to 4)"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn a_thread_count_of_zero_is_refused_naming_the_flag() {
    let out = mcp_once!().args(["check", "--threads", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--threads") && err.contains('0'), "{err}");
}
