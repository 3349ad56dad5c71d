//! Observers: how the runner counts side effects. A ledger file (lines, optionally only those
//! whose JSON field has a value), a command that prints a number, or a call of a tool on the
//! server whose result yields a number (a JSON pointer into its structured content, or a regex
//! over its text). A reading is a number; `step` says how much it moves per effect (1 for a
//! count, -42 for a balance that drops by 42), so effects = (reading - baseline) / step.

use regex::Regex;
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// Where the observer reads from.
#[derive(Clone, Debug)]
pub enum Source {
    /// Count complete JSON lines of a ledger file; with a filter, only lines whose top-level
    /// `field` equals `value`.
    Ledger {
        /// The ledger file.
        path: PathBuf,
        /// Optional (field, value) filter.
        filter: Option<(String, Value)>,
    },
    /// Run a command (argv, no shell) that prints one number.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
    },
    /// Call a tool on the server under test and take a number from its result.
    Tool {
        /// Tool name.
        name: String,
        /// Its arguments.
        args: Value,
        /// How to find the number in the result.
        extract: Extract,
    },
}

/// How a number is taken from a tool result.
#[derive(Clone, Debug)]
pub enum Extract {
    /// A JSON pointer into `structuredContent`.
    Pointer(String),
    /// The first capture group (or the whole match) of a regex over the text content.
    Regex(Regex),
}

/// An observer: a source and how its reading moves per effect.
#[derive(Clone, Debug)]
pub struct Observer {
    /// Where readings come from.
    pub source: Source,
    /// How much a reading moves per effect (never 0).
    pub step: f64,
}

/// Why an observer could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ObserverError {
    /// Not `KIND:REST`.
    #[error("`{0}` is not ledger:PATH, cmd:COMMAND, sh:SCRIPT or tool:NAME[:SELECTOR]")]
    NoKind(String),
    /// A kind this runner does not know.
    #[error("unknown observer `{0}` (ledger, cmd, sh or tool)")]
    UnknownKind(String),
    /// `ledger:` with no path.
    #[error("ledger: needs a path")]
    NoPath,
    /// `sh:` with no script.
    #[error("sh: needs a script")]
    NoScript,
    /// `cmd:` whose command line does not split.
    #[error("cmd: {0}")]
    Command(#[from] crate::replay::process::CommandLineError),
    /// `tool:` with no tool name.
    #[error("tool: needs a tool name")]
    NoToolName,
    /// A tool selector that is neither a JSON pointer nor `re:REGEX`.
    #[error("tool selector `{0}` is neither a JSON pointer (/…) nor re:REGEX")]
    BadSelector(String),
    /// `re:REGEX` that does not compile.
    #[error("bad regex `{re}`: {why}")]
    BadRegex {
        /// The pattern.
        re: String,
        /// What the regex compiler said.
        why: String,
    },
    /// A step of zero (or not a number): readings could never be turned into effects.
    #[error("the step must be a non-zero number, not {0}")]
    BadStep(f64),
}

impl Source {
    /// Parse `ledger:PATH`, `cmd:COMMAND` (split into argv, no shell), `sh:SCRIPT` (run by
    /// `sh -c`, for pipes and redirections) or `tool:NAME[:SELECTOR]` (SELECTOR: a JSON pointer
    /// starting with `/`, or `re:REGEX`; default `/count`). A ledger has no filter and a tool
    /// no arguments: set them on the result.
    pub fn parse(spec: &str) -> Result<Source, ObserverError> {
        let (kind, rest) = spec.split_once(':').ok_or_else(|| ObserverError::NoKind(spec.to_string()))?;
        Ok(match kind {
            "ledger" if rest.is_empty() => return Err(ObserverError::NoPath),
            "ledger" => Source::Ledger { path: PathBuf::from(rest), filter: None },
            "cmd" => Source::Command { argv: crate::replay::process::split_command(rest)? },
            "sh" if rest.trim().is_empty() => return Err(ObserverError::NoScript),
            "sh" => Source::Command { argv: vec!["sh".into(), "-c".into(), rest.into()] },
            "tool" => {
                let (name, selector) = rest.split_once(':').unwrap_or((rest, "/count"));
                if name.is_empty() {
                    return Err(ObserverError::NoToolName);
                }
                let extract = if let Some(re) = selector.strip_prefix("re:") {
                    let regex = Regex::new(re)
                        .map_err(|e| ObserverError::BadRegex { re: re.to_string(), why: e.to_string() })?;
                    Extract::Regex(regex)
                } else if selector.starts_with('/') || selector.is_empty() {
                    Extract::Pointer(selector.to_string())
                } else {
                    return Err(ObserverError::BadSelector(selector.to_string()));
                };
                Source::Tool { name: name.to_string(), args: Value::Object(Default::default()), extract }
            }
            other => return Err(ObserverError::UnknownKind(other.to_string())),
        })
    }
}

impl Observer {
    /// An observer of `source` whose reading moves by `step` per effect (never 0).
    pub fn new(source: Source, step: f64) -> Result<Observer, ObserverError> {
        if step == 0.0 || !step.is_finite() {
            return Err(ObserverError::BadStep(step));
        }
        Ok(Observer { source, step })
    }

    /// An observer counting every line of a ledger file, one per effect.
    pub fn ledger(path: PathBuf) -> Observer {
        Observer { source: Source::Ledger { path, filter: None }, step: 1.0 }
    }

    /// Whether readings survive the server process (false for a tool observer: the server may
    /// keep its state in memory).
    pub fn outside_server(&self) -> bool {
        !matches!(self.source, Source::Tool { .. })
    }

    /// Effects between a baseline reading and a reading, if the difference is a whole number
    /// of steps.
    pub(crate) fn effects(&self, baseline: f64, reading: f64) -> Result<i64, String> {
        let n = (reading - baseline) / self.step;
        if (n - n.round()).abs() > 1e-9 {
            return Err(format!(
                "the reading moved by {} from {baseline}, not a whole number of steps of {}",
                reading - baseline,
                self.step
            ));
        }
        Ok(n.round() as i64)
    }

    /// A short description for reports.
    pub fn describe(&self) -> String {
        match &self.source {
            Source::Ledger { path, filter: None } => format!("ledger {}", path.display()),
            Source::Ledger { path, filter: Some((f, v)) } => format!("ledger {} where {f} = {v}", path.display()),
            Source::Command { argv } => format!("command `{}`", argv.join(" ")),
            Source::Tool { name, extract: Extract::Pointer(p), .. } => format!("tool {name} at {p}"),
            Source::Tool { name, extract: Extract::Regex(r), .. } => format!("tool {name} matching /{r}/"),
        }
    }
}

/// Read a ledger file (absent = 0): its complete effect lines (see [`crate::ledger_count`]; a
/// torn last line is not counted). A complete line that is not a JSON object makes the reading
/// fail, naming the line: the observer cannot tell what it is.
pub(crate) async fn read_ledger(path: &std::path::Path, filter: Option<&(String, Value)>) -> Result<f64, String> {
    let bytes = match tokio::fs::read(path).await {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0.0),
        Err(e) => return Err(format!("ledger {}: {e}", path.display())),
    };
    let filter = filter.map(|(field, value)| crate::ledger_count::Filter { field, value });
    let counted = crate::ledger_count::count(&bytes, filter);
    if let Some(line) = counted.malformed.first() {
        return Err(format!("ledger {}: line {line} is not a JSON object", path.display()));
    }
    Ok(counted.effects as f64)
}

/// The effect lines of a ledger (complete JSON object lines passing `filter`), in file order;
/// a missing file has none.
pub async fn read_ledger_lines(path: &std::path::Path, filter: Option<&(String, Value)>) -> Result<Vec<Value>, String> {
    let bytes = match tokio::fs::read(path).await {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("ledger {}: {e}", path.display())),
    };
    let filter = filter.map(|(field, value)| crate::ledger_count::Filter { field, value });
    Ok(crate::ledger_count::effect_lines(&bytes, filter))
}

/// Run an observer command with a bound and parse the number it prints.
pub(crate) async fn read_command(argv: &[String], bound: Duration) -> Result<f64, String> {
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let child = cmd.spawn().map_err(|e| format!("observer command `{}`: {e}", argv[0]))?;
    let out = tokio::time::timeout(bound, child.wait_with_output())
        .await
        .map_err(|_| format!("observer command `{}` did not finish within {} ms", argv.join(" "), bound.as_millis()))?
        .map_err(|e| format!("observer command `{}`: {e}", argv[0]))?;
    if !out.status.success() {
        return Err(format!(
            "observer command `{}` failed ({}): {}",
            argv.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse::<f64>()
        .map_err(|_| format!("observer command `{}` printed `{}`, not a number", argv.join(" "), text.trim()))
}

/// Take the number out of a `tools/call` result.
pub(crate) fn extract(result: &Value, how: &Extract) -> Result<f64, String> {
    if result.get("isError") == Some(&Value::Bool(true)) {
        return Err(format!("the observer tool returned an error: {result}"));
    }
    match how {
        Extract::Pointer(p) => {
            let v = result
                .get("structuredContent")
                .and_then(|s| s.pointer(p))
                .ok_or_else(|| format!("no structuredContent{p} in the observer tool's result"))?;
            match v {
                Value::Number(n) => n.as_f64().ok_or_else(|| format!("structuredContent{p} = {n} is not a number")),
                Value::Array(items) => Ok(items.len() as f64),
                Value::String(s) => {
                    s.trim().parse().map_err(|_| format!("structuredContent{p} = {s:?} is not a number"))
                }
                other => Err(format!("structuredContent{p} = {other} is not a number or a list")),
            }
        }
        Extract::Regex(re) => {
            let text: String = result
                .get("content")
                .and_then(Value::as_array)
                .map(|items| {
                    items.iter().filter_map(|c| c.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
                })
                .unwrap_or_default();
            let caps =
                re.captures(&text).ok_or_else(|| format!("/{re}/ does not match the observer tool's text {text:?}"))?;
            let m = caps.get(1).or_else(|| caps.get(0)).expect("a match");
            m.as_str().trim().parse().map_err(|_| format!("/{re}/ matched {:?}, not a number", m.as_str()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn ledger_readings_skip_a_torn_tail_and_refuse_a_corrupt_line() {
        let dir = std::env::temp_dir().join(format!("mcp-once-observer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("l.jsonl");
        std::fs::write(&p, b"{\"sdk\":\"rust\"}\n{\"sdk\":\"python\"}\n{\"sdk\":\"ru").unwrap();
        assert_eq!(read_ledger(&p, None).await, Ok(2.0));
        assert_eq!(read_ledger(&p, Some(&("sdk".into(), json!("rust")))).await, Ok(1.0));
        std::fs::write(&p, b"{}\nnope\n").unwrap();
        assert!(read_ledger(&p, None).await.unwrap_err().contains("line 2"));
        assert_eq!(read_ledger(&dir.join("absent.jsonl"), None).await, Ok(0.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn observer_specs_parse() {
        assert!(matches!(Source::parse("ledger:l.jsonl").unwrap(), Source::Ledger { filter: None, .. }));
        assert!(matches!(Source::parse("tool:balance:/balance").unwrap(), Source::Tool { .. }));
        assert!(
            matches!(Source::parse("tool:ledger_count").unwrap(), Source::Tool { extract: Extract::Pointer(ref p), .. } if p == "/count")
        );
        for (spec, why) in [
            ("ledger", "is not ledger:PATH"),
            ("ledger:", "needs a path"),
            ("disk:x", "unknown observer"),
            ("cmd:", "empty command"),
            ("tool:x:count", "neither a JSON pointer"),
            ("tool:x:re:(", "bad regex"),
        ] {
            let e = Source::parse(spec).unwrap_err().to_string();
            assert!(e.contains(why), "{spec}: {e}");
        }
        assert!(matches!(Observer::new(Source::parse("ledger:l").unwrap(), 0.0), Err(ObserverError::BadStep(_))));
    }

    #[test]
    fn numbers_come_out_of_tool_results() {
        let r = json!({"content": [{"type": "text", "text": "balance: 58 usd"}], "structuredContent": {"count": 3, "tx": [1, 2]}});
        assert_eq!(extract(&r, &Extract::Pointer("/count".into())), Ok(3.0));
        assert_eq!(extract(&r, &Extract::Pointer("/tx".into())), Ok(2.0));
        assert_eq!(extract(&r, &Extract::Regex(Regex::new(r"balance: (\d+)").unwrap())), Ok(58.0));
        assert!(extract(&json!({"isError": true, "content": []}), &Extract::Pointer("/count".into())).is_err());
        let sh = Source::parse("sh:wc -l < l.txt").unwrap();
        assert!(matches!(&sh, Source::Command { argv } if argv == &["sh", "-c", "wc -l < l.txt"]));
        assert!(Source::parse("sh: ").is_err());
        let o = Observer::new(Source::parse("cmd:echo 1").unwrap(), -42.0).unwrap();
        assert_eq!(o.effects(100.0, 16.0), Ok(2));
        assert!(o.effects(100.0, 50.0).is_err());
    }
}
