//! Invariants of the replay runner's server-output framing (`conformance/src/replay/frame.rs`:
//! `LineSplitter` and `classify`) on arbitrary output.
//!
//! - Splitting does not depend on how the output arrives: fed in the chunks the input's first
//!   byte chooses, the splitter yields the same pieces as fed all at once.
//! - Nothing is lost or invented: every byte is in a line, an over-long run, a newline, or the
//!   pending tail; no line is longer than the bound.
//! - `classify` never panics; every message it accepts passes `check_message`; every garbage
//!   reason is one line.

// The framing module is pure (serde_json only), so it is compiled in directly rather than
// through the conformance crate and its network stack.
#[path = "../../conformance/src/replay/frame.rs"]
#[allow(dead_code)]
mod frame;

use frame::{check_message, classify, Frame, LineSplitter, Piece};

/// A small bound, so that over-long runs are reached.
const MAX: usize = 64;

fn split(data: &[u8], chunk: usize) -> (Vec<Piece>, usize) {
    let mut s = LineSplitter::new(MAX);
    let mut pieces = Vec::new();
    for part in data.chunks(chunk.max(1)) {
        pieces.extend(s.push(part));
    }
    (pieces, s.pending())
}

/// Check every invariant on one input; panics on a violation.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let (whole, whole_pending) = split(rest, rest.len());
    let (chunked, chunked_pending) = split(rest, usize::from(first % 17) + 1);
    assert_eq!(whole, chunked, "pieces depend on chunking");
    assert_eq!(whole_pending, chunked_pending, "pending tail depends on chunking");
    let mut accounted = whole_pending;
    for p in &whole {
        match p {
            Piece::Line(l) => {
                assert!(l.len() <= MAX, "a line of {} bytes passed the {MAX}-byte bound", l.len());
                assert!(!l.contains(&b'\n'), "a line holds a newline");
                accounted += l.len() + 1;
                match classify(l) {
                    Frame::Messages(msgs) => {
                        assert!(!msgs.is_empty(), "an empty message list");
                        for m in &msgs {
                            check_message(m).expect("accepted messages are JSON-RPC");
                        }
                    }
                    Frame::Garbage(reason) => {
                        assert!(!reason.contains('\n'), "a garbage reason spans lines: {reason:?}")
                    }
                    Frame::Blank => assert!(
                        std::str::from_utf8(l).is_ok_and(|t| t.trim().is_empty()),
                        "a non-blank line classified blank"
                    ),
                }
            }
            Piece::Overlong { bytes } => {
                assert!(*bytes > MAX, "an over-long run of {bytes} bytes is within the bound");
                accounted += bytes + 1;
            }
        }
    }
    assert_eq!(accounted, rest.len(), "bytes lost or invented");
}
