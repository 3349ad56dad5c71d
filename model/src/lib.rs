//! # mcp-once model
//!
//! A [stateright] model of MCP `tools/call` under client timeouts, cancellation, broken
//! streams, server crashes and restarts, and retries, whose rules come from a spec profile
//! (one revision or proposal of the MCP specification, see [`profile`]). It checks
//! at-most-once execution and related properties ([`property`]), one property per run, so
//! that each counterexample is a shortest one ([`search`]), and finds the worst case: the most
//! side effects one logical call can reach within the bounds.
//!
//! Layout: [`config`] (the parameters users choose), [`state`] (the compact state),
//! [`action`] (the versioned action vocabulary a replayer implements), [`budget`] (limits on a
//! search: states and memory), [`model`] (the
//! transition rules), [`rules`] (which profile knob allows each step), [`conformance`] (the MUSTs a server breaks), [`property`] (every
//! property in one place), [`search`] (the search engine, generic over its small model trait,
//! and the stateright runs), [`search_model`] (`McpModel` as the engine sees it, and
//! [`explore()`], the main search), [`trace`] (trace files and their validation),
//! [`catalogue`] (the scenarios and the default matrix), [`text`] (one-line error text);
//! `named` holds the macro for named enums, `debug` the readable state and `codec` the state's
//! bytes for the search on disk.

pub mod action;
pub mod annotation;
pub mod applicable;
mod attempt;
pub mod behaviour_key;
pub mod builder;
pub mod callers;
pub mod catalogue;
mod codec;
pub mod config;
pub mod conformance;
mod debug;
pub mod explanation;
mod handler;
mod knob_values;
pub mod model;
mod named;
pub mod profile;
pub mod property;
pub mod request_state;
pub mod resumption;
pub mod rules;
pub mod search;
pub mod search_model;
mod server_transitions;
mod session;
mod stale_citation;
pub mod state;
mod task_steps;
pub mod tasks;
pub mod text;
pub mod trace;
mod view;
mod windows;

pub use action::{Action, Actor, ACTION_VOCABULARY};
pub use applicable::NotApplicable;
pub use behaviour_key::BehaviourKey;
pub use builder::ConfigBuilder;
pub use config::{
    Annotation, Bounds, Cancellation, ClientPolicy, Config, Deployment, Handler, HandlerKind, KeyLifetime, KeyScope,
    Resumption, ServerImpl, StoreScope, TaskRecords, Tasks, Transport,
};
pub use model::McpModel;
pub use named::BadValue;
pub use profile::{Citation, KnobId, Profile, ProfileError, Revision};
pub use property::{Check, PropertyKind};
pub use search::budget::{self, Budget, Stop};
pub use search::explore::{self, shortest_lengths, shortest_lengths_on, End, Lengths, Options, Spilled};
pub use search::{
    check_property, shortest_path_len, worst_case, CheckResult, Counterexample, Verdict, WithCheck, WorstCase,
    WorstSearch,
};
pub use search_model::{explore, explore_with, Exploration};
pub use stale_citation::StaleCitation;
pub use state::State;
pub use text::one_line;
