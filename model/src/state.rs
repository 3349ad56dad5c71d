//! The model's state: one client, one server process, the transport between them, and the
//! durable ledger of side effects.
//!
//! The state is compact and canonical: fixed-size arrays of small integers, no heap, no maps.
//! Everything that two states could differ in without a difference in behaviour is kept out
//! (message order on HTTP is canonical: the in-flight set is sorted).

pub use crate::attempt::{Attempt, Call, ClientSide, Failure, Phase, ServerSide};
use serde::Serialize;

/// Largest number of logical calls the model takes.
pub const MAX_CALLS: usize = 4;
/// Largest number of attempts of one logical call (1 + retries).
pub const MAX_ATTEMPTS: usize = 4;
/// Largest number of server crashes.
pub const MAX_CRASHES: u8 = 3;
/// Largest number of server instances (and so of separate stores).
pub const MAX_INSTANCES: usize = 2;

/// Largest JSON-RPC id the model hands out.
pub const MAX_IDS: usize = MAX_CALLS * MAX_ATTEMPTS;
/// Capacity of the client-to-server channel (one request and one cancellation per attempt).
pub const INBOX_CAP: usize = MAX_CALLS * MAX_ATTEMPTS * 2;

/// A message in flight from client to server, packed: bit 7 = cancellation, bits 4-6 = call,
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

/// The server's processes: one per instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Server {
    /// Whether each instance's process is running (an instance the run does not have is
    /// never up).
    pub up: [bool; MAX_INSTANCES],
    /// Crashes so far, of any instance.
    pub crashes: u8,
    /// Times so far the server terminated the client's HTTP session (`--session-terminations`).
    pub session_ends: u8,
}

impl Server {
    /// Whether any instance is running (the load balancer has somewhere to send a request).
    pub fn any_up(&self) -> bool {
        self.up.iter().any(|u| *u)
    }
}

/// One state of the model.
///
/// Equality and hashing see the state through a [`View`] (packed by `view.rs`): unless `view.detail` is set,
/// facts that no longer influence anything are left out (the JSON-RPC ids, when the server
/// does not use them; how an attempt the client no longer waits for ended). Two states that
/// differ only there have the same futures and the same property values, so the checker
/// explores one of them. The facts stay in the state, so traces still show them.
///
/// Its `Debug` (what stateright's Explorer shows) is written in `debug.rs`.
#[derive(Clone, Serialize)]
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
    /// The server's processes.
    pub server: Server,
    /// Durable: side effects committed for each logical call (the ledger).
    pub ledger: [u8; MAX_CALLS],
    /// The stores, one per instance where each instance has its own, else only the first:
    /// durable completed key records, bit `g` of entry `c` = key generation `g` of call `c`.
    pub keys_durable: [[u8; MAX_CALLS]; MAX_INSTANCES],
    /// Volatile: completed key records kept in memory only (key-volatile).
    pub keys_volatile: [[u8; MAX_CALLS]; MAX_INSTANCES],
    /// Keys whose request is executing (released when its instance dies). For
    /// `validates-task-id`: the durable record of a task created and not completed, kept
    /// across a crash and a cancellation (its id stays taken).
    pub keys_running: [[u8; MAX_CALLS]; MAX_INSTANCES],
    /// JSON-RPC ids seen by an id-deduplicating server: 0 = unseen, else call + 1 ([`ID_CALL`]),
    /// with [`ID_ANSWERED`] set once that request completed, and the kind of the answer stored
    /// for it ([`ID_INPUT`], [`ID_INPUT_ROUND`]). Volatile for dedup-by-id, durable for
    /// dedup-by-id-durable.
    #[serde(serialize_with = "serialize_ids")]
    pub ids_seen: [[u8; MAX_IDS + 1]; MAX_INSTANCES],
    /// Durable, one record for the whole server: the `requestState`s an effect consumed, bit
    /// `x` of entry `c` = the state of the input-required answer of call `c`'s attempt `x`
    /// (`--handler input-before-effect-single-use` only; written only when not all 0, so that
    /// traces keep the shape they had).
    #[serde(skip_serializing_if = "none_consumed")]
    pub consumed: [u8; MAX_CALLS],
}

fn none_consumed(c: &[u8; MAX_CALLS]) -> bool {
    *c == [0; MAX_CALLS]
}

/// Id-table entry bits: the call of the id's request, plus 1.
pub const ID_CALL: u8 = 0x07;
/// Id-table entry bit: the request completed, and its answer is stored.
pub const ID_ANSWERED: u8 = 0x80;
/// Id-table entry bit: the stored answer is an input-required result (MRTR), not a final one.
pub const ID_INPUT: u8 = 0x40;
/// Id-table entry bit: the stored input-required answer is round 1's (else round 0's).
pub const ID_INPUT_ROUND: u8 = 0x20;

/// One id table as a map from id to its entry.
struct IdTable<'a>(&'a [u8; MAX_IDS + 1]);

impl Serialize for IdTable<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        for (id, v) in self.0.iter().enumerate().filter(|(_, v)| **v != 0) {
            let mut entry = serde_json::json!({"call": (v & ID_CALL) - 1, "completed": v & ID_ANSWERED != 0});
            // Written only for an input-required answer, so traces keep the shape they had.
            if v & ID_INPUT != 0 {
                entry["input_required_round"] = serde_json::json!(u8::from(v & ID_INPUT_ROUND != 0));
            }
            map.serialize_entry(&id, &entry)?;
        }
        map.end()
    }
}

fn serialize_ids<S: serde::Serializer>(tables: &[[u8; MAX_IDS + 1]; MAX_INSTANCES], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(tables.iter().map(IdTable))
}

impl State {
    /// The first state: nothing sent, the first server instance running, empty ledger.
    pub fn initial(view: View) -> State {
        State {
            view,
            calls: [Call::default(); MAX_CALLS],
            attempts: [[Attempt::default(); MAX_ATTEMPTS]; MAX_CALLS],
            next_id: 1,
            inbox: Inbox::default(),
            server: Server { up: [true, false], crashes: 0, session_ends: 0 },
            ledger: [0; MAX_CALLS],
            keys_durable: [[0; MAX_CALLS]; MAX_INSTANCES],
            keys_volatile: [[0; MAX_CALLS]; MAX_INSTANCES],
            keys_running: [[0; MAX_CALLS]; MAX_INSTANCES],
            ids_seen: [[0; MAX_IDS + 1]; MAX_INSTANCES],
            consumed: [0; MAX_CALLS],
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
    /// The lean reductions on: unread facts left out (below) and symmetry between logical
    /// calls (see [`State::packed`]). Off, only the reductions listed before them there apply;
    /// the tests compare the two on the two-call matrix.
    pub lean: bool,
    /// JSON-RPC ids influence behaviour (the server deduplicates by id).
    pub ids_matter: bool,
    /// Ids are unique among outstanding requests only, so an unanswered attempt's id stays
    /// reserved.
    pub ids_outstanding: bool,
    /// A retry carries the id of the attempt it retries, so every id may be needed again.
    pub ids_reused: bool,
    /// A call's framework step number influences behaviour (only a per-step key reads it).
    pub step_matters: bool,
    /// Why a failed call failed influences behaviour (only a client that retries after some
    /// failures and not others reads it).
    pub failure_matters: bool,
    /// Messages in flight form a set (HTTP), not a queue (stdio).
    pub inbox_sorted: bool,
    /// Server instances in the run (1 or 2), for showing a state; the packed view needs no
    /// flag for it (the second instance's facts are all 0 where there is none).
    pub instances: u8,
    /// The run's crash bound: while crashes are left, a restart can start the id counter over.
    pub crash_bound: u8,
    /// The run's bound on session terminations: while one is left, a new session can start
    /// the id counter over with the server running.
    pub session_bound: u8,
    /// Two callers (`--callers 2`): the calls are not put in a canonical order (a call's
    /// caller and partner depend on its place).
    pub two_callers: bool,
}

impl State {
    /// The JSON-RPC ids a request may still carry to the server, bit `id` set for each: one in
    /// transit carries it, or the client may still send one with it. Client sides only move on
    /// from waiting (to answered, abandoned or broken), the counter only grows between restarts
    /// of the whole server, and a retry reuses only its call's latest id, so an id once out of
    /// this set stays out.
    /// - In transit: a request sent and not yet read.
    /// - A retry that keeps its id (`retry_request_id = same`): the latest id of each call.
    /// - Ids unique among outstanding requests: the lowest free id is taken, so any id but one
    ///   held for good, by a request the client gave up waiting for or saw break (it stays
    ///   outstanding: nothing answers it to the client any more).
    /// - Ids unique within a session: ids from the counter on, and every id again while a
    ///   restart of the whole server can still start the counter over (a crash left, or every
    ///   instance down), or a session termination can (one left).
    pub fn ids_that_may_return(&self) -> u32 {
        const ALL: u32 = (1 << (MAX_IDS + 1)) - 2;
        let v = self.view;
        let bit = |id: u8| 1u32 << id;
        let (mut carried, mut held) = (0u32, 0u32);
        for c in 0..MAX_CALLS {
            let sent = &self.attempts[c][..self.calls[c].sent as usize];
            for t in sent {
                match (t.server, t.client) {
                    (ServerSide::Unseen, _) => carried |= bit(t.id),
                    (_, ClientSide::Abandoned | ClientSide::Broken) => held |= bit(t.id),
                    _ => {}
                }
            }
            if let (true, Some(t)) = (v.ids_reused, sent.last()) {
                carried |= bit(t.id);
            }
        }
        let future = if v.ids_outstanding {
            ALL & !held
        } else if self.server.crashes < v.crash_bound
            || !self.server.any_up()
            || self.server.session_ends < v.session_bound
        {
            ALL
        } else {
            ALL & !(bit(self.next_id) - 1)
        };
        carried | future
    }
}
