//! Expected failures, for a server author's CI: a YAML file in the MCP conformance suite's shape
//! (`server:` a list of check ids; `client:` accepted and unused here) names the checks known to
//! fail. A run passes when only those fail; a new failure, or a listed check that now passes (a
//! stale baseline), fails it. Untestable checks are neither: they keep the exit code at 2.

use crate::probe::checks::{CheckRecord, Status};
use std::path::{Path, PathBuf};
use yaml_rust2::{Yaml, YamlLoader};

/// What is wrong with an expected-failures file.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// The file could not be read.
    #[error("{}: {source}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The text is not YAML.
    #[error("not YAML: {0}")]
    NotYaml(String),
    /// The YAML is not in the suite's shape (what is wrong, and where).
    #[error("{0}")]
    Malformed(String),
    /// A listed id is no check of this run (a typo would excuse nothing).
    #[error("`{id}` is not one of this probe's checks ({})", known.join(", "))]
    UnknownCheck {
        /// The id as written.
        id: String,
        /// The checks of this run.
        known: Vec<String>,
    },
    /// One of the above, in the file named.
    #[error("{}: {inner}", path.display())]
    In {
        /// The file.
        path: PathBuf,
        /// What is wrong in it.
        inner: Box<BaselineError>,
    },
}

/// The checks a server is expected to fail.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExpectedFailures {
    /// Check ids, as written.
    pub checks: Vec<String>,
}

/// A run judged against the baseline.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaselineResult {
    /// Listed checks that failed (or warned), as expected.
    pub expected: Vec<String>,
    /// Checks that failed (or warned) and are not listed.
    pub unexpected: Vec<String>,
    /// Listed checks that now pass: the baseline is stale.
    pub stale: Vec<String>,
    /// Checks that could not be tested (listed or not).
    pub untestable: Vec<String>,
    /// Listed checks this run did not run (another transport's, the key checks without a key
    /// placement, or not selected): neither passed nor failed, so they change nothing; one
    /// file serves every run.
    pub not_run: Vec<String>,
}

impl ExpectedFailures {
    /// Read `path`; an error names the file and what is wrong.
    pub fn load(path: &Path) -> Result<ExpectedFailures, BaselineError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| BaselineError::Unreadable { path: path.to_path_buf(), source })?;
        Self::parse(&text).map_err(|e| BaselineError::In { path: path.to_path_buf(), inner: Box::new(e) })
    }

    /// Parse the YAML text, checking ids against `known` later ([`ExpectedFailures::check_ids`]).
    pub fn parse(text: &str) -> Result<ExpectedFailures, BaselineError> {
        let docs = YamlLoader::load_from_str(text).map_err(|e| BaselineError::NotYaml(e.to_string()))?;
        let Some(doc) = docs.first() else { return Ok(ExpectedFailures::default()) };
        let map = match doc {
            Yaml::Null => return Ok(ExpectedFailures::default()),
            Yaml::Hash(h) => h,
            _ => {
                return Err(BaselineError::Malformed(
                    "expected a mapping with a `server` list (and, unused here, `client`)".into(),
                ))
            }
        };
        let mut checks = Vec::new();
        for (k, v) in map {
            let key = k.as_str().unwrap_or("");
            match key {
                "client" => {}
                "server" => {
                    let Yaml::Array(items) = v else {
                        return Err(BaselineError::Malformed("`server` must be a list of check ids".into()));
                    };
                    for (i, item) in items.iter().enumerate() {
                        let Some(id) = item.as_str() else {
                            return Err(BaselineError::Malformed(format!(
                                "`server` entry {} is not a check id (a mapping means a space after a colon)",
                                i + 1
                            )));
                        };
                        if id.contains(':') {
                            return Err(BaselineError::Malformed(format!("`server` entry {} (`{id}`): the probe's checks are named by id alone, with no `scenario:` part", i + 1)));
                        }
                        checks.push(id.to_string());
                    }
                }
                other => {
                    return Err(BaselineError::Malformed(format!(
                        "unknown key `{other}` (expected `server` or `client`)"
                    )))
                }
            }
        }
        Ok(ExpectedFailures { checks })
    }

    /// Every listed id must be a check of this run (`known`): a typo would otherwise excuse
    /// nothing and go unnoticed.
    pub fn check_ids(&self, known: &[&str]) -> Result<(), BaselineError> {
        match self.checks.iter().find(|c| !known.contains(&c.as_str())) {
            Some(bad) => Err(BaselineError::UnknownCheck {
                id: bad.clone(),
                known: known.iter().map(|k| k.to_string()).collect(),
            }),
            None => Ok(()),
        }
    }

    /// Judge `checks` against the baseline.
    pub fn judge(&self, checks: &[CheckRecord]) -> BaselineResult {
        let mut out = BaselineResult::default();
        for c in checks {
            let listed = self.checks.contains(&c.id);
            match (c.status, listed) {
                (Status::Untestable, _) => out.untestable.push(c.id.clone()),
                (Status::Failure | Status::Warning, true) => out.expected.push(c.id.clone()),
                (Status::Failure | Status::Warning, false) => out.unexpected.push(c.id.clone()),
                (Status::Success, true) => out.stale.push(c.id.clone()),
                (Status::Success, false) => {}
            }
        }
        out.not_run = self.checks.iter().filter(|id| !checks.iter().any(|c| c.id == **id)).cloned().collect();
        out
    }
}

impl BaselineResult {
    /// 1 for a new failure or a stale entry, else 2 if a check could not be tested, else 0.
    pub fn exit_code(&self) -> u8 {
        if !self.unexpected.is_empty() || !self.stale.is_empty() {
            1
        } else if !self.untestable.is_empty() {
            2
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str, status: Status) -> CheckRecord {
        CheckRecord {
            id: id.into(),
            name: id.into(),
            description: String::new(),
            status,
            timestamp: String::new(),
            spec_references: Vec::new(),
            details: json!({}),
            error_message: None,
        }
    }

    #[test]
    fn the_suites_shape_parses_and_bad_files_are_named() {
        let b = ExpectedFailures::parse("server:\n  - a\n  - b\nclient:\n  - c\n").unwrap();
        assert_eq!(b.checks, ["a", "b"]);
        assert_eq!(ExpectedFailures::parse("").unwrap(), ExpectedFailures::default());
        assert!(ExpectedFailures::parse("server: a").unwrap_err().to_string().contains("list"));
        assert!(ExpectedFailures::parse("servers:\n  - a").unwrap_err().to_string().contains("unknown key `servers`"));
        assert!(ExpectedFailures::parse("server:\n  - a: b").unwrap_err().to_string().contains("space after a colon"));
        assert!(ExpectedFailures::parse("server:\n  - s:a").unwrap_err().to_string().contains("by id alone"));
        assert!(ExpectedFailures::parse("server: [").unwrap_err().to_string().starts_with("not YAML"));
        assert!(b.check_ids(&["a"]).unwrap_err().to_string().contains("`b` is not one of"));
    }

    #[test]
    fn new_failures_and_stale_entries_fail_untestable_stays_two() {
        let b = ExpectedFailures { checks: vec!["f".into(), "w".into()] };
        let only_expected = b.judge(&[record("f", Status::Failure), record("w", Status::Warning)]);
        assert_eq!((only_expected.exit_code(), only_expected.expected.len()), (0, 2));
        let new = b.judge(&[record("f", Status::Failure), record("w", Status::Warning), record("n", Status::Failure)]);
        assert_eq!((new.exit_code(), new.unexpected.clone()), (1, vec!["n".to_string()]));
        let stale = b.judge(&[record("f", Status::Success), record("w", Status::Warning)]);
        assert_eq!((stale.exit_code(), stale.stale.clone()), (1, vec!["f".to_string()]));
        let untested = b.judge(&[record("f", Status::Untestable), record("w", Status::Warning)]);
        assert_eq!((untested.exit_code(), untested.stale.len(), untested.expected.len()), (2, 0, 1));
    }
}
