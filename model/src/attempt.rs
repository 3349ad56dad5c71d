//! One logical call and its attempts, as the client and the server each see them: the parts of
//! a [`crate::state::State`] that belong to one call.

use serde::Serialize;

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
    /// The latest attempt was answered with an input-required result (MRTR); the client is
    /// about to send the continuation.
    InputRequired,
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
    /// The server answered with an error (a duplicate rejected as in progress, or a task id
    /// the receiver already knows).
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
    /// Rejected with an error (a duplicate still in progress, or a task id already known to a
    /// validating receiver); nothing ran.
    RespondedError,
    /// Dropped before its effect because its cancellation arrived.
    Dropped,
    /// Lost with the server process or the connection.
    Lost,
    /// Effect committed, then the handler was stopped by its cancellation before it stored the
    /// key record (`--cancel interrupts`): the record is never written, nothing is answered.
    Interrupted,
    /// Answered with an input-required result (MRTR): the client is to send the request again
    /// with its input.
    RespondedInput,
    /// The stored input-required answer of an earlier request with this JSON-RPC id was written
    /// back; nothing ran. It is round [`Attempt::replayed_round`]'s input request (id tables).
    RespondedReplayInput,
    /// Received as a duplicate of a request still running, and held until that request ends
    /// (`idempotency_in_progress = wait`); nothing runs meanwhile.
    Waiting,
}

impl ServerSide {
    /// Whether a response for this attempt has been written.
    pub fn responded(self) -> bool {
        self.asks_input() || matches!(self, Self::RespondedOk | Self::RespondedReplay | Self::RespondedError)
    }
    /// Whether this answer is an input-required result (the server's own or a replayed one).
    pub fn asks_input(self) -> bool {
        matches!(self, Self::RespondedInput | Self::RespondedReplayInput)
    }
    /// Whether the server holds this attempt in volatile memory (lost on a crash).
    pub const fn in_flight(self) -> bool {
        matches!(self, Self::Waiting | Self::Pending | Self::Effected | Self::Committed)
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
    /// MRTR round: 0 for the first request, r for the continuation that answers the r-th
    /// input-required result (carrying `inputResponses` and `requestState`). Written only when
    /// not 0, so that traces keep the shape they had before rounds existed.
    #[serde(skip_serializing_if = "is_zero")]
    pub round: u8,
    /// Client side.
    pub client: ClientSide,
    /// Server side.
    pub server: ServerSide,
    /// The server instance that read it (0 until read; always 0 with one instance).
    #[serde(skip_serializing_if = "is_zero")]
    pub instance: u8,
    /// With [`ServerSide::RespondedReplayInput`]: the round of the request whose input-required
    /// answer was replayed (the continuation that answers it is of the round after); else 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub replayed_round: u8,
    /// Task-augmented calls only (`--tasks augmented`): the client read this attempt's
    /// `CreateTaskResult`, so it holds the task id and polls the task. Written only when set.
    #[serde(skip_serializing_if = "is_false")]
    pub task: bool,
    /// Two callers only (`--callers 2`): the server answered it from the record of another
    /// caller's request with the same key (`callers.rs`). Written only when set.
    #[serde(skip_serializing_if = "is_false")]
    pub foreign: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}
