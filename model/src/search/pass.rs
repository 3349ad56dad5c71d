//! What one breadth-first pass is asked to do, how it ends, and what it has found so far:
//! shared by the search in memory (`explore.rs`) and its continuation on disk (`spill.rs`).

use crate::search::budget::{Budget, Stop};
use crate::search::fingerprint::{collision_probability, Fingerprinter, Fp, COLLISION_REPORT_FROM};
use crate::search::space::SearchModel;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// What one pass is asked to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Go on after every property asked for is violated, to find the worst case (otherwise the
    /// pass stops at the last of their shortest counterexamples).
    pub worst: bool,
    /// Where to stop at the latest.
    pub budget: Budget,
    /// Threads that build successors in the search in memory (0 or 1: the calling thread
    /// only). The answers do not depend on it; the search on disk runs on one thread. The CLI
    /// leaves it at 1: with the fingerprint table's inserts on one thread, more threads were
    /// measured slower (BENCHMARKS.md, "Every core").
    pub threads: usize,
}

/// How a pass ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// Every reachable state was explored: every verdict and the worst case are exact.
    Exhaustive,
    /// Every property asked for was violated and the worst case was not asked for: the pass
    /// stopped at the last of their shortest counterexamples.
    Answered,
    /// The budget was reached: the properties violated so far are decided, the others unknown.
    Stopped {
        /// Which limit.
        why: Stop,
        /// Every state within this many steps of the initial state was checked.
        depth_completed: usize,
    },
}

/// How far the worst-case search went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorstSearch {
    /// Every reachable state was seen: the worst case is exact.
    Exhaustive,
    /// The search stopped once the properties asked for were decided, before looking for the
    /// worst case (`--worst` asks for it).
    NotSearched,
    /// The search stopped at its budget: the worst case is at least the one found.
    Partial,
}

/// Counts from one checker run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Unique states explored.
    pub states: usize,
    /// States generated, repeats included.
    pub generated: usize,
    /// Largest depth reached.
    pub depth: usize,
    /// Wall time.
    pub seconds: f64,
    /// Bits of the fingerprints the states were remembered by (128 in this engine, 64 in
    /// stateright's checker).
    pub fingerprint_bits: u32,
}

impl Stats {
    /// The estimated chance that two of the states explored shared a fingerprint (so that one
    /// was never explored), once past [`COLLISION_REPORT_FROM`] states; `None` below, where it
    /// is negligible even at 64 bits.
    pub fn collision_probability(&self) -> Option<f64> {
        let states = self.states as u64;
        (states >= COLLISION_REPORT_FROM && self.fingerprint_bits > 0)
            .then(|| collision_probability(self.fingerprint_bits, states))
    }
}

/// States expanded between two readings of the process's memory.
pub(crate) const MEMORY_POLL: usize = 4096;

/// The parent of the initial states.
pub(crate) const ROOT: u32 = u32::MAX;

/// How a state was reached: its parent's number and the action from there.
#[derive(Clone, Copy)]
pub(crate) struct Node<A> {
    pub(crate) parent: u32,
    pub(crate) action: Option<A>,
}

/// What the pass has found so far, shared by the in-memory loop and the one on disk.
pub(crate) struct Tally<'a, M: SearchModel> {
    pub(crate) model: &'a M,
    pub(crate) properties: &'a [M::Property],
    pub(crate) options: Options,
    pub(crate) first_bad: Vec<Option<u32>>,
    /// A new state lay one step past the depth bound and was left out.
    pub(crate) cut: bool,
    pub(crate) worst: u8,
    pub(crate) worst_node: Option<u32>,
    pub(crate) generated: usize,
    pub(crate) depth_max: usize,
    pub(crate) expanded: usize,
    pub(crate) actions: Vec<M::Action>,
}

impl<M: SearchModel> Tally<'_, M> {
    /// How a pass that ended with `end` ended, given the depth bound: a pass that met no
    /// other end but left states past the bound out stopped there.
    pub(crate) fn bounded(&self, end: End) -> End {
        match (end, self.options.budget.max_depth) {
            (End::Exhaustive, Some(limit)) if self.cut => {
                End::Stopped { why: Stop::Depth { limit }, depth_completed: limit }
            }
            _ => end,
        }
    }

    /// Check state `node` at `depth`: the properties not yet violated and the worst case.
    /// Whether the pass is answered (every property asked for violated, no worst case asked).
    pub(crate) fn visit(&mut self, s: &M::State, node: u32, depth: usize) -> bool {
        self.expanded += 1;
        self.depth_max = self.depth_max.max(depth);
        for (i, p) in self.properties.iter().enumerate() {
            if self.first_bad[i].is_none() && !self.model.holds(*p, s) {
                self.first_bad[i] = Some(node);
            }
        }
        if !self.options.worst && !self.properties.is_empty() && self.first_bad.iter().all(Option::is_some) {
            return true;
        }
        let effects = self.model.measure(s);
        if effects > self.worst {
            self.worst = effects;
            self.worst_node = Some(node);
        }
        false
    }

    /// Every successor of `s` written straight to the back of `queue` (at `depth`, numbered
    /// [`ROOT`] until kept), each one's action and fingerprint into `out`, in the same order: a
    /// state is copied once into the queue, not built elsewhere and moved in.
    pub(crate) fn successors_into(
        &mut self,
        s: &M::State,
        b: &Fingerprinter,
        depth: u32,
        queue: &mut VecDeque<(M::State, u32, u32)>,
        out: &mut Vec<(M::Action, Fp)>,
    ) {
        self.actions.clear();
        self.model.actions(s, &mut self.actions);
        for a in self.actions.drain(..) {
            queue.push_back((s.clone(), ROOT, depth));
            let next = &mut queue.back_mut().expect("a state was just pushed").0;
            if !self.model.apply(next, a) {
                queue.pop_back();
                continue;
            }
            self.generated += 1;
            out.push((a, b.of(next)));
        }
    }

    /// Every successor of `s`, with the action to it and its fingerprint, into `out`.
    pub(crate) fn successors(&mut self, s: &M::State, b: &Fingerprinter, out: &mut Vec<(M::Action, M::State, Fp)>) {
        self.actions.clear();
        self.model.actions(s, &mut self.actions);
        for a in self.actions.drain(..) {
            let Some(next) = self.model.next_state(s, a) else { continue };
            self.generated += 1;
            let fp = b.of(&next);
            out.push((a, next, fp));
        }
    }
}
