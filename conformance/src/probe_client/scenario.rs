//! The named fault scenarios of `mcp-once serve` and what a serve process is asked to be.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

pub use mcp_once_model::Transport;

/// The tool every scenario serves (the client is told it in `MCP_ONCE_TOOL`).
pub const TOOL: &str = "charge";

/// The arguments the client is told to send (`MCP_ONCE_ARGS`).
pub const ARGS: &str = r#"{"amount":42}"#;

/// What the tool does with a call, after taking its effect (every scenario takes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scenario {
    /// Answer at once with a plain result: the baseline.
    Ok,
    /// Hold the answer until the client cancels, disconnects or sends again (or `--hold`
    /// passes), then answer: the client's own timeout fires first.
    Timeout,
    /// Drop the connection (HTTP: close the response stream; stdio: exit the process).
    Disconnect,
    /// Answer a JSON-RPC error.
    Error,
    /// Answer a result with `isError: true`.
    IsError,
    /// Never answer (HTTP: close the stream after `--hold`; stdio: stay silent).
    Never,
}

impl Scenario {
    /// Every scenario, in the order `probe-client` runs them.
    pub const ALL: [Scenario; 6] =
        [Scenario::Ok, Scenario::Timeout, Scenario::Disconnect, Scenario::Error, Scenario::IsError, Scenario::Never];

    /// Its name (`MCP_CONFORMANCE_SCENARIO`, `--scenario`).
    pub fn as_str(self) -> &'static str {
        match self {
            Scenario::Ok => "ok",
            Scenario::Timeout => "timeout",
            Scenario::Disconnect => "disconnect",
            Scenario::Error => "error",
            Scenario::IsError => "is-error",
            Scenario::Never => "never",
        }
    }

    /// What the server does, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            Scenario::Ok => "effect, then a plain result",
            Scenario::Timeout => "effect, then the answer held until the client gives up (bounded), then answered",
            Scenario::Disconnect => "effect, then the connection dropped (HTTP: stream closed; stdio: process exit)",
            Scenario::Error => "effect, then a JSON-RPC error",
            Scenario::IsError => "effect, then a result with isError: true",
            Scenario::Never => "effect, then no answer at all (bounded)",
        }
    }
}

impl fmt::Display for Scenario {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Scenario {
    type Err = mcp_once_model::BadValue;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Scenario::ALL.into_iter().find(|v| v.as_str() == s).ok_or_else(|| {
            let names: Vec<&str> = Scenario::ALL.iter().map(|v| v.as_str()).collect();
            mcp_once_model::BadValue::new(s, format!("unknown scenario {s:?} (expected one of {})", names.join(", ")))
        })
    }
}

/// Everything one `mcp-once serve` process needs.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// stdio or Streamable HTTP.
    pub transport: Transport,
    /// HTTP port on 127.0.0.1 (0: any free port). Ignored for stdio.
    pub port: u16,
    /// The fault scenario.
    pub scenario: Scenario,
    /// The record file (JSONL, appended to, shared by every process of one run).
    pub record: PathBuf,
    /// The longest a held answer waits.
    pub hold: Duration,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for s in Scenario::ALL {
            assert_eq!(s.as_str().parse::<Scenario>(), Ok(s));
        }
        assert!("slow".parse::<Scenario>().is_err());
    }
}
