//! The server's log as the runner can read it back: the lines an HTTP server the runner started
//! writes on stderr, kept (the last few hundred) so a step can wait for one. A ledger fixture
//! says there what its handler did with a cancellation, which no wire event shows once the
//! request's stream is closed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Lines kept; older ones are dropped (a replay's fixture writes a few dozen).
const KEPT: usize = 500;

/// The server's stderr lines, shared between the task that reads the pipe and the session.
#[derive(Clone, Debug, Default)]
pub struct ServerLog(Arc<Mutex<Log>>);

#[derive(Debug, Default)]
struct Log {
    lines: VecDeque<String>,
    /// Lines ever pushed (a position that survives dropping old lines).
    total: usize,
}

impl ServerLog {
    /// Keep one line.
    pub fn push(&self, line: String) {
        let mut log = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if log.lines.len() == KEPT {
            log.lines.pop_front();
        }
        log.lines.push_back(line);
        log.total += 1;
    }

    /// How many lines have been pushed so far: a position to search from later.
    pub fn position(&self) -> usize {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).total
    }

    /// The first line pushed at or after `from` that contains `needle`, if one is still kept.
    pub fn find_since(&self, from: usize, needle: &str) -> Option<String> {
        let log = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let first_kept = log.total - log.lines.len();
        let skip = from.saturating_sub(first_kept);
        log.lines.iter().skip(skip).find(|l| l.contains(needle)).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_found_from_a_position_and_old_ones_dropped() {
        let log = ServerLog::default();
        log.push("charge 1: committed".into());
        let at = log.position();
        assert_eq!(log.find_since(0, "committed").as_deref(), Some("charge 1: committed"));
        assert_eq!(log.find_since(at, "committed"), None, "only lines after the position");
        log.push("charge 1: interrupted".into());
        assert!(log.find_since(at, "interrupted").is_some());
        for i in 0..KEPT {
            log.push(format!("line {i}"));
        }
        assert_eq!(log.find_since(0, "interrupted"), None, "dropped once more than KEPT followed");
        assert_eq!(log.position(), KEPT + 2);
    }
}
