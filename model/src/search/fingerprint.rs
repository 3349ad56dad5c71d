//! State fingerprints, and the chance that two states of a search share one.
//!
//! The search remembers a state by its fingerprint, not by the state itself, so two distinct
//! states with one fingerprint would make the second look seen: its successors, and any
//! violation only they reach, would be missed. With `w`-bit fingerprints of `n` distinct
//! states, the chance that some two collide is about `1 - exp(-n(n-1) / 2^(w+1))` (the
//! birthday bound, for a hash that spreads states evenly). At 2×10^9 states that is about
//! 10 % for 64 bits and about 6×10^-21 for 128, so this engine uses 128 bits everywhere:
//! two independent 64-bit hashes (fixed seeds) fed by one pass over the state. Reports print
//! the width and the estimate, as TLC prints its own after every run.

use std::hash::{BuildHasher, Hash, Hasher};

/// A state's fingerprint in this engine.
pub(crate) type Fp = u128;

/// Bytes of one fingerprint on disk.
pub(crate) const FP_BYTES: usize = std::mem::size_of::<Fp>();

/// Bits of a fingerprint of the breadth-first search in `explore.rs` and on disk.
pub const FINGERPRINT_BITS: u32 = Fp::BITS;

/// Bits of a fingerprint of stateright's own checker (`search::check_property`), which the
/// cross-checks use.
pub const STATERIGHT_FINGERPRINT_BITS: u32 = u64::BITS;

/// Makes fingerprints with fixed seeds, so every run numbers states alike.
pub(crate) struct Fingerprinter {
    low: ahash::RandomState,
    high: ahash::RandomState,
}

impl Fingerprinter {
    /// The engine's fixed seeds.
    pub(crate) fn new() -> Fingerprinter {
        Fingerprinter {
            low: ahash::RandomState::with_seeds(0x6d63_702d, 0x6f6e_6365, 0x7374_6174, 0x6573_0001),
            high: ahash::RandomState::with_seeds(0x7265_6665, 0x7265_6e63, 0x652d_6670, 0x0128_0002),
        }
    }

    /// The fingerprint of `s` (never 0: the table marks an empty slot with 0).
    pub(crate) fn of<S: Hash>(&self, s: &S) -> Fp {
        let mut both = Both(self.low.build_hasher(), self.high.build_hasher());
        s.hash(&mut both);
        ((u128::from(both.1.finish()) << 64) | u128::from(both.0.finish())).max(1)
    }
}

/// Two hashers fed the same writes, so the state is walked (and its view packed) once.
struct Both(ahash::AHasher, ahash::AHasher);

impl Hasher for Both {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }
    fn write_u8(&mut self, x: u8) {
        self.0.write_u8(x);
        self.1.write_u8(x);
    }
    fn write_u32(&mut self, x: u32) {
        self.0.write_u32(x);
        self.1.write_u32(x);
    }
    fn write_u64(&mut self, x: u64) {
        self.0.write_u64(x);
        self.1.write_u64(x);
    }
    fn write_u128(&mut self, x: u128) {
        self.0.write_u128(x);
        self.1.write_u128(x);
    }
    fn write_usize(&mut self, x: usize) {
        self.0.write_usize(x);
        self.1.write_usize(x);
    }
    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// The estimated chance that two of `states` distinct states share a `bits`-bit fingerprint
/// (the birthday bound above).
pub fn collision_probability(bits: u32, states: u64) -> f64 {
    let n = states as f64;
    let pairs = n * (n - 1.0).max(0.0) / 2.0;
    // -expm1(-x) keeps the small probabilities of 128 bits, which 1 - exp(-x) rounds to 0.
    -(-pairs / 2f64.powi(bits as i32)).exp_m1()
}

/// States past which a report prints the estimate (below, it is under 3×10^-8 at 64 bits).
pub const COLLISION_REPORT_FROM: u64 = 1_000_000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_matches_the_birthday_bound_at_known_points() {
        // 2^32 states of 64 bits: n²/2^65 = 1/2, so 1 - e^-0.5.
        let p = collision_probability(64, 1 << 32);
        assert!((p - (1.0 - (-0.5f64).exp())).abs() < 1e-6, "{p}");
        // The figures the issue quotes for 64 bits: about 3 % at 990 M, 10 % at 2×10^9.
        assert!((0.025..0.03).contains(&collision_probability(64, 990_000_000)));
        assert!((0.09..0.11).contains(&collision_probability(64, 2_000_000_000)));
        // 128 bits at 2×10^9: about 5.9×10^-21, not rounded to 0.
        let p = collision_probability(128, 2_000_000_000);
        assert!(p > 5e-21 && p < 7e-21, "{p}");
        assert_eq!(collision_probability(64, 1), 0.0);
    }

    #[test]
    fn the_two_halves_are_independent_hashes() {
        let f = Fingerprinter::new();
        let a = f.of(&(1u64, 2u64));
        let b = f.of(&(1u64, 3u64));
        assert_ne!(a, b);
        assert_ne!(a as u64, (a >> 64) as u64, "both halves from one seed");
        assert_eq!(a, Fingerprinter::new().of(&(1u64, 2u64)), "fixed seeds");
    }
}
