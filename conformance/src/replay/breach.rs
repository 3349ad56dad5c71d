//! The ways a server can break JSON-RPC or its transport that the runner notices, typed: a
//! verdict or a note is built from these, and the text a user reads is their `Display`.

use serde_json::Value;
use std::fmt;

/// Where a frame that is not a valid JSON-RPC message came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    /// A line of the server's stdout.
    Stdout,
    /// The data of an SSE event of a Streamable HTTP response.
    SseData,
    /// A Streamable HTTP response's JSON body.
    HttpBody,
}

impl fmt::Display for Channel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Channel::Stdout => "stdout",
            Channel::SseData => "SSE data",
            Channel::HttpBody => "HTTP body",
        })
    }
}

/// One breach of the protocol by the server, as seen.
#[derive(Clone, Debug, PartialEq)]
pub enum ProtocolBreach {
    /// A response to an id the runner never sent.
    UnknownId {
        /// The id the response carries.
        id: Value,
    },
    /// More responses to an id than the times it was sent.
    DuplicateResponse {
        /// The id.
        id: Value,
        /// Responses seen.
        responses: usize,
        /// Requests sent with it.
        sent: usize,
    },
    /// A stdout line that is not JSON at all (a banner, a log line), quoted.
    NotJson {
        /// The line, quoted and cut.
        line: String,
    },
    /// A frame that is JSON but no valid JSON-RPC message (or not UTF-8).
    BadFrame {
        /// Where it came from.
        channel: Channel,
        /// What is wrong with it.
        reason: String,
    },
    /// stdout closed with part of a frame written and no newline after it.
    EndedInsideFrame {
        /// The bytes after the last newline.
        bytes: usize,
    },
    /// A stdout frame longer than the runner's bound.
    Overlong {
        /// Its length, once its newline came; `None` while none has.
        bytes: Option<usize>,
        /// The bound, in bytes.
        bound: usize,
    },
}

impl fmt::Display for ProtocolBreach {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolBreach::UnknownId { id } => write!(f, "a response to id {id}, which the runner never sent"),
            ProtocolBreach::DuplicateResponse { id, responses, sent } => {
                write!(f, "{responses} responses to id {id}, sent {sent} time(s) (a duplicated response)")
            }
            ProtocolBreach::NotJson { line } => write!(f, "stdout: a line that is not JSON: `{line}`"),
            ProtocolBreach::BadFrame { channel, reason } => write!(f, "{channel}: {reason}"),
            ProtocolBreach::EndedInsideFrame { bytes } => {
                write!(f, "stdout ended inside a frame ({bytes} bytes after the last newline)")
            }
            ProtocolBreach::Overlong { bytes: Some(n), bound } => {
                write!(f, "a stdout frame of {n} bytes, over the {bound}-byte bound")
            }
            ProtocolBreach::Overlong { bytes: None, bound } => {
                write!(f, "over {bound} bytes on stdout without a newline (an overlong frame)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_breach_names_what_and_where() {
        let dup = ProtocolBreach::DuplicateResponse { id: json!(1), responses: 2, sent: 1 };
        assert_eq!(dup.to_string(), "2 responses to id 1, sent 1 time(s) (a duplicated response)");
        let sse = ProtocolBreach::BadFrame { channel: Channel::SseData, reason: "not JSON: x".into() };
        assert_eq!(sse.to_string(), "SSE data: not JSON: x");
        let cut = ProtocolBreach::EndedInsideFrame { bytes: 7 };
        assert!(cut.to_string().contains("inside a frame"), "{cut}");
        let long = ProtocolBreach::Overlong { bytes: None, bound: 10 };
        assert!(long.to_string().contains("without a newline"), "{long}");
    }
}
