//! What mcp-once's test binaries share: scratch folders ([`scratch!`]), the `mcp-once` binary
//! ([`mcp_once!`]), process-group checks ([`process`]), evidence and ledger readers
//! ([`jsonl`]), the fixture servers' and SDK clients' commands ([`fixtures`]), a JSON-RPC peer
//! on a child's stdio ([`stdio`]) and bounded waits ([`wait`]).
//!
//! Dev-only: a dev-dependency of the workspace's crates, never published. It depends on none of
//! them, so their types never appear twice in a test binary.

pub mod fixtures;
pub mod jsonl;
pub mod process;
pub mod scratch;
pub mod stdio;
pub mod wait;

pub use assert_cmd;
pub use scratch::Scratch;

/// A fresh scratch folder `CARGO_TARGET_TMPDIR/AREA/NAME-PID` for the calling test binary,
/// removed when the returned [`Scratch`] drops unless the test is failing (then kept to look at).
#[macro_export]
macro_rules! scratch {
    ($area:expr, $name:expr) => {
        $crate::Scratch::new(::std::path::Path::new(env!("CARGO_TARGET_TMPDIR")), $area, $name)
    };
}

/// An `assert_cmd` command for the `mcp-once` binary this test binary was built with
/// (`CARGO_BIN_EXE_mcp-once`: the same build profile, wherever the target folder is).
#[macro_export]
macro_rules! mcp_once {
    () => {
        $crate::assert_cmd::Command::new(env!("CARGO_BIN_EXE_mcp-once"))
    };
}

/// The bytes as text (lossy: a test shows what a process printed, whatever it printed).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The trace file of `property` that `mcp-once check --out DIR` wrote into `dir`
/// (`CELL__PROPERTY.itf.json`); a panic naming the property if there is none.
pub fn trace_in(dir: &std::path::Path, property: &str) -> std::path::PathBuf {
    let suffix = format!("__{property}.itf.json");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(&suffix))
        .unwrap_or_else(|| panic!("no {property} trace in {}", dir.display()))
}
