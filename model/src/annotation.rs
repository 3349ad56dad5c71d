//! The tool's annotations, as a cell's parameter (`--annotation`), and whether a profile's
//! retry rule lets a client retry such a tool after a timeout.
//!
//! `ToolAnnotations` (the schema of both revisions) are hints about the tool, "not guaranteed
//! to provide a faithful description of tool behavior": the model's tool takes its effect on
//! every run whatever its annotation says. So a cell with `--annotation idempotent` shows what
//! a client that trusts the hint lets happen when the hint is wrong (or the effect is one that
//! must not happen twice however the tool is described).

use crate::named::named_enum;
use crate::profile::RetryAfterTimeout;

named_enum!(
    /// What the tool's `ToolAnnotations` say (`--annotation`): the hints a retry rule reads.
    Annotation {
        /// No hint set (`readOnlyHint` and `idempotentHint` at their default, false).
        None = "none",
        /// `idempotentHint: true` (and `readOnlyHint: false`).
        Idempotent = "idempotent",
        /// `readOnlyHint: true` (`idempotentHint` then means nothing, by the schema).
        ReadOnly = "read-only",
    }
);

// `named_enum!` derives no `Default`, so it cannot be derived here.
#[allow(clippy::derivable_impls)]
impl Default for Annotation {
    fn default() -> Self {
        Annotation::None
    }
}

impl RetryAfterTimeout {
    /// Whether the profile has a rule on retries after a timeout that reads the annotations.
    pub fn restricts(self) -> bool {
        self != RetryAfterTimeout::Unspecified
    }

    /// Whether the rule bars a retry after a timeout of a tool annotated `annotation`: it
    /// restricts retries and the annotation is not one that lifts the restriction.
    pub fn bars(self, annotation: Annotation) -> bool {
        use RetryAfterTimeout as R;
        match self {
            R::Unspecified => false,
            R::MustNotUnlessIdempotent | R::ShouldNotUnlessIdempotent => annotation != Annotation::Idempotent,
            R::MustNotUnlessIdempotentOrReadOnly | R::ShouldNotUnlessIdempotentOrReadOnly => {
                annotation == Annotation::None
            }
        }
    }

    /// Whether the clause is a requirement (MUST NOT), not advice (SHOULD NOT).
    pub fn binds(self) -> bool {
        matches!(
            self,
            RetryAfterTimeout::MustNotUnlessIdempotent | RetryAfterTimeout::MustNotUnlessIdempotentOrReadOnly
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_annotations_a_rule_names_lift_it() {
        use RetryAfterTimeout as R;
        for &a in Annotation::ALL {
            assert!(!R::Unspecified.bars(a));
        }
        assert!(R::MustNotUnlessIdempotent.bars(Annotation::ReadOnly));
        assert!(!R::MustNotUnlessIdempotent.bars(Annotation::Idempotent));
        assert!(!R::ShouldNotUnlessIdempotentOrReadOnly.bars(Annotation::ReadOnly));
        assert!(R::ShouldNotUnlessIdempotentOrReadOnly.bars(Annotation::None));
    }
}
