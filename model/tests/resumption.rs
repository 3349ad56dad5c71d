//! Resuming a broken SSE response stream against sending the request again (2025-11-25
//! Streamable HTTP § Resumability and Redelivery, knob `sse_resumability = optional`,
//! `--resumption`): a response is redelivered only when the server makes its streams
//! resumable *and* the client reconnects with `Last-Event-ID`; a client that retries instead
//! runs the call again, as if nothing were resumable; a crash still loses the stream.

use mcp_once_model::*;

/// 2025-11-25 over HTTP, one call, one retry.
fn model(client: ClientPolicy, server: ServerImpl, resumption: Resumption, crashes: u8) -> McpModel {
    let config = Config::builder("mcp-2025-11-25")
        .transport(Transport::Http)
        .client(client)
        .server(server)
        .resumption(resumption)
        .bounds(Bounds { calls: 1, retries: 1, crashes })
        .build();
    McpModel::new(config, Profile::load("mcp-2025-11-25").unwrap()).unwrap()
}

fn shortest(m: &McpModel, p: PropertyKind) -> Option<Counterexample> {
    check_property(m, p).counterexample
}

fn names(c: &Counterexample) -> Vec<String> {
    c.actions.iter().map(|a| a.to_string()).collect()
}

#[test]
fn a_client_that_retries_where_it_could_resume_runs_the_call_again() {
    let client = ClientPolicy::RetryOnDisconnect;
    let none = shortest(&model(client, ServerImpl::Plain, Resumption::None, 0), PropertyKind::AtMostOnce);
    let offered = shortest(&model(client, ServerImpl::Plain, Resumption::Offered, 0), PropertyKind::AtMostOnce);
    let (none, offered) = (none.expect("violated with no resumption"), offered.expect("violated when only offered"));
    // The same 7 steps: the break, the retry, the second run.
    assert_eq!(none.actions, offered.actions);
    assert_eq!(none.actions.len(), 7);
    let m = model(client, ServerImpl::Plain, Resumption::Offered, 0);
    let i = offered.actions.iter().position(|a| matches!(a, Action::StreamBreak { .. })).expect("a break");
    let said = rules::describe(&m, &offered.states[i], &offered.actions[i], &offered.states[i + 1]);
    assert!(said.contains("does not reconnect with Last-Event-ID"), "{said}");
}

#[test]
fn a_stream_resumed_by_both_sides_delivers_the_response_until_a_crash() {
    let client = ClientPolicy::RetryOnDisconnect;
    // No crash: no break the client sees, so no retry and no second run.
    let m = model(client, ServerImpl::Plain, Resumption::Used, 0);
    assert!(shortest(&m, PropertyKind::AtMostOnce).is_none(), "{}", m.config);
    // A crash loses the resumable stream with the process: the duplicate comes back, by the
    // crash, never by a break.
    let m = model(client, ServerImpl::Plain, Resumption::Used, 1);
    let cex = shortest(&m, PropertyKind::AtMostOnce).expect("violated by a crash");
    let steps = names(&cex);
    assert!(steps.iter().any(|a| a.starts_with("ServerCrash")), "{steps:?}");
    assert!(!steps.iter().any(|a| a.starts_with("StreamBreak")), "{steps:?}");
    assert_eq!(cex.actions.len(), 9, "{steps:?}");
    // A timeout is no broken stream: a client that retries after one still runs the call twice.
    let m = model(ClientPolicy::RetryOnTimeout, ServerImpl::Plain, Resumption::Used, 0);
    assert!(shortest(&m, PropertyKind::AtMostOnce).is_some(), "{}", m.config);
}

#[test]
fn resumption_applies_over_http_where_a_server_may_resume() {
    let cell = |profile: &str, transport: Transport| {
        Config::builder(profile).transport(transport).resumption(Resumption::Used).build()
    };
    let stdio = cell("mcp-2025-11-25", Transport::Stdio);
    let why = stdio.applicable(&Profile::load("mcp-2025-11-25").unwrap()).unwrap_err().to_string();
    assert!(why.contains("needs --transport http"), "{why}");
    let removed = cell("mcp-2026-07-28", Transport::Http);
    let why = removed.applicable(&Profile::load("mcp-2026-07-28").unwrap()).unwrap_err().to_string();
    assert!(why.contains("sse_resumability = none"), "{why}");
    let none = Config::builder("mcp-2026-07-28").transport(Transport::Http).build();
    assert!(none.applicable(&Profile::load("mcp-2026-07-28").unwrap()).is_ok());
}

/// The reductions change nothing on the new axis: every property's verdict and shortest length,
/// and the worst case, against the model with every reduction off, on every client and
/// store-less or id-table server, with and without a crash.
#[test]
fn the_reductions_hold_on_the_resumption_axis() {
    let mut compared = 0;
    for client in ClientPolicy::ALL {
        for server in [ServerImpl::Plain, ServerImpl::HonoursCancel, ServerImpl::DedupById] {
            for resumption in [Resumption::Offered, Resumption::Used] {
                for crashes in [0, 1] {
                    let m = model(*client, server, resumption, crashes);
                    let full = m.without_reductions();
                    let (ours, theirs) = (explore(&m, PropertyKind::ALL), explore(&full, PropertyKind::ALL));
                    for (a, b) in ours.results.iter().zip(&theirs.results) {
                        let len = |r: &search::CheckResult| r.counterexample.as_ref().map(|c| c.actions.len());
                        assert_eq!((a.verdict, len(a)), (b.verdict, len(b)), "{} under {}", a.property, m.config);
                    }
                    assert_eq!(ours.worst.effects, theirs.worst.effects, "worst case under {}", m.config);
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, ClientPolicy::ALL.len() * 3 * 2 * 2);
}
