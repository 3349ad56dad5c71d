//! The files of the search on disk (`spill.rs`): the frontier's levels, each written once
//! and read back once in order, and the parent record of every state numbered, read back one
//! by one to rebuild paths. Every file is unnamed (`tempfile::tempfile_in`).
//!
//! A level is a zstd stream (level 1): its records hold every field of a state, most of them
//! the same as the record before (a state's successors are written one after another), and
//! they take several times less disk so; a level is read once, in order, so nothing needs
//! to find a record inside it.

use crate::search::codec::{decode_action, decode_state, encode_action, encode_state, ACTION_BYTES, STATE_BYTES};
use crate::search::pass::Node;
use crate::state::{State, View};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes of one frontier record: fingerprint, parent, action, state.
const RECORD: usize = 8 + 4 + ACTION_BYTES + STATE_BYTES;

/// Bytes of one parent record: parent, action, one unused byte.
pub(crate) const PARENT: usize = 8;

/// Buffer of each file reader and writer.
pub(crate) const BUFFER: usize = 1 << 20;

/// A new unnamed file in `dir`.
pub(crate) fn scratch(dir: &Path) -> io::Result<File> {
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
pub(crate) struct LevelOut {
    out: BufWriter<zstd::stream::write::Encoder<'static, Counted>>,
    /// Records written.
    pub(crate) count: u64,
}

impl LevelOut {
    /// A new level, in its own file in `dir`.
    pub(crate) fn new(dir: &Path) -> io::Result<LevelOut> {
        let file = Counted { file: scratch(dir)?, bytes: 0 };
        let out = BufWriter::with_capacity(BUFFER, zstd::stream::write::Encoder::new(file, LEVEL)?);
        Ok(LevelOut { out, count: 0 })
    }

    /// Add a record.
    pub(crate) fn push(
        &mut self,
        fp: u64,
        parent: u32,
        action: Option<crate::action::Action>,
        s: &State,
    ) -> io::Result<()> {
        let mut r = [0u8; RECORD];
        r[..8].copy_from_slice(&fp.to_le_bytes());
        r[8..12].copy_from_slice(&parent.to_le_bytes());
        r[12..12 + ACTION_BYTES].copy_from_slice(&action_bytes(action));
        encode_state(s, (&mut r[12 + ACTION_BYTES..]).try_into().expect("state bytes"));
        self.count += 1;
        self.out.write_all(&r)
    }

    /// Bytes in its file so far: what the compressor has written (the records it still holds,
    /// at most about 1 MiB of them before compression, are not counted yet).
    pub(crate) fn bytes(&self) -> u64 {
        self.out.get_ref().get_ref().bytes
    }

    /// The level written, to be read from its start.
    pub(crate) fn read_back(self, view: View) -> io::Result<LevelIn> {
        let encoder = self.out.into_inner().map_err(|e| e.into_error())?;
        let Counted { mut file, bytes } = encoder.finish()?;
        file.rewind()?;
        let input = zstd::stream::read::Decoder::with_buffer(BufReader::with_capacity(BUFFER, file))?;
        Ok(LevelIn { input: BufReader::with_capacity(BUFFER, input), left: self.count, count: self.count, bytes, view })
    }
}

/// One level of the frontier being read, in the order it was written.
pub(crate) struct LevelIn {
    input: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    left: u64,
    count: u64,
    /// Bytes of its file.
    bytes: u64,
    view: View,
}

/// One frontier record read back.
pub(crate) struct Candidate {
    /// The state's fingerprint.
    pub(crate) fp: u64,
    /// Its parent's number.
    pub(crate) parent: u32,
    /// The action from its parent (`None`: an initial state).
    pub(crate) action: Option<crate::action::Action>,
    /// The state.
    pub(crate) state: State,
}

impl LevelIn {
    /// The next record, `None` at the level's end.
    pub(crate) fn next(&mut self) -> io::Result<Option<Candidate>> {
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
pub(crate) struct ParentLog {
    out: BufWriter<File>,
    /// Records written.
    pub(crate) count: u64,
}

impl ParentLog {
    /// No record yet, in a new file in `dir`.
    pub(crate) fn new(dir: &Path) -> io::Result<ParentLog> {
        Ok(ParentLog { out: BufWriter::with_capacity(BUFFER, scratch(dir)?), count: 0 })
    }

    /// Add the record of the next state numbered.
    pub(crate) fn push(&mut self, n: Node) -> io::Result<()> {
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

    /// Write out what is buffered.
    pub(crate) fn sync(&mut self) -> io::Result<()> {
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
