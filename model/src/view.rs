//! What equality and hashing see of a [`State`]: its view (see [`crate::state::View`]), packed
//! into a few machine words.
//!
//! Every generated state is hashed once, so this is the search's inner loop: the view is
//! built in registers (a logical call is two integers, compared as such when the calls are put
//! in their canonical order), never as bytes written one by one and read back.

use crate::attempt::{Attempt, ClientSide, Phase, ServerSide};
use crate::handler::Handler;
use crate::state::{
    Msg, State, View, ID_ANSWERED, ID_CALL, ID_INPUT, ID_INPUT_ROUND, INBOX_CAP, MAX_ATTEMPTS, MAX_CALLS, MAX_IDS,
};

/// Words of messages in flight in a packed view (a byte each).
const INBOX_WORDS: usize = INBOX_CAP / 8;

/// Bits of one id in the packed id tables: its entry in each of the two tables, 5 bits each
/// ([`ID_ENTRIES`]).
const ID_BITS: usize = 10;
/// Words of the id tables in a packed view.
const ID_WORDS: usize = ((MAX_IDS + 1) * ID_BITS).div_ceil(64);
/// Words of a packed view before the padding.
const UNPADDED_WORDS: usize = 1 + 3 * MAX_CALLS + INBOX_WORDS + ID_WORDS;

/// Length of a state's packed view in 64-bit words ([`State::packed`]): the server and the
/// view's flags, three words per logical call, the messages in flight, the id tables, and,
/// where the count is odd, a last word of 0 that makes it even (the hash takes two words at a
/// time).
pub const PACKED_WORDS: usize = UNPADDED_WORDS + UNPADDED_WORDS % 2;

const _: () = assert!(INBOX_CAP.is_multiple_of(8), "the messages in flight fill whole words");
const _: () = assert!(MAX_IDS < 32, "an id's bit fits in the u32 of ids_that_may_return");
const _: () = assert!(MAX_CALLS < 7, "a call plus 1 fits in the 3 bits of ID_CALL and a message's call bits");
const _: () = assert!(Handler::MAX_ROUNDS <= 3, "a round fits in the 2 bits of ROUND");
const _: () = assert!(MAX_ATTEMPTS <= 4, "a call's consumed requestStates fit in the 4 high bits of its head's byte 3");
const _: () = assert!(MAX_ATTEMPTS < 16, "a key (at most one per attempt of a call) fits in the 4 bits of KEY");

/// Everything the view sees of one logical call: its head (phase and failure, attempts sent,
/// step, whether it queried the outcome and the requestStates an effect consumed, its ledger entry, its key records in each store) and
/// its four attempts, a 32-bit word each. Calls are ordered by this pair.
type CallBlock = (u64, u128);

/// An attempt's facts in one word: byte 0 its MRTR round (bits 2-3), the instance that read it
/// (bit 4) and the round of a replayed input request (bits 6-7); byte 1 its id; byte 2 its key
/// (bits 0-3), client side (bits 4-6) and whether the client holds its task id (bit 7, under
/// `CLIENT`: kept exactly where the client side is); byte 3 its server side (bits 0-3) and
/// whether it was answered from another caller's record (bit 4, `FOREIGN`: always kept, so
/// that a state that broke `no-foreign-replay` never merges with one that did not).
fn raw(t: &Attempt) -> u32 {
    (t.round as u32) << 2
        | (t.instance as u32) << 4
        | (t.replayed_round as u32) << 6
        | (t.id as u32) << 8
        | (t.key as u32) << 16
        | (t.client as u32) << 20
        | (t.task as u32) << 23
        | (t.server as u32) << 24
        | (t.foreign as u32) << 28
}

/// How the view writes an attempt with given client and server sides: the bits of its
/// [`raw`] word it keeps, and the bits it sets. Byte 0 then holds a tag (bits 0-1: 0 unsent, 1
/// waiting or seen in full, 2 closed), the round, the instance while one holds the request,
/// and at bit 5 a replayed input-required answer with its round, while the client may still
/// read it or once it has (the attempt after it is a continuation); the id is kept only where
/// the server may still look it up or a new attempt must avoid it; a closed attempt keeps no
/// client side and only what the server may still do with it (in transit, waiting, pending or
/// effect-without-record; any later server state is as good as lost for the future).
#[derive(Clone, Copy)]
struct AttemptRule {
    keep: u32,
    set: u32,
}

const ROUND: u32 = 0x0c;
const INSTANCE: u32 = 0x10;
const REPLAYED: u32 = 0xc0;
const ID: u32 = 0xff << 8;
const KEY: u32 = 0x0f << 16;
const CLIENT: u32 = 0xf0 << 16;
const SERVER: u32 = 0x0f << 24;
const FOREIGN: u32 = 0x10 << 24;

const CLIENT_SIDES: [ClientSide; 5] =
    [ClientSide::Unsent, ClientSide::Waiting, ClientSide::Abandoned, ClientSide::Answered, ClientSide::Broken];
const SERVER_SIDES: [ServerSide; 13] = [
    ServerSide::Unseen,
    ServerSide::Pending,
    ServerSide::Effected,
    ServerSide::Committed,
    ServerSide::RespondedOk,
    ServerSide::RespondedReplay,
    ServerSide::RespondedError,
    ServerSide::Dropped,
    ServerSide::Lost,
    ServerSide::Interrupted,
    ServerSide::RespondedInput,
    ServerSide::RespondedReplayInput,
    ServerSide::Waiting,
];

/// The rule for one attempt under a view's id flags (`flags`: [`view_index`]).
const fn attempt_rule(flags: usize, client: ClientSide, server: ServerSide) -> AttemptRule {
    let (detail, ids_matter, ids_outstanding, ids_reused) =
        (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0, flags & 8 != 0);
    let mut keep = ROUND | KEY | FOREIGN;
    let mut set = 0;
    if detail || server.in_flight() {
        keep |= INSTANCE;
    }
    let replayed_input = matches!(server, ServerSide::RespondedReplayInput)
        && (detail || matches!(client, ClientSide::Waiting | ClientSide::Answered));
    if replayed_input {
        keep |= REPLAYED;
        set |= 0x20;
    }
    if detail {
        return AttemptRule { keep: keep | ID | CLIENT | SERVER, set: set | 1 };
    }
    match client {
        ClientSide::Unsent => AttemptRule { keep: KEY, set: 0 },
        ClientSide::Waiting => {
            let id = if ids_matter { ID } else { 0 };
            AttemptRule { keep: keep | id | CLIENT | SERVER, set: set | 1 }
        }
        _ => {
            let server = match server {
                ServerSide::Unseen | ServerSide::Waiting | ServerSide::Pending | ServerSide::Effected => server,
                _ => ServerSide::Lost,
            };
            let reserved = ids_reused || (ids_outstanding && !matches!(client, ClientSide::Answered));
            let id = if ids_matter && (!matches!(server, ServerSide::Lost) || reserved) { ID } else { 0 };
            AttemptRule { keep: keep | id, set: set | 2 | (server as u32) << 24 }
        }
    }
}

/// Which of [`ATTEMPT_RULES`]' tables a view uses.
fn view_index(v: &View) -> usize {
    v.detail as usize | (v.ids_matter as usize) << 1 | (v.ids_outstanding as usize) << 2 | (v.ids_reused as usize) << 3
}

/// Every attempt rule, by view flags, client side and server side (computed once, at compile
/// time: the view reads one entry per attempt instead of deciding it anew).
static ATTEMPT_RULES: [[[AttemptRule; SERVER_SIDES.len()]; CLIENT_SIDES.len()]; 16] = {
    let mut table = [[[AttemptRule { keep: 0, set: 0 }; SERVER_SIDES.len()]; CLIENT_SIDES.len()]; 16];
    let mut flags = 0;
    while flags < 16 {
        let mut c = 0;
        while c < CLIENT_SIDES.len() {
            let mut s = 0;
            while s < SERVER_SIDES.len() {
                assert!(CLIENT_SIDES[c] as usize == c && SERVER_SIDES[s] as usize == s, "variants in order");
                table[flags][c][s] = attempt_rule(flags, CLIENT_SIDES[c], SERVER_SIDES[s]);
                s += 1;
            }
            c += 1;
        }
        flags += 1;
    }
    table
};

/// An id-table entry as the view writes it, in 5 bits, by its byte (the first table the whole
/// entry, the second with `lean`): 0 for an unseen id; else the call plus 1 in 3 bits (whole)
/// or 1 in 1 bit (`lean`: the server never reads which call), then what is stored in 2 bits (0 nothing yet, 1 a final
/// answer, 2 or 3 the input-required answer of round 0 or 1).
static ID_ENTRIES: [[u8; 256]; 2] = {
    let mut table = [[0; 256]; 2];
    let mut v = 1;
    while v < 256 {
        let e = v as u8;
        let stored = match (e & ID_ANSWERED != 0, e & ID_INPUT != 0) {
            (false, _) => 0,
            (true, false) => 1,
            (true, true) => 2 | (e & ID_INPUT_ROUND != 0) as u8,
        };
        table[0][v] = (e & ID_CALL) | stored << 3;
        table[1][v] = 1 | stored << 1;
        v += 1;
    }
    table
};

impl State {
    /// What equality and hashing see, packed into words: every fact of the state except those
    /// the [`View`](crate::state::View) says have no future influence, which are written as 0.
    ///
    /// - An attempt the client is done with keeps only what the server may still do with it
    ///   (its key, and whether it is in transit, pending or effect-without-record; any later
    ///   server state is as good as lost for the future), and its id only where the server may
    ///   still look it up or a new attempt must avoid it.
    /// - A waiting attempt keeps everything, its id only where ids matter.
    /// - The session id counter only where ids matter and are scoped by session.
    ///
    /// With `lean`:
    /// - A call's step number only under a per-step key; why a call failed only while it is
    ///   failed and the client retries after some failures but not others; of an id-table
    ///   entry only whether it is seen and completed, not which call it belongs to (the
    ///   server never reads that). These facts are written but never read by any step or
    ///   property.
    /// - Of an id table, only the entries a request may still look up ([`Self::ids_that_may_return`]):
    ///   an entry for an id no request in transit carries and no future request can get is
    ///   never read again, whatever is written to it later.
    /// - Symmetry: the logical calls already started are written in a canonical order (sorted
    ///   by their own facts), with the calls named in messages in flight renamed to match.
    ///   Renaming started calls maps every step to a step and keeps every property, the worst
    ///   case and the initial state, so a state and its renamed twin have the same distances
    ///   to every violation (`tests/minimality.rs` checks this on every two-call cell). Calls
    ///   not started stay in place: only the next one may start, so they are not
    ///   interchangeable. Which total order sorts them does not matter: two states have the
    ///   same sorted calls under one order exactly when they do under any other, and ties keep
    ///   their places (the sort is stable), so the renamed messages agree too.
    pub fn packed(&self) -> [u64; PACKED_WORDS] {
        let v = self.view;
        let lean = v.lean && !v.detail;
        let blocks: [CallBlock; MAX_CALLS] = std::array::from_fn(|c| self.call_block(c, lean));
        // order[i]: the call written i-th (a stable insertion sort of the started calls);
        // rank[c]: where call c is written.
        let mut order: [usize; MAX_CALLS] = std::array::from_fn(|c| c);
        // Calls of two callers are not interchangeable (each has its caller and its partner
        // call, whose key it shares): with two callers the calls stay in place.
        if lean && !v.two_callers {
            let started = self.calls.iter().take_while(|c| c.phase != Phase::Idle).count();
            for i in 1..started {
                let mut j = i;
                while j > 0 && blocks[order[j - 1]] > blocks[order[j]] {
                    order.swap(j - 1, j);
                    j -= 1;
                }
            }
        }
        let mut rank = [0u8; MAX_CALLS];
        for (i, c) in order.iter().enumerate() {
            rank[*c] = i as u8;
        }
        let mut w = [0u64; PACKED_WORDS];
        let flags = v.detail as u64
            | (v.lean as u64) << 1
            | (v.ids_matter as u64) << 2
            | (v.ids_outstanding as u64) << 3
            | (v.ids_reused as u64) << 4
            | (v.step_matters as u64) << 5
            | (v.failure_matters as u64) << 6
            | (v.inbox_sorted as u64) << 7;
        let counter = if self.counter_matters() { self.next_id } else { 0 };
        w[0] = flags
            | (counter as u64) << 8
            | (self.inbox.len as u64) << 16
            | (self.server.up[0] as u64) << 24
            | (self.server.up[1] as u64) << 25
            | (self.server.crashes as u64) << 32
            | (self.server.session_ends as u64) << 40;
        for (i, c) in order.iter().enumerate() {
            let (head, attempts) = blocks[*c];
            w[1 + 3 * i] = head;
            w[2 + 3 * i] = attempts as u64;
            w[3 + 3 * i] = (attempts >> 64) as u64;
        }
        let at = 1 + 3 * MAX_CALLS;
        w[at..at + INBOX_WORDS].copy_from_slice(&self.inbox_words(lean, &rank));
        let at = at + INBOX_WORDS;
        w[at..at + ID_WORDS].copy_from_slice(&self.id_entries(lean));
        w
    }

    /// Everything the view sees of logical call `c`.
    fn call_block(&self, c: usize, lean: bool) -> CallBlock {
        let v = self.view;
        let call = &self.calls[c];
        let failure = !lean || (v.failure_matters && call.phase == Phase::Failed);
        let failure = if failure { call.failure as u8 } else { 0 };
        let step = if !lean || v.step_matters { call.step } else { 0 };
        // Key bits are 0 to 3 (four generations): the second store's go above them.
        let both = |t: &[[u8; MAX_CALLS]; 2]| t[0][c] | t[1][c] << 4;
        let head = u64::from_le_bytes([
            call.phase as u8 | failure << 4,
            call.sent,
            step,
            call.queried as u8 | self.consumed[c] << 4,
            self.ledger[c],
            both(&self.keys_durable),
            both(&self.keys_volatile),
            both(&self.keys_running),
        ]);
        // An attempt not sent is all 0 in the view but in full detail (no send changes one
        // before it is sent, so this only saves time).
        let seen = if v.detail { self.attempts[c].len() } else { call.sent as usize };
        let rules = &ATTEMPT_RULES[view_index(&v)];
        let attempts = self.attempts[c][..seen].iter().enumerate().fold(0u128, |acc, (a, t)| {
            let rule = rules[t.client as usize][t.server as usize];
            acc | ((raw(t) & rule.keep | rule.set) as u128) << (32 * a)
        });
        (head, attempts)
    }

    /// The messages in flight, a byte each (unused places 0xff); with `lean`, the calls they
    /// name renamed by `rank`, and re-sorted where they form a set.
    fn inbox_words(&self, lean: bool, rank: &[u8; MAX_CALLS]) -> [u64; INBOX_WORDS] {
        let mut msgs = self.inbox.msgs;
        if lean {
            let len = self.inbox.len as usize;
            for m in &mut msgs[..len] {
                *m = (*m & !0x70) | rank[Msg(*m).call()] << 4;
            }
            if self.view.inbox_sorted {
                msgs[..len].sort_unstable();
            }
        }
        std::array::from_fn(|i| u64::from_le_bytes(std::array::from_fn(|b| msgs[8 * i + b])))
    }

    /// Each id's entries in both tables, [`ID_BITS`] an id, half of them a table
    /// ([`ID_ENTRIES`]). With `lean` where ids matter, only the ids a request may still carry.
    fn id_entries(&self, lean: bool) -> [u64; ID_WORDS] {
        let mut w = [0u64; ID_WORDS];
        if self.ids_seen == [[0; MAX_IDS + 1]; 2] {
            return w;
        }
        let live = if lean && self.view.ids_matter { self.ids_that_may_return() } else { u32::MAX };
        let entries = &ID_ENTRIES[lean as usize];
        for id in (0..=MAX_IDS).filter(|id| live & 1 << id != 0) {
            let both = entries[self.ids_seen[0][id] as usize] as u64
                | (entries[self.ids_seen[1][id] as usize] as u64) << (ID_BITS / 2);
            let (word, bit) = (ID_BITS * id / 64, ID_BITS * id % 64);
            w[word] |= both << bit;
            if bit + ID_BITS > 64 {
                w[word + 1] |= both >> (64 - bit);
            }
        }
        w
    }

    fn counter_matters(&self) -> bool {
        self.view.detail || (self.view.ids_matter && !self.view.ids_outstanding)
    }
}

impl PartialEq for State {
    fn eq(&self, o: &State) -> bool {
        self.packed() == o.packed()
    }
}
impl Eq for State {}

impl std::hash::Hash for State {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        // Two words at a time: a hasher such as ahash mixes each 128-bit write apart from the
        // running state, so the writes do not wait on one another.
        let w = self.packed();
        for pair in w.chunks_exact(2) {
            h.write_u128(pair[0] as u128 | (pair[1] as u128) << 64);
        }
    }
}
