//! Expanding many states at once on several threads, for the breadth-first passes.
//!
//! The costly part of a breadth-first step is building each successor and hashing it into its
//! fingerprint, and deciding which successors are new (the fingerprint table); numbering the
//! new ones and queueing them is cheap, and must follow the order of one thread to give the
//! same shortest paths. So a pass takes a batch of states off the front of its queue, has
//! [`expand`] fingerprint every successor of the batch on `threads` threads (each thread a
//! contiguous run of the batch), has the threads decide which are new in a fingerprint table
//! split among them (`seen.rs`, [`Shards`](crate::search::seen::Shards)), and then builds the
//! new ones again and queues them in the batch's order, exactly as one thread would have met
//! them: the same states are kept, in the same order, with the same numbers. Only about one
//! successor in eight is new, so building those again costs less than keeping every one.

use crate::search::fingerprint::{Fingerprinter, Fp};
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
}

/// The successors of each state of `batch`, in the batch's order (and, for each state, in the
/// order of its actions), fingerprinted on up to `threads` threads: one [`Built`] per
/// contiguous run of the batch, in order.
pub(crate) fn expand<M, T>(
    model: &M,
    builder: &Fingerprinter,
    batch: &[T],
    state: impl Fn(&T) -> &M::State + Sync,
    threads: usize,
) -> Vec<Built<M>>
where
    M: SearchModel + Sync,
    M::State: Send + Sync,
    M::Action: Send,
    T: Sync,
{
    let one = |items: &[T]| -> Built<M> {
        let mut actions = Vec::new();
        let mut out =
            Built { successors: Vec::with_capacity(items.len() * 8), counts: Vec::with_capacity(items.len()) };
        for item in items {
            let s = state(item);
            actions.clear();
            model.actions(s, &mut actions);
            let before = out.successors.len();
            for a in actions.drain(..) {
                let mut next = s.clone();
                if model.apply(&mut next, a) {
                    out.successors.push((a, builder.of(&next)));
                }
            }
            out.counts.push((out.successors.len() - before) as u32);
        }
        out
    };
    in_runs(batch, threads, one)
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
