//! Processes: whether a process group or a pid is gone, a child reaped however a test ends, and
//! a child in its own process group whose every wait carries a bound.

use crate::jsonl;
use crate::wait::poll_until;
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Condvar, Mutex};
use std::time::Duration;

/// Whether any process of group `pgid` still exists.
pub fn group_alive(pgid: i32) -> bool {
    killpg(Pid::from_raw(pgid), None).is_ok()
}

/// The pids of the evidence's `process start` records (each the leader of its own group).
pub fn started_groups(records: &[Value]) -> Vec<i32> {
    jsonl::of_kind(records, "process")
        .filter(|r| r["event"] == "start")
        .map(|r| r["pid"].as_i64().unwrap_or_else(|| panic!("process start without a pid: {r}")) as i32)
        .collect()
}

/// Every process group the evidence says was started is gone, and there was at least one;
/// returns how many. `what` names the run in a failure.
pub fn assert_groups_gone(records: &[Value], what: &str) -> usize {
    let pids = started_groups(records);
    assert!(!pids.is_empty(), "{what}: no process start in the evidence");
    for pid in &pids {
        assert!(!group_alive(*pid), "{what}: process group {pid} outlived the runner");
    }
    pids.len()
}

/// Whether `pid` runs (a zombie waiting for its reaper does not).
pub fn pid_running(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Wait (bounded) for `pid`, not necessarily our child, to be gone; past the bound SIGKILL it
/// and return false.
pub fn pid_gone_within(pid: i32, bound: Duration) -> bool {
    if poll_until(bound, || (!pid_running(pid)).then_some(())).is_some() {
        return true;
    }
    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    false
}

/// A child killed (SIGKILL) and reaped when dropped, however the test ends.
pub struct Reap(pub Child);

impl Drop for Reap {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A child in its own process group, waited for by a thread and its output read to the end by
/// threads, so that every wait on it can carry a bound. Dropping it SIGKILLs the group.
pub struct Group {
    /// The group's id (the child's pid).
    pub pgid: i32,
    exited: mpsc::Receiver<std::io::Result<ExitStatus>>,
    status: Option<ExitStatus>,
    stdout: Option<mpsc::Receiver<Vec<u8>>>,
    stderr_lines: mpsc::Receiver<String>,
}

impl Group {
    /// Start `argv` with stdin closed, stderr read line by line, stdout captured whole or
    /// discarded.
    pub fn spawn(argv: &[String], capture_stdout: bool) -> Group {
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).stdin(Stdio::null()).stderr(Stdio::piped()).process_group(0);
        cmd.stdout(if capture_stdout { Stdio::piped() } else { Stdio::null() });
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("cannot start {argv:?}: {e}"));
        let pgid = child.id() as i32;
        let stdout = child.stdout.take().map(|mut out| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                let _ = out.read_to_end(&mut buf);
                let _ = tx.send(buf);
            });
            rx
        });
        let err = child.stderr.take().expect("stderr piped");
        let (line_tx, stderr_lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if line_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let (tx, exited) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait());
        });
        Group { pgid, exited, status: None, stdout, stderr_lines }
    }

    /// Wait for the exit within `bound`; past it SIGKILL the group and reap. `None` if the
    /// bound ran out.
    pub fn wait(&mut self, bound: Duration) -> Option<ExitStatus> {
        if self.status.is_some() {
            return self.status;
        }
        match self.exited.recv_timeout(bound) {
            Ok(status) => {
                self.status = Some(status.expect("wait"));
                self.status
            }
            Err(_) => {
                let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
                let _ = self.exited.recv_timeout(Duration::from_secs(10));
                None
            }
        }
    }

    /// SIGKILL the group and reap the child (bounded).
    pub fn kill(&mut self) {
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
        self.wait(Duration::from_secs(10));
    }

    /// Stop with SIGTERM to the group, SIGKILL after `grace`; reaped either way.
    pub fn stop(&mut self, grace: Duration) {
        let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGTERM);
        self.wait(grace);
    }

    /// Everything it wrote on stdout, once it has exited (bounded by `bound`); empty if stdout
    /// was not captured or the reader did not finish.
    pub fn stdout(&self, bound: Duration) -> Vec<u8> {
        self.stdout.as_ref().and_then(|rx| rx.recv_timeout(bound).ok()).unwrap_or_default()
    }

    /// The next stderr line within `bound`; `None` when the bound runs out or stderr closed.
    pub fn stderr_line(&self, bound: Duration) -> Option<String> {
        self.stderr_lines.recv_timeout(bound).ok()
    }

    /// Read stderr lines until `pick` takes one (within `bound`); `Err` with the lines seen.
    pub fn stderr_until<T>(&self, bound: Duration, pick: impl Fn(&str) -> Option<T>) -> Result<T, NotSeen> {
        let deadline = std::time::Instant::now() + bound;
        let mut seen = Vec::new();
        while let Some(line) = self.stderr_line(deadline.saturating_duration_since(std::time::Instant::now())) {
            match pick(&line) {
                Some(v) => return Ok(v),
                None => seen.push(line),
            }
        }
        Err(NotSeen { lines: seen })
    }

    /// Every stderr line read so far (does not wait).
    pub fn stderr_so_far(&self) -> String {
        self.stderr_lines.try_iter().collect::<Vec<_>>().join("\n")
    }
}

/// No stderr line was what [`Group::stderr_until`] waited for: the lines it read instead.
#[derive(Debug)]
pub struct NotSeen {
    /// The lines read, in order.
    pub lines: Vec<String>,
}

impl std::fmt::Display for NotSeen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.lines.join("\n"))
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if self.status.is_none() {
            let _ = killpg(Pid::from_raw(self.pgid), Signal::SIGKILL);
            let _ = self.exited.recv_timeout(Duration::from_secs(10));
        }
    }
}

/// A bound on how many cases of a test binary run at once (a counting semaphore): hold the
/// [`Slot`] that [`Slots::take`] returns while the case runs.
pub struct Slots {
    running: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    /// No slot taken yet.
    pub const fn new() -> Slots {
        Slots { running: Mutex::new(0), freed: Condvar::new() }
    }

    /// Wait until fewer than `max` slots are taken, then take one.
    pub fn take(&self, max: usize) -> Slot<'_> {
        let mut n = self.freed.wait_while(self.running.lock().unwrap(), |n| *n >= max).unwrap();
        *n += 1;
        Slot(self)
    }
}

impl Default for Slots {
    fn default() -> Slots {
        Slots::new()
    }
}

/// One taken slot of [`Slots`], given back when dropped.
pub struct Slot<'a>(&'a Slots);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.running.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        self.0.freed.notify_one();
    }
}
