//! The two rules a spec author writes in a proposal profile: servers MUST deduplicate
//! `tools/call` by request id (`request_id_dedup`), and clients MUST NOT retry after a timeout
//! unless the tool is annotated idempotent (`retry_after_timeout`, with the tool's annotation
//! as a cell parameter); and the flag on an inherited citation a proposal's value contradicts.
//! Each profile here is a file in a scratch folder, written as a user would.

use mcp_once_model::conformance::{self, Keyword};
use mcp_once_model::explanation::explain_path;
use mcp_once_model::*;
use mcp_once_testkit::{scratch, Scratch};
use std::path::Path;

/// A proposal on 2026-07-28 in `dir`, setting each `(knob, value, quote)`.
fn proposal(dir: &Path, name: &str, knobs: &[(&str, &str, &str)]) -> Profile {
    let mut text = format!(
        "name = \"{name}\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"mcp-2026-07-28\"\n"
    );
    for (knob, value, quote) in knobs {
        text.push_str(&format!(
            "\n[knobs.{knob}]\nvalue = \"{value}\"\n[knobs.{knob}.cite]\nrevision = \"X\"\npath = \"x.md\"\nsection = \"S\"\nquote = \"{quote}\"\n"
        ));
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    Profile::load(path.to_str().unwrap()).unwrap()
}

fn dir(name: &str) -> Scratch {
    scratch!("written-rules", name)
}

const SAME_ID: (&str, &str, &str) = ("retry_request_id", "same", "A retry keeps the id of the request it retries.");

fn dedup(dir: &Path, value: &str) -> Profile {
    let rule = ("request_id_dedup", value, "Servers MUST deduplicate tools/call by request ID for the session.");
    proposal(dir, &format!("dedup-{value}"), &[rule, SAME_ID])
}

fn restricted(dir: &Path, value: &str) -> Profile {
    let rule =
        ("retry_after_timeout", value, "Clients MUST NOT retry a tools/call after a timeout unless it is idempotent.");
    proposal(dir, &format!("retry-{value}"), &[rule])
}

fn cell(profile: &Profile, server: ServerImpl, client: ClientPolicy, annotation: Annotation) -> McpModel {
    let config = Config::builder(&profile.name).server(server).client(client).annotation(annotation).build();
    McpModel::new(config, profile.clone()).unwrap()
}

fn verdict(m: &McpModel, p: PropertyKind) -> Verdict {
    explore(m, &[p]).results[0].verdict
}

#[test]
fn a_server_that_does_not_dedup_by_id_is_marked_as_breaking_the_must() {
    let d = dir("dedup-cells");
    let session = dedup(&d, "must-session");
    let durable = dedup(&d, "must-durable");
    let should = dedup(&d, "should-session");
    let marks = |p: &Profile, server: ServerImpl| {
        let m = cell(p, server, ClientPolicy::RetryOnTimeout, Annotation::None);
        conformance::cell_breaches(&m.config, &m.profile)
            .into_iter()
            .filter(|b| b.knob == KnobId::RequestIdDedup)
            .map(|b| b.keyword)
            .collect::<Vec<_>>()
    };
    assert_eq!(marks(&session, ServerImpl::Plain), [Keyword::Must]);
    assert_eq!(marks(&session, ServerImpl::HonoursCancel), [Keyword::Must]);
    assert_eq!(marks(&session, ServerImpl::DedupById), []);
    assert_eq!(marks(&session, ServerImpl::DedupByIdDurable), []);
    assert_eq!(marks(&durable, ServerImpl::DedupById), [Keyword::Must], "a crash forgets the ids");
    assert_eq!(marks(&durable, ServerImpl::DedupByIdDurable), []);
    assert_eq!(marks(&should, ServerImpl::Plain), [Keyword::Should], "the clause's own keyword");
    // The released revisions ask nothing of the kind.
    let released = Profile::load("mcp-2026-07-28").unwrap();
    assert_eq!(marks(&released, ServerImpl::Plain), []);
    // The conformant servers of a plain cell are the id tables that keep the MUST.
    let m = cell(&durable, ServerImpl::Plain, ClientPolicy::RetryOnTimeout, Annotation::None);
    let servers: Vec<ServerImpl> =
        conformance::conformant_variants(&m.config, &m.profile).iter().map(|c| c.server).collect();
    assert_eq!(servers, [ServerImpl::DedupByIdDurable]);
}

#[test]
fn the_step_where_a_plain_server_runs_a_repeated_id_is_marked_and_cites_the_rule() {
    let d = dir("dedup-steps");
    let p = dedup(&d, "must-session");
    let m = cell(&p, ServerImpl::Plain, ClientPolicy::RetryOnTimeout, Annotation::None);
    let cex = explore(&m, &[PropertyKind::AtMostOnce]).results[0].counterexample.clone().expect("violated");
    let explained = explain_path(&m, &cex);
    let marked: Vec<_> = explained
        .iter()
        .flat_map(|s| &s.breaches)
        .filter(|b| b.knob == KnobId::RequestIdDedup && b.keyword == Keyword::Must)
        .collect();
    assert_eq!(
        marked.len(),
        1,
        "the second run of the id, and only it: {:?}",
        explained.iter().map(|s| &s.breaches).collect::<Vec<_>>()
    );
    // An id table in memory runs a repeated id again only after a crash, a new session.
    let m = cell(&p, ServerImpl::DedupById, ClientPolicy::RetryOnTimeout, Annotation::None);
    let cex = explore(&m, &[PropertyKind::AtMostOnce]).results[0].counterexample.clone().expect("violated");
    let explained = explain_path(&m, &cex);
    assert!(
        explained.iter().all(|s| s.breaches.is_empty()),
        "{:?}",
        explained.iter().map(|s| &s.breaches).collect::<Vec<_>>()
    );
}

#[test]
fn the_annotation_changes_the_verdict_the_way_the_retry_rule_says() {
    let d = dir("annotation");
    let idem = restricted(&d, "must-not-unless-idempotent");
    let either = restricted(&d, "must-not-unless-idempotent-or-read-only");
    let at_most_once = |p: &Profile, a: Annotation| {
        verdict(&cell(p, ServerImpl::Plain, ClientPolicy::RetryOnTimeout, a), PropertyKind::AtMostOnce)
    };
    // Not annotated idempotent: the client does not retry after its timeout, so nothing runs twice.
    assert_eq!(at_most_once(&idem, Annotation::None), Verdict::Holds);
    assert_eq!(at_most_once(&idem, Annotation::ReadOnly), Verdict::Holds);
    // Annotated so: it may retry, and the tool (whose annotation is a hint) runs twice.
    assert_eq!(at_most_once(&idem, Annotation::Idempotent), Verdict::Violated);
    assert_eq!(at_most_once(&either, Annotation::ReadOnly), Verdict::Violated);
    assert_eq!(at_most_once(&either, Annotation::None), Verdict::Holds);
    // The call the client gave up on may still have run: reported failed, effect taken.
    let m = cell(&idem, ServerImpl::Plain, ClientPolicy::RetryOnTimeout, Annotation::None);
    assert_eq!(verdict(&m, PropertyKind::NoSilentEffect), Verdict::Violated);
    // A client that retries only after a disconnect is not touched by a rule on timeouts.
    let m = cell(&idem, ServerImpl::Plain, ClientPolicy::RetryOnDisconnect, Annotation::None);
    assert_eq!(verdict(&m, PropertyKind::AtMostOnce), Verdict::Violated);
    // Without the rule, the annotation changes nothing: both run twice.
    let released = Profile::load("mcp-2026-07-28").unwrap();
    for a in [Annotation::None, Annotation::Idempotent] {
        assert_eq!(at_most_once(&released, a), Verdict::Violated, "{a}");
    }
}

#[test]
fn a_framework_re_run_after_a_timeout_is_marked_with_the_rule_s_keyword() {
    let d = dir("framework");
    let must = restricted(&d, "must-not-unless-idempotent");
    let should = restricted(&d, "should-not-unless-idempotent");
    let marks = |p: &Profile, client: ClientPolicy, a: Annotation| {
        let m = cell(p, ServerImpl::Plain, client, a);
        conformance::cell_breaches(&m.config, &m.profile)
            .into_iter()
            .map(|b| (b.party(), b.keyword))
            .collect::<Vec<_>>()
    };
    assert_eq!(marks(&must, ClientPolicy::FrameworkRetry, Annotation::None), [("client", Keyword::MustNot)]);
    assert_eq!(marks(&should, ClientPolicy::FrameworkRetry, Annotation::None), [("client", Keyword::ShouldNot)]);
    assert_eq!(marks(&must, ClientPolicy::FrameworkRetry, Annotation::Idempotent), []);
    assert_eq!(marks(&must, ClientPolicy::RetryOnTimeout, Annotation::None), [], "it honours the rule");
    // The re-run that follows a timeout is the step marked.
    let m = cell(&must, ServerImpl::Plain, ClientPolicy::FrameworkRetry, Annotation::None);
    let cex = explore(&m, &[PropertyKind::AtMostOnce]).results[0].counterexample.clone().expect("violated");
    let explained = explain_path(&m, &cex);
    let marked: Vec<_> =
        explained.iter().filter(|s| s.breaches.iter().any(|b| b.knob == KnobId::RetryAfterTimeout)).collect();
    assert!(!marked.is_empty(), "a re-run after a timeout is marked");
    for s in &marked {
        assert!(matches!(s.action, Action::FrameworkRetry { .. }), "{:?}", s.action);
    }
}

#[test]
fn an_inherited_citation_the_proposal_contradicts_is_flagged() {
    let d = dir("stale");
    let p = proposal(&d, "same-id", &[SAME_ID]);
    let stale: Vec<(KnobId, KnobId)> = p.stale_citations().iter().map(|s| (s.knob, s.against)).collect();
    assert!(stale.contains(&(KnobId::ReissueLostRequest, KnobId::RetryRequestId)), "{stale:?}");
    assert!(stale.contains(&(KnobId::RequestIdScope, KnobId::RetryRequestId)), "{stale:?}");
    let line = p.stale_citations()[0].line();
    assert!(line.contains("set by profile mcp-2026-07-28") && line.contains("set by profile same-id"), "{line}");
    // A dedup rule left beside the inherited new-id retries recognises no retry.
    let rule = ("request_id_dedup", "must-session", "Servers MUST deduplicate by request ID.");
    let p = proposal(&d, "dedup-only", &[rule]);
    let stale: Vec<KnobId> = p.stale_citations().iter().map(|s| s.knob).collect();
    assert_eq!(stale, [KnobId::RetryRequestId]);
    // Nothing to flag in the built-ins or in the worked example, which overrides every clause it changes.
    for name in Profile::builtin_names() {
        assert_eq!(Profile::load(name).unwrap().stale_citations(), [], "{name}");
    }
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../specs/proposals/id-dedup-and-annotated-retry.toml");
    assert_eq!(Profile::load(example).unwrap().stale_citations(), []);
}

/// The annotation axis at small bounds: the reductions change no verdict, no shortest length
/// and no worst case against the unreduced model (states compared in full).
#[test]
fn cells_on_the_annotation_axis_match_the_unreduced_model() {
    let d = dir("minimality");
    let profiles = [restricted(&d, "must-not-unless-idempotent"), dedup(&d, "must-session")];
    let mut compared = 0;
    for p in &profiles {
        let cells = catalogue::with_annotations(catalogue::matrix(std::slice::from_ref(p)), Annotation::ALL);
        for mut config in cells {
            config.bounds = Bounds { calls: 1, retries: 1, crashes: 1 };
            let Ok(m) = McpModel::new(config, p.clone()) else { continue };
            let (a, b) = (explore(&m, PropertyKind::ALL), explore(&m.without_reductions(), PropertyKind::ALL));
            for (r, q) in a.results.iter().zip(&b.results) {
                assert_eq!(r.verdict, q.verdict, "{} under {}", r.property, m.config);
                let len = |x: &Option<search::Counterexample>| x.as_ref().map(|c| c.len());
                assert_eq!(len(&r.counterexample), len(&q.counterexample), "{} under {}", r.property, m.config);
            }
            assert_eq!(a.worst.effects, b.worst.effects, "worst case under {}", m.config);
            compared += 1;
        }
    }
    eprintln!("annotation-axis cells compared with the unreduced model: {compared}");
    assert!(compared >= 100, "only {compared} cells");
}
