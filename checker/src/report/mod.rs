//! Rendering: everything `mcp-once` prints, from typed results. `format.rs` decides the format
//! once (a command hands it a `Report`); `as_text.rs`, `as_json.rs`, `as_markdown.rs` and `as_junit.rs` are
//! the formats, each dispatching to the renderers of one kind of output in the other files.

pub mod as_html;
pub mod as_json;
pub mod as_junit;
pub mod as_markdown;
pub mod as_text;
pub mod bench;
pub mod ci;
pub mod confirm;
pub mod diff;
pub mod format;
pub mod issue;
pub mod json;
pub mod markdown;
pub mod plot;
pub mod probe;
pub mod probe_client;
pub mod profiles;
pub mod redact;
pub mod render;
pub mod replay;
pub mod replay_result;
pub mod reproduce;
pub mod sequence;
pub mod summary;
pub mod svg;
pub mod table;
pub mod text;
