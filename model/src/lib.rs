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
//! [`action`] (the versioned action vocabulary a replayer implements), [`model`] (the
//! transition rules), [`rules`] (which profile knob allows each step), [`property`],
//! [`search`].

pub mod action;
pub mod catalogue;
pub mod config;
pub mod explore;
pub mod model;
pub mod profile;
pub mod property;
pub mod rules;
pub mod search;
pub mod state;
pub mod trace;

pub use action::{Action, Actor, ACTION_VOCABULARY};
pub use config::{Bounds, ClientPolicy, Config, KeyLifetime, ServerImpl, Transport};
pub use explore::{explore, shortest_lengths, Exploration, Lengths};
pub use model::McpModel;
pub use profile::{Citation, Profile, ProfileError};
pub use property::{Check, PropertyKind};
pub use search::{check_property, shortest_path_len, worst_case, CheckResult, Counterexample, Verdict, WorstCase};
pub use state::State;

/// `text` with every control character (newline, carriage return, tab, escape...) and the
/// Unicode line and paragraph separators written as Rust escapes (`\n`, `\u{1b}`), so that an
/// error message quoting user input stays on one line.
pub fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_line_escapes_line_breaks_and_controls_only() {
        assert_eq!(super::one_line("a\nb\r\tc\u{1b}\u{2028}é `x`"), "a\\nb\\r\\tc\\u{1b}\\u{2028}é `x`");
    }
}
