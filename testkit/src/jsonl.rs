//! JSON-lines files (the runner's `evidence.jsonl`, the fixtures' ledgers and key stores), read
//! strictly: a line that does not parse fails the test, naming the file and the line.

use serde_json::Value;
use std::path::Path;

/// Every line of `path` as JSON; panics on a missing file or on a line that does not parse.
pub fn read(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    parse(&text, &path.display().to_string())
}

/// [`read`], but a file that does not exist reads as no lines (for files a server makes only on
/// its first write, such as a key store). Any other read error still fails.
pub fn read_or_empty(path: &Path) -> Vec<Value> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => panic!("cannot read {}: {e}", path.display()),
    }
}

/// Every line of `text` as JSON; `name` says where it came from in a failure.
pub fn parse(text: &str, name: &str) -> Vec<Value> {
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).unwrap_or_else(|e| panic!("{name}:{}: not JSON ({e}): {l:?}", i + 1)))
        .collect()
}

/// The records of the evidence log `dir/evidence.jsonl` (`--evidence dir`).
pub fn evidence(dir: &Path) -> Vec<Value> {
    read(&dir.join("evidence.jsonl"))
}

/// The records of every `evidence.jsonl` under `dir` (a probe writes one per run).
pub fn evidence_under(dir: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "evidence.jsonl") {
                out.extend(read(&p));
            }
        }
    }
    out
}

/// The records of one kind (`"process"`, `"frame"`, `"verdict"`...).
pub fn of_kind<'a>(records: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    records.iter().filter(move |r| r["kind"] == kind)
}
