//! Path redaction for reports meant to be pasted elsewhere: every absolute path of the machine
//! (the trace, the evidence folder, the server command's arguments, the home folder, the
//! working folder, the temp folder) becomes a short placeholder. The text is read as Markdown:
//! in code (fenced blocks, inline spans) a placeholder stays as it is; in prose it is written
//! as inline code (a bare `<tmp>` would be an HTML tag); quoted text (a spec's sentence between
//! double quotes) and link targets are left alone but for the machine's own folders.

use std::path::Path;

/// Replaces the machine's absolute paths in a text by placeholders (or keeps them).
pub struct Redactor {
    /// Known folders, longest first, with their placeholders.
    named: Vec<(String, String)>,
    /// Keep every path as it is (`--keep-paths`).
    keep: bool,
}

/// Characters after which a `/` starts an absolute path.
const BEFORE: &[char] = &[' ', '\t', '\n', '"', '\'', '`', '(', '[', '=', ':', ','];

/// Characters that end a path.
const AFTER: &[char] = &[' ', '\t', '\n', '"', '\'', '`', ')', ']', ',', ';', '|', '<', '>', '\\', '*'];

impl Redactor {
    /// A redactor that knows the trace file and the evidence folder by name (`<traces>`,
    /// `<evidence>`), the fixtures (`<fixtures>`), the working folder (`.`), the temp folder
    /// (`<tmp>`) and the home folder (`~`); any other absolute path becomes `<path>/NAME`.
    /// With `keep`, nothing is replaced.
    pub fn new(keep: bool, trace: &Path, evidence: Option<&Path>) -> Redactor {
        let mut named = Vec::new();
        let mut add = |p: Option<&Path>, to: &str| {
            let Some(p) = p else { return };
            for form in [std::path::absolute(p).ok(), p.canonicalize().ok()].into_iter().flatten() {
                let s = form.display().to_string();
                if s.len() > 1 {
                    named.push((s.trim_end_matches('/').to_string(), to.to_string()));
                }
            }
        };
        add(evidence, "<evidence>");
        add(trace.parent(), "<traces>");
        add(Some(&std::env::temp_dir()), "<tmp>");
        add(std::env::current_dir().ok().as_deref(), ".");
        add(std::env::var_os("HOME").map(std::path::PathBuf::from).as_deref(), "~");
        named.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
        named.dedup();
        Redactor { named, keep }
    }

    /// The text with every absolute path replaced (unchanged with `keep`), read as Markdown.
    pub fn apply(&self, text: &str) -> String {
        if self.keep {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len());
        let mut fenced = false;
        for line in text.split_inclusive('\n') {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                out.push_str(line);
            } else if fenced {
                out.push_str(&map_paths(line, |_, t| self.shorten(t)));
            } else {
                out.push_str(&self.prose(line));
            }
        }
        out
    }

    /// A line of prose: inline code spans as code, the rest as [`Redactor::unquoted`] and
    /// quoted text (between double quotes) with only the machine's folders replaced.
    fn prose(&self, line: &str) -> String {
        let mut out = String::with_capacity(line.len());
        for (i, span) in line.split('`').enumerate() {
            if i > 0 {
                out.push('`');
            }
            if i % 2 == 1 {
                out.push_str(&map_paths(span, |_, t| self.shorten(t)));
                continue;
            }
            for (j, part) in span.split('"').enumerate() {
                if j > 0 {
                    out.push('"');
                }
                match j % 2 {
                    1 => out.push_str(&map_paths(part, |_, t| self.machine(t).map(|p| format!("`{p}`")))),
                    _ => out.push_str(&self.unquoted(part)),
                }
            }
        }
        out
    }

    /// Prose outside code and quotes: a link target (after `](`) keeps all but the machine's
    /// folders; any other path becomes its placeholder as inline code.
    fn unquoted(&self, text: &str) -> String {
        map_paths(text, |before, token| {
            if before.ends_with("](") {
                return self.machine(token).map(|p| format!("`{p}`"));
            }
            // A sentence's full stop is not part of the path.
            let (path, stop) = token.strip_suffix('.').map_or((token, ""), |p| (p, "."));
            self.shorten(path).map(|p| format!("`{p}`{stop}"))
        })
    }

    /// The placeholder of a path under one of the machine's known folders, or None.
    fn machine(&self, token: &str) -> Option<String> {
        self.named.iter().find_map(|(path, to)| {
            let tail = token.strip_prefix(path.as_str())?;
            (tail.is_empty() || tail.starts_with('/')).then(|| format!("{to}{tail}"))
        })
    }

    /// The placeholder form of an absolute path, or None when `token` is not one (a URL's
    /// `//`, a lone `/mcp`).
    fn shorten(&self, token: &str) -> Option<String> {
        if token.starts_with("//") || token.len() < 2 {
            return None;
        }
        // The fixtures first: a reader can find them in the project by that name.
        if let Some((_, tail)) = token.split_once("/conformance/fixtures/") {
            return Some(format!("<fixtures>/{tail}"));
        }
        if let Some(short) = self.machine(token) {
            return Some(short);
        }
        let trimmed = token.trim_end_matches('/');
        if trimmed[1..].contains('/') {
            let name = trimmed.rsplit('/').next().unwrap_or_default();
            return Some(format!("<path>/{name}"));
        }
        None
    }
}

/// `text` with each absolute path (a `/` at the start or after one of [`BEFORE`], up to one of
/// [`AFTER`]) replaced by what `f` gives for it (given the text before it and the path); a
/// path `f` gives nothing for stays.
pub fn map_paths(text: &str, mut f: impl FnMut(&str, &str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        if c == '/' && prev.is_none_or(|p| BEFORE.contains(&p)) {
            let end = rest.find(AFTER).unwrap_or(rest.len());
            let token = &rest[..end];
            if let Some(short) = f(&text[..text.len() - rest.len()], token) {
                out.push_str(&short);
                prev = token.chars().last();
                rest = &rest[end..];
                continue;
            }
        }
        out.push(c);
        prev = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_folders_fixtures_and_other_paths_get_placeholders() {
        let r = Redactor {
            named: vec![("/data/run/evidence".into(), "<evidence>".into()), ("/home/u".into(), "~".into())],
            keep: false,
        };
        let text =
            "`stdio: node /srv/x/conformance/fixtures/typescript/server.mjs --ledger /data/run/evidence/l.jsonl`";
        assert_eq!(r.apply(text), "`stdio: node <fixtures>/typescript/server.mjs --ledger <evidence>/l.jsonl`");
        assert_eq!(r.apply("ledger:/opt/a/b.jsonl and `/home/u/t`"), "ledger:`<path>/b.jsonl` and `~/t`");
        assert_eq!(r.apply("http://127.0.0.1:1/mcp, tools/call, /mcp"), "http://127.0.0.1:1/mcp, tools/call, /mcp");
        assert_eq!(r.apply("`/home/user2/x`"), "`<path>/x`", "a prefix is a folder, not a string");
        assert_eq!(r.apply("```json\n{\"ledger\":\"/home/u/l\"}\n```\n"), "```json\n{\"ledger\":\"~/l\"}\n```\n");
    }

    #[test]
    fn quoted_spec_text_and_links_stay_and_placeholders_in_prose_are_code() {
        let r = Redactor { named: vec![("/tmp".into(), "<tmp>".into())], keep: false };
        let quote = r#"§ Timeouts: "the sender **SHOULD** issue a [cancellation notification](/specification/2025-11-25/basic/utilities/cancellation) for that request""#;
        assert_eq!(r.apply(quote), quote, "a quoted spec sentence is left as it is");
        let link = "see [the spec](/specification/draft/basic) and [a file](/tmp/x/l.jsonl)";
        assert_eq!(r.apply(link), "see [the spec](/specification/draft/basic) and [a file](`<tmp>/x/l.jsonl`)");
        assert_eq!(r.apply("counted by ledger /tmp/x/l.jsonl."), "counted by ledger `<tmp>/x/l.jsonl`.");
        assert_eq!(r.apply("the server /opt/s/server.py ran"), "the server `<path>/server.py` ran");
    }

    #[test]
    fn keep_keeps_everything() {
        let r = Redactor { named: vec![], keep: true };
        assert_eq!(r.apply("/a/b/c"), "/a/b/c");
    }
}
