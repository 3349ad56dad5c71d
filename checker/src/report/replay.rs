//! The "replay on a real server" section of an issue report, from a replay's evidence folder.

use serde_json::Value;

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
            Event::CrashPoint { attempt, method, response_written } => {
                let written =
                    if *response_written { "had been written (treated as lost)" } else { "never left the server" };
                let how = serde_json::to_value(method)?;
                format!("crash point, {attempt}: {}, the response {written}", how.as_str().unwrap_or("?"))
            }
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
