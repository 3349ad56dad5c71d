//! What a client did, read from the records of its scenario runs: attempts per logical call,
//! cancellation on its own timeout, whether a retry reused the id, the key, the connection, the
//! backoff; then the model's `--client` and `--key` names for it, or where it is outside them.

use mcp_once_model::profile::{KeyPlacement, RetryId};
use mcp_once_model::state::Failure;
use mcp_once_model::{ClientPolicy, KeyLifetime};
use serde::Serialize;
use serde_json::Value;

use crate::probe_client::runner::ScenarioRun;
use crate::probe_client::scenario::Scenario;

/// One scenario, as the record shows it.
#[derive(Clone, Debug, Serialize)]
pub struct Observed {
    /// The scenario's name.
    pub scenario: &'static str,
    /// What the server did.
    pub server: &'static str,
    /// `tools/call` requests of the tool that arrived (the one logical call's attempts).
    pub attempts: usize,
    /// Effects taken (one per executed call, every process counted).
    pub effects: usize,
    /// The JSON-RPC id of each attempt.
    pub request_ids: Vec<Value>,
    /// The connection of each attempt (`stdio:PID`, `http:N`) and its session, if any.
    pub connections: Vec<String>,
    /// The idempotency key of each attempt (null: none) and where the first was found.
    pub keys: Vec<Value>,
    /// Where the key was (`params.idempotencyKey`, `_meta.NAME`, `arguments.NAME`).
    pub key_at: Option<String>,
    /// `notifications/cancelled` the client sent.
    pub cancels: usize,
    /// For a held answer: what ended the hold (cancelled, sent-again, disconnected, hold-limit).
    pub woke: Option<String>,
    /// Milliseconds from the server's last event (answer, cancel, exit) to each retry.
    pub backoff_ms: Vec<u64>,
    /// For a held answer: how long it was held before the client gave up (its timeout).
    pub held_ms: Option<u64>,
    /// For each retry: whether the client opened a new MCP connection first (a new server
    /// process, an `initialize` / `server/discover` handshake since the previous attempt, or
    /// another HTTP session id). A new TCP connection within one session is not one.
    pub new_connection: Vec<bool>,
    /// Server processes that served the run.
    pub processes: usize,
    /// The client's exit code (null: killed).
    pub exit: Option<i32>,
    /// The client was killed at the run's bound.
    pub killed_at_bound: bool,
    /// How long the client ran.
    pub elapsed_ms: u64,
}

impl Observed {
    /// Read one scenario's record.
    pub fn of(run: &ScenarioRun) -> Observed {
        let lines = &run.record;
        let of_kind = |k: &'static str| lines.iter().filter(move |l| l["kind"] == k);
        let attempts: Vec<&Value> = of_kind("attempt").collect();
        let connection = |a: &Value| match a["session"].as_str() {
            Some(s) => format!("{} session {s}", a["conn"].as_str().unwrap_or("?")),
            None => a["conn"].as_str().unwrap_or("?").to_string(),
        };
        let mut backoff_ms = Vec::new();
        let mut new_connection = Vec::new();
        // In file order: the lines between two attempts are what happened before the retry.
        let at: Vec<usize> = (0..lines.len()).filter(|i| lines[*i]["kind"] == "attempt").collect();
        for pair in at.windows(2) {
            let (first, next) = (&lines[pair[0]], &lines[pair[1]]);
            let between = &lines[pair[0] + 1..pair[1]];
            let handshake = between.iter().any(|l| {
                l["kind"] == "frame"
                    && matches!(l["message"]["method"].as_str(), Some("initialize" | "server/discover"))
            });
            // A new session id is a new session even where its handshake was not recorded
            // between the two attempts (a client that opens its sessions up front).
            new_connection.push(handshake || first["pid"] != next["pid"] || first["session"] != next["session"]);
            let t = |l: &Value| l["t_ms"].as_u64().unwrap_or(0);
            let last_event = between
                .iter()
                .filter(|l| matches!(l["kind"].as_str(), Some("answer" | "cancelled" | "eof" | "end")))
                .map(t)
                .max()
                .unwrap_or(t(first));
            backoff_ms.push(t(next).saturating_sub(last_event));
        }
        let mut pids: Vec<u64> = of_kind("start").filter_map(|l| l["pid"].as_u64()).collect();
        pids.dedup();
        Observed {
            scenario: run.scenario.as_str(),
            server: run.scenario.describe(),
            attempts: attempts.len(),
            effects: of_kind("effect").count(),
            request_ids: attempts.iter().map(|a| a["request_id"].clone()).collect(),
            connections: attempts.iter().map(|a| connection(a)).collect(),
            keys: attempts.iter().map(|a| a["key"].clone()).collect(),
            key_at: attempts.iter().find_map(|a| a["key_at"].as_str().map(str::to_string)),
            cancels: of_kind("cancelled").count(),
            woke: of_kind("answer").find_map(|a| a["woke"].as_str().map(str::to_string)),
            held_ms: of_kind("answer")
                .find(|a| a["woke"].as_str().is_some_and(|w| w != "hold-limit"))
                .and_then(|a| a["held_ms"].as_u64()),
            backoff_ms,
            new_connection,
            processes: pids.len(),
            exit: run.exit,
            killed_at_bound: run.killed_at_bound,
            elapsed_ms: run.elapsed_ms,
        }
    }

    /// The client sent the call more than once.
    pub fn retried(&self) -> bool {
        self.attempts > 1
    }
}

/// The model's client policy for this client, or why it is outside the model.
#[derive(Clone, Debug, Serialize)]
pub struct PolicyFound {
    /// The model's name, when the client is inside the model.
    pub name: Option<ClientPolicy>,
    /// The policy the model is checked with: the name, or the closest over-approximation.
    pub checked_as: ClientPolicy,
    /// Why it is outside the model, in plain words (none when inside).
    pub outside: Option<String>,
    /// Faults no scenario run exercised (the name assumes no retry after them).
    pub unobserved: Vec<&'static str>,
}

/// The model's key lifetime for this client.
#[derive(Clone, Debug, Serialize)]
pub struct KeyFound {
    /// The model's name.
    pub name: KeyLifetime,
    /// What could not be told apart, if anything.
    pub note: Option<String>,
    /// Where the key travelled (`params.idempotencyKey`, `_meta.NAME`, `arguments.NAME`; null:
    /// no key).
    pub at: Option<String>,
}

impl KeyFound {
    /// Where the key travelled, in a profile's terms (None: no key was seen).
    pub fn placement(&self) -> Option<KeyPlacement> {
        let at = self.at.as_deref()?;
        Some(if at == "params.idempotencyKey" {
            KeyPlacement::Params
        } else if at.starts_with("_meta.") {
            KeyPlacement::Meta
        } else {
            KeyPlacement::Argument
        })
    }
}

/// The client, classified.
#[derive(Clone, Debug, Serialize)]
pub struct ClientProfile {
    /// Retry policy.
    pub policy: PolicyFound,
    /// Key lifetime.
    pub key: KeyFound,
    /// The most attempts of one logical call in any scenario.
    pub attempts: usize,
    /// Whether it sent `notifications/cancelled` when its own timeout fired (null: not seen:
    /// the timeout scenario was not run, or the client did not give up within the hold).
    pub cancels_on_timeout: Option<bool>,
    /// Whether a retry reused the JSON-RPC id (`same`, `new`; null: no retry seen).
    pub retry_id: Option<RetryId>,
    /// Whether a retry came on a new connection or session (null: no retry seen).
    pub new_connection: Option<bool>,
    /// The client's own timeout as measured: how long a held answer waited before the client
    /// gave up (null: not seen).
    pub timeout_ms: Option<u64>,
    /// What the classification rests on beyond the counts, in plain words.
    pub notes: Vec<String>,
}

fn retried_in(runs: &[Observed], scenarios: &[Scenario]) -> Option<bool> {
    let seen: Vec<bool> =
        runs.iter().filter(|o| scenarios.iter().any(|s| s.as_str() == o.scenario)).map(Observed::retried).collect();
    (!seen.is_empty()).then(|| seen.iter().any(|r| *r))
}

/// Why a retry after a dropped connection was a retry on the client's timeout, if it was: the
/// client cancelled the dropped requests and each attempt lasted a client timeout (it was still
/// waiting for them: its timeout fired), or the retry came one client timeout after the drop
/// (it did not see the drop).
fn drop_seen_as_timeout(o: &Observed, timeout_ms: Option<u64>) -> Option<String> {
    let timed_out_each = |t: u64| o.elapsed_ms >= t * o.attempts.saturating_sub(1) as u64;
    if o.cancels > 0 && timeout_ms.is_some_and(timed_out_each) {
        return Some(format!(
            "after the dropped connection it sent notifications/cancelled ({}) for the dropped request, so it was still waiting for it: the drop surfaced as its own timeout, and the retry counts as a retry on timeout",
            o.cancels
        ));
    }
    match (timeout_ms, o.backoff_ms.first()) {
        (Some(t), Some(&b)) if b.abs_diff(t) <= (t / 4).max(100) => Some(format!(
            "after the dropped connection it waited {b} ms, its own timeout, then retried: the drop surfaced as a timeout, so it counts as a retry on timeout"
        )),
        _ => None,
    }
}

/// Classify a client from its scenario runs.
pub fn classify(runs: &[Observed]) -> ClientProfile {
    let held = |s: Scenario| runs.iter().find(|o| o.scenario == s.as_str()).and_then(|o| o.held_ms);
    let timeout_ms = held(Scenario::Timeout).or_else(|| held(Scenario::Never));
    let mut notes = Vec::new();
    let timeout = retried_in(runs, &[Scenario::Timeout, Scenario::Never]);
    let mut disconnect = retried_in(runs, &[Scenario::Disconnect]);
    if let Some(o) = runs.iter().find(|o| o.scenario == Scenario::Disconnect.as_str() && o.retried()) {
        if let Some(why) = drop_seen_as_timeout(o, timeout_ms) {
            notes.push(why);
            disconnect = Some(false);
        }
    }
    let error = retried_in(runs, &[Scenario::Error, Scenario::IsError]);
    let success = retried_in(runs, &[Scenario::Ok]);
    let mut unobserved = Vec::new();
    for (seen, fault) in [(timeout, "timeout"), (disconnect, "disconnect"), (error, "error reply")] {
        if seen.is_none() {
            unobserved.push(fault);
        }
    }
    let (t, d, e) = (timeout == Some(true), disconnect == Some(true), error == Some(true));
    let (name, outside) = if success == Some(true) {
        (None, Some("it sent the call again after a successful answer (a framework re-run?)".to_string()))
    } else {
        // The model's client policy that retries after exactly these failures, if one does.
        let fits = |p: &&ClientPolicy| {
            !p.reruns_the_step()
                && [(Failure::Timeout, t), (Failure::Disconnect, d), (Failure::ErrorReply, e)]
                    .into_iter()
                    .all(|(failure, retried)| p.retries_after(failure) == retried)
        };
        match ClientPolicy::ALL.iter().find(fits) {
            Some(&policy) => (Some(policy), None),
            None => {
                let list = |want: bool| {
                    let v: Vec<&str> = [(t, "timeout"), (d, "disconnect"), (e, "error reply")]
                        .into_iter()
                        .filter(|(r, _)| *r == want)
                        .map(|(_, n)| n)
                        .collect();
                    v.join(", ")
                };
                (None, Some(format!("it retries after {} but not after {}", list(true), list(false))))
            }
        }
    };
    let checked_as = match (name, success == Some(true)) {
        (Some(n), _) => n,
        (None, true) => ClientPolicy::FrameworkRetry,
        (None, false) => ClientPolicy::RetryAny,
    };
    let attempts = runs.iter().map(|o| o.attempts).max().unwrap_or(0);
    let retries: Vec<&Observed> = runs.iter().filter(|o| o.retried()).collect();
    let retry_id =
        retries
            .first()
            .map(|o| if o.request_ids.windows(2).all(|w| w[0] == w[1]) { RetryId::Same } else { RetryId::New });
    // Any retry of any scenario on a new connection: the table shows every scenario, so the
    // summary must not rest on the first alone.
    let new_connection = (!retries.is_empty()).then(|| retries.iter().flat_map(|o| &o.new_connection).any(|n| *n));
    let timed =
        runs.iter().find(|o| o.scenario == Scenario::Timeout.as_str() && o.woke.as_deref() != Some("hold-limit"));
    // Over HTTP a closed response stream is the cancellation (rmcp cancels the handler on it).
    let over_http = |o: &Observed| o.connections.first().is_some_and(|c| c.starts_with("http"));
    let stream_closed = |o: &Observed| {
        o.cancels == 0 && over_http(o) && matches!(o.woke.as_deref(), Some("cancelled" | "disconnected"))
    };
    // Without a timeout run that ended on the client, a `never` run where it cancelled says so.
    let never = runs.iter().find(|o| o.scenario == Scenario::Never.as_str() && (o.cancels > 0 || stream_closed(o)));
    let cancels_on_timeout = timed.map(|o| o.cancels > 0 || stream_closed(o)).or(never.map(|_| true));
    if let Some(o) = timed.filter(|o| stream_closed(o)) {
        notes.push(format!(
            "under {} it cancelled by closing the request's response stream, not with notifications/cancelled",
            o.scenario
        ));
    }
    if runs.iter().any(|o| o.scenario == Scenario::Timeout.as_str() && o.woke.as_deref() == Some("hold-limit")) {
        notes.push("its timeout did not fire within the server's hold (raise --hold-ms to see it)".into());
    }
    ClientProfile {
        policy: PolicyFound { name, checked_as, outside, unobserved },
        key: key_found(runs),
        attempts,
        cancels_on_timeout,
        retry_id,
        new_connection,
        timeout_ms,
        notes,
    }
}

fn key_found(runs: &[Observed]) -> KeyFound {
    let any_key = runs.iter().flat_map(|o| &o.keys).any(|k| !k.is_null());
    if !any_key {
        return KeyFound { name: KeyLifetime::None, note: None, at: None };
    }
    let at = runs.iter().find_map(|o| o.key_at.clone());
    let retried: Vec<&Observed> = runs.iter().filter(|o| o.retried()).collect();
    if retried.is_empty() {
        let note = "a key was sent but no retry was seen, so per-call and per-attempt are not told apart (checked as per-call)";
        return KeyFound { name: KeyLifetime::PerCall, note: Some(note.into()), at };
    }
    let same = retried.iter().all(|o| o.keys.windows(2).all(|w| w[0] == w[1] && !w[0].is_null()));
    if same {
        let note =
            "a framework re-run that makes a new key (per-step) looks the same from the server unless the step fails";
        KeyFound { name: KeyLifetime::PerCall, note: Some(note.into()), at }
    } else {
        KeyFound { name: KeyLifetime::PerAttempt, note: None, at }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn observed(scenario: Scenario, attempts: usize, backoff: Vec<u64>, held: Option<u64>) -> Observed {
        Observed {
            scenario: scenario.as_str(),
            server: scenario.describe(),
            attempts,
            effects: attempts,
            request_ids: (0..attempts).map(|i| json!(i + 2)).collect(),
            connections: vec!["stdio:1".into(); attempts],
            keys: vec![Value::Null; attempts],
            key_at: None,
            cancels: usize::from(held.is_some()),
            woke: held.map(|_| "cancelled".into()),
            backoff_ms: backoff,
            held_ms: held,
            new_connection: vec![false; attempts.saturating_sub(1)],
            processes: 1,
            exit: Some(1),
            killed_at_bound: false,
            elapsed_ms: 0,
        }
    }

    #[test]
    fn the_policy_follows_the_faults_retried_after() {
        let timeout = observed(Scenario::Timeout, 2, vec![1], Some(1000));
        let once = |s| observed(s, 1, vec![], None);
        let c = classify(&[timeout.clone(), once(Scenario::Disconnect), once(Scenario::Error)]);
        assert_eq!((c.policy.name, c.key.name, c.attempts), (Some(ClientPolicy::RetryOnTimeout), KeyLifetime::None, 2));
        assert_eq!((c.retry_id, c.new_connection, c.cancels_on_timeout), (Some(RetryId::New), Some(false), Some(true)));
        let plain = classify(&[observed(Scenario::Timeout, 1, vec![], Some(1000))]);
        assert_eq!(plain.policy.name, Some(ClientPolicy::NoRetry));
        assert_eq!(plain.policy.unobserved, ["disconnect", "error reply"]);
        let error = observed(Scenario::Error, 2, vec![5], None);
        let odd = classify(&[timeout.clone(), once(Scenario::Disconnect), error]);
        assert_eq!((odd.policy.name, odd.policy.checked_as), (None, ClientPolicy::RetryAny));
        assert!(odd.policy.outside.unwrap().contains("but not after disconnect"));
    }

    #[test]
    fn a_drop_the_client_only_notices_by_its_timeout_is_a_timeout_retry() {
        let timeout = observed(Scenario::Timeout, 2, vec![1], Some(1000));
        let late = observed(Scenario::Disconnect, 2, vec![1003], None);
        let c = classify(&[timeout.clone(), late]);
        assert_eq!(c.policy.name, Some(ClientPolicy::RetryOnTimeout), "{:?}", c.notes);
        let at_once = observed(Scenario::Disconnect, 2, vec![3], None);
        assert!(
            classify(&[timeout.clone(), at_once.clone()]).policy.outside.is_some(),
            "retries on both: not a model policy"
        );
        // The TypeScript SDK over HTTP: the drop is not seen, the timeout fires, the SDK cancels
        // the request and the wrapper retries at once: the cancellation says it was a timeout.
        let cancelled_at_once = Observed { cancels: 1, elapsed_ms: 40, ..at_once.clone() };
        assert!(
            classify(&[timeout.clone(), cancelled_at_once]).policy.outside.is_some(),
            "a cancel at the drop is no timeout"
        );
        let cancelled = Observed { cancels: 1, elapsed_ms: 2100, ..at_once };
        let c = classify(&[timeout, cancelled]);
        assert_eq!(c.policy.name, Some(ClientPolicy::RetryOnTimeout), "{:?}", c.notes);
        assert!(c.notes.iter().any(|n| n.contains("notifications/cancelled")), "{:?}", c.notes);
    }

    #[test]
    fn keys_per_call_or_per_attempt() {
        let mut same = observed(Scenario::Timeout, 2, vec![1], Some(1000));
        same.keys = vec![json!("k"), json!("k")];
        assert_eq!(classify(&[same.clone()]).key.name, KeyLifetime::PerCall);
        same.keys = vec![json!("k1"), json!("k2")];
        assert_eq!(classify(&[same.clone()]).key.name, KeyLifetime::PerAttempt);
        for (at, placement) in [
            ("params.idempotencyKey", KeyPlacement::Params),
            ("arguments.idempotency_key", KeyPlacement::Argument),
            ("_meta.io.example/key", KeyPlacement::Meta),
        ] {
            same.key_at = Some(at.into());
            let key = classify(&[same.clone()]).key;
            assert_eq!((key.at.as_deref(), key.placement()), (Some(at), Some(placement)));
        }
        let none = classify(&[observed(Scenario::Timeout, 2, vec![1], Some(1000))]).key;
        assert_eq!((none.name, none.placement()), (KeyLifetime::None, None));
    }

    /// Two attempts in two HTTP sessions with no handshake recorded between them (a client that
    /// opened both sessions first) are on a new connection; two TCP connections in one session
    /// are not; and the summary takes every retried scenario, not the first.
    #[test]
    fn a_retry_in_another_session_is_on_a_new_connection() {
        let attempt = |conn: u64, session: &str, t: u64| json!({"kind": "attempt", "conn": format!("http:{conn}"), "session": session, "t_ms": t, "request_id": t});
        let run = |record: Vec<Value>, scenario| {
            Observed::of(&ScenarioRun { scenario, record, exit: Some(0), killed_at_bound: false, elapsed_ms: 5 })
        };
        let two_sessions = run(vec![attempt(1, "a", 1), attempt(2, "b", 2)], Scenario::Timeout);
        assert_eq!(two_sessions.new_connection, [true]);
        let one_session = run(vec![attempt(1, "a", 1), attempt(2, "a", 2)], Scenario::Disconnect);
        assert_eq!(one_session.new_connection, [false]);
        assert_eq!(classify(&[one_session.clone(), two_sessions.clone()]).new_connection, Some(true));
        assert_eq!(classify(&[one_session]).new_connection, Some(false));
    }
}
