//! The search engine: everything that walks the model's state space. `check.rs` runs one
//! property per stateright run (so every counterexample is a shortest one), the worst-case
//! search and an independent breadth-first search that verifies those lengths; `explore.rs`
//! is the main breadth-first pass (first violation per property, the worst case, early
//! answers), sharing with the search on disk (`spill.rs`, its level files in `frontier.rs`,
//! the external sort of a level's candidates in `sorted_runs.rs`, states as bytes in
//! `codec.rs`) what `pass.rs` holds; `seen.rs` the fingerprint table; `budget.rs` the limits a
//! search stops at (states, memory, disk).

pub mod budget;
pub mod check;
mod codec;
pub mod explore;
mod frontier;
mod pass;
mod seen;
mod sorted_runs;
mod spill;

pub use check::*;
