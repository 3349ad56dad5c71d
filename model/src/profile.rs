//! Spec profiles: what one revision or proposal of the MCP specification requires or allows,
//! as knobs the model reads.
//!
//! A profile is a TOML file in `specs/` (see `specs/README.md`). Every knob carries the clause
//! it comes from (revision, file path in the specification repository, section, and a short
//! quote), so each step of a counterexample can say which rule allowed it. A profile may
//! `extends` another and override some of its knobs; a profile without `extends` sets them all.
//!
//! Loading fails with a one-line [`ProfileError`] naming the file, the line and what is wrong
//! (a malformed file, an unknown knob or value, a missing citation, a knob that contradicts
//! another).

pub use crate::knob_values::*;
use crate::named::named_enum;
use crate::text::one_line;
pub use crate::windows::{Retention, RetryHorizon};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

/// Where a knob's value comes from in the specification text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Citation {
    /// Specification revision or proposal the text belongs to (e.g. `2025-11-25`, `SEP-3182`).
    pub revision: String,
    /// File path inside the specification repository.
    pub path: String,
    /// Section heading inside that file.
    pub section: String,
    /// A short verbatim quote of the clause.
    pub quote: String,
    /// Optional reading of the clause (not spec text), e.g. when the rule is an absence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Whether the text is normative: `false` for a sentence found only in a changelog or other
    /// non-normative page, which reports then mark as such (a changelog's MUST binds nobody).
    #[serde(default = "normative_default", skip_serializing_if = "is_true")]
    pub normative: bool,
}

fn normative_default() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl Citation {
    /// The marker a report puts after the section of a non-normative citation (empty for a
    /// normative one).
    pub fn standing(&self) -> &'static str {
        if self.normative {
            ""
        } else {
            " (not normative: changelog text only)"
        }
    }
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} § {}{}: \"{}\"", self.revision, self.path, self.section, self.standing(), self.quote)
    }
}

named_enum!(
    /// A protocol revision the model (and the runner) knows.
    Revision,
    error = |s, names| format!("`{s}` is not a revision the runner speaks ({names})"),
    {
        /// `2025-11-25`: `initialize` handshake, HTTP sessions.
        R2025_11_25 = "2025-11-25",
        /// `2026-07-28`: `server/discover`, the version in every request's `_meta`, no sessions.
        R2026_07_28 = "2026-07-28",
    }
);

/// One knob: its value, its citation, and the profile that set it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Knob<T> {
    /// The value the model reads.
    pub value: T,
    /// The clause the value comes from.
    pub cite: Citation,
    /// Name of the profile that set this knob (the profile itself or one it extends).
    pub set_by: String,
    /// The file that set it (a built-in profile's path in the repository), for errors.
    #[serde(skip)]
    pub set_in: String,
}

/// Every knob the model reads, each with its citation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Knobs {
    /// Uniqueness scope of JSON-RPC request ids.
    pub request_id_scope: Knob<IdScope>,
    /// Id carried by a retry.
    pub retry_request_id: Knob<RetryId>,
    /// Re-issue rule for lost requests.
    pub reissue_lost_request: Knob<Reissue>,
    /// Whether a timed-out request should be cancelled.
    pub timeout_sends_cancel: Knob<bool>,
    /// Cancellation on stdio.
    pub stdio_cancel: Knob<StdioCancel>,
    /// Cancellation on Streamable HTTP.
    pub http_cancel: Knob<HttpCancel>,
    /// Whether an HTTP disconnect is a cancellation of the request.
    pub http_disconnect_is_cancel: Knob<bool>,
    /// SSE stream resumability.
    pub sse_resumability: Knob<Resumability>,
    /// Restart guidance for stdio servers.
    pub stdio_restart: Knob<RestartGuidance>,
    /// Idempotency key placement.
    pub idempotency_key: Knob<KeyPlacement>,
    /// Idempotency key semantics.
    pub idempotency_semantics: Knob<KeySemantics>,
    /// In-progress duplicate handling.
    pub idempotency_in_progress: Knob<InProgress>,
    /// Same key, other arguments.
    pub idempotency_conflict: Knob<Conflict>,
    /// Retention of key records.
    pub idempotency_retention: Knob<Retention>,
    /// Whether recording the key after the effect is allowed.
    pub idempotency_crash_window: Knob<CrashWindow>,
    /// Input-required results (MRTR).
    pub input_required: Knob<InputRequired>,
    /// Whether MRTR continuations are inside the key's scope.
    pub idempotency_continuations: Knob<Continuations>,
    /// Whether a client's requests may reach several server instances.
    pub server_instances: Knob<Instances>,
    /// Where several instances must keep their key records.
    pub idempotency_store: Knob<IdempotencyStore>,
    /// Whether a client must reuse its key on retries and framework re-runs.
    pub idempotency_key_reuse: Knob<KeyReuse>,
    /// How long after a call's first request a client may still retry or re-run it.
    pub retry_horizon: Knob<RetryHorizon>,
    /// Whether a receiver may refuse an operation (task) id it already has a record of.
    pub task_id_validation: Knob<TaskIdValidation>,
    /// What a server may still send for a request whose cancellation it has read.
    pub cancelled_request_messages: Knob<CancelledMessages>,
    /// Whether a server may end the client's session, so that request ids start over.
    pub session_termination: Knob<SessionTermination>,
    /// Whether a server must (or should) deduplicate `tools/call` by request id, and for how long.
    pub request_id_dedup: Knob<IdDedup>,
    /// Whether a client may retry a `tools/call` after a timeout, by the tool's annotations.
    pub retry_after_timeout: Knob<RetryAfterTimeout>,
    /// Whether a `tools/call` may be task-augmented, and whether its task must be durable
    /// before the `CreateTaskResult`.
    pub task_creation: Knob<TaskCreation>,
    /// Whose earlier requests an idempotency key is matched against (the scope of the records).
    pub idempotency_key_scope: Knob<KeyScope>,
}

/// Whether a profile is a released revision or a proposal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProfileKind {
    /// A released specification revision.
    Revision,
    /// A proposed change (a SEP or an alternative discussed in the field).
    Proposal,
}

/// A loaded, fully resolved profile.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Profile {
    /// Short name users type (`mcp-2025-11-25`, `sep-3182`).
    pub name: String,
    /// One-line title.
    pub title: String,
    /// Revision or proposal.
    pub kind: ProfileKind,
    /// The protocol revision a server speaks under this profile.
    pub revision: Revision,
    /// The profile this one extends, if any.
    pub extends: Option<String>,
    /// Where the proposal text lives (URL or reference), if any.
    pub source: Option<String>,
    /// Where this profile was loaded from (`builtin:NAME` or a file path).
    pub origin: String,
    /// The knobs.
    pub knobs: Knobs,
}

/// Why a profile could not be loaded. Its `Display` is one line naming the input and location.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be read.
    #[error("{file}: cannot read profile: {reason}")]
    Read {
        /// The file.
        file: String,
        /// The OS error.
        reason: String,
    },
    /// The file is not a valid profile: bad TOML, unknown field or value, wrong type.
    #[error("{file}:{line}:{column}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A name that is neither a built-in profile nor an existing file.
    #[error("unknown profile `{name}`: not a built-in profile ({known}) and no such file")]
    Unknown {
        /// What was asked for.
        name: String,
        /// The built-in names.
        known: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKnob<T> {
    value: toml::Spanned<T>,
    cite: Citation,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: String,
    title: String,
    kind: ProfileKind,
    revision: String,
    #[serde(default)]
    extends: Option<toml::Spanned<String>>,
    #[serde(default)]
    source: Option<String>,
    #[serde(default)]
    knobs: RawKnobs,
}

macro_rules! raw_knobs {
    (@absent $field:ident, $set_by:expr, $file:expr, $text:expr, $default:expr) => {
        absent_knob($default, $set_by, $file, &format!("`{}`", $default))
    };
    (@absent $field:ident, $set_by:expr, $file:expr, $text:expr) => {
        return Err(invalid($file, $text, 0..0, format!(
            "missing knob `knobs.{}` (a profile without `extends` sets every knob)",
            stringify!($field)
        )))
    };
    ($($field:ident => $id:ident : $ty:ty $(= $default:expr)?),+ $(,)?) => {
        #[derive(Deserialize, Default)]
        #[serde(deny_unknown_fields)]
        struct RawKnobs { $(#[serde(default)] $field: Option<RawKnob<$ty>>),+ }

        named_enum!(
            /// The name of a knob, as profile files and reports spell it.
            KnobId, expr { $(
                #[doc = concat!("`", stringify!($field), "`")]
                $id = stringify!($field)
            ),+ }
        );

        fn merge_knobs(
            file: &str,
            text: &str,
            set_by: &str,
            raw: RawKnobs,
            base: Option<Knobs>,
        ) -> Result<(Knobs, BTreeMap<KnobId, Range<usize>>), ProfileError> {
            let mut spans = BTreeMap::new();
            let knobs = Knobs {
                $($field: match (raw.$field, base.as_ref()) {
                    (Some(k), _) => {
                        if k.cite.normative && k.cite.path.ends_with("changelog.mdx") {
                            return Err(invalid(file, text, k.value.span(), format!(
                                "`knobs.{}.cite` quotes a changelog, which is not normative text: set `normative = false` there (and cite the normative page in `note`, if there is one)",
                                stringify!($field)
                            )));
                        }
                        spans.insert(KnobId::$id, k.value.span());
                        Knob { value: k.value.into_inner(), cite: k.cite, set_by: set_by.to_string(), set_in: file.to_string() }
                    }
                    (None, Some(b)) => b.$field.clone(),
                    (None, None) => raw_knobs!(@absent $field, set_by, file, text $(, $default)?),
                }),+
            };
            Ok((knobs, spans))
        }

        impl Profile {
            /// Where knob `id` was set, in words: `` `knobs.NAME = "VALUE"`, set by profile P (FILE)``.
            fn provenance(&self, id: KnobId) -> String {
                let k = &self.knobs;
                match id { $(KnobId::$id => format!(
                    "`knobs.{} = \"{}\"`, set by profile {} ({})",
                    stringify!($field), k.$field.value, k.$field.set_by, k.$field.set_in
                )),+ }
            }

            /// Every knob as (name, value, citation, set_by), in file order, for reports.
            pub fn knob_table(&self) -> Vec<(KnobId, String, &Citation, &str)> {
                let k = &self.knobs;
                vec![$((KnobId::$id, k.$field.value.to_string(), &k.$field.cite, k.$field.set_by.as_str())),+]
            }
        }
    };
}

/// A knob added after the first release, absent from a file without `extends`: its value
/// before the knob existed, cited as such.
fn absent_knob<T>(value: T, set_by: &str, file: &str, what: &str) -> Knob<T> {
    let cite = Citation {
        revision: "mcp-once".into(),
        path: "specs/README.md".into(),
        section: "Knobs added later".into(),
        quote: String::new(),
        note: Some(format!("not set by this profile; taken as {what}, the meaning before the knob existed")),
        normative: false,
    };
    Knob { value, cite, set_by: set_by.to_string(), set_in: file.to_string() }
}

raw_knobs!(
    request_id_scope => RequestIdScope: IdScope,
    retry_request_id => RetryRequestId: RetryId,
    reissue_lost_request => ReissueLostRequest: Reissue,
    timeout_sends_cancel => TimeoutSendsCancel: bool,
    stdio_cancel => StdioCancel: StdioCancel,
    http_cancel => HttpCancel: HttpCancel,
    http_disconnect_is_cancel => HttpDisconnectIsCancel: bool,
    sse_resumability => SseResumability: Resumability,
    stdio_restart => StdioRestart: RestartGuidance,
    idempotency_key => IdempotencyKey: KeyPlacement,
    idempotency_semantics => IdempotencySemantics: KeySemantics,
    idempotency_in_progress => IdempotencyInProgress: InProgress,
    idempotency_conflict => IdempotencyConflict: Conflict,
    idempotency_retention => IdempotencyRetention: Retention,
    idempotency_crash_window => IdempotencyCrashWindow: CrashWindow,
    input_required => InputRequired: InputRequired = InputRequired::None,
    idempotency_continuations => IdempotencyContinuations: Continuations = Continuations::None,
    server_instances => ServerInstances: Instances = Instances::Single,
    idempotency_store => IdempotencyStore: IdempotencyStore = IdempotencyStore::None,
    idempotency_key_reuse => IdempotencyKeyReuse: KeyReuse = KeyReuse::Unspecified,
    retry_horizon => RetryHorizon: RetryHorizon = RetryHorizon::Unbounded,
    task_id_validation => TaskIdValidation: TaskIdValidation = TaskIdValidation::None,
    cancelled_request_messages => CancelledRequestMessages: CancelledMessages = CancelledMessages::Unspecified,
    session_termination => SessionTermination: SessionTermination = SessionTermination::None,
    request_id_dedup => RequestIdDedup: IdDedup = IdDedup::Unspecified,
    retry_after_timeout => RetryAfterTimeout: RetryAfterTimeout = RetryAfterTimeout::Unspecified,
    task_creation => TaskCreation: TaskCreation = TaskCreation::None,
    idempotency_key_scope => IdempotencyKeyScope: KeyScope = KeyScope::Unspecified,
);

/// The profiles shipped with mcp-once: (name, file path in the repository, text).
pub const BUILTIN_PROFILES: &[(&str, &str, &str)] = &[
    ("mcp-2025-11-25", "specs/mcp-2025-11-25.toml", include_str!("../../specs/mcp-2025-11-25.toml")),
    ("mcp-2026-07-28", "specs/mcp-2026-07-28.toml", include_str!("../../specs/mcp-2026-07-28.toml")),
    ("sep-3182", "specs/proposals/sep-3182.toml", include_str!("../../specs/proposals/sep-3182.toml")),
    ("outcome-query", "specs/proposals/outcome-query.toml", include_str!("../../specs/proposals/outcome-query.toml")),
];

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let column = before.rfind('\n').map_or(offset, |nl| offset - nl - 1) + 1;
    (line, column)
}

fn invalid(file: &str, text: &str, span: Range<usize>, message: String) -> ProfileError {
    let (line, column) = line_col(text, span.start);
    ProfileError::Invalid { file: one_line(file), line, column, message: one_line(&message) }
}

impl Profile {
    /// Load a built-in profile by name, or a profile file by path.
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        Self::load_nested(name_or_path, None, 0)
    }

    /// Names of the built-in profiles.
    pub fn builtin_names() -> Vec<&'static str> {
        BUILTIN_PROFILES.iter().map(|(n, _, _)| *n).collect()
    }

    /// Parse a profile from text; `file` names it in errors, `dir` resolves a relative `extends`.
    pub fn parse(file: &str, text: &str, dir: Option<&Path>) -> Result<Profile, ProfileError> {
        Self::parse_nested(file, text, dir, 0)
    }

    fn load_nested(name: &str, dir: Option<&Path>, depth: usize) -> Result<Profile, ProfileError> {
        if let Some((n, path, text)) = BUILTIN_PROFILES.iter().find(|(n, _, _)| *n == name) {
            let mut p = Self::parse_nested(path, text, None, depth)?;
            p.origin = format!("builtin:{n}");
            return Ok(p);
        }
        let mut candidates = vec![PathBuf::from(name)];
        if let Some(d) = dir {
            candidates.insert(0, d.join(name));
            candidates.insert(1, d.join(format!("{name}.toml")));
        }
        let Some(path) = candidates.into_iter().find(|p| p.is_file()) else {
            return Err(ProfileError::Unknown { name: one_line(name), known: Self::builtin_names().join(", ") });
        };
        let file = path.display().to_string();
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ProfileError::Read { file: one_line(&file), reason: one_line(&e.to_string()) })?;
        Self::parse_nested(&file, &text, path.parent(), depth)
    }

    fn parse_nested(file: &str, text: &str, dir: Option<&Path>, depth: usize) -> Result<Profile, ProfileError> {
        let raw: RawProfile = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            invalid(file, text, span, e.message().trim().replace('\n', " "))
        })?;
        let base = match &raw.extends {
            None => None,
            Some(ext) => {
                if depth >= 8 {
                    return Err(invalid(file, text, ext.span(), "`extends` chain longer than 8 (a cycle?)".into()));
                }
                let parent = Self::load_nested(ext.get_ref(), dir, depth + 1).map_err(|e| {
                    invalid(file, text, ext.span(), format!("cannot load `extends = \"{}\"`: {e}", ext.get_ref()))
                })?;
                Some(parent.knobs)
            }
        };
        let (knobs, spans) = merge_knobs(file, text, &raw.name, raw.knobs, base)?;
        let revision = raw.revision.parse::<Revision>().map_err(|_| {
            let message = format!("`revision = \"{}\"`: the model knows 2025-11-25 and 2026-07-28", raw.revision);
            invalid(file, text, 0..0, message)
        })?;
        let profile = Profile {
            name: raw.name,
            title: raw.title,
            kind: raw.kind,
            revision,
            extends: raw.extends.map(|e| e.into_inner()),
            source: raw.source,
            origin: file.to_string(),
            knobs,
        };
        if let Err((knob, other, message)) = profile.validate() {
            // Point at the knob this file sets (the blamed one, else the one it contradicts),
            // and say where the other one was set when it was not here.
            let span = spans.get(&knob).or_else(|| spans.get(&other)).cloned().unwrap_or(0..0);
            let elsewhere: Vec<String> =
                [knob, other].into_iter().filter(|k| !spans.contains_key(k)).map(|k| profile.provenance(k)).collect();
            let message = match elsewhere.is_empty() {
                true => message,
                false => format!("{message} (here {})", elsewhere.join("; ")),
            };
            return Err(invalid(file, text, span, message));
        }
        Ok(profile)
    }

    /// Check that the knobs agree with each other; on error, the knob to blame, the knob it
    /// contradicts, and why.
    fn validate(&self) -> Result<(), (KnobId, KnobId, String)> {
        let k = &self.knobs;
        let has_key = k.idempotency_key.value != KeyPlacement::None;
        let has_sem = k.idempotency_semantics.value != KeySemantics::None;
        if has_key != has_sem {
            return Err((
                KnobId::IdempotencySemantics,
                KnobId::IdempotencyKey,
                "`idempotency_key` and `idempotency_semantics` must both be `none` or both be set".into(),
            ));
        }
        let dedup = k.idempotency_semantics.value == KeySemantics::Dedup;
        if !dedup && k.idempotency_in_progress.value != InProgress::None {
            return Err((
                KnobId::IdempotencyInProgress,
                KnobId::IdempotencySemantics,
                "`idempotency_in_progress` is a rule for duplicates, so it needs key semantics `dedup` (`idempotency_semantics`)".into(),
            ));
        }
        if has_key && k.idempotency_retention.value == Retention::None {
            return Err((
                KnobId::IdempotencyRetention,
                KnobId::IdempotencyKey,
                "a profile with a key needs a retention rule".into(),
            ));
        }
        if has_key && k.idempotency_crash_window.value == CrashWindow::None {
            return Err((
                KnobId::IdempotencyCrashWindow,
                KnobId::IdempotencyKey,
                "a profile with a key needs a crash-window rule".into(),
            ));
        }
        let rounds = k.input_required.value != InputRequired::None;
        if (!has_key || !rounds) && k.idempotency_continuations.value != Continuations::None {
            return Err((
                KnobId::IdempotencyContinuations,
                if has_key { KnobId::InputRequired } else { KnobId::IdempotencyKey },
                "`idempotency_continuations` needs both a key and input-required results (`input_required`)".into(),
            ));
        }
        if k.idempotency_store.value != IdempotencyStore::None && !has_key {
            return Err((
                KnobId::IdempotencyStore,
                KnobId::IdempotencyKey,
                "`idempotency_store` needs a key (`idempotency_key`)".into(),
            ));
        }
        if k.idempotency_key_reuse.value != KeyReuse::Unspecified && !has_key {
            return Err((
                KnobId::IdempotencyKeyReuse,
                KnobId::IdempotencyKey,
                "`idempotency_key_reuse` needs a key (`idempotency_key`)".into(),
            ));
        }
        if k.task_id_validation.value != TaskIdValidation::None
            && k.idempotency_semantics.value != KeySemantics::StatusQuery
        {
            return Err((
                KnobId::TaskIdValidation,
                KnobId::IdempotencySemantics,
                "`task_id_validation` is a rule for an operation id whose outcome is queried, so it needs key semantics `status-query` (`idempotency_semantics`)".into(),
            ));
        }
        Ok(())
    }
}
