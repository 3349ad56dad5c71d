//! The profiles' citations against the text they quote: each knob's section is one the cited
//! file has, its quote keeps the clause's own keywords, its note says nothing the text does not,
//! and a step cites a clause about what happened at that step.

use mcp_once_model::*;

fn cite(profile: &str, knob: KnobId) -> Citation {
    let p = Profile::load(profile).unwrap();
    let (_, _, c, _) = p.knob_table().into_iter().find(|(k, ..)| *k == knob).unwrap();
    c.clone()
}

#[test]
fn only_changelog_text_is_marked_not_normative() {
    for name in Profile::builtin_names() {
        let p = Profile::load(name).unwrap();
        for (knob, _, c, set_by) in p.knob_table() {
            if set_by != name {
                continue;
            }
            assert_eq!(c.normative, !c.path.ends_with("changelog.mdx"), "{name} {knob}: {c}");
        }
    }
}

#[test]
fn a_re_issue_needs_a_new_id_by_the_normative_id_rule_of_2026_07_28() {
    // basic/index.mdx: a lost request never received a response, so its id is still in use.
    let c = cite("mcp-2026-07-28", KnobId::RetryRequestId);
    assert_eq!(c.path, "docs/specification/2026-07-28/basic/index.mdx", "{c}");
    assert!(c.normative, "{c}");
    assert!(c.quote.contains("not yet received a response for"), "{c}");
    let note = c.note.unwrap_or_default();
    assert!(!note.contains("not ruled out"), "{note}");
}

#[test]
fn the_2025_11_25_session_header_is_quoted_as_the_text_spells_it() {
    let c = cite("mcp-2025-11-25", KnobId::ServerInstances);
    assert!(c.quote.contains("`MCP-Session-Id`") && !c.quote.contains("Mcp-Session-Id"), "{c}");
    assert_eq!(c.section, "Streamable HTTP › Session Management", "{c}");
    assert!(c.normative, "{c}");
}

#[test]
fn a_retry_cites_the_clause_about_how_its_attempt_failed() {
    // A stdio retry after a timeout: the changelog's sentence about a broken response stream
    // is not about it; the timeout clause is. An HTTP retry after a broken stream cites it.
    for (transport, client, wanted, unwanted) in [
        (Transport::Stdio, ClientPolicy::RetryOnTimeout, KnobId::TimeoutSendsCancel, KnobId::ReissueLostRequest),
        (Transport::Http, ClientPolicy::RetryOnDisconnect, KnobId::ReissueLostRequest, KnobId::TimeoutSendsCancel),
    ] {
        let config = Config::builder("mcp-2026-07-28")
            .transport(transport)
            .client(client)
            .server(ServerImpl::Plain)
            .crashes(0)
            .build();
        let m = McpModel::new(config, Profile::load("mcp-2026-07-28").unwrap()).unwrap();
        let cex = check_property(&m, PropertyKind::AtMostOnce).counterexample.expect("violated");
        let at = cex.actions.iter().position(|a| matches!(a, Action::ClientRetry { .. })).expect("a retry");
        let knobs = rules::knobs_for(&m, &cex.states[at + 1], &cex.actions[at]);
        assert!(knobs.contains(&wanted) && !knobs.contains(&unwanted), "{transport}: {knobs:?} {:?}", cex.actions);
        let cites = rules::citations(&m, &cex.states[at + 1], &cex.actions[at]);
        let stream = cites.iter().any(|(.., c)| c.quote.contains("A broken response stream"));
        assert_eq!(stream, transport == Transport::Http, "{transport}: {cites:?}");
    }
}

#[test]
fn sep_1686_notes_keep_its_task_status_and_task_id_shoulds() {
    let validation = cite("outcome-query", KnobId::TaskIdValidation).note.unwrap_or_default();
    assert!(
        validation.contains(
            "The `unknown` status is a terminal fallback state for unexpected error conditions. Receivers **SHOULD** use `failed` with an error message instead when possible."
        ),
        "{validation}"
    );
    assert!(!validation.contains("Nothing in the SEP moves a task whose run was lost"), "{validation}");
    let key = cite("outcome-query", KnobId::IdempotencyKey).note.unwrap_or_default();
    assert!(key.contains("Task IDs **SHOULD** be unique across all tasks controlled by the receiver."), "{key}");
}

/// The headings of seps/sep-3182-request-idempotency.md (refs/pull/3182/head) under
/// `## Specification`, as a section names them.
const SEP_3182_SECTIONS: &[&str] = &[
    "Specification › Overview",
    "Specification › Capability declaration",
    "Specification › Request format",
    "Specification › Server behavior on a repeated key",
    "Specification › Request equivalence",
    "Specification › Retention",
    "Specification › Scope",
    "Specification › Implementation ordering is intentionally unspecified",
    "Specification › Relationship to SEP-2663 (Tasks Extension)",
    "Specification › Relationship to the 2026-07-28 stateless core and MRTR",
    "Security Implications",
];

#[test]
fn sep_3182_citations_name_its_sections_and_keep_its_musts() {
    let p = Profile::load("sep-3182").unwrap();
    for (knob, _, c, set_by) in p.knob_table() {
        if set_by != "sep-3182" {
            continue;
        }
        let heading = c.section.split(", item").next().unwrap();
        assert!(SEP_3182_SECTIONS.contains(&heading), "{knob}: section {:?}", c.section);
    }
    let in_progress = cite("sep-3182", KnobId::IdempotencyInProgress);
    assert!(
        in_progress.quote.contains(
            "the server MUST NOT begin a second execution of the tool for the duplicate request, and MUST NOT block the duplicate request indefinitely waiting for the original to finish"
        ),
        "{in_progress}"
    );
    assert_eq!(in_progress.section, "Specification › Server behavior on a repeated key, item 1");
}
