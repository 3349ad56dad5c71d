//! What `mcp-once replay` prints as text: the verdict and its reason, the trace, the server,
//! the effects expected and observed, then one line per step and the runner's notes.

use mcp_once_conformance::replay::ReplayResult;
use std::fmt::Write;

/// A replay's human summary.
pub fn replay_text(r: &ReplayResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{}: {}", r.verdict.as_str().to_uppercase(), r.reason);
    let _ = writeln!(s, "  trace: {} ({})", r.trace, r.property);
    let _ = writeln!(s, "  server: {} (revision {})", r.target, r.revision.as_str());
    let _ = writeln!(
        s,
        "  effects: expected {}, observed {}{}",
        r.expected_effects,
        r.observed_effects.map_or("unknown".into(), |n| n.to_string()),
        r.settled_effects.map_or(String::new(), |n| format!(" ({n} after the server stopped)")),
    );
    let _ = writeln!(s, "  observer: {}", r.observer);
    if let Some(f) = r.fault_not_made.as_ref().filter(|f| **f != r.reason) {
        let _ = writeln!(s, "  fault not made: {f}");
    }
    for st in &r.steps {
        let note = st.note.as_ref().map_or(String::new(), |n| format!("  {n}"));
        let _ = writeln!(s, "  {:>3}. {:<44} {:<9} {:>8.1} ms{note}", st.step, st.action, st.status, st.t_ms);
    }
    for n in &r.notes {
        let _ = writeln!(s, "  note: {n}");
    }
    if let Some(e) = &r.evidence {
        let _ = writeln!(s, "  evidence: {}", e.display());
    }
    s
}
