//! Rendering: everything `mcp-once` prints, from typed results. One file per kind of output;
//! this module only declares them and re-exports what the commands call.

pub mod bench;
pub mod confirm;
pub mod diff;
pub mod issue;
pub mod json;
pub mod markdown;
pub mod probe_client;
pub mod profiles;
pub mod redact;
pub mod replay;
pub mod table;
pub mod text;
