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
