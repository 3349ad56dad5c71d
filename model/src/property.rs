//! The properties the model checks, each on its own, and the worst-case search target.

use crate::model::McpModel;
use crate::state::{Phase, State};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A property of every reachable state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum PropertyKind {
    /// No logical call has its side effect committed more than once.
    #[serde(rename = "at-most-once")]
    AtMostOnce,
    /// The client never reports, for good, a failure of a call whose effect happened.
    #[serde(rename = "no-silent-effect")]
    NoSilentEffect,
    /// A call the client reports as succeeded has its effect in the ledger.
    #[serde(rename = "success-implies-effect")]
    SuccessImpliesEffect,
    /// At-most-once and success-implies-effect together: an acknowledged call took effect
    /// exactly once, and no call took effect twice.
    #[serde(rename = "exactly-once")]
    ExactlyOnce,
}

/// Name of the internal property used to search for the worst case.
pub const EFFECTS_BELOW: &str = "effects-below";

/// What one checker run looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Check {
    /// A counterexample to one property.
    Property(PropertyKind),
    /// A state where one logical call has at least this many side effects.
    EffectsBelow(u8),
}

impl PropertyKind {
    /// Every property, in report order.
    pub const ALL: &'static [PropertyKind] = &[
        PropertyKind::AtMostOnce,
        PropertyKind::NoSilentEffect,
        PropertyKind::SuccessImpliesEffect,
        PropertyKind::ExactlyOnce,
    ];

    /// The name users type.
    pub fn as_str(self) -> &'static str {
        match self {
            PropertyKind::AtMostOnce => "at-most-once",
            PropertyKind::NoSilentEffect => "no-silent-effect",
            PropertyKind::SuccessImpliesEffect => "success-implies-effect",
            PropertyKind::ExactlyOnce => "exactly-once",
        }
    }

    /// One line saying what the property means.
    pub fn meaning(self) -> &'static str {
        match self {
            PropertyKind::AtMostOnce => "no logical call takes effect more than once",
            PropertyKind::NoSilentEffect => "the client never reports failure for a call that took effect",
            PropertyKind::SuccessImpliesEffect => "a call reported as succeeded took effect",
            PropertyKind::ExactlyOnce => "an acknowledged call took effect exactly once, and none twice",
        }
    }
}

impl fmt::Display for PropertyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for PropertyKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PropertyKind::ALL.iter().copied().find(|p| p.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = PropertyKind::ALL.iter().map(|p| p.as_str()).collect();
            format!("unknown property `{s}` (expected one of: {})", names.join(", "))
        })
    }
}

impl McpModel {
    /// Whether `property` holds in state `s`.
    pub fn holds(&self, property: PropertyKind, s: &State) -> bool {
        let calls = 0..self.config.bounds.calls as usize;
        match property {
            PropertyKind::AtMostOnce => s.ledger.iter().all(|n| *n <= 1),
            PropertyKind::NoSilentEffect => calls.into_iter().all(|c| s.ledger[c] == 0 || !self.finally_failed(s, c)),
            PropertyKind::SuccessImpliesEffect => {
                calls.into_iter().all(|c| s.calls[c].phase != Phase::Succeeded || s.ledger[c] >= 1)
            }
            PropertyKind::ExactlyOnce => {
                self.holds(PropertyKind::AtMostOnce, s) && self.holds(PropertyKind::SuccessImpliesEffect, s)
            }
        }
    }
}
