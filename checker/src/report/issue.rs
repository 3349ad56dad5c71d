//! The issue `explain` writes for the project where the bug lives (`--for server|client|spec`):
//! a title naming the server (and client) by name and version, what was expected, what
//! happened (with the wire-log lines that show it), why the spec allows each step, the fix the
//! model proves, and how to reproduce it. Paths are redacted by the caller
//! ([`crate::report::redact`]); the wire log is folded to fit a GitHub comment.

use crate::conformant::{Conformant, ConformantAnswer};
use crate::fix::{Audience, Fix};
use crate::report::markdown::{cited_steps, faults, found_by, parameter_table, summary_paragraph};
use crate::report::replay::ReplayEvidence;
use crate::report::reproduce::{reproduce, Reproduce};
use crate::report::sequence::mermaid;
use mcp_once_conformance::probe_client::measured::MeasuredClient;
use mcp_once_model::explanation::explain_path;
use mcp_once_model::profile::KeyPlacement;
use mcp_once_model::search::Counterexample;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{ClientPolicy, Config, KeyLifetime, KeyScope, McpModel, PropertyKind, ServerImpl};
use serde_json::Value;
use std::fmt::Write;

/// A GitHub comment's limit, in characters: a report stays under it.
pub const GITHUB_LIMIT: usize = 65_536;

/// Room kept under the limit for what redaction may add and the closing lines.
const MARGIN: usize = 4_000;

/// Wire-log lines quoted in the Actual section at most (the folded log has the rest).
const QUOTED: usize = 24;

/// Everything an issue report is written from.
pub struct Issue<'a> {
    /// The trace's model.
    pub model: &'a McpModel,
    /// What the trace shows: the property it violates, or the worst case.
    pub property: TraceKind,
    /// The trace.
    pub cex: &'a Counterexample,
    /// The trace file, as given.
    pub trace_file: &'a str,
    /// The replay's evidence, if given, with its folder as given.
    pub evidence: Option<(&'a ReplayEvidence, &'a str)>,
    /// Whose issue it is.
    pub audience: Audience,
    /// The suggested fix's search.
    pub fix: &'a Fix,
    /// The conformant servers of the trace's kind, checked, where its server breaks a MUST.
    pub conformant: Option<&'a Conformant>,
    /// The client `probe-client` measured, when the report is about it.
    pub client: Option<&'a MeasuredClient>,
    /// Whether `mcp-once check` writes this very trace for its cell (its shortest run), so
    /// that the Reproduce block can make it rather than ask for the file.
    pub written_by_check: bool,
}

/// The report, its wire log folded so that the whole stays under [`GITHUB_LIMIT`].
pub fn issue_markdown(issue: &Issue) -> String {
    let without_log = render(issue, 0);
    let budget = GITHUB_LIMIT.saturating_sub(without_log.len() + MARGIN);
    render(issue, budget)
}

/// The report with at most `log_budget` characters of wire log.
fn render(issue: &Issue, log_budget: usize) -> String {
    let m = issue.model;
    let mut out = String::new();
    let _ = writeln!(out, "## {}\n", title(issue));
    out.push_str(&who(issue));
    let _ = writeln!(out, "\n### Expected\n\n{}\n", expected(issue.property));
    let _ = writeln!(out, "### Actual\n\n{}", actual(issue));
    let _ = writeln!(out, "### Why the spec allows it\n\n{}\n", summary_paragraph(m, issue.property, issue.cex));
    out.push_str(&cited_steps(m, issue.cex));
    let _ = writeln!(out, "\n{}", rules_paragraph(issue));
    if let Some(k) = issue.conformant {
        let _ = writeln!(out, "### A conformant server\n\n{}", conformant_section(issue, k));
    }
    let _ = writeln!(out, "### Suggested fix\n\n{}", suggested_fix(issue));
    let _ = writeln!(
        out,
        "### Reproduce\n\n{}",
        reproduce(&Reproduce {
            config: &m.config,
            property: issue.property,
            trace_file: issue.trace_file,
            written_by_check: issue.written_by_check,
            evidence: issue.evidence.map(|(ev, _)| ev),
        })
    );
    let _ = writeln!(out, "<details><summary>Parameters and sequence</summary>\n");
    out.push_str(&parameter_table(m, issue.property, issue.cex));
    let _ = writeln!(out, "\n```mermaid\n{}```\n\n</details>", mermaid(issue.cex));
    if let Some((ev, _)) = issue.evidence {
        out.push_str(&ev.section(log_budget));
    }
    out.push('\n');
    out.push_str(&found_by());
    out
}

/// Whether a server that keeps the MUSTs this one breaks reaches the same violation: its
/// shortest run, cited step by step, or that none does.
fn conformant_section(issue: &Issue, k: &Conformant) -> String {
    let property = issue.property.judged();
    match k.answer(property) {
        ConformantAnswer::Reached(v, cex) if cex.actions == issue.cex.actions => format!(
            "A server that keeps the MUST (`{}`) reaches the same violation by the same {} steps (where it treats a \
             closed stream as a cancellation, that cancellation has not reached it yet at the marked steps): the run \
             does not rest on the breach.\n",
            k.change(&v.model.config),
            cex.len()
        ),
        ConformantAnswer::Reached(v, cex) => format!(
            "A server that keeps the MUST (`{}`) reaches the same violation in {} steps, so the issue does not rest on \
             the breach; its run is the one to file:\n\n{}",
            k.change(&v.model.config),
            cex.len(),
            cited_steps(&v.model, cex)
        ),
        ConformantAnswer::NotReached => format!(
            "No server of this kind that keeps the MUST reaches this violation ({}), so it is a bug of a \
             non-conformant server only.\n",
            k.variants_hold()
        ),
        ConformantAnswer::Unknown => format!(
            "Whether a server of this kind that keeps the MUST reaches this violation is unknown: the search of {} \
             stopped at its budget first.\n",
            k.variant_names()
        ),
    }
}

/// What went wrong, in a few words: the property's failure for one call.
fn what_happened(property: TraceKind, effects: u8) -> String {
    match property.judged() {
        PropertyKind::AtMostOnce | PropertyKind::ExactlyOnce => format!("one tools/call takes effect {effects} times"),
        PropertyKind::NoSilentEffect => "a tools/call reported as failed took effect".into(),
        PropertyKind::SuccessImpliesEffect => "a tools/call reported as succeeded never took effect".into(),
        PropertyKind::NoForeignReplay => "a tools/call is answered with another caller's stored result".into(),
    }
}

/// The title, addressed to whose issue it is.
fn title(issue: &Issue) -> String {
    let cfg = &issue.model.config;
    let what = what_happened(issue.property, issue.cex.effects());
    let after = faults(issue.cex);
    match issue.audience {
        Audience::Server => {
            let server = issue.evidence.and_then(|(ev, _)| ev.server_info());
            let name = server.map_or(format!("A `{}` server", cfg.server), |p| format!("{} {}", p.name, p.version));
            format!("{name}: {what} after {after} ({} transport)", cfg.transport)
        }
        Audience::Client => match issue.client.and_then(|c| c.client_info.as_ref()) {
            Some(info) => format!(
                "{} {} (retry policy `{}`): {what} after {after} ({} transport)",
                info.name, info.version, cfg.client, cfg.transport
            ),
            None => format!("Client retry policy `{}`: {what} after {after} ({} transport)", cfg.client, cfg.transport),
        },
        Audience::Spec => {
            let profile = &issue.model.profile;
            let missing = if profile.knobs.idempotency_key.value == KeyPlacement::None {
                "no idempotency key"
            } else {
                "no delivery guarantee"
            };
            format!(
                "{} ({}): {what} after {after}, and {missing} lets a client prevent it",
                profile.name, profile.title
            )
        }
    }
}

/// Who is involved: the server and client by name and version, the target, the model's names.
fn who(issue: &Issue) -> String {
    let cfg = &issue.model.config;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Whose issue: **{}** (`mcp-once explain --for {}`).\n",
        audience_words(issue.audience),
        issue.audience.as_str()
    );
    match issue.evidence {
        Some((ev, _)) => {
            let server =
                ev.server_info().map_or("not named (no `serverInfo` in the handshake)".into(), |p| p.to_string());
            let _ = writeln!(
                out,
                "- Server: {server}, started as `{}` (the model's `{}` server)",
                ev.result.target, cfg.server
            );
            let client = ev.client_info().map_or("not named".into(), |p| p.to_string());
            let _ = writeln!(
                out,
                "- Client: {client}, the replay runner acting as a `{}` client (idempotency key: `{}`)",
                cfg.client, cfg.key
            );
            let _ = writeln!(out, "- Protocol revision: {}; transport: {}", ev.result.revision.as_str(), cfg.transport);
        }
        None => {
            let _ = writeln!(
                out,
                "- Server: the model's `{}` server; client: a `{}` client (idempotency key: `{}`); transport: {}",
                cfg.server, cfg.client, cfg.key, cfg.transport
            );
            let _ = writeln!(
                out,
                "- No replay evidence: run `mcp-once replay` on the server and add `--evidence DIR` to name it."
            );
        }
    }
    if let Some(c) = issue.client {
        let info = c.client_info.as_ref().map_or("not named (no `clientInfo` in its `initialize`)".into(), |i| {
            format!("`{}` {}", i.name, i.version)
        });
        let _ = writeln!(
            out,
            "- Client measured: {info}, run as `{}` by `mcp-once probe-client` over {} (checked as `--client {} --key {}`{})",
            c.command,
            c.transport,
            c.policy,
            c.key,
            if c.policy == cfg.client { "" } else { "; not this trace's client policy" }
        );
    }
    let _ = writeln!(out, "- Profile: `{}` ({})", issue.model.profile.name, issue.model.profile.title);
    out
}

/// Whose issue, in words.
fn audience_words(a: Audience) -> &'static str {
    match a {
        Audience::Server => "the server's SDK or implementation",
        Audience::Client => "the client's or framework's retry policy",
        Audience::Spec => "the specification",
    }
}

/// The Expected section: the property in one sentence.
fn expected(property: TraceKind) -> String {
    match property.judged() {
        PropertyKind::AtMostOnce => {
            "One logical tool call takes effect at most once (`at-most-once`), whatever the client's retries and the faults around it.".into()
        }
        p => {
            let meaning = p.meaning();
            let mut chars = meaning.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>()).unwrap_or_default();
            format!("{first}{} (`{p}`).", chars.as_str())
        }
    }
}

/// The Actual section: counts, what the client was told, the wire-log lines that show it.
fn actual(issue: &Issue) -> String {
    let mut out = String::new();
    let Some((ev, _)) = issue.evidence else {
        let _ = writeln!(
            out,
            "In the model: {} for one logical call after {} (a shortest run of {} steps, below). Not yet replayed on a real server.\n",
            what_happened(issue.property, issue.cex.effects()),
            faults(issue.cex),
            issue.cex.len()
        );
        return out;
    };
    let r = &ev.result;
    let observed = r.observed_effects.map_or("an unknown number of".into(), |n| n.to_string());
    let _ = writeln!(
        out,
        "The replay was **{}**: the server took effect **{observed}** times for one logical call (the model's trace: {}), counted by {}.",
        r.verdict, r.expected_effects, r.observer
    );
    if let Some(n) = r.settled_effects {
        let _ = writeln!(out, "After the server was stopped the count was {n}.");
    }
    out.push_str("\nWhat the client was told:\n\n");
    for id in ev.call_ids() {
        let told = match ev.answer(&id) {
            None => "no answer at all".to_string(),
            Some((rec, v)) => format!("at {:.1} ms, {}", rec.t_ms, answer_words(v)),
        };
        let _ = writeln!(out, "- `tools/call` id {id}: {told}");
    }
    out.push_str("\nThe wire-log lines that show it (from the evidence log):\n\n```text\n");
    let ids = ev.call_ids();
    let lines: Vec<String> = ev.records.iter().filter(|rec| quoted(rec, &ids)).filter_map(|rec| ev.line(rec)).collect();
    for line in lines.iter().take(QUOTED) {
        let _ = writeln!(out, "{line}");
    }
    if lines.len() > QUOTED {
        let _ = writeln!(out, "... {} more such lines in the wire log below", lines.len() - QUOTED);
    }
    out.push_str("```\n");
    out
}

/// Whether Actual quotes a record: the calls, their answers, cancellations, effect counts,
/// crash points and kills.
fn quoted(rec: &mcp_once_conformance::replay::evidence::Record, ids: &[Value]) -> bool {
    use mcp_once_conformance::replay::evidence::{Event, Process};
    match &rec.event {
        Event::Frame(f) => f.frame.as_ref().is_some_and(|v| {
            matches!(v["method"].as_str(), Some("tools/call" | "notifications/cancelled"))
                || (v.get("method").is_none() && ids.contains(&v["id"]))
        }),
        Event::Observe { .. } | Event::CrashPoint { .. } => true,
        Event::Process(Process::Killed { .. }) => true,
        _ => false,
    }
}

/// A server's answer in words: a result, a tool error, or a JSON-RPC error.
fn answer_words(v: &Value) -> String {
    if let Some(e) = v.get("error") {
        return format!("JSON-RPC error {}: {}", e["code"], e["message"].as_str().unwrap_or_default());
    }
    if v["result"]["isError"] == true {
        return "a tool error result".into();
    }
    "a successful result".into()
}

/// The rules the run rests on, by their strength (MUST, SHOULD, MAY), and what that means for
/// whose issue it is.
fn rules_paragraph(issue: &Issue) -> String {
    let m = issue.model;
    let mut seen = Vec::new();
    let mut out = String::new();
    let steps = explain_path(m, issue.cex);
    for step in &steps {
        for (knob, value, cite) in &step.rules {
            let name = format!("`{knob} = {value}`");
            if seen.contains(&name) {
                continue;
            }
            // The quote's first keyword (a quote may go on to other rules of the same clause).
            let strength = ["MUST NOT", "MUST", "SHOULD NOT", "SHOULD", "MAY"]
                .into_iter()
                .filter_map(|w| cite.quote.find(w).map(|at| (at, w)))
                .min_by_key(|(at, w)| (*at, std::cmp::Reverse(w.len())))
                .map_or("no keyword: an absence of a rule", |(_, w)| w);
            let _ = writeln!(out, "- {name} ({} § {}{}): {strength}", cite.revision, cite.section, cite.standing());
            seen.push(name);
        }
    }
    let breaking: Vec<String> =
        steps.iter().filter(|s| s.breaches.iter().any(|b| b.binds())).map(|s| s.number.to_string()).collect();
    let head = if breaking.is_empty() {
        format!(
            "Every step above is one the profile `{}` allows, so no step breaks one of its MUSTs. The rules the run rests on, by strength:\n\n",
            m.profile.name
        )
    } else {
        format!(
            "At step{} {} the server breaks a MUST of the profile `{}` (marked above), so the run shows what a non-conformant server does; the section \"A conformant server\" below says whether a server that keeps the MUST reaches the same violation. Every other step is one the profile allows. The rules the run rests on, by strength:\n\n",
            if breaking.len() > 1 { "s" } else { "" },
            breaking.join(", "),
            m.profile.name,
        )
    };
    let tail = match issue.audience {
        Audience::Server => "Where a rule is a MAY or a SHOULD the server chose; the fix below is one the model proves makes the property hold (a choice the spec leaves the server, unless it says it needs a proposal). A server that ignores cancellation (MAY) still matters: the client, told nothing, retries with a new request id, and nothing lets the server tell the retry from a new call.",
        Audience::Client => "The client's retry is allowed; it resends the call with nothing the server can match to the first attempt. The fix below is a retry policy (or key) under which the property holds against this server.",
        Audience::Spec => "Nothing in these rules lets a client retry a call that may have taken effect without risking a second effect: the fix below is what a revision or proposal would have to add.",
    };
    format!("{head}{out}\n{tail}\n")
}

/// What a server behaviour does, in words.
fn server_words(s: ServerImpl) -> &'static str {
    match s {
        ServerImpl::Plain => "run every call it receives",
        ServerImpl::HonoursCancel => "drop a call whose notifications/cancelled arrives before its effect",
        ServerImpl::DedupById => "keep a table of request ids in memory and answer a repeated id from it",
        ServerImpl::DedupByIdDurable => "keep that table of request ids on disk, across restarts",
        ServerImpl::KeyVolatile => "deduplicate by the call's idempotency key, records in memory",
        ServerImpl::KeyDurable => {
            "store the idempotency key's record durably, atomically with the effect, and answer a repeated key from it"
        }
        ServerImpl::KeyAfterEffect => "store the idempotency key's record after the effect",
        ServerImpl::KeyExpiring => "keep durable idempotency-key records for a bounded time",
        ServerImpl::ValidatesTaskId => {
            "record each task id durably when it reads the request, and reject a request whose task id it already has"
        }
    }
}

/// What a client policy does, in words.
fn client_words(c: ClientPolicy) -> &'static str {
    match c {
        ClientPolicy::NoRetry => "not retry a tools/call automatically",
        ClientPolicy::RetryOnTimeout => "retry a tools/call after a timeout",
        ClientPolicy::RetryOnDisconnect => "retry a tools/call after a lost connection",
        ClientPolicy::RetryAny => "retry after a timeout, a lost connection or an error",
        ClientPolicy::FrameworkRetry => "re-run the step around the call when it fails",
    }
}

/// What a key lifetime means, in words.
fn key_words(k: KeyLifetime) -> &'static str {
    match k {
        KeyLifetime::None => "send no idempotency key",
        KeyLifetime::PerCall => "send one idempotency key per logical call, the same on every retry",
        KeyLifetime::PerAttempt => "send a new idempotency key on every attempt",
        KeyLifetime::PerStep => "send one idempotency key per framework step",
    }
}

/// The parameters `to` changes from `from`, in words.
fn changes(from: &Config, to: &Config) -> Vec<String> {
    let mut out = Vec::new();
    if from.profile != to.profile {
        out.push(format!("under the profile `{}`", to.profile));
    }
    if from.client != to.client {
        out.push(format!("the client would {} (`--client {}`)", client_words(to.client), to.client));
    }
    if from.key != to.key {
        out.push(format!("the client would {} (`--key {}`)", key_words(to.key), to.key));
    }
    if from.server != to.server {
        out.push(format!("the server would {} (`--server {}`)", server_words(to.server), to.server));
    }
    if from.key_scope != to.key_scope {
        if let Some(scope) = to.key_scope {
            let words = match scope {
                KeyScope::PerCaller => {
                    "match a key only against the same caller's earlier requests (its records scoped per caller)"
                }
                KeyScope::Global | KeyScope::Unspecified => "keep one key record for every caller",
            };
            out.push(format!("the server would {words} (`--key-scope {scope}`)"));
        }
    }
    out
}

/// What the Suggested fix section says when no configuration near the trace's makes `property`
/// hold: how many were tried (none may be open to this audience at all), and where to look next
/// (a revision of the spec, unless that is what was asked).
fn no_fix(tried: usize, audience: Audience, property: &str, at: &str) -> String {
    let who = audience.as_str();
    let said = match tried {
        0 => format!(
            "No configuration near this one is open to a fix for the {who}: none of its parameters the {who} controls, and no built-in proposal's key, gives a cell the profile allows."
        ),
        n => format!(
            "None of the {n} configurations near this one that a fix for the {who} could move to makes `{property}` hold at {at} (each checked by an exhaustive search; a fix is checked at 2 calls, 2 retries and 1 crash at least, or the trace's bounds if larger)."
        ),
    };
    match audience {
        Audience::Spec => said,
        Audience::Server | Audience::Client => {
            format!("{said} Try `--for spec` for what a revision of the spec could add.")
        }
    }
}

/// The Suggested fix section: the configurations the model proves the property under, at the
/// bounds they were checked at, each naming the proposal it needs if it needs one.
fn suggested_fix(issue: &Issue) -> String {
    let cfg = &issue.model.config;
    let fix = issue.fix;
    let property = issue.property.judged();
    let b = fix.bounds;
    let at = format!(
        "{} call{}, {} retr{} each and {} crash{}",
        b.calls,
        if b.calls == 1 { "" } else { "s" },
        b.retries,
        if b.retries == 1 { "y" } else { "ies" },
        b.crashes,
        if b.crashes == 1 { "" } else { "es" }
    );
    let mut out = String::new();
    if fix.holds.is_empty() {
        let _ = writeln!(out, "{}", no_fix(fix.tried, issue.audience, &property.to_string(), &at));
        return out;
    }
    let _ = writeln!(
        out,
        "The model proves `{property}` holds at {at} (an exhaustive search; a fix is checked at 2 calls, 2 retries and 1 crash at least, or the trace's bounds if larger; {} of {} nearby configurations checked hold) when:\n",
        fix.holds.len(),
        fix.tried
    );
    for (to, needs) in fix.holds.iter().take(3) {
        let _ = writeln!(out, "- {}.  ", changes(cfg, to).join("; "));
        if let Some(n) = needs {
            let source = n.source.as_deref().map(|s| format!(" ({s})")).unwrap_or_default();
            let _ = writeln!(
                out,
                "  This needs `{}`, {}{source}: a proposal, not part of any released revision, so no server or client can rely on it today.  ",
                n.name, n.title
            );
        }
        let _ = writeln!(out, "  Shown by `mcp-once check {to} --property {property}` (exit 0: it holds).");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_fix_names_what_was_tried_and_never_sends_the_spec_to_itself() {
        let none = no_fix(0, Audience::Spec, "at-most-once", "2 calls");
        assert!(!none.contains("None of the 0") && none.contains("No configuration"), "{none}");
        assert!(!none.contains("--for spec"), "{none}");
        let some = no_fix(4, Audience::Server, "at-most-once", "2 calls");
        assert!(some.starts_with("None of the 4 configurations") && some.contains("--for spec"), "{some}");
        let zero_server = no_fix(0, Audience::Server, "at-most-once", "2 calls");
        assert!(zero_server.contains("fix for the server") && zero_server.contains("--for spec"), "{zero_server}");
    }
}
