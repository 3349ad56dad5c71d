//! `matrix --shard K/N` and `merge`, as a batch scheduler uses them: the shards, run apart and
//! joined in any order, give the matrix one run gives; files that do not make one matrix are
//! refused naming the file.

use mcp_once_testkit::{mcp_once, scratch, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

const PROFILE: [&str; 2] = ["--profile", "mcp-2025-11-25"];

/// The JSON without wall times (the only thing that differs between two runs of one search).
fn without_times(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.into_iter().filter(|(k, _)| k != "seconds").map(|(k, x)| (k, without_times(x))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(without_times).collect()),
        x => x,
    }
}

fn shard(dir: &Path, k: usize, n: usize) -> PathBuf {
    let out = mcp_once!()
        .arg("matrix")
        .args(PROFILE)
        .args(["--format", "json", "--shard", &format!("{k}/{n}")])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let path = dir.join(format!("shard-{k}-of-{n}.json"));
    std::fs::write(&path, &out.stdout).unwrap();
    path
}

#[test]
fn merged_shards_are_the_matrix_one_run_gives() {
    let dir = scratch!("shard", "merge");
    let whole = mcp_once!().arg("matrix").args(PROFILE).args(["--format", "json"]).output().unwrap();
    assert_eq!(whole.status.code(), Some(1));
    let files: Vec<PathBuf> = (1..=3).map(|k| shard(dir.path(), k, 3)).collect();
    let sizes: Vec<usize> = files
        .iter()
        .map(|f| {
            serde_json::from_str::<Value>(&std::fs::read_to_string(f).unwrap()).unwrap()["cells"]
                .as_array()
                .unwrap()
                .len()
        })
        .collect();
    assert!(sizes.iter().all(|n| *n > 0), "every shard has cells: {sizes:?}");
    // Joined in another order than their numbers.
    let merged =
        mcp_once!().arg("merge").args([&files[2], &files[0], &files[1]]).args(["--format", "json"]).output().unwrap();
    assert_eq!(merged.status.code(), Some(1), "{}", text(&merged.stderr));
    let (a, b): (Value, Value) =
        (serde_json::from_slice(&whole.stdout).unwrap(), serde_json::from_slice(&merged.stdout).unwrap());
    assert_eq!(a["cells"].as_array().unwrap().len(), sizes.iter().sum::<usize>());
    assert_eq!(without_times(a), without_times(b));
    // The table of the merged shards is the table `matrix` prints.
    let table = mcp_once!().arg("matrix").args(PROFILE).output().unwrap();
    let merged_table = mcp_once!().arg("merge").args(&files).output().unwrap();
    assert_eq!(text(&merged_table.stdout), text(&table.stdout));
}

#[test]
fn shards_that_do_not_make_one_matrix_are_refused_naming_the_file() {
    let dir = scratch!("shard", "refused");
    let (one, two) = (shard(dir.path(), 1, 2), shard(dir.path(), 2, 2));
    let refused = |files: &[&Path], what: &str, names: &Path| {
        let out = mcp_once!().arg("merge").args(files).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{what}");
        let err = text(&out.stderr);
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains(what) && err.contains(names.file_name().unwrap().to_str().unwrap()), "{what}: {err}");
    };
    refused(&[&one, &two, &one], "given twice", &one);
    let other = shard(dir.path(), 1, 3);
    refused(&[&one, &other], "another matrix", &other);
    let whole = dir.path().join("whole.json");
    std::fs::write(&whole, mcp_once!().arg("matrix").args(PROFILE).args(["--format", "json"]).output().unwrap().stdout)
        .unwrap();
    refused(&[&whole], "not a shard", &whole);
    let out = mcp_once!().arg("merge").arg(&one).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("shards missing: 2/2"), "{}", text(&out.stderr));
    let bad = mcp_once!().args(["matrix", "--shard", "4/3"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("--shard") && text(&bad.stderr).contains("4/3"), "{}", text(&bad.stderr));
}
