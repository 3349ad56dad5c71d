//! The server side of the model's transitions: which key a request carries, how the server
//! reads it (its key store or id table deciding between running, replaying and rejecting),
//! takes its effect, answers (a result, or an input-required result under multi round-trip
//! requests), and loses its memory in a crash.

use crate::config::Handler;
use crate::config::{KeyLifetime, ServerImpl};
use crate::model::McpModel;
use crate::profile::{Continuations, InProgress, KeySemantics};
use crate::state::{
    ClientSide, Msg, Phase, ServerSide, State, ID_ANSWERED, ID_INPUT, ID_INPUT_ROUND, MAX_CALLS, MAX_IDS,
};

// An id-table entry keeps the round of a stored input-required answer in one bit.
const _: () = assert!(Handler::MAX_ROUNDS <= 2, "ID_INPUT_ROUND holds rounds 0 and 1 only");

impl McpModel {
    pub(crate) fn key_bit(key: u8) -> u8 {
        1 << (key - 1)
    }

    /// The key attempt `attempt` of call `c` carries: none on an MRTR continuation (outside the
    /// key's scope: `idempotency_continuations`), else as the key lifetime says.
    ///
    /// With continuations inside the key's scope (`idempotency_continuations = included`) every
    /// round has a key of its own: an attempt of a round the call has sent before under the
    /// same key lifetime reuses that round's key (a per-call key: every earlier attempt of the
    /// round; a per-step key: none, since a framework step sends each of its rounds once; a
    /// per-attempt key: none), and any other gets a new one, numbered after its attempt.
    pub(crate) fn key_of(&self, s: &State, c: usize, attempt: usize, step: u8, round: u8) -> u8 {
        if self.profile.knobs.idempotency_continuations.value == Continuations::Included {
            let earlier = s.attempts[c][..attempt].iter().find(|t| t.round == round && t.key != 0);
            return match (self.config.key, earlier) {
                (KeyLifetime::None, _) => 0,
                (KeyLifetime::PerCall, Some(t)) => t.key,
                _ => attempt as u8 + 1,
            };
        }
        if round > 0 {
            return 0;
        }
        match self.config.key {
            KeyLifetime::None => 0,
            KeyLifetime::PerCall => 1,
            KeyLifetime::PerStep => step + 1,
            KeyLifetime::PerAttempt => attempt as u8 + 1,
        }
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
            ServerImpl::KeyDurable
            | ServerImpl::KeyAfterEffect
            | ServerImpl::KeyExpiring
            | ServerImpl::ValidatesTaskId => s.keys_durable[store][c] & bit != 0,
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
    ///
    /// An id table replays the answer stored for the id, of the kind it was: the id may have
    /// been another call's, or another round's (ids start again after a stdio restart; an id
    /// may be reused once its request is answered), so a request can be answered with an
    /// input-required result where its own round would give the final one, or the reverse.
    ///
    /// A key store cannot do that: a key belongs to one call and one round (a key is sent on
    /// first requests only, or, with continuations inside the key's scope, each round has its
    /// own: `key_of`), and every request of one round of a handler is answered alike, so the
    /// answer stored for a key is always of the kind the request that finds it would get.
    ///
    /// The validating receiver (`validates-task-id`, SEP-1686 §4.2.3) rejects a request whose
    /// task id has a record, running (`keys_running`, which it keeps across a crash) or
    /// completed; else it creates the record as it reads the request, and runs it.
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
            } else if seen & ID_ANSWERED == 0 {
                ServerSide::RespondedError
            } else if seen & ID_INPUT != 0 {
                s.attempts[c][a].replayed_round = u8::from(seen & ID_INPUT_ROUND != 0);
                ServerSide::RespondedReplayInput
            } else {
                ServerSide::RespondedReplay
            }
        } else if server.uses_keys() && t.key != 0 {
            let bit = Self::key_bit(t.key);
            // With two callers whose records are one per key, the partner call's count too.
            let running = self.key_in_progress(s, st, c, t.key);
            let owner = self.record_owner(s, st, c, t.key);
            let known = running || owner.is_some();
            match (self.rules.semantics, self.rules.in_progress) {
                _ if server.validates_ids() && known => ServerSide::RespondedError,
                (KeySemantics::Dedup, _) if owner.is_some() => self.key_replay(s, c, a, owner),
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
            s.ids_seen[st][t.id as usize] |= self.stored_answer(t.round);
        } else if server.uses_keys() && t.key != 0 {
            self.store_key(s, st, c, t.key);
        }
        s.attempts[c][a].server = self.answer(t.round);
    }

    /// The id-table bits of a completed request of `round`: answered, and the kind of its
    /// answer (input-required, with its round, or final).
    fn stored_answer(&self, round: u8) -> u8 {
        match self.answer(round) {
            ServerSide::RespondedInput if round > 0 => ID_ANSWERED | ID_INPUT | ID_INPUT_ROUND,
            ServerSide::RespondedInput => ID_ANSWERED | ID_INPUT,
            _ => ID_ANSWERED,
        }
    }

    /// What the handler answers for a request of `round`: input-required or a success.
    pub(crate) fn answer(&self, round: u8) -> ServerSide {
        if self.config.handler.asks_input(round) {
            ServerSide::RespondedInput
        } else {
            ServerSide::RespondedOk
        }
    }

    /// Where the client stands after reading an answer (its own, or one the id table
    /// replayed, of the kind it was stored as): input-required or done.
    pub(crate) fn after_answer(side: ServerSide) -> Phase {
        if side.asks_input() {
            Phase::InputRequired
        } else {
            Phase::Succeeded
        }
    }

    /// Where the client stands after an outcome query finds the completed key record of a
    /// request of `round`: input-required or done (a key belongs to one round, and the
    /// record's answer is the one of its own request's round: see `receive_request`).
    pub(crate) fn after_result(&self, round: u8) -> Phase {
        if self.config.handler.asks_input(round) {
            Phase::InputRequired
        } else {
            Phase::Succeeded
        }
    }

    /// The attempt whose input-required answer carried the `requestState` that attempt
    /// `(c, a)` presents, where the handler enforces its single use and an earlier effect
    /// consumed it (`--handler input-before-effect-single-use`); `None` otherwise.
    pub(crate) fn consumed_state(&self, s: &State, c: usize, a: usize) -> Option<usize> {
        if !self.config.handler.single_use() {
            return None;
        }
        let keys = self.config.server.uses_keys();
        let x = crate::request_state::presented_state(s, c, a, s.attempts[c][a].round, keys)?;
        (s.consumed[c] & 1 << x != 0).then_some(x)
    }

    /// The handler refuses attempt `(c, a)`, whose `requestState` an earlier effect consumed:
    /// an error, no effect; the check and the record of consumed states are one atomic step
    /// with the effect, as a one-time redemption is. A key it runs under is released.
    pub(crate) fn refuse_consumed(&self, s: &mut State, c: usize, a: usize) {
        let t = s.attempts[c][a];
        if self.config.server.uses_keys() && t.key != 0 && !self.config.server.validates_ids() {
            let st = self.store_of(s, c, a);
            s.keys_running[st][c] &= !Self::key_bit(t.key);
        }
        s.attempts[c][a].server = ServerSide::RespondedError;
    }

    pub(crate) fn commit(&self, s: &mut State, c: usize, a: usize) {
        s.ledger[c] = s.ledger[c].saturating_add(1);
        let t = s.attempts[c][a];
        if self.config.handler.single_use() {
            if let Some(x) = crate::request_state::presented_state(s, c, a, t.round, self.config.server.uses_keys()) {
                s.consumed[c] |= 1 << x;
            }
        }
        let st = self.store_of(s, c, a);
        let server = self.config.server;
        let mut next = ServerSide::Committed;
        if server.uses_ids() {
            s.ids_seen[st][t.id as usize] |= self.stored_answer(t.round);
        } else if server.uses_keys() && t.key != 0 {
            if server == ServerImpl::KeyAfterEffect {
                next = ServerSide::Effected;
            } else {
                self.store_key(s, st, c, t.key);
            }
        }
        s.attempts[c][a].server = next;
    }

    /// The answer a key store replays to attempt `(c, a)`: the one stored with the key, which
    /// is of the kind this request's own round gives (see `receive_request`), so an
    /// input-required one where the handler asks for input in that round. The record is call
    /// `owner`'s; another caller's marks the attempt `foreign` (`callers.rs`).
    fn key_replay(&self, s: &mut State, c: usize, a: usize, owner: Option<usize>) -> ServerSide {
        if owner.is_some_and(|o| self.caller(o) != self.caller(c)) {
            s.attempts[c][a].foreign = true;
        }
        let round = s.attempts[c][a].round;
        if self.config.handler.asks_input(round) {
            s.attempts[c][a].replayed_round = round;
            ServerSide::RespondedReplayInput
        } else {
            ServerSide::RespondedReplay
        }
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
                if let Some(owner) = self.record_owner(s, st, c, t.key) {
                    s.attempts[c][a].server = self.key_replay(s, c, a, Some(owner));
                } else if !self.key_in_progress(s, st, c, t.key) {
                    s.keys_running[st][c] |= Self::key_bit(t.key);
                    s.attempts[c][a].server = ServerSide::Pending;
                }
            }
        }
    }

    /// Instance `instance` is killed: the requests it holds are lost, and with them the keys
    /// they were running (in a shared store too: the in-progress mark ends with the process
    /// that runs the request; not for `validates-task-id`, whose record of a created task is
    /// durable); its own memory is lost. When no instance is left running,
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
                // A duplicate waiting on its key holds no in-progress mark to release; a
                // validating receiver's record of a task is durable, and outlives its run.
                if held && t.key != 0 && t.server != ServerSide::Waiting && !self.config.server.validates_ids() {
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
        let durable_marks = self.config.server.validates_ids();
        if !durable_marks && (self.config.store() == crate::config::StoreScope::PerInstance || none_left) {
            s.keys_running[own] = [0; MAX_CALLS];
        }
        s.keys_volatile[own] = [0; MAX_CALLS];
        if self.config.server != ServerImpl::DedupByIdDurable {
            s.ids_seen[own] = [0; MAX_IDS + 1];
        }
        self.crash_tasks(s, instance);
    }
}
