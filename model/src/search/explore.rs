//! The main search: one exhaustive breadth-first pass over the model that checks every
//! property and the worst case at once.
//!
//! States are visited in order of distance from the initial state, and each property keeps the
//! *first* violating state it meets (stateright 0.31 keeps the last, which is why a stateright
//! run must check one property at a time), so every counterexample is a shortest one, and the
//! worst-case path is a shortest path to the largest measure (for `McpModel`, effect count).
//! States are remembered by a 128-bit fingerprint with fixed seeds (`fingerprint.rs`: why
//! 128 bits, and the chance of a collision every report prints); a path is kept as its actions
//! from the initial state.
//!
//! The pass is generic over [`SearchModel`] and [`DiskCodec`]; `search_model.rs` runs it on
//! `McpModel` and makes its paths counterexamples by replaying them, which also re-checks them.
//! `search::check_property` (stateright, one property per run) and `search::shortest_path_len`
//! (its own breadth-first search, states compared through the model's view) are the
//! independent searches the tests compare this one against.

use crate::search::budget::Stop;
use crate::search::fingerprint::Fingerprinter;
use crate::search::fingerprint::Fp;
use crate::search::parallel::{in_runs, Expansion, BATCH};
pub use crate::search::pass::{End, Options, Stats, WorstSearch};
use crate::search::pass::{Node, Tally, MEMORY_POLL, ROOT};
use crate::search::seen::{Seen, Shards};
use crate::search::space::{DiskCodec, SearchModel};
use crate::search::spill::Parents;
pub use crate::search::spill::Spilled;
use std::collections::VecDeque;
use std::time::Instant;

/// Everything one pass finds, its paths as the actions from an initial state.
#[derive(Clone, Debug)]
pub struct Found<A> {
    /// For each property asked for, in the order asked: a shortest path to a state where it
    /// is violated, if the pass met one.
    pub violations: Vec<Option<Vec<A>>>,
    /// The largest measure met.
    pub worst: u8,
    /// A shortest path to the first state with that measure (`None` when it is 0, or when the
    /// worst case was not searched).
    pub worst_path: Option<Vec<A>>,
    /// How far the worst case was looked for.
    pub worst_search: WorstSearch,
    /// Counts for the whole pass.
    pub stats: Stats,
    /// How the pass ended.
    pub end: End,
    /// Whether the pass went on on disk past its memory limit, and how much it wrote.
    pub spilled: Option<Spilled>,
}

/// New states assumed possible between two readings (at most a few dozen successors each), to
/// tell whether a table is about to double before the next reading.
const POLL_MARGIN: usize = MEMORY_POLL * 32;

/// The bytes a vector of `len` items in `capacity` slots of `item` bytes allocates when it
/// doubles, if it may do so within [`POLL_MARGIN`] more items.
fn growth(len: usize, capacity: usize, item: usize) -> u64 {
    if len + POLL_MARGIN > capacity {
        (capacity.max(POLL_MARGIN) * 2 * item) as u64
    } else {
        0
    }
}

/// Search `model` breadth-first, checking `properties` (and the worst case if asked), until
/// every reachable state is seen, or (without `worst`) every property asked for is violated, or
/// the budget is reached. With a spill folder in the budget, reaching the memory limit moves
/// the search to disk (`spill.rs`), which finds the same states in the same order. With
/// `options.threads` above one, the successors are fingerprinted on that many threads, a batch
/// of states at a time, the threads decide which are new in a fingerprint table split among
/// them, and the new ones are kept in the same order (`parallel.rs`): the answers are the same.
pub fn search<M>(model: &M, properties: &[M::Property], options: Options) -> Found<M::Action>
where
    M: DiskCodec + Sync,
    M::State: Send + Sync,
    M::Action: Send + Sync,
{
    let started = Instant::now();
    let builder = Fingerprinter::new();
    let mut seen = Seen::new();
    let mut nodes: Vec<Node<M::Action>> = Vec::new();
    let mut queue: VecDeque<(M::State, u32, u32)> = VecDeque::new();
    let mut t = Tally {
        model,
        properties,
        options,
        first_bad: vec![None; properties.len()],
        cut: false,
        worst: 0,
        worst_node: None,
        generated: 0,
        depth_max: 0,
        expanded: 0,
        actions: Vec::new(),
    };
    // With several threads, the fingerprints seen are split into one table per thread.
    let threads = options.threads.max(1);
    let mut shards = Shards::new(if threads > 1 { threads } else { 0 });
    for s in model.init_states() {
        let fp = builder.of(&s);
        if threads > 1 {
            shards.insert(fp);
        } else {
            seen.insert(fp);
        }
        nodes.push(Node { parent: ROOT, action: None });
        queue.push_back((s, (nodes.len() - 1) as u32, 0));
        t.generated += 1;
    }
    let mut successors = Vec::new();
    let mut end = End::Exhaustive;
    // With several threads: the states taken off the queue together, their successors, and
    // whether each successor is new.
    let mut batch: VecDeque<(M::State, u32, u32)> = VecDeque::new();
    let mut expansion = Expansion::new();
    loop {
        if threads > 1 && batch.is_empty() {
            let n = queue.len().min(BATCH);
            batch.extend(queue.drain(..n));
            expansion.fill(model, &builder, batch.make_contiguous(), |x| &x.0, threads, &mut shards);
        }
        let next = if threads > 1 { batch.pop_front() } else { queue.pop_front() };
        let Some((s, node, depth)) = next else { break };
        let budget = &options.budget;
        let mut stop = budget.states_reached(nodes.len());
        if stop.is_none() && t.expanded.is_multiple_of(MEMORY_POLL) && budget.max_memory.is_some() {
            let about_to_allocate = seen.growth(POLL_MARGIN)
                + shards.growth(POLL_MARGIN)
                + growth(nodes.len(), nodes.capacity(), std::mem::size_of::<Node<M::Action>>())
                + growth(queue.len() + batch.len(), queue.capacity(), std::mem::size_of::<(M::State, u32, u32)>());
            stop = budget.memory_reached(about_to_allocate);
        }
        if let (Some(Stop::Memory { .. }), Some(_)) = (stop, budget.spill_dir) {
            // The rest of the batch goes back before the queue, in order: the search on disk
            // goes on from this state as one thread would.
            while let Some(rest) = batch.pop_back() {
                queue.push_front(rest);
            }
            queue.push_front((s, node, depth));
            if threads > 1 {
                // The tables already hold the new successors of the states going back to the
                // queue: they are left out, to be found new again when those states are expanded.
                let ahead: std::collections::HashSet<Fp> = expansion.new_ahead().collect();
                seen = std::mem::replace(&mut shards, Shards::new(0)).into_one(&ahead);
            }
            let (end, parents, figures, states) = crate::search::spill::go_on(&mut t, seen, nodes, queue, &builder);
            return finish(t, end, parents, states, Some(figures), started);
        }
        if let Some(why) = stop {
            end = End::Stopped { why, depth_completed: (depth as usize).saturating_sub(1) };
            break;
        }
        if t.visit(&s, node, depth as usize) {
            end = End::Answered;
            break;
        }
        if threads > 1 {
            // Built beforehand on the threads; kept in the order one thread would keep them.
            let past = budget.past_depth(depth as usize);
            for (a, new) in expansion.next_state() {
                t.generated += 1;
                if new && past {
                    t.cut = true;
                } else if new {
                    // Built again: cheaper than keeping every successor while most are not new.
                    let n = model.next_state(&s, a).expect("an action that applied applies again");
                    nodes.push(Node { parent: node, action: Some(a) });
                    queue.push_back((n, (nodes.len() - 1) as u32, depth + 1));
                }
            }
            continue;
        }
        // The successors go straight to the back of the queue; those already seen are then
        // dropped from it, the others moved up over them in order.
        let first = queue.len();
        t.successors_into(&s, &builder, depth + 1, &mut queue, &mut successors);
        // Load every successor's slot before inserting any: the loads are independent, so
        // their cache misses overlap instead of following one another.
        std::hint::black_box(seen.warm(successors.iter().map(|x| x.1)));
        let mut kept = first;
        let past = budget.past_depth(depth as usize);
        for (i, (a, fp)) in successors.drain(..).enumerate() {
            if !seen.insert(fp) {
                continue;
            }
            if past {
                // One step past the depth bound: left out of the queue (and never visited).
                t.cut = true;
            } else {
                nodes.push(Node { parent: node, action: Some(a) });
                queue.swap(kept, first + i);
                queue[kept].1 = (nodes.len() - 1) as u32;
                kept += 1;
            }
        }
        queue.truncate(kept);
    }
    drop(queue);
    drop(seen);
    drop(shards);
    let end = t.bounded(end);
    let states = nodes.len();
    finish(t, end, Parents::Memory(nodes), states, None, started)
}

/// What a pass that ended with `end` having found `states` found, its paths rebuilt from
/// `parents`.
fn finish<M: DiskCodec>(
    t: Tally<M>,
    end: End,
    parents: Parents<M>,
    states: usize,
    spilled: Option<Spilled>,
    started: Instant,
) -> Found<M::Action> {
    let stats = Stats {
        states,
        generated: t.generated,
        depth: t.depth_max,
        seconds: started.elapsed().as_secs_f64(),
        fingerprint_bits: crate::search::fingerprint::FINGERPRINT_BITS,
    };
    let path_to = |node: u32| path(t.model, &parents, node);
    let violations = t.first_bad.iter().map(|bad| bad.map(path_to)).collect();
    let worst_search = match end {
        End::Exhaustive => WorstSearch::Exhaustive,
        End::Stopped { .. } if t.options.worst => WorstSearch::Partial,
        _ => WorstSearch::NotSearched,
    };
    // A worst case that was not looked for has no path: the measures seen on the way are only
    // what the properties' search happened to pass.
    let worst_path = if worst_search == WorstSearch::NotSearched { None } else { t.worst_node.map(path_to) };
    Found { violations, worst: t.worst, worst_path, worst_search, stats, end, spilled }
}

/// The actions of the path to `node` from an initial state.
fn path<M: DiskCodec>(model: &M, parents: &Parents<M>, node: u32) -> Vec<M::Action> {
    let mut actions = Vec::new();
    let mut at = parents.get(model, node);
    while let Some(a) = at.action {
        actions.push(a);
        at = parents.get(model, at.parent);
    }
    actions.reverse();
    actions
}

/// What [`shortest_lengths`] finds: the lengths of shortest paths, without the paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lengths {
    /// For each property asked for, in order: the length of a shortest path to a state where
    /// it is violated, or `None` if it holds in every reachable state.
    pub violations: Vec<Option<usize>>,
    /// The largest measure reached (for `McpModel`: the most side effects any one logical
    /// call reaches).
    pub worst_effects: u8,
    /// The length of a shortest path to a state with that measure (`None` if it is 0).
    pub worst_length: Option<usize>,
    /// Unique states explored.
    pub states: usize,
}

/// States per chunk of a breadth-first level in [`shortest_lengths`].
const CHUNK: usize = 1 << 16;

/// The same answers as [`search`] gives about lengths (each property's shortest violation
/// and the worst case with its shortest length), by a breadth-first search that keeps no
/// per-state record: only the set of fingerprints seen and the current and next levels, each
/// freed chunk by chunk as it is expanded ([`search`] also keeps a parent and an action for
/// every state, to rebuild paths). That lets the unreduced model of nearly every two-call cell
/// be searched in 24 GB
/// (`model/tests/minimality.rs` compares it against the reduced one there). `None` when more
/// than `max_states` states are reached: the search stops there, and nothing is known.
pub fn shortest_lengths<M>(model: &M, properties: &[M::Property], max_states: usize) -> Option<Lengths>
where
    M: SearchModel + Sync,
    M::State: Send + Sync,
    M::Property: Sync,
{
    shortest_lengths_on(model, properties, max_states, 1)
}

/// What one thread found in a run of a level's states: which properties some state of it
/// violates, its largest measure, and every successor with its fingerprint.
struct LevelRun<S> {
    violated: Vec<bool>,
    worst: u8,
    successors: Vec<(S, Fp)>,
}

/// [`shortest_lengths`] with each chunk of a level expanded on `threads` threads. Its answers
/// do not depend on the order states of one level are met in (a length is a level's depth, the
/// worst case the first level reaching the largest measure), so they are the same for every
/// number of threads.
pub fn shortest_lengths_on<M>(
    model: &M,
    properties: &[M::Property],
    max_states: usize,
    threads: usize,
) -> Option<Lengths>
where
    M: SearchModel + Sync,
    M::State: Send + Sync,
    M::Property: Sync,
{
    let builder = Fingerprinter::new();
    let mut seen = Seen::new();
    let mut out = Lengths { violations: vec![None; properties.len()], worst_effects: 0, worst_length: None, states: 0 };
    let mut level: Vec<Vec<M::State>> = vec![Vec::new()];
    for s in model.init_states() {
        if seen.insert(builder.of(&s)) {
            level[0].push(s);
        }
    }
    if threads <= 1 {
        return lengths_on_one_thread(model, properties, max_states, builder, seen, level, out);
    }
    let expand = |run: &[M::State]| {
        let mut found = LevelRun { violated: vec![false; properties.len()], worst: 0, successors: Vec::new() };
        let mut actions = Vec::new();
        for s in run {
            for (i, p) in properties.iter().enumerate() {
                if !found.violated[i] {
                    found.violated[i] = !model.holds(*p, s);
                }
            }
            found.worst = found.worst.max(model.measure(s));
            actions.clear();
            model.actions(s, &mut actions);
            for a in actions.drain(..) {
                let Some(n) = model.next_state(s, a) else { continue };
                let fp = builder.of(&n);
                found.successors.push((n, fp));
            }
        }
        found
    };
    let mut depth = 0;
    while !level.is_empty() {
        let mut next: Vec<Vec<M::State>> = vec![Vec::with_capacity(CHUNK)];
        // Expand the level chunk by chunk, dropping each chunk once it is done.
        for chunk in level.drain(..) {
            out.states += chunk.len();
            for run in chunk.chunks(BATCH).flat_map(|part| in_runs(part, threads, expand)) {
                for (i, bad) in run.violated.iter().enumerate() {
                    if *bad && out.violations[i].is_none() {
                        out.violations[i] = Some(depth);
                    }
                }
                if run.worst > out.worst_effects {
                    out.worst_effects = run.worst;
                    out.worst_length = Some(depth);
                }
                for (n, fp) in run.successors {
                    if seen.insert(fp) {
                        if seen.len > max_states {
                            return None;
                        }
                        push_chunked(&mut next, n);
                    }
                }
            }
        }
        next.retain(|c| !c.is_empty());
        level = next;
        depth += 1;
    }
    Some(out)
}

/// [`shortest_lengths`] on this thread alone, each successor kept or dropped as it is built,
/// from the initial level `level` already in `seen`.
fn lengths_on_one_thread<M: SearchModel>(
    model: &M,
    properties: &[M::Property],
    max_states: usize,
    builder: Fingerprinter,
    mut seen: Seen,
    mut level: Vec<Vec<M::State>>,
    mut out: Lengths,
) -> Option<Lengths> {
    let mut actions = Vec::new();
    let mut depth = 0;
    while !level.is_empty() {
        let mut next: Vec<Vec<M::State>> = vec![Vec::with_capacity(CHUNK)];
        // Expand the level chunk by chunk, dropping each chunk once it is done.
        for chunk in level.drain(..) {
            for s in chunk {
                out.states += 1;
                for (i, p) in properties.iter().enumerate() {
                    if out.violations[i].is_none() && !model.holds(*p, &s) {
                        out.violations[i] = Some(depth);
                    }
                }
                let effects = model.measure(&s);
                if effects > out.worst_effects {
                    out.worst_effects = effects;
                    out.worst_length = Some(depth);
                }
                actions.clear();
                model.actions(&s, &mut actions);
                for a in actions.drain(..) {
                    let Some(n) = model.next_state(&s, a) else { continue };
                    if seen.insert(builder.of(&n)) {
                        if seen.len > max_states {
                            return None;
                        }
                        push_chunked(&mut next, n);
                    }
                }
            }
        }
        next.retain(|c| !c.is_empty());
        level = next;
        depth += 1;
    }
    Some(out)
}

/// Put `n` at the end of the next level, kept in chunks of [`CHUNK`] states.
fn push_chunked<S>(next: &mut Vec<Vec<S>>, n: S) {
    if next.last().is_some_and(|c| c.len() == CHUNK) {
        next.push(Vec::with_capacity(CHUNK));
    }
    next.last_mut().expect("a chunk").push(n);
}
