//! The action vocabulary: every step the model can take, named after what happens on a real
//! system, so that a trace is a script the conformance runner can replay.
//!
//! The vocabulary is versioned ([`ACTION_VOCABULARY`]); a change to a name or a parameter is a
//! new version. `call` and `attempt` are 0-based indices of the logical call and of its attempt.
//! Each action says who performs it ([`Action::actor`]) and whether a replayer drives it or
//! only waits for it ([`Action::internal`]).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Name and version of the action vocabulary (written into every trace).
pub const ACTION_VOCABULARY: &str = "mcp-once-actions/v1";

/// One step of the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "tag", content = "value")]
pub enum Action {
    /// The client starts logical call `call`: it sends `tools/call` (attempt 0).
    ClientCall { call: u8 },
    /// The client stops waiting for the response to an attempt.
    ClientTimeout { call: u8, attempt: u8 },
    /// The client cancels a timed-out attempt: `notifications/cancelled` on stdio (and on
    /// HTTP before 2026-07-28), closing the response stream on HTTP from 2026-07-28.
    ClientCancel { call: u8, attempt: u8 },
    /// The client reads the response to an attempt.
    ClientReceive { call: u8, attempt: u8 },
    /// The client sees its connection close (the server process died) for an attempt.
    ClientSeesDisconnect { call: u8, attempt: u8 },
    /// The client asks the server for the outcome of the call's operation id (outcome query).
    ClientQueryOutcome { call: u8 },
    /// The client sends the call again as a new attempt.
    ClientRetry { call: u8, attempt: u8 },
    /// The step around the call fails after the call returned (framework retry).
    StepFails { call: u8 },
    /// The framework re-runs the whole step, and so the call, as a new attempt.
    FrameworkRetry { call: u8, attempt: u8 },
    /// The HTTP response stream of an attempt breaks (network); the client sees an error.
    StreamBreak { call: u8, attempt: u8 },
    /// The server reads a request: the instance the load balancer sent it to (0 where there
    /// is one instance; written only when it is not 0).
    ServerReceive {
        call: u8,
        attempt: u8,
        #[serde(default, skip_serializing_if = "is_zero")]
        instance: u8,
    },
    /// The server reads a cancellation.
    ServerReceiveCancel { call: u8, attempt: u8 },
    /// The tool commits its side effect to the durable ledger.
    ServerCommit { call: u8, attempt: u8 },
    /// The server stores the idempotency key record, after the effect (key-after-effect).
    ServerStoreKey { call: u8, attempt: u8 },
    /// The server writes the success response.
    ServerRespond { call: u8, attempt: u8 },
    /// A server instance's process is killed (SIGKILL): its memory and the requests it holds
    /// are lost, the ledger is kept.
    ServerCrash {
        #[serde(default, skip_serializing_if = "is_zero")]
        instance: u8,
    },
    /// A server instance's process is started again.
    ServerRestart {
        #[serde(default, skip_serializing_if = "is_zero")]
        instance: u8,
    },
    /// A stored key record of `call` (key generation `key`) leaves the retention window.
    KeyExpires { call: u8, key: u8 },
    /// The client answers an input-required result (MRTR) and sends `tools/call` again, with
    /// `inputResponses` and `requestState`, under a new id, as a new attempt.
    ClientContinue { call: u8, attempt: u8 },
    /// The server terminates the client's HTTP session (2025-11-25): a request in transit under
    /// the old session id is answered 404 and never runs, and the client's next request opens
    /// a new session, whose request ids start over.
    SessionTerminated {},
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// Who performs an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Actor {
    /// The MCP client (or the framework around it).
    Client,
    /// The transport between them.
    Transport,
    /// The MCP server process.
    Server,
    /// The environment: a supervisor, the OS, time.
    Environment,
}

impl fmt::Display for Actor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Actor::Client => "client",
            Actor::Transport => "transport",
            Actor::Server => "server",
            Actor::Environment => "environment",
        })
    }
}

impl Action {
    /// The action's name in the vocabulary.
    pub fn name(&self) -> &'static str {
        match self {
            Action::ClientCall { .. } => "ClientCall",
            Action::ClientTimeout { .. } => "ClientTimeout",
            Action::ClientCancel { .. } => "ClientCancel",
            Action::ClientReceive { .. } => "ClientReceive",
            Action::ClientSeesDisconnect { .. } => "ClientSeesDisconnect",
            Action::ClientQueryOutcome { .. } => "ClientQueryOutcome",
            Action::ClientRetry { .. } => "ClientRetry",
            Action::StepFails { .. } => "StepFails",
            Action::FrameworkRetry { .. } => "FrameworkRetry",
            Action::StreamBreak { .. } => "StreamBreak",
            Action::ServerReceive { .. } => "ServerReceive",
            Action::ServerReceiveCancel { .. } => "ServerReceiveCancel",
            Action::ServerCommit { .. } => "ServerCommit",
            Action::ServerStoreKey { .. } => "ServerStoreKey",
            Action::ServerRespond { .. } => "ServerRespond",
            Action::ServerCrash { .. } => "ServerCrash",
            Action::ServerRestart { .. } => "ServerRestart",
            Action::KeyExpires { .. } => "KeyExpires",
            Action::ClientContinue { .. } => "ClientContinue",
            Action::SessionTerminated {} => "SessionTerminated",
        }
    }

    /// Who performs it.
    pub fn actor(&self) -> Actor {
        match self {
            Action::ClientCall { .. }
            | Action::ClientTimeout { .. }
            | Action::ClientCancel { .. }
            | Action::ClientReceive { .. }
            | Action::ClientSeesDisconnect { .. }
            | Action::ClientQueryOutcome { .. }
            | Action::ClientRetry { .. }
            | Action::StepFails { .. }
            | Action::FrameworkRetry { .. }
            | Action::ClientContinue { .. } => Actor::Client,
            Action::StreamBreak { .. } => Actor::Transport,
            Action::ServerReceive { .. }
            | Action::ServerReceiveCancel { .. }
            | Action::ServerCommit { .. }
            | Action::ServerStoreKey { .. }
            | Action::ServerRespond { .. } => Actor::Server,
            Action::ServerCrash { .. }
            | Action::ServerRestart { .. }
            | Action::KeyExpires { .. }
            | Action::SessionTerminated {} => Actor::Environment,
        }
    }

    /// Whether the step happens inside the server, so a replayer waits for it (with a bound)
    /// instead of driving it.
    pub fn internal(&self) -> bool {
        self.actor() == Actor::Server
    }
}

impl Action {
    /// The `(call, attempt)` the action acts on, if it acts on one attempt.
    pub fn attempt(&self) -> Option<(u8, u8)> {
        match *self {
            Action::ClientTimeout { call, attempt }
            | Action::ClientCancel { call, attempt }
            | Action::ClientReceive { call, attempt }
            | Action::ClientSeesDisconnect { call, attempt }
            | Action::ClientRetry { call, attempt }
            | Action::ClientContinue { call, attempt }
            | Action::FrameworkRetry { call, attempt }
            | Action::StreamBreak { call, attempt }
            | Action::ServerReceive { call, attempt, .. }
            | Action::ServerReceiveCancel { call, attempt }
            | Action::ServerCommit { call, attempt }
            | Action::ServerStoreKey { call, attempt }
            | Action::ServerRespond { call, attempt } => Some((call, attempt)),
            Action::ClientCall { .. }
            | Action::ClientQueryOutcome { .. }
            | Action::StepFails { .. }
            | Action::ServerCrash { .. }
            | Action::ServerRestart { .. }
            | Action::KeyExpires { .. }
            | Action::SessionTerminated {} => None,
        }
    }
}

impl Action {
    /// The server instance the action happens on, where it names one (0 where the run has one
    /// instance).
    pub fn instance(&self) -> Option<u8> {
        match *self {
            Action::ServerReceive { instance, .. }
            | Action::ServerCrash { instance }
            | Action::ServerRestart { instance } => Some(instance),
            _ => None,
        }
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The instance is named only when it is not the first (a run with one instance reads
        // as it always did).
        let on = match self.instance() {
            Some(i) if i > 0 => format!(", instance {i}"),
            _ => String::new(),
        };
        if let Some((call, attempt)) = self.attempt() {
            return write!(f, "{}(call {call}, attempt {attempt}{on})", self.name());
        }
        if let Some(i) = self.instance().filter(|i| *i > 0) {
            return write!(f, "{}(instance {i})", self.name());
        }
        match *self {
            Action::ClientCall { call } | Action::ClientQueryOutcome { call } | Action::StepFails { call } => {
                write!(f, "{}(call {call})", self.name())
            }
            Action::KeyExpires { call, key } => write!(f, "{}(call {call}, key {key})", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}
