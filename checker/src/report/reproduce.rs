//! The Reproduce section of an issue (`explain`): shell commands that run as written from the
//! root of a checkout of mcp-once. The first writes the trace into `traces/` (or, for a trace
//! `check` does not write, says where to save it), the others read it from there; the replay
//! is the one recorded in the evidence's `result.json` with its paths made relative to the
//! checkout, and what a reader must substitute is named as a code placeholder.

use crate::cells::trace_name;
use crate::report::markdown::property_flag;
use crate::report::redact::map_paths;
use crate::report::replay::ReplayEvidence;
use mcp_once_conformance::replay::command::ReplayCommand;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::Config;
use std::fmt::Write;
use std::path::Path;

/// Where the project lives, as its manifest says.
const REPOSITORY: &str = env!("CARGO_PKG_REPOSITORY");

/// The folder the Reproduce commands write the replay's evidence into.
const EVIDENCE: &str = "evidence/";

/// What the Reproduce section is written from.
pub struct Reproduce<'a> {
    /// The trace's cell.
    pub config: &'a Config,
    /// What the trace shows.
    pub property: TraceKind,
    /// The trace file, as given.
    pub trace_file: &'a str,
    /// Whether `mcp-once check` writes this very trace for its cell (its shortest run).
    pub written_by_check: bool,
    /// The replay's evidence, if given.
    pub evidence: Option<&'a ReplayEvidence>,
}

/// The Reproduce section: how to get mcp-once, then one `sh` block that runs as written.
pub fn reproduce(r: &Reproduce) -> String {
    let cfg = r.config;
    let mut substitute = Vec::new();
    let trace = match r.written_by_check {
        true => format!("traces/{}", trace_name(cfg, r.property)),
        false => format!("traces/{}", file_name(r.trace_file)),
    };
    let replay = r.evidence.map(|ev| replay_line(ev, &trace, &mut substitute));
    let mut block = String::new();
    if replay.as_deref().is_some_and(needs_install) {
        let _ = writeln!(block, "conformance/fixtures/install.sh   # once: the fixtures' pinned npm and pip packages");
    }
    if r.written_by_check {
        let _ = writeln!(
            block,
            "mcp-once check {cfg}{} --out traces/   # the model's shortest run: this trace",
            property_flag(r.property)
        );
    }
    let _ = writeln!(block, "mcp-once check --trace {trace}   # a real path of the model");
    match &replay {
        Some(line) => {
            let _ = writeln!(block, "{line}");
            let _ = writeln!(block, "mcp-once explain {trace} --evidence {EVIDENCE} > issue.md   # this report");
        }
        None => {
            let _ = writeln!(block, "mcp-once explain {trace} > issue.md   # this report");
        }
    }
    let mut out = format!(
        "In the root of a checkout of mcp-once ({REPOSITORY}; `cargo build --release`, then `target/release` on \
         `PATH`):\n\n"
    );
    if !r.written_by_check {
        let _ = writeln!(
            out,
            "This trace is not the shortest run `mcp-once check` writes for its cell: save the trace file as `{trace}` first.\n"
        );
    }
    let _ = writeln!(out, "```sh\n{block}```\n");
    if r.evidence.is_none() {
        let _ = writeln!(
            out,
            "To replay it on a server, add `mcp-once replay {trace} --stdio '<server command>' --tool <tool> --args \
             '<json>' --observe ledger:<ledger> --evidence {EVIDENCE}` (or `--http <url>`) and give `explain` \
             `--evidence {EVIDENCE}`.\n"
        );
    }
    substitute.sort();
    substitute.dedup();
    if !substitute.is_empty() {
        let names: Vec<String> = substitute.iter().map(|s| format!("`{s}`")).collect();
        let _ = writeln!(
            out,
            "Substitute {}: {} outside the replay's folder and the checkout, or not recorded by the replay.\n",
            names.join(", "),
            if names.len() == 1 { "a path or value" } else { "paths or values" }
        );
    }
    out
}

/// The last part of a path as given.
fn file_name(path: &str) -> String {
    Path::new(path).file_name().map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Whether a command runs a TypeScript or Python fixture, whose packages `install.sh` installs.
fn needs_install(line: &str) -> bool {
    ["conformance/fixtures/typescript/", "conformance/fixtures/python/"].iter().any(|p| line.contains(p))
}

/// The `mcp-once replay` line: the recorded command line, or one rebuilt from what the result
/// says when it has none (a result of another command), reading `trace` and writing `evidence/`.
fn replay_line(ev: &ReplayEvidence, trace: &str, substitute: &mut Vec<String>) -> String {
    let words = match &ev.result.command {
        Some(cmd) => recorded(cmd, substitute),
        None => rebuilt(ev, substitute),
    };
    let flags: Vec<String> = words.iter().map(|w| quote(w)).collect();
    format!("mcp-once replay {trace} {} --evidence {EVIDENCE}", flags.join(" "))
}

/// The recorded flags, their paths made relative to the checkout.
fn recorded(cmd: &ReplayCommand, substitute: &mut Vec<String>) -> Vec<String> {
    let mut words = Vec::new();
    for flag in &cmd.flags {
        words.push(flag.name.clone());
        if let Some(v) = &flag.value {
            words.push(checkout_paths(v, &cmd.cwd, substitute));
        }
    }
    words
}

/// The flags as the result describes its replay (the target and the observer), for a result
/// that did not record its command line.
fn rebuilt(ev: &ReplayEvidence, substitute: &mut Vec<String>) -> Vec<String> {
    let cwd = std::env::current_dir().unwrap_or_default();
    let mut paths = |s: &str| checkout_paths(s, &cwd, substitute);
    let target = &ev.result.target;
    let mut words = Vec::new();
    if let Some(cmd) = target.strip_prefix("stdio: ") {
        words.extend(["--stdio".to_string(), paths(cmd)]);
    } else if let Some(rest) = target.strip_prefix("http: ") {
        match rest.split_once(" (started by ") {
            Some((url, cmd)) => {
                words.extend(["--http".to_string(), url.to_string(), "--launch".into()]);
                words.push(paths(cmd.trim_end_matches(')')));
            }
            None => words.extend(["--http".to_string(), rest.to_string()]),
        }
    } else {
        words.extend(["--stdio".to_string(), paths(target)]);
    }
    let call = ev.call_ids().first().and_then(|id| ev.call_request(id)).cloned().unwrap_or_default();
    let tool = call["params"]["name"].as_str().unwrap_or("<tool>").to_string();
    let mut args = call["params"]["arguments"].clone();
    if let Some(map) = args.as_object_mut() {
        // The runner adds its pacing arguments itself, when the tool takes them.
        map.remove("delay_before_ms");
        map.remove("delay_after_ms");
    }
    words.extend(["--tool".to_string(), tool, "--args".into(), args.to_string(), "--observe".into()]);
    match ev.result.observer.strip_prefix("ledger ") {
        Some(path) if !path.contains(" where ") => words.push(format!("ledger:{}", paths(path))),
        _ => {
            substitute.push("<observer>".into());
            words.push("<observer>".into());
        }
    }
    words
}

/// `value` with each absolute path made one a reader of the checkout can use: a fixture's path
/// relative to the checkout, mcp-once's own binaries by name (on `PATH`), a path under the
/// replay's folder `cwd` relative to it; any other becomes the placeholder `<path>/NAME`
/// (added to `substitute`).
fn checkout_paths(value: &str, cwd: &Path, substitute: &mut Vec<String>) -> String {
    map_paths(value, |_, token| {
        if token.starts_with("//") || token.len() < 2 {
            return None;
        }
        if let Some((_, tail)) = token.split_once("/conformance/fixtures/") {
            return Some(format!("conformance/fixtures/{tail}"));
        }
        let path = Path::new(token);
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if matches!(name.as_str(), "mcp-once" | "mcp-once-fixture") {
            return Some(name);
        }
        if let Ok(rel) = path.strip_prefix(cwd) {
            let rel = rel.display().to_string();
            return Some(if rel.is_empty() { ".".into() } else { rel });
        }
        let placeholder = format!("<path>/{name}");
        substitute.push(placeholder.clone());
        Some(placeholder)
    })
}

/// A word as a POSIX shell reads it back: bare when it has only safe characters, else in
/// single quotes.
fn quote(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_become_the_checkout_s_and_others_placeholders() {
        let cwd = Path::new("/srv/checkout");
        let mut sub = Vec::new();
        let cmd = "node /x/y/conformance/fixtures/typescript/server.mjs --ledger /srv/checkout/l.jsonl";
        assert_eq!(
            checkout_paths(cmd, cwd, &mut sub),
            "node conformance/fixtures/typescript/server.mjs --ledger l.jsonl"
        );
        assert!(sub.is_empty());
        let obs = r#"sh:"cat /srv/data/outbox.txt | wc -l""#;
        assert_eq!(checkout_paths(obs, cwd, &mut sub), r#"sh:"cat <path>/outbox.txt | wc -l""#);
        assert_eq!(checkout_paths("/opt/b/target/release/mcp-once fixture", cwd, &mut sub), "mcp-once fixture");
        assert_eq!(sub, ["<path>/outbox.txt"]);
    }

    #[test]
    fn words_are_quoted_for_a_shell() {
        assert_eq!(quote("ledger:l.jsonl"), "ledger:l.jsonl");
        assert_eq!(quote(r#"{"amount":42}"#), r#"'{"amount":42}'"#);
        assert_eq!(quote(r#"sh:"wc -l < it's""#), r#"'sh:"wc -l < it'\''s"'"#);
    }
}
