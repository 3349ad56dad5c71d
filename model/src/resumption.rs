//! Whether a broken SSE response stream is resumed (`--resumption`): a cell's parameter under a
//! profile where a server MAY make its streams resumable (knob `sse_resumability = optional`,
//! 2025-11-25), and a client decides whether to reconnect.
//!
//! 2025-11-25 `basic/transports.mdx` § Resumability and Redelivery: "If the client wishes to
//! resume after a disconnection ... it **SHOULD** issue an HTTP GET to the MCP endpoint, and
//! include the `Last-Event-ID` header", and "The server **MAY** use this header to replay
//! messages that would have been sent after the last event ID, _on the stream that was
//! disconnected_". So a response is redelivered only when both sides take part: a server whose
//! streams are resumable and a client that reconnects rather than sending its request again.
//! A resumable stream lives with the server process: a crash still loses it.

use crate::named::named_enum;

named_enum!(
    /// Whether broken response streams are resumed (`--resumption`).
    Resumption {
        /// The server makes no stream resumable (what the model takes for `optional` by
        /// default): a broken stream loses its response, and the client does what its policy
        /// says.
        None = "none",
        /// The server makes its streams resumable, but the client does not reconnect with
        /// `Last-Event-ID`: after a break it does what its policy says (a retry sends the
        /// request again, and the server runs it again).
        Offered = "offered",
        /// The server makes its streams resumable and the client reconnects with
        /// `Last-Event-ID` after a break: the response is redelivered on the resumed stream
        /// while the server process lives, so a break is no failure the client sees.
        Used = "used",
    }
);

// `named_enum!` derives no `Default`, so it cannot be derived here.
#[allow(clippy::derivable_impls)]
impl Default for Resumption {
    fn default() -> Self {
        Resumption::None
    }
}
