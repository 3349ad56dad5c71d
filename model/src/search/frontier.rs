//! The files of the search on disk (`spill.rs`): the frontier's levels, each written once
//! and read back once in order, and the parent record of every state numbered, read back one
//! by one to rebuild paths. Every file is unnamed (`tempfile::tempfile_in`).
//!
//! A level is a zstd stream (level 1): its records hold every field of a state, most of them
//! the same as the record before (a state's successors are written one after another), and
//! they take several times less disk so; a level is read once, in order, so nothing needs
//! to find a record inside it.

use crate::search::fingerprint::{Fp, FP_BYTES};
use crate::search::pass::Node;
use crate::search::space::DiskCodec;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::marker::PhantomData;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Where a frontier record's action starts: after its fingerprint and its parent.
const ACTION_AT: usize = FP_BYTES + 4;

/// Bytes of one frontier record of `M`: fingerprint, parent, action, state.
fn record_bytes<M: DiskCodec>() -> usize {
    ACTION_AT + M::ACTION_BYTES + M::STATE_BYTES
}

/// Bytes of one parent record of `M`: parent and action, padded to a multiple of 8.
pub(crate) fn parent_bytes<M: DiskCodec>() -> usize {
    (4 + M::ACTION_BYTES).next_multiple_of(8)
}

/// Buffer of each file reader and writer.
pub(crate) const BUFFER: usize = 1 << 20;

/// A new unnamed file in `dir`.
pub(crate) fn scratch(dir: &Path) -> io::Result<File> {
    tempfile::tempfile_in(dir)
}

/// Write an action into `out` (`M::ACTION_BYTES` long, zeroed), `None` (an initial state) as
/// a first byte of 255.
fn put_action<M: DiskCodec>(model: &M, a: Option<M::Action>, out: &mut [u8]) {
    match a {
        Some(a) => {
            model.encode_action(a, out);
            debug_assert_ne!(out[0], u8::MAX, "an encoded action starts with a byte other than 255");
        }
        None => out[0] = u8::MAX,
    }
}

/// Read back an action [`put_action`] wrote.
fn action_of<M: DiskCodec>(model: &M, bytes: &[u8]) -> io::Result<Option<M::Action>> {
    if bytes[0] == u8::MAX {
        return Ok(None);
    }
    model.decode_action(bytes).map(Some).ok_or_else(|| corrupt("an action"))
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, format!("a spill file holds no valid {what}"))
}

/// zstd's level for the frontier's files: its fastest but one, several times faster than the
/// search makes records.
const LEVEL: i32 = 1;

/// A file that counts the bytes written to it.
struct Counted {
    file: File,
    bytes: u64,
}

impl Write for Counted {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let n = self.file.write(b)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// One level of the frontier being written.
pub(crate) struct LevelOut<M> {
    out: BufWriter<zstd::stream::write::Encoder<'static, Counted>>,
    /// The record being written.
    record: Vec<u8>,
    /// Records written.
    pub(crate) count: u64,
    model: PhantomData<fn() -> M>,
}

impl<M: DiskCodec> LevelOut<M> {
    /// A new level, in its own file in `dir`.
    pub(crate) fn new(dir: &Path) -> io::Result<LevelOut<M>> {
        let file = Counted { file: scratch(dir)?, bytes: 0 };
        let out = BufWriter::with_capacity(BUFFER, zstd::stream::write::Encoder::new(file, LEVEL)?);
        Ok(LevelOut { out, record: vec![0; record_bytes::<M>()], count: 0, model: PhantomData })
    }

    /// Add a record.
    pub(crate) fn push(
        &mut self,
        model: &M,
        fp: Fp,
        parent: u32,
        action: Option<M::Action>,
        s: &M::State,
    ) -> io::Result<()> {
        let r = &mut self.record[..];
        r.fill(0);
        let (head, rest) = r.split_at_mut(ACTION_AT);
        head[..FP_BYTES].copy_from_slice(&fp.to_le_bytes());
        head[FP_BYTES..].copy_from_slice(&parent.to_le_bytes());
        let (action_bytes, state_bytes) = rest.split_at_mut(M::ACTION_BYTES);
        put_action(model, action, action_bytes);
        model.encode_state(s, state_bytes);
        self.count += 1;
        self.out.write_all(r)
    }

    /// Bytes in its file so far: what the compressor has written (the records it still holds,
    /// at most about 1 MiB of them before compression, are not counted yet).
    pub(crate) fn bytes(&self) -> u64 {
        self.out.get_ref().get_ref().bytes
    }

    /// The level written, to be read from its start.
    pub(crate) fn read_back(self) -> io::Result<LevelIn<M>> {
        let encoder = self.out.into_inner().map_err(|e| e.into_error())?;
        let Counted { mut file, bytes } = encoder.finish()?;
        file.rewind()?;
        let input = zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(BUFFER, file))?;
        Ok(LevelIn {
            input: BufReader::with_capacity(BUFFER, input),
            record: self.record,
            left: self.count,
            count: self.count,
            bytes,
            model: PhantomData,
        })
    }
}

/// One level of the frontier being read, in the order it was written.
pub(crate) struct LevelIn<M> {
    input: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    /// The record being read.
    record: Vec<u8>,
    left: u64,
    count: u64,
    /// Bytes of its file.
    bytes: u64,
    model: PhantomData<fn() -> M>,
}

/// One frontier record read back.
pub(crate) struct Candidate<M: DiskCodec> {
    /// The state's fingerprint.
    pub(crate) fp: Fp,
    /// Its parent's number.
    pub(crate) parent: u32,
    /// The action from its parent (`None`: an initial state).
    pub(crate) action: Option<M::Action>,
    /// The state.
    pub(crate) state: M::State,
}

impl<M: DiskCodec> LevelIn<M> {
    /// The next record, `None` at the level's end.
    pub(crate) fn next(&mut self, model: &M) -> io::Result<Option<Candidate<M>>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let r = &mut self.record[..];
        self.input.read_exact(r)?;
        let (head, rest) = r.split_at(ACTION_AT);
        let (action_bytes, state_bytes) = rest.split_at(M::ACTION_BYTES);
        let state = model.decode_state(state_bytes).ok_or_else(|| corrupt("state"))?;
        Ok(Some(Candidate {
            fp: Fp::from_le_bytes(head[..FP_BYTES].try_into().expect("a fingerprint's bytes")),
            parent: u32::from_le_bytes(head[FP_BYTES..].try_into().expect("4 bytes")),
            action: action_of(model, action_bytes)?,
            state,
        }))
    }

    /// Records in the level.
    pub(crate) fn count(&self) -> u64 {
        self.count
    }

    /// Bytes of its file (the whole level, compressed).
    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// The parent record of every state numbered, by number, in a file.
pub(crate) struct ParentLog<M: DiskCodec> {
    out: BufWriter<File>,
    /// The record being written.
    record: Vec<u8>,
    /// Records written.
    pub(crate) count: u64,
    model: PhantomData<fn() -> M>,
}

impl<M: DiskCodec> ParentLog<M> {
    /// No record yet, in a new file in `dir`.
    pub(crate) fn new(dir: &Path) -> io::Result<ParentLog<M>> {
        Ok(ParentLog {
            out: BufWriter::with_capacity(BUFFER, scratch(dir)?),
            record: vec![0; parent_bytes::<M>()],
            count: 0,
            model: PhantomData,
        })
    }

    /// Add the record of the next state numbered.
    pub(crate) fn push(&mut self, model: &M, n: Node<M::Action>) -> io::Result<()> {
        let r = &mut self.record[..];
        r.fill(0);
        r[..4].copy_from_slice(&n.parent.to_le_bytes());
        put_action(model, n.action, &mut r[4..4 + M::ACTION_BYTES]);
        self.count += 1;
        self.out.write_all(r)
    }

    /// Bytes of its file (records written).
    pub(crate) fn bytes(&self) -> u64 {
        self.count * parent_bytes::<M>() as u64
    }

    /// States numbered.
    pub(crate) fn len(&self) -> usize {
        self.count as usize
    }

    /// The record of state `node` (written records only: call after [`ParentLog::sync`]).
    pub(crate) fn get(&self, model: &M, node: u32) -> io::Result<Node<M::Action>> {
        let size = parent_bytes::<M>();
        let mut r = vec![0u8; size];
        self.out.get_ref().read_exact_at(&mut r, u64::from(node) * size as u64)?;
        let parent = u32::from_le_bytes(r[..4].try_into().expect("4 bytes"));
        Ok(Node { parent, action: action_of(model, &r[4..4 + M::ACTION_BYTES])? })
    }

    /// Write out what is buffered.
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// The parent records of every state: in memory, or in a file the spilled search wrote.
pub(crate) enum Parents<M: DiskCodec> {
    /// One record per state, by number.
    Memory(Vec<Node<M::Action>>),
    /// The same, read back from disk.
    Disk(ParentLog<M>),
}

impl<M: DiskCodec> Parents<M> {
    /// The record of state `node`.
    pub(crate) fn get(&self, model: &M, node: u32) -> Node<M::Action> {
        match self {
            Parents::Memory(nodes) => nodes[node as usize],
            Parents::Disk(log) => log.get(model, node).expect("reading back the parent records spilled to disk"),
        }
    }
}
