//! Fixed-size byte encodings of a state and of an action, for the search that spills to disk
//! (`search/spill.rs`, through `McpModel`'s `DiskCodec` in `search_model.rs`): a state is
//! written as every one of its fields (not its packed view, which leaves facts out), so that
//! reading it back gives the very state that was written.
//!
//! The view is the same for every state of a run, so it is not written: decoding takes it.

use crate::action::Action;
use crate::state::{
    Attempt, Call, ClientSide, Failure, Inbox, Phase, Server, ServerSide, State, View, INBOX_CAP, MAX_ATTEMPTS,
    MAX_CALLS, MAX_IDS, MAX_INSTANCES,
};

/// Bytes of one encoded state.
pub const STATE_BYTES: usize = MAX_CALLS * 5
    + MAX_CALLS * MAX_ATTEMPTS * 7
    + 1
    + 1
    + INBOX_CAP
    + MAX_INSTANCES
    + 2
    + MAX_CALLS
    + 3 * MAX_INSTANCES * MAX_CALLS
    + MAX_INSTANCES * (MAX_IDS + 1)
    + MAX_CALLS;

/// Bytes of one encoded action.
pub const ACTION_BYTES: usize = 3;

/// Write every field of `s` (not its view) into `out`.
pub fn encode_state(s: &State, out: &mut [u8; STATE_BYTES]) {
    let mut at = 0;
    let mut put = |b: u8| {
        out[at] = b;
        at += 1;
    };
    for c in &s.calls {
        for b in [c.phase as u8, c.failure as u8, c.sent, c.step, c.queried as u8] {
            put(b);
        }
    }
    for t in s.attempts.iter().flatten() {
        for b in [
            t.id,
            t.key,
            t.client as u8 | (t.task as u8) << 7,
            t.server as u8 | (t.foreign as u8) << 7,
            t.round,
            t.instance,
            t.replayed_round,
        ] {
            put(b);
        }
    }
    put(s.next_id);
    put(s.inbox.len);
    s.inbox.msgs.iter().for_each(|m| put(*m));
    s.server.up.iter().for_each(|u| put(*u as u8));
    put(s.server.crashes);
    put(s.server.session_ends);
    s.ledger.iter().for_each(|b| put(*b));
    for store in [&s.keys_durable, &s.keys_volatile, &s.keys_running] {
        store.iter().flatten().for_each(|b| put(*b));
    }
    s.ids_seen.iter().flatten().for_each(|b| put(*b));
    s.consumed.iter().for_each(|b| put(*b));
}

/// Read back a state [`encode_state`] wrote, under `view`; `None` if the bytes are not one.
pub fn decode_state(bytes: &[u8; STATE_BYTES], view: View) -> Option<State> {
    let mut it = bytes.iter().copied();
    let mut next = || it.next();
    let mut s = State::initial(view);
    for c in &mut s.calls {
        *c = Call {
            phase: phase(next()?)?,
            failure: failure(next()?)?,
            sent: next()?,
            step: next()?,
            queried: flag(next()?)?,
        };
    }
    for t in s.attempts.iter_mut().flatten() {
        let (id, key, side) = (next()?, next()?, next()?);
        let server_side = next()?;
        *t = Attempt {
            id,
            key,
            // The client side's high bit: whether the client holds the attempt's task id.
            client: client(side & 0x7f)?,
            task: side & 0x80 != 0,
            // The server side's high bit: whether it was answered from another caller's record.
            server: server(server_side & 0x7f)?,
            foreign: server_side & 0x80 != 0,
            round: next()?,
            instance: next()?,
            replayed_round: next()?,
        };
    }
    s.next_id = next()?;
    let mut inbox = Inbox { len: next()?, msgs: [0; INBOX_CAP] };
    for m in &mut inbox.msgs {
        *m = next()?;
    }
    s.inbox = inbox;
    s.server = Server { up: [flag(next()?)?, flag(next()?)?], crashes: next()?, session_ends: next()? };
    for b in &mut s.ledger {
        *b = next()?;
    }
    for store in [&mut s.keys_durable, &mut s.keys_volatile, &mut s.keys_running] {
        for b in store.iter_mut().flatten() {
            *b = next()?;
        }
    }
    for b in s.ids_seen.iter_mut().flatten() {
        *b = next()?;
    }
    for b in &mut s.consumed {
        *b = next()?;
    }
    Some(s)
}

fn flag(b: u8) -> Option<bool> {
    match b {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// Every variant of an enum without fields, in a constant, with a `match` that stops the build
/// when a variant is added and not listed.
macro_rules! variants {
    ($name:ident, $ty:ident, [$($v:ident),* $(,)?]) => {
        fn $name(b: u8) -> Option<$ty> {
            const ALL: &[$ty] = &[$($ty::$v),*];
            #[allow(dead_code)]
            fn every_variant_listed(x: $ty) {
                match x {
                    $($ty::$v)|* => {}
                }
            }
            ALL.iter().copied().find(|x| *x as u8 == b)
        }
    };
}

variants!(phase, Phase, [Idle, Waiting, CancelPending, Failed, Succeeded, InputRequired]);
variants!(failure, Failure, [None, Timeout, Disconnect, ErrorReply, StepError]);
variants!(client, ClientSide, [Unsent, Waiting, Abandoned, Answered, Broken]);
variants!(
    server,
    ServerSide,
    [
        Unseen,
        Pending,
        Effected,
        Committed,
        RespondedOk,
        RespondedReplay,
        RespondedError,
        Dropped,
        Lost,
        Interrupted,
        RespondedInput,
        RespondedReplayInput,
        Waiting
    ]
);

/// An action as three bytes: which step, and its two parameters (0 where it has fewer).
pub fn encode_action(a: Action) -> [u8; ACTION_BYTES] {
    use Action::*;
    match a {
        ClientCall { call } => [0, call, 0],
        ClientTimeout { call, attempt } => [1, call, attempt],
        ClientCancel { call, attempt } => [2, call, attempt],
        ClientReceive { call, attempt } => [3, call, attempt],
        ClientSeesDisconnect { call, attempt } => [4, call, attempt],
        ClientQueryOutcome { call } => [5, call, 0],
        ClientRetry { call, attempt } => [6, call, attempt],
        StepFails { call } => [7, call, 0],
        FrameworkRetry { call, attempt } => [8, call, attempt],
        StreamBreak { call, attempt } => [9, call, attempt],
        ServerReceive { call, attempt, instance } => [10 | instance << 7, call, attempt],
        ServerReceiveCancel { call, attempt } => [11, call, attempt],
        ServerCommit { call, attempt } => [12, call, attempt],
        ServerStoreKey { call, attempt } => [13, call, attempt],
        ServerRespond { call, attempt } => [14, call, attempt],
        ServerCrash { instance } => [15, instance, 0],
        ServerRestart { instance } => [16, instance, 0],
        KeyExpires { call, key } => [17, call, key],
        ClientContinue { call, attempt } => [18, call, attempt],
        SessionTerminated {} => [19, 0, 0],
    }
}

/// Read back an action [`encode_action`] wrote; `None` if the bytes are not one.
pub fn decode_action([tag, call, attempt]: [u8; ACTION_BYTES]) -> Option<Action> {
    use Action::*;
    // A request read by the second instance has bit 7 of its tag set.
    if tag == 10 | 1 << 7 {
        return Some(ServerReceive { call, attempt, instance: 1 });
    }
    Some(match tag {
        0 => ClientCall { call },
        1 => ClientTimeout { call, attempt },
        2 => ClientCancel { call, attempt },
        3 => ClientReceive { call, attempt },
        4 => ClientSeesDisconnect { call, attempt },
        5 => ClientQueryOutcome { call },
        6 => ClientRetry { call, attempt },
        7 => StepFails { call },
        8 => FrameworkRetry { call, attempt },
        9 => StreamBreak { call, attempt },
        10 => ServerReceive { call, attempt, instance: 0 },
        11 => ServerReceiveCancel { call, attempt },
        12 => ServerCommit { call, attempt },
        13 => ServerStoreKey { call, attempt },
        14 => ServerRespond { call, attempt },
        15 => ServerCrash { instance: call },
        16 => ServerRestart { instance: call },
        17 => KeyExpires { call, key: attempt },
        18 => ClientContinue { call, attempt },
        19 => SessionTerminated {},
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ClientPolicy, Config, HandlerKind, KeyLifetime, ServerImpl, Transport};
    use crate::model::McpModel;
    use stateright::Model;

    #[test]
    fn states_and_actions_read_back_as_written() {
        let profiles = crate::catalogue::builtin_profiles();
        let profile = profiles.into_iter().find(|p| p.name == "mcp-2026-07-28").unwrap();
        // A tool that asks for input: rounds, continuations and input-required answers are
        // written and read back too.
        let config = Config::builder(&profile.name)
            .transport(Transport::Http)
            .client(ClientPolicy::FrameworkRetry)
            .key(KeyLifetime::None)
            .server(ServerImpl::DedupByIdDurable)
            .handler(HandlerKind::InputAfterEffect)
            .calls(2)
            .build();
        let model = McpModel::new(config, profile).unwrap();
        let (mut frontier, mut checked, mut continued) = (model.init_states(), 0, false);
        let mut actions = Vec::new();
        while let Some(s) = frontier.pop() {
            if checked > 2000 {
                break;
            }
            let mut bytes = [0u8; STATE_BYTES];
            encode_state(&s, &mut bytes);
            let back = decode_state(&bytes, s.view).expect("a state");
            assert_eq!(format!("{back:?}"), format!("{s:?}"));
            checked += 1;
            actions.clear();
            model.actions(&s, &mut actions);
            for a in actions.drain(..) {
                assert_eq!(decode_action(encode_action(a)), Some(a));
                continued |= matches!(a, Action::ClientContinue { .. });
                frontier.extend(model.next_state(&s, a));
            }
        }
        assert!(checked > 2000 && continued);
    }

    #[test]
    fn a_replayed_input_request_and_the_kind_an_id_table_stored_read_back() {
        use crate::state::{ID_ANSWERED, ID_INPUT, ID_INPUT_ROUND};
        let mut s = State::initial(View::default());
        s.attempts[1][2].server = ServerSide::RespondedReplayInput;
        s.attempts[1][2].replayed_round = 1;
        s.ids_seen[1][5] = 2 | ID_ANSWERED | ID_INPUT | ID_INPUT_ROUND;
        s.consumed[2] = 0b101;
        let mut bytes = [0u8; STATE_BYTES];
        encode_state(&s, &mut bytes);
        let back = decode_state(&bytes, s.view).expect("a state");
        assert_eq!((back.attempts, back.ids_seen, back.consumed), (s.attempts, s.ids_seen, s.consumed));
    }
}
