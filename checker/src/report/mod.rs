//! Rendering: everything `mcp-once` prints, from typed results. One file per kind of output;
//! this module only declares them and re-exports what the commands call.

pub mod bench;
pub mod confirm;
pub mod diff;
pub mod json;
pub mod markdown;
pub mod profiles;
pub mod replay;
pub mod table;
pub mod text;

pub use markdown::explain_markdown;
pub use replay::replay_markdown;
