//! The README's command examples, as the tests that run them read them: the fenced `sh`
//! blocks' lines (continuations joined) and the inline `mcp-once SUBCOMMAND ...` spans of the
//! prose, in the README's order.

/// The subcommands an inline example may start with.
const COMMANDS: &[&str] = &[
    "check", "matrix", "merge", "diff", "explain", "explore", "profiles", "fixture", "fixtures", "replay", "probe",
    "confirm", "bench",
];

/// The commands of the README's fenced `sh` blocks (continuation lines joined) and of its
/// inline code spans, in order.
pub fn examples(readme: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fence: Option<bool> = None;
    let mut pending = String::new();
    let mut prose = String::new();
    for line in readme.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            fence = match fence {
                None => {
                    out.extend(inline(&prose));
                    prose.clear();
                    Some(info.trim() == "sh")
                }
                Some(_) => None,
            };
            continue;
        }
        match fence {
            Some(true) => {
                let joined = format!("{pending}{}", line.trim_start());
                if let Some(head) = joined.strip_suffix('\\') {
                    pending = format!("{} ", head.trim_end());
                    continue;
                }
                pending.clear();
                if joined.starts_with("mcp-once ") {
                    out.push(joined);
                }
            }
            Some(false) => {}
            None => {
                prose.push_str(line);
                prose.push(' ');
            }
        }
    }
    out.extend(inline(&prose));
    out
}

/// The inline code spans of `prose` that are commands (`mcp-once SUBCOMMAND ...`).
fn inline(prose: &str) -> Vec<String> {
    let spans = prose.split('`').skip(1).step_by(2);
    spans
        .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|s| {
            let mut words = s.split(' ');
            words.next() == Some("mcp-once") && words.next().is_some_and(|w| COMMANDS.contains(&w))
        })
        .collect()
}
