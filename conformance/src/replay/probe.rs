//! The probe: conformance-test one server. It replays the model's shortest counterexamples for
//! the server's revision and transport (a retry after a timeout, a retry after a crash and a
//! restart, a framework re-run), under each server behaviour the model knows (cancellation
//! ignored or honoured), and, when a key placement is given, checks the SEP-3182 semantics
//! directly. Results are records shaped like the official MCP conformance suite's checks
//! (`id`, `name`, `description`, `status`, `timestamp`, `specReferences`, `details`,
//! `errorMessage`), so they can sit beside its `checks.json`.

use crate::replay::driver::replay;
use crate::replay::evidence::Evidence;
use crate::replay::pacing::Hold;
use crate::replay::session::Session;
use crate::replay::types::{revision_for, write_result, ReplayOptions, ReplayResult, ReplayVerdict, Revision};
use mcp_once_model::search::{check_property, worst_case};
use mcp_once_model::trace::{to_itf, TraceFile, TraceKind};
use mcp_once_model::{Bounds, Check, ClientPolicy, Config, KeyLifetime, McpModel, Profile, PropertyKind, ServerImpl};
use serde::Serialize;
use serde_json::{json, Value};
use std::time::SystemTime;
use tokio::time::Instant;

/// A check's status, as the conformance suite spells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Status {
    /// The server behaved as required.
    #[serde(rename = "SUCCESS")]
    Success,
    /// It did not.
    #[serde(rename = "FAILURE")]
    Failure,
    /// The runner could not establish an outcome ("Not testable: …", `details.untestable`).
    #[serde(rename = "WARNING")]
    Warning,
}

/// A spec clause a check rests on.
#[derive(Clone, Debug, Serialize)]
pub struct SpecReference {
    /// Revision, file and section.
    pub id: String,
    /// Where to read it.
    pub url: String,
}

/// One check result.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckRecord {
    /// Stable id (`mcp-once-retry-after-timeout`, `sep-3182-completed-key-replay`, …).
    pub id: String,
    /// Short name.
    pub name: String,
    /// What is checked.
    pub description: String,
    /// Outcome.
    pub status: Status,
    /// When it finished (RFC 3339).
    pub timestamp: String,
    /// The clauses it rests on.
    pub spec_references: Vec<SpecReference>,
    /// Verdicts, counts, evidence paths.
    pub details: Value,
    /// Why it failed or could not be tested.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
}

fn now_rfc3339() -> String {
    let d = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        d.subsec_millis()
    )
}

fn reference(c: &mcp_once_model::Citation) -> SpecReference {
    let url = match c.path.strip_prefix("docs/specification/") {
        Some(rest) => format!(
            "https://modelcontextprotocol.io/specification/{}",
            rest.trim_end_matches(".mdx").trim_end_matches("/index")
        ),
        None => format!("https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/{}", c.path),
    };
    SpecReference { id: format!("{} {} § {}", c.revision, c.path, c.section), url }
}

/// One scenario of the catalogue: a client policy and the property its trace shows.
struct Scenario {
    id: &'static str,
    name: &'static str,
    description: &'static str,
    client: ClientPolicy,
    crashes: u8,
    retries: u8,
    worst_case: bool,
    /// Keyed (SEP-3182) scenario: the traces of these weaker key stores, with a key per call.
    key_servers: &'static [ServerImpl],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        id: "mcp-once-retry-after-timeout",
        name: "Retry after a client timeout",
        description: "A call the client timed out on (and cancelled) and then retried takes effect at most once",
        client: ClientPolicy::RetryOnTimeout,
        crashes: 0,
        retries: 1,
        worst_case: false,
        key_servers: &[],
    },
    Scenario {
        id: "mcp-once-retry-after-restart",
        name: "Retry after a server crash and restart",
        description: "A call whose server was SIGKILLed after the effect, restarted, and retried takes effect at most once",
        client: ClientPolicy::RetryOnDisconnect,
        crashes: 1,
        retries: 1,
        worst_case: false,
        key_servers: &[],
    },
    Scenario {
        id: "mcp-once-framework-rerun",
        name: "Framework re-run of the step",
        description: "A call whose agent-framework step is re-run on failure (three attempts, as LangGraph's default RetryPolicy) takes effect at most once",
        client: ClientPolicy::FrameworkRetry,
        crashes: 0,
        retries: 2,
        worst_case: true,
        key_servers: &[],
    },
];

/// With a key placement: the same call with one idempotency key per logical call, retried after
/// SIGKILL and restart, replayed with the traces that break a volatile store and a store
/// written after the effect (a durable, atomic store must not reproduce them).
const KEYED_SCENARIO: Scenario = Scenario {
    id: "sep-3182-retry-with-key-after-restart",
    name: "Keyed retry after a crash and restart",
    description: "A call carrying an idempotency key, whose server was SIGKILLed after the effect, restarted, and retried with the same key, takes effect at most once",
    client: ClientPolicy::RetryOnDisconnect,
    crashes: 1,
    retries: 1,
    worst_case: false,
    key_servers: &[ServerImpl::KeyVolatile, ServerImpl::KeyAfterEffect],
};

/// The traces of one scenario: one per server behaviour, identical action sequences merged.
fn scenario_traces(
    s: &Scenario,
    profile: &Profile,
    transport: mcp_once_model::Transport,
) -> Result<Vec<(String, TraceFile)>, String> {
    let mut out: Vec<(String, TraceFile)> = Vec::new();
    let (servers, key): (&[ServerImpl], KeyLifetime) = if s.key_servers.is_empty() {
        (&[ServerImpl::Plain, ServerImpl::HonoursCancel], KeyLifetime::None)
    } else {
        (s.key_servers, KeyLifetime::PerCall)
    };
    for &server in servers {
        let config = Config {
            profile: profile.name.clone(),
            transport,
            client: s.client,
            key,
            server,
            bounds: Bounds { calls: 1, retries: s.retries, crashes: s.crashes },
        };
        let model = McpModel::new(config, profile.clone(), Check::Property(PropertyKind::AtMostOnce))?;
        let (kind, path) = if s.worst_case {
            (TraceKind::WorstCase, worst_case(&model).trace)
        } else {
            (
                TraceKind::Counterexample(PropertyKind::AtMostOnce),
                check_property(&model, PropertyKind::AtMostOnce).counterexample,
            )
        };
        let Some(path) = path else { continue };
        let name = format!("{}__{}__{}", s.id, transport.as_str(), server.as_str());
        let itf = to_itf(&model, kind, &path, false);
        let trace = TraceFile::parse(&name, &itf.to_string()).map_err(|e| e.to_string())?;
        if !out.iter().any(|(_, t)| t.actions == trace.actions) {
            out.push((name, trace));
        }
    }
    Ok(out)
}

fn evidence_for(options: &ReplayOptions, sub: &str) -> Result<Evidence, String> {
    let dir = options.evidence_dir.as_ref().map(|d| d.join(sub));
    Evidence::new(dir.as_deref()).map_err(|e| format!("--evidence: {e}"))
}

async fn scenario_check(s: &Scenario, profile: &Profile, options: &ReplayOptions) -> CheckRecord {
    let transport = options.target.transport();
    let mut refs: Vec<SpecReference> = Vec::new();
    let mut runs: Vec<ReplayResult> = Vec::new();
    let mut problem: Option<String> = None;
    match scenario_traces(s, profile, transport) {
        Err(e) => problem = Some(format!("the model gives no trace: {e}")),
        Ok(traces) => {
            for (name, trace) in traces {
                for rule in trace
                    .states
                    .iter()
                    .filter_map(|st| st.pointer("/#meta/rules"))
                    .filter_map(Value::as_array)
                    .flatten()
                {
                    if let Ok(c) = serde_json::from_value::<mcp_once_model::Citation>(rule["cite"].clone()) {
                        let r = reference(&c);
                        if !refs.iter().any(|x| x.id == r.id) {
                            refs.push(r);
                        }
                    }
                }
                let evidence = match evidence_for(options, &name) {
                    Ok(e) => e,
                    Err(e) => {
                        problem = Some(e);
                        break;
                    }
                };
                let result = replay(&trace, &name, profile.clone(), options.clone(), evidence).await;
                let _ = write_result(&result);
                runs.push(result);
            }
        }
    }
    let confirmed = runs.iter().find(|r| r.verdict == ReplayVerdict::Confirmed);
    let untestable = runs.iter().find(|r| {
        matches!(r.verdict, ReplayVerdict::Diverged | ReplayVerdict::Inconclusive | ReplayVerdict::Interrupted)
    });
    let (status, error) = match (&problem, confirmed, untestable) {
        (Some(p), _, _) => (Status::Warning, Some(format!("Not testable: {p}"))),
        (None, Some(r), _) => (
            Status::Failure,
            Some(format!("the call took effect {} times: {}", r.observed_effects.unwrap_or(0), r.trace)),
        ),
        (None, None, Some(r)) => (Status::Warning, Some(format!("Not testable: {} ({})", r.reason, r.trace))),
        (None, None, None) if runs.is_empty() => {
            (Status::Warning, Some("Not testable: the model has no counterexample here".into()))
        }
        (None, None, None) => (Status::Success, None),
    };
    let details = json!({
        "untestable": status == Status::Warning,
        "replays": runs.iter().map(|r| json!({
            "trace": r.trace, "verdict": r.verdict, "expected_effects": r.expected_effects,
            "observed_effects": r.observed_effects, "reason": r.reason, "evidence": r.evidence,
        })).collect::<Vec<_>>(),
    });
    CheckRecord {
        id: s.id.into(),
        name: s.name.into(),
        description: s.description.into(),
        status,
        timestamp: now_rfc3339(),
        spec_references: refs,
        details,
        error_message: error,
    }
}

/// The SEP-3182 citations for key checks, from the built-in profile.
fn sep_3182_refs() -> Vec<SpecReference> {
    match Profile::load("sep-3182") {
        Ok(p) => {
            let k = &p.knobs;
            let mut out = Vec::new();
            for c in [
                &k.idempotency_key.cite,
                &k.idempotency_semantics.cite,
                &k.idempotency_in_progress.cite,
                &k.idempotency_conflict.cite,
                &k.idempotency_retention.cite,
            ] {
                let r = reference(c);
                if !out.iter().any(|x: &SpecReference| x.id == r.id) {
                    out.push(r);
                }
            }
            out
        }
        Err(_) => Vec::new(),
    }
}

/// A small session-level script for the key checks.
struct KeyProbe {
    session: Session,
    nonce: String,
    next_id: u64,
    baseline: f64,
}

impl KeyProbe {
    async fn start(options: &ReplayOptions, revision: Revision, sub: &str) -> Result<KeyProbe, String> {
        let evidence = evidence_for(options, sub)?;
        let mut session = Session::new(options.clone(), revision, evidence);
        session.start().await.map_err(|e| format!("the server did not start: {e}"))?;
        let baseline = session.read_stable().await?;
        let nonce = format!(
            "mcp-once-probe-{:x}-{:x}",
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
        );
        Ok(KeyProbe { session, nonce, next_id: 1, baseline })
    }

    fn key(&self, name: &str) -> String {
        format!("{}-{name}", self.nonce)
    }

    async fn send(
        &mut self,
        key: &str,
        hold: Hold,
        args: Option<serde_json::Map<String, Value>>,
    ) -> Result<Value, String> {
        let id = json!(self.next_id);
        self.next_id += 1;
        let mut msg = self.session.call_message(&id, Some(key), hold, std::time::Duration::ZERO);
        if let Some(a) = args {
            let mut merged = a;
            if let Some(Value::Object(orig)) = msg.pointer("/params/arguments") {
                for (k, v) in orig {
                    if k.starts_with("delay_") || !merged.contains_key(k) {
                        merged.insert(k.clone(), v.clone());
                    }
                }
            }
            msg["params"]["arguments"] = Value::Object(merged);
        }
        self.session.send(&msg).await?;
        Ok(id)
    }

    async fn response(&mut self, id: &Value) -> Result<Value, String> {
        let deadline = Instant::now() + self.session.opts.step_timeout + self.session.opts.window * 2;
        let gen = self.session.generation();
        let seen = self
            .session
            .wait_until(deadline, async |s| {
                if let Some(r) = s.responses_for(gen, id).first() {
                    return Some(Ok(r.clone()));
                }
                if let Some(f) = s.failure_for(gen, id) {
                    return Some(Err(format!("request {id} failed: {f}")));
                }
                let c = s.closed(gen)?;
                Some(Err(format!("request {id}: {c}")))
            })
            .await;
        seen.unwrap_or_else(|| Err(format!("no response to request {id} within the bound")))
    }

    async fn call(&mut self, key: &str, args: Option<serde_json::Map<String, Value>>) -> Result<Value, String> {
        let id = self.send(key, Hold::default(), args).await?;
        self.response(&id).await
    }

    async fn effects(&mut self) -> Result<i64, String> {
        effects(&mut self.session, self.baseline).await
    }
}

/// Effects counted since `baseline`, from a settled reading.
async fn effects(session: &mut Session, baseline: f64) -> Result<i64, String> {
    let r = session.read_stable().await?;
    session.opts.observer.effects(baseline, r)
}

fn is_rejection(resp: &Value) -> bool {
    resp.get("error").is_some() || resp.pointer("/result/isError") == Some(&Value::Bool(true))
}

fn result_part(resp: &Value) -> Value {
    let r = resp.get("result").cloned().unwrap_or(Value::Null);
    json!({"content": r.get("content"), "structuredContent": r.get("structuredContent"), "isError": r.get("isError")})
}

/// Another set of arguments for the conflict check: the first number changed, or an extra field.
fn other_args(args: &serde_json::Map<String, Value>) -> serde_json::Map<String, Value> {
    let mut out = args.clone();
    if let Some((k, v)) = args.iter().find(|(_, v)| v.is_number()) {
        out.insert(k.clone(), json!(v.as_f64().unwrap_or(0.0) + 1.0));
    } else {
        out.insert("mcp_once_variant".into(), json!(1));
    }
    out
}

type KeyOutcome = Result<(Status, Option<String>, Value), String>;

async fn completed_key_replay(p: &mut KeyProbe) -> KeyOutcome {
    let key = p.key("completed");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    let second = p.call(&key, None).await?;
    let after_second = p.effects().await?;
    let details = json!({"effects_after_first": after_first, "effects_after_second": after_second, "first": first, "second": second});
    if is_rejection(&first) {
        return Ok((
            Status::Warning,
            Some(format!("Not testable: the first call with a key failed: {first}")),
            details,
        ));
    }
    if after_second > after_first {
        return Ok((
            Status::Failure,
            Some(format!("the second call with the same key ran again ({after_second} effects)")),
            details,
        ));
    }
    if result_part(&first) != result_part(&second) {
        return Ok((
            Status::Failure,
            Some("the second call ran nothing but did not return the stored result".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn in_progress_rejected(p: &mut KeyProbe) -> KeyOutcome {
    if !p.session.pace_args {
        return Ok((
            Status::Warning,
            Some("Not testable: the tool takes no delay argument, so the runner cannot keep a call in progress".into()),
            json!({}),
        ));
    }
    let key = p.key("in-progress");
    // Held after its commit: once its effect is seen, the first call has surely taken the key
    // and is still running, whatever order the server scheduled things in.
    let first = p.send(&key, Hold { before_commit: false, before_respond: true }, None).await?;
    let deadline = Instant::now() + p.session.opts.step_timeout;
    let baseline = p.baseline;
    let seen = p
        .session
        .wait_until(deadline, async |s| match effects(s, baseline).await {
            Ok(n) if n < 1 => None,
            r => Some(r),
        })
        .await;
    seen.unwrap_or_else(|| Err("the first call's effect was not seen within the bound".into()))?;
    let second_id = p.send(&key, Hold::default(), None).await?;
    let second = p.response(&second_id).await?;
    let first_resp = p.response(&first).await?;
    let effects = p.effects().await?;
    // The first call's effect was seen before the duplicate was sent, so the duplicate is the
    // one a server must reject.
    let details = json!({"effects": effects, "first": first_resp, "duplicate": second});
    if effects > 1 {
        return Ok((
            Status::Failure,
            Some(format!("the duplicate ran while the first was in progress ({effects} effects)")),
            details,
        ));
    }
    if !is_rejection(&second) {
        return Ok((
            Status::Failure,
            Some(
                "the duplicate was not rejected while the first was in progress (it was answered as a success)".into(),
            ),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn conflict_rejected(p: &mut KeyProbe) -> KeyOutcome {
    let key = p.key("conflict");
    let first = p.call(&key, None).await?;
    let after_first = p.effects().await?;
    let changed = other_args(&p.session.opts.args);
    let second = p.call(&key, Some(changed.clone())).await?;
    let after_second = p.effects().await?;
    let details = json!({"effects_after_first": after_first, "effects_after_second": after_second, "other_arguments": changed, "second": second});
    if is_rejection(&first) {
        return Ok((
            Status::Warning,
            Some(format!("Not testable: the first call with a key failed: {first}")),
            details,
        ));
    }
    if after_second > after_first {
        return Ok((Status::Failure, Some("the same key with other arguments ran again".into()), details));
    }
    if !is_rejection(&second) {
        return Ok((
            Status::Failure,
            Some("the same key with other arguments was answered as a success, not rejected".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn survives_restart(p: &mut KeyProbe) -> KeyOutcome {
    if !p.session.can_restart() {
        return Ok((
            Status::Warning,
            Some("Not testable: give --launch so the runner can restart the server".into()),
            json!({}),
        ));
    }
    if !p.session.opts.observer.outside_server() {
        return Ok((
            Status::Warning,
            Some("Not testable: a tool observer may lose its count with the process; use ledger: or cmd:".into()),
            json!({}),
        ));
    }
    let key = p.key("restart");
    let first = p.call(&key, None).await?;
    let before = p.effects().await?;
    p.session.kill().await?;
    p.session.start().await.map_err(|e| format!("the server did not come back: {e}"))?;
    let second = p.call(&key, None).await?;
    let after = p.effects().await?;
    let details = json!({"effects_before_restart": before, "effects_after_retry": after, "first": first, "after_restart": second});
    if after > before {
        return Ok((
            Status::Failure,
            Some("dedup does not survive a restart: the same key ran again after SIGKILL and restart".into()),
            details,
        ));
    }
    Ok((Status::Success, None, details))
}

async fn key_checks(options: &ReplayOptions, revision: Revision) -> Vec<CheckRecord> {
    let refs = sep_3182_refs();
    let checks: [(&str, &str, &str); 4] = [
        (
            "sep-3182-completed-key-replay",
            "Completed key replays the stored result",
            "A second call with the key of a completed call returns the stored result and runs nothing",
        ),
        (
            "sep-3182-in-progress-rejected",
            "In-progress duplicate rejected",
            "A call with the key of a call still running is rejected and not run",
        ),
        (
            "sep-3182-key-conflict",
            "Same key, other arguments rejected",
            "A call that reuses a key with other arguments is rejected and not run",
        ),
        (
            "sep-3182-survives-restart",
            "Dedup survives a restart",
            "A call with the key of a completed call still runs nothing after the server is SIGKILLed and restarted",
        ),
    ];
    let mut out = Vec::new();
    for (i, (id, name, description)) in checks.iter().enumerate() {
        let outcome: KeyOutcome = async {
            let mut p = KeyProbe::start(options, revision, id).await?;
            let r = match i {
                0 => completed_key_replay(&mut p).await,
                1 => in_progress_rejected(&mut p).await,
                2 => conflict_rejected(&mut p).await,
                _ => survives_restart(&mut p).await,
            };
            p.session.shutdown().await;
            r
        }
        .await;
        let (status, error, mut details) =
            outcome.unwrap_or_else(|e| (Status::Warning, Some(format!("Not testable: {e}")), json!({})));
        details["untestable"] = json!(status == Status::Warning);
        out.push(CheckRecord {
            id: id.to_string(),
            name: name.to_string(),
            description: description.to_string(),
            status,
            timestamp: now_rfc3339(),
            spec_references: refs.clone(),
            details,
            error_message: error,
        });
    }
    out
}

/// Run the probe: the scenario catalogue for the revision and transport, then (with a key
/// placement) the SEP-3182 checks.
pub async fn probe(options: ReplayOptions, key_checks_on: bool) -> Result<Vec<CheckRecord>, String> {
    let revision = options.revision.unwrap_or(Revision::R2025_11_25);
    let profile_name = match revision {
        Revision::R2025_11_25 => "mcp-2025-11-25",
        Revision::R2026_07_28 => "mcp-2026-07-28",
    };
    let profile = Profile::load(profile_name).map_err(|e| e.to_string())?;
    let mut opts = options.clone();
    opts.revision = Some(revision_for(&options, &profile));
    let mut out = Vec::new();
    for s in SCENARIOS {
        out.push(scenario_check(s, &profile, &opts).await);
    }
    if key_checks_on {
        let sep = Profile::load("sep-3182").map_err(|e| e.to_string())?;
        out.push(scenario_check(&KEYED_SCENARIO, &sep, &opts).await);
        out.extend(key_checks(&opts, revision).await);
    }
    Ok(out)
}

/// The probe's exit code: 1 if a check failed, 2 if none failed and one could not be tested,
/// 0 if all succeeded.
pub fn exit_code(checks: &[CheckRecord]) -> u8 {
    if checks.iter().any(|c| c.status == Status::Failure) {
        1
    } else if checks.iter().any(|c| c.status == Status::Warning) {
        2
    } else {
        0
    }
}

/// The conformance-suite-shaped JSON: `{"checks": [...]}`.
pub fn to_json(checks: &[CheckRecord]) -> Value {
    json!({"checks": checks})
}

/// One line per check, as the suite's console output: `timestamp [id] STATUS description`.
pub fn to_text(checks: &[CheckRecord]) -> String {
    let width = checks.iter().map(|c| c.id.len()).max().unwrap_or(0);
    let mut s = String::new();
    for c in checks {
        let status = match c.status {
            Status::Success => "SUCCESS",
            Status::Failure => "FAILURE",
            Status::Warning => "WARNING",
        };
        s.push_str(&format!("{} [{:<width$}] {:<7} {}\n", c.timestamp, c.id, status, c.description));
        if let Some(e) = &c.error_message {
            s.push_str(&format!("{:>24} {:<width$}  {e}\n", "", ""));
        }
    }
    let count = |st: Status| checks.iter().filter(|c| c.status == st).count();
    s.push_str(&format!(
        "{} checks: {} success, {} failure, {} warning\n",
        checks.len(),
        count(Status::Success),
        count(Status::Failure),
        count(Status::Warning)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 24, "{t}");
        assert!(t.ends_with('Z') && t.as_bytes()[10] == b'T', "{t}");
    }

    #[test]
    fn citations_become_spec_urls() {
        let c = mcp_once_model::Citation {
            revision: "2025-11-25".into(),
            path: "docs/specification/2025-11-25/basic/lifecycle.mdx".into(),
            section: "Timeouts".into(),
            quote: String::new(),
            note: None,
        };
        assert_eq!(reference(&c).url, "https://modelcontextprotocol.io/specification/2025-11-25/basic/lifecycle");
    }

    #[test]
    fn the_catalogue_has_a_trace_per_scenario_on_both_transports() {
        let profile = Profile::load("mcp-2025-11-25").unwrap();
        for t in [mcp_once_model::Transport::Stdio, mcp_once_model::Transport::Http] {
            for s in SCENARIOS {
                let traces = scenario_traces(s, &profile, t).unwrap();
                assert!(!traces.is_empty(), "{} over {}", s.id, t.as_str());
            }
            let keyed = scenario_traces(&KEYED_SCENARIO, &Profile::load("sep-3182").unwrap(), t).unwrap();
            assert!(!keyed.is_empty(), "keyed scenario over {}", t.as_str());
        }
    }
}
