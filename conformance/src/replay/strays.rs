//! Processes a server leaves behind outside its process group: a child started in a session of
//! its own survives the SIGKILL of the group and may hold the server's pipes open (then a stdio
//! connection never breaks). They are found by the pipes they hold and killed with the server.

use crate::replay::evidence::{Event, Evidence, Process};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Duration;

/// Processes other than the runner that hold `pipe` (`pipe:[inode]`, as `/proc/PID/fd` links
/// name it) open.
pub fn pipe_holders(pipe: &str) -> Vec<u32> {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { continue };
        let holds = fds.flatten().any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == pipe));
        if holds && pid != me {
            out.push(pid);
        }
    }
    out
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
