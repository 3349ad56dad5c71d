//! The commands of the ledger fixture servers (Rust, TypeScript, Python) and of the SDK
//! scenario clients. A fixture that is not installed fails the test (it is never skipped):
//! `conformance/fixtures/install.sh` installs them, `scripts/test` runs it.

use std::path::{Path, PathBuf};

/// `conformance/fixtures/`.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures")
}

/// A fixture server's SDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Server {
    /// `mcp-once-fixture` (rmcp).
    Rust,
    /// `typescript/server.mjs` (the TypeScript SDK).
    TypeScript,
    /// `python/server.py` (the Python `mcp` SDK).
    Python,
}

impl Server {
    /// The three, in this order.
    pub const ALL: [Server; 3] = [Server::TypeScript, Server::Python, Server::Rust];

    /// Its name in ledgers and labels.
    pub fn name(self) -> &'static str {
        match self {
            Server::Rust => "rust",
            Server::TypeScript => "typescript",
            Server::Python => "python",
        }
    }

    /// The command line (program first) of the server on `ledger` with `transport`, then
    /// `extra`. `rust_fixture` is the `mcp-once-fixture` binary (`CARGO_BIN_EXE_mcp-once-fixture`
    /// in the conformance tests).
    pub fn argv(self, rust_fixture: &Path, ledger: &Path, transport: &str, extra: &[&str]) -> Vec<String> {
        let mut argv = match self {
            Server::Rust => vec![rust_fixture.display().to_string()],
            Server::TypeScript => vec!["node".into(), typescript_script("server.mjs")],
            Server::Python => vec![python("python"), dir().join("python/server.py").display().to_string()],
        };
        argv.extend(["--transport".into(), transport.into(), "--ledger".into(), ledger.display().to_string()]);
        argv.extend(extra.iter().map(|s| s.to_string()));
        argv
    }
}

/// `typescript/NAME` with the TypeScript SDK installed.
pub fn typescript_script(name: &str) -> String {
    let modules = dir().join("typescript/node_modules/@modelcontextprotocol/sdk");
    assert!(modules.is_dir(), "the TypeScript SDK is not installed: run conformance/fixtures/install.sh");
    dir().join("typescript").join(name).display().to_string()
}

/// The interpreter of the virtual environment `venv` (`python` or `langgraph`).
pub fn python(venv: &str) -> String {
    let py = dir().join(venv).join(".venv/bin/python");
    assert!(py.is_file(), "{venv}/.venv is not installed: run conformance/fixtures/install.sh");
    py.display().to_string()
}

/// A `listening http://127.0.0.1:PORT/mcp` line (every fixture prints one on stderr once its
/// HTTP port is bound; given `--port 0`, the port is the one the system chose): the URL.
pub fn listening_url(line: &str) -> Option<String> {
    let url = line.trim().strip_prefix("listening ")?;
    let port = url.strip_prefix("http://127.0.0.1:")?.strip_suffix("/mcp")?;
    port.parse::<u16>().ok().filter(|p| *p != 0)?;
    Some(url.to_string())
}

/// The port of a [`listening_url`].
pub fn port_of(url: &str) -> u16 {
    url.trim_start_matches("http://127.0.0.1:").trim_end_matches("/mcp").parse().expect("a port")
}
