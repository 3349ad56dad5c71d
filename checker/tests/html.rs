//! `--format html` on `matrix` and `confirm`, as a reader uses the page: the grid's verdicts
//! against the same run's JSON, then, in headless Chromium (Debian's, driven by the pinned
//! `playwright-core` that scripts/test installs in checker/tests/browser), a click on a
//! violated cell: its trace, hidden before, is shown, with as many steps drawn as the cell says
//! and the trace file holds, and for `confirm` each replay's verdict as its evidence records it,
//! every linked file there.

use mcp_once_testkit::{mcp_once, scratch, text};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `mcp-once ARGS` run in `dir`: stdout and the exit code.
fn run(dir: &Path, args: &[&str]) -> (String, i32) {
    let out = mcp_once!().current_dir(dir).args(args).timeout(Duration::from_secs(600)).output().unwrap();
    let code = out.status.code().unwrap_or_else(|| panic!("killed: {}", text(&out.stderr)));
    assert!(code == 0 || code == 1, "mcp-once {args:?}: exit {code}: {}", text(&out.stderr));
    (text(&out.stdout), code)
}

/// Every verdict link of the grid: anchor → its text (`✗ s/e`, or the worst case's count).
fn grid_links(html: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for td in html.split("<td class=\"violated\">").skip(1) {
        let Some(rest) = td.strip_prefix("<a href=\"#") else { continue };
        let (anchor, rest) = rest.split_once("\">").unwrap();
        let (label, _) = rest.split_once("</a>").unwrap();
        assert!(out.insert(anchor.to_string(), label.to_string()).is_none(), "{anchor} twice");
    }
    out
}

/// What a reader sees after clicking the link to `anchor` in `report` (click.mjs's JSON).
fn click(report: &Path, anchor: &str, shot: &Path) -> Value {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    assert!(
        dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run scripts/test (it runs npm ci in {})",
        dir.display()
    );
    let chromium = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    assert!(Path::new(&chromium).is_file(), "no Chromium at {chromium}: scripts/test installs Debian's chromium");
    let out = assert_cmd::Command::new("node")
        .arg(dir.join("click.mjs"))
        .arg(report)
        .arg(anchor)
        .arg(shot)
        .timeout(Duration::from_secs(180))
        .output()
        .unwrap();
    assert!(out.status.success(), "click.mjs on {anchor}: {}{}", text(&out.stdout), text(&out.stderr));
    serde_json::from_str(text(&out.stdout).trim()).unwrap()
}

/// A `file://` link as a path.
fn file_of(href: &Value) -> PathBuf {
    PathBuf::from(href.as_str().unwrap().strip_prefix("file://").unwrap().replace("%20", " "))
}

/// The steps of an ITF trace file.
fn itf_steps(path: &Path) -> usize {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    doc["states"].as_array().unwrap().len() - 1
}

#[test]
fn the_matrix_page_shows_each_verdict_and_a_click_shows_its_trace() {
    let dir = scratch!("html", "matrix");
    let (json, _) = run(&dir, &["matrix", "--profile", "mcp-2025-11-25", "--format", "json"]);
    let (html, code) = run(&dir, &["matrix", "--profile", "mcp-2025-11-25", "--format", "html", "--out", "traces"]);
    assert_eq!(code, 1, "the profile has violated cells");
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"), "{html:.300}");
    assert!(
        !html.contains("<script") && !html.contains("src=") && !html.contains("<link"),
        "self-contained: nothing fetched"
    );
    let report = dir.join("matrix.html");
    std::fs::write(&report, &html).unwrap();

    // The grid against the JSON: per property, the same verdicts with the same lengths.
    let doc: Value = serde_json::from_str(&json).unwrap();
    let mut want: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for cell in doc["cells"].as_array().unwrap() {
        for r in cell["results"].as_array().into_iter().flatten().filter(|r| r["verdict"] == "violated") {
            let t = &r["trace"];
            want.entry(r["property"].as_str().unwrap().into())
                .or_default()
                .push(format!("✗ {}/{}", t["steps"], t["effects"]));
        }
    }
    let links = grid_links(&html);
    let mut got: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (anchor, label) in &links {
        let (_, kind) = anchor.rsplit_once("--").unwrap();
        if kind != "worst-case" {
            got.entry(kind.into()).or_default().push(label.clone());
        }
    }
    for v in want.values_mut().chain(got.values_mut()) {
        v.sort();
    }
    assert!(want.contains_key("at-most-once"), "{want:?}");
    assert_eq!(got, want, "the page's violated verdicts are the JSON's");

    // A click on an at-most-once counterexample and on a worst case.
    let amo = links.keys().find(|a| a.ends_with("--at-most-once")).unwrap();
    let worst = links.keys().find(|a| a.ends_with("--worst-case")).expect("a worst case of two effects");
    for anchor in [amo, worst] {
        let seen = click(&report, anchor, &dir.join("section.png"));
        assert_eq!(seen["hiddenBefore"], true, "{seen}");
        assert_eq!(seen["linkText"].as_str(), Some(links[anchor].as_str()), "{seen}");
        let steps = seen["steps"].as_u64().unwrap() as usize;
        let files = seen["files"].as_array().unwrap();
        assert_eq!(files.len(), 1, "{seen}");
        let file = file_of(&files[0]);
        let (cell, kind) = anchor.rsplit_once("--").unwrap();
        assert!(file.ends_with(format!("traces/{cell}__{kind}.itf.json")), "{seen}");
        assert_eq!(steps, itf_steps(&file), "the diagram draws the trace file's steps: {seen}");
        if kind == "at-most-once" {
            assert!(links[anchor].starts_with(&format!("✗ {steps}/")), "{seen}");
        }
    }
}

#[test]
fn the_confirm_page_shows_each_replay_with_its_evidence() {
    let dir = scratch!("html", "confirm");
    let args = [
        "confirm",
        "--profile",
        "mcp-2025-11-25",
        "--transport",
        "stdio",
        "--client",
        "retry-on-timeout",
        "--server",
        "plain",
        "--evidence",
        "evidence",
        "--format",
        "html",
    ];
    let (html, code) = run(&dir, &args);
    let report = dir.join("confirm.html");
    std::fs::write(&report, &html).unwrap();
    let links = grid_links(&html);
    let amo = links.keys().find(|a| a.ends_with("--at-most-once")).expect("an at-most-once counterexample");
    let seen = click(&report, amo, &dir.join("section.png"));
    assert_eq!(seen["hiddenBefore"], true, "{seen}");
    let replays = seen["replays"].as_array().unwrap();
    assert_eq!(replays.len(), 1, "one SDK: {seen}");
    let r = &replays[0];
    assert_eq!(r["sdk"], "rust", "{seen}");
    let files: Vec<PathBuf> = r["files"].as_array().unwrap().iter().map(file_of).collect();
    assert!(files.iter().all(|f| f.exists()), "every linked file exists: {files:?}");
    let result = files.iter().find(|f| f.ends_with("evidence/result.json")).expect("result.json linked");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(result).unwrap()).unwrap();
    assert_eq!(r["verdict"], recorded["verdict"], "the page says what the evidence records: {seen}");
    let trace = files.iter().find(|f| f.ends_with("evidence/trace.itf.json"));
    assert_eq!(trace.is_some(), recorded["verdict"] == "confirmed", "a trace beside a confirmed replay: {seen}");
    if let Some(t) = trace {
        assert_eq!(seen["steps"].as_u64().unwrap() as usize, itf_steps(t), "{seen}");
    }
    // The exit code is the page's: 0 exactly when every replay shown confirmed or ran.
    let verdicts: Vec<&str> =
        html.split("<span class=\"replay ").skip(1).map(|s| s.split_once('"').unwrap().0).collect();
    assert!(!verdicts.is_empty(), "{html:.300}");
    assert_eq!(code == 0, verdicts.iter().all(|v| matches!(*v, "confirmed" | "ran")), "{verdicts:?}");
}
