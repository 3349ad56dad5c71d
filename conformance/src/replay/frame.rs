//! Framing of what a server writes: stdio output split into newline-delimited frames with a
//! size bound, and each frame classified as a JSON-RPC message or garbage. Pure functions, so
//! they can be fuzzed and tested without a server.

use serde_json::Value;

/// Largest frame accepted (bytes before the newline). A server that writes more than this
/// without a newline is reported, and its output up to the next newline is dropped.
pub const MAX_FRAME: usize = 8 * 1024 * 1024;

/// A piece of server output.
#[derive(Debug, PartialEq)]
pub enum Piece {
    /// One complete line (without its newline).
    Line(Vec<u8>),
    /// A run of output longer than the bound with no newline; `bytes` were dropped.
    Overlong { bytes: usize },
}

/// Splits a byte stream into newline-terminated frames of at most `max` bytes.
#[derive(Debug)]
pub struct LineSplitter {
    buf: Vec<u8>,
    max: usize,
    dropping: usize,
}

impl LineSplitter {
    /// A splitter with the bound `max`.
    pub fn new(max: usize) -> LineSplitter {
        LineSplitter { buf: Vec::new(), max, dropping: 0 }
    }

    /// Feed bytes; returns the pieces completed by them.
    pub fn push(&mut self, mut data: &[u8]) -> Vec<Piece> {
        let mut out = Vec::new();
        while !data.is_empty() {
            match data.iter().position(|&b| b == b'\n') {
                Some(i) => {
                    let (head, rest) = (&data[..i], &data[i + 1..]);
                    if self.dropping > 0 {
                        out.push(Piece::Overlong { bytes: self.dropping + head.len() });
                        self.dropping = 0;
                    } else if self.buf.len() + head.len() > self.max {
                        out.push(Piece::Overlong { bytes: self.buf.len() + head.len() });
                        self.buf.clear();
                    } else {
                        self.buf.extend_from_slice(head);
                        out.push(Piece::Line(std::mem::take(&mut self.buf)));
                    }
                    data = rest;
                }
                None => {
                    if self.dropping > 0 {
                        self.dropping += data.len();
                    } else if self.buf.len() + data.len() > self.max {
                        self.dropping = self.buf.len() + data.len();
                        self.buf.clear();
                    } else {
                        self.buf.extend_from_slice(data);
                    }
                    data = &[];
                }
            }
        }
        out
    }

    /// Bytes held after the last newline (a partial frame), at end of stream.
    pub fn pending(&self) -> usize {
        self.buf.len() + self.dropping
    }
}

/// What one frame is.
#[derive(Debug, PartialEq)]
pub enum Frame {
    /// A JSON-RPC 2.0 message (request, notification or response), or a batch of them.
    Messages(Vec<Value>),
    /// A blank line (tolerated, ignored).
    Blank,
    /// Anything else, with the reason.
    Garbage(String),
}

/// Whether a line is not JSON at all (not UTF-8, or no JSON value): a banner or a log line,
/// apart from JSON that is not a valid message.
pub fn not_json(bytes: &[u8]) -> bool {
    std::str::from_utf8(bytes).ok().and_then(|t| serde_json::from_str::<Value>(t.trim_end_matches('\r')).ok()).is_none()
}

/// A line as a report quotes it: trimmed, at most 80 characters.
pub fn quote(text: &str) -> String {
    let t = text.trim();
    match t.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &t[..cut]),
        None => t.to_string(),
    }
}

/// Classify one frame's bytes.
pub fn classify(bytes: &[u8]) -> Frame {
    let text = match std::str::from_utf8(bytes) {
        Ok(t) => t.trim_end_matches('\r'),
        Err(e) => return Frame::Garbage(format!("not UTF-8 (byte {})", e.valid_up_to())),
    };
    if text.trim().is_empty() {
        return Frame::Blank;
    }
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Frame::Garbage(format!("not JSON: {e}")),
    };
    let items = match value {
        Value::Array(items) if !items.is_empty() => items,
        Value::Array(_) => return Frame::Garbage("an empty JSON array".into()),
        other => vec![other],
    };
    for item in &items {
        if let Err(reason) = check_message(item) {
            return Frame::Garbage(reason);
        }
    }
    Frame::Messages(items)
}

/// Whether `v` is a JSON-RPC 2.0 message: `jsonrpc` "2.0", and a method, or an id with exactly
/// one of `result` and `error`.
pub(crate) fn check_message(v: &Value) -> Result<(), String> {
    let obj = v.as_object().ok_or("a JSON value that is not an object")?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err("a JSON object without \"jsonrpc\": \"2.0\"".into());
    }
    if obj.contains_key("method") {
        return match obj.get("method") {
            Some(Value::String(_)) => Ok(()),
            _ => Err("a message whose method is not a string".into()),
        };
    }
    match (obj.get("id"), obj.contains_key("result"), obj.contains_key("error")) {
        (None, _, _) => Err("a message with neither a method nor an id".into()),
        (Some(_), true, true) => Err("a response with both result and error".into()),
        (Some(_), false, false) => Err("a response with neither result nor error".into()),
        (Some(id), _, _) if !(id.is_string() || id.is_i64() || id.is_u64() || id.is_null()) => {
            Err(format!("a response id that is neither a string nor an integer: {id}"))
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_across_reads_are_joined() {
        let mut s = LineSplitter::new(100);
        assert_eq!(s.push(b"{\"a\""), vec![]);
        assert_eq!(
            s.push(b":1}\n{\"b\":2}\npart"),
            vec![Piece::Line(b"{\"a\":1}".to_vec()), Piece::Line(b"{\"b\":2}".to_vec())]
        );
        assert_eq!(s.pending(), 4);
    }

    #[test]
    fn overlong_output_is_reported_once_and_dropped_up_to_the_newline() {
        let mut s = LineSplitter::new(8);
        assert_eq!(s.push(b"0123456"), vec![]);
        assert_eq!(s.push(b"789abc"), vec![]);
        assert_eq!(s.push(b"def\nok\n"), vec![Piece::Overlong { bytes: 16 }, Piece::Line(b"ok".to_vec())]);
        assert_eq!(s.push(b"0123456789\n"), vec![Piece::Overlong { bytes: 10 }]);
    }

    #[test]
    fn frames_are_classified() {
        assert_eq!(classify(b"  "), Frame::Blank);
        assert!(matches!(classify(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Frame::Messages(m) if m.len() == 1));
        assert!(matches!(classify(br#"[{"jsonrpc":"2.0","method":"x"}]"#), Frame::Messages(_)));
        for (bad, why) in [
            (&b"hello"[..], "not JSON"),
            (b"\xff\xfe", "not UTF-8"),
            (br#"{"id":1,"result":1}"#, "jsonrpc"),
            (br#"{"jsonrpc":"2.0","id":1}"#, "neither result nor error"),
            (br#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#, "both"),
            (br#"{"jsonrpc":"2.0","id":[1],"result":1}"#, "neither a string nor an integer"),
            (b"[]", "empty"),
            (b"42", "not an object"),
        ] {
            match classify(bad) {
                Frame::Garbage(reason) => assert!(reason.contains(why), "{reason} should say {why}"),
                other => panic!("{bad:?} classified as {other:?}"),
            }
        }
    }

    #[test]
    fn a_banner_is_told_apart_from_json_that_is_no_message() {
        assert!(not_json(b"Starting server on stdio..."));
        assert!(not_json(b"\xff\xfe"));
        assert!(!not_json(b"42"), "JSON, though not a message");
        assert!(!not_json(br#"{"id":1,"result":1}"#));
        assert_eq!(quote("  ready \r"), "ready");
        assert_eq!(quote(&"é".repeat(100)).chars().count(), 81, "80 characters and an ellipsis");
    }
}
