//! Fuzz target: profile files (`mcp_once_model::Profile::parse`). Invariants: `fuzz/src/profile.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_once_fuzz::profile::check(data));
