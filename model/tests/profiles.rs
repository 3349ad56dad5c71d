//! Loading spec profiles: the built-ins resolve with citations on every knob, `extends`
//! overrides, and every kind of bad file is rejected with its file, line and reason.

use mcp_once_model::profile::{IdScope, KeyPlacement, KnobId, Profile};
use mcp_once_testkit::{scratch, Scratch};
use std::path::Path;

fn temp_dir(name: &str) -> Scratch {
    scratch!("profiles", name)
}

fn write(dir: &Path, file: &str, text: &str) -> String {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn error_of(text: &str) -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = temp_dir(&format!("bad{}", NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)));
    let path = write(&dir, "bad.toml", text);
    let err = Profile::load(&path).unwrap_err().to_string();
    assert!(err.starts_with(&path), "error names the file: {err}");
    assert!(!err.contains('\n'), "one line: {err}");
    err
}

const HEADER: &str =
    "name = \"p\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"mcp-2026-07-28\"\n";
const CITE: &str = "[knobs.request_id_scope.cite]\nrevision = \"x\"\npath = \"p\"\nsection = \"s\"\nquote = \"q\"\n";

#[test]
fn every_builtin_knob_has_a_citation_with_a_quote_and_a_path() {
    for name in Profile::builtin_names() {
        let p = Profile::load(name).unwrap();
        let table = p.knob_table();
        assert_eq!(table.len(), KnobId::ALL.len());
        for (knob, _, cite, _) in table {
            assert!(!cite.quote.trim().is_empty(), "{name}.{knob} quote");
            assert!(cite.path.contains('/') && cite.path.contains('.'), "{name}.{knob} path {}", cite.path);
            assert!(!cite.section.is_empty() && !cite.revision.is_empty(), "{name}.{knob}");
        }
    }
}

#[test]
fn the_revisions_differ_where_the_spec_text_differs() {
    let old = Profile::load("mcp-2025-11-25").unwrap();
    let new = Profile::load("mcp-2026-07-28").unwrap();
    assert_eq!(old.knobs.request_id_scope.value, IdScope::Session);
    assert_eq!(new.knobs.request_id_scope.value, IdScope::Outstanding);
    assert!(!old.knobs.http_disconnect_is_cancel.value);
    assert!(new.knobs.http_disconnect_is_cancel.value);
    assert!(new
        .knobs
        .http_disconnect_is_cancel
        .cite
        .quote
        .contains("**MUST** be treated by the server as cancellation"));
    let sep = Profile::load("sep-3182").unwrap();
    assert_eq!(sep.knobs.idempotency_key.value, KeyPlacement::Params);
    // Inherited knobs keep the citation and say where they came from.
    assert_eq!(sep.knobs.request_id_scope, new.knobs.request_id_scope);
    assert_eq!(sep.knobs.request_id_scope.set_by, "mcp-2026-07-28");
    assert_eq!(sep.knobs.idempotency_key.set_by, "sep-3182");
}

#[test]
fn a_profile_file_can_extend_a_builtin_or_a_sibling_file_and_override_a_knob() {
    let dir = temp_dir("extends");
    let base = format!("{HEADER}[knobs.request_id_scope]\nvalue = \"session\"\n{CITE}");
    write(&dir, "base.toml", &base);
    let child = "name = \"child\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"base\"\n";
    let path = write(&dir, "child.toml", child);
    let p = Profile::load(&path).unwrap();
    assert_eq!(p.knobs.request_id_scope.value, IdScope::Session);
    assert_eq!(p.knobs.request_id_scope.set_by, "p");
    assert_eq!(p.knobs.http_disconnect_is_cancel.set_by, "mcp-2026-07-28");
}

#[test]
fn an_unknown_knob_is_rejected_with_file_line_and_name() {
    let err = error_of(&format!("{HEADER}\n[knobs.retry_budget]\nvalue = 3\n"));
    assert!(err.contains(":7:"), "{err}");
    assert!(err.contains("retry_budget"), "{err}");
}

#[test]
fn an_unknown_value_is_rejected_with_its_line() {
    let err = error_of(&format!("{HEADER}[knobs.request_id_scope]\nvalue = \"global\"\n{CITE}"));
    assert!(err.contains(":7:"), "{err}");
    assert!(err.contains("global") && err.contains("session"), "{err}");
}

#[test]
fn a_knob_without_a_citation_is_rejected() {
    let err = error_of(&format!("{HEADER}[knobs.request_id_scope]\nvalue = \"session\"\n"));
    assert!(err.contains("cite"), "{err}");
}

#[test]
fn malformed_toml_is_rejected_with_its_line() {
    let err = error_of(&format!("{HEADER}[knobs.request_id_scope\nvalue = 1\n"));
    assert!(err.contains(":6:"), "{err}");
}

#[test]
fn a_profile_without_extends_must_set_every_knob() {
    let err = error_of("name = \"p\"\ntitle = \"t\"\nkind = \"revision\"\nrevision = \"2025-11-25\"\n");
    assert!(err.contains("missing knob `knobs.request_id_scope`"), "{err}");
}

#[test]
fn contradicting_knobs_are_rejected_at_the_knob() {
    let text = format!(
        "{HEADER}[knobs.idempotency_semantics]\nvalue = \"dedup\"\n{}",
        CITE.replace("request_id_scope", "idempotency_semantics")
    );
    let err = error_of(&text);
    assert!(err.contains(":7:") && err.contains("idempotency_key"), "{err}");
}

#[test]
fn an_unknown_extends_and_a_cycle_are_rejected() {
    let err =
        error_of("name = \"p\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"nope\"\n");
    assert!(err.contains(":5:") && err.contains("unknown profile `nope`"), "{err}");
    let dir = temp_dir("cycle");
    let a = write(
        &dir,
        "a.toml",
        "name = \"a\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"b\"\n",
    );
    write(
        &dir,
        "b.toml",
        "name = \"b\"\ntitle = \"t\"\nkind = \"proposal\"\nrevision = \"2026-07-28\"\nextends = \"a\"\n",
    );
    let err = Profile::load(&a).unwrap_err().to_string();
    assert!(err.contains("longer than 8"), "{err}");
}

#[test]
fn an_unknown_profile_name_lists_the_builtins() {
    let err = Profile::load("mcp-1999").unwrap_err().to_string();
    assert!(err.contains("mcp-2025-11-25") && err.contains("sep-3182"), "{err}");
}

#[test]
fn a_changelog_citation_must_say_it_is_not_normative() {
    let cite = CITE.replace("path = \"p\"", "path = \"docs/specification/2026-07-28/changelog.mdx\"");
    let err = error_of(&format!("{HEADER}[knobs.request_id_scope]\nvalue = \"session\"\n{cite}"));
    assert!(err.contains(":7:") && err.contains("request_id_scope"), "{err}");
    assert!(err.contains("normative = false"), "{err}");
    let dir = temp_dir("changelog");
    let ok = write(
        &dir,
        "ok.toml",
        &format!("{HEADER}[knobs.request_id_scope]\nvalue = \"session\"\n{cite}normative = false\n"),
    );
    let p = Profile::load(&ok).unwrap();
    let (_, _, cite, _) = p.knob_table().into_iter().find(|(k, ..)| *k == KnobId::RequestIdScope).unwrap();
    assert!(!cite.normative);
    assert!(cite.to_string().contains("not normative"), "{cite}");
}

#[test]
fn the_2026_07_28_reissue_must_is_marked_as_changelog_only() {
    let p = Profile::load("mcp-2026-07-28").unwrap();
    for (knob, _, cite, _) in p.knob_table() {
        let from_changelog = cite.path.ends_with("changelog.mdx");
        assert_eq!(!cite.normative, from_changelog, "{knob}: {cite}");
        if knob == KnobId::ReissueLostRequest {
            assert!(from_changelog, "{knob}");
            assert!(cite.note.as_deref().is_some_and(|n| n.contains("normative")), "{knob} names the normative text");
        }
    }
}
