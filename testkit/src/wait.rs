//! Bounded waits. Each polls a condition until it holds or its bound runs out; none is a fixed
//! sleep standing in for an event (the short pause between polls only spaces the polls).

use std::path::Path;
use std::time::{Duration, Instant};

/// Pause between two polls of a file or a pid (nothing signals a new line in a file).
const POLL: Duration = Duration::from_millis(10);

/// Poll `check` until it returns `Some` or `bound` has passed (then `None`).
pub fn poll_until<T>(bound: Duration, mut check: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = Instant::now() + bound;
    loop {
        if let Some(v) = check() {
            return Some(v);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
    }
}

/// [`poll_until`], panicking with `what` when the bound runs out.
pub fn wait_until<T>(what: &str, bound: Duration, check: impl FnMut() -> Option<T>) -> T {
    poll_until(bound, check).unwrap_or_else(|| panic!("{what}: not within {bound:?}"))
}

/// Wait until the file at `path` exists and its text satisfies `ok`; returns that text.
pub fn wait_file(path: &Path, bound: Duration, mut ok: impl FnMut(&str) -> bool) -> String {
    let last = std::cell::RefCell::new(String::new());
    poll_until(bound, || {
        let text = std::fs::read_to_string(path).ok()?;
        let done = ok(&text);
        *last.borrow_mut() = text.clone();
        done.then_some(text)
    })
    .unwrap_or_else(|| panic!("{}: not as awaited within {bound:?}; last read:\n{}", path.display(), last.borrow()))
}

/// Wait for a child to exit; `None` if it still runs after `bound` (it is left running).
pub fn child_exit(child: &mut std::process::Child, bound: Duration) -> Option<std::process::ExitStatus> {
    poll_until(bound, || child.try_wait().expect("try_wait"))
}
