//! Fuzz target: trace files (`TraceFile::parse` and `validate`). Invariants: `fuzz/src/trace.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_once_fuzz::trace::check(data));
