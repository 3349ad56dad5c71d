//! The server side of the model's transitions: how the server reads a request (its key store
//! or id table deciding between running, replaying and rejecting), takes its effect, answers
//! (a result, or an input-required result under multi round-trip requests), and loses its
//! memory in a crash.

use crate::config::ServerImpl;
use crate::model::McpModel;
use crate::profile::{InProgress, KeySemantics};
use crate::state::{ClientSide, Msg, Phase, ServerSide, State, MAX_CALLS, MAX_IDS};

impl McpModel {
    pub(crate) fn key_bit(key: u8) -> u8 {
        1 << (key - 1)
    }

    /// The store the instance holding attempt `(c, a)` reads and writes.
    pub(crate) fn store_of(&self, s: &State, c: usize, a: usize) -> usize {
        self.config.store_of(s.attempts[c][a].instance)
    }

    /// Whether store `store` holds a completed record for this key.
    pub(crate) fn key_completed(&self, s: &State, store: usize, c: usize, key: u8) -> bool {
        let bit = Self::key_bit(key);
        match self.config.server {
            ServerImpl::KeyVolatile => s.keys_volatile[store][c] & bit != 0,
            ServerImpl::KeyDurable | ServerImpl::KeyAfterEffect | ServerImpl::KeyExpiring => {
                s.keys_durable[store][c] & bit != 0
            }
            _ => false,
        }
    }

    pub(crate) fn store_key(&self, s: &mut State, store: usize, c: usize, key: u8) {
        let bit = Self::key_bit(key);
        s.keys_running[store][c] &= !bit;
        if self.config.server == ServerImpl::KeyVolatile {
            s.keys_volatile[store][c] |= bit;
        } else {
            s.keys_durable[store][c] |= bit;
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

    /// Instance `instance` reads the request of `(c, a)` and looks it up in its store.
    pub(crate) fn receive_request(&self, s: &mut State, c: usize, a: usize, instance: u8) {
        s.attempts[c][a].instance = instance;
        let t = s.attempts[c][a];
        let st = self.store_of(s, c, a);
        let server = self.config.server;
        let outcome = if server.uses_ids() {
            let seen = s.ids_seen[st][t.id as usize];
            if seen == 0 {
                s.ids_seen[st][t.id as usize] = c as u8 + 1;
                ServerSide::Pending
            } else if seen & 0x80 != 0 {
                ServerSide::RespondedReplay
            } else {
                ServerSide::RespondedError
            }
        } else if server.uses_keys() && t.key != 0 {
            let bit = Self::key_bit(t.key);
            let running = s.keys_running[st][c] & bit != 0;
            match (self.rules.semantics, self.rules.in_progress) {
                (KeySemantics::Dedup, _) if self.key_completed(s, st, c, t.key) => ServerSide::RespondedReplay,
                (KeySemantics::Dedup, InProgress::Reject) if running => ServerSide::RespondedError,
                (KeySemantics::Dedup, InProgress::Wait) if running => ServerSide::Waiting,
                // No in-progress rule: the duplicate is not recognised, and runs beside the first.
                _ => {
                    s.keys_running[st][c] |= bit;
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
        let st = self.store_of(s, c, a);
        let server = self.config.server;
        if server.uses_ids() {
            s.ids_seen[st][t.id as usize] |= 0x80;
        } else if server.uses_keys() && t.key != 0 {
            self.store_key(s, st, c, t.key);
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
        let st = self.store_of(s, c, a);
        let server = self.config.server;
        let mut next = ServerSide::Committed;
        if server.uses_ids() {
            s.ids_seen[st][t.id as usize] |= 0x80;
        } else if server.uses_keys() && t.key != 0 {
            if server == ServerImpl::KeyAfterEffect {
                next = ServerSide::Effected;
            } else {
                self.store_key(s, st, c, t.key);
            }
        }
        s.attempts[c][a].server = next;
    }

    /// Under `idempotency_in_progress = wait`: each duplicate waiting on a key whose request has
    /// ended is answered now, in the step that ended it. If the key's record is stored, the
    /// waiting duplicate replays it; if the request ended with no record (cancelled before its
    /// effect, or lost with its process), the first waiting duplicate takes the key and runs,
    /// and the others wait on it.
    pub(crate) fn wake_waiters(&self, s: &mut State) {
        for c in 0..MAX_CALLS {
            for a in 0..s.calls[c].sent as usize {
                let t = s.attempts[c][a];
                if t.server != ServerSide::Waiting {
                    continue;
                }
                let st = self.store_of(s, c, a);
                if self.key_completed(s, st, c, t.key) {
                    s.attempts[c][a].server = ServerSide::RespondedReplay;
                } else if s.keys_running[st][c] & Self::key_bit(t.key) == 0 {
                    s.keys_running[st][c] |= Self::key_bit(t.key);
                    s.attempts[c][a].server = ServerSide::Pending;
                }
            }
        }
    }

    /// Instance `instance` is killed: the requests it holds are lost, and with them the keys
    /// they were running (in a shared store too: the in-progress mark ends with the process
    /// that runs the request); its own memory is lost. When no instance is left running,
    /// the requests in transit are lost too (nowhere to send them).
    pub(crate) fn crash(&self, s: &mut State, instance: u8) {
        let i = instance as usize;
        s.server.up[i] = false;
        s.server.crashes += 1;
        let none_left = !s.server.any_up();
        let own = self.config.store_of(instance);
        for c in 0..MAX_CALLS {
            for a in 0..s.calls[c].sent as usize {
                let t = s.attempts[c][a];
                let in_transit = t.client != ClientSide::Unsent && t.server == ServerSide::Unseen;
                let held = t.server.in_flight() && t.instance == instance;
                // A duplicate waiting on its key holds no in-progress mark to release.
                if held && t.key != 0 && t.server != ServerSide::Waiting {
                    s.keys_running[own][c] &= !Self::key_bit(t.key);
                }
                if held || (in_transit && none_left) {
                    s.attempts[c][a].server = ServerSide::Lost;
                }
            }
        }
        if none_left {
            s.inbox.clear();
        } else {
            // Cancellations of the requests it held have nowhere to go.
            let orphan = |s: &State| {
                s.inbox
                    .iter()
                    .position(|m| m.is_cancel() && s.attempts[m.call()][m.attempt()].server == ServerSide::Lost)
            };
            while let Some(at) = orphan(s) {
                s.inbox.remove(at);
            }
        }
        if self.config.store() == crate::config::StoreScope::PerInstance || none_left {
            s.keys_running[own] = [0; MAX_CALLS];
        }
        s.keys_volatile[own] = [0; MAX_CALLS];
        if self.config.server != ServerImpl::DedupByIdDurable {
            s.ids_seen[own] = [0; MAX_IDS + 1];
        }
    }
}
