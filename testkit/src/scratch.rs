//! Scratch folders, one per test (or per case), under the test binary's target tmp folder.

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// A fresh folder `ROOT/AREA/NAME-PID`: emptied when made, removed when dropped unless the
/// thread is panicking (a failing test keeps its files). Derefs to its [`Path`].
#[derive(Debug)]
pub struct Scratch(PathBuf);

impl Scratch {
    /// Make `root/area/name-PID` afresh (see [`crate::scratch!`] for the usual root).
    pub fn new(root: &Path, area: &str, name: &str) -> Scratch {
        let dir = root.join(area).join(format!("{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("create {}: {e}", dir.display()));
        Scratch(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `ledger.jsonl` in the folder (the name every fixture test uses).
    pub fn ledger(&self) -> PathBuf {
        self.0.join("ledger.jsonl")
    }
}

impl Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
