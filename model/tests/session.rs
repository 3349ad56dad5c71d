//! The server ending the client's HTTP session (2025-11-25 Streamable HTTP § Session
//! Management, knob `session_termination`, `--session-terminations`): request ids start over
//! with the server process running, so an id table that outlives the session answers a new
//! call with an old call's result. What `check` answers, and where the fault does not apply.

use mcp_once_model::search::replay;
use mcp_once_model::state::{Phase, ServerSide};
use mcp_once_model::*;

/// 2025-11-25 over HTTP, no crash, `terminations` session terminations.
fn model(client: ClientPolicy, server: ServerImpl, calls: u8, terminations: u8) -> McpModel {
    let config = Config::builder("mcp-2025-11-25")
        .transport(Transport::Http)
        .client(client)
        .server(server)
        .bounds(Bounds { calls, retries: 1, crashes: 0 })
        .session_terminations(terminations)
        .build();
    McpModel::new(config, Profile::load("mcp-2025-11-25").unwrap()).unwrap()
}

fn shortest(m: &McpModel, p: PropertyKind) -> Option<Counterexample> {
    check_property(m, p).counterexample
}

#[test]
fn an_id_table_answers_a_new_session_s_call_with_the_old_session_s_result() {
    use Action as A;
    for server in [ServerImpl::DedupById, ServerImpl::DedupByIdDurable] {
        // Without the fault and without a crash, ids never repeat: every call's answer is its own.
        let none = model(ClientPolicy::NoRetry, server, 2, 0);
        assert!(shortest(&none, PropertyKind::SuccessImpliesEffect).is_none(), "{}", none.config);
        let m = model(ClientPolicy::NoRetry, server, 2, 1);
        let cex = shortest(&m, PropertyKind::SuccessImpliesEffect).expect("violated under a session termination");
        // Call 0 (id 1) runs; the session ends; call 1 opens the new session with id 1 again,
        // which the id table (kept by the running process) knows as answered: it replays call
        // 0's result, and call 1 is reported succeeded with no effect of its own. 7 steps, and
        // no crash: the termination alone starts the ids over.
        assert_eq!(
            cex.actions,
            vec![
                A::ClientCall { call: 0 },
                A::ServerReceive { call: 0, attempt: 0, instance: 0 },
                A::ServerCommit { call: 0, attempt: 0 },
                A::SessionTerminated {},
                A::ClientCall { call: 1 },
                A::ServerReceive { call: 1, attempt: 0, instance: 0 },
                A::ClientReceive { call: 1, attempt: 0 },
            ],
            "{}",
            m.config
        );
        let last = cex.states.last().unwrap();
        assert_eq!((last.attempts[0][0].id, last.attempts[1][0].id), (1, 1));
        assert_eq!(last.attempts[1][0].server, ServerSide::RespondedReplay);
        assert_eq!((last.calls[1].phase, last.ledger[1]), (Phase::Succeeded, 0));
        let said = rules::describe(&m, &cex.states[6], &cex.actions[6], last);
        assert!(said.contains("by logical call 0's request (another call's result)"), "{said}");
        let cited = rules::knobs_for(&m, &cex.states[4], &cex.actions[3]);
        assert_eq!(cited, vec![KnobId::SessionTermination, KnobId::RequestIdScope]);
    }
}

#[test]
fn at_most_once_under_session_termination_is_what_it_is_without_it() {
    // A retry carries a new id under 2025-11-25, so an id table never stops a retry: at most
    // once fails in 7 steps with or without the fault (call, read, commit, timeout, retry with
    // id 2, read, commit; the cancellation a timeout sends is not put in flight to a server
    // that ignores it). A client that never retries keeps it: a request the ended session
    // turns away (404) never runs, and a new call's reused id is answered, not run.
    for server in [ServerImpl::DedupById, ServerImpl::DedupByIdDurable] {
        for terminations in [0, 1, 2] {
            let m = model(ClientPolicy::RetryAny, server, 1, terminations);
            let cex = shortest(&m, PropertyKind::AtMostOnce).expect("a retry with a new id runs again");
            assert_eq!(cex.len(), 7, "{}", m.config);
            let m = model(ClientPolicy::NoRetry, server, 2, terminations);
            assert!(shortest(&m, PropertyKind::AtMostOnce).is_none(), "{}", m.config);
        }
    }
}

#[test]
fn a_request_in_transit_when_the_session_ends_is_answered_404_and_never_runs() {
    use Action as A;
    let m = model(ClientPolicy::RetryOnDisconnect, ServerImpl::Plain, 1, 1);
    let states = replay(
        &m,
        &[A::ClientCall { call: 0 }, A::SessionTerminated {}, A::ClientSeesDisconnect { call: 0, attempt: 0 }],
    )
    .unwrap_or_else(|(step, why)| panic!("step {step}: {why}"));
    let s = &states[2];
    assert_eq!(s.attempts[0][0].server, ServerSide::Lost);
    assert_eq!((s.inbox.len, s.next_id, s.server.up[0]), (0, 1, true));
    // Once used up, the bound offers no further termination.
    assert!(replay(&m, &[A::SessionTerminated {}, A::SessionTerminated {}]).is_err());
}

#[test]
fn the_fault_applies_only_to_2025_11_25_http_sessions() {
    let http_2026 = Config::builder("mcp-2026-07-28").transport(Transport::Http).session_terminations(1).build();
    let e = http_2026.applicable(&Profile::load("mcp-2026-07-28").unwrap()).unwrap_err();
    assert_eq!(e.kind(), "outside-profile");
    assert!(e.to_string().contains("session_termination = none"), "{e}");
    let stdio = Config::builder("mcp-2025-11-25").session_terminations(1).build();
    let e = stdio.applicable(&Profile::load("mcp-2025-11-25").unwrap()).unwrap_err();
    assert_eq!(e.kind(), "meaningless");
    let many = Config::builder("mcp-2025-11-25").transport(Transport::Http).session_terminations(3).build();
    assert_eq!(many.applicable(&Profile::load("mcp-2025-11-25").unwrap()).unwrap_err().kind(), "out-of-range");
    // The cell's own notation names the bound, and a file keeps it.
    let cell = Config::builder("mcp-2025-11-25").transport(Transport::Http).session_terminations(2).build();
    assert!(cell.to_string().ends_with("--crashes 1 --session-terminations 2"), "{cell}");
    let back: Config = serde_json::from_str(&serde_json::to_string(&cell).unwrap()).unwrap();
    assert_eq!(back.session_terminations, 2);
}
