//! What the runner knows and does per attempt of a call, apart from the session: the holds
//! the trace needs, the requests sent, the transport events the server has not seen yet, the
//! requests whose write waits, the crash points armed and, with several instances, where each
//! attempt went.

use crate::replay::pacing::{AttemptId, Hold};
use crate::replay::step::{Sent, StepError};
use crate::replay::types::CrashMethod;
use serde_json::Value;
use std::collections::BTreeMap;

/// A transport event the client has done but the server has not seen yet (HTTP): the model
/// keeps it in flight until the server reads it, so the runner delivers it then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Deferred {
    /// A `notifications/cancelled` POST.
    CancelNotification,
    /// Closing the attempt's response stream.
    CloseStream,
}

/// The per-attempt book of one replay.
pub(crate) struct Attempts {
    /// Which server steps of each attempt the trace needs held (see [`crate::replay::pacing`]).
    pub(crate) holds: BTreeMap<AttemptId, Hold>,
    /// The requests written, with their connection generation and id.
    pub(crate) sent: BTreeMap<AttemptId, Sent>,
    /// Transport events to deliver where the trace has the server read them.
    pub(crate) deferred: Vec<(AttemptId, Deferred)>,
    /// Requests whose write waits for the trace's `ServerReceive` (`Driver::read_late` says
    /// why).
    pub(crate) held_requests: BTreeMap<AttemptId, Value>,
    /// The crash points armed: the attempt, how, and (after the kill) whether its response
    /// had been written.
    pub(crate) crash_points: Vec<(AttemptId, CrashMethod, Option<bool>)>,
    /// With several server instances: the instance each attempt was sent to.
    pub(crate) routes: BTreeMap<AttemptId, u8>,
    /// Task-augmented calls: the task id the client read for each attempt (its
    /// `CreateTaskResult`).
    pub(crate) tasks: BTreeMap<AttemptId, String>,
    /// Task-augmented calls: the result each attempt's poll read (as a response:
    /// `{"result": ...}`).
    pub(crate) task_results: BTreeMap<AttemptId, Value>,
}

impl Attempts {
    /// An empty book, with the holds the trace needs.
    pub(crate) fn new(holds: BTreeMap<AttemptId, Hold>) -> Attempts {
        Attempts {
            holds,
            sent: BTreeMap::new(),
            deferred: Vec::new(),
            held_requests: BTreeMap::new(),
            crash_points: Vec::new(),
            routes: BTreeMap::new(),
            tasks: BTreeMap::new(),
            task_results: BTreeMap::new(),
        }
    }

    /// Attempt `a` as it was sent (`diverged` if it never was).
    pub(crate) fn sent_as(&self, a: AttemptId) -> Result<Sent, StepError> {
        self.sent
            .get(&a)
            .cloned()
            .ok_or_else(|| StepError::diverged(format!("call {} attempt {} was never sent", a.0, a.1)))
    }
}
