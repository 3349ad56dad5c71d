//! Server processes the runner starts: spawned directly from an argv (never through a shell),
//! each in its own process group so that SIGKILL reaches the server and anything it forked,
//! and always reaped. Every live group is also kept in a process-wide registry, so that an
//! interrupted runner (SIGINT, SIGTERM) can kill them all before it exits.

use anyhow::{anyhow, Context, Result};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitpid, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::Duration;
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How to start a server process.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Program and arguments (already split; see [`split_command`]).
    pub argv: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// Working directory (default: the runner's).
    pub cwd: Option<PathBuf>,
}

/// Why a command line could not be split into an argv.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandLineError {
    /// A quote opened and never closed.
    #[error("unbalanced quotes in `{0}`")]
    UnbalancedQuotes(String),
    /// Nothing but blanks.
    #[error("empty command")]
    Empty,
}

/// Split a command line into argv the way a POSIX shell would quote it, without running a shell
/// (no expansion, no pipes, no redirection).
pub fn split_command(line: &str) -> Result<Vec<String>, CommandLineError> {
    let argv = shlex::split(line).ok_or_else(|| CommandLineError::UnbalancedQuotes(line.to_string()))?;
    if argv.is_empty() {
        return Err(CommandLineError::Empty);
    }
    Ok(argv)
}

static LIVE_GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn register(pgid: i32) {
    LIVE_GROUPS.lock().expect("registry lock").insert(pgid);
}

fn unregister(pgid: i32) {
    LIVE_GROUPS.lock().expect("registry lock").remove(&pgid);
}

/// SIGKILL every process group the runner started and has not reaped yet (for an interrupted
/// run). Returns the groups killed.
pub fn kill_all_groups() -> Vec<i32> {
    let groups: Vec<i32> = LIVE_GROUPS.lock().expect("registry lock").iter().copied().collect();
    for g in &groups {
        let _ = killpg(Pid::from_raw(*g), Signal::SIGKILL);
    }
    groups
}

/// A running server process (the leader of its own process group).
pub struct ServerProcess {
    child: Child,
    pid: u32,
    reaped: Option<ExitStatus>,
}

/// The pipes of a freshly started process, for the caller to take.
pub struct Pipes {
    /// The server's stdin.
    pub stdin: ChildStdin,
    /// The server's stdout.
    pub stdout: ChildStdout,
    /// The server's stderr.
    pub stderr: ChildStderr,
}

impl ServerProcess {
    /// Start `spec` with piped stdin, stdout and stderr, in a new process group.
    pub fn spawn(spec: &LaunchSpec) -> Result<(ServerProcess, Pipes)> {
        let (program, args) = spec.argv.split_first().ok_or_else(|| anyhow!("empty server command"))?;
        let mut cmd = Command::new(program);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        let mut child = cmd.spawn().with_context(|| format!("cannot start `{}`", spec.argv.join(" ")))?;
        let pid = child.id().ok_or_else(|| anyhow!("`{program}` exited at once"))?;
        register(pid as i32);
        let pipes = Pipes {
            stdin: child.stdin.take().expect("piped stdin"),
            stdout: child.stdout.take().expect("piped stdout"),
            stderr: child.stderr.take().expect("piped stderr"),
        };
        Ok((ServerProcess { child, pid, reaped: None }, pipes))
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// SIGKILL the whole process group, without waiting (a traced group is reaped once its
    /// tracer lets go: see [`crate::replay::tracer`]).
    pub fn signal_kill(&self) {
        if self.reaped.is_none() {
            let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
        }
    }

    /// SIGKILL the whole process group and reap the leader, waiting at most `bound`.
    pub async fn kill(&mut self, bound: Duration) -> Result<ExitStatus> {
        if let Some(status) = self.reaped {
            return Ok(status);
        }
        let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
        self.wait(bound).await
    }

    /// SIGTERM the group, wait up to `grace` for the leader to exit, then SIGKILL it.
    pub async fn stop(&mut self, grace: Duration) -> Result<ExitStatus> {
        if let Some(status) = self.reaped {
            return Ok(status);
        }
        let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGTERM);
        match self.wait(grace).await {
            Ok(status) => {
                // The leader is gone; take anything it left in its group with it.
                let _ = killpg(Pid::from_raw(self.pid as i32), Signal::SIGKILL);
                Ok(status)
            }
            Err(_) => self.kill(grace).await,
        }
    }

    /// Wait at most `bound` for the leader to exit, and reap it.
    pub async fn wait(&mut self, bound: Duration) -> Result<ExitStatus> {
        if let Some(status) = self.reaped {
            return Ok(status);
        }
        let status = tokio::time::timeout(bound, self.child.wait())
            .await
            .map_err(|_| anyhow!("process {} still running after {} ms", self.pid, bound.as_millis()))??;
        self.reaped = Some(status);
        unregister(self.pid as i32);
        Ok(status)
    }

    /// The exit status, if the leader has exited (reaps it).
    pub fn try_exit(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            if let Ok(Some(status)) = self.child.try_wait() {
                self.reaped = Some(status);
                unregister(self.pid as i32);
            }
        }
        self.reaped
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.reaped.is_none() {
            // Last resort (an interrupted run, a panic, an early return): kill the group and
            // reap the leader here, with a bound, so that no zombie outlives the runner.
            let pid = Pid::from_raw(self.pid as i32);
            let _ = killpg(pid, Signal::SIGKILL);
            let deadline = std::time::Instant::now() + Duration::from_secs(2);
            loop {
                match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::StillAlive) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(2))
                    }
                    _ => break,
                }
            }
            unregister(self.pid as i32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_split_without_a_shell() {
        let argv = split_command(r#"node "my server.mjs" --ledger 'a b.jsonl' $HOME; rm"#).unwrap();
        assert_eq!(argv, ["node", "my server.mjs", "--ledger", "a b.jsonl", "$HOME;", "rm"]);
        assert_eq!(split_command("node 'open"), Err(CommandLineError::UnbalancedQuotes("node 'open".into())));
        assert_eq!(split_command("  "), Err(CommandLineError::Empty));
    }
}
