//! The search engine: everything that walks the model's state space. The engine is generic
//! over two small traits (`space.rs`): [`SearchModel`] (stateright's `Model` cut down to what
//! a pass calls: initial states, actions, the next state, properties as predicates and the
//! measure the worst case maximises) and [`DiskCodec`] (a state and an action as fixed-size
//! bytes, for the search on disk); `McpModel` implements both in `search_model.rs`, outside
//! the engine. `explore.rs` is the main breadth-first pass (first violation per property, the
//! worst case, early answers), sharing with the search on disk (`spill.rs`, its level files in
//! `frontier.rs`, the external sort of a level's candidates in `sorted_runs.rs`) what
//! `pass.rs` holds; `parallel.rs` builds a batch's successors on several threads;
//! `fingerprint.rs` the 128-bit fingerprints and their collision estimate;
//! `seen.rs` the fingerprint table; `budget.rs` the limits a search stops at
//! (states, memory, disk). `check.rs` is not part of the engine: it runs stateright on
//! `McpModel` (one property per run, so every counterexample is a shortest one), the
//! worst-case search and an independent breadth-first search that verifies those lengths.

pub mod budget;
pub mod check;
pub mod explore;
pub mod fingerprint;
mod frontier;
mod parallel;
mod pass;
mod seen;
mod sorted_runs;
mod space;
mod spill;

pub use check::*;
pub use space::{DiskCodec, SearchModel};
