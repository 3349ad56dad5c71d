//! The breadth-first search on disk, which `explore.rs` moves to when it reaches its memory
//! limit with a spill folder (`--spill-dir`): external-memory breadth-first search.
//!
//! - The frontier goes level by level to files, each written once and read once, in order.
//!   A record holds a successor's fingerprint, its parent's number, the action and the state.
//! - The parent records (parent number and action, 8 bytes a state) are appended to a file;
//!   paths are rebuilt from it by reading back only the records on the path.
//! - The fingerprints of the states already numbered are in one sorted file, plus those since
//!   its last rewrite in memory (the same table as the search in memory, kept no larger than
//!   it was when the search moved to disk). A successor found in memory is dropped at once;
//!   the others go to the next level's file as candidates, and when the level ends their
//!   fingerprints are sorted and merged against the sorted file: those found there are
//!   dropped as the next level is read back. When the table in memory is full, its
//!   fingerprints (less the candidates of the level being built, which are not decided yet)
//!   are merged into the sorted file and the table starts again with the current and next
//!   levels.
//!
//! A state is numbered when it is read back, so states keep the numbers, and the order, that
//! the search in memory gives them: the first successor met that is new, in the order states
//! are expanded. Every verdict, shortest counterexample and the worst case are the same
//! (`tests/spill.rs` compares them).
//!
//! Every file is an unnamed temporary file (`tempfile::tempfile_in`): the system removes it
//! when the process ends, whether it ends normally, panics, or is interrupted or killed.

use crate::budget::Stop;
use crate::codec::{decode_action, decode_state, encode_action, encode_state, ACTION_BYTES, STATE_BYTES};
use crate::pass::{fingerprint, End, Node, Tally, MEMORY_POLL, ROOT};
use crate::seen::Seen;
use crate::state::{State, View};
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// What the search wrote to disk once it moved there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Spilled {
    /// States numbered when it moved to disk.
    pub at_states: usize,
    /// Most bytes its files took at once.
    pub peak_bytes: u64,
    /// Bytes written in all.
    pub written_bytes: u64,
    /// Times the fingerprints in memory were merged into the sorted file.
    pub merges: usize,
}

/// Bytes of one frontier record: fingerprint, parent, action, state.
const RECORD: usize = 8 + 4 + ACTION_BYTES + STATE_BYTES;

/// Bytes of one parent record: parent, action, one unused byte.
const PARENT: usize = 8;

/// Candidates in a level from which the search on disk says on stderr that the level is done
/// (a search that goes on for minutes or hours shows how far it is).
const PROGRESS: u64 = 1_000_000;

/// Buffer of each file reader and writer.
const BUFFER: usize = 1 << 20;

/// Why the search on disk ended early.
enum Halt {
    /// A budget or an answer.
    End(End),
    /// A file operation failed.
    Io(io::Error),
}

impl From<io::Error> for Halt {
    fn from(e: io::Error) -> Halt {
        Halt::Io(e)
    }
}

/// A new unnamed file in `dir`.
fn scratch(dir: &Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

/// An action as stored, `None` (an initial state) as tag 255.
fn action_bytes(a: Option<crate::action::Action>) -> [u8; ACTION_BYTES] {
    a.map_or([u8::MAX, 0, 0], encode_action)
}

fn action_of(bytes: [u8; ACTION_BYTES]) -> io::Result<Option<crate::action::Action>> {
    if bytes[0] == u8::MAX {
        return Ok(None);
    }
    decode_action(bytes).map(Some).ok_or_else(|| corrupt("an action"))
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("a spill file holds no valid {what}"))
}

/// One level of the frontier being written.
struct LevelOut {
    out: BufWriter<File>,
    count: u64,
}

impl LevelOut {
    fn new(dir: &Path) -> io::Result<LevelOut> {
        Ok(LevelOut { out: BufWriter::with_capacity(BUFFER, scratch(dir)?), count: 0 })
    }

    fn push(&mut self, fp: u64, parent: u32, action: Option<crate::action::Action>, s: &State) -> io::Result<()> {
        let mut r = [0u8; RECORD];
        r[..8].copy_from_slice(&fp.to_le_bytes());
        r[8..12].copy_from_slice(&parent.to_le_bytes());
        r[12..12 + ACTION_BYTES].copy_from_slice(&action_bytes(action));
        encode_state(s, (&mut r[12 + ACTION_BYTES..]).try_into().expect("state bytes"));
        self.count += 1;
        self.out.write_all(&r)
    }

    fn bytes(&self) -> u64 {
        self.count * RECORD as u64
    }

    /// The level written, to be read from its start.
    fn read_back(self, view: View) -> io::Result<LevelIn> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        Ok(LevelIn { input: BufReader::with_capacity(BUFFER, file), left: self.count, count: self.count, view })
    }
}

/// One level of the frontier being read, in the order it was written.
struct LevelIn {
    input: BufReader<File>,
    left: u64,
    count: u64,
    view: View,
}

/// One frontier record read back.
struct Candidate {
    fp: u64,
    parent: u32,
    action: Option<crate::action::Action>,
    state: State,
}

impl LevelIn {
    fn next(&mut self) -> io::Result<Option<Candidate>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut r = [0u8; RECORD];
        self.input.read_exact(&mut r)?;
        let state = decode_state((&r[12 + ACTION_BYTES..]).try_into().expect("state bytes"), self.view)
            .ok_or_else(|| corrupt("state"))?;
        Ok(Some(Candidate {
            fp: u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
            parent: u32::from_le_bytes(r[8..12].try_into().expect("4 bytes")),
            action: action_of(r[12..12 + ACTION_BYTES].try_into().expect("action bytes"))?,
            state,
        }))
    }

    fn bytes(&self) -> u64 {
        self.count * RECORD as u64
    }
}

/// The parent record of every state numbered, by number, in a file.
pub(crate) struct ParentLog {
    out: BufWriter<File>,
    count: u64,
}

impl ParentLog {
    fn push(&mut self, n: Node) -> io::Result<()> {
        let mut r = [0u8; PARENT];
        r[..4].copy_from_slice(&n.parent.to_le_bytes());
        r[4..4 + ACTION_BYTES].copy_from_slice(&action_bytes(n.action));
        self.count += 1;
        self.out.write_all(&r)
    }

    /// States numbered.
    pub(crate) fn len(&self) -> usize {
        self.count as usize
    }

    /// The record of state `node` (written records only: call after [`ParentLog::sync`]).
    pub(crate) fn get(&self, node: u32) -> io::Result<Node> {
        let mut r = [0u8; PARENT];
        self.out.get_ref().read_exact_at(&mut r, node as u64 * PARENT as u64)?;
        let parent = u32::from_le_bytes(r[..4].try_into().expect("4 bytes"));
        Ok(Node { parent, action: action_of(r[4..4 + ACTION_BYTES].try_into().expect("action bytes"))? })
    }

    fn sync(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The parent records of every state: in memory, or in a file the spilled search wrote.
pub(crate) enum Parents {
    /// One record per state, by number.
    Memory(Vec<Node>),
    /// The same, read back from disk.
    Disk(ParentLog),
}

impl Parents {
    /// The record of state `node`.
    pub(crate) fn get(&self, node: u32) -> Node {
        match self {
            Parents::Memory(nodes) => nodes[node as usize],
            Parents::Disk(log) => log.get(node).expect("reading back the parent records spilled to disk"),
        }
    }
}

/// Fingerprints of numbered states, sorted, in one file.
struct Sorted {
    file: Option<File>,
    count: u64,
}

impl Sorted {
    /// Every fingerprint in the file, in order.
    fn read(&self) -> io::Result<impl Iterator<Item = io::Result<u64>>> {
        let mut input = match &self.file {
            Some(f) => {
                let mut f = f.try_clone()?;
                f.rewind()?;
                Some(BufReader::with_capacity(BUFFER, f))
            }
            None => None,
        };
        let mut left = self.count;
        Ok(std::iter::from_fn(move || {
            let input = input.as_mut()?;
            if left == 0 {
                return None;
            }
            left -= 1;
            let mut b = [0u8; 8];
            Some(input.read_exact(&mut b).map(|_| u64::from_le_bytes(b)))
        }))
    }

    /// Merge `fresh` (sorted) in, writing a new file; returns its peak bytes on disk (both files).
    fn merge(&mut self, dir: &Path, fresh: &[u64]) -> io::Result<u64> {
        let mut out = BufWriter::with_capacity(BUFFER, scratch(dir)?);
        let (mut count, mut last) = (0u64, None);
        let mut put = |x: u64| -> io::Result<()> {
            if last != Some(x) {
                last = Some(x);
                count += 1;
                out.write_all(&x.to_le_bytes())?;
            }
            Ok(())
        };
        let mut old = self.read()?.peekable();
        for &x in fresh {
            while let Some(y) = old.next_if(|y| y.as_ref().map_or(true, |y| *y < x)) {
                put(y?)?;
            }
            put(x)?;
        }
        for y in old {
            put(y?)?;
        }
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let peak = (self.count + count) * 8;
        *self = Sorted { file: Some(file), count };
        Ok(peak)
    }

    /// Those of `candidates` (sorted) that are in the file, sorted.
    fn found(&self, candidates: &[u64]) -> io::Result<Vec<u64>> {
        let mut found = Vec::new();
        let mut i = 0;
        for y in self.read()? {
            let y = y?;
            while i < candidates.len() && candidates[i] < y {
                i += 1;
            }
            if i == candidates.len() {
                break;
            }
            if candidates[i] == y {
                found.push(y);
            }
        }
        Ok(found)
    }
}

/// The search on disk, with its files and figures.
struct Disk {
    dir: &'static Path,
    seen: Seen,
    /// Slots the table in memory may have at most.
    cap: usize,
    sorted: Sorted,
    parents: ParentLog,
    figures: Spilled,
    /// States found, when the search ends before the end of a level.
    found: usize,
}

impl Disk {
    /// Bytes its files take now, with `levels` bytes of frontier.
    fn bytes(&self, levels: u64) -> u64 {
        self.sorted.count * 8 + self.parents.count * PARENT as u64 + levels
    }

    fn note(&mut self, bytes: u64) {
        self.figures.peak_bytes = self.figures.peak_bytes.max(bytes);
    }

    /// Merge the table in memory into the sorted file, less `pending` (the candidates of the
    /// level being built, not decided yet), and start the table again with them and as many
    /// of `current` (the level being read) as fit in half of it, to catch repeats early.
    fn merge(&mut self, pending: &[u64], current: &[u64], levels: u64) -> io::Result<()> {
        let mut undecided = pending.to_vec();
        undecided.sort_unstable();
        let mut fresh = std::mem::replace(&mut self.seen, Seen::new()).into_fingerprints();
        fresh.retain(|x| undecided.binary_search(x).is_err());
        fresh.sort_unstable();
        let peak = self.sorted.merge(self.dir, &fresh)?;
        self.figures.written_bytes += self.sorted.count * 8;
        self.figures.merges += 1;
        drop(fresh);
        let now = self.bytes(levels);
        self.note(now + peak - self.sorted.count * 8);
        for fp in pending {
            self.seen.insert(*fp);
        }
        // Half the table's room at most, so that a merge always frees room for new states (a
        // level larger than that lets the table grow).
        let room = self.cap * 5 / 16;
        if self.seen.len > room {
            self.cap = self.cap.max(self.seen.capacity() * 2);
        }
        for fp in current.iter().take(room.saturating_sub(self.seen.len)) {
            self.seen.insert(*fp);
        }
        Ok(())
    }
}

/// Go on with the search on disk from where the search in memory reached its memory limit:
/// `nodes` are its parent records, `queue` its frontier (the rest of one level, then the
/// start of the next). Returns how it ended, the parent records, what it wrote and the states
/// found.
pub(crate) fn go_on(
    t: &mut Tally,
    seen: Seen,
    nodes: Vec<Node>,
    queue: VecDeque<(State, u32, u32)>,
    builder: &ahash::RandomState,
) -> (End, Parents, Spilled, usize) {
    let dir = t.options.budget.spill_dir.expect("a spill folder");
    let first = nodes.len() - queue.len();
    let mut depth = queue.front().map_or(0, |q| q.2 as usize);
    let log = scratch(dir).map(|f| ParentLog { out: BufWriter::with_capacity(BUFFER, f), count: 0 });
    let mut disk = match log {
        Ok(parents) => Disk {
            dir,
            cap: seen.capacity(),
            seen,
            sorted: Sorted { file: None, count: 0 },
            parents,
            figures: Spilled { at_states: first, ..Spilled::default() },
            found: 0,
        },
        Err(e) => {
            let end = stopped(Halt::Io(e), depth);
            let found = nodes.len();
            return (end, Parents::Memory(nodes), Spilled::default(), found);
        }
    };
    let end = match run(t, &mut disk, nodes, queue, builder, &mut depth) {
        Ok(()) => End::Exhaustive,
        Err(halt) => stopped(halt, depth),
    };
    disk.figures.written_bytes += (disk.parents.count - first as u64) * PARENT as u64;
    let end = match disk.parents.sync() {
        Err(e) if !matches!(end, End::Stopped { .. }) => stopped(Halt::Io(e), depth),
        _ => end,
    };
    let found = if disk.found > 0 { disk.found } else { disk.parents.len() };
    (end, Parents::Disk(disk.parents), disk.figures, found)
}

/// How a pass that halted while reading level `depth` ended.
fn stopped(halt: Halt, depth: usize) -> End {
    match halt {
        Halt::End(end) => end,
        Halt::Io(e) => End::Stopped {
            why: Stop::DiskFailed { errno: e.raw_os_error().unwrap_or(0) },
            depth_completed: depth.saturating_sub(1),
        },
    }
}

/// End the search early with `end`, counting the states found so far as the search in memory
/// counts them: those numbered, the rest of the level being read, and the new states among
/// the candidates of the next level.
fn early(
    end: End,
    disk: &mut Disk,
    reading: &mut LevelIn,
    old: &[u64],
    pending: &mut [u64],
    numbered: u64,
) -> Result<(), Halt> {
    let mut found = numbered;
    while let Some(c) = reading.next()? {
        found += u64::from(old.binary_search(&c.fp).is_err());
    }
    pending.sort_unstable();
    found += (pending.len() - disk.sorted.found(pending)?.len()) as u64;
    disk.found = found as usize;
    Err(Halt::End(end))
}

/// The levels on disk, from the switch until the search ends.
fn run(
    t: &mut Tally,
    disk: &mut Disk,
    nodes: Vec<Node>,
    queue: VecDeque<(State, u32, u32)>,
    builder: &ahash::RandomState,
    depth: &mut usize,
) -> Result<(), Halt> {
    let first = nodes.len() - queue.len();
    let view = queue.front().map_or_else(View::default, |q| q.0.view);
    for n in &nodes[..first] {
        disk.parents.push(*n)?;
    }
    // The frontier in memory: the rest of this level, then the start of the next.
    let (mut current, mut next) = (LevelOut::new(disk.dir)?, LevelOut::new(disk.dir)?);
    let (mut current_fps, mut pending) = (Vec::new(), Vec::new());
    for (s, node, d) in &queue {
        let n = nodes[*node as usize];
        let fp = fingerprint(builder, s).max(1);
        let (level, fps) =
            if *d as usize == *depth { (&mut current, &mut current_fps) } else { (&mut next, &mut pending) };
        level.push(fp, n.parent, n.action, s)?;
        fps.push(fp);
    }
    drop(queue);
    drop(nodes);
    let levels = current.bytes() + next.bytes();
    disk.figures.written_bytes += current.bytes() + (first as u64) * PARENT as u64;
    disk.merge(&pending, &current_fps, levels)?;
    let mut reading = current.read_back(view)?;
    // Candidates of the level being read that were found among the numbered states.
    let mut old: Vec<u64> = Vec::new();
    let mut numbered = first as u64;
    let mut successors = Vec::new();
    let budget = t.options.budget;
    loop {
        while let Some(c) = reading.next()? {
            if old.binary_search(&c.fp).is_ok() {
                continue;
            }
            if numbered >= ROOT as u64 {
                return Err(Halt::End(End::Stopped {
                    why: Stop::States { limit: ROOT as usize },
                    depth_completed: depth.saturating_sub(1),
                }));
            }
            let node = numbered as u32;
            numbered += 1;
            disk.parents.push(Node { parent: c.parent, action: c.action })?;
            if t.expanded.is_multiple_of(MEMORY_POLL) {
                let bytes = disk.bytes(reading.bytes() + next.bytes());
                disk.note(bytes);
                let stop = budget.states_reached((numbered + next.count) as usize).or(budget.disk_reached(bytes));
                if let Some(why) = stop {
                    let end = End::Stopped { why, depth_completed: depth.saturating_sub(1) };
                    return early(end, disk, &mut reading, &old, &mut pending, numbered);
                }
            }
            if t.visit(&c.state, node, *depth) {
                return early(End::Answered, disk, &mut reading, &old, &mut pending, numbered);
            }
            t.successors(&c.state, builder, &mut successors);
            for (a, s, fp) in successors.drain(..) {
                let fp = fp.max(1);
                if disk.seen.full() && disk.seen.capacity() >= disk.cap {
                    let levels = reading.bytes() + next.bytes();
                    disk.merge(&pending, &current_fps, levels)?;
                }
                if disk.seen.insert(fp) {
                    pending.push(fp);
                    next.push(fp, node, Some(a), &s)?;
                }
            }
        }
        if next.count == 0 {
            return Ok(());
        }
        disk.figures.written_bytes += next.bytes();
        if next.count >= PROGRESS {
            let bytes = disk.bytes(reading.bytes() + next.bytes());
            eprintln!(
                "mcp-once: on disk: depth {depth} done, {numbered} states, {} candidates next, {} of files",
                next.count,
                crate::budget::human_bytes(bytes)
            );
        }
        // Sorted for the merge; the level's own order is kept, so that a part of it (as a
        // merge keeps) is spread over the table like any fingerprints, not a sorted prefix
        // crowded into its first slots.
        let mut sorted = pending.clone();
        sorted.sort_unstable();
        old = disk.sorted.found(&sorted)?;
        drop(sorted);
        pending.retain(|x| old.binary_search(x).is_err());
        current_fps = std::mem::take(&mut pending);
        reading = std::mem::replace(&mut next, LevelOut::new(disk.dir)?).read_back(view)?;
        *depth += 1;
    }
}
