//! Path redaction for reports meant to be pasted elsewhere: every absolute path of the machine
//! (the trace, the evidence folder, the server command's arguments, the home folder, the
//! working folder, the temp folder) becomes a short placeholder.

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

    /// The text with every absolute path replaced (unchanged with `keep`).
    pub fn apply(&self, text: &str) -> String {
        if self.keep {
            return text.to_string();
        }
        map_paths(text, |token| self.shorten(token))
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
        for (path, to) in &self.named {
            if let Some(tail) = token.strip_prefix(path.as_str()) {
                if tail.is_empty() || tail.starts_with('/') {
                    return Some(format!("{to}{tail}"));
                }
            }
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
/// [`AFTER`]) replaced by what `f` gives for it; a path `f` gives nothing for stays.
pub fn map_paths(text: &str, mut f: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut prev: Option<char> = None;
    while let Some(c) = rest.chars().next() {
        if c == '/' && prev.is_none_or(|p| BEFORE.contains(&p)) {
            let end = rest.find(AFTER).unwrap_or(rest.len());
            let token = &rest[..end];
            if let Some(short) = f(token) {
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
        let text = "stdio: node /srv/x/conformance/fixtures/typescript/server.mjs --ledger /data/run/evidence/l.jsonl";
        assert_eq!(r.apply(text), "stdio: node <fixtures>/typescript/server.mjs --ledger <evidence>/l.jsonl");
        assert_eq!(r.apply("ledger:/opt/a/b.jsonl and `/home/u/t`"), "ledger:<path>/b.jsonl and `~/t`");
        assert_eq!(r.apply("http://127.0.0.1:1/mcp, tools/call, /mcp"), "http://127.0.0.1:1/mcp, tools/call, /mcp");
        assert_eq!(r.apply("/home/user2/x"), "<path>/x", "a prefix is a folder, not a string");
    }

    #[test]
    fn keep_keeps_everything() {
        let r = Redactor { named: vec![], keep: true };
        assert_eq!(r.apply("/a/b/c"), "/a/b/c");
    }
}
