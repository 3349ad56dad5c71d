//! Every `mcp-once` command example in README.md, run as written: the fenced `sh` blocks' lines
//! and the inline `mcp-once SUBCOMMAND ...` spans of the prose, in the README's order, in one
//! scratch folder (so a command that writes traces is followed by the ones that read them), with
//! the built binary first on PATH and the repository's `specs/` and `conformance/` linked in.
//! Each exit code is the one the README documents (0, or 1 for a violation found, a replay
//! confirmed or a diff that changes cells); an example that serves until stopped is started,
//! waited on until it says it serves, and stopped. None is skipped.

#[path = "common/readme_examples.rs"]
mod readme_examples;

use mcp_once_testkit::{scratch, text};
use readme_examples::examples;
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
    let all = examples(&readme);
    assert!(all.len() >= 20, "{} examples found: {all:#?}", all.len());
    for (start, _) in SERVES {
        assert!(all.iter().any(|c| c.starts_with(start)), "stale entry: no README example starts `{start}`");
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
    let mut ran = 0;
    for command in &all {
        if let Some((_, ready)) = SERVES.iter().find(|(start, _)| command.starts_with(start)) {
            serve_until_ready(command, ready, &dir, &path, &home);
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
    }
    assert_eq!(ran, all.len(), "every example found ran, none skipped");
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
