//! The tool's handler under multi round-trip requests (MRTR, 2026-07-28): where its side
//! effect lies against its requests for input, and how many input rounds it asks for
//! (`--handler`, `--rounds`). A property of the server's tool, not of a profile.

use crate::named::named_enum;
use serde::{Deserialize, Serialize};
use std::fmt;

named_enum!(
    /// How the tool's handler runs under multi round-trip requests (MRTR, 2026-07-28): where
    /// its side effect lies against its requests for input. A handler that asks for input
    /// answers with an input-required result; the client sends `tools/call` again, under a new
    /// id, with `inputResponses` and `requestState`, and the handler runs from the start.
    HandlerKind {
        /// No input round: the handler takes its effect and completes.
        EffectOnly = "effect-only",
        /// Takes its effect, then asks for input; run again on every round, it takes the effect
        /// again each time (a stateless handler that keeps nothing in `requestState`).
        InputAfterEffect = "input-after-effect",
        /// Asks for input first and takes its effect only in the last round.
        InputBeforeEffect = "input-before-effect",
        /// Takes its effect, then asks for input, and carries "effect done" in `requestState`,
        /// so a continuation skips the effect (a careful server). A retried first request
        /// carries no `requestState` and takes the effect again.
        InputAfterEffectStateful = "input-after-effect-stateful",
        /// Asks for input first and takes its effect only in the last round, as
        /// `input-before-effect`, on a server that enforces the single use of each
        /// `requestState` (2026-07-28 `mrtr.mdx`: "Servers for which a given `requestState` must
        /// be consumed at most once (e.g., one-time redemptions) **MUST** enforce that invariant
        /// server-side"): a continuation whose `requestState` an earlier effect consumed is
        /// refused with an error and takes no effect. The record of consumed states is durable
        /// (it outlives a crash) and is checked and written atomically with the effect.
        InputBeforeEffectSingleUse = "input-before-effect-single-use",
    }
);

/// The tool's handler: its kind and its number of input rounds (0 for `effect-only`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Handler {
    /// Where the effect lies against the input requests.
    pub kind: HandlerKind,
    /// Input rounds: how many times the handler answers input-required before it completes.
    pub rounds: u8,
}

// `named_enum!` derives no `Default`, so it cannot be derived here.
#[allow(clippy::derivable_impls)]
impl Default for HandlerKind {
    fn default() -> Self {
        HandlerKind::EffectOnly
    }
}

impl Handler {
    /// Largest number of input rounds the model takes.
    pub const MAX_ROUNDS: u8 = 2;

    /// A handler of `kind` with `rounds` input rounds, or with 1 where it asks and none was
    /// given (`effect-only` always has 0).
    pub fn new(kind: HandlerKind, rounds: Option<u8>) -> Handler {
        let rounds = match kind {
            HandlerKind::EffectOnly => rounds.unwrap_or(0),
            _ => rounds.unwrap_or(1),
        };
        Handler { kind, rounds }
    }

    /// Whether the request of round `round` (0: the first request, r: the r-th continuation)
    /// takes the side effect.
    pub fn effect_in(self, round: u8) -> bool {
        match self.kind {
            HandlerKind::EffectOnly | HandlerKind::InputAfterEffect => true,
            HandlerKind::InputBeforeEffect | HandlerKind::InputBeforeEffectSingleUse => round >= self.rounds,
            HandlerKind::InputAfterEffectStateful => round == 0,
        }
    }

    /// Whether the server refuses a second consumption of one `requestState` (mrtr.mdx's MUST
    /// for servers whose `requestState` must be consumed at most once).
    pub fn single_use(self) -> bool {
        self.kind == HandlerKind::InputBeforeEffectSingleUse
    }

    /// Whether the request of round `round` is answered with an input-required result.
    pub fn asks_input(self, round: u8) -> bool {
        self.kind != HandlerKind::EffectOnly && round < self.rounds
    }
}

impl fmt::Display for Handler {
    /// The CLI flags that give this handler (empty for the default `effect-only`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Handler::default() {
            return Ok(());
        }
        write!(f, " --handler {}", self.kind)?;
        if self.rounds != 1 || self.kind == HandlerKind::EffectOnly {
            write!(f, " --rounds {}", self.rounds)?;
        }
        Ok(())
    }
}
