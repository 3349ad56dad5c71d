//! The stateright [`Model`]: which actions each state allows, and what each does.
//!
//! What it models: one client making up to four logical `tools/call`s in order (they may
//! overlap), each with attempts; one server process with volatile memory and a durable ledger;
//! the transport between them (stdio: one pipe each way, read in order; Streamable HTTP: one
//! request and one response stream per attempt, in any order); client timeouts, cancellation
//! per transport and revision, broken HTTP streams, server crashes (SIGKILL) and restarts,
//! client retries, framework re-runs, idempotency keys and JSON-RPC ids as dedup keys, key
//! records that expire, outcome queries, and task-augmented calls (`tasks.rs`, `task_steps.rs`).
//!
//! What it leaves out, on purpose:
//! - Time. A timeout, a crash or a broken stream can happen at any moment; durations are not
//!   modelled, so everything a real clock allows is covered, and more.
//! - Arguments. Every attempt of one logical call carries the same arguments, so "same key,
//!   other arguments" never arises here; the conformance probe checks that rule on servers.
//! - Message loss on a live stdio pipe (pipes do not lose bytes); responses already written
//!   before a crash are still read by the client. Requests not yet read die with the process.
//! - A cancellation overtaking its own request: the server reads a request before its
//!   cancellation (stdio is one ordered pipe; on HTTP the stream belongs to the request).
//! - Cancellations sent to servers that ignore them are not put in flight: reading one would
//!   change nothing, so leaving it out cannot hide a violation. The same holds for a
//!   cancellation sent once the handler is past every point where it could still stop
//!   ([`Cancellation`]): past the effect for `before-effect`; past the key record for
//!   `interrupts` (all that is left then is a response nobody waits for).
//! - HTTP session re-initialisation after a restart, or after the server ended the session
//!   (`session.rs`), is taken as immediate and lossless.
//! - The outcome query is one atomic exchange with the running server; its own loss is not
//!   modelled. Over stdio it is answered only once the server has read everything written
//!   before it (one ordered pipe); over HTTP it is a request of its own and may overtake.

use crate::action::Action;
use crate::applicable::NotApplicable;
use crate::config::{Cancellation, Config, KeyLifetime, Resumption, ServerImpl, Tasks, Transport};
use crate::profile::{HttpCancel, IdScope, InProgress, KeySemantics, Profile, Resumability, RetryId, StdioCancel};
use crate::state::{Attempt, ClientSide, Failure, Msg, Phase, ServerSide, State, View, MAX_ATTEMPTS, MAX_IDS};
use stateright::Model;
use std::sync::Arc;

/// The knob values the model reads on every step, taken from the profile once.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Rules {
    pub(crate) ordered: bool,
    id_scope: IdScope,
    retry_id: RetryId,
    cancel_on_timeout: bool,
    disconnect_cancels: bool,
    streams_resume: bool,
    pub(crate) semantics: KeySemantics,
    /// What a dedup server does with a duplicate of a request still running.
    pub(crate) in_progress: InProgress,
    /// Whether a `key-expiring` server's records may leave before a retry arrives: the
    /// retention window is not known to outlive the clients' retry horizon.
    pub(crate) records_expire: bool,
    /// Whether the profile bars a client's own retry after a timeout of this tool (by its
    /// annotations, `retry_after_timeout`); the client policies honour it, a framework re-run
    /// does not read annotations.
    pub(crate) timeout_retry_barred: bool,
}

/// The model of one configuration under one profile. It checks nothing by itself: a search
/// chooses what to look for (see `search::WithCheck`).
#[derive(Clone, Debug)]
pub struct McpModel {
    /// The configuration.
    pub config: Config,
    /// The resolved profile.
    pub profile: Arc<Profile>,
    /// Which facts states are compared on (see [`View`]).
    pub view: View,
    pub(crate) rules: Rules,
}

impl McpModel {
    /// Build the model; `Err` if the configuration does not apply under the profile.
    pub fn new(config: Config, profile: impl Into<Arc<Profile>>) -> Result<McpModel, NotApplicable> {
        let profile = profile.into();
        let mut config = config.normalised();
        config.applicable(&profile)?;
        // A `--key-scope` equal to the profile's is the profile's cell.
        let scope = profile.knobs.idempotency_key_scope.value.in_force();
        config.key_scope = config.key_scope.filter(|s| *s != scope);
        let k = &profile.knobs;
        let http = config.transport == Transport::Http;
        let rules = Rules {
            ordered: !http,
            id_scope: k.request_id_scope.value,
            retry_id: k.retry_request_id.value,
            // A task-augmented request is cancelled only with `tasks/cancel` (`tasks.rs`).
            cancel_on_timeout: k.timeout_sends_cancel.value
                && (http || k.stdio_cancel.value != StdioCancel::None)
                && config.tasks == Tasks::None,
            disconnect_cancels: http
                && (k.http_disconnect_is_cancel.value || k.http_cancel.value == HttpCancel::CloseStream)
                && config.tasks == Tasks::None,
            // Every server resumes, or (where a server may) this one does and its client
            // reconnects to take the response (`--resumption used`).
            streams_resume: k.sse_resumability.value == Resumability::Required
                || (k.sse_resumability.value == Resumability::Optional && config.resumption == Resumption::Used),
            semantics: k.idempotency_semantics.value,
            in_progress: k.idempotency_in_progress.value,
            records_expire: config.server == ServerImpl::KeyExpiring
                && k.idempotency_retention.value.may_expire_before(k.retry_horizon.value),
            timeout_retry_barred: k.retry_after_timeout.value.bars(config.annotation),
        };
        let view = View {
            // The single-use handler's record of consumed requestStates names the attempt whose
            // input-required answer carried each, which the view leaves out of an attempt the
            // client is done with: its cells are searched with every fact compared.
            detail: config.handler.single_use(),
            ids_matter: config.server.uses_ids(),
            ids_outstanding: rules.id_scope == IdScope::Outstanding,
            ids_reused: rules.retry_id == RetryId::Same,
            lean: true,
            inbox_sorted: http,
            instances: config.deployment.instances,
            step_matters: config.key == KeyLifetime::PerStep,
            // A retry barred after a timeout only makes the kind of a failure matter.
            failure_matters: config.client.acts_on_the_failure_kind() || rules.timeout_retry_barred,
            crash_bound: config.bounds.crashes,
            session_bound: config.session_terminations,
            two_callers: config.callers > 1,
        };
        Ok(McpModel { config, profile, view, rules })
    }

    /// The same model with every reduction off: states compared in full, every server step
    /// offered. Used to prove that the reductions change no verdict and no trace length.
    pub fn without_reductions(&self) -> McpModel {
        McpModel { view: View { detail: true, ..self.view }, ..self.clone() }
    }

    /// The same model with the given view (which facts states are compared on); tests use it
    /// to compare reductions.
    pub fn with_view(&self, view: View) -> McpModel {
        McpModel { view, ..self.clone() }
    }

    /// Retries (and framework re-runs) call `c` has used: its attempts after the first, less
    /// its MRTR continuations (an attempt whose round is past the one before it, or that
    /// follows a replayed input-required answer the client read: that one may carry an earlier
    /// round's input request, so its continuation need not be of a later round).
    fn retries_used(s: &State, c: usize) -> u8 {
        let sent = s.calls[c].sent as usize;
        let continues = |a: usize| {
            let (before, t) = (s.attempts[c][a - 1], s.attempts[c][a]);
            t.round > before.round
                || (before.server == ServerSide::RespondedReplayInput && before.client == ClientSide::Answered)
        };
        let continuations = (1..sent).filter(|a| continues(*a)).count();
        (sent.saturating_sub(1) - continuations) as u8
    }

    /// The round of the continuation call `c` sends next: it answers the input request the
    /// client read, the one of the round after that answer's request (for a replayed answer,
    /// the round of the request it was stored for, not of the request that found it).
    fn continuation_round(s: &State, c: usize) -> u8 {
        let asked = |t: &Attempt| match t.server {
            ServerSide::RespondedReplayInput => t.replayed_round,
            _ => t.round,
        };
        s.latest(c).map_or(0, |a| asked(&s.attempts[c][a])) + 1
    }

    /// Whether call `c` may send its continuation and still have, within the model's
    /// `MAX_ATTEMPTS` requests a call, room for every request its later rounds and its retries
    /// left may need (`Config::applicable` sizes the bounds so for the handler's own rounds).
    /// An id table's replayed input request can cost a continuation more than the rounds (the
    /// answer of an earlier round); a call with no room for it is left asking for input,
    /// neither succeeded nor failed, so no property reads it: paths past that point are not
    /// explored (a bound of the model, never a violation it makes up).
    fn room_to_continue(&self, s: &State, c: usize) -> bool {
        let rounds = self.config.handler.rounds as usize;
        let later_rounds = rounds.saturating_sub(Self::continuation_round(s, c) as usize);
        let retries_left = (self.config.bounds.retries as usize).saturating_sub(Self::retries_used(s, c) as usize);
        let retry_requests =
            if self.config.client.reruns_the_step() { retries_left * (1 + rounds) } else { retries_left };
        s.calls[c].sent as usize + 1 + later_rounds + retry_requests <= MAX_ATTEMPTS
    }

    /// Whether a cancellation sent while the server has attempt `t` at `side` can still change
    /// what the handler does, so is put in flight: before the effect for `before-effect`, also
    /// between the effect and a separate key record for `interrupts`.
    fn cancel_can_stop(&self, side: ServerSide) -> bool {
        match self.config.cancel() {
            Cancellation::Ignores => false,
            Cancellation::BeforeEffect => {
                matches!(side, ServerSide::Unseen | ServerSide::Waiting | ServerSide::Pending)
            }
            Cancellation::Interrupts => {
                matches!(side, ServerSide::Unseen | ServerSide::Waiting | ServerSide::Pending | ServerSide::Effected)
            }
        }
    }

    /// The server reads the cancellation of `(c, a)`: the handler stops if it still can (see
    /// [`Cancellation`]). Before the effect the request is dropped, and its running key (or
    /// in-progress id) is released; between the effect and the key record the record is never
    /// written. No response is written either way.
    fn read_cancel(&self, s: &mut State, c: usize, a: usize) {
        let t = s.attempts[c][a];
        if !self.cancel_can_stop(t.server) || t.server == ServerSide::Unseen {
            return;
        }
        s.attempts[c][a].server = match t.server {
            ServerSide::Pending | ServerSide::Waiting => ServerSide::Dropped,
            _ => ServerSide::Interrupted,
        };
        let st = self.store_of(s, c, a);
        // A duplicate waiting on its key never held the key's in-progress mark; a validating
        // receiver keeps the record of a cancelled task (its id stays taken).
        if t.key != 0 && t.server != ServerSide::Waiting && !self.config.server.validates_ids() {
            s.keys_running[st][c] &= !Self::key_bit(t.key);
        }
        if t.server == ServerSide::Pending && self.config.server.uses_ids() {
            s.ids_seen[st][t.id as usize] = 0;
        }
    }

    /// Whether call `c` may still be retried (by the client, after an outcome query where the
    /// profile has one, or by the framework).
    pub fn may_retry(&self, s: &State, c: usize) -> bool {
        let call = &s.calls[c];
        if call.phase != Phase::Failed || Self::retries_used(s, c) >= self.config.bounds.retries {
            return false;
        }
        let barred = self.rules.timeout_retry_barred && call.failure == Failure::Timeout;
        self.config.client.reruns_the_step() || (self.config.client.retries_after(call.failure) && !barred)
    }

    /// Whether call `c` has been reported to the caller as failed, for good.
    pub fn finally_failed(&self, s: &State, c: usize) -> bool {
        s.calls[c].phase == Phase::Failed && !self.may_retry(s, c)
    }

    fn uses_status_query(&self) -> bool {
        self.rules.semantics == KeySemantics::StatusQuery && self.config.key != KeyLifetime::None
    }

    /// The JSON-RPC id a new attempt gets: the lowest id its profile allows, which is what an
    /// SDK's counter does and what makes an id collision as likely as the rules permit. An MRTR
    /// continuation, and a retry of one (it carries the same input), also avoids the id of the
    /// request whose input-required answer it answers ("The JSON-RPC `id` **MUST** be different
    /// between the initial request and the retry", mrtr.mdx), and no other.
    fn next_id(&self, s: &State, c: usize, a: usize, round: u8, continuation: bool) -> u8 {
        if self.rules.retry_id == RetryId::Same && a > 0 && !continuation {
            return s.attempts[c][a - 1].id;
        }
        let answered = crate::request_state::answered_request(s, c, a, round).map(|x| s.attempts[c][x].id);
        let earlier = |id: u8| answered == Some(id);
        match self.rules.id_scope {
            IdScope::Session => (s.next_id..=MAX_IDS as u8).find(|id| !earlier(*id)).expect("ids exhausted"),
            IdScope::Outstanding => {
                let outstanding = |id: u8| {
                    s.attempts.iter().flatten().any(|t| {
                        t.id == id
                            && matches!(t.client, ClientSide::Waiting | ClientSide::Abandoned | ClientSide::Broken)
                    })
                };
                (1..=MAX_IDS as u8).find(|id| !outstanding(*id) && !earlier(*id)).expect("ids exhausted")
            }
        }
    }

    fn send_attempt(&self, s: &mut State, c: usize, step: u8, round: u8, continuation: bool) {
        let a = s.calls[c].sent as usize;
        let id = self.next_id(s, c, a, round, continuation);
        if self.rules.id_scope == IdScope::Session && id >= s.next_id {
            s.next_id = id + 1;
        }
        let up = s.server.any_up();
        s.attempts[c][a] = Attempt {
            id,
            key: self.key_of(s, c, a, step, round),
            round,
            client: ClientSide::Waiting,
            server: if up { ServerSide::Unseen } else { ServerSide::Lost },
            instance: 0,
            replayed_round: 0,
            task: false,
            foreign: false,
        };
        if up {
            s.inbox.push(Msg::request(c, a), self.rules.ordered);
        }
        let call = &mut s.calls[c];
        call.sent += 1;
        call.step = step;
        call.phase = Phase::Waiting;
        call.failure = Failure::None;
        call.queried = false;
    }

    fn fail(s: &mut State, c: usize, failure: Failure) {
        s.calls[c].phase = Phase::Failed;
        s.calls[c].failure = failure;
        s.calls[c].queried = false;
    }
}

fn idx(call: u8, attempt: u8) -> (usize, usize) {
    (call as usize, attempt as usize)
}

impl Model for McpModel {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        let mut s = State::initial(self.view);
        s.server.up = std::array::from_fn(|i| i < self.config.deployment.instances as usize);
        vec![s]
    }

    fn actions(&self, s: &State, out: &mut Vec<Action>) {
        let cfg = &self.config;
        let framework = cfg.client.reruns_the_step();
        for c in 0..cfg.bounds.calls as usize {
            let call = s.calls[c];
            let c8 = c as u8;
            match call.phase {
                Phase::Idle => {
                    if c == 0 || s.calls[c - 1].phase != Phase::Idle {
                        out.push(Action::ClientCall { call: c8 });
                    }
                    continue;
                }
                Phase::Waiting => {
                    let a = s.latest(c).expect("waiting without an attempt");
                    let t = s.attempts[c][a];
                    let a8 = a as u8;
                    if t.server.responded() || self.task_handle_readable(s, c, a) {
                        out.push(Action::ClientReceive { call: c8, attempt: a8 });
                    }
                    if t.server == ServerSide::Lost {
                        out.push(Action::ClientSeesDisconnect { call: c8, attempt: a8 });
                    }
                    // A client holding a task id polls the task: no timeout, no stream.
                    if self.polls_task(s, c, a) {
                        continue;
                    }
                    out.push(Action::ClientTimeout { call: c8, attempt: a8 });
                    if cfg.transport == Transport::Http && t.server != ServerSide::Lost && !self.rules.streams_resume {
                        out.push(Action::StreamBreak { call: c8, attempt: a8 });
                    }
                }
                Phase::CancelPending => {
                    let a = s.latest(c).expect("cancel without an attempt") as u8;
                    out.push(Action::ClientCancel { call: c8, attempt: a });
                }
                Phase::Failed => {
                    if self.may_retry(s, c) {
                        let next = call.sent;
                        if framework {
                            out.push(Action::FrameworkRetry { call: c8, attempt: next });
                        } else if self.uses_status_query() && !call.queried {
                            // Over stdio the query is written behind whatever the client wrote
                            // before it, and the server reads those first: it is answered only
                            // once nothing is left unread in the pipe. With several instances
                            // (their store shared) any running one answers from that store.
                            if s.server.any_up() && (!self.rules.ordered || s.inbox.iter().next().is_none()) {
                                out.push(Action::ClientQueryOutcome { call: c8 });
                            }
                        } else {
                            out.push(Action::ClientRetry { call: c8, attempt: next });
                        }
                    }
                }
                Phase::Succeeded => {
                    if framework {
                        out.push(Action::StepFails { call: c8 });
                    }
                }
                Phase::InputRequired if self.room_to_continue(s, c) => {
                    out.push(Action::ClientContinue { call: c8, attempt: call.sent })
                }
                Phase::InputRequired => {}
            }
        }
        let instances = cfg.deployment.instances;
        for m in s.inbox.iter() {
            if self.readable(s, m).is_none() {
                continue;
            }
            let (call, attempt) = (m.call() as u8, m.attempt() as u8);
            if m.is_cancel() {
                // A cancellation goes to the instance that holds its request (on 2026-07-28 HTTP
                // it is the close of that request's own stream).
                if s.server.up[s.attempts[m.call()][m.attempt()].instance as usize] {
                    out.push(Action::ServerReceiveCancel { call, attempt });
                }
            } else {
                // The load balancer sends a request to any instance that runs.
                for instance in (0..instances).filter(|i| s.server.up[*i as usize]) {
                    out.push(Action::ServerReceive { call, attempt, instance });
                }
            }
        }
        if s.server.any_up() {
            for c in 0..cfg.bounds.calls as usize {
                for a in 0..s.calls[c].sent as usize {
                    let (call, attempt) = (c as u8, a as u8);
                    let t = s.attempts[c][a];
                    if t.server.in_flight() && !s.server.up[t.instance as usize] {
                        continue;
                    }
                    match t.server {
                        // A requestState already consumed: the handler refuses it instead.
                        ServerSide::Pending if self.consumed_state(s, c, a).is_some() => {
                            out.push(Action::ServerRespond { call, attempt })
                        }
                        ServerSide::Pending if cfg.handler.effect_in(t.round) => {
                            out.push(Action::ServerCommit { call, attempt })
                        }
                        ServerSide::Pending => out.push(Action::ServerRespond { call, attempt }),
                        ServerSide::Effected => out.push(Action::ServerStoreKey { call, attempt }),
                        ServerSide::Committed if self.view.detail || s.attempts[c][a].client == ClientSide::Waiting => {
                            out.push(Action::ServerRespond { call, attempt })
                        }
                        _ => {}
                    }
                }
            }
        }
        for instance in 0..instances {
            if !s.server.up[instance as usize] {
                out.push(Action::ServerRestart { instance });
            } else if s.server.crashes < cfg.bounds.crashes {
                out.push(Action::ServerCrash { instance });
            }
        }
        self.session_actions(s, out);
        if self.rules.records_expire {
            for c in 0..cfg.bounds.calls as usize {
                for key in 1..=MAX_ATTEMPTS as u8 {
                    if s.keys_durable[0][c] & Self::key_bit(key) != 0 {
                        out.push(Action::KeyExpires { call: c as u8, key });
                    }
                }
            }
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut s = last.clone();
        self.apply(&mut s, action).then_some(s)
    }

    fn format_action(&self, action: &Action) -> String {
        action.to_string()
    }
}

impl McpModel {
    /// Take `action` in `s`, in place (the search writes each successor straight into its
    /// queue): false where the action is not enabled there, `s` then being of no use.
    pub fn apply(&self, s: &mut State, action: Action) -> bool {
        match action {
            Action::ClientCall { call } => self.send_attempt(s, call as usize, 0, 0, false),
            Action::ClientTimeout { call, attempt } => {
                let (c, a) = idx(call, attempt);
                s.attempts[c][a].client = ClientSide::Abandoned;
                if self.rules.cancel_on_timeout {
                    s.calls[c].phase = Phase::CancelPending;
                    s.calls[c].failure = Failure::Timeout;
                } else {
                    Self::fail(s, c, Failure::Timeout);
                }
            }
            Action::ClientCancel { call, attempt } => {
                let (c, a) = idx(call, attempt);
                if s.server.any_up() && self.cancel_can_stop(s.attempts[c][a].server) {
                    s.inbox.push(Msg::cancel(c, a), self.rules.ordered);
                }
                Self::fail(s, c, Failure::Timeout);
            }
            Action::ClientReceive { call, attempt } => {
                let (c, a) = idx(call, attempt);
                if self.read_task_handle(s, c, a) {
                    return true;
                }
                s.attempts[c][a].client = ClientSide::Answered;
                if s.attempts[c][a].server == ServerSide::RespondedError {
                    Self::fail(s, c, Failure::ErrorReply);
                } else {
                    s.calls[c].phase = Self::after_answer(s.attempts[c][a].server);
                    s.calls[c].failure = Failure::None;
                }
            }
            Action::ClientSeesDisconnect { call, attempt } => {
                let (c, a) = idx(call, attempt);
                let failure = self.lost_failure(s, c, a);
                s.attempts[c][a].client = ClientSide::Broken;
                Self::fail(s, c, failure);
            }
            Action::StreamBreak { call, attempt } => {
                let (c, a) = idx(call, attempt);
                let t = s.attempts[c][a];
                s.attempts[c][a].client = ClientSide::Broken;
                if self.rules.disconnect_cancels && self.cancel_can_stop(t.server) {
                    s.inbox.push(Msg::cancel(c, a), self.rules.ordered);
                }
                Self::fail(s, c, Failure::Disconnect);
            }
            Action::ClientQueryOutcome { call } => {
                let c = call as usize;
                let Some(a) = s.latest(c) else { return false };
                let key = s.attempts[c][a].key;
                if key != 0 && self.key_completed(s, 0, c, key) {
                    s.calls[c].phase = self.after_result(s.attempts[c][a].round);
                    s.calls[c].failure = Failure::None;
                } else if key != 0 && s.keys_running[0][c] & Self::key_bit(key) != 0 {
                    return false; // "in progress": the client asks again later
                } else {
                    s.calls[c].queried = true;
                }
            }
            Action::ClientRetry { call, .. } => {
                let c = call as usize;
                let step = s.calls[c].step;
                let round = s.latest(c).map_or(0, |a| s.attempts[c][a].round);
                self.send_attempt(s, c, step, round, false);
            }
            Action::ClientContinue { call, .. } => {
                let c = call as usize;
                let step = s.calls[c].step;
                let round = Self::continuation_round(s, c);
                self.send_attempt(s, c, step, round, true);
            }
            Action::StepFails { call } => Self::fail(s, call as usize, Failure::StepError),
            Action::FrameworkRetry { call, .. } => {
                let c = call as usize;
                let step = s.calls[c].step + 1;
                self.send_attempt(s, c, step, 0, false);
            }
            Action::ServerReceive { call, attempt, instance } => {
                let (c, a) = idx(call, attempt);
                let Some(index) = self.readable(s, Msg::request(c, a)) else { return false };
                s.inbox.remove(index);
                self.receive_request(s, c, a, instance);
            }
            Action::ServerReceiveCancel { call, attempt } => {
                let (c, a) = idx(call, attempt);
                let Some(index) = self.readable(s, Msg::cancel(c, a)) else { return false };
                s.inbox.remove(index);
                self.read_cancel(s, c, a);
            }
            Action::ServerCommit { call, attempt } => {
                let (c, a) = idx(call, attempt);
                self.commit(s, c, a);
            }
            Action::ServerStoreKey { call, attempt } => {
                let (c, a) = idx(call, attempt);
                let key = s.attempts[c][a].key;
                let st = self.store_of(s, c, a);
                self.store_key(s, st, c, key);
                s.attempts[c][a].server = ServerSide::Committed;
            }
            Action::ServerRespond { call, attempt } => {
                let (c, a) = idx(call, attempt);
                if s.attempts[c][a].server == ServerSide::Pending && self.consumed_state(s, c, a).is_some() {
                    self.refuse_consumed(s, c, a);
                } else if s.attempts[c][a].server == ServerSide::Pending {
                    self.respond_without_effect(s, c, a);
                } else {
                    s.attempts[c][a].server = self.answer(s.attempts[c][a].round);
                }
            }
            Action::ServerCrash { instance } => self.crash(s, instance),
            Action::ServerRestart { instance } => {
                // The client starts again (a new session) only when the whole server was down.
                if !s.server.any_up() {
                    s.next_id = 1;
                }
                s.server.up[instance as usize] = true;
            }
            Action::KeyExpires { call, key } => {
                s.keys_durable[0][call as usize] &= !Self::key_bit(key);
            }
            Action::SessionTerminated {} => {
                if !self.end_session(s) {
                    return false;
                }
            }
        }
        if self.rules.in_progress == InProgress::Wait {
            self.wake_waiters(s);
        }
        true
    }
}
