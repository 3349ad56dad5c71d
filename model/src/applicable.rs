//! Whether a configuration is checked under a profile, and if not, why, by kind: a bound out
//! of range, a combination the profile's text excludes, settings that mean nothing together,
//! or a combination the model does not represent. The last kind is a gap in what the model
//! covers, not in the spec, and a report says so apart.

use crate::config::{
    Config, Deployment, Handler, HandlerKind, KeyLifetime, Resumption, ServerImpl, StoreScope, Transport,
    MAX_SESSION_TERMINATIONS,
};
use crate::profile::{
    CrashWindow, InputRequired, Instances, KeyPlacement, KeyReuse, KeySemantics, Profile, Resumability,
    SessionTermination, TaskIdValidation,
};
use crate::state::{MAX_ATTEMPTS, MAX_CALLS, MAX_CRASHES};

/// Why a configuration is not checked under a profile. Its `Display` is one line, in the
/// configuration's own notation (`--calls 5`), as [`Config`]'s `Display` writes it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NotApplicable {
    /// A bound outside what the model holds.
    #[error("{setting} {value} is out of range ({min} to {max})")]
    OutOfRange {
        /// The bound, in the configuration's notation (`--calls`).
        setting: &'static str,
        /// The value asked for.
        value: usize,
        /// The least value the model holds.
        min: usize,
        /// The greatest value the model holds.
        max: usize,
    },
    /// The profile's text rules the configuration out (a knob it does not allow).
    #[error("profile {profile} {reason}")]
    OutsideProfile {
        /// The profile's name.
        profile: String,
        /// What in it rules the configuration out, and which setting that excludes.
        reason: String,
    },
    /// Settings that mean nothing together (a store for one instance, rounds without input).
    #[error("{0}")]
    Meaningless(String),
    /// A combination the model does not represent: a gap in what it covers.
    #[error("{0}")]
    NotModelled(String),
}

impl NotApplicable {
    /// The kind, as a report names it: `out-of-range`, `outside-profile`, `meaningless` or
    /// `not-modelled`.
    pub fn kind(&self) -> &'static str {
        match self {
            NotApplicable::OutOfRange { .. } => "out-of-range",
            NotApplicable::OutsideProfile { .. } => "outside-profile",
            NotApplicable::Meaningless(_) => "meaningless",
            NotApplicable::NotModelled(_) => "not-modelled",
        }
    }

    fn outside(profile: &Profile, reason: String) -> NotApplicable {
        NotApplicable::OutsideProfile { profile: profile.name.clone(), reason }
    }
}

fn in_range(setting: &'static str, value: usize, min: usize, max: usize) -> Result<(), NotApplicable> {
    match (min..=max).contains(&value) {
        true => Ok(()),
        false => Err(NotApplicable::OutOfRange { setting, value, min, max }),
    }
}

impl Config {
    /// Check the bounds, and whether this configuration makes sense under `profile`; callers
    /// show a cell that does not as "not applicable", with the reason.
    pub fn applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        use NotApplicable::{Meaningless, NotModelled};
        let b = self.bounds;
        in_range("--calls", b.calls.into(), 1, MAX_CALLS)?;
        in_range("--retries", b.retries.into(), 0, MAX_ATTEMPTS - 1)?;
        in_range("--crashes", b.crashes.into(), 0, MAX_CRASHES.into())?;
        self.session_applicable(profile)?;
        self.resumption_applicable(profile)?;
        self.tasks_applicable(profile)?;
        self.callers_applicable(profile)?;
        let k = &profile.knobs;
        self.deployment_applicable(profile)?;
        let h = self.handler;
        if h.kind == HandlerKind::EffectOnly && h.rounds != 0 {
            return Err(Meaningless("--rounds applies to a handler that asks for input (--handler input-...)".into()));
        }
        if h.kind != HandlerKind::EffectOnly {
            if k.input_required.value == InputRequired::None {
                return Err(NotApplicable::outside(
                    profile,
                    format!("has no input-required results (knob input_required = none), so --handler {} has no rounds to run", h.kind),
                ));
            }
            in_range("--rounds", h.rounds.into(), 1, Handler::MAX_ROUNDS.into())?;
            // A client retry resends one request; a framework re-run starts the rounds over.
            let requests = if self.client.reruns_the_step() {
                (1 + b.retries as usize) * (1 + h.rounds as usize)
            } else {
                1 + h.rounds as usize + b.retries as usize
            };
            if requests > MAX_ATTEMPTS {
                return Err(NotModelled(format!(
                    "--rounds {} with --retries {} under --client {} needs {requests} requests for one call; the model holds {MAX_ATTEMPTS}",
                    h.rounds, b.retries, self.client
                )));
            }
        }
        if self.key != KeyLifetime::None && k.idempotency_key.value == KeyPlacement::None {
            return Err(NotApplicable::outside(
                profile,
                format!("defines no idempotency key, so --key {} has nowhere to go", self.key),
            ));
        }
        if self.key == KeyLifetime::PerStep && !self.client.reruns_the_step() {
            return Err(Meaningless("--key per-step differs from per-call only under --client framework-retry".into()));
        }
        let reuse = k.idempotency_key_reuse.value;
        let new_key = match self.key {
            KeyLifetime::PerAttempt => Some("a new key on every retry"),
            KeyLifetime::PerStep if reuse == KeyReuse::EveryRerun => Some("a new key on every framework re-run"),
            _ => None,
        };
        if let (Some(what), true) = (new_key, reuse != KeyReuse::Unspecified) {
            return Err(NotApplicable::outside(
                profile,
                format!(
                    "requires a client to reuse its key (knob idempotency_key_reuse = {reuse}), so a client sending {what} (--key {}) is outside it",
                    self.key
                ),
            ));
        }
        if self.server.uses_keys() && k.idempotency_semantics.value == KeySemantics::None {
            return Err(NotApplicable::outside(
                profile,
                "defines no idempotency key, so a key store is outside it".into(),
            ));
        }
        if self.server.validates_ids() && k.task_id_validation.value == TaskIdValidation::None {
            return Err(NotApplicable::outside(
                profile,
                format!(
                    "lets no receiver reject an operation id it has seen (knob task_id_validation = none), so --server {} is outside it",
                    self.server
                ),
            ));
        }
        if self.server.validates_ids() && self.key == KeyLifetime::None {
            return Err(Meaningless(format!(
                "--server {} validates the task id a request carries; with --key none there is no id to validate",
                self.server
            )));
        }
        if self.server == ServerImpl::KeyExpiring && !k.idempotency_retention.value.is_bounded() {
            return Err(NotApplicable::outside(profile, "does not allow key records to expire".into()));
        }
        if self.server == ServerImpl::KeyAfterEffect && k.idempotency_crash_window.value == CrashWindow::Closed {
            return Err(NotApplicable::outside(profile, "requires the key record to be atomic with the effect".into()));
        }
        Ok(())
    }

    /// Whether `--resumption` makes sense here: HTTP under a profile where a server may make its
    /// streams resumable (where every server must, or none may, there is no choice to make).
    fn resumption_applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        let r = self.resumption;
        if r == Resumption::None {
            return Ok(());
        }
        if self.transport != Transport::Http {
            return Err(NotApplicable::Meaningless(format!(
                "--resumption {r} needs --transport http: stdio has no response stream to resume"
            )));
        }
        match profile.knobs.sse_resumability.value {
            Resumability::Optional => Ok(()),
            Resumability::None => Err(NotApplicable::outside(
                profile,
                format!("has no resumable streams (knob sse_resumability = none), so --resumption {r} does not arise"),
            )),
            Resumability::Required => Err(NotApplicable::Meaningless(format!(
                "the profile has every server resume its streams (knob sse_resumability = required), so --resumption {r} is no choice"
            ))),
        }
    }

    /// Whether `--session-terminations` makes sense here: HTTP under a profile with sessions a
    /// server may end.
    fn session_applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        let n = self.session_terminations;
        in_range("--session-terminations", n.into(), 0, MAX_SESSION_TERMINATIONS.into())?;
        if n == 0 {
            return Ok(());
        }
        if self.transport != Transport::Http {
            return Err(NotApplicable::Meaningless(format!(
                "--session-terminations {n} needs --transport http: stdio has no session (the server is the process the client started)"
            )));
        }
        if profile.knobs.session_termination.value == SessionTermination::None {
            return Err(NotApplicable::outside(
                profile,
                format!(
                    "has no protocol-level session a server could end (knob session_termination = none), so --session-terminations {n} does not arise"
                ),
            ));
        }
        Ok(())
    }

    /// Whether `--instances` and `--store` make sense here.
    fn deployment_applicable(&self, profile: &Profile) -> Result<(), NotApplicable> {
        use NotApplicable::{Meaningless, NotModelled};
        let d = self.deployment;
        in_range("--instances", d.instances.into(), 1, Deployment::MAX_INSTANCES.into())?;
        if d.instances == 1 {
            return match d.store {
                Some(_) => Err(Meaningless("--store applies to several server instances (--instances 2)".into())),
                None => Ok(()),
            };
        }
        if self.transport != Transport::Http {
            return Err(Meaningless(
                "--instances 2 needs --transport http: a stdio server is the one process the client started".into(),
            ));
        }
        if profile.knobs.server_instances.value == Instances::Single {
            return Err(NotApplicable::outside(
                profile,
                format!(
                    "binds a client's requests to one server instance (knob server_instances = single), so --instances {} does not arise",
                    d.instances
                ),
            ));
        }
        if d.store.is_some() && !self.server.has_store() {
            return Err(Meaningless(format!(
                "--server {} keeps no store, so --store has nothing to place",
                self.server
            )));
        }
        if self.store() == StoreScope::Shared && self.server.preset_store() == StoreScope::PerInstance {
            return Err(Meaningless(format!(
                "--server {} keeps its store in the process's memory, which no other instance sees; --store shared needs a store outside the process",
                self.server
            )));
        }
        if self.server == ServerImpl::KeyExpiring && self.store() == StoreScope::PerInstance {
            return Err(NotModelled(
                "expiring key records in a store per instance are not modelled (which store a record leaves)".into(),
            ));
        }
        let query =
            profile.knobs.idempotency_semantics.value == KeySemantics::StatusQuery && self.key != KeyLifetime::None;
        if self.server.validates_ids() {
            return Err(NotModelled(format!(
                "--server {} on several instances is not modelled (where each keeps the task ids it created)",
                self.server
            )));
        }
        if query && self.store() == StoreScope::PerInstance {
            return Err(NotModelled(
                "an outcome query to instances with a store each is not modelled (which instance answers it); --store shared is"
                    .into(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(name: &str) -> Profile {
        Profile::load(name).expect("a built-in profile")
    }

    #[test]
    fn each_reason_has_its_kind_and_reads_as_before() {
        let base = crate::catalogue::KEYED_RETRY.config("sep-3182", Transport::Stdio, ServerImpl::KeyVolatile);
        let calls = Config { bounds: crate::config::Bounds { calls: 9, ..base.bounds }, ..base.clone() };
        let e = calls.applicable(&profile("mcp-2025-11-25")).unwrap_err();
        assert_eq!(e.kind(), "out-of-range");
        assert_eq!(e.to_string(), format!("--calls 9 is out of range (1 to {MAX_CALLS})"));
        let e = base.applicable(&profile("mcp-2025-11-25")).unwrap_err();
        assert_eq!(e.kind(), "outside-profile");
        assert!(e.to_string().starts_with("profile mcp-2025-11-25 defines no idempotency key"), "{e}");
        let store = Config { deployment: Deployment { store: Some(StoreScope::Shared), ..base.deployment }, ..base };
        assert_eq!(store.applicable(&profile("sep-3182")).unwrap_err().kind(), "meaningless");
    }
}
