//! Rendering results: the text a person reads and the JSON a pipeline reads.
//!
//! JSON shapes (stable; see README "JSON output"): `check` prints one object with `config`,
//! `results` (one entry per property: `property`, `verdict`, `states`, `seconds`, and for a
//! violation `trace` with `steps`, `effects`, `file`), `worst_effects` and `worst_trace`;
//! `matrix` prints `{"cells": [...]}` of such objects, a cell that does not apply having
//! `applicable: false` and a `reason`.

use crate::run::{Cell, Checked};
use mcp_once_model::rules;
use mcp_once_model::search::Counterexample;
use mcp_once_model::{Config, McpModel, PropertyKind, Verdict};
use serde_json::{json, Value};
use std::fmt::Write;
use std::io::IsTerminal;

/// Whether to colour text (only on a terminal, and not when NO_COLOR is set).
pub fn colour() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn paint(on: bool, code: &str, text: &str) -> String {
    if on {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// The configuration as JSON (every parameter).
pub fn config_json(c: &Config) -> Value {
    json!({
        "profile": c.profile,
        "transport": c.transport,
        "client": c.client,
        "key": c.key,
        "server": c.server,
        "calls": c.bounds.calls,
        "retries": c.bounds.retries,
        "crashes": c.bounds.crashes,
    })
}

/// One cell as the JSON object `check --format json` prints.
pub fn cell_json(cell: &Cell) -> Value {
    let checked = match &cell.outcome {
        Err(reason) => return json!({"config": config_json(&cell.config), "applicable": false, "reason": reason}),
        Ok(c) => c,
    };
    let results: Vec<Value> = checked
        .results
        .iter()
        .map(|r| {
            let mut v = json!({
                "property": r.property,
                "verdict": r.verdict,
                "states": r.stats.states,
                "seconds": r.stats.seconds,
            });
            if let Some(cex) = &r.counterexample {
                v["trace"] = json!({
                    "steps": cex.len(),
                    "effects": cex.effects(),
                    "file": checked.files.get(r.property.as_str()),
                });
            }
            v
        })
        .collect();
    json!({
        "config": config_json(&cell.config),
        "applicable": true,
        "profile": {"name": checked.model.profile.name, "origin": checked.model.profile.origin},
        "results": results,
        "worst_effects": checked.worst.effects,
        "worst_trace": checked.files.get("worst-case"),
        "stats": checked.stats,
    })
}

/// A numbered trace: actor, action, what happened, and the rules behind each step.
pub fn trace_text(c: &Checked, cex: &Counterexample, indent: &str, colour: bool) -> String {
    let mut out = String::new();
    for (i, a) in cex.actions.iter().enumerate() {
        let what = rules::describe(&c.model, &cex.states[i], a, &cex.states[i + 1]);
        let _ =
            writeln!(out, "{indent}{:>2}. {:<11} {}", i + 1, a.actor().to_string(), paint(colour, "1", &a.to_string()));
        let _ = writeln!(out, "{indent}    {:<11} {what}", "");
        for (knob, value, cite) in rules::citations(&c.model, a) {
            let rule = format!("{knob} = {value}: {cite}");
            let _ = writeln!(out, "{indent}    {:<11} {}", "", paint(colour, "2", &rule));
        }
    }
    out
}

/// The text report of one checked configuration.
pub fn check_text(cell: &Cell, colour: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "mcp-once check {}", cell.config);
    let c = match &cell.outcome {
        Err(reason) => {
            let _ = writeln!(out, "not applicable: {reason}");
            return out;
        }
        Ok(c) => c,
    };
    let p = &c.model.profile;
    let _ = writeln!(out, "profile {} ({}), from {}", p.name, p.title, p.origin);
    for r in &c.results {
        let _ = writeln!(out);
        match &r.counterexample {
            None => {
                let _ = writeln!(
                    out,
                    "{:<24} {}  {}",
                    r.property.as_str(),
                    paint(colour, "32", "holds   "),
                    r.property.meaning()
                );
            }
            Some(cex) => {
                let _ = writeln!(
                    out,
                    "{:<24} {}  {}; shortest counterexample: {} steps, {} effect(s) for one call",
                    r.property.as_str(),
                    paint(colour, "31;1", "VIOLATED"),
                    r.property.meaning(),
                    cex.len(),
                    cex.effects()
                );
                out.push_str(&trace_text(c, cex, "  ", colour));
                if let Some(f) = c.files.get(r.property.as_str()) {
                    let _ = writeln!(out, "  trace written to {}", f.display());
                }
            }
        }
    }
    let _ = writeln!(out);
    match &c.worst.trace {
        Some(t) => {
            let _ = writeln!(
                out,
                "worst case: {} side effect(s) for one logical call, reached in {} steps",
                c.worst.effects,
                t.len()
            );
        }
        None => {
            let _ = writeln!(out, "worst case: no side effect is reachable");
        }
    }
    let s = c.stats;
    let _ = writeln!(
        out,
        "explored {} unique states ({} generated, depth {}) exhaustively in {:.2} s",
        s.states, s.generated, s.depth, s.seconds
    );
    out
}

/// A short cell verdict for tables: `holds`, `✗ 8/2` (steps/effects) or `n/a`.
pub fn short_verdict(cell: &Cell, p: PropertyKind) -> String {
    match &cell.outcome {
        Err(_) => "n/a".into(),
        Ok(c) => match c.results.iter().find(|r| r.property == p) {
            None => "-".into(),
            Some(r) if r.verdict == Verdict::Holds => "holds".into(),
            Some(r) => {
                let cex = r.counterexample.as_ref().expect("violated has a trace");
                format!("✗ {}/{}", cex.len(), cex.effects())
            }
        },
    }
}

/// Summary counts over cells: (checked, not applicable, cells where every property holds).
pub fn summary_counts(cells: &[Cell]) -> (usize, usize, usize) {
    let checked = cells.iter().filter(|c| c.outcome.is_ok()).count();
    let safe = cells.iter().filter(|c| matches!(&c.outcome, Ok(k) if !k.any_violated())).count();
    (checked, cells.len() - checked, safe)
}

fn mermaid_escape(s: &str) -> String {
    s.replace(';', ",").replace('#', "no. ").replace('\n', " ")
}

/// A Mermaid `sequenceDiagram` of a trace: client, transport and server, one arrow or note per step.
pub fn mermaid(cex: &Counterexample) -> String {
    use mcp_once_model::Action as A;
    let mut out = String::from(
        "sequenceDiagram\n    participant C as Client\n    participant T as Transport\n    participant S as Server\n",
    );
    for (i, a) in cex.actions.iter().enumerate() {
        let n = i + 1;
        let after = &cex.states[i + 1];
        let id = |call: u8, attempt: u8| after.attempts[call as usize][attempt as usize].id;
        let line = match *a {
            A::ClientCall { call } => format!("C->>T: {n}. tools/call (call {call}, id {})", id(call, 0)),
            A::ClientRetry { call, attempt } | A::FrameworkRetry { call, attempt } => {
                format!("C->>T: {n}. {} (call {call}, id {})", a.name(), id(call, attempt))
            }
            A::ClientTimeout { call, attempt } => format!("Note over C: {n}. timeout on id {}", id(call, attempt)),
            A::ClientCancel { call, attempt } => format!("C->>T: {n}. cancel id {}", id(call, attempt)),
            A::ClientReceive { call, attempt } => format!("T->>C: {n}. result for id {}", id(call, attempt)),
            A::ClientSeesDisconnect { call, attempt } => {
                format!("T-->>C: {n}. connection closed (id {})", id(call, attempt))
            }
            A::ClientQueryOutcome { call } => format!("C->>S: {n}. outcome of call {call}?"),
            A::StepFails { call } => format!("Note over C: {n}. step around call {call} fails"),
            A::StreamBreak { call, attempt } => format!("T-->>C: {n}. stream of id {} breaks", id(call, attempt)),
            A::ServerReceive { call, attempt } => format!("T->>S: {n}. deliver id {}", id(call, attempt)),
            A::ServerReceiveCancel { call, attempt } => {
                format!("T->>S: {n}. deliver cancel of id {}", id(call, attempt))
            }
            A::ServerCommit { call, attempt } => {
                format!(
                    "Note over S: {n}. EFFECT id {} (call {call}: {} in ledger)",
                    id(call, attempt),
                    after.ledger[call as usize]
                )
            }
            A::ServerStoreKey { call, attempt } => {
                format!("Note over S: {n}. store key record of id {}", id(call, attempt))
            }
            A::ServerRespond { call, attempt } => format!("S->>T: {n}. result for id {}", id(call, attempt)),
            A::ServerCrash => format!("Note over S: {n}. SIGKILL"),
            A::ServerRestart => format!("Note over S: {n}. restart"),
            A::KeyExpires { call, key } => format!("Note over S: {n}. key record k{call}.{} expires", key - 1),
        };
        let _ = writeln!(out, "    {}", mermaid_escape(&line));
    }
    out
}

/// An issue-ready Markdown report of one trace.
pub fn explain_markdown(m: &McpModel, property: &str, cex: &Counterexample, trace_file: &str) -> String {
    let cfg = &m.config;
    let mut out = String::new();
    let title = match property {
        "worst-case" => format!("{} side effects for one logical MCP tool call", cex.effects()),
        p => format!("`{p}` violated: {}", summary_property(p)),
    };
    let _ = writeln!(out, "## {title}\n");
    let _ = writeln!(out, "{}\n", summary_paragraph(m, property, cex));
    let _ = writeln!(out, "| parameter | value |\n|---|---|");
    let p = &m.profile;
    let _ = writeln!(out, "| profile | `{}` ({}) |", p.name, p.title);
    for (k, v) in [
        ("transport", cfg.transport.to_string()),
        ("client policy", cfg.client.to_string()),
        ("idempotency key", cfg.key.to_string()),
        ("server", cfg.server.to_string()),
        (
            "bounds",
            format!("{} calls, {} retries, {} crashes", cfg.bounds.calls, cfg.bounds.retries, cfg.bounds.crashes),
        ),
        ("property", property.to_string()),
        ("side effects for one logical call", cex.effects().to_string()),
        ("steps (shortest)", cex.len().to_string()),
    ] {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    let _ = writeln!(out, "\n### Trace\n");
    for (i, a) in cex.actions.iter().enumerate() {
        let what = rules::describe(m, &cex.states[i], a, &cex.states[i + 1]);
        let _ = writeln!(out, "{}. **{}** `{}`: {what}", i + 1, a.actor(), a);
        for (knob, value, cite) in rules::citations(m, a) {
            let _ = writeln!(
                out,
                "   - allowed by `{knob} = {value}`: {} `{}` § {}: \"{}\"",
                cite.revision, cite.path, cite.section, cite.quote
            );
        }
    }
    let _ = writeln!(out, "\n### Sequence\n\n```mermaid\n{}```\n", mermaid(cex));
    let _ = writeln!(out, "### Reproduce\n");
    let prop_flag = if property == "worst-case" { String::new() } else { format!(" --property {property}") };
    let _ = writeln!(out, "Model: `mcp-once check {cfg}{prop_flag}`  ");
    let _ = writeln!(out, "Validate this trace: `mcp-once check --trace {trace_file}`  ");
    let _ = writeln!(out, "Replay on a real server: `mcp-once replay {trace_file} --stdio \"SERVER COMMAND\" --tool NAME --args JSON --observe ledger:PATH --evidence DIR`, then `mcp-once explain {trace_file} --evidence DIR` adds the verdict and the wire log here.\n");
    let _ = writeln!(out, "<sub>Found by mcp-once {}: exhaustive breadth-first search within the bounds above; the trace is a shortest one.</sub>", env!("CARGO_PKG_VERSION"));
    out
}

fn summary_property(p: &str) -> &'static str {
    p.parse::<PropertyKind>().map(|k| k.meaning()).unwrap_or("")
}

fn summary_paragraph(m: &McpModel, property: &str, cex: &Counterexample) -> String {
    let cfg = &m.config;
    let names: Vec<&str> = cex.actions.iter().map(|a| a.name()).collect();
    let mut faults = Vec::new();
    if names.contains(&"ClientTimeout") {
        faults.push("a client timeout");
    }
    if names.contains(&"StreamBreak") {
        faults.push("a broken response stream");
    }
    if names.contains(&"ServerCrash") {
        faults.push("a server crash (SIGKILL) and restart");
    }
    if names.contains(&"KeyExpires") {
        faults.push("an expired key record");
    }
    if names.contains(&"StepFails") {
        faults.push("a failure of the step around the call");
    }
    let faults = if faults.is_empty() { "no fault at all".to_string() } else { faults.join(", ") };
    let outcome = match property {
        "at-most-once" | "exactly-once" | "worst-case" => {
            format!("the server executes one logical tool call {} times", cex.effects())
        }
        "no-silent-effect" => "the client reports the call as failed although its side effect happened".into(),
        "success-implies-effect" => "the client is told the call succeeded although it never ran".into(),
        _ => "the property fails".into(),
    };
    format!(
        "Under {} over {} transport, a client with policy `{}` (idempotency key: `{}`) talking to a `{}` server: after {faults}, {outcome}. \
         Every step below is allowed by the profile; the rule behind each is cited. This is a shortest such run ({} steps).",
        m.profile.name,
        cfg.transport,
        cfg.client,
        cfg.key,
        cfg.server,
        cex.len()
    )
}

/// Frames shown in a report's wire log (the full log stays in the evidence file).
const REPORT_FRAMES: usize = 80;

/// The "replay on a real server" section of an issue report, from a replay's evidence folder
/// (`result.json` and `evidence.jsonl`, as `mcp-once replay --evidence DIR` writes them).
pub fn replay_markdown(dir: &std::path::Path) -> anyhow::Result<String> {
    use mcp_once_conformance::replay::evidence::{self, Direction, Event};
    let result = mcp_once_conformance::replay::read_result(dir)?;
    let log_path = dir.join(evidence::EVIDENCE_FILE);
    let records = evidence::read(dir)?;
    // Numbers as the JSON files have them (`12.0`, `null`).
    let json = |v: Value| v.to_string();
    let mut out = String::new();
    out.push_str("\n## Replay on a real server\n\n");
    out.push_str(&format!("**Verdict: {}.** {}\n\n", result.verdict, result.reason));
    out.push_str(&format!("- Server: `{}` (protocol revision {})\n", result.target, result.revision.as_str()));
    out.push_str(&format!(
        "- Effects: expected {}, observed {} (observer: {})\n",
        result.expected_effects,
        json(result.observed_effects.into()),
        result.observer
    ));
    if let Some(n) = result.settled_effects {
        out.push_str(&format!("- Effects after the server stopped: {n}\n"));
    }
    out.push_str(&format!("- Evidence: `{}` ({} records)\n\n", log_path.display(), records.len()));
    if !result.steps.is_empty() {
        out.push_str("| # | step | status | ms | what the runner saw or did |\n|---|---|---|---|---|\n");
        for st in &result.steps {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                st.step,
                st.action,
                st.status,
                json(st.t_ms.into()),
                st.note.as_deref().unwrap_or_default().replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    for n in &result.notes {
        out.push_str(&format!("- Note: {n}\n"));
    }
    out.push_str("\n<details><summary>Wire log (JSON-RPC frames both ways, process events)</summary>\n\n```text\n");
    let mut shown = 0;
    for r in &records {
        let line = match &r.event {
            Event::Frame(f) => {
                let arrow = if f.dir == Direction::Out { "client -> server" } else { "server -> client" };
                let body = f.frame.as_ref().map(Value::to_string).or_else(|| f.text.clone()).unwrap_or_default();
                format!("{arrow} [{}] {body}", f.channel)
            }
            Event::Process(p) => format!("process {} {}", p.name(), p.pid_text()),
            Event::Observe { reading, .. } => format!("observer reads {}", json((*reading).into())),
            _ => continue,
        };
        if shown == REPORT_FRAMES {
            out.push_str(&format!("... (the rest is in {})\n", log_path.display()));
            break;
        }
        shown += 1;
        out.push_str(&format!("{:>9.1} ms  {line}\n", r.t_ms));
    }
    out.push_str("```\n\n</details>\n");
    Ok(out)
}
