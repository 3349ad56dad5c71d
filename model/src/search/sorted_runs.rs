//! Sorting more keys than the memory share for them holds: an external merge sort for the
//! search on disk (`spill.rs`).
//!
//! Keys are gathered in a chunk of at most a given number; a full chunk is sorted in memory
//! and written as one sorted run, after the others, in one unnamed file. When every key is in,
//! the runs are merged (a heap of the head of each run), so they come back in order while
//! memory holds only one read buffer per run. More runs than [`FAN_IN`] are first merged in
//! groups into longer runs, so the buffers stay few however many runs were written. Keys that
//! all fit in one chunk never touch the disk.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A fixed-size key that sorts as its value.
pub(crate) trait Key: Copy + Ord {
    /// Bytes of one key on disk.
    const BYTES: usize;
    /// Write the key into `out` (`BYTES` long).
    fn put(self, out: &mut [u8]);
    /// Read a key [`Key::put`] wrote.
    fn get(bytes: &[u8]) -> Self;
}

impl Key for u64 {
    const BYTES: usize = 8;
    fn put(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn get(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes.try_into().expect("8 bytes"))
    }
}

impl Key for u128 {
    const BYTES: usize = 16;
    fn put(self, out: &mut [u8]) {
        out.copy_from_slice(&self.to_le_bytes());
    }
    fn get(bytes: &[u8]) -> u128 {
        u128::from_le_bytes(bytes.try_into().expect("16 bytes"))
    }
}

/// Runs merged at once at most (each has a read buffer of [`READ_BUFFER`]).
const FAN_IN: usize = 64;

/// Bytes of the read buffer of each run during a merge.
const READ_BUFFER: usize = 256 << 10;

/// Bytes of the write buffer of the runs' file.
const WRITE_BUFFER: usize = 1 << 20;

/// Keys being sorted: the chunk in memory and the runs already written.
pub(crate) struct Sorter<K: Key> {
    dir: &'static Path,
    chunk: Vec<K>,
    /// Keys a chunk holds at most.
    limit: usize,
    out: Option<BufWriter<File>>,
    /// Each run's first key's place in the file and its number of keys.
    runs: Vec<(u64, u64)>,
    /// Runs written (merged runs included).
    pub(crate) written_runs: usize,
    /// Bytes written to the runs' files.
    pub(crate) written_bytes: u64,
}

impl<K: Key> Sorter<K> {
    /// No key yet; a chunk holds at most `limit` keys (at least one) before it goes to disk.
    pub(crate) fn new(dir: &'static Path, limit: usize) -> Sorter<K> {
        Sorter {
            dir,
            chunk: Vec::new(),
            limit: limit.max(1),
            out: None,
            runs: Vec::new(),
            written_runs: 0,
            written_bytes: 0,
        }
    }

    /// Keys pushed so far.
    pub(crate) fn len(&self) -> u64 {
        self.chunk.len() as u64 + self.runs.iter().map(|r| r.1).sum::<u64>()
    }

    /// Bytes its runs take on disk now.
    pub(crate) fn disk_bytes(&self) -> u64 {
        self.runs.iter().map(|r| r.1).sum::<u64>() * K::BYTES as u64
    }

    /// Add a key.
    pub(crate) fn push(&mut self, key: K) -> io::Result<()> {
        if self.chunk.len() >= self.limit {
            self.spill()?;
        }
        if self.chunk.capacity() == 0 {
            self.chunk.reserve_exact(self.limit.min(1 << 16));
        }
        self.chunk.push(key);
        Ok(())
    }

    /// Sort the chunk and write it as a run, after the others.
    fn spill(&mut self) -> io::Result<()> {
        self.chunk.sort_unstable();
        let count = self.chunk.len() as u64;
        let start = self.runs.last().map_or(0, |r| r.0 + r.1 * K::BYTES as u64);
        let out = match &mut self.out {
            Some(out) => out,
            None => self.out.insert(BufWriter::with_capacity(WRITE_BUFFER, tempfile::tempfile_in(self.dir)?)),
        };
        write_keys(out, self.chunk.drain(..))?;
        self.runs.push((start, count));
        self.written_runs += 1;
        self.written_bytes += count * K::BYTES as u64;
        Ok(())
    }

    /// Every key pushed, in order (equal keys kept), leaving the sorter empty for new keys.
    pub(crate) fn finish(&mut self) -> io::Result<Merged<K>> {
        if self.runs.is_empty() {
            let mut keys = std::mem::take(&mut self.chunk);
            keys.sort_unstable();
            return Ok(Merged::Memory(keys.into_iter()));
        }
        if !self.chunk.is_empty() {
            self.spill()?;
        }
        self.chunk = Vec::new();
        let out = self.out.take().expect("a run was written");
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        let mut runs = std::mem::take(&mut self.runs);
        while runs.len() > FAN_IN {
            let mut out = BufWriter::with_capacity(WRITE_BUFFER, tempfile::tempfile_in(self.dir)?);
            let (mut longer, mut at) = (Vec::new(), 0);
            for group in runs.chunks(FAN_IN) {
                let count: u64 = group.iter().map(|r| r.1).sum();
                let mut heap = Heap::<K>::new(file.try_clone()?, group)?;
                let mut b = vec![0u8; K::BYTES];
                while let Some(k) = heap.next()? {
                    k.put(&mut b);
                    out.write_all(&b)?;
                }
                longer.push((at, count));
                at += count * K::BYTES as u64;
                self.written_runs += 1;
                self.written_bytes += count * K::BYTES as u64;
            }
            file = out.into_inner().map_err(|e| e.into_error())?;
            runs = longer;
        }
        Ok(Merged::Disk(Heap::new(file, &runs)?))
    }
}

/// Write `keys` one after the other.
fn write_keys<K: Key>(out: &mut BufWriter<File>, keys: impl Iterator<Item = K>) -> io::Result<()> {
    let mut b = vec![0u8; K::BYTES];
    for k in keys {
        k.put(&mut b);
        out.write_all(&b)?;
    }
    Ok(())
}

/// One run being read back, a buffer at a time.
struct RunReader {
    at: u64,
    left: u64,
    buf: Vec<u8>,
    pos: usize,
}

impl RunReader {
    fn next<K: Key>(&mut self, file: &File) -> io::Result<Option<K>> {
        if self.pos == self.buf.len() {
            if self.left == 0 {
                self.buf = Vec::new();
                self.pos = 0;
                return Ok(None);
            }
            let n = self.left.min((READ_BUFFER / K::BYTES) as u64);
            self.buf.resize(n as usize * K::BYTES, 0);
            file.read_exact_at(&mut self.buf, self.at)?;
            self.at += n * K::BYTES as u64;
            self.left -= n;
            self.pos = 0;
        }
        let k = K::get(&self.buf[self.pos..self.pos + K::BYTES]);
        self.pos += K::BYTES;
        Ok(Some(k))
    }
}

/// Runs of one file merged: the smallest head first.
pub(crate) struct Heap<K: Key> {
    file: File,
    readers: Vec<RunReader>,
    heap: BinaryHeap<Reverse<(K, usize)>>,
}

impl<K: Key> Heap<K> {
    fn new(file: File, runs: &[(u64, u64)]) -> io::Result<Heap<K>> {
        let mut h = Heap { file, readers: Vec::new(), heap: BinaryHeap::new() };
        for (i, &(at, left)) in runs.iter().enumerate() {
            let mut r = RunReader { at, left, buf: Vec::new(), pos: 0 };
            if let Some(k) = r.next(&h.file)? {
                h.heap.push(Reverse((k, i)));
            }
            h.readers.push(r);
        }
        Ok(h)
    }

    fn next(&mut self) -> io::Result<Option<K>> {
        let Some(Reverse((k, i))) = self.heap.pop() else { return Ok(None) };
        if let Some(n) = self.readers[i].next(&self.file)? {
            self.heap.push(Reverse((n, i)));
        }
        Ok(Some(k))
    }
}

/// Every key of a sorter, in order: from memory, or merged from its runs on disk.
pub(crate) enum Merged<K: Key> {
    /// The keys fitted in one chunk.
    Memory(std::vec::IntoIter<K>),
    /// The runs, merged as they are read.
    Disk(Heap<K>),
}

impl<K: Key> Merged<K> {
    /// The next key, `None` at the end.
    pub(crate) fn next(&mut self) -> io::Result<Option<K>> {
        match self {
            Merged::Memory(keys) => Ok(keys.next()),
            Merged::Disk(heap) => heap.next(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys sorted through runs on disk, merged in more than one pass, come back as a sort in
    /// memory gives them.
    #[test]
    fn runs_merge_back_in_order() {
        let dir: &'static Path = Box::leak(tempfile::tempdir().unwrap().keep().into_boxed_path());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut keys = Vec::new();
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            keys.push(x % 5_000);
        }
        for limit in [7, 100, 20_000] {
            let mut s = Sorter::<u64>::new(dir, limit);
            for k in &keys {
                s.push(*k).unwrap();
            }
            assert_eq!(s.len(), keys.len() as u64);
            let mut m = s.finish().unwrap();
            let mut back = Vec::new();
            while let Some(k) = m.next().unwrap() {
                back.push(k);
            }
            let mut want = keys.clone();
            want.sort_unstable();
            assert_eq!(back, want, "chunks of {limit}");
            assert_eq!(s.written_runs > 0, limit < keys.len(), "chunks of {limit}: {} runs", s.written_runs);
            assert_eq!(s.len(), 0);
        }
        std::fs::remove_dir(dir).expect("no file left");
    }
}
