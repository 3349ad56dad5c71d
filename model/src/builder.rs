//! [`ConfigBuilder`]: one place where a cell's defaults live. Whatever is not set takes the
//! default `mcp-once check` gives a flag that is not passed, so a test, a benchmark and the CLI
//! build the same cell from the same few words.

use crate::config::{
    Annotation, Bounds, Cancellation, ClientPolicy, Config, Deployment, Handler, HandlerKind, KeyLifetime, KeyScope,
    Resumption, ServerImpl, StoreScope, TaskRecords, Tasks, Transport,
};

/// Builds a [`Config`] setting by setting. Each setter takes the value or an `Option` of it
/// (`None` keeps the default), so parsed flags pass straight through.
#[derive(Clone, Debug)]
pub struct ConfigBuilder {
    profile: String,
    transport: Transport,
    client: ClientPolicy,
    key: Option<KeyLifetime>,
    server: ServerImpl,
    cancel: Option<Cancellation>,
    handler: HandlerKind,
    rounds: Option<u8>,
    instances: u8,
    store: Option<StoreScope>,
    annotation: Annotation,
    resumption: Resumption,
    tasks: Tasks,
    task_records: TaskRecords,
    bounds: Bounds,
    session_terminations: u8,
    callers: u8,
    key_scope: Option<KeyScope>,
}

impl Config {
    /// A builder for a cell under `profile` (a built-in name or a file), with the defaults:
    /// stdio, `retry-on-timeout`, a `plain` server, the key a server needs (`per-call` for a key
    /// store, else `none`), the preset's cancellation, an `effect-only` handler, one instance,
    /// and one call, one retry, one crash.
    pub fn builder(profile: &str) -> ConfigBuilder {
        ConfigBuilder {
            profile: profile.to_string(),
            transport: Transport::Stdio,
            client: ClientPolicy::RetryOnTimeout,
            key: None,
            server: ServerImpl::Plain,
            cancel: None,
            handler: HandlerKind::default(),
            rounds: None,
            instances: 1,
            store: None,
            annotation: Annotation::None,
            resumption: Resumption::None,
            tasks: Tasks::None,
            task_records: TaskRecords::Durable,
            bounds: Bounds::default(),
            session_terminations: 0,
            callers: 1,
            key_scope: None,
        }
    }
}

/// A setter that keeps the default when given `None`.
macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: $ty:ty => $($field:ident).+ $(as $wrap:ident)?) => {
        $(#[$doc])*
        pub fn $name(mut self, value: impl Into<Option<$ty>>) -> Self {
            if let Some(v) = value.into() {
                self.$($field).+ = $($wrap)?(v);
            }
            self
        }
    };
}

impl ConfigBuilder {
    setter!(
        /// The transport.
        transport: Transport => transport
    );
    setter!(
        /// The client's retry policy.
        client: ClientPolicy => client
    );
    setter!(
        /// The idempotency key's lifetime.
        key: KeyLifetime => key as Some
    );
    setter!(
        /// The server (a preset of store and cancellation).
        server: ServerImpl => server
    );
    setter!(
        /// Cancellation handling other than the server preset's.
        cancel: Cancellation => cancel as Some
    );
    setter!(
        /// The tool's handler under multi round-trip requests.
        handler: HandlerKind => handler
    );
    setter!(
        /// Input rounds of a handler that asks for input (default 1 for such a handler).
        rounds: u8 => rounds as Some
    );
    setter!(
        /// Server instances.
        instances: u8 => instances
    );
    setter!(
        /// Where several instances keep their store, other than the preset's.
        store: StoreScope => store as Some
    );
    setter!(
        /// What the tool's annotations say.
        annotation: Annotation => annotation
    );
    setter!(
        /// Whether broken response streams are resumed.
        resumption: Resumption => resumption
    );
    setter!(
        /// Whether `tools/call` is task-augmented.
        tasks: Tasks => tasks
    );
    setter!(
        /// Where a task's record is kept.
        task_records: TaskRecords => task_records
    );
    setter!(
        /// Logical calls.
        calls: u8 => bounds.calls
    );
    setter!(
        /// Retries (or framework re-runs) per call.
        retries: u8 => bounds.retries
    );
    setter!(
        /// Server crashes.
        crashes: u8 => bounds.crashes
    );

    setter!(
        /// How many times the server may terminate the HTTP session.
        session_terminations: u8 => session_terminations
    );
    setter!(
        /// Callers sharing the server (1 or 2).
        callers: u8 => callers
    );
    setter!(
        /// The scope of the server's key records, other than the profile's.
        key_scope: KeyScope => key_scope as Some
    );

    /// All three bounds at once.
    pub fn bounds(mut self, bounds: Bounds) -> Self {
        self.bounds = bounds;
        self
    }

    /// The configuration, as given (an override equal to its preset is kept; the model
    /// normalises it away, see [`Config::normalised`]). Whether it applies under its profile
    /// is [`Config::applicable`]'s question.
    pub fn build(self) -> Config {
        let key = self.key.unwrap_or(match self.server.uses_keys() {
            true => KeyLifetime::PerCall,
            false => KeyLifetime::None,
        });
        Config {
            profile: self.profile,
            transport: self.transport,
            client: self.client,
            key,
            server: self.server,
            cancel: self.cancel,
            handler: Handler::new(self.handler, self.rounds),
            deployment: Deployment { instances: self.instances, store: self.store },
            annotation: self.annotation,
            resumption: self.resumption,
            tasks: self.tasks,
            task_records: self.task_records,
            bounds: self.bounds,
            session_terminations: self.session_terminations,
            callers: self.callers,
            key_scope: self.key_scope,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_cli_s_and_none_keeps_them() {
        let c = Config::builder("sep-3182").server(ServerImpl::KeyDurable).transport(None).build();
        assert_eq!(c.to_string(), "--profile sep-3182 --transport stdio --client retry-on-timeout --key per-call --server key-durable --calls 1 --retries 1 --crashes 1");
        let c = Config::builder("mcp-2026-07-28").retries(0).crashes(2).instances(2).transport(Transport::Http).build();
        assert_eq!(c.key, KeyLifetime::None, "a server without a store takes no key");
        assert_eq!((c.bounds.calls, c.bounds.retries, c.bounds.crashes), (1, 0, 2));
        assert_eq!(c.deployment.instances, 2);
        let mrtr = Config::builder("mcp-2026-07-28").handler(HandlerKind::InputAfterEffect).build();
        assert_eq!(mrtr.handler, Handler::new(HandlerKind::InputAfterEffect, None));
    }
}
