//! The TypeScript and Python ledger fixtures outside a checkout: their files are built into the
//! binary, `mcp-once fixtures install` writes them to a data folder and installs their pinned
//! packages there (with the same `install.sh` a checkout uses), and the commands that start a
//! fixture look for them in the checkout's `conformance/fixtures` first, then in that folder.

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// One file of the fixtures: its path under the fixtures folder and its bytes.
type Embedded = (&'static str, &'static [u8]);

macro_rules! embed {
    ($($path:literal),* $(,)?) => {
        &[$(($path, include_bytes!(concat!("../fixtures/", $path)))),*]
    };
}

/// The server fixtures' files and the install script (the client and LangGraph fixtures, which
/// only the repository's own tests run, are not included).
const FILES: &[Embedded] = embed![
    "install.sh",
    "typescript/package.json",
    "typescript/package-lock.json",
    "typescript/server.mjs",
    "typescript/server-v2.mjs",
    "typescript/keys.mjs",
    "typescript/ledger.mjs",
    "typescript/cli.mjs",
    "python/requirements.txt",
    "python/server.py",
    "python/keys.py",
    "python/mrtr.py",
];

/// The folder a checkout keeps its fixtures in, relative to where mcp-once runs.
pub const CHECKOUT_DIR: &str = "conformance/fixtures";

/// Longest an install may take (npm and pip download from their registries).
const INSTALL_BOUND: Duration = Duration::from_secs(20 * 60);

/// The data folder for the fixtures: `$XDG_DATA_HOME/mcp-once/fixtures`, else
/// `$HOME/.local/share/mcp-once/fixtures` (the XDG base directory default); `None` with neither.
pub fn data_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_DATA_HOME").filter(|v| Path::new(v).is_absolute()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".local/share"),
    };
    Some(base.join("mcp-once/fixtures"))
}

/// Where the fixtures are: `explicit` if given; else the checkout's `conformance/fixtures` when
/// the working folder is a checkout; else the data folder (installed or not: the error that a
/// fixture is missing names `mcp-once fixtures install`).
pub fn locate(explicit: Option<&Path>) -> PathBuf {
    if let Some(dir) = explicit {
        return dir.to_path_buf();
    }
    let checkout = Path::new(CHECKOUT_DIR);
    if checkout.join("install.sh").is_file() {
        return checkout.to_path_buf();
    }
    data_dir().unwrap_or_else(|| checkout.to_path_buf())
}

/// Each script SDK's fixture in `dir` and whether its packages are installed there (the file an
/// install leaves).
pub fn readiness(dir: &Path) -> Vec<(&'static str, bool)> {
    [
        ("typescript", "typescript/node_modules/@modelcontextprotocol/sdk/package.json"),
        ("typescript-v2", "typescript/node_modules/@modelcontextprotocol/server/package.json"),
        ("python", "python/.venv/bin/python"),
    ]
    .into_iter()
    .map(|(sdk, file)| (sdk, dir.join(file).exists()))
    .collect()
}

/// Why an install failed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Write {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// `bash` could not be started.
    #[error("cannot run bash: {0}")]
    Bash(io::Error),
    /// The install script failed (its own output says where).
    #[error("install.sh in {} failed ({status})", dir.display())]
    Failed {
        /// The fixtures folder.
        dir: PathBuf,
        /// How it ended.
        status: ExitStatus,
    },
    /// The install script ran past its bound, and was stopped.
    #[error("install.sh in {} ran past {} min and was stopped", dir.display(), INSTALL_BOUND.as_secs() / 60)]
    TimedOut {
        /// The fixtures folder.
        dir: PathBuf,
    },
}

/// Write the fixtures' files into `dir` (over older ones) and run their `install.sh` there,
/// its output on this process's own; at most [`INSTALL_BOUND`].
pub fn install(dir: &Path) -> Result<(), InstallError> {
    for (rel, bytes) in FILES {
        let path = dir.join(rel);
        let parent = path.parent().expect("a file under the folder");
        std::fs::create_dir_all(parent).map_err(|source| InstallError::Write { path: parent.into(), source })?;
        std::fs::write(&path, bytes).map_err(|source| InstallError::Write { path: path.clone(), source })?;
    }
    let mut child =
        Command::new("bash").arg(dir.join("install.sh")).stdin(Stdio::null()).spawn().map_err(InstallError::Bash)?;
    let deadline = Instant::now() + INSTALL_BOUND;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(InstallError::Failed { dir: dir.into(), status }),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(InstallError::TimedOut { dir: dir.into() });
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(200)),
            Err(e) => return Err(InstallError::Bash(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_a_server_fixture_imports_locally_is_built_in() {
        // A fixture script that imports a sibling file not in FILES would start in a checkout
        // and fail once installed: every import naming a file of the checkout's fixtures folder
        // must be among the files.
        let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let names: Vec<&str> = FILES.iter().map(|f| f.0).collect();
        let mut imports = 0;
        for (path, bytes) in FILES {
            let text = std::str::from_utf8(bytes).expect("text");
            let folder = path.rsplit_once('/').map_or("", |p| p.0);
            for line in text.lines() {
                let file = if path.ends_with(".mjs") {
                    line.split("from './").nth(1).and_then(|r| r.split('\'').next()).map(String::from)
                } else if path.ends_with(".py") {
                    let words: Vec<&str> = line.split_whitespace().collect();
                    match words.as_slice() {
                        ["from", m, "import", ..] | ["import", m, ..] => Some(format!("{m}.py")),
                        _ => None,
                    }
                } else {
                    None
                };
                let Some(file) = file.map(|f| format!("{folder}/{f}")) else { continue };
                if checkout.join(&file).is_file() {
                    imports += 1;
                    assert!(names.contains(&file.as_str()), "{path} imports {file}, which is not built in");
                }
            }
        }
        assert!(imports >= 4, "the check found only {imports} local imports: it no longer reads them");
    }
}
