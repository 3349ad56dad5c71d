//! Inherited citations that a profile's own values contradict. A proposal `extends` a revision
//! and overrides a few knobs; a knob it leaves alone keeps the revision's value and clause, and
//! that clause may say the opposite of a value the proposal set (`retry_request_id = same`
//! beside an inherited `reissue_lost_request` whose clause re-issues a lost request "as a new
//! request with a new request ID"). Reports would then cite, at a retry that keeps its id, a
//! sentence that says it must not. The profile still loads (the knob's value is what the
//! model reads, and the author may mean it), but `profiles` and `check` flag each such pair so
//! that the author overrides the stale knob with a clause of their own.

use crate::profile::{IdDedup, IdScope, KnobId, Knobs, Profile, Reissue, RetryId};

/// One knob whose clause, set by one profile, contradicts a value another profile in the
/// `extends` chain set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleCitation {
    /// The knob whose citation no longer fits.
    pub knob: KnobId,
    /// The profile that set it.
    pub set_by: String,
    /// The knob whose value it contradicts.
    pub against: KnobId,
    /// That knob's value, as profile files spell it.
    pub against_value: String,
    /// The profile that set that value.
    pub against_set_by: String,
    /// Why the two disagree, in words.
    pub why: &'static str,
}

impl StaleCitation {
    /// One line for a report: the stale knob, its profile, the value it contradicts and why,
    /// and what to do.
    pub fn line(&self) -> String {
        format!(
            "the citation of `{}` (set by profile {}) contradicts `{} = \"{}\"` (set by profile {}): {}; set \
             `knobs.{}` in the profile with a clause that fits",
            self.knob, self.set_by, self.against, self.against_value, self.against_set_by, self.why, self.knob
        )
    }
}

/// A contradiction between a value of one knob (`against`) and the clause of another (`knob`).
struct Rule {
    against: KnobId,
    knob: KnobId,
    holds: fn(&Knobs) -> bool,
    why: &'static str,
}

const RULES: &[Rule] = &[
    Rule {
        against: KnobId::RetryRequestId,
        knob: KnobId::ReissueLostRequest,
        holds: |k| k.retry_request_id.value == RetryId::Same && k.reissue_lost_request.value == Reissue::MustReissue,
        why: "its clause has a lost request re-issued as a new request with a new id, and a retry here keeps its id",
    },
    Rule {
        against: KnobId::RetryRequestId,
        knob: KnobId::RequestIdScope,
        holds: |k| {
            k.retry_request_id.value == RetryId::Same
                && matches!(k.request_id_scope.value, IdScope::Session | IdScope::Outstanding)
        },
        why: "its clause forbids a sender to use again a request id it has issued (within the session, or while no \
              response came back), and a retry here sends the id of a request that got no response",
    },
    Rule {
        against: KnobId::RequestIdDedup,
        knob: KnobId::RetryRequestId,
        holds: |k| k.request_id_dedup.value != IdDedup::Unspecified && k.retry_request_id.value == RetryId::New,
        why: "its clause gives every retry a new id, so a server deduplicating by request id never sees a retry it \
              could recognise",
    },
];

impl Profile {
    /// The inherited citations this profile's values contradict: pairs of knobs set by
    /// different profiles of the `extends` chain whose clause and value disagree (empty for a
    /// profile that sets both, or neither).
    pub fn stale_citations(&self) -> Vec<StaleCitation> {
        let table = self.knob_table();
        let find = |id: KnobId| table.iter().find(|(k, ..)| *k == id).expect("every knob is in the table");
        RULES
            .iter()
            .filter(|r| (r.holds)(&self.knobs))
            .filter_map(|r| {
                let (_, _, _, stale_by) = find(r.knob);
                let (_, value, _, value_by) = find(r.against);
                (stale_by != value_by).then(|| StaleCitation {
                    knob: r.knob,
                    set_by: stale_by.to_string(),
                    against: r.against,
                    against_value: value.clone(),
                    against_set_by: value_by.to_string(),
                    why: r.why,
                })
            })
            .collect()
    }
}
