//! Counting the effects in a ledger file, the conformance runner's ledger observer.
//!
//! A ledger holds one JSON object per side effect, each line written whole with one `write(2)`
//! and ended by `\n`, then fsynced (see `conformance/fixtures/README.md`). After a fault the
//! file can end in a *torn tail*: bytes after the last `\n`, from a write the kill or crash cut
//! short. Such a tail never counts as an effect, even when it happens to parse: a line is
//! committed only once its newline is written.
//!
//! ```
//! use mcp_once_conformance::ledger_count::{count, Filter};
//! use serde_json::json;
//!
//! let ledger = b"{\"tool\":\"charge\",\"sdk\":\"rust\"}\nnot json\n{\"tool\":\"charge\",\"sdk\":\"py";
//! let all = count(ledger, None);
//! assert_eq!((all.effects, all.complete_lines, all.torn_tail), (1, 2, true));
//! assert_eq!(all.malformed, vec![2]);
//!
//! let rust = json!("rust");
//! let only_rust = count(ledger, Some(Filter { field: "sdk", value: &rust }));
//! assert_eq!(only_rust.effects, 1);
//! ```

use serde_json::Value;

/// Which lines count: those whose `field` equals `value` (compared as JSON values, so `1` and
/// `"1"` differ). `field` is a top-level key (`"sdk"`), or a JSON Pointer (RFC 6901) when it
/// starts with `/` (`"/arguments/key"`).
#[derive(Clone, Copy, Debug)]
pub struct Filter<'a> {
    /// Top-level key, or JSON Pointer starting with `/`.
    pub field: &'a str,
    /// The value the field must have.
    pub value: &'a Value,
}

impl Filter<'_> {
    /// Whether this JSON object line passes the filter.
    pub fn matches(&self, line: &Value) -> bool {
        let found = if self.field.starts_with('/') { line.pointer(self.field) } else { line.get(self.field) };
        found == Some(self.value)
    }
}

/// What [`count`] found in a ledger.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LedgerCount {
    /// Complete lines that are a JSON object and pass the filter: the effects.
    pub effects: usize,
    /// Complete (`\n`-terminated) lines, whatever they hold.
    pub complete_lines: usize,
    /// Whether bytes follow the last `\n` (a write cut short). They are never counted.
    pub torn_tail: bool,
    /// 1-based numbers of complete lines that are not one JSON object (blank lines, invalid
    /// JSON or UTF-8, a JSON value that is not an object). Empty for a healthy ledger.
    pub malformed: Vec<usize>,
}

/// Count the effects in the bytes of a ledger file, optionally only those passing `filter`.
///
/// Lines are split at `\n` only; a `\r` before it is JSON whitespace. A missing file is the
/// same as empty bytes (zero of everything).
pub fn count(bytes: &[u8], filter: Option<Filter<'_>>) -> LedgerCount {
    let mut out = LedgerCount::default();
    let mut rest = bytes;
    while let Some(end) = rest.iter().position(|b| *b == b'\n') {
        let line = &rest[..end];
        rest = &rest[end + 1..];
        out.complete_lines += 1;
        match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) => {
                if filter.is_none_or(|f| f.matches(&v)) {
                    out.effects += 1;
                }
            }
            _ => out.malformed.push(out.complete_lines),
        }
    }
    out.torn_tail = !rest.is_empty();
    out
}

/// The effects themselves: the complete lines of `bytes` that are a JSON object and pass
/// `filter`, in order (what [`count`] counts).
pub fn effect_lines(bytes: &[u8], filter: Option<Filter<'_>>) -> Vec<Value> {
    bytes
        .split_inclusive(|b| *b == b'\n')
        .filter(|line| line.ends_with(b"\n"))
        .filter_map(|line| match serde_json::from_slice::<Value>(line) {
            Ok(v @ Value::Object(_)) if filter.is_none_or(|f| f.matches(&v)) => Some(v),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const A: &str = r#"{"request_id":1,"tool":"charge","arguments":{"amount":1,"key":"k1"},"sdk":"rust"}"#;
    const B: &str = r#"{"request_id":"2","tool":"charge","arguments":{"amount":2},"sdk":"typescript"}"#;

    fn lines(parts: &[&str]) -> Vec<u8> {
        parts.iter().flat_map(|p| format!("{p}\n").into_bytes()).collect()
    }

    #[test]
    fn effect_lines_are_the_counted_lines() {
        let mut bytes = lines(&[A, "not json", B]);
        bytes.extend_from_slice(A.as_bytes());
        let got = effect_lines(&bytes, None);
        assert_eq!(got.len(), count(&bytes, None).effects);
        assert_eq!(got[1]["request_id"], json!("2"));
    }

    #[test]
    fn empty_ledger_counts_nothing() {
        assert_eq!(count(b"", None), LedgerCount::default());
    }

    #[test]
    fn complete_lines_are_effects() {
        let c = count(&lines(&[A, B, A]), None);
        assert_eq!(c, LedgerCount { effects: 3, complete_lines: 3, torn_tail: false, malformed: vec![] });
    }

    #[test]
    fn a_torn_tail_is_never_counted_even_if_it_parses() {
        let mut bytes = lines(&[A]);
        bytes.extend_from_slice(&B.as_bytes()[..20]);
        let c = count(&bytes, None);
        assert_eq!((c.effects, c.complete_lines, c.torn_tail), (1, 1, true));
        assert!(c.malformed.is_empty());

        // A whole object without its newline: still not committed.
        let mut bytes = lines(&[A]);
        bytes.extend_from_slice(B.as_bytes());
        let c = count(&bytes, None);
        assert_eq!((c.effects, c.torn_tail), (1, true));
    }

    #[test]
    fn every_prefix_of_a_ledger_counts_the_lines_whose_newline_it_holds() {
        let bytes = lines(&[A, B, A, B]);
        for cut in 0..=bytes.len() {
            let c = count(&bytes[..cut], None);
            let newlines = bytes[..cut].iter().filter(|b| **b == b'\n').count();
            assert_eq!(c.effects, newlines, "cut at {cut}");
            assert_eq!(c.torn_tail, cut > 0 && bytes[cut - 1] != b'\n', "cut at {cut}");
            assert!(c.malformed.is_empty(), "cut at {cut}");
        }
    }

    #[test]
    fn malformed_complete_lines_are_numbered_and_not_counted() {
        let bytes = lines(&[A, "", "{\"request_id\":", "[1,2]", "42", B, "  ", "\u{1}"]);
        let mut with_bad_utf8 = bytes.clone();
        with_bad_utf8.extend_from_slice(b"{\"a\":\"\xff\"}\n");
        let c = count(&with_bad_utf8, None);
        assert_eq!(c.effects, 2);
        assert_eq!(c.complete_lines, 9);
        assert_eq!(c.malformed, vec![2, 3, 4, 5, 7, 8, 9]);
        assert!(!c.torn_tail);
    }

    #[test]
    fn crlf_line_ends_are_whitespace() {
        let c = count(format!("{A}\r\n{B}\r\n").as_bytes(), None);
        assert_eq!((c.effects, c.malformed.len()), (2, 0));
    }

    #[test]
    fn filter_by_top_level_field_compares_json_values() {
        let bytes = lines(&[A, B, A]);
        let rust = json!("rust");
        let c = count(&bytes, Some(Filter { field: "sdk", value: &rust }));
        assert_eq!((c.effects, c.complete_lines), (2, 3));
        let one = json!(1);
        assert_eq!(count(&bytes, Some(Filter { field: "request_id", value: &one })).effects, 2);
        let two_number = json!(2);
        assert_eq!(count(&bytes, Some(Filter { field: "request_id", value: &two_number })).effects, 0);
        let two_text = json!("2");
        assert_eq!(count(&bytes, Some(Filter { field: "request_id", value: &two_text })).effects, 1);
        let absent = json!(null);
        assert_eq!(count(&bytes, Some(Filter { field: "missing", value: &absent })).effects, 0);
    }

    #[test]
    fn filter_by_json_pointer() {
        let bytes = lines(&[A, B]);
        let k1 = json!("k1");
        assert_eq!(count(&bytes, Some(Filter { field: "/arguments/key", value: &k1 })).effects, 1);
        let amount = json!(2);
        assert_eq!(count(&bytes, Some(Filter { field: "/arguments/amount", value: &amount })).effects, 1);
    }

    #[test]
    fn filter_does_not_hide_malformed_lines_or_the_torn_tail() {
        let mut bytes = lines(&[A, "garbage"]);
        bytes.extend_from_slice(b"{\"sdk\":\"ru");
        let rust = json!("rust");
        let c = count(&bytes, Some(Filter { field: "sdk", value: &rust }));
        assert_eq!(c, LedgerCount { effects: 1, complete_lines: 2, torn_tail: true, malformed: vec![2] });
    }

    #[test]
    fn real_fixture_lines_count() {
        let line = r#"{"request_id":2,"tool":"charge","arguments":{"amount":42,"currency":"usd","key":"arg-key-1"},"idempotency_key":"params-key-1","pid":3969,"time":"2026-11-30T03:11:18.652Z","transport":"stdio","sdk":"typescript"}"#;
        let c = count(&lines(&[line, line]), None);
        assert_eq!((c.effects, c.torn_tail), (2, false));
    }
}
