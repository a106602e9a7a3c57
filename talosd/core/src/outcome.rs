//! Outcome classification: the coarse status and fine classification of a turn, decided from
//! the turn's records alone, never from what the model says.

/// What happened to one attempted change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MutationResult {
    /// Written, read back; `verified` when the read-back matched the approval.
    Succeeded { verified: bool },
    /// The person said no (or the approval ended by disconnect, timeout or cancel).
    Denied,
    /// The ladder or a pre-approval check refused it.
    Blocked { reason: String },
    /// It was attempted and failed (IO error, checkpoint failure, stale file, bad read-back).
    Failed { reason: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MutationRecord {
    pub target: String,
    pub result: MutationResult,
}

/// The records the classification reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnFacts {
    pub mutation_requested: bool,
    pub mutation_allowed: bool,
    pub cancelled: bool,
    pub model_failed: bool,
    pub malformed_tool_call: bool,
    /// A mutating call was refused because the turn was read-only.
    pub read_only_blocked: bool,
    /// The person denied a protected read.
    pub read_denied: bool,
    /// A read the person asked for directly was refused by policy (escape, protected).
    pub read_blocked: bool,
    /// Files a read-only answer had to rest on and that were not read this turn.
    pub evidence_missing: Vec<String>,
    /// Whether the turn offered any tool, and how many calls the model made.
    pub tools_offered: bool,
    pub tool_calls: usize,
    /// Problems the task verifier found after the turn's changes (or on a diagnosis).
    pub task_findings: Vec<String>,
    /// The person denied running a command.
    pub command_denied: bool,
    /// A command ran and failed, timed out, or could not start.
    pub command_failed: bool,
    pub mutations: Vec<MutationRecord>,
    /// Expected targets that must change and did not.
    pub unmet_targets: Vec<String>,
    /// A task check the request asked for could not be run (no headless browser).
    pub task_unverified: bool,
    /// Named documents the text tools cannot read (pdf, docx, xlsx, ...).
    pub unreadable_documents: Vec<String>,
    /// Issue 12: re-prompts the runtime sent because an obligation was not met (at most one
    /// per obligation).
    pub obligation_retries: u32,
    /// The plan required a change and, after its retry, the model still made no change call
    /// (it answered in prose or code, refused, or denied it could).
    pub action_not_taken: bool,
    /// The model answered a turn that offered it tools with no call and a refusal or a
    /// capability denial ("I can't create files"), whatever its wording.
    pub capability_denied: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Complete,
    Partial,
    Blocked,
    AdvisoryOnly,
    Failed,
    Cancelled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fine {
    CompletedVerified,
    CompletedUnverified,
    ReadOnlyAnswered,
    Partial,
    BlockedByApproval,
    BlockedByPolicy,
    AdvisoryOnly,
    Failed,
    Cancelled,
}

impl Fine {
    /// The wire name (`COMPLETED_VERIFIED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Fine::CompletedVerified => "COMPLETED_VERIFIED",
            Fine::CompletedUnverified => "COMPLETED_UNVERIFIED",
            Fine::ReadOnlyAnswered => "READ_ONLY_ANSWERED",
            Fine::Partial => "PARTIAL",
            Fine::BlockedByApproval => "BLOCKED_BY_APPROVAL",
            Fine::BlockedByPolicy => "BLOCKED_BY_POLICY",
            Fine::AdvisoryOnly => "ADVISORY_ONLY",
            Fine::Failed => "FAILED",
            Fine::Cancelled => "CANCELLED",
        }
    }

    pub fn status(self) -> Status {
        match self {
            Fine::CompletedVerified | Fine::CompletedUnverified | Fine::ReadOnlyAnswered => {
                Status::Complete
            }
            Fine::Partial => Status::Partial,
            Fine::BlockedByApproval | Fine::BlockedByPolicy => Status::Blocked,
            Fine::AdvisoryOnly => Status::AdvisoryOnly,
            Fine::Failed => Status::Failed,
            Fine::Cancelled => Status::Cancelled,
        }
    }
}

/// `NOT_REQUESTED`, `NOT_ATTEMPTED`, `SUCCEEDED`, `PARTIAL`, `FAILED`, `DENIED`.
pub fn mutation_status(facts: &TurnFacts) -> &'static str {
    let succeeded = facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .count();
    let denied = facts
        .mutations
        .iter()
        .any(|m| m.result == MutationResult::Denied);
    match (facts.mutation_requested, facts.mutations.len(), succeeded) {
        (false, 0, _) => "NOT_REQUESTED",
        (_, 0, _) => "NOT_ATTEMPTED",
        (_, n, s) if s == n => "SUCCEEDED",
        (_, _, s) if s > 0 => "PARTIAL",
        _ if denied => "DENIED",
        _ => "FAILED",
    }
}

/// `DENIED`, `GRANTED_OR_NOT_REQUIRED` or `NONE`.
pub fn approval_status(facts: &TurnFacts) -> &'static str {
    if facts
        .mutations
        .iter()
        .any(|m| m.result == MutationResult::Denied)
    {
        "DENIED"
    } else if facts
        .mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }))
    {
        "GRANTED_OR_NOT_REQUIRED"
    } else {
        "NONE"
    }
}

/// First applicable rule wins.
pub fn classify(facts: &TurnFacts) -> Fine {
    let succeeded: Vec<&MutationRecord> = facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .collect();
    let unsuccessful = facts.mutations.len() - succeeded.len();
    let any = |f: fn(&MutationResult) -> bool| facts.mutations.iter().any(|m| f(&m.result));
    if facts.cancelled {
        return Fine::Cancelled;
    }
    if (facts.model_failed || facts.malformed_tool_call) && succeeded.is_empty() {
        return Fine::Failed;
    }
    if facts.command_denied && succeeded.is_empty() {
        return Fine::BlockedByApproval;
    }
    if facts.command_failed && succeeded.is_empty() {
        return Fine::Failed;
    }
    if succeeded.is_empty() {
        if facts.read_only_blocked {
            return Fine::BlockedByPolicy;
        }
        if any(|r| *r == MutationResult::Denied) || facts.read_denied {
            return Fine::BlockedByApproval;
        }
        if facts.read_blocked {
            return Fine::BlockedByPolicy;
        }
        if any(|r| matches!(r, MutationResult::Blocked { .. })) {
            return Fine::BlockedByPolicy;
        }
        if any(|r| matches!(r, MutationResult::Failed { .. })) {
            return Fine::Failed;
        }
    }
    if !succeeded.is_empty() && unsuccessful > 0 {
        return Fine::Partial;
    }
    if !succeeded.is_empty() && !facts.task_findings.is_empty() {
        return Fine::Failed;
    }
    if facts.mutation_allowed && !facts.unmet_targets.is_empty() {
        return if succeeded.is_empty() {
            Fine::BlockedByPolicy
        } else {
            Fine::Partial
        };
    }
    if succeeded.is_empty() && !facts.unreadable_documents.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if facts.mutation_allowed && facts.mutation_requested && succeeded.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if !facts.mutation_requested && !facts.evidence_missing.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if !succeeded.is_empty() {
        let all_verified = succeeded
            .iter()
            .all(|m| m.result == MutationResult::Succeeded { verified: true });
        return if all_verified && !facts.task_unverified {
            Fine::CompletedVerified
        } else {
            Fine::CompletedUnverified
        };
    }
    Fine::ReadOnlyAnswered
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(target: &str, result: MutationResult) -> MutationRecord {
        MutationRecord {
            target: target.into(),
            result,
        }
    }

    fn edit_facts(mutations: Vec<MutationRecord>, unmet: &[&str]) -> TurnFacts {
        TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            mutations,
            unmet_targets: unmet.iter().map(|s| s.to_string()).collect(),
            ..TurnFacts::default()
        }
    }

    #[test]
    fn classification_rows() {
        let ok = || MutationResult::Succeeded { verified: true };
        let mut rows: Vec<(TurnFacts, Fine, &str)> = vec![
            (
                edit_facts(vec![m("a", ok())], &[]),
                Fine::CompletedVerified,
                "SUCCEEDED",
            ),
            (
                edit_facts(
                    vec![m("a", MutationResult::Succeeded { verified: false })],
                    &[],
                ),
                Fine::CompletedUnverified,
                "SUCCEEDED",
            ),
            (
                TurnFacts {
                    task_unverified: true,
                    ..edit_facts(vec![m("a", ok())], &[])
                },
                Fine::CompletedUnverified,
                "SUCCEEDED",
            ),
            (
                TurnFacts {
                    unreadable_documents: vec!["report.pdf".into()],
                    ..TurnFacts::default()
                },
                Fine::AdvisoryOnly,
                "NOT_REQUESTED",
            ),
            (
                edit_facts(vec![m("a", MutationResult::Denied)], &["a"]),
                Fine::BlockedByApproval,
                "DENIED",
            ),
            (
                edit_facts(
                    vec![m(
                        "../x",
                        MutationResult::Blocked {
                            reason: "escape".into(),
                        },
                    )],
                    &["x"],
                ),
                Fine::BlockedByPolicy,
                "FAILED",
            ),
            (
                edit_facts(vec![m("a", ok()), m("b", MutationResult::Denied)], &["b"]),
                Fine::Partial,
                "PARTIAL",
            ),
            (
                edit_facts(
                    vec![m(
                        "a",
                        MutationResult::Failed {
                            reason: "io".into(),
                        },
                    )],
                    &["a"],
                ),
                Fine::Failed,
                "FAILED",
            ),
            (
                edit_facts(vec![], &["a"]),
                Fine::BlockedByPolicy,
                "NOT_ATTEMPTED",
            ),
            (edit_facts(vec![], &[]), Fine::AdvisoryOnly, "NOT_ATTEMPTED"),
            (
                TurnFacts::default(),
                Fine::ReadOnlyAnswered,
                "NOT_REQUESTED",
            ),
            (
                TurnFacts {
                    mutation_requested: true,
                    read_only_blocked: true,
                    ..TurnFacts::default()
                },
                Fine::BlockedByPolicy,
                "NOT_ATTEMPTED",
            ),
            (
                TurnFacts {
                    cancelled: true,
                    ..edit_facts(vec![m("a", ok())], &[])
                },
                Fine::Cancelled,
                "SUCCEEDED",
            ),
            (
                TurnFacts {
                    malformed_tool_call: true,
                    ..edit_facts(vec![], &["a"])
                },
                Fine::Failed,
                "NOT_ATTEMPTED",
            ),
        ];
        rows.push((
            TurnFacts {
                read_denied: true,
                ..TurnFacts::default()
            },
            Fine::BlockedByApproval,
            "NOT_REQUESTED",
        ));
        rows.push((
            TurnFacts {
                read_blocked: true,
                ..TurnFacts::default()
            },
            Fine::BlockedByPolicy,
            "NOT_REQUESTED",
        ));
        for (facts, fine, mutation) in rows {
            assert_eq!(
                (classify(&facts), mutation_status(&facts)),
                (fine, mutation),
                "{facts:?}"
            );
        }
    }
}
