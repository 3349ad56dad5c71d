//! A reader that stops early (`mcp-once matrix | head`): mcp-once drops the rest of its output
//! quietly and exits with its own code, as Unix tools do, instead of panicking on the broken
//! pipe. The page is large (hundreds of kilobytes), so the write after the reader left fails.

use mcp_once_testkit::text;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_reader_that_stops_early_gets_no_panic() {
    for format in ["json", "html"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-once"))
            .args(["matrix", "--profile", "mcp-2025-11-25", "--format", format])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        // The read end is closed here (the pipe was dropped): the next write breaks.
        let started = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            assert!(started.elapsed() < Duration::from_secs(120), "mcp-once did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut err = Vec::new();
        child.stderr.take().unwrap().read_to_end(&mut err).unwrap();
        let err = text(&err);
        assert!(!err.contains("panicked"), "{format}: {err}");
        assert_eq!(status.code(), Some(1), "{format}: the matrix's own code (a violation found): {err}");
    }
}
