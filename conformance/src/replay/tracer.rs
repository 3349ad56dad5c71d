//! A crash point without hooks, over stdio: the server is held at its write of the response, so
//! that a SIGKILL lands after the effect and before the response leaves the process, on a server
//! that takes no delay arguments. The runner attaches strace (ptrace) to every process of the
//! server's group and has it delay each `write`/`writev` to the server's stdout pipe (its
//! `-P pipe:[inode]` filter, `-e inject=...:delay_enter=`): the call runs, its effect shows in
//! the observer, and its response waits at the syscall's entry, where the kill finds it. Other
//! writes (files, logs, stderr) are not held. strace's own lines go to the evidence log.

use crate::replay::evidence::{Event, Evidence};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc::unbounded_channel;

/// strace, attached to a server's process group.
pub struct Tracer {
    child: Child,
}

/// Whether strace can be run here.
pub fn available() -> bool {
    std::process::Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The `pipe:[inode]` name of an open file descriptor of this process (as strace's `-P` names
/// a pipe), if it is a pipe.
pub fn pipe_name(fd: i32) -> Option<String> {
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let name = link.to_string_lossy().into_owned();
    name.starts_with("pipe:[").then_some(name)
}

/// The processes (and their threads, which strace attaches with `-f`) of process group `pgid`.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let mut out = Vec::new();
    for entry in dir.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
        // The command name (field 2) may hold spaces and parentheses: fields after its last ')'.
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the name: state, ppid, pgrp.
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) {
            out.push(pid);
        }
    }
    out.sort_unstable();
    out
}

impl Tracer {
    /// Attach to every process of group `pgid`, holding each write to `pipe` for `hold` at its
    /// entry; returns once strace reports every process attached (within `bound`).
    pub async fn attach(
        pgid: u32,
        pipe: Option<&str>,
        hold: Duration,
        evidence: Evidence,
        bound: Duration,
    ) -> Result<Tracer, String> {
        let pipe = pipe.ok_or("the server's stdout is not a pipe the runner holds (stdio only)")?;
        if !available() {
            return Err("strace is not installed".into());
        }
        let pids = group_members(pgid);
        if pids.is_empty() {
            return Err(format!("no process left in the server's group {pgid}"));
        }
        let micros = hold.as_micros().min(u128::from(u32::MAX)) as u32;
        let mut cmd = Command::new("strace");
        cmd.args(["-f", "-e", "trace=write,writev", "-e", "signal=none", "-P", pipe, "-e"])
            .arg(format!("inject=write,writev:delay_enter={micros}"));
        for p in &pids {
            cmd.arg("-p").arg(p.to_string());
        }
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).process_group(0).kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| format!("cannot start strace: {e}"))?;
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, mut rx) = unbounded_channel::<()>();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            let mut logged = 0;
            while let Ok(Some(line)) = lines.next_line().await {
                if line.contains(" attached") {
                    let _ = tx.send(());
                }
                if logged < 200 {
                    logged += 1;
                    evidence.record(Event::Output { channel: "strace".into(), line });
                }
            }
        });
        let mut tracer = Tracer { child };
        let attached = tokio::time::timeout(bound, async {
            for _ in &pids {
                rx.recv().await.ok_or(())?;
            }
            Ok::<(), ()>(())
        })
        .await;
        match attached {
            Ok(Ok(())) => Ok(tracer),
            _ => {
                tracer.finish(Duration::from_secs(1)).await;
                Err(format!(
                    "strace did not attach to the server's {} process(es) within the bound (is ptrace allowed here?)",
                    pids.len()
                ))
            }
        }
    }

    /// End the tracer: it exits by itself once its tracees are gone; otherwise it is killed
    /// after `bound` (zero: at once; the kernel then detaches its tracees). Always reaped.
    pub async fn finish(&mut self, bound: Duration) {
        if bound.is_zero() || tokio::time::timeout(bound, self.child.wait()).await.is_err() {
            let _ = self.child.start_kill();
            let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
        }
    }
}
