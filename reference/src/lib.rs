//! # mcp-once reference model
//!
//! A second model of MCP `tools/call` under timeouts, cancellation, broken streams, server
//! crashes and restarts, and retries, written apart from `mcp-once-model` to check it: from
//! the knob table of `specs/README.md`, the README and `ARCHITECTURE.md`, and the doc comments
//! of the parameters (`Config`, `ClientPolicy`, `ServerImpl`, `Cancellation`, `KeyLifetime`)
//! and of the properties. It shares no code with `model/src` beyond those data types and the
//! profile loader: its state is plain structs, vectors and sets compared in full ([`state`]),
//! its steps a stateright [`stateright::Model`] ([`model`], [`server`]), its properties its own
//! ([`property`]), and it is searched by stateright's own breadth-first checker ([`check`]).
//! `tests/differential.rs` runs both models on the same cells and compares their answers.
//!
//! What it covers: plain `tools/call` only (it panics on `--tasks augmented`, written after
//! it), one caller (it panics on `--callers 2`, written after it), every tool handler but `input-before-effect-single-use` (written after it;
//! the reference panics on it) (`effect-only`, and under multi round-trip requests,
//! 2026-07-28 `mrtr.mdx`, `input-after-effect`, `input-before-effect` and
//! `input-after-effect-stateful` with one or two input rounds: continuations under ids of their
//! own, with no key or a key per round as `idempotency_continuations` says, id tables and key
//! stores that keep and replay each answer's kind), one server instance or two behind a load
//! balancer (with a shared store or one each), every transport, client policy, key lifetime,
//! server preset and cancellation handling, under every built-in profile and a proposal that
//! puts continuations inside the key's scope.
//!
//! Where the documents do not say the semantics, and the main model's code was read to learn
//! what it is meant to be (each a gap in the documentation, listed as a finding):
//! 1. A cancellation the handler would not act on is never put on the wire (the main model's
//!    `model.rs` doc comment says so; no user-facing document does). On stdio it changes path
//!    lengths: a retry's request does not queue behind a useless cancellation.
//! 2. `retry_request_id = same` holds for a framework re-run too: a re-run carries the id of
//!    the attempt before it, not a new one.
//! 3. Under `request_id_scope = outstanding`, an id stays taken while its request is
//!    unanswered *to the client*: one the client gave up on or saw break is never freed.
//! 4. A request sent while the server is down is lost at once (the client then sees the
//!    disconnect); it is never queued for the restarted server.
//! 5. An outcome query that finds the key still running is no step at all (the client asks
//!    again later); nothing says whether asking changes anything.
//! 6. An id-deduplicating server forgets the id of a request its cancellation drops before the
//!    effect, so a retry with that id runs; a key store releases the key's in-progress mark.
//! 7. A crash ends every key's in-progress mark even where the store is durable (stated in
//!    `specs/README.md` only for two instances); `validates-task-id` keeps its task records.
//! 8. Logical calls start in order, each once the one before has started (they overlap); a
//!    timeout is possible at any moment while the client waits, a broken stream too until the
//!    attempt is lost.
//! 9. With `idempotency_in_progress = wait`, the held duplicates are looked at after every
//!    step, in the order calls and attempts were sent.
//!
//! And for the handlers that ask for input (MRTR), from `model.rs` and `server_transitions.rs`:
//! 10. A request of a round without the effect (`input-before-effect` before its last round,
//!     the stateful handler's continuations) completes as its answer is written, in one step:
//!     its id entry, or its key's record, is written then (the handler table of
//!     `specs/README.md` says what each round answers, not when its record is written).
//! 11. A continuation uses up none of the call's retries, a retry of a continuation does; a
//!     continuation that answers an input request an id table replayed from another round is a
//!     continuation too, of the round after the one that request was stored for.
//! 12. A continuation's id avoids only the id of the request whose input-required answer it
//!     answers (the session counter skips it when a restart brought it back; under
//!     `request_id_scope = outstanding` it is the lowest id neither outstanding nor that one);
//!     a retry of a continuation under `retry_request_id = same` keeps the continuation's id.
//! 13. A continuation is not sent where it would leave no room, within the 4 requests a call
//!     holds, for the call's later rounds and the retries it has left (each a whole step's
//!     rounds under `framework-retry`): only an id table's replay of an earlier round's input
//!     request gets there, and the call then stays asking for input, neither succeeded nor
//!     failed.
//! 14. An outcome query that finds the completed record of a round that asks for input leaves
//!     the client to send that round's continuation; one about a continuation that carries no
//!     key is answered "unknown", and the client retries the continuation.
//! 15. With continuations inside the key's scope a per-step key is one per step and round
//!     (`specs/README.md` says it for the per-call and per-attempt keys only).

pub mod check;
pub mod model;
pub mod property;
pub mod rules;
pub mod server;
pub mod state;

pub use check::{check, check_within, Answer, OverLimit, Path, Report};
pub use model::{Reference, Sabotage, Step};
pub use property::Goal;
