//! Which input-required answer an MRTR request answers, and so which `requestState` it
//! carries: the client echoes the `requestState` of the answer it read ("the client **MUST**
//! echo back the exact value of that field when retrying the original request", 2026-07-28
//! `mrtr.mdx`), and a retry resends its request, that `requestState` with it.

use crate::state::{ClientSide, State};

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
