//! Limits on a search: a number of unique states and the process's resident memory, and why a
//! search stopped when it reached one. A search that reaches its budget stops and reports what
//! it has decided, rather than growing until the kernel kills the process.
//!
//! Memory is the resident set size of the whole process (`VmRSS` in `/proc/self/status`), read
//! every few thousand states, plus what the search is about to allocate (its tables double as
//! they fill). On systems without `/proc` only the state limit applies.

use std::fmt;

/// The limits on one search (`None`: no limit of that kind).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Stop before exploring more unique states than this.
    pub max_states: Option<usize>,
    /// Check the states within this many steps of an initial state and none further: their
    /// successors one step past it are not kept (`None`: no bound).
    pub max_depth: Option<usize>,
    /// Stop before the process's resident memory exceeds this many bytes (or, with
    /// `spill_dir`, go on with the search on disk from there).
    pub max_memory: Option<u64>,
    /// Where the search goes on when it reaches the memory limit: unnamed temporary files in
    /// this folder, which the system removes however the process ends (`None`: it stops).
    pub spill_dir: Option<&'static std::path::Path>,
    /// Stop before the spilled files take more than this many bytes.
    pub max_disk: Option<u64>,
    /// Searches of the process that may run at once and share `max_memory` and `max_disk`
    /// (`matrix` runs one a thread; 0 or 1: this search alone). A search on disk keeps to its
    /// share of each: the memory for its tables and the disk for its files, so that the
    /// searches together stay within the budget. Memory in memory needs no share: it is read
    /// as the whole process's.
    pub shared_by: usize,
}

/// Why a search stopped before it was exhaustive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "budget", rename_all = "kebab-case")]
pub enum Stop {
    /// The state limit was reached.
    States {
        /// The limit (`--max-states`).
        limit: usize,
    },
    /// States one step past the depth bound were left out.
    Depth {
        /// The bound (`--max-depth`).
        limit: usize,
    },
    /// The memory limit would have been passed.
    Memory {
        /// The limit in bytes (`--max-memory`).
        limit: u64,
        /// Resident bytes when the search stopped, with what it was about to allocate.
        projected: u64,
    },
    /// The disk limit of a search that spilled would have been passed.
    Disk {
        /// The limit in bytes: `--max-disk`, or this search's share of it.
        limit: u64,
        /// Bytes the spilled files would have taken.
        projected: u64,
        /// Searches that share `--max-disk` (1: this one alone).
        shared_by: usize,
    },
    /// A spill file could not be written or read back.
    DiskFailed {
        /// The system's error number (0: a file read back is not what was written: shorter,
        /// or not a valid compressed stream).
        errno: i32,
    },
}

impl fmt::Display for Stop {
    /// One line: which budget, and its figures.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::States { limit } => write!(f, "the state budget of {limit} unique states was reached (--max-states)"),
            Stop::Depth { limit } => {
                write!(f, "the depth bound of {limit} steps was reached: no state further was checked (--max-depth)")
            }
            Stop::Memory { limit, projected } => write!(
                f,
                "the memory budget of {} would be passed ({} resident and about to be allocated; --max-memory)",
                human_bytes(*limit),
                human_bytes(*projected)
            ),
            Stop::Disk { limit, projected, shared_by } => {
                let whose = match shared_by {
                    0 | 1 => "--max-disk".to_string(),
                    n => format!("this search's share of --max-disk, which {n} searches at once share"),
                };
                write!(
                    f,
                    "the disk budget of {} would be passed ({} of spilled files; {whose})",
                    human_bytes(*limit),
                    human_bytes(*projected)
                )
            }
            Stop::DiskFailed { errno: 0 } => write!(f, "a spill file read back is not what was written to it"),
            Stop::DiskFailed { errno } => {
                write!(f, "a spill file failed: {}", std::io::Error::from_raw_os_error(*errno))
            }
        }
    }
}

impl Budget {
    /// No limit at all.
    pub fn unlimited() -> Budget {
        Budget::default()
    }

    /// Whether `states` unique states reach the state limit.
    pub fn states_reached(&self, states: usize) -> Option<Stop> {
        match self.max_states {
            Some(limit) if states >= limit => Some(Stop::States { limit }),
            _ => None,
        }
    }

    /// Whether the successors of a state `depth` steps from an initial state lie past the
    /// depth bound (and so are not kept).
    pub fn past_depth(&self, depth: usize) -> bool {
        self.max_depth.is_some_and(|limit| depth >= limit)
    }

    /// Whether the process's resident memory plus `about_to_allocate` bytes passes the memory
    /// limit (reads `/proc/self/status`; `None` when there is no limit or it cannot be read).
    pub fn memory_reached(&self, about_to_allocate: u64) -> Option<Stop> {
        let limit = self.max_memory?;
        let projected = resident_bytes()? + about_to_allocate;
        (projected > limit).then_some(Stop::Memory { limit, projected })
    }

    /// This search's share of a budget of `bytes` that `shared_by` searches share.
    pub fn share(&self, bytes: u64) -> u64 {
        bytes / self.shared_by.max(1) as u64
    }

    /// Whether spilled files of `bytes` pass this search's share of the disk limit.
    pub fn disk_reached(&self, bytes: u64) -> Option<Stop> {
        let limit = self.share(self.max_disk?);
        (bytes > limit).then_some(Stop::Disk { limit, projected: bytes, shared_by: self.shared_by.max(1) })
    }
}

/// The process's resident set size in bytes (`VmRSS`), if `/proc` has it.
pub fn resident_bytes() -> Option<u64> {
    kib_field(&std::fs::read_to_string("/proc/self/status").ok()?, "VmRSS:")
}

/// The memory the kernel estimates is available for new work, in bytes (`MemAvailable` in
/// `/proc/meminfo`), if it can be read.
pub fn available_bytes() -> Option<u64> {
    kib_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
}

/// The value of a `NAME:   1234 kB` line, in bytes.
fn kib_field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line[name.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// A byte count as people write it: `512 MiB`, `3.5 GiB`.
pub fn human_bytes(bytes: u64) -> String {
    const GIB: f64 = (1u64 << 30) as f64;
    const MIB: f64 = (1u64 << 20) as f64;
    let b = bytes as f64;
    if b >= GIB {
        format!("{:.1} GiB", b / GIB)
    } else if b >= MIB {
        format!("{:.0} MiB", b / MIB)
    } else if bytes >= 1024 {
        format!("{:.0} KiB", b / 1024.0)
    } else {
        format!("{bytes} bytes")
    }
}

/// Why a text is not a size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a number with an optional binary suffix.
    #[error("`{0}` is not a size (expected e.g. 512M, 4G or a number of bytes)")]
    NotASize(String),
    /// Under one byte, or beyond what a u64 holds.
    #[error("`{0}` is not a usable size (at least 1 byte)")]
    Unusable(String),
}

/// Parse a size: a number of bytes with an optional suffix `K`, `M`, `G` or `T` (powers of
/// 1024; `KB`, `KiB` and lower case are accepted too).
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let t = text.trim();
    let digits = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (number, unit) = t.split_at(digits);
    let not_a_size = || SizeError::NotASize(text.to_string());
    let shift = match unit.trim().to_ascii_lowercase().trim_end_matches("ib").trim_end_matches('b') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(not_a_size()),
    };
    let value: f64 = number.parse().map_err(|_| not_a_size())?;
    let bytes = value * (1u64 << shift) as f64;
    if !(1.0..=u64::MAX as f64).contains(&bytes) {
        return Err(SizeError::Unusable(text.to_string()));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4G"), Ok(4 << 30));
        assert_eq!(parse_size("512M"), Ok(512 << 20));
        assert_eq!(parse_size("1.5GiB"), Ok(3 << 29));
        assert_eq!(parse_size("2048"), Ok(2048));
        assert_eq!(parse_size("64kb"), Ok(64 << 10));
        assert_eq!(parse_size("4X"), Err(SizeError::NotASize("4X".into())));
        assert_eq!(parse_size("G"), Err(SizeError::NotASize("G".into())));
        assert_eq!(parse_size("0"), Err(SizeError::Unusable("0".into())));
    }

    #[test]
    fn searches_that_share_the_disk_budget_stop_at_their_share() {
        let alone = Budget { max_disk: Some(64 << 10), ..Budget::default() };
        assert_eq!(alone.disk_reached(64 << 10), None);
        let stop = alone.disk_reached((64 << 10) + 1).unwrap();
        assert_eq!(stop, Stop::Disk { limit: 64 << 10, projected: (64 << 10) + 1, shared_by: 1 });
        assert!(stop.to_string().ends_with("of spilled files; --max-disk)"), "{stop}");
        let two = Budget { shared_by: 2, ..alone };
        assert_eq!(two.share(64 << 10), 32 << 10);
        let stop = two.disk_reached((32 << 10) + 1).unwrap();
        assert_eq!(stop, Stop::Disk { limit: 32 << 10, projected: (32 << 10) + 1, shared_by: 2 });
        assert!(stop.to_string().contains("of 32 KiB would be passed"), "{stop}");
        assert!(stop.to_string().contains("share of --max-disk, which 2 searches at once share"), "{stop}");
        assert_eq!(human_bytes(1000), "1000 bytes");
        assert_eq!(human_bytes(3 << 20), "3 MiB");
    }

    #[test]
    fn memory_fields_are_read_in_bytes() {
        assert_eq!(kib_field("VmHWM:\t  10 kB\nVmRSS:\t  2048 kB\n", "VmRSS:"), Some(2 << 20));
        assert!(resident_bytes().is_some_and(|b| b > 0), "this process has a resident size");
        let tiny = Budget { max_memory: Some(1), ..Budget::default() };
        assert!(matches!(tiny.memory_reached(0), Some(Stop::Memory { limit: 1, .. })));
        assert_eq!(Budget::unlimited().memory_reached(u64::MAX / 2), None);
    }
}
