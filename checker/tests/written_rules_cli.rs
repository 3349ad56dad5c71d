//! A spec author's own rules, as they would run them: a proposal profile in a folder of their
//! own that says servers MUST deduplicate `tools/call` by request id, or that clients MUST NOT
//! retry after a timeout unless the tool is annotated idempotent. `check` marks the cell that
//! breaks the rule, `--annotation` changes the verdict the way the rule says, and `profiles`
//! and `check` flag an inherited citation the proposal's own value contradicts.

use mcp_once_testkit::{mcp_once, scratch, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A proposal on 2026-07-28 in `dir` setting each `(knob, value, quote)`; its path.
fn proposal(dir: &Path, name: &str, knobs: &[(&str, &str, &str)]) -> PathBuf {
    let mut text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"mcp-2026-07-28\"\n"
    );
    for (knob, value, quote) in knobs {
        text.push_str(&format!(
            "\n[knobs.{knob}]\nvalue = \"{value}\"\n[knobs.{knob}.cite]\nrevision = \"X\"\npath = \"x.md\"\nsection = \"S\"\nquote = \"{quote}\"\n"
        ));
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `check --profile FILE` with `flags`: exit code, stdout, stderr.
fn check(profile: &Path, flags: &str) -> (Option<i32>, String, String) {
    let out = mcp_once!().arg("check").arg("--profile").arg(profile).args(flags.split(' ')).output().unwrap();
    (out.status.code(), text(&out.stdout), text(&out.stderr))
}

#[test]
fn check_marks_a_server_that_does_not_dedup_by_id_where_the_profile_says_it_must() {
    let dir = scratch!("written-rules", "dedup");
    let rule = ("request_id_dedup", "must-session", "Servers MUST deduplicate tools/call by request ID.");
    let same = ("retry_request_id", "same", "A retry keeps the id of the request it retries.");
    let p = proposal(&dir, "dedup", &[rule, same]);
    let (code, out, err) = check(&p, "--server plain --property at-most-once");
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(out.contains("this server breaks a MUST of the profile (request_id_dedup)"), "{out}");
    assert!(out.contains("breaks the MUST of request_id_dedup: the server runs id 1 again"), "{out}");
    assert!(out.contains("a conformant server (--server dedup-by-id)"), "{out}");
    let (_, json, _) = check(&p, "--server plain --property at-most-once --format json");
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json["breaks"], serde_json::json!(["request_id_dedup"]), "{json}");
    let (_, md, _) = check(&p, "--server plain --property at-most-once --format markdown");
    assert!(md.contains("**This server breaks a MUST of the profile** (`request_id_dedup`)"), "{md}");
    // The server that keeps the rule is not marked.
    let (_, out, _) = check(&p, "--server dedup-by-id --property at-most-once");
    assert!(!out.contains("breaks a MUST"), "{out}");
}

#[test]
fn the_annotation_decides_whether_a_client_may_retry_after_a_timeout() {
    let dir = scratch!("written-rules", "annotation");
    let rule = ("retry_after_timeout", "must-not-unless-idempotent", "Clients MUST NOT retry unless idempotent.");
    let p = proposal(&dir, "annotated", &[rule]);
    let flags = "--server plain --client retry-on-timeout --property at-most-once";
    let (code, out, err) = check(&p, flags);
    assert_eq!(code, Some(0), "not annotated: no retry after the timeout, nothing runs twice: {out}{err}");
    let (code, out, err) = check(&p, &format!("{flags} --annotation idempotent"));
    assert_eq!(code, Some(1), "annotated idempotent: the retry runs the tool again: {out}{err}");
    assert!(out.contains("--annotation idempotent"), "{out}");
    assert!(out.contains("retry_after_timeout = must-not-unless-idempotent"), "the retry cites the rule: {out}");
    // A framework that re-runs its step reads no annotation: it breaks the MUST NOT.
    let (_, out, _) = check(&p, "--server plain --client framework-retry --property at-most-once");
    assert!(out.contains("this client breaks a MUST NOT of the profile (retry_after_timeout)"), "{out}");
    // A bad value is one line naming the flag, exit 2.
    let (code, _, err) = check(&p, "--annotation maybe");
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--annotation"), "{err}");
}

#[test]
fn profiles_and_check_flag_an_inherited_citation_the_proposal_contradicts() {
    let dir = scratch!("written-rules", "stale");
    let same = ("retry_request_id", "same", "A retry keeps the id of the request it retries.");
    let p = proposal(&dir, "same-id", &[same]);
    let out = mcp_once!().arg("profiles").arg(&p).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stdout = text(&out.stdout);
    let flagged = "warning: the citation of `reissue_lost_request` (set by profile mcp-2026-07-28) contradicts `retry_request_id = \"same\"` (set by profile same-id)";
    assert!(stdout.contains(flagged), "{stdout}");
    let (_, _, err) = check(&p, "--server plain --property at-most-once");
    assert!(err.contains("mcp-once: warning: profile same-id: the citation of `reissue_lost_request`"), "{err}");
    // The worked example overrides every clause it changes: nothing to flag.
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/proposals/id-dedup-and-annotated-retry.toml");
    let out = mcp_once!().args(["profiles", example]).output().unwrap();
    assert!(!text(&out.stdout).contains("warning"), "{}", text(&out.stdout));
}
