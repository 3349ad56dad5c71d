//! The Reproduce block of every report `explain` writes for the README's examples runs as
//! written from a clean checkout and gives the report's verdict again. The README's `check
//! --out`, `replay` and `explain` examples run first, as written, in a scratch folder with the
//! repository's `specs/` and `conformance/` linked in; then each report's Reproduce block runs
//! in a fresh copy of the repository's tracked files (the built binary first on `PATH`, the
//! fixtures' pinned packages linked from this checkout, where `install.sh` finds them installed
//! and skips them), and the report it makes must have the same title, the same verdict and
//! counts, and the same Reproduce block.

#[path = "common/readme_examples.rs"]
mod readme_examples;

use mcp_once_testkit::{scratch, text};
use readme_examples::examples;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").canonicalize().unwrap()
}

/// `PATH` with the built binary first.
fn path_with_bin() -> String {
    let bin_dir = Path::new(BIN).parent().unwrap();
    format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default())
}

/// Run `script` with `sh` in `dir`; its exit code and output.
fn sh(script: &str, dir: &Path) -> (Option<i32>, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path_with_bin())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out.status.code(), format!("{}{}", text(&out.stdout), text(&out.stderr)))
}

/// A copy of the repository's tracked files (as they are in the working tree) in `dir`, with
/// the fixtures' installed packages linked in.
fn clean_checkout(dir: &Path) {
    let repo = repo();
    let listed = Command::new("git").args(["ls-files", "-z"]).current_dir(&repo).output().unwrap();
    assert!(listed.status.success(), "git ls-files: {}", text(&listed.stderr));
    let mut copied = 0;
    for name in listed.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let from = repo.join(name);
        if !from.is_file() {
            continue; // deleted in the working tree
        }
        let to = dir.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap_or_else(|e| panic!("copy {name}: {e}"));
        copied += 1;
    }
    assert!(copied > 100, "{copied} files copied");
    for installed in [
        "conformance/fixtures/typescript/node_modules",
        "conformance/fixtures/python/.venv",
        "conformance/fixtures/langgraph/.venv",
    ] {
        let from = repo.join(installed);
        if from.exists() {
            std::os::unix::fs::symlink(from.canonicalize().unwrap(), dir.join(installed)).unwrap();
        }
    }
}

/// The report's Reproduce section (up to the details that follow it) and the `sh` block in it.
fn reproduce_section(report: &str) -> (&str, &str) {
    let from = report.find("### Reproduce").unwrap_or_else(|| panic!("no Reproduce section:\n{report}"));
    let section = &report[from..];
    let section = &section[..section.find("<details>").unwrap_or(section.len())];
    let block = section.split("```sh\n").nth(1).and_then(|b| b.split("```").next());
    (section, block.unwrap_or_else(|| panic!("no sh block:\n{section}")))
}

/// What a report concludes: its title and the first line of Actual (the replay's verdict and
/// counts, or the model's run).
fn verdict(report: &str) -> (String, String) {
    let title = report.lines().next().unwrap_or_default().to_string();
    let actual = report.split("### Actual\n\n").nth(1).and_then(|a| a.lines().next()).unwrap_or_default();
    (title, actual.to_string())
}

#[test]
fn every_reproduce_block_of_the_readme_s_reports_runs_from_a_clean_checkout_to_the_same_verdict() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let wanted = |c: &&String| {
        (c.starts_with("mcp-once check ") && c.contains(" --out "))
            || c.starts_with("mcp-once replay ")
            || c.starts_with("mcp-once explain ")
    };
    let commands: Vec<String> = examples(&readme).iter().filter(wanted).cloned().collect();
    let dir = scratch!("reproduce", "readme");
    for name in ["specs", "conformance"] {
        std::os::unix::fs::symlink(repo().join(name), dir.join(name)).unwrap();
    }
    let mut reports = Vec::new();
    for command in &commands {
        let (code, out) = sh(command, &dir);
        assert!(matches!(code, Some(0 | 1)), "`{command}` exits {code:?}:\n{out}");
        if command.starts_with("mcp-once explain ") {
            let file = command.rsplit("> ").next().unwrap().split_whitespace().next().unwrap();
            reports.push((command.clone(), std::fs::read_to_string(dir.join(file)).unwrap()));
        }
    }
    assert!(reports.len() >= 3, "the README's explain examples: {commands:#?}");
    let blocks: Vec<&str> = reports.iter().map(|(_, r)| reproduce_section(r).1).collect();
    for (what, needle) in [("a stdio", "--stdio "), ("an HTTP", "--http "), ("an sh: observer's", "sh:")] {
        assert!(blocks.iter().any(|b| b.contains(needle)), "no Reproduce block of {what} replay: {blocks:#?}");
    }
    for (i, (command, report)) in reports.iter().enumerate() {
        let (section, block) = reproduce_section(report);
        assert!(!section.contains("<path>") && !block.contains("SPEC"), "nothing to substitute: {section}");
        let checkout = dir.join(format!("checkout-{i}"));
        clean_checkout(&checkout);
        let (code, out) = sh(block, &checkout);
        let again = std::fs::read_to_string(checkout.join("issue.md")).unwrap_or_else(|e| {
            panic!("`{command}`: the block wrote no issue.md ({e}); exit {code:?}:\n{block}\n{out}")
        });
        assert_eq!(code, Some(0), "`{command}`: the block's last step, explain, exits 0:\n{block}\n{out}");
        assert_eq!(verdict(&again), verdict(report), "`{command}`: the same verdict:\n{block}\n{out}");
        assert_eq!(reproduce_section(&again).0, section, "`{command}`: the same Reproduce section");
        eprintln!("reproduced `{command}`: {}", verdict(report).1);
    }
}
