//! Every `mcp-once` command example in README.md, run as written: the fenced `sh` blocks' lines
//! and the inline `mcp-once SUBCOMMAND ...` spans of the prose, in the README's order, in one
//! scratch folder (so a command that writes traces is followed by the ones that read them), with
//! the built binary first on PATH and the repository's `specs/` and `conformance/` linked in.
//! Each exit code is the one the README documents (0, or 1 for a violation found, a replay
//! confirmed or a diff that changes cells); an example that serves until stopped is started,
//! waited on until it says it serves, and stopped. None is skipped. And each figure the README
//! gives about an example, in the comment above it or the clause around it (a shortest length,
//! "N of M" replays confirmed, a call's ledger lines, a variant's length or "holds"), is read
//! from the README and checked against that example's output; a figure there that no output
//! gives is listed in [`UNCHECKED`] with the reason, or the test fails naming it.

#[path = "common/readme_examples.rs"]
mod readme_examples;
#[path = "common/readme_figures.rs"]
mod readme_figures;

use mcp_once_testkit::{scratch, text};
use readme_examples::{examples, examples_with_statements, Example};
use readme_figures::{check_verdict, confirm_counts, confirm_effects, figures, property, with_flag, Figure};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_mcp-once");

/// Examples that serve until they are stopped, and the line each prints once it serves: the test
/// starts it as written, waits (bounded) for that line, then stops it.
const SERVES: &[(&str, &str)] = &[
    ("mcp-once explore ", "on http://127.0.0.1:3000/"),
    ("mcp-once fixture --sdk rust --transport http ", "listening http://127.0.0.1:8931/mcp"),
    ("mcp-once serve --transport http ", "listening http://127.0.0.1:8932/mcp"),
];

/// How long a serving example may take to say it serves.
const SERVE_BOUND: Duration = Duration::from_secs(60);

/// The exit code each example documents, by the start of its command: 1 when a property is
/// violated (check, matrix, merge), a diff changes cells, a replay is confirmed; 0 otherwise
/// (confirm: 0 when every counterexample is confirmed).
const EXIT: &[(&str, i32)] = &[
    ("mcp-once check --trace ", 0),
    ("mcp-once check ", 1),
    ("mcp-once matrix ", 1),
    ("mcp-once merge ", 1),
    ("mcp-once diff ", 1),
    ("mcp-once replay ", 1),
    ("mcp-once profiles ", 0),
    ("mcp-once explain ", 0),
    ("mcp-once bench ", 0),
    ("mcp-once fixture ", 0),
    ("mcp-once fixtures ", 0),
    ("mcp-once probe ", 1),
    ("mcp-once probe-client ", 1),
    ("mcp-once confirm ", 0),
];

#[test]
fn every_readme_example_runs_as_written_with_its_documented_exit_code() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(repo.join("README.md")).unwrap();
    let all = examples_with_statements(&readme);
    assert!(all.len() >= 20, "{} examples found: {all:#?}", all.len());
    let flat = flat(&readme);
    for (phrase, why) in UNCHECKED {
        assert!(flat.contains(phrase), "stale entry of UNCHECKED ({why}): the README no longer says `{phrase}`");
    }
    for (start, _) in SERVES {
        assert!(all.iter().any(|e| e.command.starts_with(start)), "stale entry: no README example starts `{start}`");
    }
    let dir = scratch!("readme", "examples");
    for name in ["specs", "conformance"] {
        std::os::unix::fs::symlink(repo.join(name).canonicalize().unwrap(), dir.join(name)).unwrap();
    }
    // A home of its own, so `fixtures install` writes its data folder into the scratch folder.
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let bin_dir = Path::new(BIN).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let (mut ran, mut tied, mut wrong) = (0, 0, Vec::new());
    for example in &all {
        let command = &example.command;
        if let Some((_, ready)) = SERVES.iter().find(|(start, _)| command.starts_with(start)) {
            serve_until_ready(command, ready, &dir, &path, &home);
            for figure in figures(&without_unchecked(&example.statement)) {
                wrong
                    .push(format!("`{command}` serves: the README says {figure:?} of it, which the test cannot check"));
            }
            ran += 1;
            continue;
        }
        let want = EXIT
            .iter()
            .find(|(start, _)| command.starts_with(start))
            .unwrap_or_else(|| panic!("no documented exit code for `{command}`: add it to EXIT"))
            .1;
        let started = std::time::Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&*dir)
            .env("PATH", &path)
            .env("HOME", &home)
            .env_remove("XDG_DATA_HOME")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        eprintln!("ran in {:.1} s: {command}", started.elapsed().as_secs_f64());
        assert_eq!(
            out.status.code(),
            Some(want),
            "`{command}` exits {want} as documented:\n{}{}",
            text(&out.stdout),
            text(&out.stderr)
        );
        ran += 1;
        let stdout = text(&out.stdout);
        for figure in figures(&without_unchecked(&example.statement)) {
            tied += 1;
            match check_figure(example, &figure, &stdout, &dir, &path) {
                Ok(()) => eprintln!("  as the README says, {figure:?}"),
                Err(e) => wrong.push(format!("`{command}`: the README says {figure:?}, {e}")),
            }
        }
    }
    assert_eq!(ran, all.len(), "every example found ran, none skipped");
    eprintln!("{tied} figures the README gives about its examples checked");
    assert!(wrong.is_empty(), "{} of {tied} figures do not hold:\n{}", wrong.len(), wrong.join("\n"));
}

/// The README's figures about an example that its output cannot show, each with the reason;
/// the test fails if one is no longer in the README (whitespace folded).
const UNCHECKED: &[(&str, &str)] = &[
    (
        "the same 8 with a key on every continuation",
        "that profile (idempotency_continuations = included) is not shipped; model/tests/minimality.rs builds it and checks its cells",
    ),
    (
        "on the whole profile over HTTP, 172 of 172",
        "a whole-profile replay: scripts/confirm's, recorded in CONFIRMATION.md, not in the test command",
    ),
    (
        "validates-task-id --key per-call`: 20 of 20",
        "a prose span, not an example; the validating receiver's replays are conformance/tests/replay_validating.rs's",
    ),
    (
        "1,294 replays, 1,219 confirmed and 75 worst cases of one effect that ran, none missed; earlier, smaller matrices: 990 of 990",
        "the whole default matrix replayed by scripts/confirm, recorded in CONFIRMATION.md, not in the test command",
    ),
    (
        "| client@version (script) | transport | policy found |",
        "the clients table: measured by scripts/probe-clients (the frameworks are not installed by the test command); the SDK clients' rows by checker/tests/probe_client.rs",
    ),
];

/// The README with its whitespace folded to single spaces.
fn flat(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `statement` without the phrases of [`UNCHECKED`].
fn without_unchecked(statement: &str) -> String {
    UNCHECKED.iter().fold(flat(statement), |s, (phrase, _)| s.replace(phrase, ""))
}

/// Check one `figure` the README gives about `example` against its output (`stdout`), running
/// a variant of it when the figure names one.
fn check_figure(example: &Example, figure: &Figure, stdout: &str, dir: &Path, path: &str) -> Result<(), String> {
    let words: Vec<String> = example.command.split_whitespace().map(String::from).collect();
    let subcommand = words.get(1).map(String::as_str).unwrap_or("");
    let args = &words[2.min(words.len())..];
    match (subcommand, figure) {
        ("check", Figure::Steps(n)) => {
            let p = property(args);
            let found = check_verdict(stdout, &p)?;
            if found != Some(*n) {
                return Err(format!("{p}: {found:?} steps found"));
            }
            let faults: Vec<&str> = ["StreamBreak(", "ClientTimeout(", "ServerCrash", "SessionTerminated"]
                .into_iter()
                .filter(|f| stdout.contains(f))
                .collect();
            if example.statement.contains("no fault") && !faults.is_empty() {
                return Err(format!("\"no fault\" said, the trace has {faults:?}"));
            }
            Ok(())
        }
        ("check", Figure::StepsWith(n, flag, value)) => {
            let (p, found) = variant(args, flag, value, dir, path)?;
            (found == Some(*n)).then_some(()).ok_or(format!("with {flag} {value}, {p}: {found:?} steps found"))
        }
        ("check", Figure::HoldsWith(flag, value)) => {
            let (p, found) = variant(args, flag, value, dir, path)?;
            found.is_none().then_some(()).ok_or(format!("with {flag} {value}, {p} violated in {found:?} steps"))
        }
        ("confirm", Figure::Confirmed(n, m)) => {
            let found = confirm_counts(stdout)?;
            (found == (*n, *m)).then_some(()).ok_or(format!("{} of {} confirmed", found.0, found.1))
        }
        ("confirm", Figure::Lines(n)) => {
            let effects = confirm_effects(stdout);
            (!effects.is_empty() && effects.iter().all(|e| e == n))
                .then_some(())
                .ok_or(format!("the at-most-once replays took effect {effects:?} times"))
        }
        _ => Err("which this example's output does not give (check it, or list it in UNCHECKED with why)".into()),
    }
}

/// Run `mcp-once check` with `args`, `flag` set to `value`: the property it is about and the
/// length of its shortest counterexample (`None`: it holds).
fn variant(
    args: &[String],
    flag: &str,
    value: &str,
    dir: &Path,
    path: &str,
) -> Result<(String, Option<usize>), String> {
    let args = with_flag(args, flag, value);
    let out = Command::new(BIN).arg("check").args(&args).current_dir(dir).env("PATH", path).output().unwrap();
    let p = property(&args);
    Ok((p.clone(), check_verdict(&text(&out.stdout), &p)?))
}

/// Start the serving example `command` as written (its own process group), wait until its
/// output has the `ready` line, then stop the group and reap it; a panic if the line never comes
/// within [`SERVE_BOUND`] or the command exits first.
fn serve_until_ready(command: &str, ready: &str, dir: &Path, path: &str, home: &Path) {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("exec {command} 2>&1"))
        .current_dir(dir)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = std::time::Instant::now() + SERVE_BOUND;
    let mut seen = Vec::new();
    let served = loop {
        match rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
            Ok(line) if line.contains(ready) => break true,
            Ok(line) => seen.push(line),
            Err(_) => break false,
        }
    };
    // SIGTERM to the whole group (sh has exec'd the command), then reap.
    let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGTERM);
    let status = child.wait().unwrap();
    assert!(served, "`{command}` did not print `{ready}` within {SERVE_BOUND:?} (exit {status}):\n{}", seen.join("\n"));
    eprintln!("served, then stopped ({status}): {command}");
}

#[test]
fn the_extraction_joins_continuations_and_finds_inline_commands() {
    let md = "Run `mcp-once check --profile x\n--calls 1` or `mcp-once` alone.\n\n```sh\n# c\nmcp-once diff a \\\n    b   # why\nnode x\n```\n";
    assert_eq!(examples(md), ["mcp-once check --profile x --calls 1", "mcp-once diff a b   # why"]);
}

#[test]
fn the_figures_are_read_from_the_words_around_each_example() {
    let md = "```sh\n# Fails (no: 9-step counterexample; 8 with --client x; --store shared holds):\nmcp-once check --a b\nmcp-once check --c d  # 3 steps\n```\nConfirmed, the ledger ends with 2 lines (`mcp-once confirm --e f`: 4 of 5; on the whole, 6 of 6).\n";
    let all = examples_with_statements(md);
    let statements: Vec<&str> = all.iter().map(|e| e.statement.as_str()).collect();
    assert_eq!(
        statements,
        [
            "Fails (no: 9-step counterexample; 8 with --client x; --store shared holds):",
            "3 steps",
            "the ledger ends with 2 lines ( : 4 of 5"
        ]
    );
    use Figure::*;
    assert_eq!(
        figures(&all[0].statement),
        [Steps(9), StepsWith(8, "--client".into(), "x".into()), HoldsWith("--store".into(), "shared".into())]
    );
    assert_eq!(figures(&all[2].statement), [Lines(2), Confirmed(4, 5)]);
    assert_eq!(figures("the same 8 with a key"), [Other("the same 8 with".into())]);
}

#[test]
fn every_sh_observer_in_the_readme_reads_a_number_on_a_fresh_server() {
    // A fresh server has written nothing yet: the observer must read 0 there, not fail.
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    // Every example, not the syntax's placeholder (`sh:"SCRIPT"`).
    let placeholder = |s: &&str| s.chars().all(|c| c.is_ascii_uppercase());
    let scripts: Vec<&str> = readme
        .split("`sh:\"")
        .skip(1)
        .map(|rest| rest.split("\"`").next().unwrap())
        .filter(|s| !placeholder(s))
        .collect();
    assert!(!scripts.is_empty(), "the README shows an sh: observer");
    let dir = scratch!("readme", "fresh-observer");
    for script in scripts {
        let out = Command::new("sh").args(["-c", script]).current_dir(dir.path()).output().unwrap();
        assert!(out.status.success(), "`{script}` fails on a fresh server: {}", text(&out.stderr));
        let reading = text(&out.stdout);
        assert!(reading.trim().parse::<f64>().is_ok(), "`{script}` prints {reading:?}, not a number");
    }
}
