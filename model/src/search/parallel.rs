//! Expanding many states at once on several threads, for the breadth-first passes.
//!
//! The costly part of a breadth-first step is building each successor and hashing it into its
//! fingerprint, and deciding which successors are new (the fingerprint table); numbering the
//! new ones and queueing them is cheap, and must follow the order of one thread to give the
//! same shortest paths. So a pass takes a batch of states off the front of its queue, has
//! [`Expansion::fill`] fingerprint every successor of the batch on `threads` threads (each
//! thread a contiguous run of the batch), has the threads decide which are new in a fingerprint table
//! split among them (`seen.rs`, [`Shards`](crate::search::seen::Shards)), and then builds the
//! new ones again and queues them in the batch's order, exactly as one thread would have met
//! them: the same states are kept, in the same order, with the same numbers. Only about one
//! successor in eight is new, so building those again costs less than keeping every one.

use crate::search::fingerprint::{Fingerprinter, Fp};
use crate::search::seen::Shards;
use crate::search::space::SearchModel;

/// States taken off the queue and expanded together: large enough that starting the threads
/// costs little beside the work, small enough that a pass answered early wastes little.
pub(crate) const BATCH: usize = 4096;

/// The successors of a run of states, one after another: the action to each and its
/// fingerprint; and how many belong to each state of the run, in order.
pub(crate) struct Built<M: SearchModel> {
    /// Every successor, the first state's first.
    pub(crate) successors: Vec<(M::Action, Fp)>,
    /// How many successors each state has.
    pub(crate) counts: Vec<u32>,
    /// The actions of the state being expanded (a buffer kept for the next state).
    actions: Vec<M::Action>,
}

impl<M: SearchModel> Built<M> {
    fn new() -> Built<M> {
        Built { successors: Vec::new(), counts: Vec::new(), actions: Vec::new() }
    }

    /// Empty it, then fill it with the successors of `items`.
    fn fill<T>(&mut self, model: &M, builder: &Fingerprinter, items: &[T], state: impl Fn(&T) -> &M::State) {
        self.successors.clear();
        self.counts.clear();
        for item in items {
            let s = state(item);
            self.actions.clear();
            model.actions(s, &mut self.actions);
            let before = self.successors.len();
            for a in self.actions.drain(..) {
                let mut next = s.clone();
                if model.apply(&mut next, a) {
                    self.successors.push((a, builder.of(&next)));
                }
            }
            self.counts.push((self.successors.len() - before) as u32);
        }
    }
}

impl<M: SearchModel> AsRef<[(M::Action, Fp)]> for Built<M> {
    fn as_ref(&self) -> &[(M::Action, Fp)] {
        &self.successors
    }
}

/// A batch of states expanded on several threads: every successor's action and fingerprint
/// (one [`Built`] per contiguous run of the batch), whether each is new, and how far the pass
/// has taken them. Kept from one batch to the next, so that its buffers, several megabytes a
/// batch, are filled again in memory already mapped rather than faulted in afresh each time
/// (the kernel zeroing fresh pages took a fifth of a four-call search's samples, these buffers
/// part of them: BENCHMARKS.md, "Four calls").
pub(crate) struct Expansion<M: SearchModel> {
    runs: Vec<Built<M>>,
    /// How many of `runs` this batch uses.
    used: usize,
    /// Whether each successor of the batch, in order, is new.
    fresh: Vec<bool>,
    /// Where the next state's successors start: its run, its place in the run, its first
    /// successor in the run, and that successor's place in the batch.
    run: usize,
    state: usize,
    successor: usize,
    at: usize,
}

impl<M> Expansion<M>
where
    M: SearchModel + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    /// Nothing expanded yet.
    pub(crate) fn new() -> Expansion<M> {
        Expansion { runs: Vec::new(), used: 0, fresh: Vec::new(), run: 0, state: 0, successor: 0, at: 0 }
    }

    /// Expand every state of `batch` on up to `threads` threads (each thread a contiguous run
    /// of the batch), in the batch's order and, for each state, in the order of its actions;
    /// then have `shards` decide which successors are new, one thread per table.
    pub(crate) fn fill<T: Sync>(
        &mut self,
        model: &M,
        builder: &Fingerprinter,
        batch: &[T],
        state: impl Fn(&T) -> &M::State + Sync,
        threads: usize,
        shards: &mut Shards,
    ) {
        self.used = in_runs_into(batch, threads, &mut self.runs, Built::new, |items, out| {
            out.fill(model, builder, items, &state)
        });
        shards.insert_all(&self.runs[..self.used], &mut self.fresh);
        (self.run, self.state, self.successor, self.at) = (0, 0, 0, 0);
    }

    /// The successors of the batch's next state, in order: each one's action and whether it
    /// is new.
    pub(crate) fn next_state(&mut self) -> impl Iterator<Item = (M::Action, bool)> + '_ {
        while self.runs[self.run].counts.len() == self.state {
            (self.run, self.state, self.successor) = (self.run + 1, 0, 0);
        }
        let run = &self.runs[self.run];
        let n = run.counts[self.state] as usize;
        let successors = &run.successors[self.successor..self.successor + n];
        let fresh = &self.fresh[self.at..self.at + n];
        (self.state, self.successor, self.at) = (self.state + 1, self.successor + n, self.at + n);
        successors.iter().zip(fresh).map(|((a, _), new)| (*a, *new))
    }

    /// The fingerprints of the new successors of the states not yet taken (fingerprint 0
    /// taken as 1, as the tables store it).
    pub(crate) fn new_ahead(&self) -> impl Iterator<Item = Fp> + '_ {
        let all = self.runs[..self.used].iter().flat_map(|r| r.successors.iter());
        all.skip(self.at).zip(&self.fresh[self.at..]).filter(|(_, new)| **new).map(|(x, _)| x.1.max(1))
    }
}

/// `work` on each of up to `threads` contiguous runs of `items`, each run on a thread of its
/// own (one run: on this thread), the results in the runs' order.
pub(crate) fn in_runs<T: Sync, R: Send>(items: &[T], threads: usize, work: impl Fn(&[T]) -> R + Sync) -> Vec<R> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return vec![work(items)];
    }
    let share = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let runs: Vec<_> = items.chunks(share).map(|run| scope.spawn(|| work(run))).collect();
        runs.into_iter().map(|h| h.join().expect("a searching thread panicked")).collect()
    })
}

/// [`in_runs`] writing each run's result into a slot of `out` (made with `new` where `out` has
/// too few), so the slots' buffers serve again; how many slots it used.
fn in_runs_into<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    out: &mut Vec<R>,
    new: impl Fn() -> R,
    work: impl Fn(&[T], &mut R) + Sync,
) -> usize {
    let threads = threads.clamp(1, items.len().max(1));
    let share = items.len().div_ceil(threads).max(1);
    let runs = items.len().div_ceil(share).max(1);
    while out.len() < runs {
        out.push(new());
    }
    if runs == 1 {
        work(items, &mut out[0]);
        return 1;
    }
    std::thread::scope(|scope| {
        for (run, slot) in items.chunks(share).zip(out.iter_mut()) {
            let work = &work;
            scope.spawn(move || work(run, slot));
        }
    });
    runs
}
