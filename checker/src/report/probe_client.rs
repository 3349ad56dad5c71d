//! `probe-client`'s output: the client as classified, each scenario's observations, the
//! model's verdicts for it, and one check per scenario in the MCP conformance suite's shape;
//! as text, JSON and Markdown.

use crate::client_verdicts::ClientVerdict;
use crate::report::probe::probe_text;
use mcp_once_conformance::probe::checks::{now_rfc3339, CheckRecord, Status};
use mcp_once_conformance::probe_client::{ClientProfile, Observed, Transport};
use mcp_once_model::profile::RetryId;
use mcp_once_model::Bounds;
use serde_json::{json, Value};

/// Everything `probe-client` found.
pub struct ProbeClientReport {
    /// The client command, as given.
    pub command: String,
    /// The transport probed.
    pub transport: Transport,
    /// The client, classified.
    pub client: ClientProfile,
    /// One entry per scenario run.
    pub scenarios: Vec<Observed>,
    /// The model's verdicts for the client.
    pub verdicts: Vec<ClientVerdict>,
    /// The bounds they were checked at.
    pub bounds: Bounds,
    /// One check per scenario.
    pub checks: Vec<CheckRecord>,
    /// The `--records` folder, if the records were kept there.
    pub records: Option<std::path::PathBuf>,
}

/// One check per scenario: did one logical call run the tool at most once? A run the client did
/// not finish within its bound, with one effect so far, is not testable (never a pass).
pub fn checks(observed: &[Observed]) -> Vec<CheckRecord> {
    observed
        .iter()
        .map(|o| {
            let (status, error) = if o.effects > 1 {
                (
                    Status::Failure,
                    Some(format!("the tool ran {} times for one logical call ({} attempts)", o.effects, o.attempts)),
                )
            } else if o.killed_at_bound {
                (
                    Status::Untestable,
                    Some("Not testable: the client was still running at the bound; it might have retried later".into()),
                )
            } else {
                (Status::Success, None)
            };
            CheckRecord {
                id: format!("mcp-once-client-{}", o.scenario),
                name: format!("client under {}", o.scenario),
                description: format!("one logical call runs the tool at most once when the server does: {}", o.server),
                status,
                timestamp: now_rfc3339(),
                spec_references: Vec::new(),
                details: serde_json::to_value(o).unwrap_or(Value::Null),
                error_message: error,
            }
        })
        .collect()
}

fn yes_no(v: Option<bool>) -> &'static str {
    match v {
        Some(true) => "yes",
        Some(false) => "no",
        None => "not seen",
    }
}

/// The headline: the model's names for the client (or where it is outside them).
pub fn headline(r: &ProbeClientReport) -> String {
    let c = &r.client;
    let policy = match (&c.policy.name, &c.policy.outside) {
        (Some(n), _) => format!("your client is `{n}`"),
        (None, Some(why)) => format!("your client is outside the model: {why} (checked as `{}`)", c.policy.checked_as),
        (None, None) => format!("your client is checked as `{}`", c.policy.checked_as),
    };
    let first_violation = r.verdicts.iter().find(|v| v.verdict == "violated");
    let verdict = match first_violation {
        Some(v) => format!(": {}", v.sentence()),
        None => ": no built-in profile lets one call run twice at these bounds".into(),
    };
    let key = match &c.key.at {
        Some(at) => format!("key `{}` in {at}", c.key.name),
        None => format!("key `{}`", c.key.name),
    };
    format!("{policy}, {key}{verdict}")
}

/// The `--format json` document.
pub fn to_json(r: &ProbeClientReport) -> Value {
    let c = &r.client;
    json!({
        "command": r.command,
        "transport": r.transport.as_str(),
        "client": {
            "policy": c.policy.name.map(|p| p.as_str()),
            "key": c.key.name.as_str(),
            "attempts": c.attempts,
            "cancels_on_timeout": c.cancels_on_timeout,
            "retry_id": c.retry_id,
            "new_connection": c.new_connection,
            "timeout_ms": c.timeout_ms,
            "notes": c.notes,
            "checked_as": c.policy.checked_as.as_str(),
            "outside_model": c.policy.outside,
            "unobserved": c.policy.unobserved,
            "key_note": c.key.note,
            "key_at": c.key.at,
        },
        "summary": headline(r),
        "scenarios": r.scenarios,
        "model": {
            "property": "at-most-once",
            "bounds": {"calls": r.bounds.calls, "retries": r.bounds.retries, "crashes": r.bounds.crashes},
            "verdicts": r.verdicts,
        },
        "checks": r.checks,
    })
}

fn scenario_rows(r: &ProbeClientReport, row: &dyn Fn(&[String]) -> String) -> String {
    let mut s =
        row(&["scenario", "attempts", "effects", "cancels", "backoff ms", "ids", "connection, session", "exit"]
            .map(String::from));
    for o in &r.scenarios {
        let ids: Vec<String> = o.request_ids.iter().map(Value::to_string).collect();
        let backoff: Vec<String> = o.backoff_ms.iter().map(u64::to_string).collect();
        let mut conns = o.connections.clone();
        conns.dedup();
        let exit = match (o.exit, o.killed_at_bound) {
            (_, true) => "killed at bound".to_string(),
            (Some(c), _) => c.to_string(),
            (None, _) => "signal".to_string(),
        };
        s.push_str(&row(&[
            o.scenario.to_string(),
            o.attempts.to_string(),
            o.effects.to_string(),
            o.cancels.to_string(),
            if backoff.is_empty() { "-".into() } else { backoff.join(", ") },
            ids.join(", "),
            conns.join("; "),
            exit,
        ]));
    }
    s
}

fn facts(r: &ProbeClientReport) -> Vec<String> {
    let c = &r.client;
    let mut v = vec![
        format!("attempts per logical call, at most: {}", c.attempts),
        format!("cancels on its own timeout: {}", yes_no(c.cancels_on_timeout)),
        format!(
            "a retry reuses the request id: {}",
            c.retry_id.map_or("not seen (no retry)", |i| match i {
                RetryId::Same => "yes",
                RetryId::New => "no",
            })
        ),
        format!(
            "a retry opens a new MCP connection (a new server process, handshake or session): {}",
            yes_no(c.new_connection)
        ),
        format!("its own timeout, as measured: {}", c.timeout_ms.map_or("not seen".into(), |t| format!("{t} ms"))),
    ];
    v.extend(c.notes.iter().cloned());
    if !c.policy.unobserved.is_empty() {
        v.push(format!("not exercised (assumed no retry): {}", c.policy.unobserved.join(", ")));
    }
    if let Some(n) = &c.key.note {
        v.push(format!("key: {n}"));
    }
    let mut key_notes: Vec<&str> = r.verdicts.iter().filter_map(|v| v.key_note.as_deref()).collect();
    key_notes.dedup();
    v.extend(key_notes.into_iter().map(|n| format!("key: {n}")));
    v
}

fn bounds_text(r: &ProbeClientReport) -> String {
    format!("--calls {} --retries {} --crashes {}", r.bounds.calls, r.bounds.retries, r.bounds.crashes)
}

/// Plain text.
pub fn to_text(r: &ProbeClientReport) -> String {
    let mut s = format!("client `{}` over {}\n{}\n", r.command, r.transport, headline(r));
    for f in facts(r) {
        s.push_str(&format!("  {f}\n"));
    }
    s.push('\n');
    s.push_str(&scenario_rows(r, &|cells| {
        format!(
            "{:<11} {:>8} {:>7} {:>7}  {:<12} {:<10} {:<24} {}\n",
            cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6], cells[7]
        )
    }));
    s.push_str(&format!("\nthe model at-most-once, {} ({}):\n", bounds_text(r), r.transport));
    for v in &r.verdicts {
        s.push_str(&format!("  {}\n", v.sentence()));
    }
    s.push('\n');
    s.push_str(&probe_text(&r.checks, None));
    s
}

/// Markdown: the headline, the facts, the scenario table and the verdicts.
pub fn to_markdown(r: &ProbeClientReport) -> String {
    let mut s = format!("## Client `{}` over {}\n\n**{}**\n\n", r.command, r.transport, headline(r));
    for f in facts(r) {
        s.push_str(&format!("- {f}\n"));
    }
    s.push('\n');
    let row = |cells: &[String]| format!("| {} |\n", cells.join(" | "));
    let table = scenario_rows(r, &row);
    let mut lines = table.lines();
    if let Some(head) = lines.next() {
        s.push_str(&format!("{head}\n|{}\n", "---|".repeat(8)));
    }
    for l in lines {
        s.push_str(&format!("{l}\n"));
    }
    s.push_str(&format!("\n### The model (at-most-once, `{}`)\n\n", bounds_text(r)));
    s.push_str(
        "| profile | server | key checked | verdict | shortest trace (or states searched) |\n|---|---|---|---|---|\n",
    );
    for v in &r.verdicts {
        let steps = v.steps.map_or_else(|| v.note.clone().unwrap_or_default(), |n| format!("{n} steps"));
        s.push_str(&format!("| {} | {} | {} | {} | {} |\n", v.profile, v.server, v.key, v.verdict, steps));
    }
    s
}
