//! The trace of a confirmed replay, written as an ITF file (the model's `to_itf`) beside its
//! evidence, so that `mcp-once explain TRACE --evidence DIR` works from the files `probe` and
//! `confirm` leave (their traces are built in process, not read from a file).

use crate::replay::types::{ReplayResult, ReplayVerdict};
use mcp_once_model::trace::{to_itf, TraceFile};
use mcp_once_model::Profile;
use std::path::PathBuf;

/// The trace file's name in a confirmed replay's evidence folder.
pub const TRACE_FILE: &str = "trace.itf.json";

/// Write `trace` (under `profile`) as `TRACE_FILE` in the folder of `result`'s evidence when
/// the replay confirmed it; the file written, None when there was nothing to write, or why it
/// could not be written.
pub fn write_confirmed_trace(
    result: &ReplayResult,
    trace: &TraceFile,
    profile: &Profile,
) -> Result<Option<PathBuf>, String> {
    if result.verdict != ReplayVerdict::Confirmed {
        return Ok(None);
    }
    let Some(dir) = result.evidence.as_ref().and_then(|log| log.parent()) else { return Ok(None) };
    let valid = trace.validate(&result.trace, profile).map_err(|e| e.to_string())?;
    let doc = to_itf(&valid.model, trace.property, &valid.path, false);
    let path = dir.join(TRACE_FILE);
    let text = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n";
    std::fs::write(&path, text).map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    Ok(Some(path))
}
