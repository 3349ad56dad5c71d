//! The reference model as a stateright [`Model`]: the steps each state offers, and what each
//! does. The client's half is here, the server's in `server.rs`.

use crate::property::{holds, Goal};
use crate::rules::Rules;
use crate::state::{CallPhase, Failure, Fate, LogicalCall, Message, Request, Seen, World};
use mcp_once_model::config::{Handler, KeyLifetime};
use mcp_once_model::profile::IdScope;
use mcp_once_model::PropertyKind;
use stateright::{Model, Property};
use std::fmt;

/// One step, named as the main model's action vocabulary names the same event, so that two
/// traces can be read side by side. `c` is a call, `a` an attempt (both from 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Step {
    /// The client starts call `c`.
    Call(usize),
    /// The client stops waiting for attempt `a`.
    Timeout(usize, usize),
    /// The client cancels the attempt it stopped waiting for.
    Cancel(usize, usize),
    /// The client reads the answer to attempt `a`.
    Receive(usize, usize),
    /// The client sees the connection of attempt `a` close.
    SeesDisconnect(usize, usize),
    /// The client asks the outcome of call `c`'s key.
    AskOutcome(usize),
    /// The client sends call `c` again as attempt `a`.
    Retry(usize, usize),
    /// The step around call `c` fails after the call returned.
    StepFails(usize),
    /// The framework re-runs the step of call `c`, sending attempt `a`.
    Rerun(usize, usize),
    /// The client answers the input-required answer it read (MRTR) and sends call `c`'s
    /// continuation as attempt `a`.
    Continue(usize, usize),
    /// The response stream of attempt `a` breaks.
    StreamBreak(usize, usize),
    /// Instance `i` reads the request of attempt `a` (the load balancer's choice).
    Read(usize, usize, usize),
    /// The server reads the cancellation of attempt `a`.
    ReadCancel(usize, usize),
    /// The tool takes its effect for attempt `a`.
    Commit(usize, usize),
    /// The server writes the key record of attempt `a`, after its effect.
    StoreKey(usize, usize),
    /// The server writes the success of attempt `a`.
    Respond(usize, usize),
    /// Instance `i`'s process is killed.
    Crash(usize),
    /// Instance `i`'s process is started again.
    Restart(usize),
    /// The record of call `c`'s key `k` leaves the retention window.
    Expire(usize, u8),
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Step::*;
        let (name, call, attempt) = match *self {
            Call(c) => ("ClientCall", Some(c), None),
            Timeout(c, a) => ("ClientTimeout", Some(c), Some(a)),
            Cancel(c, a) => ("ClientCancel", Some(c), Some(a)),
            Receive(c, a) => ("ClientReceive", Some(c), Some(a)),
            SeesDisconnect(c, a) => ("ClientSeesDisconnect", Some(c), Some(a)),
            AskOutcome(c) => ("ClientQueryOutcome", Some(c), None),
            Retry(c, a) => ("ClientRetry", Some(c), Some(a)),
            StepFails(c) => ("StepFails", Some(c), None),
            Rerun(c, a) => ("FrameworkRetry", Some(c), Some(a)),
            Continue(c, a) => ("ClientContinue", Some(c), Some(a)),
            StreamBreak(c, a) => ("StreamBreak", Some(c), Some(a)),
            Read(c, a, 0) => ("ServerReceive", Some(c), Some(a)),
            Read(c, a, i) => return write!(f, "ServerReceive(call {c}, attempt {a}, instance {i})"),
            ReadCancel(c, a) => ("ServerReceiveCancel", Some(c), Some(a)),
            Commit(c, a) => ("ServerCommit", Some(c), Some(a)),
            StoreKey(c, a) => ("ServerStoreKey", Some(c), Some(a)),
            Respond(c, a) => ("ServerRespond", Some(c), Some(a)),
            Crash(0) => ("ServerCrash", None, None),
            Restart(0) => ("ServerRestart", None, None),
            Crash(i) => return write!(f, "ServerCrash(instance {i})"),
            Restart(i) => return write!(f, "ServerRestart(instance {i})"),
            Expire(c, k) => return write!(f, "KeyExpires(call {c}, key {k})"),
        };
        match (call, attempt) {
            (Some(c), Some(a)) => write!(f, "{name}(call {c}, attempt {a})"),
            (Some(c), None) => write!(f, "{name}(call {c})"),
            _ => write!(f, "{name}"),
        }
    }
}

/// The reference model of one cell, with the one thing a run looks for.
#[derive(Clone, Debug)]
pub struct Reference {
    /// The cell's facts.
    pub rules: Rules,
    /// What a run looks for.
    pub goal: Goal,
    /// A transition broken on purpose, to show that the comparison can fail.
    pub sabotage: Option<Sabotage>,
}

/// A transition broken on purpose ([`Reference::sabotage`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sabotage {
    /// A key store forgets to replay: a request whose key has a completed record runs again.
    KeyStoreRunsDuplicates,
    /// A continuation is sent as a request of the round it answers, not of the round after it
    /// (the client resends the round whose input-required answer it read).
    ContinuationRepeatsRound,
}

impl Reference {
    /// The id the next attempt of call `c`, of `round`, carries: a retry's under
    /// `retry_request_id = same`; else the lowest the id scope allows, and for a request of a
    /// later round (a continuation or its retry) not the id of the request whose input-required
    /// answer it answers (mrtr.mdx: "different between the initial request and the retry").
    fn new_id(&self, w: &World, c: usize, round: u8, continuation: bool) -> u8 {
        if self.rules.same_id && !continuation {
            if let Some(last) = w.calls[c].requests.last() {
                return last.id;
            }
        }
        let answered = (round > 0)
            .then(|| w.calls[c].requests.iter().rev().find(|r| r.seen == Seen::Read && self.asked_input(r)))
            .flatten()
            .map(|r| r.id);
        match self.rules.id_scope {
            IdScope::Session => (w.counter..).find(|id| Some(*id) != answered).expect("a free id"),
            IdScope::Outstanding => (1..)
                .find(|id| {
                    Some(*id) != answered
                        && !w.calls.iter().flat_map(|k| &k.requests).any(|r| r.id == *id && r.seen != Seen::Read)
                })
                .expect("a free id"),
        }
    }

    /// Whether the answer written for request `r` is input-required (its handler's own, or a
    /// stored one written back).
    fn asked_input(&self, r: &Request) -> bool {
        match r.fate {
            Fate::Replayed(kind) => kind.is_some(),
            Fate::Answered => self.rules.asks_input(r.round),
            _ => false,
        }
    }

    /// The key the next attempt of call `c`, of `round` in framework step `step`, carries: none
    /// on a continuation unless continuations are inside the key's scope, where each round has
    /// a key of its own (per call: one per round; per step: one per step and round).
    fn new_key(&self, w: &World, c: usize, step: u8, round: u8) -> Option<u8> {
        if round > 0 && !self.rules.keyed_continuations {
            return None;
        }
        let rounds = Handler::MAX_ROUNDS + 1;
        match self.rules.key {
            KeyLifetime::None => None,
            KeyLifetime::PerCall => Some(round),
            KeyLifetime::PerStep => Some(step * rounds + round),
            KeyLifetime::PerAttempt => Some(w.calls[c].requests.len() as u8),
        }
    }

    /// Call `c` sends a new attempt of `round` in framework step `step` (`continues`: as the
    /// continuation of an input-required answer).
    fn send(&self, w: &mut World, c: usize, step: u8, round: u8, continues: bool) {
        let id = self.new_id(w, c, round, continues);
        if self.rules.id_scope == IdScope::Session && id >= w.counter {
            w.counter = id + 1;
        }
        let key = self.new_key(w, c, step, round);
        // A request written to a server that is down fails at once: nothing reads it.
        let up = w.any_up();
        let fate = if up { Fate::InTransit } else { Fate::Lost };
        let call = &mut w.calls[c];
        if up {
            w.wire.push(Message::Request(c, call.requests.len()));
        }
        call.requests.push(Request { id, key, round, continues, seen: Seen::Waiting, fate, instance: 0 });
        *call =
            LogicalCall { phase: CallPhase::Waiting, step, asked: false, requests: std::mem::take(&mut call.requests) };
    }

    fn fail(w: &mut World, c: usize, why: Failure) {
        w.calls[c].phase = CallPhase::Failed(why);
        w.calls[c].asked = false;
    }

    /// The client's steps in `w`.
    fn client_steps(&self, w: &World, out: &mut Vec<Step>) {
        for c in 0..self.rules.calls {
            let call = &w.calls[c];
            let a = call.requests.len().saturating_sub(1);
            match call.phase {
                CallPhase::Idle => {
                    if c == 0 || w.calls[c - 1].phase != CallPhase::Idle {
                        out.push(Step::Call(c));
                    }
                }
                CallPhase::Waiting => {
                    let fate = call.requests[a].fate;
                    if fate.answered() {
                        out.push(Step::Receive(c, a));
                    }
                    if fate == Fate::Lost {
                        out.push(Step::SeesDisconnect(c, a));
                    } else if !self.rules.stdio && !self.rules.no_breaks {
                        out.push(Step::StreamBreak(c, a));
                    }
                    out.push(Step::Timeout(c, a));
                }
                CallPhase::Cancelling => out.push(Step::Cancel(c, a)),
                CallPhase::Failed(_) if self.rules.may_retry(w, c) => {
                    if self.rules.framework() {
                        out.push(Step::Rerun(c, a + 1));
                    } else if self.rules.queries() && !call.asked {
                        // Over stdio the query waits behind what the pipe still carries.
                        if w.any_up() && (!self.rules.stdio || w.wire.is_empty()) {
                            out.push(Step::AskOutcome(c));
                        }
                    } else {
                        out.push(Step::Retry(c, a + 1));
                    }
                }
                CallPhase::Failed(_) => {}
                CallPhase::InputRequired(round) => {
                    if self.rules.room_to_continue(w, c, round) {
                        out.push(Step::Continue(c, a + 1));
                    }
                }
                CallPhase::Succeeded => {
                    if self.rules.framework() {
                        out.push(Step::StepFails(c));
                    }
                }
            }
        }
    }

    /// Take a client step; `false` where it does nothing.
    fn client_step(&self, w: &mut World, step: Step) -> bool {
        match step {
            Step::Call(c) => self.send(w, c, 0, 0, false),
            Step::Timeout(c, a) => {
                w.calls[c].requests[a].seen = Seen::GaveUp;
                if self.rules.cancel_on_timeout {
                    w.calls[c].phase = CallPhase::Cancelling;
                } else {
                    Self::fail(w, c, Failure::Timeout);
                }
            }
            Step::Cancel(c, a) => {
                if w.any_up() && self.cancel_matters(w.calls[c].requests[a].fate) {
                    w.wire.push(Message::Cancel(c, a));
                }
                Self::fail(w, c, Failure::Timeout);
            }
            Step::Receive(c, a) => {
                let r = &mut w.calls[c].requests[a];
                r.seen = Seen::Read;
                let (fate, round) = (r.fate, r.round);
                w.calls[c].phase = match fate {
                    Fate::Rejected => CallPhase::Failed(Failure::ErrorReply),
                    Fate::Replayed(Some(asked)) => CallPhase::InputRequired(asked + 1),
                    Fate::Replayed(None) => CallPhase::Succeeded,
                    _ => self.after_result(round),
                };
                w.calls[c].asked = false;
            }
            Step::SeesDisconnect(c, a) => {
                w.calls[c].requests[a].seen = Seen::Broken;
                Self::fail(w, c, Failure::Disconnect);
            }
            Step::StreamBreak(c, a) => {
                w.calls[c].requests[a].seen = Seen::Broken;
                if self.rules.break_cancels && self.cancel_matters(w.calls[c].requests[a].fate) {
                    w.wire.push(Message::Cancel(c, a));
                }
                Self::fail(w, c, Failure::Disconnect);
            }
            Step::AskOutcome(c) => return self.ask_outcome(w, c),
            Step::Retry(c, _) => {
                let call = &w.calls[c];
                let (step, round) = (call.step, call.requests.last().map_or(0, |r| r.round));
                self.send(w, c, step, round, false);
            }
            Step::Rerun(c, _) => {
                let step = w.calls[c].step + 1;
                self.send(w, c, step, 0, false);
            }
            Step::Continue(c, _) => {
                let CallPhase::InputRequired(mut round) = w.calls[c].phase else { unreachable!("nothing to continue") };
                if self.sabotage == Some(Sabotage::ContinuationRepeatsRound) {
                    round -= 1;
                }
                let step = w.calls[c].step;
                self.send(w, c, step, round, true);
            }
            Step::StepFails(c) => Self::fail(w, c, Failure::StepError),
            _ => unreachable!("not a client step: {step}"),
        }
        true
    }

    /// The client asks the outcome of call `c`'s latest key, of any running instance, which
    /// answers from the one store: done (it has its result), still running (no answer it can
    /// act on: the step does not happen), or unknown (it retries).
    fn ask_outcome(&self, w: &mut World, c: usize) -> bool {
        let last = *w.calls[c].requests.last().expect("a request to ask about");
        match last.key {
            Some(key) if self.completed(w, 0, c, key) => {
                w.calls[c].phase = self.after_result(last.round);
                return true;
            }
            Some(key) if w.running.contains(&(0, c, key)) => return false,
            _ => w.calls[c].asked = true,
        }
        true
    }

    /// Where the client stands after reading the answer the handler gives a request of
    /// `round` (its own, or a key record's, which is of the same round): asked for the input of
    /// the round after it, or done.
    fn after_result(&self, round: u8) -> CallPhase {
        if self.rules.asks_input(round) {
            CallPhase::InputRequired(round + 1)
        } else {
            CallPhase::Succeeded
        }
    }
}

impl Model for Reference {
    type State = World;
    type Action = Step;

    fn init_states(&self) -> Vec<World> {
        vec![World::start(self.rules.calls, self.rules.instances)]
    }

    fn actions(&self, w: &World, out: &mut Vec<Step>) {
        self.client_steps(w, out);
        self.server_steps(w, out);
    }

    fn next_state(&self, last: &World, step: Step) -> Option<World> {
        let mut w = last.clone();
        let done = match step {
            Step::Call(_)
            | Step::Timeout(..)
            | Step::Cancel(..)
            | Step::Receive(..)
            | Step::SeesDisconnect(..)
            | Step::AskOutcome(_)
            | Step::Retry(..)
            | Step::StepFails(_)
            | Step::Rerun(..)
            | Step::Continue(..)
            | Step::StreamBreak(..) => self.client_step(&mut w, step),
            _ => self.server_step(&mut w, step),
        };
        if !done {
            return None;
        }
        self.wake_held(&mut w);
        Some(w)
    }

    fn format_action(&self, step: &Step) -> String {
        step.to_string()
    }

    fn properties(&self) -> Vec<Property<Self>> {
        match self.goal {
            Goal::Survey => survey(),
            _ => vec![Property::always("goal", |m: &Reference, w: &World| m.goal.fine(&m.rules, w))],
        }
    }
}

/// The properties of a [`Goal::Survey`] run: each property under its own name, then
/// `effects-K` for K from 1 to [`crate::property::SURVEYED_EFFECTS`] (fails where a call has
/// K effects).
fn survey() -> Vec<Property<Reference>> {
    vec![
        Property::always("at-most-once", |m: &Reference, w: &World| holds(PropertyKind::AtMostOnce, &m.rules, w)),
        Property::always("no-silent-effect", |m: &Reference, w: &World| {
            holds(PropertyKind::NoSilentEffect, &m.rules, w)
        }),
        Property::always("success-implies-effect", |m: &Reference, w: &World| {
            holds(PropertyKind::SuccessImpliesEffect, &m.rules, w)
        }),
        Property::always("exactly-once", |m: &Reference, w: &World| holds(PropertyKind::ExactlyOnce, &m.rules, w)),
        Property::always("effects-1", |_: &Reference, w: &World| w.most_effects() < 1),
        Property::always("effects-2", |_: &Reference, w: &World| w.most_effects() < 2),
        Property::always("effects-3", |_: &Reference, w: &World| w.most_effects() < 3),
        Property::always("effects-4", |_: &Reference, w: &World| w.most_effects() < 4),
    ]
}

/// How many properties a [`Goal::Survey`] run checks.
pub(crate) fn survey_len() -> usize {
    survey().len()
}
