//! An id table replays the answer it stored, of the kind it stored: under
//! multi round-trip requests a request can find an id whose answer is another call's or another
//! round's, so a request of the final round can be answered "input required" and a first
//! request can be given a final result. Each test walks a path by hand through the model's own
//! step function (every action must be one the model offers where it is taken).

use mcp_once_model::search::replay;
use mcp_once_model::state::{Phase, ServerSide};
use mcp_once_model::trace::{to_itf, TraceFile, TraceKind};
use mcp_once_model::*;

/// sep-3182 over HTTP (ids unique among outstanding requests, a new id on a retry), two calls,
/// an id table in memory, a handler that asks for input once before its effect.
fn model(client: ClientPolicy, retries: u8) -> McpModel {
    let config = Config::builder("sep-3182")
        .transport(Transport::Http)
        .client(client)
        .server(ServerImpl::DedupById)
        .handler(HandlerKind::InputBeforeEffect)
        .rounds(1)
        .bounds(Bounds { calls: 2, retries, crashes: 0 })
        .build();
    let profile = Profile::load(&config.profile).unwrap();
    McpModel::new(config, profile).unwrap()
}

/// The states of `actions` from the initial state; panics naming the step the model refuses.
fn walk(m: &McpModel, actions: &[Action]) -> Vec<State> {
    replay(m, actions).unwrap_or_else(|(step, why)| panic!("step {step}: {why}"))
}

#[test]
fn a_final_round_request_that_finds_a_stored_input_request_is_asked_for_input() {
    use Action as A;
    let m = model(ClientPolicy::NoRetry, 0);
    let actions = vec![
        A::ClientCall { call: 0 },
        A::ClientCall { call: 1 },
        // Call 1 (id 2, id 1 being outstanding) is asked for input first.
        A::ServerReceive { call: 1, attempt: 0, instance: 0 },
        A::ServerRespond { call: 1, attempt: 0 },
        A::ClientReceive { call: 1, attempt: 0 },
        A::ServerReceive { call: 0, attempt: 0, instance: 0 },
        A::ServerRespond { call: 0, attempt: 0 },
        A::ClientReceive { call: 0, attempt: 0 },
        // Call 0's continuation (round 1, the last) avoids its own id 1 and takes id 2, now free.
        A::ClientContinue { call: 0, attempt: 1 },
        A::ServerReceive { call: 0, attempt: 1, instance: 0 },
        A::ClientReceive { call: 0, attempt: 1 },
        // It answers the input request it was given (round 0's): a continuation of round 1,
        // under any id but 2, the one of the request it answers. Id 1 is free (answered), and
        // the table holds call 0's own round-0 input request for it: asked again.
        A::ClientContinue { call: 0, attempt: 2 },
        A::ServerReceive { call: 0, attempt: 2, instance: 0 },
        A::ClientReceive { call: 0, attempt: 2 },
    ];
    let states = walk(&m, &actions);
    let replayed = states[10].attempts[0][1];
    assert_eq!((replayed.id, replayed.round), (2, 1), "a final-round request under call 1's id");
    assert_eq!(replayed.server, ServerSide::RespondedReplayInput);
    assert_eq!(replayed.replayed_round, 0, "call 1's first request's answer");
    assert_eq!(states[11].calls[0].phase, Phase::InputRequired, "read as what it is: a request for input");
    assert_eq!(states[11].ledger[0], 0);
    let next = states[12].attempts[0][2];
    assert_eq!((next.id, next.round, next.key), (1, 1, 0), "the continuation answers round 0's request");
    let last = states.last().unwrap();
    assert_eq!(last.attempts[0][2].server, ServerSide::RespondedReplayInput);
    assert_eq!(last.calls[0].phase, Phase::InputRequired);
    assert_eq!(last.ledger[0], 0);
    // No state of the path has a call told success without its effect.
    assert!(states.iter().all(|s| PropertyKind::SuccessImpliesEffect.holds(&m, s)));
    let described = rules::describe(&m, &states[10], &actions[10], &states[11]);
    assert!(
        described.contains("the replayed input-required answer stored for id 2 (the input request of round 0)"),
        "{described}"
    );
    // The path written as a trace reads back and validates, the replayed answer in it.
    let path = Counterexample { states: states.clone(), actions: actions.clone(), index_path: String::new() };
    let itf = to_itf(&m, TraceKind::WorstCase, &path, false);
    let text = serde_json::to_string(&itf).unwrap();
    assert!(text.contains(r#""server":"RespondedReplayInput""#), "{text}");
    assert!(text.contains(r#""input_required_round":0"#), "{text}");
    let back = TraceFile::parse("replay.itf.json", &text).unwrap();
    let valid = back.validate("replay.itf.json", &m.profile).unwrap();
    assert_eq!(valid.path.actions, actions);
}

#[test]
fn a_first_request_that_finds_a_stored_final_result_is_told_success_without_its_effect() {
    use Action as A;
    let m = model(ClientPolicy::RetryOnTimeout, 1);
    let mut actions = vec![
        A::ClientCall { call: 0 },
        A::ServerReceive { call: 0, attempt: 0, instance: 0 },
        A::ServerRespond { call: 0, attempt: 0 },
        A::ClientReceive { call: 0, attempt: 0 },
        A::ClientContinue { call: 0, attempt: 1 },
        A::ServerReceive { call: 0, attempt: 1, instance: 0 },
        A::ServerCommit { call: 0, attempt: 1 },
        A::ServerRespond { call: 0, attempt: 1 },
        A::ClientReceive { call: 0, attempt: 1 },
        // Call 1 takes id 1 (answered, so free) and times out: id 1 stays outstanding.
        A::ClientCall { call: 1 },
        A::ClientTimeout { call: 1, attempt: 0 },
    ];
    let timed_out = walk(&m, &actions);
    if timed_out.last().unwrap().calls[1].phase == Phase::CancelPending {
        actions.push(A::ClientCancel { call: 1, attempt: 0 });
    }
    // Its retry, a first request, takes id 2: call 0's continuation's, whose final result the
    // table stored.
    actions.extend([
        A::ClientRetry { call: 1, attempt: 1 },
        A::ServerReceive { call: 1, attempt: 1, instance: 0 },
        A::ClientReceive { call: 1, attempt: 1 },
    ]);
    let states = walk(&m, &actions);
    let last = states.last().unwrap();
    let retry = last.attempts[1][1];
    assert_eq!((retry.id, retry.round), (2, 0), "a first request under call 0's continuation's id");
    assert!(m.config.handler.asks_input(retry.round), "its own round would ask for input");
    assert_eq!(retry.server, ServerSide::RespondedReplay);
    assert_eq!(last.calls[1].phase, Phase::Succeeded, "read as what it is: a final result");
    assert_eq!(last.ledger[1], 0);
    assert!(!PropertyKind::SuccessImpliesEffect.holds(&m, last), "told success with no effect");
    let before = &states[states.len() - 2];
    assert!(PropertyKind::SuccessImpliesEffect.holds(&m, before));
    let described = rules::describe(&m, before, actions.last().unwrap(), last);
    assert!(described.contains("the replayed final result stored for this id"), "{described}");
    // The search finds a violation of that property too, no longer than this path.
    let found = check_property(&m, PropertyKind::SuccessImpliesEffect);
    assert_eq!(found.verdict, Verdict::Violated);
    assert!(found.counterexample.unwrap().len() <= actions.len());
}
