//! Multi round-trip requests: a 2026-07-28 tool that asks for input answers
//! with an input-required result, the client sends `tools/call` again under a new id with its
//! input, and the handler runs from the start. A handler that takes its effect before it asks
//! runs it again on its continuation with no fault at all, durable key or not (SEP-3182 leaves
//! continuations outside its key's scope, and a key of their own would not help: the second
//! effect is the handler's); one that carries "effect done" in `requestState` is safe from its
//! own continuations but not from a retried first request it never answered.

use mcp_once_model::state::{Phase, ServerSide};
use mcp_once_model::*;

fn cell(
    profile: &str,
    transport: Transport,
    client: ClientPolicy,
    server: ServerImpl,
    kind: HandlerKind,
    crashes: u8,
) -> Config {
    Config::builder(profile).transport(transport).client(client).server(server).handler(kind).crashes(crashes).build()
}

fn model(config: Config) -> McpModel {
    let profile = Profile::load(&config.profile).unwrap();
    McpModel::new(config, profile).unwrap()
}

fn shortest(m: &McpModel, p: PropertyKind) -> Counterexample {
    let r = check_property(m, p);
    assert_eq!(r.verdict, Verdict::Violated, "{p} under {}", m.config);
    let cex = r.counterexample.unwrap();
    // The main search agrees on the length (both breadth-first, independent).
    let e = explore(m, &[p]);
    assert_eq!(e.results[0].counterexample.as_ref().map(|c| c.len()), Some(cex.len()), "{p} under {}", m.config);
    cex
}

#[test]
fn a_handler_that_charges_before_it_asks_charges_again_on_its_continuation_under_a_durable_key() {
    let m = model(cell(
        "sep-3182",
        Transport::Http,
        ClientPolicy::RetryAny,
        ServerImpl::KeyDurable,
        HandlerKind::InputAfterEffect,
        0,
    ));
    let cex = shortest(&m, PropertyKind::AtMostOnce);
    use Action as A;
    assert_eq!(
        cex.actions,
        vec![
            A::ClientCall { call: 0 },
            A::ServerReceive { call: 0, attempt: 0, instance: 0 },
            A::ServerCommit { call: 0, attempt: 0 },
            A::ServerRespond { call: 0, attempt: 0 },
            A::ClientReceive { call: 0, attempt: 0 },
            A::ClientContinue { call: 0, attempt: 1 },
            A::ServerReceive { call: 0, attempt: 1, instance: 0 },
            A::ServerCommit { call: 0, attempt: 1 },
        ],
        "no fault at all: the protocol's own second round runs the effect again"
    );
    let last = cex.states.last().unwrap();
    let (first, second) = (last.attempts[0][0], last.attempts[0][1]);
    assert_eq!(cex.states[4].attempts[0][0].server, ServerSide::RespondedInput);
    assert_eq!(cex.states[5].calls[0].phase, Phase::InputRequired);
    assert_ne!(first.key, 0, "the first request carries the key");
    assert_eq!(second.key, 0, "a continuation is outside SEP-3182's scope: it carries no key");
    assert_eq!((first.round, second.round), (0, 1));
    assert_ne!(first.id, second.id, "mrtr.mdx: the id MUST differ between the first request and the retry");
    assert_eq!(last.ledger[0], 2);
    // The continuation's steps cite the MRTR clause and SEP-3182's exclusion.
    let knobs = rules::knobs_for(&m, &cex.states[6], &cex.actions[5]);
    assert_eq!(knobs, vec![KnobId::InputRequired, KnobId::IdempotencyContinuations]);
    let cites = rules::citations(&m, &cex.states[6], &cex.actions[5]);
    assert!(cites[1].2.quote.contains("intentionally outside the scope"), "{:?}", cites[1].2);
}

#[test]
fn a_stateful_handler_is_safe_from_its_continuations_under_a_durable_key_even_with_a_crash() {
    for transport in [Transport::Stdio, Transport::Http] {
        let m = model(cell(
            "sep-3182",
            transport,
            ClientPolicy::RetryAny,
            ServerImpl::KeyDurable,
            HandlerKind::InputAfterEffectStateful,
            1,
        ));
        let r = explore(&m, PropertyKind::ALL);
        assert_eq!(r.results[0].verdict, Verdict::Holds, "at-most-once under {}", m.config);
        assert_eq!(r.worst.effects, 1, "under {}", m.config);
    }
}

#[test]
fn a_stateful_handler_still_charges_twice_when_its_input_request_is_lost_and_the_first_request_retried() {
    // No key: the input-required answer (carrying requestState) is lost with the timed-out
    // attempt, so the client retries the first request, which has no requestState.
    let m = model(cell(
        "mcp-2026-07-28",
        Transport::Stdio,
        ClientPolicy::RetryOnTimeout,
        ServerImpl::Plain,
        HandlerKind::InputAfterEffectStateful,
        0,
    ));
    let cex = shortest(&m, PropertyKind::AtMostOnce);
    let last = cex.states.last().unwrap();
    assert!(cex.actions.contains(&Action::ClientRetry { call: 0, attempt: 1 }), "{:?}", cex.actions);
    assert!(!cex.actions.iter().any(|a| matches!(a, Action::ClientContinue { .. })), "{:?}", cex.actions);
    assert_eq!(
        (last.attempts[0][0].round, last.attempts[0][1].round),
        (0, 0),
        "the retried request is a first request"
    );
    assert_eq!(last.ledger[0], 2);
}

#[test]
fn a_handler_that_asks_first_charges_twice_when_its_continuation_is_retried_outside_the_keys_scope() {
    let m = model(cell(
        "sep-3182",
        Transport::Http,
        ClientPolicy::RetryAny,
        ServerImpl::KeyDurable,
        HandlerKind::InputBeforeEffect,
        0,
    ));
    let cex = shortest(&m, PropertyKind::AtMostOnce);
    let last = cex.states.last().unwrap();
    // Both effects come from round 1 (the continuation and its retry), neither with a key.
    let effects: Vec<_> = cex
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::ServerCommit { call: 0, attempt } => Some(last.attempts[0][*attempt as usize]),
            _ => None,
        })
        .collect();
    assert_eq!(effects.len(), 2);
    assert!(effects.iter().all(|t| t.round == 1 && t.key == 0), "{effects:?}");
    // With no retry at all, asking first is safe: the effect is taken once, in the last round.
    let mut none = cell(
        "sep-3182",
        Transport::Http,
        ClientPolicy::NoRetry,
        ServerImpl::KeyDurable,
        HandlerKind::InputBeforeEffect,
        1,
    );
    none.bounds.retries = 0;
    assert_eq!(check_property(&model(none), PropertyKind::AtMostOnce).verdict, Verdict::Holds);
}

#[test]
fn two_rounds_take_the_effect_three_times_without_a_fault() {
    let mut c = cell(
        "mcp-2026-07-28",
        Transport::Stdio,
        ClientPolicy::NoRetry,
        ServerImpl::Plain,
        HandlerKind::InputAfterEffect,
        0,
    );
    c.handler = Handler::new(HandlerKind::InputAfterEffect, Some(2));
    c.bounds.retries = 0;
    let m = model(c);
    let r = explore(&m, PropertyKind::ALL);
    assert_eq!(r.worst.effects, 3, "one effect per round: the first request and two continuations");
    let trace = r.worst.trace.unwrap();
    assert_eq!(trace.actions.iter().filter(|a| matches!(a, Action::ClientContinue { .. })).count(), 2);
}

#[test]
fn a_handler_axis_is_refused_where_it_cannot_mean_anything() {
    let refused = |c: Config| {
        let p = Profile::load(&c.profile).unwrap();
        c.applicable(&p).unwrap_err()
    };
    let base = cell(
        "mcp-2026-07-28",
        Transport::Stdio,
        ClientPolicy::RetryAny,
        ServerImpl::Plain,
        HandlerKind::InputAfterEffect,
        1,
    );
    let old = Config { profile: "mcp-2025-11-25".into(), ..base.clone() };
    let said = |w: NotApplicable, kind: &str, text: &str| w.kind() == kind && w.to_string().contains(text);
    assert!(said(refused(old), "outside-profile", "input_required = none"));
    let rounds = Config { handler: Handler { kind: HandlerKind::EffectOnly, rounds: 1 }, ..base.clone() };
    assert!(said(refused(rounds), "meaningless", "--rounds applies"));
    let many = Config { handler: Handler { kind: HandlerKind::InputAfterEffect, rounds: 3 }, ..base.clone() };
    assert!(said(refused(many), "out-of-range", "out of range"));
    let mut framework = Config { client: ClientPolicy::FrameworkRetry, ..base };
    framework.bounds.retries = 2;
    assert!(said(refused(framework), "not-modelled", "needs 6 requests"));
}

#[test]
fn the_effect_only_handler_is_the_model_of_before() {
    // Every cell of the default matrix has the default handler, and writing it out changes
    // neither the configuration's text nor its file form.
    let profiles = catalogue::builtin_profiles();
    let cells = catalogue::matrix(&profiles);
    assert!(cells.iter().all(|c| c.handler == Handler::default()));
    let c = &cells[0];
    assert!(!c.to_string().contains("--handler"));
    let json = serde_json::to_value(c).unwrap();
    assert!(json.get("handler").is_none(), "{json}");
    let with = Config { handler: Handler::new(HandlerKind::InputAfterEffect, None), ..c.clone() };
    assert!(with.to_string().contains(" --handler input-after-effect --calls"), "{with}");
    let back: Config = serde_json::from_value(serde_json::to_value(&with).unwrap()).unwrap();
    assert_eq!(back, with);
}

#[test]
fn cells_that_differ_only_in_their_handler_are_different_searches() {
    // The matrix and the tests share one search among cells with one behaviour key: a handler
    // must be part of it, or every handler would get the effect-only verdicts.
    let base =
        cell("sep-3182", Transport::Http, ClientPolicy::RetryAny, ServerImpl::KeyDurable, HandlerKind::EffectOnly, 0);
    let keys: std::collections::HashSet<mcp_once_model::BehaviourKey> = [
        HandlerKind::EffectOnly,
        HandlerKind::InputAfterEffect,
        HandlerKind::InputBeforeEffect,
        HandlerKind::InputAfterEffectStateful,
    ]
    .into_iter()
    .map(|kind| model(Config { handler: Handler::new(kind, None), ..base.clone() }).behaviour_key())
    .collect();
    assert_eq!(keys.len(), 4);
    let two = Config { handler: Handler::new(HandlerKind::InputAfterEffect, Some(2)), ..base.clone() };
    assert!(!keys.contains(&model(two).behaviour_key()));
}

#[test]
fn under_framework_retry_a_key_per_step_is_a_key_per_attempt_only_while_no_round_asks_for_input() {
    let fw = |kind, key, retries| {
        let c = cell("sep-3182", Transport::Http, ClientPolicy::FrameworkRetry, ServerImpl::KeyDurable, kind, 1);
        model(Config { key, bounds: Bounds { calls: 1, retries, crashes: 1 }, ..c })
    };
    // Every attempt is a re-run: the two cells are one search, and the unreduced models agree
    // on every answer, so sharing it hides nothing.
    let (step, attempt) =
        (fw(HandlerKind::EffectOnly, KeyLifetime::PerStep, 2), fw(HandlerKind::EffectOnly, KeyLifetime::PerAttempt, 2));
    assert_eq!(step.behaviour_key(), attempt.behaviour_key());
    let lengths = |m: &McpModel| shortest_lengths(&m.without_reductions(), PropertyKind::ALL, usize::MAX).unwrap();
    let (a, b) = (lengths(&step), lengths(&attempt));
    assert_eq!((a.violations, a.worst_effects, a.worst_length), (b.violations, b.worst_effects, b.worst_length));
    // A continuation keeps its step and is an attempt of its own: the keys differ, and so do
    // the searches.
    let (step, attempt) = (
        fw(HandlerKind::InputBeforeEffect, KeyLifetime::PerStep, 1),
        fw(HandlerKind::InputBeforeEffect, KeyLifetime::PerAttempt, 1),
    );
    assert_ne!(step.behaviour_key(), attempt.behaviour_key());
}
