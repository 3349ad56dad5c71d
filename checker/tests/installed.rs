//! `mcp-once` installed as Rust tools are installed, used from an empty folder with no checkout
//! anywhere near it: the binary copied alone into a `bin` folder (what `cargo install --root`
//! leaves), a fresh `HOME`, no `XDG_DATA_HOME`. Before `fixtures install` the commands that need
//! a script fixture fail naming that command; after it, the README's replay and confirm examples
//! give the README's verdicts on the TypeScript and Python fixtures it installed. Real npm and
//! pip installs (from their caches when warm), real servers; every command bounded.

use mcp_once_testkit::{scratch, text, trace_in, Scratch};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

/// An installed `mcp-once` and the empty folder it is used from.
struct Installed {
    root: Scratch,
    exe: PathBuf,
    work: PathBuf,
}

impl Installed {
    fn new(name: &str) -> Installed {
        let root = scratch!("installed", name);
        let bin = root.join("bin");
        let work = root.join("work");
        for dir in [&bin, &work, &root.join("home")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let exe = bin.join("mcp-once");
        std::fs::copy(env!("CARGO_BIN_EXE_mcp-once"), &exe).unwrap();
        Installed { root, exe, work }
    }

    /// The data folder the XDG default gives for this fresh home.
    fn data_dir(&self) -> PathBuf {
        self.root.join("home/.local/share/mcp-once/fixtures")
    }

    /// `mcp-once ARGS` from the empty folder, at most `bound`.
    fn run(&self, args: &[&str], bound: Duration) -> Output {
        let out = assert_cmd::Command::new(&self.exe)
            .args(args)
            .current_dir(&self.work)
            .env("HOME", self.root.join("home"))
            .env_remove("XDG_DATA_HOME")
            .timeout(bound)
            .output()
            .unwrap();
        assert!(out.status.code().is_some(), "mcp-once {args:?} ran past {bound:?}: {}", text(&out.stderr));
        out
    }
}

fn code(out: &Output) -> i32 {
    out.status.code().unwrap()
}

#[test]
fn from_an_empty_folder_install_the_fixtures_then_replay_and_confirm_as_the_readme_says() {
    let t = Installed::new("empty-folder");
    let data = t.data_dir();
    assert!(!t.work.join("conformance").exists());

    // Where the fixtures would be, and that they are not there yet.
    let path = t.run(&["fixtures", "path"], Duration::from_secs(10));
    assert_eq!(code(&path), 0, "{}", text(&path.stderr));
    assert_eq!(text(&path.stdout).trim(), data.display().to_string());
    assert!(
        text(&path.stderr).contains("python: not installed (run: mcp-once fixtures install)"),
        "{}",
        text(&path.stderr)
    );

    // Before the install: a one-line error naming the command to run, exit 2.
    let cell =
        ["--profile", "mcp-2025-11-25", "--transport", "stdio", "--client", "retry-on-timeout", "--server", "plain"];
    let mut early = vec!["confirm", "--sdk", "typescript", "--format", "json"];
    early.extend(cell);
    let before = t.run(&early, Duration::from_secs(120));
    assert_eq!(code(&before), 2, "{}{}", text(&before.stdout), text(&before.stderr));
    let err = text(&before.stderr);
    assert!(err.contains("mcp-once fixtures install") && err.contains(&data.display().to_string()), "{err}");
    let hint = t.run(&["fixture", "--sdk", "python", "--ledger", "l.jsonl"], Duration::from_secs(10));
    assert_eq!(code(&hint), 2);
    assert!(text(&hint.stderr).contains("after `mcp-once fixtures install`"), "{}", text(&hint.stderr));

    // The install, into the XDG data folder.
    let install = t.run(&["fixtures", "install"], Duration::from_secs(20 * 60));
    assert_eq!(code(&install), 0, "{}{}", text(&install.stdout), text(&install.stderr));
    assert!(data.join("typescript/node_modules/@modelcontextprotocol/sdk/package.json").is_file());
    assert!(data.join("python/.venv/bin/python").is_file());
    let path = t.run(&["fixtures", "path"], Duration::from_secs(10));
    assert!(!text(&path.stderr).contains("not installed"), "{}", text(&path.stderr));
    let hint = t.run(&["fixture", "--sdk", "python", "--ledger", "l.jsonl"], Duration::from_secs(10));
    assert!(text(&hint.stderr).contains(&format!("{}/python/server.py", data.display())), "{}", text(&hint.stderr));

    // The README's replay example, with the installed TypeScript fixture: confirmed (exit 1),
    // two effects for one logical call.
    let check = t.run(
        &[
            "check",
            "--profile",
            "mcp-2025-11-25",
            "--client",
            "retry-on-timeout",
            "--retries",
            "1",
            "--crashes",
            "0",
            "--out",
            "traces",
        ],
        Duration::from_secs(300),
    );
    assert_eq!(code(&check), 1, "{}", text(&check.stderr));
    let trace = trace_in(&t.work.join("traces"), "at-most-once");
    let server = format!("node {} --ledger l.jsonl", data.join("typescript/server.mjs").display());
    let replay = t.run(
        &[
            "replay",
            trace.to_str().unwrap(),
            "--stdio",
            &server,
            "--args",
            r#"{"amount":42}"#,
            "--observe",
            "ledger:l.jsonl",
            "--evidence",
            "out",
            "--format",
            "json",
        ],
        Duration::from_secs(300),
    );
    assert_eq!(code(&replay), 1, "{}{}", text(&replay.stdout), text(&replay.stderr));
    let v: Value = serde_json::from_slice(&replay.stdout).unwrap();
    assert_eq!(v["verdict"], "confirmed", "{v}");
    assert_eq!(std::fs::read_to_string(t.work.join("l.jsonl")).unwrap().lines().count(), 2);

    // The README's confirm example on the installed fixtures (one cell, both script SDKs):
    // every counterexample confirmed, exit 0.
    let mut args = vec!["confirm", "--sdk", "typescript", "--sdk", "python", "--format", "json", "--evidence", "ev"];
    args.extend(cell);
    let confirm = t.run(&args, Duration::from_secs(900));
    let v: Value = serde_json::from_slice(&confirm.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&confirm.stdout), text(&confirm.stderr)));
    assert_eq!(code(&confirm), 0, "{v}");
    let results = v["results"].as_array().unwrap();
    assert!(v["counterexamples"].as_u64().unwrap() >= 2, "{v}");
    for sdk in ["typescript", "python"] {
        assert!(results.iter().any(|r| r["sdk"].as_str().unwrap_or_default().starts_with(sdk)), "no {sdk} replay: {v}");
    }
    assert!(results.iter().all(|r| r["verdict"] == "confirmed" || r["verdict"] == "ran"), "{v}");
    assert!(!Path::new(&t.work).join("conformance").exists());
}
