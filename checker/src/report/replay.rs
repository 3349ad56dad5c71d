//! The "replay on a real server" section of an issue report, from a replay's evidence folder.

use serde_json::Value;

/// Frames shown in a report's wire log (the full log stays in the evidence file).
const REPORT_FRAMES: usize = 80;

/// The "replay on a real server" section of an issue report, from a replay's evidence folder
/// (`result.json` and `evidence.jsonl`, as `mcp-once replay --evidence DIR` writes them).
pub fn replay_markdown(dir: &std::path::Path) -> anyhow::Result<String> {
    use anyhow::Context;
    let result_path = dir.join("result.json");
    let result: Value = serde_json::from_str(
        &std::fs::read_to_string(&result_path).with_context(|| format!("{}: cannot read", result_path.display()))?,
    )
    .with_context(|| format!("{}: not JSON", result_path.display()))?;
    let log_path = dir.join(mcp_once_conformance::replay::evidence::EVIDENCE_FILE);
    let log = std::fs::read_to_string(&log_path).with_context(|| format!("{}: cannot read", log_path.display()))?;
    let mut records = Vec::new();
    for (i, line) in log.lines().enumerate() {
        // A run killed mid-write may leave a torn last line; anything else must parse.
        match serde_json::from_str::<Value>(line) {
            Ok(v) => records.push(v),
            Err(_) if i + 1 == log.lines().count() => {}
            Err(e) => anyhow::bail!("{}:{}: not JSON: {e}", log_path.display(), i + 1),
        }
    }
    let s =
        |k: &str| result.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).unwrap_or_default();
    let mut out = String::new();
    out.push_str("\n## Replay on a real server\n\n");
    out.push_str(&format!("**Verdict: {}.** {}\n\n", s("verdict"), s("reason")));
    out.push_str(&format!("- Server: `{}` (protocol revision {})\n", s("target"), s("revision")));
    out.push_str(&format!(
        "- Effects: expected {}, observed {} (observer: {})\n",
        s("expected_effects"),
        s("observed_effects"),
        s("observer")
    ));
    if let Some(n) = result.get("settled_effects").filter(|v| !v.is_null()) {
        out.push_str(&format!("- Effects after the server stopped: {n}\n"));
    }
    out.push_str(&format!("- Evidence: `{}` ({} records)\n\n", log_path.display(), records.len()));
    if let Some(steps) = result.get("steps").and_then(Value::as_array).filter(|s| !s.is_empty()) {
        out.push_str("| # | step | status | ms | what the runner saw or did |\n|---|---|---|---|---|\n");
        for st in steps {
            let g = |k: &str| {
                st.get(k).map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string)).unwrap_or_default()
            };
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                g("step"),
                g("action"),
                g("status"),
                g("t_ms"),
                g("note").replace('|', "\\|")
            ));
        }
        out.push('\n');
    }
    for n in result.get("notes").and_then(Value::as_array).into_iter().flatten() {
        out.push_str(&format!("- Note: {}\n", n.as_str().unwrap_or_default()));
    }
    out.push_str("\n<details><summary>Wire log (JSON-RPC frames both ways, process events)</summary>\n\n```text\n");
    let mut shown = 0;
    for r in &records {
        let t = r.get("t_ms").and_then(Value::as_f64).unwrap_or(0.0);
        let line = match r.get("kind").and_then(Value::as_str) {
            Some("frame") => {
                let arrow = if r["dir"] == "out" { "client -> server" } else { "server -> client" };
                let body = r
                    .get("frame")
                    .map(Value::to_string)
                    .or_else(|| r.get("text").and_then(Value::as_str).map(str::to_string))
                    .unwrap_or_default();
                format!("{arrow} [{}] {body}", r["channel"].as_str().unwrap_or(""))
            }
            Some("process") => format!(
                "process {} {}",
                r["event"].as_str().unwrap_or(""),
                r.get("pid").map(Value::to_string).unwrap_or_default()
            ),
            Some("observe") => format!("observer reads {}", r["reading"]),
            _ => continue,
        };
        if shown == REPORT_FRAMES {
            out.push_str(&format!("... (the rest is in {})\n", log_path.display()));
            break;
        }
        shown += 1;
        out.push_str(&format!("{t:>9.1} ms  {line}\n"));
    }
    out.push_str("```\n\n</details>\n");
    Ok(out)
}
