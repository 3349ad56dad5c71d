//! The reference model's state, in full: plain structs, vectors and sets, compared and hashed
//! field by field (no packed view, nothing left out, no order made canonical).

use std::collections::{BTreeMap, BTreeSet};

/// Why the latest attempt of a call failed, as far as a client policy tells failures apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Failure {
    /// The client stopped waiting.
    Timeout,
    /// The connection closed, or the response stream broke.
    Disconnect,
    /// The server answered with an error.
    ErrorReply,
    /// The step around the call failed after the call returned.
    StepError,
}

/// Where a logical call stands, as the client sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallPhase {
    /// Not started.
    Idle,
    /// Waiting for the answer to its latest attempt.
    Waiting,
    /// Timed out; the client is about to send the cancellation.
    Cancelling,
    /// The latest attempt failed.
    Failed(Failure),
    /// The client read an input-required answer (MRTR) and is to send the continuation of
    /// this round.
    InputRequired(u8),
    /// The client read a success.
    Succeeded,
}

/// What the client knows of one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Seen {
    /// Sent; waiting for its answer.
    Waiting,
    /// The client gave up waiting (timeout).
    GaveUp,
    /// The client read its answer.
    Read,
    /// The client saw its connection close or its stream break.
    Broken,
}

/// What became of one attempt at the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fate {
    /// Not read yet (in transit).
    InTransit,
    /// Read; a duplicate held until the request running its key ends.
    Held,
    /// Read; the tool runs, no effect yet.
    Running,
    /// The effect is in the ledger; the key record is still to be written.
    EffectOnly,
    /// The effect (and any record) is done; the answer is not written.
    Done,
    /// The handler's own answer is written: the tool's success, or an input-required result
    /// where the handler asks for input in this request's round.
    Answered,
    /// An earlier request's stored answer is written back; nothing ran. `Some(r)`: an
    /// input-required answer stored for a request of round `r`; `None`: a final one.
    Replayed(Option<u8>),
    /// An error is written; nothing ran.
    Rejected,
    /// Dropped by its cancellation before its effect.
    Dropped,
    /// Stopped by its cancellation between its effect and its key record.
    Interrupted,
    /// Lost with the server process.
    Lost,
}

impl Fate {
    /// Whether an answer is written for it.
    pub fn answered(self) -> bool {
        matches!(self, Fate::Answered | Fate::Replayed(_) | Fate::Rejected)
    }
    /// Whether the server process holds it in memory.
    pub fn held_in_memory(self) -> bool {
        matches!(self, Fate::Held | Fate::Running | Fate::EffectOnly | Fate::Done)
    }
}

/// One attempt (one JSON-RPC request) of a logical call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    /// Its JSON-RPC id.
    pub id: u8,
    /// Its idempotency key (the key's number within its call), if it carries one.
    pub key: Option<u8>,
    /// Its MRTR round: 0 for a first request (and its retries), r for the r-th continuation.
    pub round: u8,
    /// Whether the client sent it as a continuation (answering an input-required answer),
    /// not as a retry or a re-run: it uses up none of the call's retries.
    pub continues: bool,
    /// The client's side.
    pub seen: Seen,
    /// The server's side.
    pub fate: Fate,
    /// The instance that read it (0 until read).
    pub instance: usize,
}

/// One logical call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LogicalCall {
    /// Where it stands.
    pub phase: CallPhase,
    /// Its attempts, in the order sent.
    pub requests: Vec<Request>,
    /// The framework step of its latest attempt (0 for the first run).
    pub step: u8,
    /// Whether the client asked the outcome since the latest failure.
    pub asked: bool,
}

/// A message on its way from the client to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// The request of `(call, attempt)`.
    Request(usize, usize),
    /// The cancellation of `(call, attempt)`.
    Cancel(usize, usize),
}

/// What an id table knows of one id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IdEntry {
    /// The request with that id runs.
    Running,
    /// The request with that id has completed, and its answer is kept: `Some(r)` an
    /// input-required answer of round `r`, `None` a final one.
    Answered(Option<u8>),
}

/// One state of the reference model.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct World {
    /// The logical calls, one per call of the bounds.
    pub calls: Vec<LogicalCall>,
    /// Messages in flight to the server, in the order sent.
    pub wire: Vec<Message>,
    /// Whether each server instance's process runs.
    pub up: Vec<bool>,
    /// Crashes so far.
    pub crashes: u8,
    /// The next id of the session's counter.
    pub counter: u8,
    /// Effects per call: the durable ledger.
    pub ledger: Vec<u8>,
    /// Completed key records kept durably: (store, call, key).
    pub durable: BTreeSet<(usize, usize, u8)>,
    /// Completed key records kept in memory: (store, call, key).
    pub volatile: BTreeSet<(usize, usize, u8)>,
    /// Keys whose request runs (for `validates-task-id`: tasks created and not completed):
    /// (store, call, key).
    pub running: BTreeSet<(usize, usize, u8)>,
    /// The id tables of an id-deduplicating server: (store, id).
    pub id_table: BTreeMap<(usize, u8), IdEntry>,
}

impl World {
    /// Nothing sent, every instance up, nothing recorded.
    pub fn start(calls: usize, instances: usize) -> World {
        World {
            calls: vec![LogicalCall { phase: CallPhase::Idle, requests: Vec::new(), step: 0, asked: false }; calls],
            wire: Vec::new(),
            up: vec![true; instances],
            crashes: 0,
            counter: 1,
            ledger: vec![0; calls],
            durable: BTreeSet::new(),
            volatile: BTreeSet::new(),
            running: BTreeSet::new(),
            id_table: BTreeMap::new(),
        }
    }

    /// Whether any instance runs.
    pub fn any_up(&self) -> bool {
        self.up.iter().any(|u| *u)
    }

    /// The most effects any one call has.
    pub fn most_effects(&self) -> u8 {
        self.ledger.iter().copied().max().unwrap_or(0)
    }
}
