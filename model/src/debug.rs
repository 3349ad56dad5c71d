//! How a state reads: its `Debug`, which is what stateright's Explorer shows for every state
//! (and what a failing test prints). It says, in the model's own words, where each started
//! logical call stands, its attempts (JSON-RPC id, idempotency key, client and server side),
//! the server (up or down, crashes, its inbox, ids it has seen) and the ledger per call. The
//! view's flags, calls not started and attempts not sent are left out: the bounds live in the
//! model, not in the state, so a call shows once it starts and an attempt once it is sent.

use crate::state::{
    Call, Failure, Phase, ServerSide, State, ID_ANSWERED, ID_CALL, ID_INPUT, ID_INPUT_ROUND, MAX_ATTEMPTS, MAX_CALLS,
    MAX_IDS, MAX_INSTANCES,
};
use std::fmt;

/// Key `key` (generation + 1) of call `c`, as the trace reports write it (`k0.1`).
fn key_name(c: usize, key: u8) -> String {
    format!("k{c}.{}", key - 1)
}

/// The keys whose bits are set in `bits`, for call `c`, or `-`.
fn key_set(c: usize, bits: u8) -> String {
    let names: Vec<String> = (1..=8u8).filter(|k| bits & (1 << (k - 1)) != 0).map(|k| key_name(c, k)).collect();
    if names.is_empty() {
        "-".into()
    } else {
        names.join(" ")
    }
}

fn phase(call: &Call) -> String {
    let why = match call.failure {
        Failure::None => "",
        Failure::Timeout => " (timeout)",
        Failure::Disconnect => " (disconnect)",
        Failure::ErrorReply => " (error reply)",
        Failure::StepError => " (step error)",
    };
    match call.phase {
        Phase::Idle => "not started".into(),
        Phase::Waiting => "waiting".into(),
        Phase::CancelPending => format!("cancel pending{why}"),
        Phase::Failed => format!("failed{why}"),
        Phase::Succeeded => "succeeded".into(),
        Phase::InputRequired => "input required".into(),
    }
}

impl State {
    /// The lines of the state's description.
    fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        let started = self.calls.iter().take_while(|c| c.phase != Phase::Idle).count();
        if started == 0 {
            out.push("no call started".into());
        }
        for (c, call) in self.calls.iter().enumerate().take(started) {
            let mut head = format!("call {c}: {}, {} sent", phase(call), call.sent);
            if call.step > 0 {
                head.push_str(&format!(", framework step {}", call.step));
            }
            if call.queried {
                head.push_str(", outcome asked");
            }
            out.push(head);
            for (a, t) in self.attempts[c].iter().enumerate().take(call.sent as usize) {
                let key = if t.key == 0 { "no key".to_string() } else { format!("key {}", key_name(c, t.key)) };
                let round = if t.round == 0 { String::new() } else { format!(", continuation {}", t.round) };
                let on = if self.view.instances > 1 && t.server != ServerSide::Unseen {
                    format!(", instance {}", t.instance)
                } else {
                    String::new()
                };
                let replayed = if t.server == ServerSide::RespondedReplayInput {
                    format!(" (round {}'s)", t.replayed_round)
                } else {
                    String::new()
                };
                let task = if t.task { ", task id held" } else { "" };
                let foreign = if t.foreign { " (another caller's record)" } else { "" };
                out.push(format!(
                    "  attempt {a}: id {}, {key}{round}, client {:?}{task}, server {:?}{foreign}{replayed}{on}",
                    t.id, t.client, t.server
                ));
            }
            let stores: Vec<String> = (0..self.view.instances.max(1) as usize)
                .map(|i| {
                    let whose = if self.view.instances > 1 { format!("store {i} ") } else { String::new() };
                    format!(
                        "{whose}key records: durable {}, volatile {}, running {}",
                        key_set(c, self.keys_durable[i][c]),
                        key_set(c, self.keys_volatile[i][c]),
                        key_set(c, self.keys_running[i][c])
                    )
                })
                .collect();
            out.push(format!("  ledger: {} effect(s); {}", self.ledger[c], stores.join("; ")));
        }
        let crashes = match self.server.crashes {
            1 => "1 crash".to_string(),
            n => format!("{n} crashes"),
        };
        let up: Vec<&str> =
            (0..self.view.instances.max(1) as usize).map(|i| if self.server.up[i] { "up" } else { "down" }).collect();
        out.push(format!("server: {}, {crashes}, next id {}", up.join(" and "), self.next_id));
        let inbox: Vec<String> = self
            .inbox
            .iter()
            .map(|m| {
                let what = if m.is_cancel() { "cancel of" } else { "request" };
                format!("{what} call {} attempt {}", m.call(), m.attempt())
            })
            .collect();
        out.push(format!("inbox: {}", if inbox.is_empty() { "empty".into() } else { inbox.join(", ") }));
        let ids: Vec<String> = (0..MAX_INSTANCES)
            .flat_map(|i| (1..=MAX_IDS).map(move |id| (i, id)))
            .filter(|(i, id)| self.ids_seen[*i][*id] != 0)
            .map(|(i, id)| {
                let v = self.ids_seen[i][id];
                let done = match (v & ID_ANSWERED != 0, v & ID_INPUT != 0) {
                    (false, _) => String::new(),
                    (true, false) => ", completed".into(),
                    (true, true) => {
                        format!(", completed, input-required answer of round {}", u8::from(v & ID_INPUT_ROUND != 0))
                    }
                };
                let store = if i > 0 { format!(", store {i}") } else { String::new() };
                format!("{id} (call {}{done}{store})", (v & ID_CALL) - 1)
            })
            .collect();
        if !ids.is_empty() {
            out.push(format!("ids seen: {}", ids.join(", ")));
        }
        let consumed: Vec<String> = (0..MAX_CALLS)
            .flat_map(|c| (0..MAX_ATTEMPTS).map(move |a| (c, a)))
            .filter(|(c, a)| self.consumed[*c] & 1 << a != 0)
            .map(|(c, a)| format!("call {c} attempt {a}'s"))
            .collect();
        if !consumed.is_empty() {
            out.push(format!("requestStates consumed: {}", consumed.join(", ")));
        }
        out
    }
}

/// `{:#?}` (the Explorer's) writes one fact per line; `{:?}` writes them on one line.
impl fmt::Debug for State {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let separator = if f.alternate() { "\n" } else { "; " };
        f.write_str(&self.lines().join(separator))
    }
}

#[cfg(test)]
mod tests {
    use crate::state::{Attempt, ClientSide, Msg, Phase, ServerSide, State, View};

    #[test]
    fn a_state_reads_in_the_models_words_without_flags_or_unused_slots() {
        let mut s = State::initial(View { lean: true, ids_matter: true, instances: 1, ..View::default() });
        assert_eq!(format!("{s:?}"), "no call started; server: up, 0 crashes, next id 1; inbox: empty");
        s.calls[0].phase = Phase::Failed;
        s.calls[0].failure = crate::state::Failure::Timeout;
        s.calls[0].sent = 1;
        s.attempts[0][0] = Attempt {
            id: 1,
            key: 1,
            client: ClientSide::Abandoned,
            server: ServerSide::Committed,
            round: 0,
            instance: 0,
            replayed_round: 0,
            task: false,
            foreign: false,
        };
        s.ledger[0] = 1;
        s.keys_durable[0][0] = 1;
        s.inbox.push(Msg::cancel(0, 0), true);
        s.ids_seen[0][1] = 0x81;
        s.server.crashes = 1;
        let shown = format!("{s:#?}");
        assert_eq!(
            shown,
            "call 0: failed (timeout), 1 sent\n\
             \x20 attempt 0: id 1, key k0.0, client Abandoned, server Committed\n\
             \x20 ledger: 1 effect(s); key records: durable k0.0, volatile -, running -\n\
             server: up, 1 crash, next id 1\n\
             inbox: cancel of call 0 attempt 0\n\
             ids seen: 1 (call 0, completed)"
        );
        for hidden in ["lean", "ids_matter", "view", "call 1", "attempt 1", "Unsent"] {
            assert!(!shown.contains(hidden), "{hidden} shown: {shown}");
        }
    }
}
