//! The breadth-first search on disk, which `explore.rs` moves to when it reaches its memory
//! limit with a spill folder (`--spill-dir`): external-memory breadth-first search, with
//! resident memory bounded by the budget whatever a level's width.
//!
//! - The frontier goes level by level to files, each written once and read once, in order.
//!   A record holds a successor's fingerprint, its parent's number, the action and the state.
//! - The parent records (parent number and action, 8 bytes a state) are appended to a file;
//!   paths are rebuilt from it by reading back only the records on the path.
//! - The fingerprints of the states already numbered are in one sorted file. A table in
//!   memory (the search in memory's own, no larger than at the switch nor than half the
//!   memory budget) keeps some of them and of the candidates already written, as a cache: a
//!   successor found there is dropped at once; when it is full it is emptied. The others go to the next level's file
//!   as candidates, and their fingerprints, with their place in that file, to an external
//!   sort (`runs.rs`: a chunk of a quarter of the memory budget, sorted and written as a run
//!   when full). At the level's end the runs are merged with each other and with the sorted
//!   file, which is rewritten with the new fingerprints: a candidate whose fingerprint is
//!   there already, or met earlier in the level, is dropped, and the places of the dropped
//!   ones (sorted too, by the same external sort) are skipped as the level is read back.
//!
//! A state is numbered when it is read back, so states keep the numbers, and the order, that
//! the search in memory gives them: the first successor met that is new, in the order states
//! are expanded. Every verdict, shortest counterexample and the worst case are the same
//! (`tests/spill.rs` compares them).
//!
//! Every file is an unnamed temporary file (`tempfile::tempfile_in`): the system removes it
//! when the process ends, whether it ends normally, panics, or is interrupted or killed.

use crate::search::budget::Stop;
use crate::search::fingerprint::{Fingerprinter, Fp, FP_BYTES};
pub(crate) use crate::search::frontier::Parents;
use crate::search::frontier::{parent_bytes, scratch, LevelIn, LevelOut, ParentLog, BUFFER};
use crate::search::pass::{End, Node, Tally, MEMORY_POLL, ROOT};
use crate::search::seen::Seen;
use crate::search::sorted_runs::{Key, Merged, Sorter};
use crate::search::space::DiskCodec;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
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
    /// Times the sorted file of fingerprints was rewritten with a level's new ones.
    pub merges: usize,
    /// Sorted runs written because a level's candidates (or their dropped places) passed the
    /// memory share for them (a quarter of the memory budget).
    pub runs: usize,
    /// Times the table of fingerprints in memory was full and emptied.
    pub clears: usize,
}

/// Candidates in a level from which the search on disk says on stderr that the level is done
/// (a search that goes on for minutes or hours shows how far it is).
const PROGRESS: u64 = 1_000_000;

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

/// Fingerprints of numbered states, sorted, in one file.
struct Sorted {
    file: Option<File>,
    count: u64,
}

impl Sorted {
    /// Every fingerprint in the file, in order.
    fn read(&self) -> io::Result<impl Iterator<Item = io::Result<Fp>>> {
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
            let mut b = [0u8; FP_BYTES];
            Some(input.read_exact(&mut b).map(|_| Fp::from_le_bytes(b)))
        }))
    }
}

/// Least keys in a chunk of the external sort, whatever the budget.
const MIN_CHUNK: usize = 1 << 12;

/// Keys of type `K` a chunk of `bytes` holds (at least [`MIN_CHUNK`]).
fn chunk_of<K>(bytes: u64) -> usize {
    ((bytes / std::mem::size_of::<K>() as u64) as usize).max(MIN_CHUNK)
}

/// Slots of a table of at most `bytes` (a power of two, at least the smallest table's).
fn table_cap(bytes: u64) -> usize {
    let slots = (bytes / FP_BYTES as u64).max(1 << 16);
    1 << (63 - slots.leading_zeros())
}

/// A candidate's sort key: its fingerprint, then its place in the level's file.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct CandidateKey {
    fp: Fp,
    index: u64,
}

impl Key for CandidateKey {
    const BYTES: usize = FP_BYTES + 8;
    fn put(self, out: &mut [u8]) {
        out[..FP_BYTES].copy_from_slice(&self.fp.to_le_bytes());
        out[FP_BYTES..].copy_from_slice(&self.index.to_le_bytes());
    }
    fn get(bytes: &[u8]) -> CandidateKey {
        let (fp, index) = bytes.split_at(FP_BYTES);
        CandidateKey {
            fp: Fp::from_le_bytes(fp.try_into().expect("a fingerprint's bytes")),
            index: u64::from_le_bytes(index.try_into().expect("8 bytes")),
        }
    }
}

/// Which records of the level being read are skipped: the places of the dropped candidates,
/// in order, met as the records are read one by one.
struct Drops {
    places: Merged<u64>,
    head: Option<u64>,
    index: u64,
}

impl Drops {
    fn new(mut places: Merged<u64>) -> io::Result<Drops> {
        let head = places.next()?;
        Ok(Drops { places, head, index: 0 })
    }

    fn none() -> Drops {
        Drops { places: Merged::Memory(Vec::new().into_iter()), head: None, index: 0 }
    }

    /// Whether the next record read is to be numbered (else it is skipped).
    fn keep(&mut self) -> io::Result<bool> {
        let i = self.index;
        self.index += 1;
        if self.head == Some(i) {
            self.head = self.places.next()?;
            return Ok(false);
        }
        Ok(true)
    }
}

/// The search on disk, with its files and figures.
struct Disk<M: DiskCodec> {
    dir: &'static Path,
    /// The cache of fingerprints known: numbered states and candidates already written.
    seen: Seen,
    /// Slots the table in memory may have at most.
    cap: usize,
    sorted: Sorted,
    parents: ParentLog<M>,
    /// The candidates of the level being built, by fingerprint and place.
    candidates: Sorter<CandidateKey>,
    /// Bytes of memory a chunk of an external sort may take (a quarter of the budget).
    chunk_bytes: u64,
    /// Bytes of the runs of dropped places of the level being read.
    drop_bytes: u64,
    figures: Spilled,
    /// States found, when the search ends before the end of a level.
    found: usize,
}

impl<M: DiskCodec> Disk<M> {
    /// Bytes its files take now, with `levels` bytes of frontier.
    fn bytes(&self, levels: u64) -> u64 {
        self.sorted.count * FP_BYTES as u64
            + self.parents.bytes()
            + levels
            + self.candidates.disk_bytes()
            + self.drop_bytes
    }

    fn note(&mut self, bytes: u64) {
        self.figures.peak_bytes = self.figures.peak_bytes.max(bytes);
    }

    /// Add a known fingerprint to the cache; whether it was not there. A full cache is
    /// emptied first.
    fn cache(&mut self, fp: Fp) -> bool {
        if self.seen.full() && self.seen.capacity() >= self.cap {
            self.seen.clear();
            self.figures.clears += 1;
        }
        self.seen.insert(fp)
    }

    /// At the switch: every fingerprint in the table (the states numbered in memory) into
    /// the sorted file, through the external sort.
    fn start(&mut self) -> io::Result<()> {
        let mut sort = Sorter::<Fp>::new(self.dir, chunk_of::<Fp>(self.chunk_bytes));
        for fp in self.seen.fingerprints() {
            sort.push(fp)?;
        }
        let mut merged = sort.finish()?;
        let mut out = BufWriter::with_capacity(BUFFER, scratch(self.dir)?);
        let mut count = 0u64;
        while let Some(fp) = merged.next()? {
            out.write_all(&fp.to_le_bytes())?;
            count += 1;
        }
        self.sorted = Sorted { file: Some(out.into_inner().map_err(|e| e.into_error())?), count };
        self.figures.runs += sort.written_runs;
        self.figures.written_bytes += sort.written_bytes + count * FP_BYTES as u64;
        Ok(())
    }

    /// At a level's end, with `levels` bytes of frontier on disk: merge the candidates of the
    /// level built with each other and with the sorted file, rewritten with the new ones.
    /// Returns the places of the candidates dropped (already numbered, or met earlier in the
    /// level), to skip as the level is read.
    fn settle(&mut self, levels: u64) -> io::Result<Drops> {
        if self.candidates.len() == 0 {
            self.drop_bytes = 0;
            return Ok(Drops::none());
        }
        let runs_bytes = self.candidates.disk_bytes();
        let mut candidates = self.candidates.finish()?;
        let mut drops = Sorter::<u64>::new(self.dir, chunk_of::<u64>(self.chunk_bytes));
        let mut out = BufWriter::with_capacity(BUFFER, scratch(self.dir)?);
        let mut old = self.sorted.read()?;
        let mut head = old.next().transpose()?;
        let (mut count, mut last) = (0u64, None);
        let mut put = |x: Fp| {
            count += 1;
            out.write_all(&x.to_le_bytes())
        };
        while let Some(key) = candidates.next()? {
            let CandidateKey { fp, index } = key;
            if last == Some(fp) {
                drops.push(index)?;
                continue;
            }
            last = Some(fp);
            while let Some(y) = head.filter(|y| *y < fp) {
                put(y)?;
                head = old.next().transpose()?;
            }
            if head == Some(fp) {
                drops.push(index)?;
            } else {
                put(fp)?;
            }
        }
        while let Some(y) = head {
            put(y)?;
            head = old.next().transpose()?;
        }
        drop(old);
        drop(candidates);
        let file = out.into_inner().map_err(|e| e.into_error())?;
        let before = self.sorted.count;
        self.sorted = Sorted { file: Some(file), count };
        let places = drops.finish()?;
        self.drop_bytes = drops.written_bytes;
        // At most: both sorted files, the candidates' runs and the dropped places' runs.
        let peak = self.bytes(levels) + before * FP_BYTES as u64 + runs_bytes;
        self.note(peak);
        self.figures.runs += std::mem::take(&mut self.candidates.written_runs) + drops.written_runs;
        self.figures.written_bytes +=
            count * FP_BYTES as u64 + std::mem::take(&mut self.candidates.written_bytes) + drops.written_bytes;
        self.figures.merges += 1;
        Drops::new(places)
    }
}

/// Go on with the search on disk from where the search in memory reached its memory limit:
/// `nodes` are its parent records, `queue` its frontier (the rest of one level, then the
/// start of the next). Returns how it ended, the parent records, what it wrote and the states
/// found.
pub(crate) fn go_on<M: DiskCodec>(
    t: &mut Tally<M>,
    seen: Seen,
    nodes: Vec<Node<M::Action>>,
    queue: VecDeque<(M::State, u32, u32)>,
    builder: &Fingerprinter,
) -> (End, Parents<M>, Spilled, usize) {
    let dir = t.options.budget.spill_dir.expect("a spill folder");
    let first = nodes.len() - queue.len();
    let mut depth = queue.front().map_or(0, |q| q.2 as usize);
    // A quarter of the memory budget (of this search's share of it) for a chunk of
    // candidates, as much for one of dropped places, never both at once.
    let budget = t.options.budget;
    let share = budget.max_memory.map_or(0, |m| budget.share(m)) / 4;
    let log = ParentLog::new(dir);
    let mut disk = match log {
        Ok(parents) => Disk {
            dir,
            // The table's size at the switch, and at most half the budget.
            cap: seen.capacity().min(table_cap(share * 2)),
            seen,
            sorted: Sorted { file: None, count: 0 },
            parents,
            candidates: Sorter::new(dir, chunk_of::<CandidateKey>(share)),
            chunk_bytes: share,
            drop_bytes: 0,
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
        Ok(()) => t.bounded(End::Exhaustive),
        Err(halt) => stopped(halt, depth),
    };
    disk.figures.written_bytes += (disk.parents.count - first as u64) * parent_bytes::<M>() as u64;
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
/// counts them: those numbered, the rest of the level being read, and the new states of the
/// next level: its first `known` records (numbered in memory before the switch) and the
/// candidates not numbered, each once. `next_bytes` of the next level were written and are
/// counted in the figures with the candidates' runs, which only a level's end counts otherwise.
fn early<M: DiskCodec>(
    model: &M,
    end: End,
    disk: &mut Disk<M>,
    reading: &mut LevelIn<M>,
    drops: &mut Drops,
    (numbered, known): (u64, u64),
    next_bytes: u64,
) -> Halt {
    let mut count = || -> io::Result<u64> {
        let mut found = numbered + known;
        while reading.next(model)?.is_some() {
            found += u64::from(drops.keep()?);
        }
        let mut candidates = disk.candidates.finish()?;
        let mut old = disk.sorted.read()?;
        let (mut head, mut last) = (old.next().transpose()?, None);
        while let Some(key) = candidates.next()? {
            let fp = key.fp;
            if last == Some(fp) {
                continue;
            }
            last = Some(fp);
            while head.is_some_and(|y| y < fp) {
                head = old.next().transpose()?;
            }
            found += u64::from(head != Some(fp));
        }
        Ok(found)
    };
    let counted = count();
    disk.figures.written_bytes += next_bytes + std::mem::take(&mut disk.candidates.written_bytes);
    disk.figures.runs += std::mem::take(&mut disk.candidates.written_runs);
    match counted {
        Ok(found) => {
            disk.found = found as usize;
            Halt::End(end)
        }
        Err(e) => Halt::Io(e),
    }
}

/// The levels on disk, from the switch until the search ends.
fn run<M: DiskCodec>(
    t: &mut Tally<M>,
    disk: &mut Disk<M>,
    nodes: Vec<Node<M::Action>>,
    queue: VecDeque<(M::State, u32, u32)>,
    builder: &Fingerprinter,
    depth: &mut usize,
) -> Result<(), Halt> {
    let model = t.model;
    let first = nodes.len() - queue.len();
    for n in &nodes[..first] {
        disk.parents.push(model, *n)?;
    }
    // The frontier in memory: the rest of this level, then the start of the next, all
    // numbered in memory (so in the table, and in the sorted file from there).
    let (mut current, mut next) = (LevelOut::new(disk.dir)?, LevelOut::new(disk.dir)?);
    for (s, node, d) in &queue {
        let n = nodes[*node as usize];
        let fp = builder.of(s);
        let level = if *d as usize == *depth { &mut current } else { &mut next };
        level.push(model, fp, n.parent, n.action, s)?;
    }
    drop(queue);
    drop(nodes);
    // The next level's first records are new: never candidates, never dropped.
    let mut known = next.count;
    let mut reading = current.read_back()?;
    // Each level counts in what was written once read back, when its file is whole.
    disk.figures.written_bytes += reading.bytes() + (first as u64) * parent_bytes::<M>() as u64;
    disk.start()?;
    if disk.seen.capacity() > disk.cap {
        // Every fingerprint is in the sorted file now: a smaller cache loses none.
        disk.seen = Seen::new();
    }
    let mut drops = Drops::none();
    let mut numbered = first as u64;
    let mut successors = Vec::new();
    let budget = t.options.budget;
    loop {
        while let Some(c) = reading.next(model)? {
            if !drops.keep()? {
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
            disk.parents.push(model, Node { parent: c.parent, action: c.action })?;
            disk.cache(c.fp);
            if t.expanded.is_multiple_of(MEMORY_POLL) {
                let bytes = disk.bytes(reading.bytes() + next.bytes());
                disk.note(bytes);
                let stop = budget.states_reached((numbered + next.count) as usize).or(budget.disk_reached(bytes));
                if let Some(why) = stop {
                    let end = End::Stopped { why, depth_completed: depth.saturating_sub(1) };
                    return Err(early(model, end, disk, &mut reading, &mut drops, (numbered, known), next.bytes()));
                }
            }
            if t.visit(&c.state, node, *depth) {
                let at = (numbered, known);
                return Err(early(model, End::Answered, disk, &mut reading, &mut drops, at, next.bytes()));
            }
            t.successors(&c.state, builder, &mut successors);
            let past = budget.past_depth(*depth);
            for (a, s, fp) in successors.drain(..) {
                let fp = fp.max(1);
                if !disk.cache(fp) {
                    continue;
                }
                if past {
                    // One step past the depth bound: never a candidate. (Whether it is new is
                    // known here only from the cache, so a pass on disk may say it stopped at the
                    // bound where every such state was in fact seen before.)
                    t.cut = true;
                } else {
                    disk.candidates.push(CandidateKey { fp, index: next.count })?;
                    next.push(model, fp, node, Some(a), &s)?;
                }
            }
        }
        if next.count == 0 {
            return Ok(());
        }
        let upcoming = std::mem::replace(&mut next, LevelOut::new(disk.dir)?).read_back()?;
        disk.figures.written_bytes += upcoming.bytes();
        if upcoming.count() >= PROGRESS {
            let bytes = disk.bytes(reading.bytes() + upcoming.bytes());
            eprintln!(
                "mcp-once: on disk: depth {depth} done, {numbered} states, {} candidates next, {} of files",
                upcoming.count(),
                crate::search::budget::human_bytes(bytes)
            );
        }
        drops = disk.settle(reading.bytes() + upcoming.bytes())?;
        known = 0;
        reading = upcoming;
        *depth += 1;
    }
}
