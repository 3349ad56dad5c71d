//! The cancellation axis: a server is a (store, cancellation) pair, the
//! `--server` names are presets, and `--cancel` overrides the preset's cancellation. Over
//! 2026-07-28 HTTP a broken stream is a cancellation, so a handler that is interrupted between
//! its effect and a separate key record loses the record with no crash at all.

use mcp_once_model::trace::{TraceFile, TraceKind};
use mcp_once_model::*;

fn cell(server: ServerImpl, cancel: Option<Cancellation>, crashes: u8) -> McpModel {
    let config = Config::builder("sep-3182")
        .transport(Transport::Http)
        .client(ClientPolicy::RetryAny)
        .key(KeyLifetime::PerCall)
        .server(server)
        .cancel(cancel)
        .crashes(crashes)
        .build();
    McpModel::new(config, Profile::load("sep-3182").unwrap()).unwrap()
}

#[test]
fn key_after_effect_interrupted_between_effect_and_record_runs_twice_with_no_crash() {
    let m = cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Interrupts), 0);
    let r = check_property(&m, PropertyKind::AtMostOnce);
    assert_eq!(r.verdict, Verdict::Violated, "under {}", m.config);
    let cex = r.counterexample.unwrap();
    assert_eq!(cex.len(), 8, "{:?}", cex.actions);
    assert!(!cex.actions.contains(&Action::ServerCrash { instance: 0 }));
    // The first attempt commits its effect, then reads its cancellation (the broken stream)
    // before it stores its key record: the record is never written, and the retry runs again.
    let commit = cex.actions.iter().position(|a| *a == Action::ServerCommit { call: 0, attempt: 0 }).unwrap();
    let interrupt = cex.actions.iter().position(|a| *a == Action::ServerReceiveCancel { call: 0, attempt: 0 });
    assert_eq!(interrupt, Some(commit + 1), "{:?}", cex.actions);
    assert!(cex.actions.contains(&Action::StreamBreak { call: 0, attempt: 0 }));
    assert!(!cex.actions.contains(&Action::ServerStoreKey { call: 0, attempt: 0 }));
    assert_eq!(cex.states[commit + 2].attempts[0][0].server, state::ServerSide::Interrupted);
    assert_eq!(cex.states.last().unwrap().ledger[0], 2);
}

#[test]
fn key_after_effect_that_ignores_cancellation_still_holds_with_no_crash() {
    for cancel in [None, Some(Cancellation::Ignores), Some(Cancellation::BeforeEffect)] {
        let m = cell(ServerImpl::KeyAfterEffect, cancel, 0);
        assert_eq!(check_property(&m, PropertyKind::AtMostOnce).verdict, Verdict::Holds, "under {}", m.config);
    }
}

#[test]
fn a_durable_atomic_key_holds_even_when_interrupted() {
    let m = cell(ServerImpl::KeyDurable, Some(Cancellation::Interrupts), 1);
    assert_eq!(check_property(&m, PropertyKind::AtMostOnce).verdict, Verdict::Holds, "under {}", m.config);
}

#[test]
fn presets_are_pairs_and_an_override_equal_to_the_preset_is_the_same_cell() {
    assert_eq!(ServerImpl::Plain.preset_cancel(), Cancellation::Ignores);
    assert_eq!(ServerImpl::HonoursCancel.preset_cancel(), Cancellation::BeforeEffect);
    assert_eq!(ServerImpl::KeyAfterEffect.preset_cancel(), Cancellation::Ignores);
    let same = cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Ignores), 0);
    assert_eq!(same.config, cell(ServerImpl::KeyAfterEffect, None, 0).config);
    assert!(!same.config.to_string().contains("--cancel"));
    let over = cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Interrupts), 0);
    assert!(over.config.to_string().contains("--server key-after-effect --cancel interrupts --calls"));
    assert_eq!(
        over.config.server_pair(),
        "key-after-effect (key records, durable, written after the effect; cancellation: interrupts)"
    );
    // `plain` with a before-effect override behaves as `honours-cancel`: the same answers.
    let profile = Profile::load("mcp-2026-07-28").unwrap();
    let pair = |server, cancel| {
        let config = Config::builder("mcp-2026-07-28")
            .transport(Transport::Http)
            .key(KeyLifetime::None)
            .server(server)
            .cancel(cancel)
            .build();
        McpModel::new(config, profile.clone()).unwrap()
    };
    let (a, b) = (pair(ServerImpl::Plain, Some(Cancellation::BeforeEffect)), pair(ServerImpl::HonoursCancel, None));
    for &p in PropertyKind::ALL {
        let (x, y) = (check_property(&a, p), check_property(&b, p));
        assert_eq!((x.verdict, x.counterexample.map(|c| c.len())), (y.verdict, y.counterexample.map(|c| c.len())));
    }
}

#[test]
fn trace_files_carry_the_cancellation_and_old_files_mean_the_preset() {
    let m = cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Interrupts), 0);
    let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.unwrap();
    let file = TraceFile::from_counterexample(&m, TraceKind::Counterexample(PropertyKind::AtMostOnce), &cex, false);
    assert_eq!(file.meta["config"]["cancel"], "interrupts");
    let text =
        serde_json::to_string(&trace::to_itf(&m, TraceKind::Counterexample(PropertyKind::AtMostOnce), &cex, false))
            .unwrap();
    let back = TraceFile::parse("t.json", &text).unwrap();
    assert_eq!(back.config, m.config);
    let valid = back.validate("t.json", &m.profile).unwrap();
    assert_eq!(valid.steps(), 8);
    // A preset cell writes its preset's value; a file without the field reads as the preset.
    let plain = cell(ServerImpl::KeyAfterEffect, None, 0);
    assert_eq!(serde_json::to_value(&plain.config).unwrap()["cancel"], "ignores");
    let mut old = serde_json::to_value(&plain.config).unwrap();
    old.as_object_mut().unwrap().remove("cancel");
    assert_eq!(serde_json::from_value::<Config>(old).unwrap(), plain.config);
    let mut old = serde_json::to_value(&plain.config).unwrap();
    old["server"] = "honours-cancel".into();
    old.as_object_mut().unwrap().remove("cancel");
    assert_eq!(serde_json::from_value::<Config>(old).unwrap().cancel(), Cancellation::BeforeEffect);
}

#[test]
fn the_default_matrix_keeps_its_cells_and_a_cancel_list_multiplies_them() {
    let profiles = catalogue::builtin_profiles();
    let default = catalogue::matrix(&profiles);
    assert!(default.iter().all(|c| c.cancel.is_none()));
    assert_eq!(catalogue::matrix_with_cancel(&profiles, &[]), default);
    let both = catalogue::matrix_with_cancel(&profiles, &[Cancellation::Ignores, Cancellation::Interrupts]);
    assert_eq!(both.len(), 2 * default.len());
    assert!(both.iter().any(|c| c.server == ServerImpl::KeyAfterEffect && c.cancel() == Cancellation::Interrupts));
}

/// `cell` under another profile and transport.
fn cell_under(profile: &str, transport: Transport, cancel: Option<Cancellation>) -> McpModel {
    let config = Config { profile: profile.into(), transport, ..cell(ServerImpl::Plain, cancel, 0).config };
    let config = Config { key: KeyLifetime::None, ..config };
    McpModel::new(config, Profile::load(profile).unwrap()).unwrap()
}

#[test]
fn ignoring_a_closed_stream_goes_against_a_should_and_breaks_no_must() {
    // 2026-07-28 streamable-http.mdx: a closed stream MUST count as a cancellation; the server
    // then SHOULD stop work on it and MUST NOT send anything more for it. One that goes on and
    // sends nothing breaks no MUST: it only does what the SHOULD advises against.
    let m = cell(ServerImpl::KeyAfterEffect, None, 0);
    let all = conformance::server_breaches(&m.config, &m.profile);
    let found: Vec<(KnobId, rules::Keyword)> = all.iter().map(|b| (b.knob, b.keyword)).collect();
    assert_eq!(found, vec![(KnobId::HttpDisconnectIsCancel, rules::Keyword::Should)]);
    assert!(all.iter().all(|b| !b.binds() && b.heading().contains("advises against")), "{all:?}");
    assert!(conformance::conformant_variants(&m.config, &m.profile).is_empty(), "no MUST to keep");
    for cancel in [Cancellation::BeforeEffect, Cancellation::Interrupts] {
        let m = cell(ServerImpl::KeyAfterEffect, Some(cancel), 0);
        assert!(conformance::server_breaches(&m.config, &m.profile).is_empty(), "under {}", m.config);
    }
    for m in [cell_under("mcp-2026-07-28", Transport::Stdio, None), cell_under("mcp-2025-11-25", Transport::Http, None)]
    {
        assert!(conformance::server_breaches(&m.config, &m.profile).is_empty(), "under {}", m.config);
        assert!(conformance::conformant_variants(&m.config, &m.profile).is_empty(), "under {}", m.config);
    }
    // No step of a run of such a server breaks a MUST.
    let plain = cell_under("mcp-2026-07-28", Transport::Http, None);
    let cex = check_property(&plain, PropertyKind::AtMostOnce).counterexample.expect("violated");
    assert!(explanation::explain_path(&plain, &cex).iter().all(|s| s.breaches.iter().all(|b| !b.binds())));
}

#[test]
fn a_conformant_server_reaches_the_crash_window_sooner_and_its_run_breaks_nothing() {
    // With a crash allowed, the ignoring server needs the crash between effect and record; the
    // server that a closed stream interrupts loses the record with no crash, in fewer steps.
    let own = check_property(&cell(ServerImpl::KeyAfterEffect, None, 1), PropertyKind::AtMostOnce);
    let own_cex = own.counterexample.expect("violated with a crash");
    let conformant =
        check_property(&cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Interrupts), 1), PropertyKind::AtMostOnce);
    let cex = conformant.counterexample.expect("violated");
    assert!(cex.len() < own_cex.len(), "{} against {}", cex.len(), own_cex.len());
    let m = cell(ServerImpl::KeyAfterEffect, Some(Cancellation::Interrupts), 1);
    assert!((0..cex.len()).all(|i| rules::breaches(&m, &cex.states[i + 1], &cex.actions[i]).is_empty()));
    // The ignoring server's run marks (as going against a SHOULD) the close of a stream whose
    // request the server had read and not yet taken effect of, and only that.
    let m = cell(ServerImpl::KeyAfterEffect, None, 1);
    for (i, a) in own_cex.actions.iter().enumerate() {
        let after = &own_cex.states[i + 1];
        let breaks = rules::breaches(&m, after, a);
        let close = matches!(a, Action::StreamBreak { .. } | Action::ClientCancel { .. });
        let before_effect = |c: u8, t: u8| {
            matches!(
                after.attempts[c as usize][t as usize].server,
                state::ServerSide::Pending | state::ServerSide::Waiting
            )
        };
        let expected = match *a {
            Action::StreamBreak { call, attempt } | Action::ClientCancel { call, attempt } => {
                before_effect(call, attempt)
            }
            _ => false,
        };
        assert_eq!(!breaks.is_empty(), close && expected, "step {} {a}: {breaks:?}", i + 1);
        assert!(breaks.iter().all(|b| b.knob == KnobId::HttpDisconnectIsCancel && !b.binds()));
    }
    // Its stream breaks before the server reads the request, so no step of it is marked.
    assert!(
        own_cex.actions.iter().position(|a| matches!(a, Action::StreamBreak { .. }))
            < own_cex.actions.iter().position(|a| matches!(a, Action::ServerReceive { .. }))
    );
}

/// The path `actions` from the first state of `m`, each step one the model offers there.
fn walk(m: &McpModel, actions: &[Action]) -> Counterexample {
    let states = mcp_once_model::search::replay(m, actions).unwrap_or_else(|(step, why)| panic!("step {step}: {why}"));
    Counterexample { states, actions: actions.to_vec(), index_path: String::new() }
}

#[test]
fn a_response_written_after_the_server_read_the_cancellation_is_marked_and_one_written_before_is_not() {
    use Action as A;
    let (call, attempt) = (0, 0);
    let head = [
        A::ClientCall { call },
        A::ServerReceive { call, attempt, instance: 0 },
        A::ClientTimeout { call, attempt },
        A::ClientCancel { call, attempt },
        A::ServerCommit { call, attempt },
    ];
    let late = [A::ServerReceiveCancel { call, attempt }, A::ServerRespond { call, attempt }];
    let early = [A::ServerRespond { call, attempt }, A::ServerReceiveCancel { call, attempt }];
    // 2026-07-28 (stdio.mdx and streamable-http.mdx § Cancellation): the server "MUST NOT send
    // any further messages for it"; 2025-11-25 (cancellation.mdx): receivers SHOULD "Not send a
    // response for the cancelled request".
    for (profile, keyword) in [("mcp-2026-07-28", "MUST NOT"), ("mcp-2025-11-25", "SHOULD")] {
        for transport in [Transport::Stdio, Transport::Http] {
            // A server that checks for its cancellation before its effect, and here reads it
            // after the effect: it may go on (the request cannot be cancelled any more), but
            // not answer. Every server step is offered (no reduction).
            let config = Config::builder(profile)
                .transport(transport)
                .client(ClientPolicy::NoRetry)
                .key(KeyLifetime::None)
                .server(ServerImpl::HonoursCancel)
                .bounds(Bounds { calls: 1, retries: 0, crashes: 0 })
                .build();
            let m = McpModel::new(config, Profile::load(profile).unwrap()).unwrap().without_reductions();
            let path = walk(&m, &[&head[..], &late[..]].concat());
            let steps = explanation::explain_path(&m, &path);
            let flagged: Vec<usize> = steps.iter().filter(|s| !s.breaches.is_empty()).map(|s| s.number).collect();
            assert_eq!(flagged, vec![7], "{profile} {transport}: {:?}", path.actions);
            let b = &steps[6].breaches[0];
            assert_eq!(b.knob.to_string(), "cancelled_request_messages", "{b:?}");
            assert!(b.what.contains(&format!("**{keyword}**")), "{profile}: {b:?}");
            // Written before the server read the cancellation: the race, not a breach.
            let path = walk(&m, &[&head[..], &early[..]].concat());
            let steps = explanation::explain_path(&m, &path);
            assert!(steps.iter().all(|s| s.breaches.is_empty()), "{profile} {transport}: {:?}", path.actions);
        }
    }
}
