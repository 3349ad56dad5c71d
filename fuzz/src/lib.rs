//! Invariants checked by mcp-once's fuzz targets, one module per target.
//!
//! Each `check(data)` panics when an invariant fails; libFuzzer reports that as a crash and
//! saves the input. The same modules are compiled into the workspace's regression tests
//! (`model/tests/fuzz_regressions.rs`), which run every saved crash and the seed corpus.

pub mod frame;
pub mod profile;
pub mod trace;
