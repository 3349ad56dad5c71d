//! Two callers presenting one idempotency key (`--callers 2`), and the scope of the server's
//! key records (`--key-scope`, knob `idempotency_key_scope`).
//!
//! SEP-3182 § Security Implications: "Servers MUST scope their idempotency records to whatever
//! authorization boundary already governs access to the underlying tool call ... so that a key is
//! only ever matched against a prior request from the same authorized caller", and a key "is
//! not a secret and MUST NOT be treated as one". Honest keys (UUIDs, one per logical call) of
//! two callers never collide; keys copied from another caller, guessed, or derived the same
//! way from the same inputs do. The model takes that collision:
//! - With two callers, call `i` belongs to caller `i mod 2` (so at least two calls), and caller
//!   1's call `i` presents the key of caller 0's call `i - 1` (the same generation: the same
//!   key under any lifetime, as both derive it alike). Caller 0's calls never collide with one
//!   another, nor caller 1's.
//! - The same arguments are assumed: SEP-3182's conflict rule rejects a key presented with
//!   other arguments, which the model does not represent (no call has arguments of its own).
//! - A record stays the record of the call whose request wrote it. A server whose records are
//!   `global` (one record per key, for every caller) reads a request against its own call's
//!   record and its partner's: a completed partner's record is replayed to it (the
//!   attempt's `foreign` flag), a running one makes it a duplicate in progress. `per-caller`
//!   reads its own call's records only: the other caller's request is new, and runs.
//! - Left out: more than two callers, keys that collide only sometimes, different arguments,
//!   and retention windows against the other caller (a record expires as it does for its own
//!   caller). Key-store servers whose keys ask the outcome (`status-query`), task-augmented
//!   calls, handlers that ask for input and the validating receiver are not modelled with two
//!   callers (refused).

use crate::applicable::NotApplicable;
use crate::config::{Config, HandlerKind, KeyLifetime, KeyScope, Tasks};
use crate::model::McpModel;
use crate::profile::{KeyPlacement, KeySemantics, Profile};
use crate::state::State;

/// Largest number of callers the model takes.
pub const MAX_CALLERS: u8 = 2;

/// The call whose key call `c` shares with two callers: the other call of its pair (calls
/// `2k` and `2k + 1`, caller 0's and caller 1's).
pub fn partner(c: usize) -> usize {
    c ^ 1
}

impl Config {
    /// Whether `--callers` and `--key-scope` make sense here: two callers need two calls, a
    /// profile with keys, a key-store server and a key; `--key-scope` needs two callers.
    pub(crate) fn callers_applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        use NotApplicable::{Meaningless, NotModelled};
        let n = self.callers;
        if !(1..=MAX_CALLERS).contains(&n) {
            return Err(NotApplicable::OutOfRange {
                setting: "--callers",
                value: n.into(),
                min: 1,
                max: MAX_CALLERS.into(),
            });
        }
        if self.key_scope == Some(KeyScope::Unspecified) {
            return Err(Meaningless("--key-scope takes per-caller or global".into()));
        }
        if n == 1 {
            return match self.key_scope {
                Some(s) => Err(Meaningless(format!(
                    "--key-scope {s} applies to two callers (--callers 2): one caller's keys never meet another's"
                ))),
                None => Ok(()),
            };
        }
        if profile.knobs.idempotency_key.value == KeyPlacement::None {
            return Err(NotApplicable::OutsideProfile {
                profile: profile.name.clone(),
                reason: format!(
                    "defines no idempotency key, so --callers {n} (two callers presenting one key) does not arise"
                ),
            });
        }
        if !self.server.uses_keys() || self.key == KeyLifetime::None {
            return Err(Meaningless(format!(
                "--callers {n} models two callers presenting one idempotency key: it needs a key-store server (--server key-...) and a key"
            )));
        }
        if self.bounds.calls < 2 {
            return Err(Meaningless(format!("--callers {n} needs --calls 2 or more (call i is caller i mod 2's)")));
        }
        let not_modelled = if profile.knobs.idempotency_semantics.value != KeySemantics::Dedup {
            Some("a key that asks the outcome (idempotency_semantics other than dedup)".to_string())
        } else if self.server.validates_ids() {
            Some(format!("--server {}", self.server))
        } else if self.tasks != Tasks::None {
            Some(format!("--tasks {}", self.tasks))
        } else if self.handler.kind != HandlerKind::EffectOnly {
            Some(format!("--handler {}", self.handler.kind))
        } else {
            None
        };
        match not_modelled {
            Some(what) => Err(NotModelled(format!("--callers {n} with {what} is not modelled"))),
            None => Ok(()),
        }
    }
}

impl McpModel {
    /// The scope of the server's key records: `--key-scope`, else the profile's (one record
    /// per key where the profile says nothing).
    pub fn key_scope(&self) -> KeyScope {
        self.config.key_scope.unwrap_or(self.profile.knobs.idempotency_key_scope.value.in_force())
    }

    /// Whether a request is read against its partner call's records too: two callers, one
    /// record per key.
    pub(crate) fn shares_records(&self) -> bool {
        self.config.callers == 2 && self.key_scope() == KeyScope::Global
    }

    /// The caller of call `c`: 0 with one caller, else `c mod 2`.
    pub fn caller(&self, c: usize) -> usize {
        c % self.config.callers.max(1) as usize
    }

    /// The call whose completed record of `key` in store `store` answers a request of call
    /// `c`: its own, else (records shared between callers) its partner's; `None` if neither.
    pub(crate) fn record_owner(&self, s: &State, store: usize, c: usize, key: u8) -> Option<usize> {
        if self.key_completed(s, store, c, key) {
            return Some(c);
        }
        let p = partner(c);
        (self.shares_records() && self.key_completed(s, store, p, key)).then_some(p)
    }

    /// Whether a request of call `c` with `key` finds it in progress in store `store`: its
    /// own call's request runs it, or (records shared) its partner's.
    pub(crate) fn key_in_progress(&self, s: &State, store: usize, c: usize, key: u8) -> bool {
        let bit = Self::key_bit(key);
        let running = s.keys_running[store];
        running[c] & bit != 0 || (self.shares_records() && running[partner(c)] & bit != 0)
    }
}

/// Whether a cell's server keeps one record per key for every caller where the profile
/// requires them scoped per caller, with two callers to tell apart.
pub fn global_where_per_caller_required(config: &Config, profile: &Profile) -> bool {
    config.callers == 2
        && config.key_scope.unwrap_or(profile.knobs.idempotency_key_scope.value.in_force()) == KeyScope::Global
        && profile.knobs.idempotency_key_scope.value == KeyScope::PerCaller
}

/// The attempts that step `before` to `after` answered from another caller's record:
/// `(call, attempt)` each.
pub fn foreign_answers(before: &State, after: &State) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (c, attempts) in after.attempts.iter().enumerate() {
        for (a, t) in attempts.iter().enumerate() {
            if t.foreign && !before.attempts[c][a].foreign {
                out.push((c, a));
            }
        }
    }
    out
}
