//! The README's claims about `check`'s counterexamples, checked against what `check` finds: a
//! comment above a fenced `mcp-once check` example, or the prose right after an inline
//! `` `check ...` `` span, that gives a length ("8 steps", "a 9-step counterexample") is that
//! command's shortest counterexample of the property it names (at-most-once if none); one that says "no fault" has no broken
//! stream, timeout or crash in it.

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

/// The claims of the fenced `sh` blocks: a command with the comment lines just above it.
fn fenced(readme: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    let (mut inside, mut comment, mut pending) = (false, String::new(), String::new());
    for line in readme.lines() {
        let line = line.trim_start();
        if line.starts_with("```") {
            inside = !inside && line.trim() == "```sh";
            comment.clear();
            continue;
        }
        if !inside {
            continue;
        }
        if let Some(c) = line.strip_prefix('#') {
            comment.push_str(c);
            comment.push(' ');
            continue;
        }
        let joined = format!("{pending}{line}");
        if let Some(head) = joined.strip_suffix('\\') {
            pending = format!("{} ", head.trim_end());
            continue;
        }
        pending.clear();
        if let (Some(args), Some(steps)) = (check_args(&joined), length(&comment)) {
            out.push(Claim { args, steps, no_fault: comment.contains("no fault") });
        }
        comment.clear();
    }
    out
}

/// The claims of the prose: an inline `check ...` span followed, in the same sentence, by a
/// length; "no fault" in the sentence before it.
fn prose(readme: &str) -> Vec<Claim> {
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
    let claims: Vec<Claim> = [fenced(&readme), prose(&readme)].concat();
    assert!(claims.len() >= 8, "{claims:?}");
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
