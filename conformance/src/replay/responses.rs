//! The runner's book of its requests and what came back for each: how many were sent under a
//! key, the answers read (a second answer to one request is a breach), the failures seen on
//! the client's side, and over HTTP the response headers and the streams to break at them.

use crate::replay::breach::ProtocolBreach;
use crate::replay::wire::id_key;
use serde_json::Value;
use std::collections::HashMap;

/// A request as its answers are matched: the generation of the connection it went out on (a
/// restarted server reuses ids) and its JSON-RPC id.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestKey {
    /// The connection's generation.
    pub gen: u32,
    id: String,
}

impl RequestKey {
    /// The key of `id` sent on connection `gen`.
    pub fn new(gen: u32, id: &Value) -> RequestKey {
        RequestKey { gen, id: id_key(id) }
    }
}

/// Every request of a session and what came back for it.
#[derive(Default)]
pub(crate) struct Responses {
    sent: HashMap<RequestKey, usize>,
    answers: HashMap<RequestKey, Vec<Value>>,
    failures: HashMap<RequestKey, String>,
    /// HTTP: the status of the response headers that arrived.
    headers: HashMap<RequestKey, u16>,
    /// Streams to break as soon as their headers arrive, and whether each was an event stream
    /// still open then (`None`: not yet).
    break_at_headers: HashMap<RequestKey, Option<bool>>,
    /// Requests of the runner's own sent so far (their ids are numbered from it).
    own_requests: u64,
}

impl Responses {
    /// The number of a new request of the runner's own (from 1).
    pub(crate) fn own_request(&mut self) -> u64 {
        self.own_requests += 1;
        self.own_requests
    }

    /// A request was written under `key`.
    pub(crate) fn sent(&mut self, key: RequestKey) {
        *self.sent.entry(key).or_default() += 1;
    }

    /// An answer came for `key`; the breach it commits, if any (an id never sent, or more
    /// answers than requests under it).
    pub(crate) fn answer(&mut self, key: RequestKey, id: Value, message: Value) -> Option<ProtocolBreach> {
        let asked = self.sent.get(&key).copied().unwrap_or(0);
        let answers = self.answers.entry(key).or_default();
        answers.push(message);
        if asked == 0 {
            Some(ProtocolBreach::UnknownId { id })
        } else if answers.len() > asked {
            Some(ProtocolBreach::DuplicateResponse { id, responses: answers.len(), sent: asked })
        } else {
            None
        }
    }

    /// The answers read for `key`, in order.
    pub(crate) fn answers(&self, key: &RequestKey) -> &[Value] {
        self.answers.get(key).map_or(&[], Vec::as_slice)
    }

    /// The request failed on the client's side (the first reason is kept).
    pub(crate) fn fail(&mut self, key: RequestKey, reason: String) {
        self.failures.entry(key).or_insert(reason);
    }

    /// Its response stream ended: a failure unless an answer came on it.
    pub(crate) fn stream_ended(&mut self, key: RequestKey) {
        if !self.answers.contains_key(&key) {
            self.fail(key, "the response stream ended without a response".into());
        }
    }

    /// Why the request failed, if it did.
    pub(crate) fn failure(&self, key: &RequestKey) -> Option<&str> {
        self.failures.get(key).map(String::as_str)
    }

    /// HTTP: its response headers arrived with `status` (`sse`: an event stream). A stream to
    /// break at its headers was broken by its own task then: an event stream was still open.
    pub(crate) fn headers_arrived(&mut self, key: RequestKey, status: u16, sse: bool) {
        if let Some(at @ None) = self.break_at_headers.get_mut(&key) {
            if sse {
                *at = Some(true);
            }
        }
        self.headers.insert(key, status);
    }

    /// Whether its response headers arrived.
    pub(crate) fn has_headers(&self, key: &RequestKey) -> bool {
        self.headers.contains_key(key)
    }

    /// The HTTP status its response headers came with, once they came.
    pub(crate) fn status(&self, key: &RequestKey) -> Option<u16> {
        self.headers.get(key).copied()
    }

    /// Its stream is to be broken at its headers.
    pub(crate) fn break_at_headers(&mut self, key: RequestKey) {
        self.break_at_headers.entry(key).or_insert(None);
    }

    /// For a stream to break at its headers: `Some(open)` once they came, `None` before.
    pub(crate) fn closed_at_headers(&self, key: &RequestKey) -> Option<bool> {
        self.break_at_headers.get(key).copied().flatten()
    }
}
