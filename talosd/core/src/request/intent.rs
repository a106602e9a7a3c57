//! Roleful targets: each target the request names, with its role (must mutate, verify only,
//! forbidden, …), where it came from and why. The request is split into
//! clauses; in each, the part before a constraint marker (" so ", " without breaking ", …) is
//! the mutation fragment and the rest the constraint fragment. Targets an explicit verb governs
//! must change, targets named only in a constraint are verified, targets of a negated clause
//! are forbidden. A contract's three target lists are always compiled from this list.

mod clauses;

use crate::request::targets::TargetSpan;
use crate::request::task::{Legacy, Reason, TaskType};
use crate::text::lexical::Lex;
use clauses::Clauses;
use std::collections::BTreeMap;

/// What a target is for in this turn. Precedence decides when one path gets two roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetRole {
    Forbidden,
    MustMutate,
    OutputDestination,
    MustRead,
    SourceEvidence,
    VerifyOnly,
    MayMutate,
    MentionedOnly,
}

impl TargetRole {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetRole::Forbidden => "FORBIDDEN",
            TargetRole::MustMutate => "MUST_MUTATE",
            TargetRole::OutputDestination => "OUTPUT_DESTINATION",
            TargetRole::MustRead => "MUST_READ",
            TargetRole::SourceEvidence => "SOURCE_EVIDENCE",
            TargetRole::VerifyOnly => "VERIFY_ONLY",
            TargetRole::MayMutate => "MAY_MUTATE",
            TargetRole::MentionedOnly => "MENTIONED_ONLY",
        }
    }

    /// FORBIDDEN(800) > MUST_MUTATE(700) > OUTPUT_DESTINATION(600) > MUST_READ(500) >
    /// SOURCE_EVIDENCE(400) > VERIFY_ONLY(300) > MAY_MUTATE(200) > MENTIONED_ONLY(100).
    pub fn precedence(self) -> u16 {
        match self {
            TargetRole::Forbidden => 800,
            TargetRole::MustMutate => 700,
            TargetRole::OutputDestination => 600,
            TargetRole::MustRead => 500,
            TargetRole::SourceEvidence => 400,
            TargetRole::VerifyOnly => 300,
            TargetRole::MayMutate => 200,
            TargetRole::MentionedOnly => 100,
        }
    }

    pub fn parse(text: &str) -> Option<TargetRole> {
        ALL_ROLES.into_iter().find(|r| r.as_str() == text)
    }
}

const ALL_ROLES: [TargetRole; 8] = [
    TargetRole::Forbidden,
    TargetRole::MustMutate,
    TargetRole::OutputDestination,
    TargetRole::MustRead,
    TargetRole::SourceEvidence,
    TargetRole::VerifyOnly,
    TargetRole::MayMutate,
    TargetRole::MentionedOnly,
];

/// Where a target came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetSource {
    UserRequest,
    MessageHistory,
    WorkspaceEvidence,
    VerifierResult,
    RepairContext,
    RuntimeDefault,
}

impl TargetSource {
    pub fn as_str(self) -> &'static str {
        match self {
            TargetSource::UserRequest => "USER_REQUEST",
            TargetSource::MessageHistory => "MESSAGE_HISTORY",
            TargetSource::WorkspaceEvidence => "WORKSPACE_EVIDENCE",
            TargetSource::VerifierResult => "VERIFIER_RESULT",
            TargetSource::RepairContext => "REPAIR_CONTEXT",
            TargetSource::RuntimeDefault => "RUNTIME_DEFAULT",
        }
    }
}

/// One target with its role in this turn, its source and the rule that gave the role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetRef {
    pub path: String,
    pub role: TargetRole,
    pub source: TargetSource,
    pub reason: &'static str,
}

impl TargetRef {
    fn user(path: &str, role: TargetRole, reason: &'static str) -> TargetRef {
        TargetRef {
            path: path.to_string(),
            role,
            source: TargetSource::UserRequest,
            reason,
        }
    }
}

/// The contract's target lists, compiled from a roleful list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompiledTargets {
    pub expected: Vec<String>,
    pub source_evidence: Vec<String>,
    pub forbidden: Vec<String>,
}

/// expected = MUST_MUTATE ∪ OUTPUT_DESTINATION; source evidence = SOURCE_EVIDENCE ∪ MUST_READ;
/// forbidden = FORBIDDEN. On a turn that requests no change, "expected" means "must read",
/// so MUST_READ compiles to expected there instead.
pub fn compile(targets: &[TargetRef], mutation_requested: bool) -> CompiledTargets {
    let paths = |roles: &[TargetRole]| -> Vec<String> {
        targets
            .iter()
            .filter(|t| roles.contains(&t.role))
            .map(|t| t.path.clone())
            .collect()
    };
    let (expected, evidence): (&[TargetRole], &[TargetRole]) = if mutation_requested {
        (
            &[TargetRole::MustMutate, TargetRole::OutputDestination],
            &[TargetRole::SourceEvidence, TargetRole::MustRead],
        )
    } else {
        (
            &[
                TargetRole::MustMutate,
                TargetRole::OutputDestination,
                TargetRole::MustRead,
            ],
            &[TargetRole::SourceEvidence],
        )
    };
    CompiledTargets {
        expected: paths(expected),
        source_evidence: paths(evidence),
        forbidden: paths(&[TargetRole::Forbidden]),
    }
}

/// One entry per path, the strongest role kept (the first of equals), in first-seen order.
pub fn merge(refs: impl IntoIterator<Item = TargetRef>) -> Vec<TargetRef> {
    let mut out: Vec<TargetRef> = Vec::new();
    let mut index: BTreeMap<String, usize> = BTreeMap::new();
    for candidate in refs {
        match index.get(&candidate.path) {
            Some(&at) if candidate.role.precedence() > out[at].role.precedence() => {
                out[at] = candidate;
            }
            Some(_) => {}
            None => {
                index.insert(candidate.path.clone(), out.len());
                out.push(candidate);
            }
        }
    }
    out
}

/// The roleful form of a legacy contract.
#[derive(Debug, Clone)]
pub(crate) struct Derived {
    pub(crate) task_type: TaskType,
    pub(crate) requested: bool,
    pub(crate) reason: Reason,
    pub(crate) targets: Vec<TargetRef>,
}

/// Derives roles for the legacy contract's targets, upgrading the contract when a read-only
/// negation only limits the extra files of a named change ("Improve only styles.css. Do not
/// create extra files. …").
pub(crate) fn derive(legacy: &Legacy, lex: &Lex<'_>, spans: &[TargetSpan]) -> Derived {
    let clauses = Clauses::of(lex);
    let mutation = clauses.mutation_targets(lex, spans, legacy);
    let verify = clauses.verify_targets(spans, legacy);
    let negated = clauses.negated_targets(lex, spans, legacy);
    let mut optional = clauses.optional_targets(lex, spans, &mutation);
    if optional.len() == mutation.len() {
        // Every target optional would leave no expected target, and no expected target
        // means no restriction downstream: keep them must-mutate instead.
        optional.clear();
    }
    let mut forbidden = legacy.forbidden.clone();
    forbidden.extend(
        negated
            .into_iter()
            .filter(|t| !legacy.forbidden.contains(t)),
    );
    let scoped_upgrade = legacy.reason == Reason::GlobalReadOnlyNegation
        && clauses::extra_file_constraint(lex)
        && !mutation.is_empty();
    let sharpened = legacy.allowed
        && !mutation.is_empty()
        && (!verify.is_empty()
            || forbidden != legacy.forbidden
            || !optional.is_empty()
            || clauses.has_ignored_instruction(lex));
    let (task_type, requested, reason) = if scoped_upgrade {
        (TaskType::FileEdit, true, Reason::ScopedOutputConstraint)
    } else {
        (legacy.task_type, legacy.requested, legacy.reason)
    };
    let mut refs: Vec<TargetRef> = Vec::new();
    let forbidden_ref = |path: &String| {
        let reason = if legacy.preserved.contains(path) {
            "preserve-unchanged-target"
        } else {
            "explicit-forbidden-target"
        };
        TargetRef::user(path, TargetRole::Forbidden, reason)
    };
    refs.extend(forbidden.iter().map(forbidden_ref));
    if scoped_upgrade || sharpened {
        refs.extend(clause_refs(legacy, &mutation, &optional, &verify));
    } else {
        refs.extend(legacy_refs(legacy, requested));
    }
    refs.extend(
        legacy
            .sources
            .iter()
            .map(|p| TargetRef::user(p, TargetRole::SourceEvidence, "source-evidence-target")),
    );
    refs.extend(
        legacy
            .named
            .iter()
            .map(|p| TargetRef::user(p, TargetRole::MentionedOnly, "mentioned-target")),
    );
    Derived {
        task_type,
        requested,
        reason,
        targets: in_named_order(merge(refs), legacy),
    }
}

/// The targets as the clauses read them: each mutation target must (or, when optional, may)
/// change, then the outputs and the verify-only targets.
fn clause_refs(
    legacy: &Legacy,
    mutation: &[String],
    optional: &[String],
    verify: &[String],
) -> Vec<TargetRef> {
    let mut refs: Vec<TargetRef> = mutation
        .iter()
        .map(|path| {
            let (role, reason) = if optional.contains(path) {
                (TargetRole::MayMutate, "optional-mutation-target")
            } else {
                (TargetRole::MustMutate, "explicit-mutation-target")
            };
            TargetRef::user(path, role, reason)
        })
        .collect();
    refs.extend(legacy.outputs.iter().map(|p| {
        TargetRef::user(
            p,
            TargetRole::OutputDestination,
            "output-destination-target",
        )
    }));
    refs.extend(
        verify
            .iter()
            .map(|p| TargetRef::user(p, TargetRole::VerifyOnly, "verify-only-constraint-target")),
    );
    refs
}

/// The targets as the whole-request reading found them: each expected target must change (or,
/// for a read, be read), then the outputs and the runtime's default site targets.
fn legacy_refs(legacy: &Legacy, requested: bool) -> Vec<TargetRef> {
    let (role, reason) = if requested {
        (TargetRole::MustMutate, "explicit-mutation-target")
    } else {
        (TargetRole::MustRead, "requested-read-target")
    };
    let mut refs: Vec<TargetRef> = legacy
        .expected
        .iter()
        .map(|p| TargetRef::user(p, role, reason))
        .collect();
    refs.extend(legacy.outputs.iter().map(|p| {
        TargetRef::user(
            p,
            TargetRole::OutputDestination,
            "output-destination-target",
        )
    }));
    refs.extend(legacy.defaults.iter().map(|p| TargetRef {
        path: p.clone(),
        role: TargetRole::MustMutate,
        source: TargetSource::RuntimeDefault,
        reason: "conventional-static-web-target",
    }));
    refs
}

/// The targets in the order the request named them (those it did not name last).
fn in_named_order(mut targets: Vec<TargetRef>, legacy: &Legacy) -> Vec<TargetRef> {
    let positions: BTreeMap<&str, usize> = legacy
        .named
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    targets.sort_by_key(|t| {
        positions
            .get(t.path.as_str())
            .copied()
            .unwrap_or(usize::MAX)
    });
    targets
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn user(path: &str, role: TargetRole) -> TargetRef {
        TargetRef::user(path, role, "test")
    }

    /// One entry per path survives, the strongest role kept, in first-seen order.
    #[test]
    fn merge_keeps_the_strongest_role_per_path() {
        let merged = merge([
            user("a.css", TargetRole::VerifyOnly),
            user("b.html", TargetRole::MentionedOnly),
            user("a.css", TargetRole::MustMutate),
            user("b.html", TargetRole::Forbidden),
            user("a.css", TargetRole::SourceEvidence),
        ]);
        let roles: Vec<(&str, TargetRole)> =
            merged.iter().map(|t| (t.path.as_str(), t.role)).collect();
        assert_eq!(
            roles,
            vec![
                ("a.css", TargetRole::MustMutate),
                ("b.html", TargetRole::Forbidden)
            ]
        );
    }

    /// MUST_READ is evidence on a change turn and the expected read on a read-only turn.
    #[test]
    fn compile_places_must_read_by_turn_kind() {
        let refs = [
            user("out.md", TargetRole::OutputDestination),
            user("in.md", TargetRole::MustRead),
            user("x.md", TargetRole::MayMutate),
            user("y.md", TargetRole::Forbidden),
        ];
        let change = compile(&refs, true);
        assert_eq!(change.expected, vec!["out.md"]);
        assert_eq!(change.source_evidence, vec!["in.md"]);
        assert_eq!(change.forbidden, vec!["y.md"]);
        let read = compile(&refs, false);
        assert_eq!(read.expected, vec!["out.md", "in.md"]);
        assert!(read.source_evidence.is_empty());
    }
}
