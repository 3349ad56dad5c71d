//! The verdict from what was observed: once the server is stopped, the effects the observer
//! counts (per call where it can tell them apart) and the answers the client read are judged
//! whatever step the replay reached. A call seen taking effect twice is a confirmed duplicate
//! even where the replay left the trace (a step that went otherwise, a signal it waited for in
//! vain, an answer read before the observer caught up): what a user acts on is the duplicate,
//! and the path to it is reported beside it, never a reason to withhold it.
//!
//! Only facts the runner established count: effects per call from the ledger's call tags (or all
//! of them, with one call); with an observer that counts effects in all, a duplicate only where
//! there are more effects than calls (every effect of the run belongs to one of its calls, so
//! one call has two). Whether a call failed *for good* is the client policy's word, which only a
//! replay that ran to its end has (`outcome.rs`), so `no-silent-effect` is not judged here.

use mcp_once_model::PropertyKind;

/// The effects the observer counted once the server stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Counted {
    /// Per logical call, in the trace's order.
    PerCall(Vec<u64>),
    /// In all, not attributable to calls.
    InAll {
        /// Effects of this run.
        effects: u64,
        /// The trace's logical calls.
        calls: usize,
    },
}

/// What the runner saw of a run, as facts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Observed {
    /// The effects counted.
    pub counted: Counted,
    /// Per call: whether the client read a final success answer to any of its attempts.
    pub told_success: Vec<bool>,
}

impl Observed {
    /// A call the counts show taking effect more than once, in words (`None`: none shown).
    pub fn duplicate(&self) -> Option<String> {
        match &self.counted {
            Counted::PerCall(counts) => counts
                .iter()
                .enumerate()
                .find(|(_, n)| **n >= 2)
                .map(|(c, n)| format!("call {c} took effect {n} times")),
            Counted::InAll { effects, calls } if *effects > *calls as u64 => Some(format!(
                "{effects} effects for {calls} logical call(s): at least one call took effect more than once"
            )),
            Counted::InAll { .. } => None,
        }
    }

    /// A call the client was told succeeded with no effect of its own (`None`: none shown, or
    /// the effects cannot be told apart by call).
    pub fn success_without_effect(&self) -> Option<String> {
        let Counted::PerCall(counts) = &self.counted else { return None };
        counts
            .iter()
            .zip(&self.told_success)
            .position(|(n, told)| *told && *n == 0)
            .map(|c| format!("call {c} was answered with a success and took no effect"))
    }

    /// The violation these facts show for a trace of `property` (`None` for the worst case),
    /// in words: a duplicate for any trace (at-most-once, named when it is not the trace's own
    /// property), a success without effect for success-implies-effect and exactly-once.
    pub fn violation(&self, property: Option<PropertyKind>) -> Option<String> {
        let own = matches!(property, None | Some(PropertyKind::AtMostOnce | PropertyKind::ExactlyOnce));
        if let Some(d) = self.duplicate() {
            return Some(if own { format!("{d} (at-most-once)") } else { format!("{d}: at-most-once is violated") });
        }
        match property {
            Some(PropertyKind::SuccessImpliesEffect | PropertyKind::ExactlyOnce) => {
                self.success_without_effect().map(|s| format!("{s} (success-implies-effect)"))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn per_call(counts: &[u64], told: &[bool]) -> Observed {
        Observed { counted: Counted::PerCall(counts.to_vec()), told_success: told.to_vec() }
    }

    #[test]
    fn a_duplicate_is_seen_per_call_or_by_counting() {
        assert_eq!(per_call(&[1, 2], &[true, true]).duplicate().as_deref(), Some("call 1 took effect 2 times"));
        assert_eq!(per_call(&[1, 1], &[true, true]).duplicate(), None);
        let in_all = |effects, calls| Observed { counted: Counted::InAll { effects, calls }, told_success: vec![] };
        assert!(in_all(3, 2).duplicate().is_some(), "three effects of two calls");
        assert_eq!(in_all(2, 2).duplicate(), None, "two effects of two calls may be one each");
        assert!(in_all(2, 1).duplicate().is_some());
    }

    #[test]
    fn each_trace_is_confirmed_by_what_its_facts_show() {
        use PropertyKind as P;
        let twice = per_call(&[2], &[false]);
        for p in [None, Some(P::AtMostOnce), Some(P::ExactlyOnce), Some(P::NoSilentEffect)] {
            assert!(twice.violation(p).is_some(), "{p:?}: a duplicate is a violation whatever the trace");
        }
        assert!(twice.violation(Some(P::NoSilentEffect)).unwrap().contains("at-most-once is violated"));
        let stolen = per_call(&[1, 0], &[false, true]);
        assert!(stolen.violation(Some(P::SuccessImpliesEffect)).is_some());
        assert!(stolen.violation(Some(P::ExactlyOnce)).is_some());
        assert_eq!(stolen.violation(Some(P::AtMostOnce)), None);
        assert_eq!(stolen.violation(Some(P::NoSilentEffect)), None, "for good is not a fact the runner has here");
        let blind = Observed { counted: Counted::InAll { effects: 1, calls: 2 }, told_success: vec![true, true] };
        assert_eq!(blind.violation(Some(P::SuccessImpliesEffect)), None, "effects not told apart");
    }
}
