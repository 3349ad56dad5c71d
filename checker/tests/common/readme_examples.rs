//! The README's command examples, as the tests that run them read them: the fenced `sh`
//! blocks' lines (continuations joined) and the inline `mcp-once SUBCOMMAND ...` spans of the
//! prose, in the README's order, each with the words the README says about it.

#![allow(dead_code)] // each test that includes this module uses part of it

/// The subcommands an inline example may start with.
const COMMANDS: &[&str] = &[
    "check", "matrix", "merge", "diff", "explain", "explore", "profiles", "fixture", "fixtures", "replay", "probe",
    "confirm", "bench",
];

/// One example and what the README says of it.
#[derive(Clone, Debug)]
pub struct Example {
    /// The command, as written (a fenced line's comment after it included).
    pub command: String,
    /// The README's words about it: in a fenced block, the comment lines just above it (since
    /// the block's previous command) and the comment after it on its line; in the prose, the
    /// clause before the span (from the last `, `, `; ` or `. `) and the one after it (to the
    /// first `;`, `)` or `. `), neither reaching into another code span.
    pub statement: String,
}

/// The commands of the README's fenced `sh` blocks (continuation lines joined) and of its
/// inline code spans, in order.
pub fn examples(readme: &str) -> Vec<String> {
    examples_with_statements(readme).into_iter().map(|e| e.command).collect()
}

/// [`examples`], each with its [`Example::statement`].
pub fn examples_with_statements(readme: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut fence: Option<bool> = None;
    let (mut pending, mut prose, mut comment) = (String::new(), String::new(), String::new());
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
            comment.clear();
            continue;
        }
        match fence {
            Some(true) => {
                if let Some(c) = line.trim_start().strip_prefix('#') {
                    comment.push_str(c.trim());
                    comment.push(' ');
                    continue;
                }
                let joined = format!("{pending}{}", line.trim_start());
                if let Some(head) = joined.strip_suffix('\\') {
                    pending = format!("{} ", head.trim_end());
                    continue;
                }
                pending.clear();
                if joined.starts_with("mcp-once ") {
                    let after = joined.split_once("  #").map_or("", |(_, c)| c.trim());
                    out.push(Example { statement: format!("{comment}{after}").trim().to_string(), command: joined });
                }
                comment.clear();
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

/// The inline code spans of `prose` that are commands (`mcp-once SUBCOMMAND ...`), each with
/// the clauses around it.
fn inline(prose: &str) -> Vec<Example> {
    let parts: Vec<&str> = prose.split('`').collect();
    let mut out = Vec::new();
    for i in (1..parts.len()).step_by(2) {
        let command = parts[i].split_whitespace().collect::<Vec<_>>().join(" ");
        let mut words = command.split(' ');
        if words.next() != Some("mcp-once") || !words.next().is_some_and(|w| COMMANDS.contains(&w)) {
            continue;
        }
        let before = parts[i - 1];
        let start = [", ", "; ", ". "].iter().filter_map(|s| before.rfind(s).map(|at| at + s.len())).max().unwrap_or(0);
        let after = parts.get(i + 1).copied().unwrap_or("");
        let end = [";", ")", ". "].iter().filter_map(|s| after.find(s)).min().unwrap_or(after.len());
        let statement = format!("{} {}", before[start..].trim(), after[..end].trim());
        out.push(Example { command, statement: statement.split_whitespace().collect::<Vec<_>>().join(" ") });
    }
    out
}
