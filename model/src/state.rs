//! The model's state: one client, one server process, the transport between them, and the
//! durable ledger of side effects.
//!
//! The state is compact and canonical: fixed-size arrays of small integers, no heap, no maps.
//! Everything that two states could differ in without a difference in behaviour is kept out
//! (message order on HTTP is canonical: the in-flight set is sorted).

use crate::config::{MAX_ATTEMPTS, MAX_CALLS};
use serde::Serialize;

/// Largest JSON-RPC id the model hands out.
pub const MAX_IDS: usize = MAX_CALLS * MAX_ATTEMPTS;
/// Capacity of the client-to-server channel (one request and one cancellation per attempt).
pub const INBOX_CAP: usize = MAX_CALLS * MAX_ATTEMPTS * 2;

/// Where a logical call stands, as the client sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Phase {
    /// Not started.
    #[default]
    Idle,
    /// Waiting for the response to its latest attempt.
    Waiting,
    /// Timed out; the cancellation is about to be sent.
    CancelPending,
    /// The latest attempt failed (see [`Failure`]); a retry may follow.
    Failed,
    /// A success result was received.
    Succeeded,
}

/// Why the latest attempt of a call failed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Failure {
    /// No failure.
    #[default]
    None,
    /// The client stopped waiting.
    Timeout,
    /// The connection closed or the response stream broke.
    Disconnect,
    /// The server answered with an error (a duplicate rejected as in progress).
    ErrorReply,
    /// The step around the call failed after the call returned (framework retry only).
    StepError,
}

/// Client side of one logical call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Call {
    /// Where the call stands.
    pub phase: Phase,
    /// Why its latest attempt failed.
    pub failure: Failure,
    /// Attempts sent so far.
    pub sent: u8,
    /// Framework step of the latest attempt (0 for the first run).
    pub step: u8,
    /// Whether the client asked for the outcome after the latest failure (outcome query).
    pub queried: bool,
}

/// The client's view of one attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ClientSide {
    /// Not sent.
    #[default]
    Unsent,
    /// Sent; the client waits for its response.
    Waiting,
    /// The client timed out and stopped waiting.
    Abandoned,
    /// The client read its response.
    Answered,
    /// The client saw its connection close or its stream break.
    Broken,
}

/// The server's view of one attempt.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum ServerSide {
    /// Not received (in transit, or not sent).
    #[default]
    Unseen,
    /// Received; the tool runs but has not committed its effect.
    Pending,
    /// Effect committed; the key record is not stored yet (key-after-effect only).
    Effected,
    /// Effect (and any key record) committed; the response is not written yet.
    Committed,
    /// Success response written.
    RespondedOk,
    /// The stored result of an earlier request was written back; nothing ran.
    RespondedReplay,
    /// Rejected with an error (a duplicate still in progress); nothing ran.
    RespondedError,
    /// Dropped before its effect because its cancellation arrived.
    Dropped,
    /// Lost with the server process or the connection.
    Lost,
}

impl ServerSide {
    /// Whether a response for this attempt has been written.
    pub fn responded(self) -> bool {
        matches!(self, Self::RespondedOk | Self::RespondedReplay | Self::RespondedError)
    }
    /// Whether the server holds this attempt in volatile memory (lost on a crash).
    pub fn in_flight(self) -> bool {
        matches!(self, Self::Pending | Self::Effected | Self::Committed)
    }
}

/// One attempt (one JSON-RPC request) of a logical call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Attempt {
    /// JSON-RPC id (1-based; 0 while unsent).
    pub id: u8,
    /// Idempotency key: 0 for none, else the key's generation + 1 (keys of different calls
    /// never collide; the generation tells keys of one call apart).
    pub key: u8,
    /// Client side.
    pub client: ClientSide,
    /// Server side.
    pub server: ServerSide,
}

/// A message in flight from client to server, packed: bit 7 = cancellation, bits 4-5 = call,
/// bits 0-3 = attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Msg(pub u8);

impl Msg {
    /// A `tools/call` request.
    pub fn request(call: usize, attempt: usize) -> Msg {
        Msg(((call as u8) << 4) | attempt as u8)
    }
    /// A cancellation of a request.
    pub fn cancel(call: usize, attempt: usize) -> Msg {
        Msg(0x80 | ((call as u8) << 4) | attempt as u8)
    }
    /// Whether this is a cancellation.
    pub fn is_cancel(self) -> bool {
        self.0 & 0x80 != 0
    }
    /// The call it belongs to.
    pub fn call(self) -> usize {
        ((self.0 >> 4) & 0x7) as usize
    }
    /// The attempt it belongs to.
    pub fn attempt(self) -> usize {
        (self.0 & 0xf) as usize
    }
}

/// Messages in flight from client to server: a FIFO queue on stdio, a sorted set on HTTP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Inbox {
    /// Number of messages.
    pub len: u8,
    /// The messages, `msgs[..len]`.
    #[serde(serialize_with = "serialize_inbox")]
    pub msgs: [u8; INBOX_CAP],
}

fn serialize_inbox<S: serde::Serializer>(msgs: &[u8; INBOX_CAP], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(msgs.iter().filter(|m| **m != 0xff))
}

impl Default for Inbox {
    fn default() -> Self {
        Inbox { len: 0, msgs: [0xff; INBOX_CAP] }
    }
}

impl Inbox {
    /// The messages in order.
    pub fn iter(&self) -> impl Iterator<Item = Msg> + '_ {
        self.msgs[..self.len as usize].iter().map(|m| Msg(*m))
    }
    /// Whether `m` is in flight.
    pub fn contains(&self, m: Msg) -> bool {
        self.iter().any(|x| x == m)
    }
    /// Append (FIFO) or insert in order (set).
    pub fn push(&mut self, m: Msg, ordered: bool) {
        let len = self.len as usize;
        assert!(len < INBOX_CAP, "inbox overflow");
        let at = if ordered { len } else { self.msgs[..len].partition_point(|x| *x < m.0) };
        self.msgs.copy_within(at..len, at + 1);
        self.msgs[at] = m.0;
        self.len += 1;
    }
    /// Remove the message at `index`.
    pub fn remove(&mut self, index: usize) {
        let len = self.len as usize;
        self.msgs.copy_within(index + 1..len, index);
        self.msgs[len - 1] = 0xff;
        self.len -= 1;
    }
    /// Drop every message (the connection is gone).
    pub fn clear(&mut self) {
        *self = Inbox::default();
    }
}

/// The server process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Server {
    /// Whether the process is running.
    pub up: bool,
    /// Crashes so far.
    pub crashes: u8,
}

/// One state of the model.
///
/// Equality and hashing see the state through a [`View`]: unless `view.detail` is set,
/// facts that no longer influence anything are left out (the JSON-RPC ids, when the server
/// does not use them; how an attempt the client no longer waits for ended). Two states that
/// differ only there have the same futures and the same property values, so the checker
/// explores one of them. The facts stay in the state, so traces still show them.
#[derive(Clone, Debug, Serialize)]
pub struct State {
    /// What equality and hashing see (fixed for a run).
    #[serde(skip)]
    pub view: View,
    /// Client side of each logical call.
    pub calls: [Call; MAX_CALLS],
    /// Attempts of each logical call.
    pub attempts: [[Attempt; MAX_ATTEMPTS]; MAX_CALLS],
    /// Next JSON-RPC id in the current session (ids scoped by session only).
    pub next_id: u8,
    /// Messages in flight from client to server.
    pub inbox: Inbox,
    /// The server process.
    pub server: Server,
    /// Durable: side effects committed for each logical call (the ledger).
    pub ledger: [u8; MAX_CALLS],
    /// Durable: completed key records, bit `g` of entry `c` = key generation `g` of call `c`.
    pub keys_durable: [u8; MAX_CALLS],
    /// Volatile: completed key records kept in memory only (key-volatile).
    pub keys_volatile: [u8; MAX_CALLS],
    /// Volatile: keys whose request is executing.
    pub keys_running: [u8; MAX_CALLS],
    /// JSON-RPC ids seen by an id-deduplicating server: 0 = unseen, else call + 1, with bit 7
    /// set once that request completed. Volatile for dedup-by-id, durable for
    /// dedup-by-id-durable.
    #[serde(serialize_with = "serialize_ids")]
    pub ids_seen: [u8; MAX_IDS + 1],
}

fn serialize_ids<S: serde::Serializer>(ids: &[u8; MAX_IDS + 1], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut map = s.serialize_map(None)?;
    for (id, v) in ids.iter().enumerate().filter(|(_, v)| **v != 0) {
        let entry = serde_json::json!({"call": (v & 0x7f) - 1, "completed": v & 0x80 != 0});
        map.serialize_entry(&id, &entry)?;
    }
    map.end()
}

impl State {
    /// The first state: nothing sent, server running, empty ledger.
    pub fn initial(view: View) -> State {
        State {
            view,
            calls: [Call::default(); MAX_CALLS],
            attempts: [[Attempt::default(); MAX_ATTEMPTS]; MAX_CALLS],
            next_id: 1,
            inbox: Inbox::default(),
            server: Server { up: true, crashes: 0 },
            ledger: [0; MAX_CALLS],
            keys_durable: [0; MAX_CALLS],
            keys_volatile: [0; MAX_CALLS],
            keys_running: [0; MAX_CALLS],
            ids_seen: [0; MAX_IDS + 1],
        }
    }

    /// Largest number of side effects of any one logical call.
    pub fn worst_effects(&self) -> u8 {
        self.ledger.iter().copied().max().unwrap_or(0)
    }

    /// The latest attempt of call `c` (its index), if any was sent.
    pub fn latest(&self, c: usize) -> Option<usize> {
        (self.calls[c].sent as usize).checked_sub(1)
    }
}

/// Which facts equality and hashing see; the same for every state of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct View {
    /// See everything (reductions off).
    pub detail: bool,
    /// JSON-RPC ids influence behaviour (the server deduplicates by id).
    pub ids_matter: bool,
    /// Ids are unique among outstanding requests only, so an unanswered attempt's id stays
    /// reserved.
    pub ids_outstanding: bool,
    /// A retry carries the id of the attempt it retries, so every id may be needed again.
    pub ids_reused: bool,
}

/// What equality and hashing see of an attempt.
#[derive(PartialEq, Eq, Hash)]
enum AttemptView {
    Unsent,
    /// The client waits for it: everything matters (its id only where ids matter).
    Waiting(Attempt),
    /// The client is done with it: only what the server may still do with it matters, and its
    /// id where the server may still look it up or a new attempt must avoid it.
    Closed { key: u8, id: u8, server: ServerSide },
}

impl State {
    fn attempt_view(&self, t: &Attempt) -> AttemptView {
        let v = self.view;
        if v.detail {
            return AttemptView::Waiting(*t);
        }
        match t.client {
            ClientSide::Unsent => AttemptView::Unsent,
            ClientSide::Waiting => AttemptView::Waiting(Attempt { id: if v.ids_matter { t.id } else { 0 }, ..*t }),
            _ => {
                let server = match t.server {
                    s @ (ServerSide::Unseen | ServerSide::Pending | ServerSide::Effected) => s,
                    _ => ServerSide::Lost,
                };
                let reserved = v.ids_reused || (v.ids_outstanding && t.client != ClientSide::Answered);
                let id = if v.ids_matter && (server != ServerSide::Lost || reserved) { t.id } else { 0 };
                AttemptView::Closed { key: t.key, id, server }
            }
        }
    }

    fn counter_matters(&self) -> bool {
        self.view.detail || (self.view.ids_matter && !self.view.ids_outstanding)
    }

    fn same_as(&self, o: &State) -> bool {
        let plain = self.view == o.view
            && self.calls == o.calls
            && self.inbox == o.inbox
            && self.server == o.server
            && self.ledger == o.ledger
            && self.keys_durable == o.keys_durable
            && self.keys_volatile == o.keys_volatile
            && self.keys_running == o.keys_running
            && self.ids_seen == o.ids_seen;
        if !plain || (self.counter_matters() && self.next_id != o.next_id) {
            return false;
        }
        let a = self.attempts.iter().flatten();
        let b = o.attempts.iter().flatten();
        a.zip(b).all(|(x, y)| self.attempt_view(x) == o.attempt_view(y))
    }
}

impl PartialEq for State {
    fn eq(&self, o: &State) -> bool {
        self.same_as(o)
    }
}
impl Eq for State {}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.view.hash(h);
        self.calls.hash(h);
        for t in self.attempts.iter().flatten() {
            self.attempt_view(t).hash(h);
        }
        if self.counter_matters() {
            self.next_id.hash(h);
        }
        self.inbox.hash(h);
        self.server.hash(h);
        self.ledger.hash(h);
        self.keys_durable.hash(h);
        self.keys_volatile.hash(h);
        self.keys_running.hash(h);
        self.ids_seen.hash(h);
    }
}
