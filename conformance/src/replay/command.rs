//! The `mcp-once replay` command line that made a result, as the user gave it: recorded in
//! `result.json` so that a report can print a command that runs again (`explain`'s Reproduce).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One flag of the command line, with its value as given (none for a switch).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flag {
    /// The flag, with its dashes (`--observe`).
    pub name: String,
    /// Its value as typed (`sh:"wc -l < outbox.txt"`), unparsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A replay's command line: the folder it ran in, the trace file, and the flags that say what
/// was replayed on (server, transport, tool, arguments, key placement, observer, timing), as given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayCommand {
    /// The working folder the command ran in (absolute): what its relative paths are relative to.
    pub cwd: PathBuf,
    /// The trace file, as given.
    pub trace: String,
    /// The flags after the trace, in a fixed order; the evidence folder and the output format
    /// are not among them.
    pub flags: Vec<Flag>,
    /// The evidence folder, as given.
    pub evidence: Option<String>,
}

impl Flag {
    /// A flag with a value.
    pub fn with(name: &str, value: impl Into<String>) -> Flag {
        Flag { name: name.into(), value: Some(value.into()) }
    }

    /// A switch.
    pub fn switch(name: &str) -> Flag {
        Flag { name: name.into(), value: None }
    }
}
