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

    /// Whether the store holds a completed record of call `c`'s key `key`.
    pub(crate) fn completed(&self, w: &World, c: usize, key: u8) -> bool {
        match self.rules.server {
            ServerImpl::KeyVolatile => w.volatile.contains(&(c, key)),
            ServerImpl::KeyDurable
            | ServerImpl::KeyAfterEffect
            | ServerImpl::KeyExpiring
            | ServerImpl::ValidatesTaskId => w.durable.contains(&(c, key)),
            _ => false,
        }
    }

    /// Whether message `i` on the wire can be read now: the first on stdio, any on HTTP; a
    /// cancellation never before its own request.
    fn readable(&self, w: &World, i: usize) -> bool {
        if self.rules.stdio && i != 0 {
            return false;
        }
        match w.wire[i] {
            Message::Cancel(c, a) => !w.wire.contains(&Message::Request(c, a)),
            Message::Request(..) => true,
        }
    }

    /// The server's (and the environment's) steps in `w`.
    pub(crate) fn server_steps(&self, w: &World, out: &mut Vec<Step>) {
        if w.up {
            for (i, m) in w.wire.iter().enumerate() {
                if self.readable(w, i) {
                    out.push(match *m {
                        Message::Request(c, a) => Step::Read(c, a),
                        Message::Cancel(c, a) => Step::ReadCancel(c, a),
                    });
                }
            }
            for (c, call) in w.calls.iter().enumerate() {
                for (a, r) in call.requests.iter().enumerate() {
                    match r.fate {
                        Fate::Running => out.push(Step::Commit(c, a)),
                        Fate::EffectOnly => out.push(Step::StoreKey(c, a)),
                        Fate::Done => out.push(Step::Respond(c, a)),
                        _ => {}
                    }
                }
            }
            if w.crashes < self.rules.crashes {
                out.push(Step::Crash);
            }
        } else {
            out.push(Step::Restart);
        }
        if self.rules.expiry {
            out.extend(w.durable.iter().map(|(c, k)| Step::Expire(*c, *k)));
        }
    }

    /// Take a server or environment step.
    pub(crate) fn server_step(&self, w: &mut World, step: Step) -> bool {
        match step {
            Step::Read(c, a) => {
                w.wire.retain(|m| *m != Message::Request(c, a));
                self.read_request(w, c, a);
            }
            Step::ReadCancel(c, a) => {
                w.wire.retain(|m| *m != Message::Cancel(c, a));
                self.read_cancel(w, c, a);
            }
            Step::Commit(c, a) => self.commit(w, c, a),
            Step::StoreKey(c, a) => {
                let key = w.calls[c].requests[a].key.expect("a key to store");
                self.record(w, c, key);
                w.calls[c].requests[a].fate = Fate::Done;
            }
            Step::Respond(c, a) => w.calls[c].requests[a].fate = Fate::Answered,
            Step::Crash => self.crash(w),
            Step::Restart => {
                w.up = true;
                w.counter = 1;
            }
            Step::Expire(c, k) => {
                w.durable.remove(&(c, k));
            }
            _ => unreachable!("not a server step: {step}"),
        }
        true
    }

    /// The server reads the request of `(c, a)` and decides, from its id table or key store,
    /// whether it runs, is answered from a record, waits, or is rejected.
    fn read_request(&self, w: &mut World, c: usize, a: usize) {
        let r = w.calls[c].requests[a];
        let fate = if self.rules.ids() {
            match w.id_table.get(&r.id) {
                None => {
                    w.id_table.insert(r.id, IdEntry { completed: false });
                    Fate::Running
                }
                Some(IdEntry { completed: false }) => Fate::Rejected,
                Some(IdEntry { completed: true }) => Fate::Replayed,
            }
        } else if let (true, Some(key)) = (self.rules.keys(), r.key) {
            let running = w.running.contains(&(c, key));
            let done = self.completed(w, c, key) && self.sabotage != Some(Sabotage::KeyStoreRunsDuplicates);
            let dedup = self.rules.semantics == KeySemantics::Dedup;
            if self.rules.server == ServerImpl::ValidatesTaskId && (running || done) {
                Fate::Rejected
            } else if dedup && done {
                Fate::Replayed
            } else if dedup && running && self.rules.in_progress == InProgress::Reject {
                Fate::Rejected
            } else if dedup && running && self.rules.in_progress == InProgress::Wait {
                Fate::Held
            } else {
                w.running.insert((c, key));
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
        if let (Some(key), false, false) = (r.key, r.fate == Fate::Held, task_record) {
            w.running.remove(&(c, key));
        }
        if r.fate == Fate::Running && self.rules.ids() {
            w.id_table.remove(&r.id);
        }
    }

    /// The tool takes its effect for `(c, a)`; the id table, or the key record where it is
    /// written with the effect, completes in the same step.
    fn commit(&self, w: &mut World, c: usize, a: usize) {
        w.ledger[c] += 1;
        let r = w.calls[c].requests[a];
        let mut fate = Fate::Done;
        if self.rules.ids() {
            w.id_table.insert(r.id, IdEntry { completed: true });
        } else if let (true, Some(key)) = (self.rules.keys(), r.key) {
            if self.rules.server == ServerImpl::KeyAfterEffect {
                fate = Fate::EffectOnly;
            } else {
                self.record(w, c, key);
            }
        }
        w.calls[c].requests[a].fate = fate;
    }

    /// The completed record of call `c`'s key `key` is written; the key no longer runs.
    fn record(&self, w: &mut World, c: usize, key: u8) {
        w.running.remove(&(c, key));
        if self.rules.server == ServerImpl::KeyVolatile {
            w.volatile.insert((c, key));
        } else {
            w.durable.insert((c, key));
        }
    }

    /// The process is killed: what it holds in memory is lost (requests, in-progress marks,
    /// in-memory records and id tables), and so are the requests still in transit.
    fn crash(&self, w: &mut World) {
        w.up = false;
        w.crashes += 1;
        for call in &mut w.calls {
            for r in &mut call.requests {
                if r.fate.held_in_memory() || r.fate == Fate::InTransit {
                    r.fate = Fate::Lost;
                }
            }
        }
        w.wire.clear();
        if self.rules.server != ServerImpl::ValidatesTaskId {
            w.running.clear();
        }
        w.volatile.clear();
        if self.rules.server != ServerImpl::DedupByIdDurable {
            w.id_table.clear();
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
                if self.completed(w, c, key) {
                    w.calls[c].requests[a].fate = Fate::Replayed;
                } else if !w.running.contains(&(c, key)) {
                    w.running.insert((c, key));
                    w.calls[c].requests[a].fate = Fate::Running;
                }
            }
        }
    }
}
