//! One server instance of a session: its target, its process and pipes, its connection and
//! that connection's generation, how it exited, its stderr, and the tracer holding its writes. A session holds one per
//! instance of the deployment and acts on the selected one ([`crate::replay::instances`]).

use crate::replay::process::ServerProcess;
use crate::replay::server_log::ServerLog;
use crate::replay::tracer::Tracer;
use crate::replay::types::Target;
use crate::replay::wire::Connection;

/// A server instance, started or not.
pub(crate) struct Instance {
    /// How it is started (or reached).
    pub(crate) target: Target,
    /// Its process, when the runner started one and it has not been stopped.
    pub(crate) server: Option<ServerProcess>,
    /// HTTP: the stdin of the process the runner started (kept open while it runs).
    pub(crate) server_stdin: Option<tokio::process::ChildStdin>,
    /// The connection to it.
    pub(crate) conn: Option<Connection>,
    /// HTTP: the connections of sessions that ended while the server ran on, kept so that
    /// their response streams stay open.
    pub(crate) retired: Vec<Connection>,
    /// The generation of that connection (numbered across instances).
    pub(crate) generation: u32,
    /// How its process ended, once seen.
    pub(crate) exited: Option<String>,
    /// The started server's stdout and stderr pipes (either transport): whatever still holds
    /// one once the server is dead is a stray child of it.
    pub(crate) server_pipes: Vec<String>,
    /// HTTP: the stderr lines of the server the runner started, kept to be waited on.
    pub(crate) server_log: ServerLog,
    /// stdio: the server's stdout pipe, as strace names it (`pipe:[inode]`).
    pub(crate) stdout_pipe: Option<String>,
    /// strace, holding the server's writes to stdout (a crash point without hooks).
    pub(crate) tracer: Option<Tracer>,
}

impl Instance {
    /// An instance not started yet, served by `target`.
    pub(crate) fn new(target: Target) -> Instance {
        Instance {
            target,
            server: None,
            server_stdin: None,
            conn: None,
            retired: Vec::new(),
            generation: 0,
            exited: None,
            server_pipes: Vec::new(),
            server_log: ServerLog::default(),
            stdout_pipe: None,
            tracer: None,
        }
    }
}
