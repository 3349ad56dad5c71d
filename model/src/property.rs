//! The properties the model checks, each on its own: their names, their meanings and their
//! predicates, in one place. Which property a search looks for is chosen where the search runs
//! (`search`, `explore`); the model itself checks nothing.

use crate::model::McpModel;
use crate::named::named_enum;
use crate::state::{Phase, State};

named_enum!(
    /// A property of every reachable state.
    PropertyKind,
    error = |s, names| format!("unknown property `{s}` (expected one of: {names})"),
    {
        /// No logical call has its side effect committed more than once.
        AtMostOnce = "at-most-once",
        /// The client never reports, for good, a failure of a call whose effect happened.
        NoSilentEffect = "no-silent-effect",
        /// A call the client reports as succeeded has its effect in the ledger.
        SuccessImpliesEffect = "success-implies-effect",
        /// At-most-once and success-implies-effect together: an acknowledged call took effect
        /// exactly once, and no call took effect twice.
        ExactlyOnce = "exactly-once",
        /// No call is answered with a result stored for a request of another caller (two
        /// callers presenting one key, `--callers 2`; with one caller it cannot fail, and is
        /// not checked).
        NoForeignReplay = "no-foreign-replay",
    }
);

impl PropertyKind {
    /// One line saying what the property means.
    pub fn meaning(self) -> &'static str {
        match self {
            PropertyKind::AtMostOnce => "no logical call takes effect more than once",
            PropertyKind::NoSilentEffect => "the client never reports failure for a call that took effect",
            PropertyKind::SuccessImpliesEffect => "a call reported as succeeded took effect",
            PropertyKind::ExactlyOnce => "an acknowledged call took effect exactly once, and none twice",
            PropertyKind::NoForeignReplay => "no call is answered with the result stored for another caller's request",
        }
    }

    /// Whether a search of `config`'s cell checks this property: `no-foreign-replay` only with
    /// two callers (with one, no record is ever another caller's), every other always.
    pub fn checked_in(self, config: &crate::config::Config) -> bool {
        self != PropertyKind::NoForeignReplay || config.callers > 1
    }

    /// The properties a search of `config`'s cell checks ([`PropertyKind::checked_in`]), in
    /// the order of [`PropertyKind::ALL`].
    pub fn checked(config: &crate::config::Config) -> Vec<PropertyKind> {
        PropertyKind::ALL.iter().copied().filter(|p| p.checked_in(config)).collect()
    }

    /// Whether the property holds in state `s` of `model`.
    pub fn holds(self, model: &McpModel, s: &State) -> bool {
        let mut calls = 0..model.config.bounds.calls as usize;
        match self {
            PropertyKind::AtMostOnce => s.ledger.iter().all(|n| *n <= 1),
            PropertyKind::NoSilentEffect => calls.all(|c| s.ledger[c] == 0 || !model.finally_failed(s, c)),
            PropertyKind::SuccessImpliesEffect => {
                calls.all(|c| s.calls[c].phase != Phase::Succeeded || s.ledger[c] >= 1)
            }
            PropertyKind::ExactlyOnce => {
                PropertyKind::AtMostOnce.holds(model, s) && PropertyKind::SuccessImpliesEffect.holds(model, s)
            }
            PropertyKind::NoForeignReplay => s.attempts.iter().flatten().all(|t| !t.foreign),
        }
    }
}

/// Name of the internal property used to search for the worst case.
pub const EFFECTS_BELOW: &str = "effects-below";

/// What one search looks for: a state where a property fails, or one where a logical call has
/// at least some number of side effects (the worst-case search).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// A counterexample to one property.
    Property(PropertyKind),
    /// A state where one logical call has at least this many side effects.
    EffectsBelow(u8),
}

impl Check {
    /// The name of the property stateright checks (a property's own name, or [`EFFECTS_BELOW`]).
    pub fn name(self) -> &'static str {
        match self {
            Check::Property(p) => p.as_str(),
            Check::EffectsBelow(_) => EFFECTS_BELOW,
        }
    }

    /// Whether state `s` of `model` is fine (not what the search looks for).
    pub fn holds(self, model: &McpModel, s: &State) -> bool {
        match self {
            Check::Property(p) => p.holds(model, s),
            Check::EffectsBelow(k) => s.worst_effects() < k,
        }
    }
}
