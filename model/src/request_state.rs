//! Which input-required answer an MRTR request answers, and so which `requestState` it
//! carries: the client echoes the `requestState` of the answer it read ("the client **MUST**
//! echo back the exact value of that field when retrying the original request", 2026-07-28
//! `mrtr.mdx`), and a retry resends its request, that `requestState` with it.

use crate::state::{ClientSide, ServerSide, State};

/// The attempt of call `c` whose input-required answer attempt `a` (of `round`) answers: the
/// latest earlier attempt whose answer the client read and that asked for input. `None` for a
/// first request (round 0), which answers nothing.
///
/// An attempt sent after that answer was read answers it until the client reads another one,
/// which only a later attempt can bring (the attempts before `a` had ended, for the client, when
/// `a` was sent), so this reads the same in any state after `a` was sent.
pub fn answered_request(s: &State, c: usize, a: usize, round: u8) -> Option<usize> {
    if round == 0 {
        return None;
    }
    (0..a).rev().find(|&x| {
        let t = s.attempts[c][x];
        t.client == ClientSide::Answered && t.server.asks_input()
    })
}

/// The attempt whose input-required answer first carried the `requestState` that attempt `x`
/// of call `c` read: `x` itself, unless its answer was the one a key store replays (stored with
/// its key and round by an earlier attempt of the call, and replayed byte for byte, the same
/// `requestState` with it). An id table's replayed answer is taken as `x`'s own.
pub fn state_origin(s: &State, c: usize, x: usize, keys: bool) -> usize {
    let t = s.attempts[c][x];
    if !keys || t.server != ServerSide::RespondedReplayInput || t.key == 0 {
        return x;
    }
    (0..x)
        .find(|&y| {
            let u = s.attempts[c][y];
            u.key == t.key && u.round == t.round && u.server == ServerSide::RespondedInput
        })
        .unwrap_or(x)
}

/// The attempt whose input-required answer first carried the `requestState` that attempt `a`
/// (of `round`) presents: [`answered_request`], traced back through a key store's replay
/// ([`state_origin`]).
///
/// A client that gave up on a request may learn its input-required answer from an outcome query
/// instead (the record stored with the request's key): where it read none, the latest earlier
/// input-required answer of the round before is the one it answers.
pub fn presented_state(s: &State, c: usize, a: usize, round: u8, keys: bool) -> Option<usize> {
    if round == 0 {
        return None;
    }
    let queried =
        || (0..a).rev().find(|&x| s.attempts[c][x].server.asks_input() && s.attempts[c][x].round == round - 1);
    answered_request(s, c, a, round).or_else(queried).map(|x| state_origin(s, c, x, keys))
}
