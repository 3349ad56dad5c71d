//! `mcp-once diff` as a spec author runs it: which cells change between two profiles, and
//! whether a key proposal fixes duplicates against the same behaviours without a key.

use mcp_once_testkit::{mcp_once, scratch, text, Scratch};
use serde_json::{json, Value};

fn temp(name: &str) -> Scratch {
    scratch!("diff", name)
}

fn stdout(out: &std::process::Output) -> String {
    text(&out.stdout)
}

fn stderr(out: &std::process::Output) -> String {
    text(&out.stderr)
}

#[test]
fn diff_of_2026_07_28_against_sep_3182_shows_exactly_the_cells_that_change() {
    let out = mcp_once!().args(["diff", "mcp-2026-07-28", "sep-3182", "--format", "json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "cells change: exit 1; {}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let changed = v["changed"].as_array().unwrap();
    // SEP-3182 only adds the key: the cells without a key store are the same model, so the
    // changes are exactly the key-store cells, which did not apply before (2 transports x
    // 4 stores x (5 policies + 1 per-step framework cell + 4 per-attempt cells of the policies
    // that retry)). SEP-1686's validating receiver applies under neither (it needs an outcome
    // query), so its cells change nothing.
    assert_eq!(changed.len(), 2 * 4 * 10);
    assert_eq!(v["summary"], json!({"newly-applicable": 80}), "the bottom line");
    assert_eq!(v["cells"], 2 * 5 * 9 + 2 * 5 * 10, "the cells of both matrices, each once");
    for c in changed {
        assert!(c["before"].is_null() || c["before"]["applicable"] == false, "{c}");
        assert_eq!(c["kind"], "newly-applicable");
        assert_eq!(c["after"]["applicable"], true);
        assert!(c["after"]["config"]["server"].as_str().unwrap().starts_with("key-"));
    }
    let durable_retry_any = changed
        .iter()
        .find(|c| {
            c["after"]["config"]["server"] == "key-durable"
                && c["after"]["config"]["client"] == "retry-any"
                && c["after"]["config"]["transport"] == "stdio"
        })
        .unwrap();
    assert_eq!(durable_retry_any["after"]["results"][0]["verdict"], "holds");
    // A profile against itself changes nothing: exit 0.
    let out = mcp_once!().args(["diff", "sep-3182", "sep-3182"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("sep-3182 -> sep-3182: 0 of the matrix's 140 cells change"), "{}", stdout(&out));
}

#[test]
fn a_proposal_that_keys_mrtr_continuations_is_diffed_under_every_handler() {
    // SEP-3182 with each MRTR round under a key of its own: the knob changes nothing for a tool
    // that never asks for input, so diff takes every handler kind (as the profile's own matrix
    // does: `own_handlers`).
    let dir = temp("diff-keyed-continuations");
    let file = dir.join("keyed.toml");
    let cite = "[knobs.idempotency_continuations.cite]\nrevision = \"SEP-3182\"\npath = \"pull request thread\"\nsection = \"FAQ\"\nquote = \"would naturally use different idempotency keys\"\n";
    let text = format!(
        "name = \"keyed\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n[knobs.idempotency_continuations]\nvalue = \"included\"\n{cite}"
    );
    std::fs::write(&file, text).unwrap();
    let file = file.to_str().unwrap();
    let args = ["diff", "sep-3182", file, "--calls", "1", "--crashes", "0", "--no-traces", "--format", "markdown"];
    let out = mcp_once!().args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let md = stdout(&out);
    assert!(md.contains("of the matrix's 560 cells change"), "4 handler kinds x 140 cells: {md}");
    assert!(md.contains("a profile puts MRTR continuations inside the key's scope"), "{md}");
    // A lost final answer retried under its round's key is replayed: the handler that asks
    // first is fixed under a durable store.
    assert!(md.contains("- **http / retry-any / key per-call / key-durable / handler input-before-effect**"), "{md}");
    assert!(md.contains("**Bottom line: 21 fixed, 28 changed otherwise, 511 unchanged (431 of them violate a property under both).**"), "{md}");
    // The JSON says which handler each changed cell is under, with its rounds.
    let json = ["diff", "sep-3182", file, "--calls", "1", "--crashes", "0", "--format", "json"];
    let record: Value = serde_json::from_str(&stdout(&mcp_once!().args(json).output().unwrap())).unwrap();
    let changed = record["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 49);
    for c in changed {
        let config = &c["after"]["config"];
        assert!(config["handler"].is_string() && config["rounds"] == 1, "{config}");
    }
}

#[test]
fn diff_of_a_client_rule_names_the_cells_it_rules_out_with_its_reason() {
    // A proposal's client half: clients MUST reuse the key on every retry and re-run.
    let dir = temp("diff-reuse");
    let file = dir.join("reuse.toml");
    let cite = "[knobs.idempotency_key_reuse.cite]\nrevision = \"SEP-0\"\npath = \"seps/0.md\"\nsection = \"S\"\nquote = \"q\"\n";
    let text = format!(
        "name = \"reuse\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n[knobs.idempotency_key_reuse]\nvalue = \"every-rerun\"\n{cite}"
    );
    std::fs::write(&file, text).unwrap();
    let args = ["diff", "sep-3182", file.to_str().unwrap(), "--crashes", "0", "--retries", "1"];
    let out = mcp_once!().args(args).args(["--format", "markdown", "--no-traces"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let md = stdout(&out);
    // 2 transports x 4 key stores x (4 per-attempt cells + 1 per-step cell).
    assert!(
        md.contains(
            "**Bottom line: 40 no longer applicable, 100 unchanged (80 of them violate a property under both).**"
        ),
        "{md}"
    );
    assert!(
        md.contains(
            "Bounds: calls 2, retries 1, crashes 0 in every cell; the effect-only handler (--handler adds others)."
        ),
        "{md}"
    );
    assert!(md.contains("Legend: "), "{md}");
    assert!(md.contains("#### No longer applicable"), "{md}");
    assert!(md.contains("n/a: profile reuse requires a client to reuse its key"), "{md}");
    assert!(!md.contains("```"), "--no-traces leaves the traces out");
    assert!(md.len() < 65_536, "fits a GitHub comment: {} bytes", md.len());
    // With the traces, a ruled-out cell's counterexamples are named as outside the profile.
    let out = mcp_once!().args(args).output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("counterexample outside the second profile"), "{text}");
    assert!(!text.contains("vanished counterexample"), "{text}");
}

/// The at-most-once line of a `check` of one cell: its verdict word.
fn at_most_once(args: &[&str]) -> String {
    // At the diff's bounds (the default matrix's).
    let bounds = ["--calls", "2", "--retries", "1", "--crashes", "1", "--property", "at-most-once"];
    let out = mcp_once!().arg("check").args(args).args(bounds).output().unwrap();
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("at-most-once")).unwrap_or_else(|| panic!("{text}"));
    line.split_whitespace().nth(1).unwrap().to_lowercase()
}

#[test]
fn diff_of_sep_3182_opens_with_what_its_key_fixes_against_the_same_behaviour_without_one() {
    let out = mcp_once!().args(["diff", "mcp-2026-07-28", "sep-3182", "--no-traces"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[2].starts_with("Does the key fix duplicates? sep-3182 has 80 cells where the client sends a key"),
        "{text}"
    );
    assert!(
        text.contains("n/a before: profile mcp-2026-07-28 defines no idempotency key"),
        "the reason is given: {text}"
    );
    assert!(text.contains("unchanged ("), "cells that stay as they were are counted: {text}");

    let out = mcp_once!().args(["diff", "mcp-2026-07-28", "sep-3182", "--format", "json"]).output().unwrap();
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let keys = &v["keys"];
    assert_eq!(keys["cells"], 80);
    for (property, counts) in keys["per_property"].as_object().unwrap() {
        let sum: u64 = counts.as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum();
        assert_eq!(sum, 80, "{property}: every key-bearing cell has an outcome: {counts}");
    }
    // One caller: no cell checks no-foreign-replay, so the key's effect on it is not reported
    // (it was once counted as 80 undecided).
    assert!(keys["per_property"].get("no-foreign-replay").is_none(), "{keys}");
    assert!(keys["still_violated"].get("no-foreign-replay").is_none(), "{keys}");
    assert!(!text.contains("no-foreign-replay        80"), "{text}");
    let amo = &keys["per_property"]["at-most-once"];
    assert!(amo["fixed"].as_u64().unwrap() > 0 && amo["still-violated"].as_u64().unwrap() > 0, "{amo}");
    let still: Vec<&str> =
        keys["still_violated"]["at-most-once"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(still.len() as u64, amo["still-violated"].as_u64().unwrap());
    assert!(text.contains(&format!("The key leaves duplicates (at-most-once still violated) in {} cells", still.len())));

    // Each answer agrees with `check` on the two cells it compares: a durable record under a
    // per-call key fixes the retry; a record a crash loses does not.
    let cell = |transport, client, key, server| {
        ["--profile", "sep-3182", "--transport", transport, "--client", client, "--key", key, "--server", server]
            .map(str::to_string)
    };
    let baseline = ["--profile", "mcp-2026-07-28", "--transport", "stdio", "--client", "retry-any", "--key", "none"];
    assert_eq!(at_most_once(&[&baseline[..], &["--server", "plain"]].concat()), "violated");
    let durable = cell("stdio", "retry-any", "per-call", "key-durable");
    assert_eq!(at_most_once(&durable.iter().map(String::as_str).collect::<Vec<_>>()), "holds");
    assert!(!still.contains(&"stdio / retry-any / key per-call / key-durable"), "{still:?}");
    let volatile = cell("stdio", "retry-any", "per-call", "key-volatile");
    assert_eq!(at_most_once(&volatile.iter().map(String::as_str).collect::<Vec<_>>()), "violated");
    assert!(still.contains(&"stdio / retry-any / key per-call / key-volatile"), "{still:?}");
}

#[test]
fn a_diff_too_long_for_a_comment_says_so_and_still_violated_traces_are_shown_on_request() {
    let out = mcp_once!().args(["diff", "mcp-2026-07-28", "sep-3182", "--format", "markdown"]).output().unwrap();
    let md = stdout(&out);
    assert!(md.len() > 65_536, "{} characters", md.len());
    assert!(md.starts_with("> This diff is") && md.lines().next().unwrap().contains("--no-traces"), "{}", &md[..300]);
    let out = mcp_once!()
        .args(["diff", "mcp-2026-07-28", "sep-3182", "--format", "markdown", "--no-traces"])
        .output()
        .unwrap();
    let short = stdout(&out);
    assert!(short.len() < 65_536 && !short.starts_with('>'), "{} characters", short.len());
    assert!(short.contains("--still-violated-traces"), "{short}");

    let args = ["diff", "mcp-2026-07-28", "sep-3182", "--no-traces", "--still-violated-traces"];
    let with = stdout(&mcp_once!().args(args).output().unwrap());
    let section = &with[..with.find("Bottom line").unwrap()];
    assert!(section.matches("ClientCall").count() >= 64, "one trace per still-violated cell:\n{section}");
}

#[test]
fn a_counterexample_that_changes_is_shown() {
    // 2025-11-25 to 2026-07-28: a cell whose property stays violated by another counterexample.
    let out = mcp_once!().args(["diff", "mcp-2025-11-25", "mcp-2026-07-28"]).output().unwrap();
    let text = stdout(&out);
    let other = text.find("== Changed otherwise").unwrap_or_else(|| panic!("{text}"));
    assert!(text[other..].contains("changed counterexample (the one after)"), "{}", &text[other..]);
}
