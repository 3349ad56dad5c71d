//! The narrow borrow most steps take: the connection to the server and the book of attempts,
//! read against the script. A step that writes the replay's notes or counts effects against
//! the baseline (a send, a read of a held request, a crash and restart) is the driver's; every
//! other step is a [`Link`]'s, and cannot touch what it does not need.

use crate::replay::attempts::Attempts;
use crate::replay::pacing::AttemptId;
use crate::replay::script::Script;
use crate::replay::session::Session;
use crate::replay::step::{answer, Sent, StepError};
use serde_json::Value;

/// The session and the attempts, borrowed for one step, with the script to read.
pub(crate) struct Link<'a, 't> {
    /// The trace and what follows from it.
    pub script: &'a Script<'t>,
    /// The server, its connection and the observer.
    pub session: &'a mut Session,
    /// What the runner knows and does per attempt.
    pub attempts: &'a mut Attempts,
}

impl Link<'_, '_> {
    /// Attempt `a` as it was sent (`diverged` if it never was).
    pub fn attempt(&self, a: AttemptId) -> Result<Sent, StepError> {
        self.attempts.sent_as(a)
    }

    /// The response to attempt `a`, if one came.
    pub fn response(&self, a: AttemptId) -> Option<Value> {
        answer(&self.attempts.sent, self.session, a)
    }
}
