//! `--threads N` (cells at a time): the same answers on one thread as on several, and a bad
//! count refused.

use mcp_once_testkit::{mcp_once, text};
use serde_json::Value;

/// The JSON of `mcp-once ARGS --format json`, its times taken out, and the exit code.
fn answers(args: &[&str]) -> (Value, Option<i32>) {
    fn drop_times(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !k.ends_with("seconds"));
                m.values_mut().for_each(drop_times);
            }
            Value::Array(a) => a.iter_mut().for_each(drop_times),
            _ => {}
        }
    }
    let out = mcp_once!().args(args).args(["--format", "json"]).output().unwrap();
    let mut v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", text(&out.stdout), text(&out.stderr)));
    drop_times(&mut v);
    (v, out.status.code())
}

#[test]
fn a_matrix_gives_the_same_report_on_one_thread_and_on_two() {
    let matrix = ["matrix", "--profile", "sep-3182"];
    let (one, code_one) = answers(&[&matrix[..], &["--threads", "1"]].concat());
    let (two, code_two) = answers(&[&matrix[..], &["--threads", "2"]].concat());
    assert_eq!(code_one, code_two);
    assert!(one["cells"].as_array().unwrap().len() > 50, "{one}");
    assert_eq!(one, two, "the same report but for the times");
}

#[test]
fn a_thread_count_of_zero_is_refused_naming_the_flag() {
    let out = mcp_once!().args(["check", "--threads", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(err.contains("--threads") && err.contains('0'), "{err}");
}
