//! The values a profile's knobs take, one enum per knob, each value named as profile files
//! spell it (see `specs/README.md`).

use crate::named::named_enum;

named_enum!(
    /// Among which requests a JSON-RPC request id must be unique.
    IdScope {
        /// Unique within a session; a new session (a restarted stdio process) starts over.
        Session = "session",
        /// Unique among the sender's outstanding requests; reusable once answered.
        Outstanding = "outstanding",
    }
);
named_enum!(
    /// Which JSON-RPC id a retry of a lost request carries.
    RetryId {
        /// A new id (the same id is forbidden while the first is outstanding).
        New = "new",
        /// The id of the attempt it retries.
        Same = "same",
    }
);
named_enum!(
    /// What the text says about re-issuing a request whose outcome was lost.
    Reissue {
        /// Nothing is said; a client may retry on its own judgement.
        Unspecified = "unspecified",
        /// The client may retry against a fresh process or connection.
        MayRetry = "may-retry",
        /// The client must re-issue it as a new request with a new id.
        MustReissue = "must-reissue",
    }
);
named_enum!(
    /// How a client cancels a request on stdio.
    StdioCancel {
        /// A `notifications/cancelled` message on the same pipe.
        Notification = "notification",
        /// No cancellation exists.
        None = "none",
    }
);
named_enum!(
    /// How a client cancels a request on Streamable HTTP.
    HttpCancel {
        /// An explicit `notifications/cancelled` message, sent in its own POST.
        Notification = "notification",
        /// Closing the request's SSE response stream.
        CloseStream = "close-stream",
    }
);
named_enum!(
    /// Whether a broken SSE response stream can be resumed to receive the response.
    Resumability {
        /// Servers may offer it; the model takes a server that does not.
        Optional = "optional",
        /// Not part of the protocol.
        None = "none",
        /// Every server resumes streams while its process lives.
        Required = "required",
    }
);
named_enum!(
    /// What the text says about restarting a stdio server that exited unexpectedly.
    RestartGuidance {
        /// Nothing is said (the user or a supervisor restarts it).
        Unspecified = "unspecified",
        /// The client should restart it; in-flight requests are lost.
        ClientShouldRestart = "client-should-restart",
    }
);
named_enum!(
    /// Where an idempotency key travels in `tools/call`.
    KeyPlacement {
        /// The protocol defines no key.
        None = "none",
        /// `params.idempotencyKey`.
        Params = "params",
        /// A `_meta` entry.
        Meta = "meta",
        /// A tool argument.
        Argument = "argument",
    }
);
named_enum!(
    /// What a server does with the key.
    KeySemantics {
        /// Nothing: there is no key.
        None = "none",
        /// A repeated key is deduplicated: the stored result is replayed, nothing runs again.
        Dedup = "dedup",
        /// The key names an operation whose outcome the client can ask for before it retries;
        /// the server does not deduplicate executions.
        StatusQuery = "status-query",
    }
);
named_enum!(
    /// What a server does with a duplicate that arrives while the original still executes.
    InProgress {
        /// Reject it at once with an error; the client may retry later.
        Reject = "reject",
        /// Hold it until the original finishes, then answer it as a duplicate of a finished
        /// request (replay the stored result); if the original ends with no record (it was
        /// cancelled before its effect, or its process died), the first waiting duplicate runs.
        Wait = "wait",
        /// No rule: no key semantics, or a dedup proposal silent on duplicates in progress. A
        /// duplicate that arrives while the original still runs is not recognised, and runs.
        None = "none",
    }
);
named_enum!(
    /// What a server does when a key comes back with other arguments.
    Conflict {
        /// Reject it; run nothing; do not return the stored result.
        Reject = "reject",
        /// Not defined (no key semantics).
        None = "none",
    }
);
named_enum!(
    /// Whether the text allows a server to record the key after the effect (so that a crash
    /// between the two loses the record).
    CrashWindow {
        /// Allowed: the ordering is unspecified and the duplicate after such a crash is admitted.
        Admitted = "admitted",
        /// Not allowed: the record must be atomic with the effect.
        Closed = "closed",
        /// Not defined (no key semantics).
        None = "none",
    }
);

named_enum!(
    /// Whether a request can be answered with an input-required result (multi round-trip
    /// requests), and how the client then sends it again.
    InputRequired {
        /// No input-required result: a tool that needs input asks within the same call, by a
        /// server-initiated request (not modelled).
        None = "none",
        /// The client sends the request again as a new request with a new id, carrying
        /// `inputResponses` and `requestState`; the handler runs from the start.
        RetryNewId = "retry-new-id",
    }
);
named_enum!(
    /// Whether an MRTR continuation (a request carrying `inputResponses`/`requestState`) is
    /// inside the idempotency key's scope.
    Continuations {
        /// Not defined (no key, no input-required results, or a proposal silent on them): a
        /// continuation is taken as carrying no key, as under `excluded`.
        None = "none",
        /// Outside the key's scope: a continuation carries no key, and nothing deduplicates it.
        Excluded = "excluded",
        /// Inside the key's scope, one key per round: each round's request carries a key of its
        /// own, which its retries reuse as the key lifetime says, so the server keeps one
        /// record per key and round. A retried continuation gets its round's stored answer; a
        /// continuation of a round not seen before runs the handler again, from the start.
        Included = "included",
    }
);

named_enum!(
    /// Whether a client's requests may reach more than one server instance.
    Instances {
        /// One instance serves a client (its process, or the session that binds it).
        Single = "single",
        /// Any instance may serve any request: a deployment may run several behind a load
        /// balancer.
        Several = "several",
    }
);
named_enum!(
    /// Where a server running as several instances must keep its key records.
    IdempotencyStore {
        /// Not defined (no key, or a proposal silent on instances).
        None = "none",
        /// Visible to every instance (a store outside the processes).
        Shared = "shared",
        /// Each instance may keep its own (a key is scoped to the instance that read it): a
        /// retry that reaches another instance is not recognised.
        PerInstance = "per-instance",
    }
);
named_enum!(
    /// What the text asks of a client about reusing its idempotency key (the client half of a
    /// key proposal).
    KeyReuse {
        /// Nothing: a client may send a new key on a retry (`--key per-attempt`) or on a
        /// framework re-run (`--key per-step`).
        Unspecified = "unspecified",
        /// The same key on every retry of a request; a framework re-run may start a new one.
        EveryRetry = "every-retry",
        /// The same key on every retry and on every framework re-run of the same logical call.
        EveryRerun = "every-rerun",
    }
);
named_enum!(
    /// Whether a receiver of a request that names its operation (a requestor-generated task id)
    /// may refuse an id it already has a record of, instead of running the request again.
    TaskIdValidation {
        /// No such rule (no requestor-named operation, or a proposal silent on it): the
        /// `validates-task-id` server is outside the profile.
        None = "none",
        /// A receiver MAY reject an id already associated with one of its tasks (SEP-1686
        /// §4.2.3) with an error; one that does not is conformant too, so both servers are
        /// checked.
        MayReject = "may-reject",
    }
);
named_enum!(
    /// What a server may still send for a request once it has read that request's
    /// cancellation.
    CancelledMessages {
        /// Nothing said (a profile written before this knob existed).
        Unspecified = "unspecified",
        /// The receiver SHOULD not send a response for it (2025-11-25 cancellation.mdx): a
        /// response written after the cancellation was read goes against a SHOULD.
        ShouldNotRespond = "should-not-respond",
        /// The server MUST NOT send any further message for it (2026-07-28, both transports'
        /// § Cancellation): a response written after the cancellation was read breaks a MUST.
        MustNotSend = "must-not-send",
    }
);
named_enum!(
    /// Whether a server may end the client's session on its own (Streamable HTTP sessions).
    SessionTermination {
        /// No protocol-level session to end (stdio; 2026-07-28, which removed sessions; a
        /// profile written before this knob existed).
        None = "none",
        /// The server MAY terminate the session at any time, then answers the old session id
        /// with HTTP 404, and the client MUST start a new session (2025-11-25 Streamable HTTP
        /// § Session Management): request ids are scoped by session, so they start over.
        ServerMayTerminate = "server-may-terminate",
    }
);
named_enum!(
    /// What the text asks of a server about a `tools/call` whose JSON-RPC id it has already
    /// read: the keyword of the clause (MUST or SHOULD) and how long the server remembers the
    /// ids (within a session, or durably, across a crash).
    IdDedup {
        /// Nothing (both released revisions): a server may run a repeated id again.
        Unspecified = "unspecified",
        /// Servers **MUST** deduplicate by request id within a session: an id table in memory
        /// keeps it, since a restarted process begins a new session.
        MustSession = "must-session",
        /// Servers **MUST** deduplicate by request id durably: the id table outlives a crash.
        MustDurable = "must-durable",
        /// Servers **SHOULD** deduplicate by request id within a session.
        ShouldSession = "should-session",
        /// Servers **SHOULD** deduplicate by request id durably.
        ShouldDurable = "should-durable",
    }
);
named_enum!(
    /// What the text asks of a client about retrying a `tools/call` after a timeout, by the
    /// tool's annotations (`ToolAnnotations` in the schema): the keyword of the clause and the
    /// annotations that lift the restriction.
    RetryAfterTimeout {
        /// Nothing (both released revisions): a client may retry any tool.
        Unspecified = "unspecified",
        /// Clients **MUST NOT** retry after a timeout unless the tool is annotated
        /// `idempotentHint: true`.
        MustNotUnlessIdempotent = "must-not-unless-idempotent",
        /// Clients **MUST NOT** retry after a timeout unless the tool is annotated
        /// `idempotentHint: true` or `readOnlyHint: true`.
        MustNotUnlessIdempotentOrReadOnly = "must-not-unless-idempotent-or-read-only",
        /// Clients **SHOULD NOT** retry after a timeout unless the tool is annotated
        /// `idempotentHint: true`.
        ShouldNotUnlessIdempotent = "should-not-unless-idempotent",
        /// Clients **SHOULD NOT** retry after a timeout unless the tool is annotated
        /// `idempotentHint: true` or `readOnlyHint: true`.
        ShouldNotUnlessIdempotentOrReadOnly = "should-not-unless-idempotent-or-read-only",
    }
);
named_enum!(
    /// Whether a `tools/call` may be task-augmented (the receiver answers with a task it
    /// created, named by an id it generated), and what the receiver must have done before it
    /// returns that id (`--tasks`, `--task-records`).
    TaskCreation {
        /// No tasks (a profile written before this knob existed): `--tasks augmented` is
        /// outside the profile.
        None = "none",
        /// Tasks with receiver-generated ids, and no rule on when the task's record is durable
        /// (2025-11-25): a server keeping it in memory is conformant.
        ReceiverIds = "receiver-ids",
        /// Tasks with receiver-generated ids whose record MUST be durable before the
        /// `CreateTaskResult` is returned (SEP-2663): a server keeping it in memory breaks it
        /// at every `CreateTaskResult`.
        DurableBeforeResult = "durable-before-result",
    }
);
named_enum!(
    /// Whose earlier requests a key is matched against: the scope of a server's idempotency
    /// records (`--callers 2`, `--key-scope`). Also the value `--key-scope` takes.
    KeyScope {
        /// The text says nothing (a profile written before this knob existed, or without keys):
        /// a server keeps one record per key, for every caller (`global`).
        Unspecified = "unspecified",
        /// Records are scoped to the caller's authorization boundary, so a key is matched only
        /// against the same caller's earlier requests (SEP-3182's MUST).
        PerCaller = "per-caller",
        /// One record per key, whoever sent it: a second caller presenting the key is answered
        /// from the first caller's record.
        Global = "global",
    }
);

impl KeyScope {
    /// The scope a server with no `--key-scope` keeps under a profile with this value: the
    /// profile's, and one record per key where the text says nothing.
    pub fn in_force(self) -> KeyScope {
        match self {
            KeyScope::Unspecified | KeyScope::Global => KeyScope::Global,
            KeyScope::PerCaller => KeyScope::PerCaller,
        }
    }
}
