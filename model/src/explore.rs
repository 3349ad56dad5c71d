//! The main search: one exhaustive breadth-first pass over the model that checks every
//! property and the worst case at once.
//!
//! States are visited in order of distance from the initial state, and each property keeps the
//! *first* violating state it meets (stateright 0.31 keeps the last, which is why a stateright
//! run must check one property at a time), so every counterexample is a shortest one, and the
//! worst-case path is a shortest path to the largest effect count. States are remembered by a
//! 64-bit fingerprint with fixed seeds (as stateright does); a path is rebuilt by replaying its
//! actions, which also re-checks it.
//!
//! `search::check_property` (stateright, one property per run) and `search::shortest_path_len`
//! (its own breadth-first search, states compared through the model's view) are the independent searches the tests compare this one against.

use crate::action::Action;
use crate::budget::{Budget, Stop};
use crate::model::McpModel;
use crate::property::PropertyKind;
use crate::search::{CheckResult, Counterexample, Stats, Verdict, WorstCase, WorstSearch};
use crate::state::State;
use stateright::Model;
use std::collections::VecDeque;
use std::time::Instant;

/// Everything one pass finds.
#[derive(Clone, Debug)]
pub struct Exploration {
    /// One result per property asked for, in the order asked.
    pub results: Vec<CheckResult>,
    /// The worst case (see its `search` for how far it was looked for).
    pub worst: WorstCase,
    /// Counts for the whole pass.
    pub stats: Stats,
    /// How the pass ended.
    pub end: End,
}

/// What one pass is asked to do.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Options {
    /// Go on after every property asked for is violated, to find the worst case (otherwise the
    /// pass stops at the last of their shortest counterexamples).
    pub worst: bool,
    /// Where to stop at the latest.
    pub budget: Budget,
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

/// States expanded between two readings of the process's memory.
const MEMORY_POLL: usize = 4096;

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

const ROOT: u32 = u32::MAX;

struct Node {
    parent: u32,
    action: Option<Action>,
}

fn fingerprint(builder: &ahash::RandomState, s: &State) -> u64 {
    builder.hash_one(s)
}

/// The set of fingerprints seen: open addressing with linear probing over one flat array, so
/// that a lookup usually touches one cache line (the search spends most of its time here).
/// Fingerprint 0 is stored as 1 (it marks an empty slot); a 64-bit fingerprint collision is
/// already accepted, and this adds a 2^-64 chance more.
struct Seen {
    slots: Vec<u64>,
    len: usize,
    shift: u32,
}

impl Seen {
    fn new() -> Seen {
        Seen { slots: vec![0; 1 << 16], len: 0, shift: 64 - 16 }
    }

    /// Add `fp`; whether it was new.
    fn insert(&mut self, fp: u64) -> bool {
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
    fn growth(&self, margin: usize) -> u64 {
        if (self.len + margin) * 8 > self.slots.len() * 5 {
            (self.slots.len() * 2 * std::mem::size_of::<u64>()) as u64
        } else {
            0
        }
    }

    /// Read the first slot of each fingerprint (to bring it into the cache).
    fn warm(&self, fps: impl Iterator<Item = u64>) -> u64 {
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

/// Explore every reachable state of `model` once, checking `properties` and the worst case,
/// with no budget.
pub fn explore(model: &McpModel, properties: &[PropertyKind]) -> Exploration {
    explore_with(model, properties, Options { worst: true, budget: Budget::unlimited() })
}

/// Explore `model` breadth-first, checking `properties` (and the worst case if asked), until
/// every reachable state is seen, or (without `worst`) every property asked for is violated, or
/// the budget is reached.
pub fn explore_with(model: &McpModel, properties: &[PropertyKind], options: Options) -> Exploration {
    let started = Instant::now();
    let builder = ahash::RandomState::with_seeds(0x6d63_702d, 0x6f6e_6365, 0x7374_6174, 0x6573_0001);
    let mut seen = Seen::new();
    let mut nodes: Vec<Node> = Vec::new();
    let mut queue: VecDeque<(State, u32, u32)> = VecDeque::new();
    let mut first_bad: Vec<Option<u32>> = vec![None; properties.len()];
    let (mut worst, mut worst_node) = (0u8, None::<u32>);
    let (mut generated, mut depth_max) = (0usize, 0usize);

    for s in model.init_states() {
        seen.insert(fingerprint(&builder, &s));
        nodes.push(Node { parent: ROOT, action: None });
        queue.push_back((s, (nodes.len() - 1) as u32, 0));
        generated += 1;
    }
    let mut actions = Vec::new();
    let mut successors = Vec::new();
    let mut end = End::Exhaustive;
    let mut expanded = 0usize;
    while let Some((s, node, depth)) = queue.pop_front() {
        let budget = &options.budget;
        let mut stop = budget.states_reached(nodes.len());
        if stop.is_none() && expanded.is_multiple_of(MEMORY_POLL) && budget.max_memory.is_some() {
            let about_to_allocate = seen.growth(POLL_MARGIN)
                + growth(nodes.len(), nodes.capacity(), std::mem::size_of::<Node>())
                + growth(queue.len(), queue.capacity(), std::mem::size_of::<(State, u32, u32)>());
            stop = budget.memory_reached(about_to_allocate);
        }
        if let Some(why) = stop {
            end = End::Stopped { why, depth_completed: (depth as usize).saturating_sub(1) };
            break;
        }
        expanded += 1;
        depth_max = depth_max.max(depth as usize);
        for (i, p) in properties.iter().enumerate() {
            if first_bad[i].is_none() && !p.holds(model, &s) {
                first_bad[i] = Some(node);
            }
        }
        if !options.worst && !properties.is_empty() && first_bad.iter().all(Option::is_some) {
            end = End::Answered;
            break;
        }
        let effects = s.worst_effects();
        if effects > worst {
            worst = effects;
            worst_node = Some(node);
        }
        actions.clear();
        model.actions(&s, &mut actions);
        for a in actions.drain(..) {
            let Some(next) = model.next_state(&s, a) else { continue };
            generated += 1;
            let fp = fingerprint(&builder, &next);
            successors.push((a, next, fp));
        }
        // Load every successor's slot before inserting any: the loads are independent, so
        // their cache misses overlap instead of following one another.
        std::hint::black_box(seen.warm(successors.iter().map(|x| x.2)));
        for (a, next, fp) in successors.drain(..) {
            if seen.insert(fp) {
                nodes.push(Node { parent: node, action: Some(a) });
                queue.push_back((next, (nodes.len() - 1) as u32, depth + 1));
            }
        }
    }
    let stats = Stats { states: nodes.len(), generated, depth: depth_max, seconds: started.elapsed().as_secs_f64() };
    let path_to = |node: u32| path(model, &nodes, node);
    let results = properties
        .iter()
        .zip(&first_bad)
        .map(|(p, bad)| CheckResult {
            property: *p,
            verdict: match (bad, end) {
                (Some(_), _) => Verdict::Violated,
                (None, End::Exhaustive) => Verdict::Holds,
                (None, _) => Verdict::Unknown,
            },
            counterexample: bad.map(path_to),
            stats,
        })
        .collect();
    let search = match end {
        End::Exhaustive => WorstSearch::Exhaustive,
        End::Stopped { .. } if options.worst => WorstSearch::Partial,
        _ => WorstSearch::NotSearched,
    };
    // A worst case that was not looked for has no trace: the effects seen on the way are only
    // what the properties' search happened to pass.
    let trace = if search == WorstSearch::NotSearched { None } else { worst_node.map(path_to) };
    let worst = WorstCase { effects: worst, trace, stats, search };
    Exploration { results, worst, stats, end }
}

/// Rebuild the path to `node` by replaying its actions from the initial state.
fn path(model: &McpModel, nodes: &[Node], node: u32) -> Counterexample {
    let mut actions = Vec::new();
    let mut at = node;
    while let Some(a) = nodes[at as usize].action {
        actions.push(a);
        at = nodes[at as usize].parent;
    }
    actions.reverse();
    crate::search::counterexample(model, actions)
}

/// What [`shortest_lengths`] finds: the lengths of shortest paths, without the paths.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lengths {
    /// For each property asked for, in order: the length of a shortest path to a state where
    /// it is violated, or `None` if it holds in every reachable state.
    pub violations: Vec<Option<usize>>,
    /// The most side effects any one logical call reaches.
    pub worst_effects: u8,
    /// The length of a shortest path to a state with that many effects (`None` if it is 0).
    pub worst_length: Option<usize>,
    /// Unique states explored.
    pub states: usize,
}

/// States per chunk of a breadth-first level in [`shortest_lengths`].
const CHUNK: usize = 1 << 16;

/// The same answers as [`explore`] gives about lengths (each property's shortest violation
/// and the worst case with its shortest length), by a breadth-first search that keeps no
/// per-state record: only the set of fingerprints seen and the current and next levels, each
/// freed chunk by chunk as it is expanded ([`explore`] also keeps a parent and an action for
/// every state, to rebuild paths). That lets the unreduced model of nearly every two-call cell
/// be searched in 24 GB
/// (`model/tests/minimality.rs` compares it against the reduced one there). `None` when more
/// than `max_states` states are reached: the search stops there, and nothing is known.
pub fn shortest_lengths(model: &McpModel, properties: &[PropertyKind], max_states: usize) -> Option<Lengths> {
    let builder = ahash::RandomState::with_seeds(0x6d63_702d, 0x6f6e_6365, 0x7374_6174, 0x6573_0001);
    let mut seen = Seen::new();
    let mut out = Lengths { violations: vec![None; properties.len()], worst_effects: 0, worst_length: None, states: 0 };
    let mut level: Vec<Vec<State>> = vec![Vec::new()];
    for s in model.init_states() {
        if seen.insert(fingerprint(&builder, &s)) {
            level[0].push(s);
        }
    }
    let mut actions = Vec::new();
    let mut depth = 0;
    while !level.is_empty() {
        let mut next: Vec<Vec<State>> = vec![Vec::with_capacity(CHUNK)];
        // Expand the level chunk by chunk, dropping each chunk once it is done.
        for chunk in level.drain(..) {
            for s in chunk {
                out.states += 1;
                for (i, p) in properties.iter().enumerate() {
                    if out.violations[i].is_none() && !p.holds(model, &s) {
                        out.violations[i] = Some(depth);
                    }
                }
                let effects = s.worst_effects();
                if effects > out.worst_effects {
                    out.worst_effects = effects;
                    out.worst_length = Some(depth);
                }
                actions.clear();
                model.actions(&s, &mut actions);
                for a in actions.drain(..) {
                    let Some(n) = model.next_state(&s, a) else { continue };
                    if seen.insert(fingerprint(&builder, &n)) {
                        if seen.len > max_states {
                            return None;
                        }
                        if next.last().is_some_and(|c| c.len() == CHUNK) {
                            next.push(Vec::with_capacity(CHUNK));
                        }
                        next.last_mut().expect("a chunk").push(n);
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
