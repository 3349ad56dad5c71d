//! The server ending the client's Streamable HTTP session (2025-11-25 § Session Management,
//! knob `session_termination`, bound `--session-terminations`): when the model offers it, and
//! what it does.
//!
//! What it does, and why:
//! - Requests in transit carry the old session id, so the server answers them 404 and runs
//!   none of them ("after which it **MUST** respond to requests containing that session ID
//!   with HTTP 404 Not Found"): each is lost to its attempt, which the client sees fail, as a
//!   request whose connection closed. Cancellations in transit are notifications under the old
//!   session id too, and go the same way. (A message read before the termination is another
//!   order of the same steps, which the search also takes.)
//! - The client's next request opens a new session (it "**MUST** start a new session"), taken
//!   as immediate, as a restart's re-initialisation is; request ids are scoped by session, so
//!   the id counter starts over.
//! - Requests the server already runs are left as they are: nothing in the text says what
//!   becomes of them, so each may still be answered, or its stream may break (the existing
//!   `StreamBreak`).
//! - The server process runs on, and keeps what it holds in memory: an id table
//!   (`dedup-by-id`, like the fixture's, is one per process, for every session), key records.
//!   A new session's ids then meet the old session's entries.

use crate::action::Action;
use crate::config::Transport;
use crate::model::McpModel;
use crate::profile::{IdScope, SessionTermination};
use crate::state::{ClientSide, ServerSide, State, ID_CALL};

impl McpModel {
    /// Whether the server may end the session now: the profile lets it, the run's bound is
    /// not used up, and the server is running (a down server has no session to end; its
    /// restart starts a new one already).
    pub(crate) fn may_end_session(&self, s: &State) -> bool {
        self.config.transport == Transport::Http
            && self.profile.knobs.session_termination.value == SessionTermination::ServerMayTerminate
            && s.server.session_ends < self.config.session_terminations
            && s.server.any_up()
    }

    /// Offer the termination where it may happen.
    pub(crate) fn session_actions(&self, s: &State, out: &mut Vec<Action>) {
        if self.may_end_session(s) {
            out.push(Action::SessionTerminated {});
        }
    }

    /// The server ends the session (see the module's comment for each effect).
    pub(crate) fn end_session(&self, s: &mut State) -> bool {
        if !self.may_end_session(s) {
            return false;
        }
        s.server.session_ends += 1;
        for c in 0..s.calls.len() {
            for a in 0..s.calls[c].sent as usize {
                let t = &mut s.attempts[c][a];
                if t.client != ClientSide::Unsent && t.server == ServerSide::Unseen {
                    t.server = ServerSide::Lost;
                }
            }
        }
        s.inbox.clear();
        if self.profile.knobs.request_id_scope.value == IdScope::Session {
            s.next_id = 1;
        }
        true
    }
}

/// The logical call whose request entered the id of attempt `(call, attempt)` in the id table
/// that read it, if there is an entry: another call's where a new session reused the id.
pub(crate) fn id_owner(model: &McpModel, s: &State, call: u8, attempt: u8) -> Option<u8> {
    let (c, a) = (call as usize, attempt as usize);
    let entry = s.ids_seen[model.store_of(s, c, a)][s.attempts[c][a].id as usize];
    (entry != 0).then(|| (entry & ID_CALL) - 1)
}

/// The termination in words: which requests it turned away, and what starts over.
pub(crate) fn describe_end(model: &McpModel, before: &State, after: &State) -> String {
    let mut refused = Vec::new();
    for (c, attempts) in after.attempts.iter().enumerate() {
        for (a, t) in attempts.iter().enumerate() {
            if t.server == ServerSide::Lost && before.attempts[c][a].server == ServerSide::Unseen {
                refused.push(format!("id {}", t.id));
            }
        }
    }
    let refused = match refused.is_empty() {
        true => String::new(),
        false => format!("; the requests in transit ({}) are answered HTTP 404 and never run", refused.join(", ")),
    };
    let ids = match model.profile.knobs.request_id_scope.value {
        IdScope::Session => "; the client starts a new session, whose request ids start over at 1",
        IdScope::Outstanding => "; the client starts a new session",
    };
    let memory = match model.config.server.uses_ids() {
        true => "; the server process runs on, and its id table keeps the old session's ids",
        false => "; the server process runs on",
    };
    format!("server terminates the HTTP session{refused}{ids}{memory}")
}
