//! What the server did on the wire besides answering (its answers are in
//! [`crate::replay::responses`]): the protocol breaches it committed, stdout lines that were not
//! JSON, the notifications it sent, and, per connection, how it ended and whether a frame or a
//! read was left unfinished.

use crate::replay::breach::ProtocolBreach;
use crate::replay::start_error::NonJsonLines;
use std::cell::Cell;
use std::collections::HashMap;

/// The server's conduct over a session.
#[derive(Default)]
pub struct Conduct {
    /// Protocol breaches the server committed, in order (output that is not JSON-RPC, a
    /// response to an id the runner never sent, more responses to an id than requests with it).
    pub breaches: Vec<ProtocolBreach>,
    /// Whether a message the runner made has named the first breach.
    breach_named: Cell<bool>,
    /// stdio: lines of stdout that are not JSON at all (a breach in `breaches` too, unless the
    /// options skip them).
    pub non_json: NonJsonLines,
    /// Notifications the server sent (any connection).
    notifications: u64,
    /// How each connection the server closed ended, by generation.
    closed: HashMap<u32, String>,
    /// stdio: bytes of an unfinished frame (no newline yet), by connection generation.
    unfinished: HashMap<u32, usize>,
    /// stdio: a message of the current connection came from a read whose end is not taken in yet.
    pub(crate) mid_read: bool,
}

impl Conduct {
    /// The server sent a notification.
    pub(crate) fn notified(&mut self) {
        self.notifications += 1;
    }

    /// How many notifications the server has sent.
    pub fn notifications(&self) -> u64 {
        self.notifications
    }

    /// Connection `gen` was closed, as `reason` says.
    pub(crate) fn closed_with(&mut self, gen: u32, reason: String) {
        self.closed.insert(gen, reason);
    }

    /// How connection `gen` ended, if the server closed it.
    pub fn closed(&self, gen: u32) -> Option<&str> {
        self.closed.get(&gen).map(String::as_str)
    }

    /// A read of connection `gen` ended with `unfinished` bytes of a frame after its last
    /// newline.
    pub(crate) fn read_ended(&mut self, gen: u32, unfinished: usize) {
        self.unfinished.insert(gen, unfinished);
        self.mid_read = false;
    }

    /// `"; the server broke the protocol: …"` naming the first breach, or nothing.
    pub fn breach_note(&self) -> String {
        let note = self.breaches.first().map_or(String::new(), |g| format!("; the server broke the protocol: {g}"));
        if !note.is_empty() {
            self.breach_named.set(true);
        }
        note
    }

    /// Whether a message the runner made has named the first protocol breach.
    pub fn breach_named(&self) -> bool {
        self.breach_named.get()
    }

    /// For a wait on connection `gen` that ran out: [`Conduct::breach_note`], and whether the
    /// server was part-way through writing a frame (a slow or stuck writer, not a silent one).
    pub fn stall_note(&self, gen: u32) -> String {
        match self.unfinished.get(&gen).copied().unwrap_or(0) {
            0 => self.breach_note(),
            n => format!("; the server had written {n} byte(s) of a frame and no newline yet{}", self.breach_note()),
        }
    }
}
