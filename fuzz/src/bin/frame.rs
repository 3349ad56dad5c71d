//! Fuzz target: the replay runner's stdio framing. Invariants: `fuzz/src/frame.rs`.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| mcp_once_fuzz::frame::check(data));
