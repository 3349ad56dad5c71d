//! The fixes `mcp-once explain` suggests, as someone filing an issue acts on them: every command
//! a Suggested fix section shows is run as written, and must answer that the property holds at
//! two calls, two retries each and one crash at least (a fix that holds only without a crash
//! fails the first time a server restarts); a fix that needs a proposal says so.

use mcp_once_testkit::{mcp_once, scratch, text, trace_in, Scratch};
use std::path::{Path, PathBuf};

fn temp(name: &str) -> Scratch {
    scratch!("explain-fix", name)
}

/// The at-most-once trace of `config` (check flags, without `--property`), written into `dir`.
fn trace(dir: &Path, config: &[&str]) -> PathBuf {
    let out =
        mcp_once!().arg("check").args(config).args(["--property", "at-most-once", "--out"]).arg(dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "the trace's cell is violated (exit 1): {}", text(&out.stderr));
    trace_in(dir, "at-most-once")
}

/// The Suggested fix section of `explain TRACE --for WHO`.
fn suggested_fix(trace: &Path, who: &str) -> String {
    let out = mcp_once!().arg("explain").arg(trace).args(["--for", who]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "explain: {}", text(&out.stderr));
    let report = text(&out.stdout);
    let start = report.find("### Suggested fix").expect("a Suggested fix section");
    let end = report[start..].find("### Reproduce").map_or(report.len(), |e| start + e);
    report[start..end].to_string()
}

/// The `mcp-once check …` commands a Suggested fix section shows, as argument lists.
fn shown_commands(section: &str) -> Vec<Vec<String>> {
    section
        .split("Shown by `mcp-once ")
        .skip(1)
        .map(|rest| rest.split('`').next().unwrap().split_whitespace().map(str::to_string).collect())
        .collect()
}

/// The value after `flag` in `args`.
fn flag<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args.iter().position(|a| a == flag).unwrap_or_else(|| panic!("{flag} in {args:?}"));
    &args[at + 1]
}

/// Every fix in `section` is checked at two calls, two retries and one crash at least, and
/// holds when its command is run as written; returns the commands.
fn every_fix_holds_with_a_crash(section: &str) -> Vec<Vec<String>> {
    let commands = shown_commands(section);
    for args in &commands {
        for (name, least) in [("--calls", 2), ("--retries", 2), ("--crashes", 1)] {
            let n: u8 = flag(args, name).parse().unwrap();
            assert!(n >= least, "a fix checked at {name} {n}, under {least}: {args:?}\n{section}");
        }
        let out = mcp_once!().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "the fix's own command says it holds: {args:?}\n{}", text(&out.stdout));
        assert!(text(&out.stdout).contains("holds"), "{}", text(&out.stdout));
    }
    commands
}

#[test]
fn a_server_fix_for_a_trace_without_a_crash_survives_one() {
    let dir = temp("server");
    let config = ["--profile", "sep-3182", "--transport", "http", "--client", "retry-any", "--server", "plain"];
    let crashless = [&config[..], &["--key", "none", "--calls", "1", "--retries", "1", "--crashes", "0"]].concat();
    let section = suggested_fix(&trace(dir.path(), &crashless), "server");
    let commands = every_fix_holds_with_a_crash(&section);
    assert!(!commands.is_empty(), "SEP-3182 has a server fix that survives a crash (a durable key):\n{section}");
    for args in &commands {
        let server = flag(args, "--server");
        assert!(
            !["key-volatile", "key-after-effect"].contains(&server),
            "a key store a crash loses is no fix: {args:?}\n{section}"
        );
        if flag(args, "--profile") == "sep-3182" {
            assert!(section.contains("This needs `sep-3182`"), "a fix under an unmerged proposal says so:\n{section}");
        }
    }
    assert!(section.contains("at 2 calls, 2 retries each and 1 crash"), "the report names its bounds:\n{section}");
}

#[test]
fn a_client_fix_for_a_trace_without_a_crash_survives_one() {
    let dir = temp("client");
    let config = ["--profile", "mcp-2026-07-28", "--transport", "stdio", "--client", "retry-on-timeout"];
    let crashless =
        [&config[..], &["--server", "plain", "--key", "none", "--calls", "1", "--retries", "1", "--crashes", "0"]]
            .concat();
    let section = suggested_fix(&trace(dir.path(), &crashless), "client");
    let commands = every_fix_holds_with_a_crash(&section);
    assert!(
        commands.iter().any(|args| flag(args, "--client") == "no-retry" && flag(args, "--profile") == "mcp-2026-07-28"),
        "not retrying is a client fix within the revision:\n{section}"
    );
    assert!(
        commands.iter().all(|args| flag(args, "--client") != "retry-on-disconnect"),
        "a retry after a lost connection runs the call again after a crash:\n{section}"
    );
}

#[test]
fn a_trace_at_larger_bounds_has_its_fixes_checked_at_its_own() {
    let dir = temp("larger");
    let config = ["--profile", "sep-3182", "--transport", "stdio", "--client", "retry-on-timeout", "--server", "plain"];
    let larger = [&config[..], &["--key", "none", "--calls", "1", "--retries", "3", "--crashes", "2"]].concat();
    let section = suggested_fix(&trace(dir.path(), &larger), "spec");
    let commands = every_fix_holds_with_a_crash(&section);
    assert!(!commands.is_empty(), "a durable key record holds at these bounds too:\n{section}");
    for args in commands {
        assert_eq!(flag(&args, "--retries"), "3", "{args:?}");
        assert_eq!(flag(&args, "--crashes"), "2", "{args:?}");
    }
    assert!(section.contains("at 2 calls, 3 retries each and 2 crashes"), "{section}");
}
