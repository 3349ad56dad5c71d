//! The set of fingerprints a breadth-first search has seen, kept in memory.

use crate::search::fingerprint::Fp;

/// The set of fingerprints seen: open addressing with linear probing over one flat array, so
/// that a lookup usually touches one cache line (the search spends most of its time here).
/// Fingerprint 0 is stored as 1 (it marks an empty slot); a fingerprint collision is already
/// accepted (`fingerprint.rs` estimates it), and this adds a 2^-128 chance more.
pub(crate) struct Seen {
    slots: Vec<Fp>,
    pub(crate) len: usize,
    shift: u32,
}

impl Seen {
    pub(crate) fn new() -> Seen {
        Seen { slots: vec![0; 1 << 16], len: 0, shift: Fp::BITS - 16 }
    }

    /// Add `fp`; whether it was new.
    pub(crate) fn insert(&mut self, fp: Fp) -> bool {
        let fp = fp.max(1);
        if (self.len + 1) * 8 > self.slots.len() * 5 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = (fp >> self.shift) as usize;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = fp;
                    self.len += 1;
                    return true;
                }
                x if x == fp => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The bytes the table allocates when it next doubles, if that may happen within `margin`
    /// more fingerprints.
    pub(crate) fn growth(&self, margin: usize) -> u64 {
        if (self.len + margin) * 8 > self.slots.len() * 5 {
            (self.slots.len() * 2 * std::mem::size_of::<Fp>()) as u64
        } else {
            0
        }
    }

    /// Read the first slot of each fingerprint (to bring it into the cache).
    pub(crate) fn warm(&self, fps: impl Iterator<Item = Fp>) -> Fp {
        fps.fold(0, |acc, fp| acc ^ self.slots[(fp.max(1) >> self.shift) as usize])
    }

    fn grow(&mut self) {
        let old = std::mem::replace(&mut self.slots, vec![0; 0]);
        self.slots = vec![0; old.len() * 2];
        self.shift -= 1;
        self.len = 0;
        for fp in old.into_iter().filter(|x| *x != 0) {
            self.insert(fp);
        }
    }
}

impl Seen {
    /// Slots in the table (it doubles when 5/8 full).
    pub(crate) fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Whether the next insertion may double the table.
    pub(crate) fn full(&self) -> bool {
        (self.len + 1) * 8 > self.slots.len() * 5
    }

    /// Every fingerprint in the table (fingerprint 0 as 1), in no order.
    pub(crate) fn fingerprints(&self) -> impl Iterator<Item = Fp> + '_ {
        self.slots.iter().copied().filter(|x| *x != 0)
    }

    /// Forget every fingerprint, keeping the table's size.
    pub(crate) fn clear(&mut self) {
        self.slots.fill(0);
        self.len = 0;
    }
}

/// Which of `n` tables holds `fp`: its low 64 bits scaled to `n` by a multiplication (every
/// thread computes this for every successor of a batch, so no division).
fn part_of(fp: Fp, n: usize) -> usize {
    ((fp.max(1) as u64 as u128 * n as u128) >> 64) as usize
}

/// The set of fingerprints seen, split into one table per thread by fingerprint, so that the
/// threads of a parallel pass decide at once which successors are new, each in its own table.
/// A fingerprint always falls in the same table, and each table takes the successors of a batch
/// in the batch's order, so the successor marked new is the one a single table would have kept.
pub(crate) struct Shards {
    parts: Vec<Seen>,
    /// For each table, its share of the last batch (each item's place and fingerprint) and the
    /// places of those that were new: buffers kept for the next batch.
    lists: Vec<ShareLists>,
}

/// One table's share of a batch (each item's place and fingerprint), and the places of those
/// that were new.
type ShareLists = (Vec<(u32, Fp)>, Vec<u32>);

impl Shards {
    /// `n` empty tables (none for a search on one thread, which keeps one [`Seen`]).
    pub(crate) fn new(n: usize) -> Shards {
        Shards { parts: (0..n).map(|_| Seen::new()).collect(), lists: Vec::new() }
    }

    /// The table `fp` belongs to (by its low 64 bits: a table's slot is chosen by its top ones).
    fn part_of(&self, fp: Fp) -> usize {
        part_of(fp, self.parts.len())
    }

    /// Add `fp`; whether it was new.
    pub(crate) fn insert(&mut self, fp: Fp) -> bool {
        let k = self.part_of(fp);
        self.parts[k].insert(fp)
    }

    /// Add the fingerprint of every item of `runs` (taken as one sequence, in order), one thread
    /// per table; `fresh` is made to say, for each item in order, whether its fingerprint was
    /// new (the first of equal fingerprints is). The threads' lists are kept for the next call.
    pub(crate) fn insert_all<A: Sync, R: AsRef<[(A, Fp)]> + Sync>(&mut self, runs: &[R], fresh: &mut Vec<bool>) {
        let n = self.parts.len();
        let total: usize = runs.iter().map(|r| r.as_ref().len()).sum();
        let all = || runs.iter().flat_map(|r| r.as_ref().iter()).map(|x| x.1).enumerate();
        self.lists.resize_with(n, Default::default);
        std::thread::scope(|scope| {
            for (k, (part, (mine, found))) in self.parts.iter_mut().zip(self.lists.iter_mut()).enumerate() {
                scope.spawn(move || {
                    mine.clear();
                    mine.extend(all().filter(|(_, fp)| part_of(*fp, n) == k).map(|(i, fp)| (i as u32, fp)));
                    // Load every slot before inserting any, so the cache misses overlap.
                    std::hint::black_box(part.warm(mine.iter().map(|x| x.1)));
                    found.clear();
                    found.extend(mine.iter().filter(|(_, fp)| part.insert(*fp)).map(|(i, _)| *i));
                });
            }
        });
        fresh.clear();
        fresh.resize(total, false);
        for (_, found) in &self.lists {
            for i in found {
                fresh[*i as usize] = true;
            }
        }
    }

    /// The bytes the tables allocate when they next double, if that may happen within `margin`
    /// more fingerprints each.
    pub(crate) fn growth(&self, margin: usize) -> u64 {
        self.parts.iter().map(|p| p.growth(margin)).sum()
    }

    /// One table of every fingerprint but those in `except` (fingerprint 0 is taken as 1, as
    /// the tables store it).
    pub(crate) fn into_one(self, except: &std::collections::HashSet<Fp>) -> Seen {
        let mut one = Seen::new();
        for part in self.parts {
            part.fingerprints().filter(|fp| !except.contains(fp)).for_each(|fp| {
                one.insert(fp);
            });
        }
        one
    }
}
