//! What a cell's verdicts come to, in a form that compares across profiles (`ShortVerdict`,
//! `Signature`), and which cells of the matrix change between two profiles (`Diff`).

use crate::cells::{Cell, Checked};
use mcp_once_model::config::StoreScope;
use mcp_once_model::search::Counterexample;
use mcp_once_model::{
    Cancellation, ClientPolicy, Config, HandlerKind, KeyLifetime, Profile, PropertyKind, ServerImpl, Transport, Verdict,
};
use std::fmt;

/// One property's verdict in one cell, as tables show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShortVerdict {
    /// The configuration does not apply under its profile: `n/a`.
    NotApplicable,
    /// The property was not checked: `-`.
    NotChecked,
    /// It holds: `holds`.
    Holds,
    /// The search stopped at its budget before deciding it: `unknown`.
    Unknown,
    /// It is violated: `✗ s/e`, a shortest counterexample of s steps reaching e side effects.
    Violated {
        /// Steps of the shortest counterexample.
        steps: usize,
        /// Side effects for one logical call at its end.
        effects: u8,
    },
}

impl ShortVerdict {
    /// The verdict on `p` in `cell`, where a matrix has it (else not applicable).
    pub fn of_cell(cell: Option<&Cell>, p: PropertyKind) -> ShortVerdict {
        cell.map_or(ShortVerdict::NotApplicable, |c| ShortVerdict::of(c, p))
    }

    /// The verdict on `p` in `cell`.
    pub fn of(cell: &Cell, p: PropertyKind) -> ShortVerdict {
        match &cell.outcome {
            Err(_) => ShortVerdict::NotApplicable,
            Ok(c) => match c.results.iter().find(|r| r.property == p) {
                None => ShortVerdict::NotChecked,
                Some(r) if r.verdict == Verdict::Holds => ShortVerdict::Holds,
                Some(r) if r.verdict == Verdict::Unknown => ShortVerdict::Unknown,
                Some(r) => {
                    let cex = r.counterexample.as_ref().expect("violated has a trace");
                    ShortVerdict::Violated { steps: cex.len(), effects: cex.effects() }
                }
            },
        }
    }
}

impl fmt::Display for ShortVerdict {
    /// The form tables show: `holds`, `✗ 8/2` (steps/effects), `unknown`, `n/a` or `-`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShortVerdict::NotApplicable => f.write_str("n/a"),
            ShortVerdict::NotChecked => f.write_str("-"),
            ShortVerdict::Holds => f.write_str("holds"),
            ShortVerdict::Unknown => f.write_str("unknown"),
            ShortVerdict::Violated { steps, effects } => write!(f, "✗ {steps}/{effects}"),
        }
    }
}

/// One cell's verdicts, comparable across profiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// One verdict per property of `PropertyKind::ALL`, in that order.
    pub verdicts: Vec<ShortVerdict>,
    /// The worst case (side effects for one logical call); `None` where the cell does not apply.
    pub worst: Option<u8>,
}

impl Signature {
    /// The signature of a cell; a cell missing from a matrix reads as one that does not apply.
    pub fn of(cell: Option<&Cell>) -> Signature {
        match cell {
            None => Signature { verdicts: vec![ShortVerdict::NotApplicable; PropertyKind::ALL.len()], worst: None },
            Some(c) => Signature {
                verdicts: PropertyKind::ALL.iter().map(|p| ShortVerdict::of(c, *p)).collect(),
                worst: c.outcome.as_ref().ok().map(|k| k.worst.effects),
            },
        }
    }
}

/// What identifies a cell of the default matrix across profiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct CellKey {
    /// Transport.
    pub transport: Transport,
    /// Client policy.
    pub client: ClientPolicy,
    /// Idempotency key lifetime.
    pub key: KeyLifetime,
    /// Server implementation.
    pub server: ServerImpl,
    /// Cancellation handling where `--cancel` overrides the server preset's.
    pub cancel: Option<Cancellation>,
    /// The tool's handler and its input rounds.
    pub handler: (HandlerKind, u8),
    /// Server instances, and where they keep their store where it differs from the preset's.
    pub deployment: (u8, Option<StoreScope>),
}

impl CellKey {
    /// The key of a configuration.
    pub fn of(c: &Config) -> CellKey {
        CellKey {
            transport: c.transport,
            client: c.client,
            key: c.key,
            server: c.server,
            cancel: c.cancel,
            handler: (c.handler.kind, c.handler.rounds),
            deployment: (c.deployment.instances, c.deployment.store),
        }
    }

    /// The cell in words: `transport / client / key K / server`, and each axis that is not
    /// its default (`--cancel`, `--handler`, `--rounds`, `--instances`, `--store`).
    pub fn name(&self) -> String {
        let mut out = format!("{} / {} / key {} / {}", self.transport, self.client, self.key, self.server);
        if let Some(c) = self.cancel {
            out.push_str(&format!(" / cancel {c}"));
        }
        let (kind, rounds) = self.handler;
        if kind != HandlerKind::EffectOnly {
            out.push_str(&format!(" / handler {kind}"));
            if rounds != 1 {
                out.push_str(&format!(" ({rounds} rounds)"));
            }
        }
        let (instances, store) = self.deployment;
        if instances != 1 {
            out.push_str(&format!(" / {instances} instances"));
        }
        if let Some(store) = store {
            out.push_str(&format!(" / store {store}"));
        }
        out
    }
}

/// One cell whose verdicts differ between the two profiles.
pub struct Change<'a> {
    /// Which cell.
    pub key: CellKey,
    /// The cell under the first profile, if the matrix has it.
    pub before: Option<&'a Cell>,
    /// The cell under the second profile, if the matrix has it.
    pub after: Option<&'a Cell>,
    /// Its verdicts before.
    pub was: Signature,
    /// Its verdicts after.
    pub now: Signature,
    /// Why the first profile has no such cell, where its matrix has none (the configuration
    /// checked against the first profile).
    pub absent_before: Option<String>,
}

/// What a change comes to, as the diff's bottom line counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChangeKind {
    /// Some property violated before holds after, and none that held is violated now.
    Fixed,
    /// Some property that held is violated after, and none violated before holds now.
    Regressed,
    /// The cell applied before and does not after: the second profile rules this configuration
    /// out (its counterexamples remain for a server or client outside that profile).
    NoLongerApplicable,
    /// The cell did not apply before and does after.
    NewlyApplicable,
    /// Anything else: fixed and regressed at once, a shorter or longer counterexample, another
    /// worst case, or a verdict the search could not decide.
    Other,
}

impl ChangeKind {
    /// Every kind, in the order the diff shows them.
    pub const ALL: &'static [ChangeKind] = &[
        ChangeKind::Regressed,
        ChangeKind::Fixed,
        ChangeKind::NoLongerApplicable,
        ChangeKind::NewlyApplicable,
        ChangeKind::Other,
    ];

    /// The heading of this kind's section, with what it means.
    pub fn heading(self) -> &'static str {
        match self {
            ChangeKind::Regressed => "Regressed: a property that held is violated",
            ChangeKind::Fixed => "Fixed: a violated property holds",
            ChangeKind::NoLongerApplicable => {
                "No longer applicable: the second profile rules this configuration out (its counterexamples remain for a server or client outside it)"
            }
            ChangeKind::NewlyApplicable => "Newly applicable: a configuration the first profile had no place for",
            ChangeKind::Other => "Changed otherwise: fixed and regressed at once, counterexample lengths, worst case, or undecided",
        }
    }

    /// The word the bottom line counts this kind with.
    pub fn word(self) -> &'static str {
        match self {
            ChangeKind::Regressed => "regressed",
            ChangeKind::Fixed => "fixed",
            ChangeKind::NoLongerApplicable => "no longer applicable",
            ChangeKind::NewlyApplicable => "newly applicable",
            ChangeKind::Other => "changed otherwise",
        }
    }
}

/// Whether a counterexample appeared or disappeared with the change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Appearance {
    /// Violated after, not before.
    New,
    /// Violated before, not after.
    Vanished,
    /// Violated on both sides, by another counterexample (shorter, longer, or reaching other
    /// effects): the one after.
    Changed,
}

/// A counterexample to one property that exists on one side of a change only.
pub struct CounterexampleChange<'a> {
    /// New or vanished.
    pub appearance: Appearance,
    /// The property.
    pub property: PropertyKind,
    /// The checked cell it belongs to (the one after for a new one, before for a vanished one).
    pub cell: &'a Checked,
    /// The counterexample.
    pub counterexample: &'a Counterexample,
}

impl<'a> Change<'a> {
    /// What this change comes to.
    pub fn kind(&self) -> ChangeKind {
        let applies = |c: Option<&Cell>| c.is_some_and(|c| c.outcome.is_ok());
        match (applies(self.before), applies(self.after)) {
            (true, false) => return ChangeKind::NoLongerApplicable,
            (false, true) => return ChangeKind::NewlyApplicable,
            _ => {}
        }
        let pairs = || self.was.verdicts.iter().zip(&self.now.verdicts);
        let violated = |v: &ShortVerdict| matches!(v, ShortVerdict::Violated { .. });
        let fixed = pairs().any(|(w, n)| violated(w) && *n == ShortVerdict::Holds);
        let regressed = pairs().any(|(w, n)| *w == ShortVerdict::Holds && violated(n));
        match (fixed, regressed) {
            (true, false) => ChangeKind::Fixed,
            (false, true) => ChangeKind::Regressed,
            _ => ChangeKind::Other,
        }
    }

    /// Why the cell did not apply before the change (its `n/a` reason), if it did not.
    pub fn reason_before(&self) -> Option<String> {
        match self.before {
            None => Some(self.absent_before.clone().unwrap_or_else(|| "not in the first profile's matrix".into())),
            Some(c) => c.outcome.as_ref().err().map(ToString::to_string),
        }
    }

    /// Why the cell does not apply after the change (its `n/a` reason), if it does not.
    pub fn reason_after(&self) -> Option<String> {
        match self.after {
            None => Some("not in the second profile's matrix".into()),
            Some(c) => c.outcome.as_ref().err().map(ToString::to_string),
        }
    }

    /// The new, the vanished and the changed counterexamples, in `PropertyKind::ALL` order.
    pub fn counterexamples(&self) -> Vec<CounterexampleChange<'a>> {
        let violated = |cell: Option<&'a Cell>, p: PropertyKind| {
            let checked = cell?.outcome.as_ref().ok()?;
            let cex = checked.results.iter().find(|r| r.property == p)?.counterexample.as_ref()?;
            Some((checked, cex))
        };
        let mut out = Vec::new();
        for p in PropertyKind::ALL {
            let (appearance, (cell, counterexample)) = match (violated(self.before, *p), violated(self.after, *p)) {
                (None, Some(after)) => (Appearance::New, after),
                (Some(before), None) => (Appearance::Vanished, before),
                (Some(_), Some(after))
                    if ShortVerdict::of_cell(self.before, *p) != ShortVerdict::of_cell(self.after, *p) =>
                {
                    (Appearance::Changed, after)
                }
                _ => continue,
            };
            out.push(CounterexampleChange { appearance, property: *p, cell, counterexample });
        }
        out
    }
}

/// The matrix under two profiles, reduced to the cells that change.
pub struct Diff<'a> {
    /// The first profile's name.
    pub a: &'a str,
    /// The second profile's name.
    pub b: &'a str,
    /// How many cells the two matrices have between them.
    pub cells: usize,
    /// The cells that change, in `CellKey` order.
    pub changes: Vec<Change<'a>>,
    /// How many cells do not change, and how many of those violate some property.
    pub unchanged: (usize, usize),
}

impl Diff<'_> {
    /// How many changes of each kind, in [`ChangeKind::ALL`] order (kinds with none left out).
    pub fn counts(&self) -> Vec<(ChangeKind, usize)> {
        ChangeKind::ALL
            .iter()
            .map(|k| (*k, self.changes.iter().filter(|c| c.kind() == *k).count()))
            .filter(|(_, n)| *n > 0)
            .collect()
    }
}

/// Compare the cells of profile `pa` with those of profile `b`.
pub fn diff<'a>(pa: &'a Profile, cells_a: &'a [Cell], b: &'a str, cells_b: &'a [Cell]) -> Diff<'a> {
    let a = pa.name.as_str();
    let mut keys: Vec<CellKey> = cells_a.iter().chain(cells_b).map(|c| CellKey::of(&c.config)).collect();
    keys.sort();
    keys.dedup();
    let find = |cells: &'a [Cell], k: CellKey| cells.iter().find(|c| CellKey::of(&c.config) == k);
    let mut changes = Vec::new();
    let mut unchanged = (0, 0);
    let cells = keys.len();
    for key in keys {
        let (before, after) = (find(cells_a, key), find(cells_b, key));
        let (was, now) = (Signature::of(before), Signature::of(after));
        if was != now {
            let absent_before = match (before, after) {
                (None, Some(c)) => {
                    let mut config = c.config.clone();
                    config.profile = a.to_string();
                    config.applicable(pa).err().map(|e| e.to_string())
                }
                _ => None,
            };
            changes.push(Change { key, before, after, was, now, absent_before });
        } else {
            unchanged.0 += 1;
            if now.verdicts.iter().any(|v| matches!(v, ShortVerdict::Violated { .. })) {
                unchanged.1 += 1;
            }
        }
    }
    Diff { a, b, cells, changes, unchanged }
}
