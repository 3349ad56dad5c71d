//! Processes a server leaves behind outside its process group: a child started in a session of
//! its own survives the SIGKILL of the group and may hold the server's pipes open (then a stdio
//! connection never breaks). They are found by the pipes they hold and killed with the server.

use crate::replay::evidence::{Event, Evidence, Process};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Duration;

/// Processes other than the runner and its own children that hold `pipe` (`pipe:[inode]`, as
/// `/proc/PID/fd` links name it) open. A child of the runner is never a server's stray: a
/// stray was started by the server, and a child the runner has just forked (another replay's
/// server, between fork and exec) holds a copy of every descriptor of the runner for a moment,
/// this pipe's read end among them.
pub fn pipe_holders(pipe: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        if pid == me || parent_of(pid) == Some(me) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        if fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == pipe)) {
            out.push(pid);
        }
    }
    out
}

/// The parent pid of `pid`, from `/proc/PID/stat` (the field after the state, which follows
/// the command name in parentheses; the name may itself hold `)`).
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// SIGKILL every process that still holds a dead server's `pipe` (a child the server started
/// in a session of its own, outside the group the runner killed), then wait, within `bound`,
/// until none holds it. The processes killed.
pub async fn kill_pipe_holders(pipe: &str, bound: Duration) -> Vec<u32> {
    let strays = pipe_holders(pipe);
    for pid in &strays {
        let _ = kill(Pid::from_raw(*pid as i32), Signal::SIGKILL);
    }
    let deadline = tokio::time::Instant::now() + bound;
    while !pipe_holders(pipe).is_empty() && tokio::time::Instant::now() < deadline {
        // Polled: a process that is not the runner's child gives no event to wait on.
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    strays
}

/// SIGKILL whatever still holds a dead server's stdout or stderr `pipes` (a child it started
/// outside its group), logging each as a `stray`: a crash then breaks a stdio connection as the
/// server's death would, and nothing the server started outlives the run.
pub async fn kill_strays(pipes: Vec<String>, evidence: &Evidence) {
    for pipe in pipes {
        for pid in kill_pipe_holders(&pipe, Duration::from_secs(5)).await {
            evidence.record(Event::Process(Process::Stray { pid, pipe: pipe.clone() }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_of_a_child_is_this_process() {
        let mut child = std::process::Command::new("sleep").arg("5").spawn().unwrap();
        assert_eq!(parent_of(child.id()), Some(std::process::id()));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_child_of_the_runner_holding_a_pipe_is_no_stray() {
        // The child inherits the pipe's write end (as a forked server inherits the runner's
        // descriptors between fork and exec): it holds the pipe, and is not a stray.
        let (read, write) = nix::unistd::pipe().unwrap();
        let mut child = std::process::Command::new("sleep").arg("5").stdout(write).spawn().unwrap();
        let name = crate::replay::tracer::pipe_name(std::os::fd::AsRawFd::as_raw_fd(&read)).unwrap();
        let held_by_child = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
            .unwrap()
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == name.as_str()));
        assert!(held_by_child, "the child holds {name}");
        assert!(pipe_holders(&name).is_empty(), "a child of the runner is not a stray");
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
