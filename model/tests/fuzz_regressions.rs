//! The fuzz targets' invariants (`fuzz/src/`) on every saved crash (`fuzz/regressions/TARGET/`)
//! and every input of the committed fuzz corpus (`fuzz/corpus/TARGET/`), so that a crash once
//! found stays fixed without a fuzzer. See `scripts/fuzz` and RELIABILITY.md.

use std::path::Path;

#[path = "../../fuzz/src/frame.rs"]
#[allow(clippy::module_inception)] // the fuzz target's file names its inner module `frame` too
mod frame;
#[path = "../../fuzz/src/profile.rs"]
mod profile;
#[path = "../../fuzz/src/trace.rs"]
mod trace;

/// Run `check` on every file of `fuzz/regressions/TARGET` and `fuzz/corpus/TARGET`; report
/// every failing file by name. Returns how many files were checked.
fn run_all(target: &str, check: fn(&[u8])) -> usize {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut checked = 0;
    let mut failed = Vec::new();
    for dir in ["regressions", "corpus"] {
        let dir = fuzz.join(dir).join(target);
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("dir entry").path())
            .collect();
        files.sort();
        for file in files {
            let data = std::fs::read(&file).expect("read input");
            checked += 1;
            if std::panic::catch_unwind(|| check(&data)).is_err() {
                failed.push(file.display().to_string());
            }
        }
    }
    assert!(failed.is_empty(), "{target}: invariants fail on {failed:#?}");
    checked
}

#[test]
fn profile_regressions_and_corpus_hold_the_invariants() {
    assert!(run_all("profile", profile::check) >= 4);
}

#[test]
fn trace_regressions_and_corpus_hold_the_invariants() {
    assert!(run_all("trace", trace::check) >= 4);
}

#[test]
fn frame_regressions_and_corpus_hold_the_invariants() {
    assert!(run_all("frame", frame::check) >= 5);
}
