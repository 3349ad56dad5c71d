//! Every property the reference model checks, in one place, each written from its definition
//! (`README.md`, the doc comments of `PropertyKind`), and the worst-case goal.

use crate::rules::Rules;
use crate::state::{CallPhase, World};
use mcp_once_model::PropertyKind;

/// What one run of the reference model looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// A state where this property fails.
    Violate(PropertyKind),
    /// A state where one call has at least this many effects.
    Effects(u8),
    /// Every property and every effect count up to [`SURVEYED_EFFECTS`] at once, to learn
    /// which are reached (not how soon: stateright keeps a later discovery of a property when
    /// a run has several).
    Survey,
}

/// The most effects one call can have that a [`Goal::Survey`] run looks for.
pub const SURVEYED_EFFECTS: u8 = 4;

impl Goal {
    /// Whether `w` is not what the run looks for.
    pub fn fine(self, rules: &Rules, w: &World) -> bool {
        match self {
            Goal::Violate(p) => holds(p, rules, w),
            Goal::Effects(k) => w.most_effects() < k,
            Goal::Survey => true,
        }
    }
}

/// Whether property `p` holds in `w`.
pub fn holds(p: PropertyKind, rules: &Rules, w: &World) -> bool {
    let calls = 0..w.calls.len();
    match p {
        // No logical call takes effect more than once.
        PropertyKind::AtMostOnce => w.ledger.iter().all(|n| *n <= 1),
        // The client never reports, for good, a failure of a call whose effect happened.
        PropertyKind::NoSilentEffect => calls.into_iter().all(|c| w.ledger[c] == 0 || !rules.failed_for_good(w, c)),
        // A call the client reports as succeeded has its effect in the ledger.
        PropertyKind::SuccessImpliesEffect => {
            calls.into_iter().all(|c| w.calls[c].phase != CallPhase::Succeeded || w.ledger[c] >= 1)
        }
        // Both of the above.
        PropertyKind::ExactlyOnce => {
            holds(PropertyKind::AtMostOnce, rules, w) && holds(PropertyKind::SuccessImpliesEffect, rules, w)
        }
        // One caller (the reference refuses two): no record is another caller's.
        PropertyKind::NoForeignReplay => true,
    }
}
