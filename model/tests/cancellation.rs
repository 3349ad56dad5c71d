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
fn ignoring_a_closed_stream_breaks_a_must_over_2026_07_28_http_only() {
    // 2026-07-28 streamable-http.mdx: the server MUST treat a closed stream as a cancellation.
    let m = cell(ServerImpl::KeyAfterEffect, None, 0);
    let knobs: Vec<KnobId> = conformance::server_breaches(&m.config, &m.profile).iter().map(|b| b.knob).collect();
    assert_eq!(knobs, vec![KnobId::HttpDisconnectIsCancel]);
    for cancel in [Cancellation::BeforeEffect, Cancellation::Interrupts] {
        let m = cell(ServerImpl::KeyAfterEffect, Some(cancel), 0);
        assert!(conformance::server_breaches(&m.config, &m.profile).is_empty(), "under {}", m.config);
    }
    // The conformant servers of its kind: the two that treat the close as a cancellation,
    // every other parameter the same.
    let variants = conformance::conformant_variants(&m.config, &m.profile);
    let cancels: Vec<Cancellation> = variants.iter().map(|c| c.cancel()).collect();
    assert_eq!(cancels, vec![Cancellation::BeforeEffect, Cancellation::Interrupts]);
    assert!(variants.iter().all(|c| Config { cancel: None, ..c.clone() } == m.config), "{variants:?}");
    // Over stdio a server SHOULD stop; under 2025-11-25 a disconnect SHOULD NOT be a
    // cancellation: neither is a MUST, so ignoring breaks nothing there.
    for m in [cell_under("mcp-2026-07-28", Transport::Stdio, None), cell_under("mcp-2025-11-25", Transport::Http, None)]
    {
        assert!(conformance::server_breaches(&m.config, &m.profile).is_empty(), "under {}", m.config);
        assert!(conformance::conformant_variants(&m.config, &m.profile).is_empty(), "under {}", m.config);
    }
    let plain = cell_under("mcp-2026-07-28", Transport::Http, None);
    assert_eq!(conformance::server_breaches(&plain.config, &plain.profile).len(), 1, "under {}", plain.config);
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
    // The ignoring server's run marks the close of a stream whose request the server had read
    // and not yet taken effect of, and only that.
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
        assert!(breaks.iter().all(|b| b.knob == KnobId::HttpDisconnectIsCancel));
    }
    // Its stream breaks before the server reads the request, so no step of it is marked.
    assert!(
        own_cex.actions.iter().position(|a| matches!(a, Action::StreamBreak { .. }))
            < own_cex.actions.iter().position(|a| matches!(a, Action::ServerReceive { .. }))
    );
}
