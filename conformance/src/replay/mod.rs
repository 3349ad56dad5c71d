//! The replay runner: turns a model counterexample into evidence by replaying it against a real
//! MCP server, injecting the faults it names (timeouts, cancellation, a closed response stream,
//! SIGKILL, restart, retries) and counting side effects with an observer.
//!
//! Layout: [`types`] (what the runner is given and returns), [`entry`] (the entry point),
//! [`session`] (a live server: process, connection, events, bounded waits; its start in
//! [`handshake`], why one failed in [`start_error`]; several instances of one deployment in [`instances`]), [`driver`] (one method per model action, dispatched; the steps by job in
//! [`client_steps`], [`server_steps`], [`transport_steps`], [`crash_point`], [`interrupt_point`], [`session_end`] (a session ended by the client's DELETE) and [`continuation`]
//! (an MRTR continuation and the kind of each answer; what the client answers an input request in [`input`]), with [`tracer`]
//! holding a response's write; the outcome query in [`query`]; task-augmented calls in [`task_calls`], their wire in [`task_wire`]), [`outcome`] and [`judge`] (the
//! trace's property judged on what the client was told and what took effect), [`observed`]
//! (the verdict from what the observer counted once the server stopped, whatever step the
//! replay reached), [`step`] (how a step ends),
//! [`message`] (the calls the runner writes), [`process`] (server processes and their groups; [`strays`], what they leave outside
//! the group), [`wire`] and [`frame`] (the raw JSON-RPC client), [`observer`] (counting effects, read through a session in [`readings`]; [`server_log`], the server's stderr read back),
//! [`pacing`] (which server steps to hold back), [`command`] (the command line a result records), [`confirmed_trace`] (a confirmed trace written beside its evidence), [`evidence`] (the log), [`sdk_fixtures`] (the SDK
//! fixtures and the scenarios as ready-made replays).

mod attempts;
pub mod breach;
pub mod client_steps;
pub mod command;
pub mod conduct;
pub mod confirmed_trace;
pub mod continuation;
pub mod crash_point;
pub mod driver;
pub mod entry;
pub mod evidence;
pub mod frame;
pub mod handshake;
pub mod input;
mod instance;
pub mod instances;
pub mod interrupt_point;
pub mod judge;
mod link;
pub mod message;
pub mod observed;
pub mod observer;
pub mod outcome;
pub mod pacing;
pub mod process;
pub mod query;
pub mod readings;
pub mod responses;
mod script;
pub mod sdk_fixtures;
pub mod server_log;
pub mod server_steps;
pub mod session;
pub mod session_end;
pub mod start_error;
pub mod step;
pub mod strays;
pub mod task_calls;
pub mod task_wire;
pub mod tracer;
pub mod transport_steps;
pub mod types;
pub mod wire;

pub use driver::replay;
pub use entry::{block_on, block_on_interruptible, interrupted, load_trace, run_replay};
pub use types::{
    read_result, revision_for, write_result, KeyAt, ReplayOptions, ReplayResult, ReplayVerdict, Revision, StepRecord,
    Target, TargetError,
};
