//! Why a server could not be started and used ([`StartError`]: a missing tool and a stdout
//! carrying lines that are not JSON named for what they are), and those lines as a start counts
//! them ([`NonJsonLines`]).

use std::fmt;

/// Why a server could not be started and used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StartError {
    /// It answered the handshake and lists no tool of that name.
    NoTool {
        /// The tool asked for (`--tool`).
        tool: String,
        /// The tools it lists.
        listed: Vec<String>,
    },
    /// stdio: it wrote lines that are not JSON to its stdout and did not finish the handshake.
    NonJsonStdout {
        /// The first such lines, quoted.
        first: Vec<String>,
    },
    /// Anything else: the process, the connection, the handshake (in words).
    Other(String),
}

impl From<String> for StartError {
    fn from(why: String) -> Self {
        StartError::Other(why)
    }
}

impl fmt::Display for StartError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StartError::NoTool { tool, listed } => {
                write!(f, "the server has no tool `{tool}` (it lists: {})", listed.join(", "))
            }
            StartError::NonJsonStdout { first } => {
                let quoted: Vec<String> = first.iter().map(|l| format!("`{l}`")).collect();
                write!(
                    f,
                    "the server writes lines that are not JSON to its stdout (first: {}), and the stdio transport says \"The server MUST NOT write anything to its stdout that is not a valid MCP message\" (basic/transports.mdx, stdio, in 2025-11-25 and 2026-07-28); --skip-non-json runs it anyway, skipping those lines",
                    quoted.join(", ")
                )
            }
            StartError::Other(why) => f.write_str(why),
        }
    }
}

impl StartError {
    /// The error as the one line a command reports: a server that did not start says so; a
    /// missing tool or a noisy stdout is named for what it is.
    pub fn sentence(&self) -> String {
        match self {
            StartError::NoTool { .. } => format!("{self}: give the side-effecting tool's name with --tool"),
            StartError::NonJsonStdout { .. } => self.to_string(),
            StartError::Other(why) => format!("the server did not start: {why}"),
        }
    }
}

/// stdio: the lines of stdout that were not JSON at all: how many, and the first few quoted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NonJsonLines {
    /// How many.
    pub count: usize,
    /// The first [`NonJsonLines::KEPT`], quoted.
    pub first: Vec<String>,
}

impl NonJsonLines {
    /// Lines quoted in reports.
    pub const KEPT: usize = 3;

    /// Count one line, keeping it if it is among the first.
    pub fn push(&mut self, line: String) {
        self.count += 1;
        if self.first.len() < Self::KEPT {
            self.first.push(line);
        }
    }
}
