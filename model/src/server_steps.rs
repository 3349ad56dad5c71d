//! The server side of the model's transitions: how the server reads a request (its key store
//! or id table deciding between running, replaying and rejecting), takes its effect, answers
//! (a result, or an input-required result under multi round-trip requests), and loses its
//! memory in a crash.

use crate::config::ServerImpl;
use crate::model::McpModel;
use crate::profile::KeySemantics;
use crate::state::{ClientSide, Msg, Phase, ServerSide, State, MAX_CALLS, MAX_IDS};

impl McpModel {
    pub(crate) fn key_bit(key: u8) -> u8 {
        1 << (key - 1)
    }

    /// Whether the server holds a completed record for this key.
    pub(crate) fn key_completed(&self, s: &State, c: usize, key: u8) -> bool {
        let bit = Self::key_bit(key);
        match self.config.server {
            ServerImpl::KeyVolatile => s.keys_volatile[c] & bit != 0,
            ServerImpl::KeyDurable | ServerImpl::KeyAfterEffect | ServerImpl::KeyExpiring => {
                s.keys_durable[c] & bit != 0
            }
            _ => false,
        }
    }

    pub(crate) fn store_key(&self, s: &mut State, c: usize, key: u8) {
        let bit = Self::key_bit(key);
        s.keys_running[c] &= !bit;
        if self.config.server == ServerImpl::KeyVolatile {
            s.keys_volatile[c] |= bit;
        } else {
            s.keys_durable[c] |= bit;
        }
    }

    /// Where the request of `(c, a)` stands in the inbox: `Some(index)` if the server may read it
    /// now (stdio: it is first in line).
    pub(crate) fn readable(&self, s: &State, m: Msg) -> Option<usize> {
        let index = s.inbox.iter().position(|x| x == m)?;
        if self.rules.ordered && index != 0 {
            return None;
        }
        if m.is_cancel() && s.inbox.contains(Msg::request(m.call(), m.attempt())) {
            return None;
        }
        Some(index)
    }

    pub(crate) fn receive_request(&self, s: &mut State, c: usize, a: usize) {
        let t = s.attempts[c][a];
        let server = self.config.server;
        let outcome = if server.uses_ids() {
            let seen = s.ids_seen[t.id as usize];
            if seen == 0 {
                s.ids_seen[t.id as usize] = c as u8 + 1;
                ServerSide::Pending
            } else if seen & 0x80 != 0 {
                ServerSide::RespondedReplay
            } else {
                ServerSide::RespondedError
            }
        } else if server.uses_keys() && t.key != 0 {
            let bit = Self::key_bit(t.key);
            match self.rules.semantics {
                KeySemantics::Dedup if self.key_completed(s, c, t.key) => ServerSide::RespondedReplay,
                KeySemantics::Dedup if s.keys_running[c] & bit != 0 => ServerSide::RespondedError,
                _ => {
                    s.keys_running[c] |= bit;
                    ServerSide::Pending
                }
            }
        } else {
            ServerSide::Pending
        };
        s.attempts[c][a].server = outcome;
    }

    /// The handler answers without taking an effect in this round (MRTR: it asks for input
    /// first, or `requestState` says the effect is done). For the first request this completes
    /// the request: its key record (or id-table entry) is stored with the answer.
    pub(crate) fn respond_without_effect(&self, s: &mut State, c: usize, a: usize) {
        let t = s.attempts[c][a];
        let server = self.config.server;
        if server.uses_ids() {
            s.ids_seen[t.id as usize] |= 0x80;
        } else if server.uses_keys() && t.key != 0 {
            self.store_key(s, c, t.key);
        }
        s.attempts[c][a].server = self.answer(t.round);
    }

    /// What the handler answers for a request of `round`: input-required or a success.
    pub(crate) fn answer(&self, round: u8) -> ServerSide {
        if self.config.handler.asks_input(round) {
            ServerSide::RespondedInput
        } else {
            ServerSide::RespondedOk
        }
    }

    /// Where the client stands after reading a result for a request of `round` (its own
    /// answer, or one replayed or found for it): input-required or done.
    pub(crate) fn after_result(&self, round: u8) -> Phase {
        if self.config.handler.asks_input(round) {
            Phase::InputRequired
        } else {
            Phase::Succeeded
        }
    }

    pub(crate) fn commit(&self, s: &mut State, c: usize, a: usize) {
        s.ledger[c] = s.ledger[c].saturating_add(1);
        let t = s.attempts[c][a];
        let server = self.config.server;
        let mut next = ServerSide::Committed;
        if server.uses_ids() {
            s.ids_seen[t.id as usize] |= 0x80;
        } else if server.uses_keys() && t.key != 0 {
            if server == ServerImpl::KeyAfterEffect {
                next = ServerSide::Effected;
            } else {
                self.store_key(s, c, t.key);
            }
        }
        s.attempts[c][a].server = next;
    }

    pub(crate) fn crash(&self, s: &mut State) {
        s.server.up = false;
        s.server.crashes += 1;
        for t in s.attempts.iter_mut().flatten() {
            let in_transit = t.client != ClientSide::Unsent && t.server == ServerSide::Unseen;
            if in_transit || t.server.in_flight() {
                t.server = ServerSide::Lost;
            }
        }
        s.inbox.clear();
        s.keys_running = [0; MAX_CALLS];
        s.keys_volatile = [0; MAX_CALLS];
        if self.config.server != ServerImpl::DedupByIdDurable {
            s.ids_seen = [0; MAX_IDS + 1];
        }
    }
}
