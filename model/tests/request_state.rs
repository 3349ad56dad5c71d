//! What 2026-07-28 `mrtr.mdx` asks of the requests of one MRTR exchange: the retry of a request
//! that was answered input-required carries a JSON-RPC id "different between the initial request
//! and the retry", and a server whose `requestState` "must be consumed at most once" MUST
//! enforce that itself. The double charge of a tool that charges before it asks comes from
//! its handler, whatever key its continuation carries.

use mcp_once_model::*;

fn model(
    profile: Profile,
    transport: Transport,
    client: ClientPolicy,
    server: ServerImpl,
    handler: Handler,
) -> McpModel {
    let config = Config::builder(&profile.name)
        .transport(transport)
        .client(client)
        .server(server)
        .handler(handler.kind)
        .rounds(handler.rounds)
        .crashes(0)
        .build();
    McpModel::new(config, profile).unwrap()
}

/// The path `actions` from the first state of `m`, each step one the model offers there.
fn walk(m: &McpModel, actions: &[Action]) -> Counterexample {
    let states = mcp_once_model::search::replay(m, actions).unwrap_or_else(|(step, why)| panic!("step {step}: {why}"));
    Counterexample { states, actions: actions.to_vec(), index_path: String::new() }
}

#[test]
fn a_continuation_avoids_the_id_of_the_request_it_answers_and_no_other() {
    // Two rounds of input, no fault: round 0 (id 1) asks, its continuation (round 1) asks
    // again, and round 2's continuation answers round 1. Under 2026-07-28 an answered id is
    // free again; the text rules out only the id of the request being answered (round 1's),
    // so round 2 takes the lowest free id, 1.
    let m = model(
        Profile::load("mcp-2026-07-28").unwrap(),
        Transport::Stdio,
        ClientPolicy::NoRetry,
        ServerImpl::Plain,
        Handler { kind: HandlerKind::InputBeforeEffect, rounds: 2 },
    );
    use Action as A;
    let round = |attempt| {
        vec![
            A::ServerReceive { call: 0, attempt, instance: 0 },
            A::ServerRespond { call: 0, attempt },
            A::ClientReceive { call: 0, attempt },
        ]
    };
    let path = walk(
        &m,
        &[
            vec![A::ClientCall { call: 0 }],
            round(0),
            vec![A::ClientContinue { call: 0, attempt: 1 }],
            round(1),
            vec![A::ClientContinue { call: 0, attempt: 2 }],
        ]
        .concat(),
    );
    let ids: Vec<u8> = path.states.last().unwrap().attempts[0][..3].iter().map(|t| t.id).collect();
    assert_eq!(ids, vec![1, 2, 1], "{:?}", path.actions);
}

#[test]
fn the_second_consumption_of_one_request_state_breaks_the_mrtr_must() {
    // The 11-step trace: the continuation (round 1, carrying round 0's requestState) takes its
    // effect, its answer is lost, and its retry carries the same requestState and takes the
    // effect again.
    let m = model(
        Profile::load("sep-3182").unwrap(),
        Transport::Http,
        ClientPolicy::RetryAny,
        ServerImpl::KeyDurable,
        Handler { kind: HandlerKind::InputBeforeEffect, rounds: 1 },
    );
    let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.expect("violated");
    assert_eq!(cex.len(), 11, "{:?}", cex.actions);
    let steps = explanation::explain_path(&m, &cex);
    let commits: Vec<usize> =
        steps.iter().filter(|s| matches!(s.action, Action::ServerCommit { .. })).map(|s| s.number).collect();
    assert_eq!(commits.len(), 2, "{:?}", cex.actions);
    let flagged: Vec<usize> =
        steps.iter().filter(|s| s.breaches.iter().any(|b| b.knob == KnobId::InputRequired)).map(|s| s.number).collect();
    assert_eq!(flagged, vec![commits[1]], "{:?}", cex.actions);
    let b = steps[commits[1] - 1].breaches.iter().find(|b| b.knob == KnobId::InputRequired).unwrap();
    assert!(b.binds(), "{b:?}");
    assert!(
        b.what.contains(
            "Servers for which a given `requestState` must be consumed at most once (e.g., one-time redemptions) **MUST** enforce that invariant server-side."
        ),
        "{b:?}"
    );
    // The profile's note quotes that sentence too.
    let note = m.profile.knobs.input_required.cite.note.clone().unwrap_or_default();
    assert!(note.contains("**MUST** enforce that invariant server-side"), "{note}");
}

#[test]
fn a_tool_that_charges_before_it_asks_charges_twice_whatever_key_its_continuation_carries() {
    // SEP-3182 leaves continuations out of its key's scope; a profile that puts them inside it
    // (one key per round) fails in the same 8 steps: the second charge is the handler's.
    let included = Profile::parse(
        "included.toml",
        "name = \"included\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"sep-3182\"\n\
         [knobs.idempotency_continuations]\nvalue = \"included\"\n[knobs.idempotency_continuations.cite]\n\
         revision = \"X\"\npath = \"x.md\"\nsection = \"s\"\nquote = \"q\"\n",
        None,
    )
    .unwrap();
    let handler = Handler { kind: HandlerKind::InputAfterEffect, rounds: 1 };
    let mut traces = Vec::new();
    for profile in [Profile::load("sep-3182").unwrap(), included] {
        let m = model(profile, Transport::Http, ClientPolicy::RetryAny, ServerImpl::KeyDurable, handler);
        let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.expect("violated");
        assert_eq!(cex.len(), 8, "{:?}", cex.actions);
        // The report puts the second charge on the handler, at the step that takes it.
        let steps = explanation::explain_path(&m, &cex);
        let last = steps.last().unwrap();
        assert!(matches!(last.action, Action::ServerCommit { attempt: 1, .. }), "{:?}", cex.actions);
        assert!(last.what.contains("the handler takes its effect in every round it runs"), "{}", last.what);
        traces.push(cex.actions);
    }
    assert_eq!(traces[0], traces[1]);
}

/// The cell of the 11-step trace, its tool's server enforcing single use.
fn single_use(client: ClientPolicy, key: KeyLifetime) -> McpModel {
    let config = Config::builder("sep-3182")
        .transport(Transport::Http)
        .client(client)
        .key(key)
        .server(ServerImpl::KeyDurable)
        .handler(HandlerKind::InputBeforeEffectSingleUse)
        .crashes(0)
        .build();
    McpModel::new(config, Profile::load("sep-3182").unwrap()).unwrap()
}

#[test]
fn a_server_that_enforces_single_use_refuses_the_retried_continuation() {
    // The 11-step trace of input-before-effect, replayed on the single-use handler: its last
    // step (the retry's effect) is not offered; the server refuses the retry with an error
    // instead, and no step is flagged.
    let before = model(
        Profile::load("sep-3182").unwrap(),
        Transport::Http,
        ClientPolicy::RetryAny,
        ServerImpl::KeyDurable,
        Handler { kind: HandlerKind::InputBeforeEffect, rounds: 1 },
    );
    let cex = check_property(&before, PropertyKind::AtMostOnce).counterexample.expect("violated");
    assert_eq!(cex.len(), 11, "{:?}", cex.actions);
    let Action::ServerCommit { call, attempt } = cex.actions[10] else { panic!("{:?}", cex.actions) };
    let m = single_use(ClientPolicy::RetryAny, KeyLifetime::PerCall);
    let mut path = cex.actions[..10].to_vec();
    assert!(mcp_once_model::search::replay(&m, &[path.clone(), vec![cex.actions[10]]].concat()).is_err());
    path.push(Action::ServerRespond { call, attempt });
    let walked = walk(&m, &path);
    let last = walked.states.last().unwrap();
    assert_eq!(last.ledger[0], 1);
    assert_eq!(last.attempts[0][attempt as usize].server, mcp_once_model::state::ServerSide::RespondedError);
    let steps = explanation::explain_path(&m, &walked);
    assert!(steps.iter().all(|s| s.breaches.iter().all(|b| b.knob != KnobId::InputRequired)), "{steps:?}");
    let refusal = steps.last().unwrap();
    assert!(refusal.what.contains("server refuses id 3 with an error and takes no effect"), "{}", refusal.what);
    assert!(refusal.what.contains("of id 1's input-required answer"), "{}", refusal.what);
    assert!(refusal.rules.iter().any(|r| r.0 == KnobId::InputRequired), "{:?}", refusal.rules);
    // And so the cell holds: at-most-once, 1 call, 1 retry, no crash.
    assert!(check_property(&m, PropertyKind::AtMostOnce).counterexample.is_none());
}

#[test]
fn a_re_run_from_the_first_request_gets_a_new_request_state_and_charges_again() {
    // Single use binds one requestState: a framework that re-runs its step from round 0 with a
    // new key gets a new input-required answer, a new requestState, and a second effect on it
    // (15 steps), which breaks nothing mrtr.mdx says. With the same key, the re-run gets the
    // stored answer replayed, its requestState the one already consumed, and the cell holds.
    let m = single_use(ClientPolicy::FrameworkRetry, KeyLifetime::PerAttempt);
    let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.expect("violated");
    assert_eq!(cex.len(), 15, "{:?}", cex.actions);
    let steps = explanation::explain_path(&m, &cex);
    assert!(steps.iter().all(|s| s.breaches.iter().all(|b| b.knob != KnobId::InputRequired)), "{:?}", cex.actions);
    assert!(cex.actions.iter().any(|a| matches!(a, Action::FrameworkRetry { .. })), "{:?}", cex.actions);
    let same_key = single_use(ClientPolicy::FrameworkRetry, KeyLifetime::PerCall);
    assert!(check_property(&same_key, PropertyKind::AtMostOnce).counterexample.is_none());
}

#[test]
fn on_every_one_call_cell_single_use_leaves_only_the_framework_re_run_charging_twice() {
    // Every cell of the matrix under input-before-effect, at one call, against the same cell
    // with the single-use handler: single use never breaks a cell that held, and where the
    // effect still runs twice it is a framework re-run from the first request (a new
    // requestState); every retry of a continuation is refused. Measured on 2026-12-07: 300
    // cells, 184 of the violated ones hold, 72 framework-retry cells stay violated.
    let profiles = catalogue::builtin_profiles();
    let cells = catalogue::matrix_with_axes(&profiles, &[], &[HandlerKind::InputBeforeEffect]);
    let (mut closed, mut still) = (0, 0);
    for c in cells {
        let profile = profiles.iter().find(|p| p.name == c.profile).unwrap().clone();
        let c = Config { bounds: Bounds { calls: 1, ..c.bounds }, ..c };
        let Ok(before) = McpModel::new(c.clone(), profile.clone()) else { continue };
        let single = Config { handler: Handler::new(HandlerKind::InputBeforeEffectSingleUse, None), ..c };
        let after = McpModel::new(single, profile).unwrap();
        let was = check_property(&before, PropertyKind::AtMostOnce).counterexample.is_some();
        let is = check_property(&after, PropertyKind::AtMostOnce).counterexample.is_some();
        assert!(was || !is, "{}: violated where input-before-effect holds", after.config);
        assert!(!is || after.config.client == ClientPolicy::FrameworkRetry, "{}: still violated", after.config);
        closed += usize::from(was && !is);
        still += usize::from(is);
    }
    assert_eq!((closed, still), (184, 72));
}
