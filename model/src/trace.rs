//! Traces as files: one counterexample per JSON file in the ITF trace format (Apalache ADR-015,
//! also written by Quint), with Quint's model-based-testing convention: every state carries
//! `mbt::actionTaken`, the action that led into it, as a `{"tag", "value"}` variant.
//!
//! `#meta` holds what is needed to check the trace again and to replay it: the format and
//! action vocabulary versions, the profile, the configuration, the property, stateright's
//! action-index path, and whether minimality was verified by an independent search. Each
//! state's own `#meta` says who acted, what happened in plain words, and the profile rules
//! (with their citations) that allowed the step.
//!
//! [`TraceFile::validate`] re-runs a trace through the model under its recorded configuration
//! and rejects one that is not a real path, naming the step and the reason; what it returns is
//! the typed path (the model and its states), which readers use instead of the recorded JSON.
//! A trace found in this process is built with [`TraceFile::from_counterexample`], with no text
//! in between.
//!
//! Why not the `itf` crate (Informal Systems, 0.4): it only reads ITF (it has no writer, and
//! these files must stay byte for byte as they are), and its trace `#meta` keeps extra fields
//! as strings only, so our `#meta` (objects, numbers, booleans) does not decode through it.
//! Reading our own actions back needs one step it would do for us, turning the empty variant
//! payload `{"#tup": []}` into an empty parameter list, which is a few lines here
//! (`itf_variants` writes it).

use crate::action::{Action, ACTION_VOCABULARY};
use crate::config::{Config, StoreScope};
use crate::explanation::explain_path;
use crate::model::McpModel;
use crate::profile::Profile;
use crate::property::PropertyKind;
use crate::search::check::{replay, Counterexample};
use crate::text::one_line;
use serde_json::{json, Map, Value};

/// Version of the trace file layout (bumped when `#meta` changes shape).
pub const TRACE_FORMAT: &str = "mcp-once-trace/v1";

/// The state variables written for every state, in order.
pub const VARS: &[&str] =
    &["calls", "attempts", "inbox", "server", "ledger", "keys_durable", "keys_volatile", "keys_running", "ids_seen"];

/// What a trace shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceKind {
    /// A shortest counterexample to a property.
    Counterexample(PropertyKind),
    /// A shortest path to the worst case (most effects for one logical call).
    WorstCase,
}

/// The `property` of a worst-case trace's `#meta`.
const WORST_CASE: &str = "worst-case";

impl TraceKind {
    /// The `property` field of `#meta`.
    pub fn property_name(self) -> &'static str {
        match self {
            TraceKind::Counterexample(p) => p.as_str(),
            TraceKind::WorstCase => WORST_CASE,
        }
    }

    /// The property a counterexample violates (`None` for a worst case).
    pub fn property(self) -> Option<PropertyKind> {
        match self {
            TraceKind::Counterexample(p) => Some(p),
            TraceKind::WorstCase => None,
        }
    }

    /// The property a replay judges: the counterexample's own, or at-most-once for a worst case
    /// (the most effects of one call, shown to be more than one).
    pub fn judged(self) -> PropertyKind {
        self.property().unwrap_or(PropertyKind::AtMostOnce)
    }
}

impl std::fmt::Display for TraceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.property_name())
    }
}

impl std::str::FromStr for TraceKind {
    type Err = crate::named::BadValue;

    /// A property's name, or `worst-case`.
    fn from_str(s: &str) -> Result<TraceKind, crate::named::BadValue> {
        if s == WORST_CASE {
            return Ok(TraceKind::WorstCase);
        }
        s.parse::<PropertyKind>().map(TraceKind::Counterexample).map_err(|_| {
            let names: Vec<&str> = PropertyKind::ALL.iter().map(|p| p.as_str()).chain([WORST_CASE]).collect();
            crate::named::BadValue::new(s, format!("unknown property `{s}` (expected one of: {})", names.join(", ")))
        })
    }
}

impl serde::Serialize for TraceKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.property_name())
    }
}

impl<'de> serde::Deserialize<'de> for TraceKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<TraceKind, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A trace read back from a file, with what its `#meta` says.
#[derive(Clone, Debug)]
pub struct TraceFile {
    /// The configuration it was found under.
    pub config: Config,
    /// What it shows: a counterexample to a property, or the worst case.
    pub property: TraceKind,
    /// The actions, in order.
    pub actions: Vec<Action>,
    /// The states as recorded (JSON), first to last.
    pub states: Vec<Value>,
    /// The whole `#meta` object.
    pub meta: Value,
}

/// Give every payload-less variant (`{"tag": ...}`) ITF's empty payload, `{"#tup": []}`.
fn itf_variants(v: &mut Value) {
    match v {
        Value::Object(map) => {
            if map.contains_key("tag") && !map.contains_key("value") && map.len() == 1 {
                map.insert("value".into(), json!({"#tup": []}));
            }
            map.values_mut().for_each(itf_variants);
        }
        Value::Array(items) => items.iter_mut().for_each(itf_variants),
        _ => {}
    }
}

fn action_json(a: &Action) -> Value {
    let mut v = serde_json::to_value(a).expect("actions serialise");
    // An action with no parameter to write (a crash of the only instance) has an empty payload,
    // which ITF writes as the empty tuple, as for a variant without fields.
    if v.get("value") == Some(&json!({})) {
        v.as_object_mut().expect("object").remove("value");
    }
    itf_variants(&mut v);
    v
}

/// The state's variables as JSON, trimmed to the calls and attempts within `model`'s bounds.
fn state_vars(model: &McpModel, s: &crate::state::State) -> Map<String, Value> {
    let Value::Object(map) = serde_json::to_value(s).expect("states serialise") else { unreachable!() };
    let calls = model.config.bounds.calls as usize;
    // A handler that asks for input sends continuations, attempts of their own (and after an
    // id table's replayed input request, more of them than its rounds): all are written.
    let attempts = match model.config.handler.rounds {
        0 => model.config.bounds.retries as usize + 1,
        _ => crate::state::MAX_ATTEMPTS,
    };
    let instances = model.config.deployment.instances as usize;
    let stores = if instances > 1 && model.config.store() == StoreScope::PerInstance { 2 } else { 1 };
    let mut out = Map::new();
    for k in VARS {
        let mut v = map[*k].clone();
        // One store (or one instance) is written as it was before there could be two.
        if matches!(*k, "keys_durable" | "keys_volatile" | "keys_running" | "ids_seen") {
            let Value::Array(mut per_store) = v else { unreachable!("stores serialise as a list") };
            per_store.truncate(stores);
            for store in &mut per_store {
                if let Value::Array(items) = store {
                    items.truncate(calls);
                }
            }
            out.insert((*k).into(), if stores == 1 { per_store.remove(0) } else { Value::Array(per_store) });
            continue;
        }
        if *k == "server" {
            v["up"] = if instances == 1 { v["up"][0].take() } else { v["up"].clone() };
            // A run the server never ends a session in is written as it was before it could.
            if model.config.session_terminations == 0 {
                v.as_object_mut().expect("the server serialises as an object").remove("session_ends");
            }
        }
        if let Value::Array(items) = &mut v {
            if *k != "inbox" {
                items.truncate(calls);
            }
            if *k == "attempts" {
                for row in items.iter_mut() {
                    if let Value::Array(r) = row {
                        r.truncate(attempts);
                    }
                }
            }
        }
        out.insert((*k).into(), v);
    }
    out
}

/// Render a path of `model` as an ITF document.
pub fn to_itf(model: &McpModel, kind: TraceKind, path: &Counterexample, minimal_verified: bool) -> Value {
    let mut states = Vec::with_capacity(path.states.len());
    let steps = explain_path(model, path);
    for (i, s) in path.states.iter().enumerate() {
        let mut vars = state_vars(model, s);
        let mut meta = json!({"index": i});
        if i == 0 {
            vars.insert("mbt::actionTaken".into(), json!({"tag": "init", "value": {"#tup": []}}));
        } else {
            let step = &steps[i - 1];
            let a = &step.action;
            vars.insert("mbt::actionTaken".into(), action_json(a));
            let cites: Vec<Value> = step
                .rules
                .iter()
                .map(|(knob, value, cite)| json!({"knob": knob, "value": value, "cite": cite}))
                .collect();
            meta = json!({
                "index": i,
                "actor": a.actor(),
                "internal": a.internal(),
                "description": step.what,
                "rules": cites,
            });
        }
        let mut obj = Map::new();
        obj.insert("#meta".into(), meta);
        obj.extend(vars);
        states.push(Value::Object(obj));
    }
    let mut vars: Vec<&str> = VARS.to_vec();
    vars.push("mbt::actionTaken");
    json!({
        "#meta": {
            "format": "ITF",
            "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
            "trace-format": TRACE_FORMAT,
            "vocabulary": ACTION_VOCABULARY,
            "source": format!("mcp-once {}", env!("CARGO_PKG_VERSION")),
            "checker": "mcp-once breadth-first explorer (first violation per property); length checked against stateright 0.31.0 breadth-first search, one property per run",
            "profile": {"name": model.profile.name, "origin": model.profile.origin, "revision": model.profile.revision},
            "config": model.config,
            "property": kind.property_name(),
            "description": match kind {
                TraceKind::Counterexample(p) => format!("shortest counterexample to `{p}`: {}", p.meaning()),
                TraceKind::WorstCase => "shortest path to the most side effects one logical call can reach".into(),
            },
            "steps": path.len(),
            "effects": path.effects(),
            "action_index_path": path.index_path,
            "minimal": minimal_verified,
            "minimality": if minimal_verified { "verified by an independent breadth-first search" } else { "breadth-first order (not re-verified)" },
        },
        "vars": vars,
        "states": states,
    })
}

/// A problem with a trace file: the step (0 for the file as a whole) and the reason. Its
/// `Display` is one line.
#[derive(Debug, thiserror::Error)]
#[error("{file}: step {step}: {reason}")]
pub struct TraceError {
    /// The file.
    pub file: String,
    /// 1-based step (0: the file or its `#meta`).
    pub step: usize,
    /// What is wrong.
    pub reason: String,
}

impl TraceError {
    /// An error at `step` of `file`; control characters in either text are escaped, so that the
    /// message stays one line whatever the file contains.
    pub fn new(file: &str, step: usize, reason: &str) -> TraceError {
        TraceError { file: one_line(file), step, reason: one_line(reason) }
    }
}

/// A trace that is a real path of the model: what [`TraceFile::validate`] returns.
#[derive(Clone, Debug)]
pub struct ValidTrace {
    /// The model under the trace's configuration and profile.
    pub model: McpModel,
    /// The path: the model's own states, the actions, and the recorded action-index path.
    pub path: Counterexample,
}

impl ValidTrace {
    /// Number of steps (actions).
    pub fn steps(&self) -> usize {
        self.path.len()
    }
}

impl TraceFile {
    /// The trace of a path of `model`, built in process: the same configuration, property,
    /// actions, states and `#meta` as [`to_itf`] writes and [`TraceFile::parse`] reads back.
    pub fn from_counterexample(
        model: &McpModel,
        kind: TraceKind,
        path: &Counterexample,
        minimal_verified: bool,
    ) -> TraceFile {
        let Value::Object(mut doc) = to_itf(model, kind, path, minimal_verified) else { unreachable!() };
        let Some(Value::Array(states)) = doc.remove("states") else { unreachable!() };
        TraceFile {
            config: model.config.clone(),
            property: kind,
            actions: path.actions.clone(),
            states,
            meta: doc.remove("#meta").unwrap_or(Value::Null),
        }
    }

    /// Parse a trace document; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<TraceFile, TraceError> {
        let err = |step: usize, reason: String| TraceError::new(file, step, &reason);
        let doc: Value = serde_json::from_str(text).map_err(|e| err(0, format!("not JSON: {e}")))?;
        let meta = doc.get("#meta").ok_or_else(|| err(0, "no `#meta`".into()))?;
        let vocab = meta.get("vocabulary").and_then(Value::as_str).unwrap_or("");
        if vocab != ACTION_VOCABULARY {
            return Err(err(0, format!("action vocabulary `{vocab}`, expected `{ACTION_VOCABULARY}`")));
        }
        let config: Config = serde_json::from_value(meta.get("config").cloned().unwrap_or(Value::Null))
            .map_err(|e| err(0, format!("bad `#meta.config`: {e}")))?;
        let property: TraceKind = meta
            .get("property")
            .and_then(Value::as_str)
            .ok_or_else(|| err(0, "no `#meta.property`".into()))?
            .parse()
            .map_err(|e| err(0, format!("`#meta.property`: {e}")))?;
        let states = doc.get("states").and_then(Value::as_array).ok_or_else(|| err(0, "no `states` list".into()))?;
        if states.is_empty() {
            return Err(err(0, "`states` is empty".into()));
        }
        let mut actions = Vec::new();
        for (i, s) in states.iter().enumerate().skip(1) {
            let mut taken = s.get("mbt::actionTaken").cloned().ok_or_else(|| err(i, "no `mbt::actionTaken`".into()))?;
            if taken.get("value") == Some(&json!({"#tup": []})) {
                taken.as_object_mut().expect("object").insert("value".into(), json!({}));
            }
            let a: Action = serde_json::from_value(taken).map_err(|e| err(i, format!("unknown action: {e}")))?;
            actions.push(a);
        }
        Ok(TraceFile { config, property, actions, states: states.clone(), meta: meta.clone() })
    }

    /// Check the trace against the model under its recorded configuration: every action must
    /// be possible where it is taken, every recorded state must equal the model's, and the last
    /// state must violate the property (or reach the recorded effect count, for a worst case).
    /// `profile` resolves the recorded profile name. Returns the typed path.
    pub fn validate(&self, file: &str, profile: &Profile) -> Result<ValidTrace, TraceError> {
        let err = |step: usize, reason: String| TraceError::new(file, step, &reason);
        let model = McpModel::new(self.config.clone(), profile.clone())
            .map_err(|e| err(0, format!("configuration does not apply: {e}")))?;
        let states = replay(&model, &self.actions).map_err(|(step, reason)| err(step, reason))?;
        for (i, (recorded, s)) in self.states.iter().zip(&states).enumerate() {
            for (k, v) in state_vars(&model, s) {
                if recorded.get(&k) != Some(&v) {
                    return Err(err(
                        i,
                        format!(
                            "recorded `{k}` differs from the model's: {} vs {}",
                            recorded.get(&k).unwrap_or(&Value::Null),
                            v
                        ),
                    ));
                }
            }
        }
        let last = states.last().expect("a state");
        match self.property {
            TraceKind::Counterexample(p) => {
                if p.holds(&model, last) {
                    return Err(err(self.actions.len(), format!("the last state does not violate `{p}`")));
                }
            }
            TraceKind::WorstCase => {
                let claimed = self.meta.get("effects").and_then(Value::as_u64).unwrap_or(0);
                if u64::from(last.worst_effects()) != claimed {
                    return Err(err(
                        self.actions.len(),
                        format!("the last state has {} effects, the trace claims {claimed}", last.worst_effects()),
                    ));
                }
            }
        }
        let index_path = self.meta.get("action_index_path").and_then(Value::as_str).unwrap_or("").to_string();
        Ok(ValidTrace { model, path: Counterexample { states, actions: self.actions.clone(), index_path } })
    }
}
