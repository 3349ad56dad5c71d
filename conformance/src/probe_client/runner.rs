//! Running a client command against one scenario: the server (in this process for HTTP; the
//! client spawns `mcp-once serve` itself over stdio), the client in its own process group with
//! every wait bounded, the group killed and reaped on every path, then the record read back.

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;
use std::time::{Duration, Instant};

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use serde_json::Value;

use crate::probe_client::record;
use crate::probe_client::scenario::{Scenario, ServeOptions, Transport, ARGS, TOOL};
use crate::probe_client::serve::InProcess;

/// How often the runner looks at the client and the record while it waits.
const POLL: Duration = Duration::from_millis(20);

/// Set once SIGINT or SIGTERM arrives while clients are being run.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static WATCHING: Once = Once::new();

/// Take SIGINT and SIGTERM from now on (registered before this returns): a run under way then
/// kills its client's group and ends with an error, instead of the process dying with the
/// client, in its own group, left running.
fn watch_signals() {
    WATCHING.call_once(|| {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(rt) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return };
        let streams = {
            let _in_runtime = rt.enter();
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
        };
        let (Ok(mut int), Ok(mut term)) = streams else { return };
        std::thread::spawn(move || {
            rt.block_on(async {
                tokio::select! {
                    _ = int.recv() => {}
                    _ = term.recv() => {}
                }
            });
            INTERRUPTED.store(true, Ordering::SeqCst);
        });
    });
}

/// The client command, split as a shell would split it (no shell runs it).
#[derive(Clone, Debug)]
pub struct ClientCommand {
    /// As the user gave it.
    pub text: String,
    /// Program and arguments.
    pub argv: Vec<String>,
}

impl ClientCommand {
    /// Split `text`; an empty or unbalanced command is an error naming it.
    pub fn parse(text: &str) -> Result<ClientCommand, ProbeError> {
        match shlex::split(text) {
            Some(argv) if !argv.is_empty() => Ok(ClientCommand { text: text.to_string(), argv }),
            _ => Err(ProbeError(format!("client `{text}`: not a command line (empty or unbalanced quotes)"))),
        }
    }
}

/// A client that cannot be probed: one line naming the client (exit 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeError(pub String);

impl std::fmt::Display for ProbeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProbeError {}

/// How the runner runs each scenario.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// stdio or Streamable HTTP.
    pub transport: Transport,
    /// The longest a held answer waits (`serve --hold-ms`).
    pub hold: Duration,
    /// The client must send its first frame within this.
    pub connect_within: Duration,
    /// The longest one scenario's client may run before it is killed.
    pub bound: Duration,
    /// The `mcp-once` executable (stdio: the client is given its `serve` command line).
    pub serve_exe: PathBuf,
    /// Where the record and the client's output go (one file each per scenario).
    pub folder: PathBuf,
}

/// What one scenario's run left.
#[derive(Clone, Debug)]
pub struct ScenarioRun {
    /// The scenario.
    pub scenario: Scenario,
    /// The record's lines.
    pub record: Vec<Value>,
    /// The client's exit code (None: killed by a signal, or at the bound).
    pub exit: Option<i32>,
    /// Whether the client was killed at the bound.
    pub killed_at_bound: bool,
    /// How long the client ran.
    pub elapsed_ms: u64,
}

/// The last non-empty line of a file (the client's stderr), for an error message.
fn last_line(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| format!(" (its stderr ends: {})", l.trim()))
        .unwrap_or_default()
}

/// Kill the client's process group and reap the client.
fn reap(child: &mut Child) -> Option<i32> {
    let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
    child.wait().ok().and_then(|s| s.code())
}

/// Run `client` once under `scenario`; an error when it does not start, never connects or
/// makes no call.
pub fn run_scenario(client: &ClientCommand, scenario: Scenario, opts: &RunOptions) -> Result<ScenarioRun, ProbeError> {
    let fail = |what: String| ProbeError(format!("client `{}`: {what}", client.text));
    let path = opts.folder.join(format!("{scenario}.record.jsonl"));
    let _ = std::fs::remove_file(&path);
    let serve = ServeOptions { transport: opts.transport, port: 0, scenario, record: path.clone(), hold: opts.hold };
    let (target, _server) = match opts.transport {
        Transport::Http => {
            let server = InProcess::start(serve).map_err(|e| fail(format!("cannot start the server: {e}")))?;
            (server.url.clone(), Some(server))
        }
        Transport::Stdio => {
            let line = format!(
                "{} serve --transport stdio --scenario {scenario} --record {} --hold-ms {}",
                opts.serve_exe.display(),
                path.display(),
                opts.hold.as_millis()
            );
            if opts.serve_exe.display().to_string().contains(char::is_whitespace)
                || path.display().to_string().contains(char::is_whitespace)
            {
                return Err(fail(format!(
                    "the serve command line would contain a space in a path (the client splits it on whitespace): {line}"
                )));
            }
            (line, None)
        }
    };
    let out = opts.folder.join(format!("{scenario}.client.out"));
    let err = opts.folder.join(format!("{scenario}.client.err"));
    watch_signals();
    let file = |p: &Path| File::create(p).map_err(|e| fail(format!("{}: {e}", p.display())));
    let mut child = Command::new(&client.argv[0])
        .args(&client.argv[1..])
        .arg(&target)
        .env("MCP_CONFORMANCE_SCENARIO", scenario.as_str())
        .env("MCP_ONCE_TOOL", TOOL)
        .env("MCP_ONCE_ARGS", ARGS)
        .stdin(Stdio::null())
        .stdout(file(&out)?)
        .stderr(file(&err)?)
        .process_group(0)
        .spawn()
        .map_err(|e| fail(format!("did not start: {e}")))?;
    let started = Instant::now();
    let mut exit = None;
    let mut killed_at_bound = false;
    let connected = |p: &Path| record::read(p).map(|r| r.iter().any(is_client_frame)).unwrap_or(false);
    let mut seen_frame = false;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            exit = status.code();
            break;
        }
        if INTERRUPTED.load(Ordering::SeqCst) {
            reap(&mut child);
            return Err(fail(format!(
                "interrupted by a signal under scenario {scenario}; its process group was killed"
            )));
        }
        seen_frame = seen_frame || connected(&path);
        if !seen_frame && started.elapsed() > opts.connect_within {
            reap(&mut child);
            return Err(fail(format!(
                "never connected: no MCP frame reached the server within {} s{}",
                opts.connect_within.as_secs_f64(),
                last_line(&err)
            )));
        }
        if started.elapsed() > opts.bound {
            killed_at_bound = true;
            break;
        }
        std::thread::sleep(POLL);
    }
    let reaped = reap(&mut child);
    exit = exit.or(if killed_at_bound { None } else { reaped });
    let elapsed_ms = started.elapsed().as_millis() as u64;
    drop(_server);
    let lines = record::read(&path).map_err(|e| fail(e.to_string()))?;
    if !lines.iter().any(is_client_frame) {
        let how = match exit {
            Some(127) | Some(126) => "did not start (exit {code}: command not found or not executable)",
            _ => "never connected: it sent no MCP frame (exit {code})",
        };
        let code = exit.map_or("by signal".to_string(), |c| c.to_string());
        return Err(fail(format!("{}{}", how.replace("{code}", &code), last_line(&err))));
    }
    if !lines.iter().any(|l| l["kind"] == "attempt") {
        let code = exit.map_or("by signal".to_string(), |c| c.to_string());
        return Err(fail(format!(
            "made no call to `{TOOL}` under scenario {scenario} (exit {code}){}",
            last_line(&err)
        )));
    }
    Ok(ScenarioRun { scenario, record: lines, exit, killed_at_bound, elapsed_ms })
}

/// A frame the client sent.
fn is_client_frame(line: &Value) -> bool {
    line["kind"] == "frame" && line["dir"] == "in"
}
