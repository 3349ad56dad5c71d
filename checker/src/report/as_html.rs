//! The HTML format: one self-contained page (no script, nothing fetched) of `check`'s and
//! `matrix`'s cells, or of `confirm`'s replays. A verdict grid per profile, with the shortest
//! length of each counterexample; a violated verdict links to its trace (an SVG sequence
//! diagram, `svg.rs`, the command that checks it and the trace file if one was written) and,
//! for `confirm`, to each replay's verdict and evidence. A trace is shown when its link is
//! followed (CSS `:target`), so the page works opened from disk.

use crate::cells::{cell_name, Cell, Checked};
use crate::confirm::Confirmation;
use crate::report::markdown::not_covered;
use crate::report::render::{Kind, Renderer, Report};
use crate::report::sequence::sequence;
use crate::report::svg::{escape, sequence_svg};
use anyhow::{anyhow, Result};
use mcp_once_model::search::{Counterexample, WorstSearch};
use mcp_once_model::trace::TraceKind;
use mcp_once_model::{conformance, McpModel, PropertyKind, Verdict};
use std::fmt::Write;
use std::path::Path;

/// HTML, one page.
pub struct AsHtml;

impl Renderer for AsHtml {
    fn supports(&self, kind: Kind) -> bool {
        match kind {
            Kind::Check | Kind::Matrix | Kind::Confirm => true,
            Kind::Merge | Kind::Diff | Kind::Replay | Kind::Probe | Kind::ProbeClient | Kind::Bench => false,
        }
    }

    fn render(&self, report: &Report<'_>) -> Result<String> {
        Ok(match report {
            Report::Cell { cell, .. } => page("mcp-once check", std::slice::from_ref(*cell), None),
            Report::ProfileMatrix { cells, .. } => page("mcp-once check", cells, None),
            Report::Matrix { cells, .. } => page("mcp-once matrix", cells, None),
            Report::Confirm { results, evidence, cells } => {
                page("mcp-once confirm", cells, Some(Replays { results, evidence }))
            }
            other => return Err(anyhow!("no HTML for {:?}", other.kind())),
        })
    }
}

/// `confirm`'s replays, shown beside the traces they replayed.
struct Replays<'a> {
    results: &'a [Confirmation],
    evidence: &'a Path,
}

impl Replays<'_> {
    /// The replays of one trace, in the order they ran.
    fn of<'b>(&'b self, cell: &'b str, kind: TraceKind) -> impl Iterator<Item = &'b Confirmation> + 'b {
        self.results.iter().filter(move |r| r.cell == cell && r.property == kind)
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}\
table.grid{border-collapse:collapse;margin:.5em 0 1em}\
.grid th,.grid td{border:1px solid #ccd;padding:.25em .5em;text-align:left;vertical-align:top}\
.grid th{background:#eef2f7}\
td.violated{background:#fde2e1}td.holds{background:#e3f5e1}td.na,td.unknown{background:#f2f2f2;color:#666}\
td a{color:#a00;font-weight:bold}\
.trace{display:none;border:2px solid #556;padding:0 1em 1em;margin:1em 0}\
.trace:target{display:block}\
.replay{font-size:.9em}.confirmed{color:#a00}.not-reproduced,.ran{color:#070}\
code{background:#f4f4f4;padding:0 .2em}svg{max-width:100%;height:auto;font-size:12px}";

/// The anchor of one trace of one cell.
fn anchor(cell: &str, kind: TraceKind) -> String {
    format!("{cell}--{kind}")
}

/// The whole page: a grid per profile (in the order the cells come), then every trace.
fn page(title: &str, cells: &[Cell], replays: Option<Replays<'_>>) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>{STYLE}</style></head><body>\n<h1>{title}</h1>\n"
    );
    out.push_str(&headline(cells, replays.as_ref()));
    let mut profiles: Vec<&str> = Vec::new();
    for c in cells {
        if !profiles.contains(&c.config.profile.as_str()) {
            profiles.push(&c.config.profile);
        }
    }
    for profile in profiles {
        let mine: Vec<&Cell> = cells.iter().filter(|c| c.config.profile == profile).collect();
        let _ = writeln!(out, "<h2>{}</h2>", escape(profile));
        out.push_str(&grid(&mine, replays.as_ref()));
        let mut gaps: Vec<String> = Vec::new();
        for c in &mine {
            if let Ok(checked) = &c.outcome {
                // The mechanism, without the sentence on the cell's own server or tool (hover a
                // `holds` for that cell's).
                for gap in not_covered(&checked.model) {
                    let gap = gap.split("; this cell's").next().unwrap_or_default().to_string();
                    if !gaps.contains(&gap) {
                        gaps.push(gap);
                    }
                }
            }
        }
        if !gaps.is_empty() {
            out.push_str("<p>What these verdicts do not cover:</p><ul>");
            for gap in gaps {
                let _ = write!(out, "<li>{}</li>", escape(&gap));
            }
            out.push_str("</ul>\n");
        }
    }
    out.push_str(LEGEND);
    for c in cells {
        out.push_str(&traces(c, replays.as_ref()));
    }
    let _ = writeln!(
        out,
        "<p><small>Written by mcp-once {}: exhaustive breadth-first search within each cell's bounds; every trace is a shortest one.</small></p></body></html>",
        env!("CARGO_PKG_VERSION")
    );
    out
}

const LEGEND: &str = "<p>✗ s/e: violated, shortest counterexample of s steps reaching e side effects for one logical call (follow it for the trace); holds: no trace within the cell's bounds; n/a: the configuration does not apply under the profile (hover for why); unknown: the search stopped at its budget. The worst column is the most effects one call reached. †: the cell's server breaks a MUST of its profile by what it is (hover for which); a trace lists the steps that break a MUST or go against a SHOULD.</p>\n";

/// Counts of the page, in one paragraph.
fn headline(cells: &[Cell], replays: Option<&Replays<'_>>) -> String {
    let checked = cells.iter().filter(|c| c.outcome.is_ok()).count();
    let violated = cells.iter().filter(|c| c.outcome.as_ref().is_ok_and(|k| k.any_violated())).count();
    let mut out = format!(
        "<p>{} cells: {checked} checked, {violated} with a violated property, {} not applicable.",
        cells.len(),
        cells.len() - checked
    );
    if let Some(r) = replays {
        let confirmed = r.results.iter().filter(|x| x.verdict.as_str() == "confirmed").count();
        let _ = write!(
            out,
            " {} replays, {confirmed} confirmed; evidence in <code>{}</code>.",
            r.results.len(),
            escape(&r.evidence.display().to_string())
        );
    }
    out.push_str("</p>\n");
    out
}

/// One profile's grid: a row per cell, a column per property, then the worst case.
fn grid(cells: &[&Cell], replays: Option<&Replays<'_>>) -> String {
    let mut out = String::from(
        "<table class=\"grid\"><tr><th>transport</th><th>client</th><th>key</th><th>server</th><th>bounds</th>",
    );
    // `no-foreign-replay` has a column only where a cell has two callers (checks it).
    let checked = |p: PropertyKind| {
        cells.iter().any(|c| c.outcome.as_ref().is_ok_and(|k| k.results.iter().any(|r| r.property == p)))
    };
    let shown: Vec<PropertyKind> =
        PropertyKind::ALL.iter().copied().filter(|p| *p != PropertyKind::NoForeignReplay || checked(*p)).collect();
    for p in &shown {
        let _ = write!(out, "<th>{p}</th>");
    }
    out.push_str("<th>worst</th></tr>\n");
    for c in cells {
        let cfg = &c.config;
        let name = cell_name(cfg);
        let mut server = escape(&cfg.server.to_string());
        if let Some(cancel) = cfg.cancel {
            let _ = write!(server, " --cancel {cancel}");
        }
        let _ = write!(server, "{}", escape(&cfg.handler.to_string()));
        if cfg.deployment.instances > 1 {
            let _ = write!(server, " ×{}", cfg.deployment.instances);
        }
        if let Ok(checked) = &c.outcome {
            let musts: Vec<String> = conformance::cell_breaches(cfg, &checked.model.profile)
                .iter()
                .filter(|b| b.binds())
                .map(|b| b.knob.to_string())
                .collect();
            if !musts.is_empty() {
                let _ = write!(server, " <span title=\"breaks a MUST of the profile: {}\">†</span>", musts.join(", "));
            }
        }
        let b = cfg.bounds;
        let _ = write!(
            out,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>c{}r{}k{}</td>",
            escape(&name),
            cfg.transport,
            cfg.client,
            cfg.key,
            server,
            b.calls,
            b.retries,
            b.crashes
        );
        match &c.outcome {
            Err(why) => {
                let why = escape(&why.to_string());
                for _ in 0..=shown.len() {
                    let _ = write!(out, "<td class=\"na\" title=\"{why}\">n/a</td>");
                }
            }
            Ok(checked) => {
                for p in &shown {
                    let kind = TraceKind::Counterexample(*p);
                    let td = match checked.results.iter().find(|r| r.property == *p) {
                        None => "<td>-</td>".to_string(),
                        Some(r) => match (&r.verdict, &r.counterexample) {
                            (Verdict::Violated, Some(cex)) => violated_td(&name, kind, cex, replays),
                            (Verdict::Violated, None) => "<td class=\"violated\">✗</td>".into(),
                            (Verdict::Holds, _) => holds_td(checked),
                            (Verdict::Unknown, _) => "<td class=\"unknown\">unknown</td>".into(),
                        },
                    };
                    out.push_str(&td);
                }
                let worst = &checked.worst;
                let partial = match worst.search {
                    WorstSearch::Partial => "≥",
                    WorstSearch::Exhaustive | WorstSearch::NotSearched => "",
                };
                match &worst.trace {
                    Some(_) if worst.effects > 1 => {
                        let _ = write!(
                            out,
                            "<td class=\"violated\"><a href=\"#{}\">{partial}{}</a>{}</td>",
                            escape(&anchor(&name, TraceKind::WorstCase)),
                            worst.effects,
                            badges(&name, TraceKind::WorstCase, replays)
                        );
                    }
                    _ => {
                        let _ = write!(out, "<td>{partial}{}</td>", worst.effects);
                    }
                }
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    out
}

/// A `holds`, with what that cell's verdict does not cover on hover.
fn holds_td(checked: &Checked) -> String {
    let gaps = not_covered(&checked.model);
    if gaps.is_empty() {
        return "<td class=\"holds\">holds</td>".into();
    }
    format!("<td class=\"holds\" title=\"does not cover: {}\">holds</td>", escape(&gaps.join(" ")))
}

fn violated_td(cell: &str, kind: TraceKind, cex: &Counterexample, replays: Option<&Replays<'_>>) -> String {
    format!(
        "<td class=\"violated\"><a href=\"#{}\">✗ {}/{}</a>{}</td>",
        escape(&anchor(cell, kind)),
        cex.actions.len(),
        cex.effects(),
        badges(cell, kind, replays)
    )
}

/// The replays of a trace, one word per SDK, under its verdict in the grid.
fn badges(cell: &str, kind: TraceKind, replays: Option<&Replays<'_>>) -> String {
    let Some(r) = replays else { return String::new() };
    let mut out = String::new();
    for x in r.of(cell, kind) {
        let v = x.verdict.as_str();
        let _ = write!(out, "<br><span class=\"replay {v}\">{}: {v}</span>", escape(&x.sdk));
    }
    out
}

/// The hidden sections of one cell's traces (each shown when its link is followed).
fn traces(c: &Cell, replays: Option<&Replays<'_>>) -> String {
    let Ok(checked) = &c.outcome else { return String::new() };
    let name = cell_name(&c.config);
    let mut out = String::new();
    let mut with_trace: Vec<(TraceKind, &Counterexample)> = checked
        .results
        .iter()
        .filter_map(|r| Some((TraceKind::Counterexample(r.property), r.counterexample.as_ref()?)))
        .collect();
    if let Some(t) = checked.worst.trace.as_ref().filter(|_| checked.worst.effects > 1) {
        with_trace.push((TraceKind::WorstCase, t));
    }
    for (kind, cex) in with_trace {
        let what = match kind {
            TraceKind::Counterexample(p) => format!("{p} violated: {}", p.meaning()),
            TraceKind::WorstCase => format!("{} side effects for one logical call", cex.effects()),
        };
        let _ = write!(
            out,
            "<section class=\"trace\" id=\"{}\"><h3>{}: {}</h3><p>Shortest trace: {} steps, {} effect(s) for one logical call. Check it: <code>mcp-once check {}</code>. <a href=\"#{}\">Back to the grid</a>.</p>",
            escape(&anchor(&name, kind)),
            escape(&name),
            escape(&what),
            cex.actions.len(),
            cex.effects(),
            escape(&c.config.to_string()),
            escape(&name)
        );
        out.push_str(&sequence_svg(&sequence(cex), &anchor(&name, kind)));
        out.push_str(&step_breaches(&checked.model, cex));
        if let Some(file) = checked.files.get(kind) {
            let _ = write!(out, "<p>Trace file: {}</p>", link(file));
        }
        if let Some(r) = replays {
            out.push_str(&replay_list(r, &name, kind));
        }
        out.push_str("</section>\n");
    }
    out
}

/// The steps of a trace that go against a rule of the profile: a MUST broken, or a SHOULD
/// gone against, each with the clause's own words.
fn step_breaches(model: &McpModel, cex: &Counterexample) -> String {
    let mut items = String::new();
    for i in 0..cex.actions.len() {
        for b in conformance::breaches_at(model, &cex.states, &cex.actions, i) {
            let what =
                if b.binds() { format!("breaks a {}", b.keyword) } else { format!("goes against a {}", b.keyword) };
            let _ = write!(items, "<li>step {}: {what} ({}): {}</li>", i + 1, b.knob, escape(&b.what));
        }
    }
    if items.is_empty() {
        return String::new();
    }
    format!("<ul class=\"breaches\">{items}</ul>")
}

/// The replays of one trace with their verdicts, reasons and evidence files.
fn replay_list(r: &Replays<'_>, cell: &str, kind: TraceKind) -> String {
    let mut out = String::from("<h4>Replays</h4><ul class=\"replays\">");
    let mut any = false;
    for x in r.of(cell, kind) {
        any = true;
        let v = x.verdict.as_str();
        let _ = write!(
            out,
            "<li class=\"replay {v}\" data-sdk=\"{}\" data-verdict=\"{v}\"><b>{}</b>: {v}: {}",
            escape(&x.sdk),
            escape(&x.sdk),
            escape(&x.reason)
        );
        if let Some(dir) = &x.evidence {
            out.push_str("<br>evidence: ");
            let files = ["evidence/result.json", "evidence/evidence.jsonl", "evidence/trace.itf.json"];
            let mut links = vec![link(dir)];
            links.extend(files.iter().map(|f| dir.join(f)).filter(|p| p.exists()).map(|p| link(&p)));
            out.push_str(&links.join(", "));
        }
        out.push_str("</li>");
    }
    if !any {
        out.push_str("<li>not replayed</li>");
    }
    out.push_str("</ul>");
    out
}

/// A link to a file or folder, as written (relative paths resolve from where the page is).
fn link(path: &Path) -> String {
    let shown = path.display().to_string();
    let href: String = shown
        .chars()
        .map(|c| match c {
            ' ' => "%20".to_string(),
            '#' => "%23".to_string(),
            '?' => "%3F".to_string(),
            '%' => "%25".to_string(),
            c => c.to_string(),
        })
        .collect();
    let href = if path.is_absolute() { format!("file://{href}") } else { href };
    format!("<a class=\"file\" href=\"{}\">{}</a>", escape(&href), escape(&shown))
}
