//! The issue-ready Markdown report of one trace: summary, parameters, cited steps, a Mermaid
//! sequence diagram and how to reproduce it.

use crate::cells::Cell;
use crate::conformant::{Conformant, ConformantAnswer};
use crate::report::sequence::mermaid;
use mcp_once_model::conformance;
use mcp_once_model::explanation::explain_path;
use mcp_once_model::profile::{InputRequired, KnobId, TaskCreation};
use mcp_once_model::search::Counterexample;
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{
    Cancellation, HandlerKind, McpModel, PropertyKind, ServerImpl, TaskRecords, Tasks, Transport, Verdict,
};
use std::fmt::Write;

/// An issue-ready Markdown report of one trace.
pub fn explain_markdown(m: &McpModel, property: TraceKind, cex: &Counterexample, trace_file: &str) -> String {
    let cfg = &m.config;
    let mut out = String::new();
    let title = match property {
        TraceKind::WorstCase => format!("{} side effects for one logical MCP tool call", cex.effects()),
        TraceKind::Counterexample(p) => format!("`{p}` violated: {}", p.meaning()),
    };
    let _ = writeln!(out, "## {title}\n");
    let _ = writeln!(out, "{}\n", summary_paragraph(m, property, cex));
    out.push_str(&parameter_table(m, property, cex));
    let _ = writeln!(out, "\n### Trace\n");
    out.push_str(&cited_steps(m, cex));
    let _ = writeln!(out, "\n### Sequence\n\n```mermaid\n{}```\n", mermaid(cex));
    let _ = writeln!(out, "### Reproduce\n");
    let _ = writeln!(out, "Model: `mcp-once check {cfg}{}`  ", property_flag(property));
    let _ = writeln!(out, "Validate this trace: `mcp-once check --trace {trace_file}`  ");
    let _ = writeln!(out, "Replay on a real server: `mcp-once replay {trace_file} --stdio \"SERVER COMMAND\" --tool NAME --args JSON --observe ledger:PATH --evidence DIR`, then `mcp-once explain {trace_file} --evidence DIR` adds the verdict and the wire log here.\n");
    out.push_str(&found_by());
    out
}

/// The closing line of a report: which mcp-once found it, and how.
pub fn found_by() -> String {
    format!(
        "<sub>Found by mcp-once {}: exhaustive breadth-first search within the bounds above; the trace is a shortest one.</sub>\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// ` --property P` for a `check` command (nothing for the worst case, which `check` always reports).
pub fn property_flag(property: TraceKind) -> String {
    match property {
        TraceKind::WorstCase => String::new(),
        TraceKind::Counterexample(p) => format!(" --property {p}"),
    }
}

/// The parameter table of a report: profile, configuration, bounds, property, counts.
pub fn parameter_table(m: &McpModel, property: TraceKind, cex: &Counterexample) -> String {
    let cfg = &m.config;
    let mut out = String::new();
    let _ = writeln!(out, "| parameter | value |\n|---|---|");
    let p = &m.profile;
    let _ = writeln!(out, "| profile | `{}` ({}) |", p.name, p.title);
    for (k, v) in [
        ("transport", cfg.transport.to_string()),
        ("client policy", cfg.client.to_string()),
        ("idempotency key", cfg.key.to_string()),
        ("server", cfg.server_pair()),
        (
            "bounds",
            format!(
                "{}, {}, {}",
                count(cfg.bounds.calls, "call", "calls"),
                count(cfg.bounds.retries, "retry", "retries"),
                count(cfg.bounds.crashes, "crash", "crashes")
            ),
        ),
        ("property", property.to_string()),
        ("side effects for one logical call", cex.effects().to_string()),
        ("steps (shortest)", cex.len().to_string()),
    ] {
        let _ = writeln!(out, "| {k} | {v} |");
    }
    out
}

/// The trace's steps, numbered, each with the profile's rule that allows it, cited.
pub fn cited_steps(m: &McpModel, cex: &Counterexample) -> String {
    let mut out = String::new();
    for step in explain_path(m, cex) {
        let _ = writeln!(out, "{}. **{}** `{}`: {}", step.number, step.action.actor(), step.action, step.what);
        // A rule the step goes against is cited with that breach, not as allowing the step.
        let breached = |knob: &KnobId| step.breaches.iter().any(|b| b.knob == *knob);
        for (knob, value, cite) in step.rules.iter().filter(|r| !breached(&r.0)) {
            let _ = writeln!(
                out,
                "   - allowed by `{knob} = {value}`: {} `{}` § {}{}: \"{}\"",
                cite.revision,
                cite.path,
                cite.section,
                cite.standing(),
                cite.quote
            );
        }
        for b in &step.breaches {
            let head = if b.binds() {
                format!("**breaks the {}** of `{}`", b.keyword, b.knob)
            } else {
                format!("**does what the {}** of `{}` **advises against**", b.keyword, b.knob)
            };
            let _ = writeln!(out, "   - {head}: {}", b.what);
            let cited = step.rules.iter().find(|r| r.0 == b.knob).filter(|(_, _, c)| !b.what.contains(&c.quote));
            if let Some((knob, value, cite)) = cited {
                let _ = writeln!(
                    out,
                    "     (`{knob} = {value}`: {} `{}` § {}{}: \"{}\")",
                    cite.revision,
                    cite.path,
                    cite.section,
                    cite.standing(),
                    cite.quote
                );
            }
        }
    }
    out
}

/// `check --format markdown` of one cell: a table of the verdicts, then the issue-ready report
/// of each counterexample (as `explain` writes it without evidence).
pub fn check_markdown(cell: &Cell, conformant: Option<&Conformant>) -> String {
    let mut out = format!("# mcp-once check {}\n\n", cell.config);
    let c = match &cell.outcome {
        Err(reason) => return out + &format!("Not applicable: {reason}\n"),
        Ok(c) => c,
    };
    let p = &c.model.profile;
    let _ = writeln!(out, "Profile `{}` ({}), from {}.\n", p.name, p.title, p.origin);
    let _ = writeln!(out, "| property | verdict | shortest counterexample |\n|---|---|---|");
    for r in &c.results {
        let (verdict, shortest) = match (&r.counterexample, r.verdict) {
            (Some(cex), _) => {
                ("**violated**", format!("{} steps, {} effect(s) for one call", cex.len(), cex.effects()))
            }
            (None, Verdict::Unknown) => ("unknown", "the search stopped at its budget first".to_string()),
            (None, _) => ("holds", "none".to_string()),
        };
        let _ = writeln!(out, "| `{}` | {verdict} | {shortest} |", r.property.as_str());
    }
    for gap in not_covered(&c.model) {
        let _ = writeln!(out, "\nWhat this verdict does not cover: {gap}");
    }
    for b in conformance::cell_breaches(&c.model.config, p) {
        let head = if b.binds() {
            format!("This {} breaks a {} of the profile", b.party(), b.keyword)
        } else {
            format!("This {} does what a {} of the profile advises against", b.party(), b.keyword)
        };
        let _ = writeln!(out, "\n**{head}** (`{}`): {}.", b.knob, b.what);
    }
    for r in &c.results {
        if let Some(cex) = &r.counterexample {
            let same = conformant.is_some_and(|k| k.same_steps(r.property, cex));
            if let Some(k) = conformant {
                out.push_str(&conformant_markdown(k, r.property, same));
            }
            if same {
                continue;
            }
            let file =
                c.files.get(TraceKind::Counterexample(r.property)).map_or("TRACE".into(), |f| f.display().to_string());
            let _ = writeln!(out);
            out.push_str(&explain_markdown(&c.model, TraceKind::Counterexample(r.property), cex, &file));
        }
    }
    out
}

/// What the conformant servers say of property `p`, before the cell's own report: the report
/// of the shortest conformant counterexample, or that no conformant server reaches it.
/// `same`: its steps are the cell's own (then the cell's report is not repeated).
fn conformant_markdown(k: &Conformant, p: PropertyKind, same: bool) -> String {
    match k.answer(p) {
        ConformantAnswer::Reached(v, cex) => {
            let file = v.files.get(TraceKind::Counterexample(p)).map_or("TRACE".into(), |f| f.display().to_string());
            let then = if same {
                "by the same steps as this cell's own server; its report is the one below"
            } else {
                "its report comes first, then this cell's own"
            };
            format!(
                "\nA conformant server (`{}`) reaches the same `{p}` violation in {} steps, {then}.\n\n{}\n",
                k.change(&v.model.config),
                cex.len(),
                explain_markdown(&v.model, TraceKind::Counterexample(p), cex, &file)
            )
        }
        ConformantAnswer::NotReached => format!(
            "\nNo conformant server of this kind reaches the `{p}` violation ({}): the report below is of a non-conformant server only.\n",
            k.variants_hold()
        ),
        ConformantAnswer::Unknown => format!(
            "\nWhether a conformant server of this kind reaches the `{p}` violation is unknown: the search of {} stopped at its budget first. The report below is of a non-conformant server.\n",
            k.variant_names()
        ),
    }
}

/// What a cell's verdict does not cover, one sentence per mechanism the cell leaves out:
/// - cancellation, where its server cannot be interrupted: a handler stopped by its
///   cancellation between its effect and its key record (a 2026-07-28 HTTP server MUST treat a
///   closed stream as a cancellation, and an SDK may cancel the handler's task there);
/// - multi round-trip requests, where the profile has them and the cell's tool never asks for
///   input: a handler that runs again on every round;
/// - key records leaving their window, where the cell's server keeps expiring records that the
///   profile's retention keeps past every retry its clients may send;
/// - task-augmented `tools/call`, where the profile has tasks (2025-11-25 in the core,
///   2026-07-28 as the tasks extension): the cell's own `tools/call` is plain (`--tasks
///   augmented` checks it), or it is task-augmented, and what of tasks the model leaves out.
///
/// A task-augmented cell has no cancellation, handler or instance gap: no cancellation reaches
/// its task, and the other two axes are refused with tasks (the tasks gap names them).
pub fn not_covered(m: &McpModel) -> Vec<String> {
    let cfg = &m.config;
    // In a task-augmented cell no cancellation reaches the task, and the handler and instance
    // axes are refused: what it leaves out there is in the tasks gap.
    let plain_call = cfg.tasks == Tasks::None;
    let mut gaps = Vec::new();
    if plain_call && cfg.cancel() != Cancellation::Interrupts {
        gaps.push(format!(
            "a server whose handler its cancellation interrupts wherever it is, between the effect and the key \
             record too; this cell's server is {}. `--cancel interrupts` checks that server.",
            cfg.server_pair()
        ));
    }
    let rounds = m.profile.knobs.input_required.value != InputRequired::None;
    if plain_call && rounds && cfg.handler.kind == HandlerKind::EffectOnly {
        let keyed = m.profile.knobs.idempotency_key.value != mcp_once_model::profile::KeyPlacement::None;
        let scope = if keyed { ", outside the idempotency key's scope" } else { "" };
        gaps.push(format!(
            "a tool that asks for input (multi round-trip requests): its handler runs again from the start on \
             every continuation, a new request{scope}; this cell's tool takes its effect and completes in one \
             request. `--handler input-after-effect` (or input-before-effect, input-after-effect-stateful, \
             input-before-effect-single-use) checks \
             such a tool."
        ));
    }
    let several = m.profile.knobs.server_instances.value == mcp_once_model::profile::Instances::Several;
    if plain_call && several && cfg.transport == Transport::Http && cfg.deployment.instances == 1 {
        gaps.push(
            "a server run as several instances behind a load balancer, where a retry may reach another instance \
             than the attempt it retries, even while that attempt runs; this cell's server is one process. \
             `--instances 2` (with `--store shared` or `per-instance`) checks that deployment."
                .into(),
        );
    }
    let k = &m.profile.knobs;
    let (retention, horizon) = (k.idempotency_retention.value, k.retry_horizon.value);
    if cfg.server == ServerImpl::KeyExpiring && !retention.may_expire_before(horizon) {
        gaps.push(format!(
            "a key record that leaves the retention window before a retry arrives: the profile keeps records for \
             {retention} and its clients retry within {horizon} of a call's first request \
             (knobs idempotency_retention and retry_horizon), so no record of this cell expires. A client that \
             retries later than that is outside the profile; a profile with a longer `retry_horizon` checks it."
        ));
    }
    gaps.extend(tasks_gap(m));
    gaps.extend(callers_gap(m));
    gaps
}

/// What a key-store cell leaves out of callers: a second caller presenting the same key, in a
/// cell of one caller under a profile that scopes key records (`--callers 2` checks it), or what
/// the two-caller model leaves out (`callers.rs`).
fn callers_gap(m: &McpModel) -> Option<String> {
    let scoped = m.profile.knobs.idempotency_key_scope.value != mcp_once_model::KeyScope::Unspecified;
    if !m.config.server.uses_keys() || m.config.key == mcp_once_model::KeyLifetime::None {
        return None;
    }
    if m.config.callers == 1 {
        return scoped.then(|| {
            "a second caller presenting the same idempotency key (copied, guessed or derived alike), which a server \
             whose records are not scoped per caller answers with the first caller's result; this cell has one \
             caller. `--callers 2` (with `--key-scope global` or `per-caller`) checks it."
                .into()
        });
    }
    Some(format!(
        "of two callers presenting one key: the same key with different arguments (SEP-3182's conflict rule \
         rejects it; here both callers send the same arguments), a record that leaves its retention window before \
         the other caller presents the key (a record expires as it does for its own caller), and more than two \
         callers. This cell's key records are scoped {}.",
        m.key_scope()
    ))
}

/// What a cell leaves out of tasks, where the profile has them: the task-augmented `tools/call`
/// itself in a cell without `--tasks augmented`, else the parts of tasks the model does not
/// take (`tasks.rs`).
fn tasks_gap(m: &McpModel) -> Option<String> {
    let rule = m.profile.knobs.task_creation.value;
    let what = match rule {
        TaskCreation::None => return None,
        TaskCreation::ReceiverIds => "2025-11-25 `basic/utilities/tasks.mdx`",
        TaskCreation::DurableBeforeResult => "the 2026-07-28 tasks extension, SEP-2663",
    };
    if m.config.tasks == Tasks::None {
        return Some(format!(
            "a task-augmented tools/call ({what}): the server answers `CreateTaskResult` with a task id it \
             generates and runs the tool's effect in the task; a `CreateTaskResult` lost to a timeout, a broken \
             stream or a crash leaves the client no task id to poll, and a retry creates a second task. This \
             cell's tools/call is answered with the tool's own result. `--tasks augmented` checks it."
        ));
    }
    Some(format!(
        "of tasks ({what}): a server that stops a task's work on `tasks/cancel` or resumes it after a restart \
         (here the work runs until it ends or the process dies, and the client never cancels a task), a task \
         purged at its `ttl`, a client that gives up polling, and tasks on several instances. This cell's task \
         records are {} ({}).",
        m.config.task_records,
        match m.config.task_records {
            TaskRecords::Durable => "a poll after a crash finds the task, failed if its work had not completed",
            TaskRecords::Volatile => "a poll after a crash finds no task",
        }
    ))
}

/// The faults of a trace, in words (`a client timeout, a server crash (SIGKILL) and restart`).
pub fn faults(cex: &Counterexample) -> String {
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
    if names.contains(&"SessionTerminated") {
        faults.push("the server ending the HTTP session");
    }
    if names.contains(&"KeyExpires") {
        faults.push("an expired key record");
    }
    if names.contains(&"StepFails") {
        faults.push("a failure of the step around the call");
    }
    if faults.is_empty() {
        "no fault at all".to_string()
    } else {
        faults.join(", ")
    }
}

/// The report's opening paragraph: configuration, faults, outcome.
pub fn summary_paragraph(m: &McpModel, property: TraceKind, cex: &Counterexample) -> String {
    let cfg = &m.config;
    let faults = faults(cex);
    let outcome = match property.judged() {
        PropertyKind::AtMostOnce | PropertyKind::ExactlyOnce => {
            format!("the server executes one logical tool call {} times", cex.effects())
        }
        PropertyKind::NoSilentEffect => {
            "the client reports the call as failed although its side effect happened".into()
        }
        PropertyKind::SuccessImpliesEffect => "the client is told the call succeeded although it never ran".into(),
        PropertyKind::NoForeignReplay => {
            "the server answers one caller's tool call with the result it stored for another caller's request with \
             the same key, and the tool never runs for it"
                .into()
        }
    };
    let breaches: Vec<_> = conformance::cell_breaches(cfg, &m.profile).into_iter().filter(|b| b.binds()).collect();
    let allowed = if breaches.is_empty() {
        "Every step below is allowed by the profile; the rule behind each is cited.".to_string()
    } else {
        let knobs: Vec<String> =
            breaches.iter().map(|b| format!("{} {} of `{}`", b.party(), b.keyword, b.knob)).collect();
        format!(
            "This cell breaks a requirement of the profile ({}), and the steps where that shows are marked; every \
             other step is allowed by the profile, and the rule behind each is cited.",
            knobs.join(", ")
        )
    };
    format!(
        "Under {} over {} transport, a client with policy `{}` (idempotency key: `{}`) talking to a `{}` server: after {faults}, {outcome}. \
         {allowed} This is a shortest such run ({} steps).",
        m.profile.name,
        cfg.transport,
        cfg.client,
        cfg.key,
        cfg.server,
        cex.len()
    )
}

/// `n` with the singular or plural noun: `1 call`, `2 calls`, `0 crashes`.
fn count(n: u8, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}
