//! The server's half of the reference model: reading requests and cancellations, the tool's
//! effect, the key record, the answer, a crash and a restart, a record's expiry.

use crate::model::{Reference, Sabotage, Step};
use crate::state::{Fate, IdEntry, Message, World};
use mcp_once_model::config::{Cancellation, ServerImpl};
use mcp_once_model::profile::{InProgress, KeySemantics};

impl Reference {
    /// Whether a cancellation the server reads while the attempt is at `fate` still changes
    /// what its handler does (the client sends none otherwise).
    pub(crate) fn cancel_matters(&self, fate: Fate) -> bool {
        match self.rules.cancel {
            Cancellation::Ignores => false,
            Cancellation::BeforeEffect => matches!(fate, Fate::InTransit | Fate::Held | Fate::Running),
            Cancellation::Interrupts => {
                matches!(fate, Fate::InTransit | Fate::Held | Fate::Running | Fate::EffectOnly)
            }
        }
    }

    /// Whether store `st` holds a completed record of call `c`'s key `key`.
    pub(crate) fn completed(&self, w: &World, st: usize, c: usize, key: u8) -> bool {
        match self.rules.server {
            ServerImpl::KeyVolatile => w.volatile.contains(&(st, c, key)),
            ServerImpl::KeyDurable
            | ServerImpl::KeyAfterEffect
            | ServerImpl::KeyExpiring
            | ServerImpl::ValidatesTaskId => w.durable.contains(&(st, c, key)),
            _ => false,
        }
    }

    /// Whether message `i` on the wire can be read now: the first on stdio, any on HTTP; a
    /// cancellation never before its own request, and only by the instance holding it.
    fn readable(&self, w: &World, i: usize) -> bool {
        if self.rules.stdio && i != 0 {
            return false;
        }
        match w.wire[i] {
            Message::Cancel(c, a) => !w.wire.contains(&Message::Request(c, a)) && w.up[w.calls[c].requests[a].instance],
            Message::Request(..) => true,
        }
    }

    /// The server's (and the environment's) steps in `w`.
    pub(crate) fn server_steps(&self, w: &World, out: &mut Vec<Step>) {
        if w.any_up() {
            for (i, m) in w.wire.iter().enumerate() {
                if self.readable(w, i) {
                    match *m {
                        // The load balancer sends a request to any running instance.
                        Message::Request(c, a) => {
                            out.extend((0..self.rules.instances).filter(|n| w.up[*n]).map(|n| Step::Read(c, a, n)))
                        }
                        Message::Cancel(c, a) => out.push(Step::ReadCancel(c, a)),
                    }
                }
            }
            for (c, call) in w.calls.iter().enumerate() {
                for (a, r) in call.requests.iter().enumerate() {
                    if !w.up[r.instance] {
                        continue;
                    }
                    match r.fate {
                        Fate::Running if self.rules.effect_in(r.round) => out.push(Step::Commit(c, a)),
                        // A round without the effect: the handler answers at once.
                        Fate::Running => out.push(Step::Respond(c, a)),
                        Fate::EffectOnly => out.push(Step::StoreKey(c, a)),
                        Fate::Done => out.push(Step::Respond(c, a)),
                        _ => {}
                    }
                }
            }
        }
        for i in 0..self.rules.instances {
            if !w.up[i] {
                out.push(Step::Restart(i));
            } else if w.crashes < self.rules.crashes {
                out.push(Step::Crash(i));
            }
        }
        if self.rules.expiry {
            out.extend(w.durable.iter().filter(|(st, ..)| *st == 0).map(|(_, c, k)| Step::Expire(*c, *k)));
        }
    }

    /// Take a server or environment step.
    pub(crate) fn server_step(&self, w: &mut World, step: Step) -> bool {
        match step {
            Step::Read(c, a, i) => {
                w.wire.retain(|m| *m != Message::Request(c, a));
                w.calls[c].requests[a].instance = i;
                self.read_request(w, c, a);
            }
            Step::ReadCancel(c, a) => {
                w.wire.retain(|m| *m != Message::Cancel(c, a));
                self.read_cancel(w, c, a);
            }
            Step::Commit(c, a) => self.commit(w, c, a),
            Step::StoreKey(c, a) => {
                let r = w.calls[c].requests[a];
                self.record(w, self.rules.store_of(r.instance), c, r.key.expect("a key to store"));
                w.calls[c].requests[a].fate = Fate::Done;
            }
            Step::Respond(c, a) => {
                if w.calls[c].requests[a].fate == Fate::Running {
                    self.complete_without_effect(w, c, a);
                }
                w.calls[c].requests[a].fate = Fate::Answered;
            }
            Step::Crash(i) => self.crash(w, i),
            Step::Restart(i) => {
                // A new session only when the whole server was down.
                if !w.any_up() {
                    w.counter = 1;
                }
                w.up[i] = true;
            }
            Step::Expire(c, k) => {
                w.durable.remove(&(0, c, k));
            }
            _ => unreachable!("not a server step: {step}"),
        }
        true
    }

    /// The server reads the request of `(c, a)` and decides, from its id table or key store,
    /// whether it runs, is answered from a record, waits, or is rejected.
    fn read_request(&self, w: &mut World, c: usize, a: usize) {
        let r = w.calls[c].requests[a];
        let st = self.rules.store_of(r.instance);
        let fate = if self.rules.ids() {
            match w.id_table.get(&(st, r.id)) {
                None => {
                    w.id_table.insert((st, r.id), IdEntry::Running);
                    Fate::Running
                }
                Some(IdEntry::Running) => Fate::Rejected,
                // The answer stored for the id, of the kind it was (maybe another round's).
                Some(IdEntry::Answered(kind)) => Fate::Replayed(*kind),
            }
        } else if let (true, Some(key)) = (self.rules.keys(), r.key) {
            let running = w.running.contains(&(st, c, key));
            let done = self.completed(w, st, c, key) && self.sabotage != Some(Sabotage::KeyStoreRunsDuplicates);
            let dedup = self.rules.semantics == KeySemantics::Dedup;
            if self.rules.server == ServerImpl::ValidatesTaskId && (running || done) {
                Fate::Rejected
            } else if dedup && done {
                Fate::Replayed(self.rules.answer_of(r.round))
            } else if dedup && running && self.rules.in_progress == InProgress::Reject {
                Fate::Rejected
            } else if dedup && running && self.rules.in_progress == InProgress::Wait {
                Fate::Held
            } else {
                w.running.insert((st, c, key));
                Fate::Running
            }
        } else {
            Fate::Running
        };
        w.calls[c].requests[a].fate = fate;
    }

    /// The server reads the cancellation of `(c, a)`: a request not yet past its effect is
    /// dropped, one between its effect and its key record is stopped there (with
    /// `interrupts`); nothing is answered.
    fn read_cancel(&self, w: &mut World, c: usize, a: usize) {
        let r = w.calls[c].requests[a];
        if !self.cancel_matters(r.fate) {
            return;
        }
        w.calls[c].requests[a].fate = match r.fate {
            Fate::Running | Fate::Held => Fate::Dropped,
            _ => Fate::Interrupted,
        };
        let task_record = self.rules.server == ServerImpl::ValidatesTaskId;
        let st = self.rules.store_of(r.instance);
        if let (Some(key), false, false) = (r.key, r.fate == Fate::Held, task_record) {
            w.running.remove(&(st, c, key));
        }
        if r.fate == Fate::Running && self.rules.ids() {
            w.id_table.remove(&(st, r.id));
        }
    }

    /// The tool takes its effect for `(c, a)`; the id table, or the key record where it is
    /// written with the effect, completes in the same step.
    fn commit(&self, w: &mut World, c: usize, a: usize) {
        w.ledger[c] += 1;
        let r = w.calls[c].requests[a];
        let st = self.rules.store_of(r.instance);
        let mut fate = Fate::Done;
        if self.rules.ids() {
            w.id_table.insert((st, r.id), IdEntry::Answered(self.rules.answer_of(r.round)));
        } else if let (true, Some(key)) = (self.rules.keys(), r.key) {
            if self.rules.server == ServerImpl::KeyAfterEffect {
                fate = Fate::EffectOnly;
            } else {
                self.record(w, st, c, key);
            }
        }
        w.calls[c].requests[a].fate = fate;
    }

    /// A request of a round without the effect completes as its answer is written: its id
    /// entry keeps that answer, or its key's record is written.
    fn complete_without_effect(&self, w: &mut World, c: usize, a: usize) {
        let r = w.calls[c].requests[a];
        let st = self.rules.store_of(r.instance);
        if self.rules.ids() {
            w.id_table.insert((st, r.id), IdEntry::Answered(self.rules.answer_of(r.round)));
        } else if let (true, Some(key)) = (self.rules.keys(), r.key) {
            self.record(w, st, c, key);
        }
    }

    /// The completed record of call `c`'s key `key` is written in store `st`; the key no
    /// longer runs.
    fn record(&self, w: &mut World, st: usize, c: usize, key: u8) {
        w.running.remove(&(st, c, key));
        if self.rules.server == ServerImpl::KeyVolatile {
            w.volatile.insert((st, c, key));
        } else {
            w.durable.insert((st, c, key));
        }
    }

    /// Instance `i`'s process is killed: what it holds in memory is lost (its requests, the
    /// in-progress marks of the keys they run, in a shared store too, its in-memory records
    /// and id table). The requests in transit go to another instance, and are lost only when
    /// none is left; so are the cancellations of the requests it held.
    fn crash(&self, w: &mut World, i: usize) {
        w.up[i] = false;
        w.crashes += 1;
        let none_left = !w.any_up();
        let own = self.rules.store_of(i);
        let task_records = self.rules.server == ServerImpl::ValidatesTaskId;
        for (c, call) in w.calls.iter_mut().enumerate() {
            for r in &mut call.requests {
                let held = r.fate.held_in_memory() && r.instance == i;
                if let (true, Some(key), false, false) = (held, r.key, r.fate == Fate::Held, task_records) {
                    w.running.remove(&(own, c, key));
                }
                if held || (r.fate == Fate::InTransit && none_left) {
                    r.fate = Fate::Lost;
                }
            }
        }
        if none_left {
            w.wire.clear();
        } else {
            let calls = &w.calls;
            w.wire.retain(|m| !matches!(*m, Message::Cancel(c, a) if calls[c].requests[a].fate == Fate::Lost));
        }
        if !task_records && (self.rules.own_stores || none_left) {
            w.running.retain(|(st, ..)| *st != own);
        }
        w.volatile.retain(|(st, ..)| *st != own);
        if self.rules.server != ServerImpl::DedupByIdDurable {
            w.id_table.retain(|(st, _), _| *st != own);
        }
    }

    /// With `idempotency_in_progress = wait`, after every step: a held duplicate whose key has
    /// a completed record is answered from it; one whose key no longer runs takes the key and
    /// runs (the first such, in the order calls and attempts were sent).
    pub(crate) fn wake_held(&self, w: &mut World) {
        if self.rules.in_progress != InProgress::Wait {
            return;
        }
        for c in 0..w.calls.len() {
            for a in 0..w.calls[c].requests.len() {
                let r = w.calls[c].requests[a];
                let (Fate::Held, Some(key)) = (r.fate, r.key) else { continue };
                let st = self.rules.store_of(r.instance);
                if self.completed(w, st, c, key) {
                    w.calls[c].requests[a].fate = Fate::Replayed(self.rules.answer_of(r.round));
                } else if !w.running.contains(&(st, c, key)) {
                    w.running.insert((st, c, key));
                    w.calls[c].requests[a].fate = Fate::Running;
                }
            }
        }
    }
}
