//! `--cancel` on the command line: the SEP-3182 cell with a key stored after
//! the effect holds when the handler ignores cancellation and is violated, with no crash, when
//! a cancellation (over 2026-07-28 HTTP, the broken stream) interrupts it between the two.

use mcp_once_testkit::{mcp_once, scratch, text, trace_in};

const CELL: &[&str] = &[
    "check",
    "--profile",
    "sep-3182",
    "--transport",
    "http",
    "--client",
    "retry-any",
    "--key",
    "per-call",
    "--server",
    "key-after-effect",
    "--crashes",
    "0",
    "--property",
    "at-most-once",
];

#[test]
fn key_after_effect_interrupted_is_violated_with_no_crash_and_explained() {
    let dir = scratch!("cancel_cli", "interrupts");
    let out = mcp_once!().args(CELL).args(["--cancel", "interrupts", "--out"]).arg(dir.path()).output().unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("--server key-after-effect --cancel interrupts --calls 1"), "{stdout}");
    assert!(stdout.contains("shortest counterexample: 8 steps, 2 effect(s) for one call"), "{stdout}");
    assert!(stdout.contains("interrupts the handler between its effect and its idempotency record"), "{stdout}");
    assert!(stdout.contains("\"Stop processing the cancelled request\""), "{stdout}");
    assert!(!stdout.contains("ServerCrash"), "{stdout}");
    assert!(!stdout.contains("does not cover: a server whose handler"), "{stdout}");
    // The trace file carries the axis, checks again, and its report names the pair.
    let trace = trace_in(dir.path(), "at-most-once");
    let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(doc["#meta"]["config"]["cancel"], "interrupts");
    let again = mcp_once!().arg("check").arg("--trace").arg(&trace).output().unwrap();
    assert_eq!(again.status.code(), Some(0), "{}{}", text(&again.stdout), text(&again.stderr));
    let explained = mcp_once!().arg("explain").arg(&trace).output().unwrap();
    let report = text(&explained.stdout);
    assert_eq!(explained.status.code(), Some(0), "{report}{}", text(&explained.stderr));
    assert!(report.contains("--cancel interrupts"), "{report}");
}

#[test]
fn key_after_effect_that_ignores_cancellation_holds_and_says_what_it_does_not_cover() {
    for extra in [&[][..], &["--cancel", "ignores"][..]] {
        let out = mcp_once!().args(CELL).args(extra).output().unwrap();
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
        let first = stdout.lines().next().unwrap_or("");
        assert!(!first.contains("--cancel"), "an override equal to the preset is the preset cell: {first}");
        assert!(stdout.lines().any(|l| l.starts_with("at-most-once") && l.contains("holds")), "{stdout}");
        assert!(
            stdout.contains("does not cover: a server whose handler its cancellation interrupts")
                && stdout.contains(
                    "key-after-effect (key records, durable, written after the effect; cancellation: ignores)"
                ),
            "{stdout}"
        );
        // Tasks are in both revisions: a verdict on a plain tools/call says it leaves them out, and
        // which flag checks them.
        assert!(
            stdout.contains("does not cover: a task-augmented tools/call (the 2026-07-28 tasks extension, SEP-2663)")
                && stdout.contains("leaves the client no task id to poll, and a retry creates a second task")
                && stdout.contains("`--tasks augmented` checks it"),
            "{stdout}"
        );
    }
}

#[test]
fn a_bad_cancel_value_is_one_line_and_exit_2() {
    for args in [&["check", "--cancel", "sometimes"][..], &["matrix", "--cancel", "ignores,never"][..]] {
        let out = mcp_once!().args(args).output().unwrap();
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("expected one of: ignores, before-effect, interrupts"), "{stderr}");
    }
}

#[test]
fn matrix_with_a_cancel_list_checks_each_cell_under_each() {
    let out = mcp_once!()
        .args(["matrix", "--profile", "mcp-2025-11-25", "--cancel", "ignores,interrupts", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = doc["cells"].as_array().unwrap();
    let plain = |cancel: Option<&str>| {
        cells.iter().filter(|c| c["config"]["server"] == "plain" && c["config"]["cancel"].as_str() == cancel).count()
    };
    // Every plain cell twice: under its preset (ignores) and with an interrupting override.
    assert!(plain(None) > 0 && plain(None) == plain(Some("interrupts")), "{}", text(&out.stdout));
}
