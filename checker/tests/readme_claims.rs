//! The README's claims about `check`'s counterexamples in its prose, checked against what
//! `check` finds: the prose right after an inline `` `check ...` `` span (a command of the
//! findings, not an example: the examples' figures are `readme.rs`'s, from their own runs) that
//! gives a length ("8 steps", "a 9-step counterexample") is that command's shortest
//! counterexample of the property it names (at-most-once if none); one that says "no fault" has
//! no broken stream, timeout or crash in it.

use mcp_once_testkit::{mcp_once, text};
use std::path::Path;

/// One claim: the `check` arguments, the length it gives, and whether it says "no fault".
#[derive(Clone, Debug)]
struct Claim {
    args: Vec<String>,
    steps: usize,
    no_fault: bool,
}

/// The first "N steps" or "N-step" in `words`, if any.
fn length(words: &str) -> Option<usize> {
    let tokens: Vec<&str> = words.split(|c: char| c.is_whitespace() || "(),;:".contains(c)).collect();
    tokens.iter().enumerate().find_map(|(i, t)| {
        if let Some(n) = t.strip_suffix("-step") {
            return n.parse().ok();
        }
        (tokens.get(i + 1) == Some(&"steps")).then(|| t.parse().ok()).flatten()
    })
}

/// The `check` arguments of a command line (`mcp-once check ...` or `check ...`).
fn check_args(command: &str) -> Option<Vec<String>> {
    let rest = command.trim().strip_prefix("mcp-once ").unwrap_or(command.trim());
    let rest = rest.strip_prefix("check ")?;
    (!rest.contains("--trace")).then(|| rest.split_whitespace().map(String::from).collect())
}

/// The prose `check` spans that name one configuration (a `--server`) and give no length, each
/// with what the README says of it instead: the test fails on any other such span (a length it
/// could not read), and on an entry no span matches.
const NO_LENGTH: &[(&str, &str)] = &[
    (
        "--profile outcome-query --transport http --client retry-any --key per-call --server validates-task-id",
        "the README says at-most-once and exactly-once hold there, and gives the recording store's length",
    ),
    (
        "--profile mcp-2025-11-25 --transport http --client retry-on-disconnect --server plain --crashes 0 --resumption used --property at-most-once",
        "the README says it holds, and gives its variants' lengths in words (model/tests/resumption.rs checks all three)",
    ),
    (
        "--profile sep-3182 --transport http --client retry-any --key per-call --server key-durable --tasks augmented --calls 1 --retries 1 --crashes 1",
        "the README says at-most-once holds there (model/tests/tasks.rs checks it, with and without the crash)",
    ),
];

/// The README's prose, outside its fenced blocks, one line.
fn prose_words(readme: &str) -> String {
    let mut words = String::new();
    let mut inside = false;
    for line in readme.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
            continue;
        }
        if !inside {
            words.push_str(line.trim());
            words.push(' ');
        }
    }
    words
}

/// The `check` arguments of each inline `check ...` span of the prose.
fn prose_spans(readme: &str) -> Vec<Vec<String>> {
    prose_words(readme).split('`').skip(1).step_by(2).filter_map(check_args).collect()
}

/// The claims of the prose: an inline `check ...` span followed, in the same sentence, by a
/// length; "no fault" in the sentence before it.
fn prose(readme: &str) -> Vec<Claim> {
    let words = prose_words(readme);
    let spans: Vec<&str> = words.split('`').collect();
    let mut out = Vec::new();
    for i in (1..spans.len()).step_by(2) {
        let Some(args) = check_args(spans[i]) else { continue };
        let after = spans.get(i + 1).copied().unwrap_or("");
        let sentence = after.split(". ").next().unwrap_or("");
        let near: String = after.chars().take(12).collect();
        if !near.contains("step") && !near.trim_start().starts_with('(') && !near.trim_start().starts_with(':') {
            continue;
        }
        let Some(steps) = length(sentence) else { continue };
        let before = spans[i - 1];
        let start = before.rfind(". ").map_or(0, |at| at + 2);
        out.push(Claim { args, steps, no_fault: before[start..].contains("no fault") });
    }
    out
}

#[test]
fn every_length_the_readme_gives_is_the_one_check_finds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let claims: Vec<Claim> = prose(&readme);
    // Every span naming one configuration is a claim, or listed with what it says instead.
    let single: Vec<String> = prose_spans(&readme)
        .into_iter()
        .map(|args| args.join(" "))
        .filter(|a| a.split(' ').any(|w| w == "--server"))
        .collect();
    for (span, why) in NO_LENGTH {
        assert!(single.iter().any(|a| a == span), "stale entry of NO_LENGTH ({why}): no prose span `check {span}`");
    }
    let unread: Vec<&String> = single
        .iter()
        .filter(|a| !claims.iter().any(|c| &c.args.join(" ") == *a) && !NO_LENGTH.iter().any(|(s, _)| s == a))
        .collect();
    assert!(unread.is_empty(), "prose check spans whose length was not read (or list them in NO_LENGTH): {unread:#?}");
    let mut wrong = Vec::new();
    for claim in &claims {
        let mut args = claim.args.clone();
        if !args.iter().any(|a| a == "--property") {
            args.extend(["--property".into(), "at-most-once".into()]);
        }
        let out = mcp_once!().current_dir(root).arg("check").args(&args).output().unwrap();
        let stdout = text(&out.stdout);
        // The property the claim is about: the one its command names.
        let property = args.iter().position(|a| a == "--property").map_or("at-most-once", |i| args[i + 1].as_str());
        let found = stdout
            .lines()
            .find(|l| l.starts_with(property) && l.contains("VIOLATED"))
            .and_then(|l| l.split("shortest counterexample: ").nth(1))
            .and_then(|l| l.split(' ').next())
            .and_then(|n| n.parse::<usize>().ok());
        let command = format!("check {}", args.join(" "));
        if found != Some(claim.steps) {
            wrong.push(format!("{command}: {} steps claimed, {found:?} found{}", claim.steps, text(&out.stderr)));
        }
        let faults: Vec<&str> = ["StreamBreak(", "ClientTimeout(", "ServerCrash", "SessionTerminated"]
            .into_iter()
            .filter(|f| stdout.contains(f))
            .collect();
        if claim.no_fault && !faults.is_empty() {
            wrong.push(format!("{command}: \"no fault\" claimed, the trace has {faults:?}"));
        }
    }
    assert!(wrong.is_empty(), "{} of {} claims do not hold:\n{}", wrong.len(), claims.len(), wrong.join("\n"));
}
