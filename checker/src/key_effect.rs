//! Does a key fix duplicates? Each cell of the second profile of a `diff` where the client sends
//! an idempotency key, beside its *keyless baseline*: the same client and server behaviour under
//! the first profile, without a key. A server that keeps key records keeps none when no key
//! comes, so it runs every call, as `plain` does, with its own cancellation handling; any other
//! server is the same server. Per property, each pair is fixed, still violated, regressed or
//! held already.

use crate::cells::Cell;
use crate::compare::{CellKey, ShortVerdict};
use mcp_once_model::{Config, KeyLifetime, PropertyKind, ServerImpl};
use std::collections::BTreeMap;

/// What the key does to one property in one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KeyOutcome {
    /// Violated without the key, holds with it.
    Fixed,
    /// Violated with the key as without it.
    StillViolated,
    /// Held without the key, violated with it.
    Regressed,
    /// Holds with the key as without it.
    HeldAlready,
    /// A search on either side stopped at its budget before deciding.
    Undecided,
    /// The keyless baseline does not apply under the first profile (its reason is the cell's).
    NoBaseline,
}

impl KeyOutcome {
    /// Every outcome, in the order the report counts them.
    pub const ALL: &'static [KeyOutcome] = &[
        KeyOutcome::Fixed,
        KeyOutcome::StillViolated,
        KeyOutcome::Regressed,
        KeyOutcome::HeldAlready,
        KeyOutcome::Undecided,
        KeyOutcome::NoBaseline,
    ];

    /// The words the report counts it with.
    pub fn word(self) -> &'static str {
        match self {
            KeyOutcome::Fixed => "fixed",
            KeyOutcome::StillViolated => "still violated",
            KeyOutcome::Regressed => "regressed",
            KeyOutcome::HeldAlready => "held already",
            KeyOutcome::Undecided => "undecided",
            KeyOutcome::NoBaseline => "no keyless baseline",
        }
    }
}

/// The keyless baseline of `keyed` under the profile named `base`: no key, and a server that
/// keeps key records replaced by `plain` with the same cancellation handling (and no store to
/// place); every other axis and the bounds unchanged.
pub fn keyless_baseline(keyed: &Config, base: &str) -> Config {
    let mut c = keyed.clone();
    c.profile = base.to_string();
    c.key = KeyLifetime::None;
    if keyed.server.uses_keys() {
        let cancel = keyed.cancel();
        c.server = ServerImpl::Plain;
        c.cancel = (cancel != ServerImpl::Plain.preset_cancel()).then_some(cancel);
        c.deployment.store = None;
    }
    c
}

/// One key-bearing cell and its keyless baseline.
pub struct KeyPair<'a> {
    /// The cell with the key (second profile).
    pub keyed: &'a Cell,
    /// The same behaviour without it (first profile).
    pub baseline: &'a Cell,
}

impl KeyPair<'_> {
    /// What the key does to property `p` here.
    pub fn outcome(&self, p: PropertyKind) -> KeyOutcome {
        let violated = |v: ShortVerdict| matches!(v, ShortVerdict::Violated { .. });
        let (without, with) = (ShortVerdict::of(self.baseline, p), ShortVerdict::of(self.keyed, p));
        match (without, with) {
            (ShortVerdict::NotApplicable, _) => KeyOutcome::NoBaseline,
            (w, k) if violated(w) && k == ShortVerdict::Holds => KeyOutcome::Fixed,
            (w, k) if violated(w) && violated(k) => KeyOutcome::StillViolated,
            (ShortVerdict::Holds, k) if violated(k) => KeyOutcome::Regressed,
            (ShortVerdict::Holds, ShortVerdict::Holds) => KeyOutcome::HeldAlready,
            _ => KeyOutcome::Undecided,
        }
    }

    /// The keyed cell's name, as the diff names cells.
    pub fn name(&self) -> String {
        CellKey::of(&self.keyed.config).name()
    }
}

/// Every key-bearing cell of the second profile beside its keyless baseline.
pub struct KeyEffect<'a> {
    /// The first profile (without keys).
    pub a: &'a str,
    /// The second profile (with them).
    pub b: &'a str,
    /// The pairs, in the second profile's cell order.
    pub pairs: Vec<KeyPair<'a>>,
}

impl<'a> KeyEffect<'a> {
    /// Pair each applicable cell of `cells_b` where the client sends a key with its keyless
    /// baseline, found among `cells_a` and `extra` (the baselines the first profile's matrix
    /// lacks, run apart).
    pub fn pair(a: &'a str, b: &'a str, cells_a: &'a [Cell], extra: &'a [Cell], cells_b: &'a [Cell]) -> KeyEffect<'a> {
        let pairs = key_bearing(cells_b)
            .filter_map(|keyed| {
                let want = keyless_baseline(&keyed.config, a);
                let baseline = cells_a.iter().chain(extra).find(|c| c.config == want)?;
                Some(KeyPair { keyed, baseline })
            })
            .collect();
        KeyEffect { a, b, pairs }
    }

    /// How many pairs come to each outcome for property `p`, among the pairs whose keyed cell
    /// checks it (`no-foreign-replay` only with two callers); outcomes with none left out, so
    /// a property no cell checks has no counts at all.
    pub fn counts(&self, p: PropertyKind) -> BTreeMap<KeyOutcome, usize> {
        let mut out = BTreeMap::new();
        for pair in self.pairs.iter().filter(|pair| p.checked_in(&pair.keyed.config)) {
            *out.entry(pair.outcome(p)).or_default() += 1;
        }
        out
    }

    /// The pairs whose property `p` the key leaves violated.
    pub fn still_violated(&self, p: PropertyKind) -> Vec<&KeyPair<'a>> {
        self.pairs.iter().filter(|pair| pair.outcome(p) == KeyOutcome::StillViolated).collect()
    }
}

/// The cells of `cells` that apply and where the client sends a key.
fn key_bearing(cells: &[Cell]) -> impl Iterator<Item = &Cell> {
    cells.iter().filter(|c| c.config.key != KeyLifetime::None && c.outcome.is_ok())
}

/// The keyless baselines of `cells_b`'s key-bearing cells under the profile named `a` that
/// `cells_a` does not have: the configurations to run apart.
pub fn missing_baselines(a: &str, cells_a: &[Cell], cells_b: &[Cell]) -> Vec<Config> {
    let mut out: Vec<Config> = Vec::new();
    for keyed in key_bearing(cells_b) {
        let want = keyless_baseline(&keyed.config, a);
        if !cells_a.iter().any(|c| c.config == want) && !out.contains(&want) {
            out.push(want);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_once_model::{Cancellation, ClientPolicy, Transport};

    fn keyed(server: ServerImpl, cancel: Option<Cancellation>) -> Config {
        Config::builder("sep-3182")
            .transport(Transport::Http)
            .client(ClientPolicy::RetryAny)
            .key(KeyLifetime::PerCall)
            .server(server)
            .cancel(cancel)
            .build()
    }

    #[test]
    fn a_key_store_without_a_key_is_plain_with_its_own_cancellation() {
        let base = keyless_baseline(&keyed(ServerImpl::KeyDurable, None), "mcp-2026-07-28");
        assert_eq!(
            (base.profile.as_str(), base.key, base.server),
            ("mcp-2026-07-28", KeyLifetime::None, ServerImpl::Plain)
        );
        assert_eq!(base.cancel(), ServerImpl::KeyDurable.preset_cancel());
        let interrupts = keyless_baseline(&keyed(ServerImpl::KeyDurable, Some(Cancellation::Interrupts)), "a");
        assert_eq!((interrupts.server, interrupts.cancel()), (ServerImpl::Plain, Cancellation::Interrupts));
    }

    #[test]
    fn a_server_that_keeps_no_key_is_its_own_baseline() {
        let base = keyless_baseline(&keyed(ServerImpl::DedupByIdDurable, None), "a");
        assert_eq!((base.server, base.key), (ServerImpl::DedupByIdDurable, KeyLifetime::None));
    }
}
