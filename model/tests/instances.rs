//! Several server instances: under 2026-07-28 a server should not require a
//! client to reuse its connection or process, so a deployment may run it as several instances
//! behind a load balancer, and a retry may reach another instance than the attempt it retries,
//! even while that attempt runs. SEP-3182 requires the key store to be visible to every
//! instance; a server whose instances each keep their own store charges twice with no fault,
//! and one with a shared store stays safe.

use mcp_once_model::state::ServerSide;
use mcp_once_model::trace::{to_itf, TraceFile, TraceKind};
use mcp_once_model::*;
use stateright::Model;

fn cell(server: ServerImpl, instances: u8, store: Option<StoreScope>, bounds: Bounds) -> Config {
    let profile = if server.uses_keys() { "sep-3182" } else { "mcp-2026-07-28" };
    Config::builder(profile)
        .transport(Transport::Http)
        .client(ClientPolicy::RetryAny)
        .server(server)
        .instances(instances)
        .store(store)
        .bounds(bounds)
        .build()
}

fn model(config: Config) -> McpModel {
    let profile = Profile::load(&config.profile).unwrap();
    McpModel::new(config, profile).unwrap()
}

fn one_call(crashes: u8) -> Bounds {
    Bounds { calls: 1, retries: 1, crashes }
}

#[test]
fn instances_with_their_own_key_stores_charge_twice_with_no_fault() {
    let m = model(cell(ServerImpl::KeyDurable, 2, Some(StoreScope::PerInstance), one_call(0)));
    let r = check_property(&m, PropertyKind::AtMostOnce);
    assert_eq!(r.verdict, Verdict::Violated);
    let cex = r.counterexample.unwrap();
    // The main search agrees on the length (both breadth-first, independent).
    let e = explore(&m, &[PropertyKind::AtMostOnce]);
    assert_eq!(e.results[0].counterexample.as_ref().map(|c| c.len()), Some(cex.len()));
    assert_eq!(cex.len(), 7, "{:?}", cex.actions);
    assert!(!cex.actions.iter().any(|a| matches!(a, Action::ServerCrash { .. })), "no crash: {:?}", cex.actions);
    let reads: Vec<(u8, u8)> = cex
        .actions
        .iter()
        .filter_map(|a| match *a {
            Action::ServerReceive { attempt, instance, .. } => Some((attempt, instance)),
            _ => None,
        })
        .collect();
    assert_eq!(reads.len(), 2, "{:?}", cex.actions);
    assert_ne!(reads[0].1, reads[1].1, "the retry reaches the other instance: {:?}", cex.actions);
    let last = cex.states.last().unwrap();
    assert_eq!(last.ledger[0], 2);
    assert_eq!(last.attempts[0][0].key, last.attempts[0][1].key, "both attempts carry the one key");
    // The step where the second instance reads the retry cites the SEP's store rule, the MUST
    // this server breaks, next to the clause that lets any instance read any request.
    let (at, _) =
        cex.actions.iter().enumerate().filter(|(_, a)| matches!(a, Action::ServerReceive { .. })).nth(1).unwrap();
    let knobs = rules::knobs_for(&m, &cex.states[at + 1], &cex.actions[at]);
    assert!(knobs.contains(&KnobId::ServerInstances) && knobs.contains(&KnobId::IdempotencyStore), "{knobs:?}");
    let cites = rules::citations(&m, &cex.states[at + 1], &cex.actions[at]);
    let store = cites.iter().find(|(k, ..)| *k == KnobId::IdempotencyStore).unwrap();
    assert!(store.2.quote.contains("visible to every instance"), "{:?}", store.2);
    // That step breaks the MUST, and reports say so; the first instance's read breaks it too
    // (its store is its own as well), and no other step breaks the store's MUST.
    let breaks_store = |i: usize| {
        rules::breaches(&m, &cex.states[i + 1], &cex.actions[i]).iter().any(|b| b.knob == KnobId::IdempotencyStore)
    };
    let breaking: Vec<usize> = (0..cex.len()).filter(|i| breaks_store(*i)).collect();
    let receives: Vec<usize> =
        (0..cex.len()).filter(|i| matches!(cex.actions[*i], Action::ServerReceive { .. })).collect();
    assert_eq!(breaking, receives, "{:?}", cex.actions);
    let b = &rules::breaches(&m, &cex.states[at + 1], &cex.actions[at])[0];
    assert_eq!(b.knob, KnobId::IdempotencyStore);
    assert!(b.what.contains("its own key store"), "{}", b.what);
}

#[test]
fn only_a_store_of_its_own_breaks_the_store_must() {
    let m = model(cell(ServerImpl::KeyVolatile, 2, None, one_call(0)));
    // An in-memory store is the instance's own: under SEP-3182 that breaks the store MUST.
    let r = check_property(&m, PropertyKind::AtMostOnce);
    let cex = r.counterexample.expect("violated");
    assert!((0..cex.len()).any(|i| !rules::breaches(&m, &cex.states[i + 1], &cex.actions[i]).is_empty()));
    // A durable store shared by both: the worst path breaks nothing.
    let m = model(cell(ServerImpl::KeyDurable, 2, None, Bounds { calls: 1, retries: 1, crashes: 1 }));
    let e = explore(&m, &[PropertyKind::AtMostOnce]);
    let worst = e.worst.trace.as_ref().expect("a path to the worst case");
    assert!((0..worst.len()).all(|i| rules::breaches(&m, &worst.states[i + 1], &worst.actions[i]).is_empty()));
}

#[test]
fn instances_sharing_a_durable_key_store_keep_at_most_once() {
    // The issue's bounds: two calls, two retries, one crash (of either instance).
    let m = model(cell(ServerImpl::KeyDurable, 2, None, Bounds { calls: 2, retries: 2, crashes: 1 }));
    assert_eq!(m.config.store(), StoreScope::Shared, "a durable store is shared by default");
    let r = explore(&m, &[PropertyKind::AtMostOnce]);
    assert_eq!(r.results[0].verdict, Verdict::Holds, "under {}", m.config);
    // And the search did reach the second instance and its crash (the verdict covers them).
    let one = model(cell(ServerImpl::KeyDurable, 1, None, Bounds { calls: 2, retries: 2, crashes: 1 }));
    let single = explore(&one, &[PropertyKind::AtMostOnce]);
    let (two, one) = (r.stats.states, single.stats.states);
    assert!(two > one, "{two} states with two instances, {one} with one");
}

#[test]
fn a_crash_of_one_instance_leaves_the_other_serving_and_requests_in_transit_alive() {
    let m = model(cell(ServerImpl::Plain, 2, None, one_call(1)));
    let s0 = m.init_states().remove(0);
    assert_eq!(s0.server.up, [true, true]);
    let s1 = m.next_state(&s0, Action::ClientCall { call: 0 }).unwrap();
    let s2 = m.next_state(&s1, Action::ServerCrash { instance: 0 }).unwrap();
    assert_eq!(s2.attempts[0][0].server, ServerSide::Unseen, "the request in transit goes to the running instance");
    let mut offered = Vec::new();
    m.actions(&s2, &mut offered);
    assert!(offered.contains(&Action::ServerReceive { call: 0, attempt: 0, instance: 1 }), "{offered:?}");
    assert!(!offered.iter().any(|a| matches!(a, Action::ServerReceive { instance: 0, .. })), "{offered:?}");
    assert!(offered.contains(&Action::ServerRestart { instance: 0 }), "{offered:?}");
    // A request held by the crashed instance is lost; one held by the other is not.
    let s3 = m.next_state(&s2, Action::ServerReceive { call: 0, attempt: 0, instance: 1 }).unwrap();
    assert_eq!((s3.attempts[0][0].server, s3.attempts[0][0].instance), (ServerSide::Pending, 1));
    let one = model(cell(ServerImpl::Plain, 2, None, one_call(2))).without_reductions();
    let t1 = one.next_state(&one.init_states()[0], Action::ClientCall { call: 0 }).unwrap();
    let t2 = one.next_state(&t1, Action::ServerReceive { call: 0, attempt: 0, instance: 1 }).unwrap();
    let t3 = one.next_state(&t2, Action::ServerCrash { instance: 0 }).unwrap();
    assert_eq!(t3.attempts[0][0].server, ServerSide::Pending);
    let t4 = one.next_state(&t3, Action::ServerCrash { instance: 1 }).unwrap();
    assert_eq!(t4.attempts[0][0].server, ServerSide::Lost);
}

#[test]
fn a_two_instance_trace_reads_back_and_one_instance_traces_keep_their_shape() {
    let m = model(cell(ServerImpl::KeyDurable, 2, Some(StoreScope::PerInstance), one_call(0)));
    let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.unwrap();
    let itf = to_itf(&m, TraceKind::Counterexample(PropertyKind::AtMostOnce), &cex, false);
    let text = serde_json::to_string(&itf).unwrap();
    let profile = Profile::load("sep-3182").unwrap();
    let back = TraceFile::parse("two.itf.json", &text).unwrap().validate("two.itf.json", &profile).unwrap();
    assert_eq!(back.path.actions, cex.actions);
    let last = &itf["states"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["server"]["up"], serde_json::json!([true, true]), "{last}");
    assert!(last["keys_durable"][1].is_array(), "two stores, one per instance: {last}");
    assert!(text.contains(r#""instance":1"#), "the second instance is named in the trace");
    // A one-instance trace keeps the shape it had: one store, `up` a boolean, no instance, a
    // crash with no parameter; and the seed traces written before instances existed still
    // read back and validate.
    let mut c = cell(ServerImpl::Plain, 1, None, one_call(1));
    (c.profile, c.transport, c.client) = ("mcp-2025-11-25".into(), Transport::Stdio, ClientPolicy::RetryOnDisconnect);
    let one = model(c);
    let cex = check_property(&one, PropertyKind::AtMostOnce).counterexample.unwrap();
    assert!(cex.actions.contains(&Action::ServerCrash { instance: 0 }), "{:?}", cex.actions);
    let itf = to_itf(&one, TraceKind::Counterexample(PropertyKind::AtMostOnce), &cex, false);
    let text = serde_json::to_string(&itf).unwrap();
    assert!(!text.contains("instance"), "{text}");
    let last = itf["states"].as_array().unwrap().last().unwrap();
    assert!(last["server"]["up"].is_boolean() && last["keys_durable"][0].is_number(), "{last}");
    assert!(last["ids_seen"].is_object(), "{last}");
    assert!(text.contains(r##"{"tag":"ServerCrash","value":{"#tup":[]}}"##), "{text}");
    let old = Profile::load("mcp-2025-11-25").unwrap();
    TraceFile::parse("one.itf.json", &text).unwrap().validate("one.itf.json", &old).unwrap();
    let seeds = concat!(env!("CARGO_MANIFEST_DIR"), "/../fuzz/corpus/trace");
    let mut read = 0;
    for entry in std::fs::read_dir(seeds).unwrap() {
        let path = entry.unwrap().path();
        if !path.file_name().unwrap().to_string_lossy().starts_with("seed-") {
            continue; // the fuzzer's own finds: inputs of any shape
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.display().to_string();
        let file = TraceFile::parse(&name, &text).unwrap();
        let profile = Profile::load(&file.config.profile).unwrap();
        file.validate(&name, &profile).unwrap_or_else(|e| panic!("{e}"));
        read += 1;
    }
    assert!(read >= 4, "{read} seed traces");
}

#[test]
fn several_instances_are_refused_where_they_cannot_arise() {
    let refused = |c: Config| {
        let p = Profile::load(&c.profile).unwrap();
        c.applicable(&p).unwrap_err()
    };
    let said = |w: NotApplicable, kind: &str, text: &str| w.kind() == kind && w.to_string().contains(text);
    let base = cell(ServerImpl::KeyDurable, 2, None, one_call(1));
    let stdio = Config { transport: Transport::Stdio, ..base.clone() };
    assert!(said(refused(stdio), "meaningless", "--transport http"));
    let old = cell(ServerImpl::Plain, 2, None, one_call(1));
    let old = Config { profile: "mcp-2025-11-25".into(), ..old };
    assert!(said(refused(old), "outside-profile", "server_instances = single"));
    let one = Config { deployment: Deployment { instances: 1, store: Some(StoreScope::PerInstance) }, ..base.clone() };
    assert!(said(refused(one), "meaningless", "--instances 2"));
    let three = Config { deployment: Deployment { instances: 3, store: None }, ..base.clone() };
    assert!(said(refused(three), "out-of-range", "out of range"));
    let memory = cell(ServerImpl::KeyVolatile, 2, Some(StoreScope::Shared), one_call(1));
    assert!(said(refused(memory), "meaningless", "process's memory"));
    let plain = cell(ServerImpl::Plain, 2, Some(StoreScope::PerInstance), one_call(1));
    assert!(said(refused(plain), "meaningless", "keeps no store"));
    // A store override equal to the preset's is no override: one cell, one name.
    let same = cell(ServerImpl::KeyDurable, 2, Some(StoreScope::Shared), one_call(1)).normalised();
    assert_eq!(same.deployment.store, None);
    assert_eq!(same.to_string(), base.to_string());
    assert!(base.to_string().contains("--instances 2"), "{base}");
}

#[test]
fn cells_that_differ_only_in_their_store_are_different_searches() {
    let shared = model(cell(ServerImpl::KeyDurable, 2, None, one_call(0)));
    let own = model(cell(ServerImpl::KeyDurable, 2, Some(StoreScope::PerInstance), one_call(0)));
    let one = model(cell(ServerImpl::KeyDurable, 1, None, one_call(0)));
    assert_ne!(shared.behaviour_key(), own.behaviour_key());
    assert_ne!(shared.behaviour_key(), one.behaviour_key());
    // And the matrix gives each its own verdict: the shared store holds, its own store does not.
    let verdict = |m: &McpModel| check_property(m, PropertyKind::AtMostOnce).verdict;
    assert_eq!((verdict(&shared), verdict(&own)), (Verdict::Holds, Verdict::Violated));
}

#[test]
fn an_outcome_query_is_answered_by_any_running_instance_from_the_shared_store() {
    let config = Config { profile: "outcome-query".into(), ..cell(ServerImpl::KeyDurable, 2, None, one_call(1)) };
    let m = model(config.clone());
    // Instance 0 takes the call's effect and dies with its response unread; instance 1 answers
    // the query from the store both share: the client learns the call completed, and does not
    // retry.
    let mut s = m.init_states().remove(0);
    let path = [
        Action::ClientCall { call: 0 },
        Action::ServerReceive { call: 0, attempt: 0, instance: 0 },
        Action::ServerCommit { call: 0, attempt: 0 },
        Action::ServerCrash { instance: 0 },
        Action::ClientSeesDisconnect { call: 0, attempt: 0 },
    ];
    for a in path {
        let mut allowed = Vec::new();
        m.actions(&s, &mut allowed);
        assert!(allowed.contains(&a), "{a} is not allowed in {s:?}");
        s = m.next_state(&s, a).unwrap();
    }
    let query = Action::ClientQueryOutcome { call: 0 };
    let mut allowed = Vec::new();
    m.actions(&s, &mut allowed);
    assert!(allowed.contains(&query), "instance 1 runs, so the query is answered: {allowed:?}");
    let after = m.next_state(&s, query).unwrap();
    assert_eq!(after.calls[0].phase, state::Phase::Succeeded, "completed, from the shared record");
    // Per-instance stores are refused, with the reason: which instance answers is not modelled.
    let own = Config { deployment: Deployment { instances: 2, store: Some(StoreScope::PerInstance) }, ..config };
    let why = own.applicable(&Profile::load("outcome-query").unwrap()).unwrap_err();
    assert_eq!(why.kind(), "not-modelled", "{why}");
    assert!(why.to_string().contains("--store shared"), "{why}");
}

#[test]
fn a_stream_that_breaks_before_any_instance_read_its_request_breaks_no_rule() {
    // The instances trace: the first attempt's stream breaks while its request is still in
    // transit. No instance has read it, so no server can act on the close there: a server
    // that treats the close as a cancellation takes the same steps (the cancellation cannot
    // overtake its request), and the step is no server's doing.
    let m = model(cell(ServerImpl::KeyDurable, 2, Some(StoreScope::PerInstance), one_call(0)));
    let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.expect("violated");
    let at = cex.actions.iter().position(|a| matches!(a, Action::StreamBreak { .. })).expect("a broken stream");
    let Action::StreamBreak { call, attempt } = cex.actions[at] else { unreachable!() };
    assert_eq!(cex.states[at + 1].attempts[call as usize][attempt as usize].server, ServerSide::Unseen);
    let flags = rules::breaches(&m, &cex.states[at + 1], &cex.actions[at]);
    assert!(flags.is_empty(), "step {} {}: {flags:?}", at + 1, cex.actions[at]);
    // The same cell with a server that stops a cancelled request before its effect: the same
    // steps, so the ignoring server's choice plays no part in the violation.
    let conformant = Config { cancel: Some(Cancellation::BeforeEffect), ..m.config.clone() };
    let other = check_property(&model(conformant), PropertyKind::AtMostOnce).counterexample.expect("violated");
    assert_eq!(other.actions, cex.actions);
}
