//! `profiles`: the list of built-in profiles, and one profile's knobs with their citations.

use mcp_once_model::Profile;
use std::fmt::Write;

/// One line per profile: name, kind, title.
pub fn profile_list(profiles: &[Profile]) -> String {
    let mut out = String::new();
    for p in profiles {
        let _ = writeln!(out, "{:<16} {:<9} {}", p.name, format!("{:?}", p.kind).to_lowercase(), p.title);
    }
    out
}

/// One profile: where it comes from, then each knob with its value, who set it and its citation.
pub fn profile_knobs(p: &Profile) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} ({}), revision {}, from {}", p.name, p.title, p.revision, p.origin);
    if let Some(e) = &p.extends {
        let _ = writeln!(out, "extends {e}");
    }
    let stale = p.stale_citations();
    for (knob, value, cite, set_by) in p.knob_table() {
        let _ = writeln!(out, "\n{knob} = {value}   (set by {set_by})\n  {cite}");
        if let Some(note) = &cite.note {
            let _ = writeln!(out, "  note: {note}");
        }
        for s in stale.iter().filter(|s| s.knob == knob) {
            let _ = writeln!(out, "  warning: {}", s.line());
        }
    }
    out
}
