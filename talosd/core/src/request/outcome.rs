//! Outcome classification: the coarse status and fine classification of a turn, decided from
//! the turn's records alone, never from what the model says. Changes are counted by where each
//! target ended ([`targets`]), not by how many attempts failed on the way.

pub mod targets;

pub use targets::{TargetEnd, TargetState, target_states};

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
    /// Targets the request needs changed (the plan's `MustChange` expectations); empty when
    /// the request named none, and then every target the turn touched counts as needed.
    pub expected_targets: Vec<String>,
    /// A task check the request asked for could not be run (no headless browser).
    pub task_unverified: bool,
    /// Files changed and nothing the request gave could be checked beyond the read-back: no
    /// change rule for any changed target, no workspace operation's postcondition, no web or
    /// command check. Such a turn is never `COMPLETED_VERIFIED`.
    pub nothing_checkable: bool,
    /// How the model's final answer ended: a question turn with no complete answer is not
    /// `READ_ONLY_ANSWERED`.
    pub answer_end: AnswerEnd,
    /// How the contract read the request, for the statements that say so ("a question about
    /// config.py"); empty before the turn is settled.
    pub reading: String,
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
    /// The request could mean a change or only a question, and the person did not choose
    /// (the client cannot ask, or the question went unanswered): the model was not called.
    pub contract_ambiguous: bool,
    /// The answer is the runtime's own text (from the session's records, a fixed answer, the
    /// reading question or a capability note): no model spoke, so no model claim is judged.
    pub runtime_answer: bool,
    /// MCP calls that were sent to their server (approved or allowed by a rule). What they
    /// did is outside Talos's records: it cannot verify them, and never says no file was
    /// changed after one.
    pub external_ran: Vec<ExternalRun>,
}

/// One MCP call that was sent to its server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalRun {
    /// `mcp.SERVER.TOOL`.
    pub tool: String,
    /// The person approved it (else a rule allowed it).
    pub approved: bool,
    /// How it ended: `None` when the server answered without saying it failed, else what
    /// happened (the server said it failed, it timed out, it crashed).
    pub trouble: Option<String>,
}

/// How the turn's final answer ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AnswerEnd {
    /// The model's answer ended on its own (or the answer is the runtime's summary).
    #[default]
    Whole,
    /// The model's reply was cut at the reply limit; its prose so far is the answer.
    Cut,
    /// The model's reply was cut at the reply limit before it said anything.
    CutEmpty,
    /// The model gave no answer: the tool loop stopped, and its note is the only answer.
    LoopStopped,
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
    /// The request could mean a change or only a question and the person did not say which:
    /// the turn ended before the model, without a guess.
    ContractAmbiguous,
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
            Fine::ContractAmbiguous => "CONTRACT_AMBIGUOUS",
        }
    }

    pub fn status(self) -> Status {
        match self {
            Fine::CompletedVerified | Fine::CompletedUnverified | Fine::ReadOnlyAnswered => {
                Status::Complete
            }
            Fine::Partial => Status::Partial,
            Fine::BlockedByApproval | Fine::BlockedByPolicy | Fine::ContractAmbiguous => {
                Status::Blocked
            }
            Fine::AdvisoryOnly => Status::AdvisoryOnly,
            Fine::Failed => Status::Failed,
            Fine::Cancelled => Status::Cancelled,
        }
    }
}

/// `NOT_REQUESTED`, `NOT_ATTEMPTED`, `SUCCEEDED`, `PARTIAL`, `FAILED`, `DENIED`, by where
/// each attempted target ended (a target the request does not need counts only when nothing
/// changed).
pub fn mutation_status(facts: &TurnFacts) -> &'static str {
    let attempted: Vec<TargetState> = target_states(facts)
        .into_iter()
        .filter(|s| s.end != TargetEnd::NotAttempted)
        .collect();
    let changed = attempted.iter().any(TargetState::changed);
    let unfinished = attempted.iter().any(TargetState::unfinished);
    let denied = attempted.iter().any(|s| s.end == TargetEnd::Denied);
    match (facts.mutation_requested, attempted.is_empty()) {
        (false, true) => "NOT_REQUESTED",
        (true, true) => "NOT_ATTEMPTED",
        _ if changed && unfinished => "PARTIAL",
        _ if changed => "SUCCEEDED",
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
    let states = target_states(facts);
    let changed: Vec<&TargetState> = states.iter().filter(|s| s.changed()).collect();
    let any = |f: fn(&MutationResult) -> bool| facts.mutations.iter().any(|m| f(&m.result));
    if facts.cancelled {
        return Fine::Cancelled;
    }
    if facts.contract_ambiguous {
        return Fine::ContractAmbiguous;
    }
    if let Some(fine) = changed
        .is_empty()
        .then(|| nothing_changed(facts, any))
        .flatten()
    {
        return fine;
    }
    if !changed.is_empty() && states.iter().any(TargetState::unfinished) {
        return Fine::Partial;
    }
    if !changed.is_empty() && !facts.task_findings.is_empty() {
        return Fine::Failed;
    }
    if facts.mutation_allowed && !facts.unmet_targets.is_empty() {
        return Fine::BlockedByPolicy;
    }
    if changed.is_empty() && !facts.unreadable_documents.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if facts.mutation_allowed && facts.mutation_requested && changed.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if !facts.mutation_requested && !facts.evidence_missing.is_empty() {
        return Fine::AdvisoryOnly;
    }
    if !changed.is_empty() {
        let all_verified = changed
            .iter()
            .all(|s| s.end == TargetEnd::Changed { verified: true });
        return if all_verified && !facts.task_unverified && !facts.nothing_checkable {
            Fine::CompletedVerified
        } else {
            Fine::CompletedUnverified
        };
    }
    // A question with no complete answer is not answered: a cut answer is partly there, no
    // answer at all failed the turn's one task.
    match (facts.mutation_requested, facts.answer_end) {
        (false, AnswerEnd::Cut) => Fine::Partial,
        (false, AnswerEnd::CutEmpty | AnswerEnd::LoopStopped) => Fine::Failed,
        (true, _) | (false, AnswerEnd::Whole) => Fine::ReadOnlyAnswered,
    }
}

/// The rules for a turn in which no target changed; `None` when none applies.
fn nothing_changed(
    facts: &TurnFacts,
    any: impl Fn(fn(&MutationResult) -> bool) -> bool,
) -> Option<Fine> {
    if facts.model_failed || facts.malformed_tool_call {
        return Some(Fine::Failed);
    }
    if facts.command_denied {
        return Some(Fine::BlockedByApproval);
    }
    if facts.command_failed {
        return Some(Fine::Failed);
    }
    // A change the person asked for, blocked because the turn is read-only. A change nobody
    // asked for, blocked on a read-only turn, leaves the answer to the question standing.
    if facts.read_only_blocked && facts.mutation_requested {
        return Some(Fine::BlockedByPolicy);
    }
    if any(|r| *r == MutationResult::Denied) || facts.read_denied {
        return Some(Fine::BlockedByApproval);
    }
    if facts.read_blocked || any(|r| matches!(r, MutationResult::Blocked { .. })) {
        return Some(Fine::BlockedByPolicy);
    }
    // A change asked for and made through an MCP server's tool: done, as far as anyone can
    // tell, and unverified (Talos cannot see what the server did).
    if facts.mutation_requested && facts.external_ran.iter().any(|r| r.trouble.is_none()) {
        return Some(Fine::CompletedUnverified);
    }
    if any(|r| matches!(r, MutationResult::Failed { .. })) {
        return Some(Fine::Failed);
    }
    // The model did not act on a change it was asked, allowed and re-prompted to make: the
    // task failed (not advice, not a policy block).
    if facts.action_not_taken {
        return Some(Fine::Failed);
    }
    if facts.capability_denied {
        return Some(if facts.mutation_allowed {
            Fine::Failed
        } else {
            Fine::AdvisoryOnly
        });
    }
    None
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
            // A failure after a success on the target still counts (issue 27); one before a
            // success is a retry that worked.
            (
                edit_facts(
                    vec![
                        m("a", ok()),
                        m(
                            "a",
                            MutationResult::Blocked {
                                reason: "old_string not found".into(),
                            },
                        ),
                    ],
                    &[],
                ),
                Fine::Partial,
                "PARTIAL",
            ),
            (
                edit_facts(
                    vec![
                        m(
                            "a",
                            MutationResult::Blocked {
                                reason: "old_string not found".into(),
                            },
                        ),
                        m("a", ok()),
                    ],
                    &[],
                ),
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
            // Read back as approved, but nothing in the request could be checked.
            (
                TurnFacts {
                    nothing_checkable: true,
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
                    contract_ambiguous: true,
                    ..TurnFacts::default()
                },
                Fine::ContractAmbiguous,
                "NOT_REQUESTED",
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
        rows.extend(issue_12_rows());
        // A question with no complete answer.
        for (end, fine) in [
            (AnswerEnd::Cut, Fine::Partial),
            (AnswerEnd::CutEmpty, Fine::Failed),
            (AnswerEnd::LoopStopped, Fine::Failed),
        ] {
            let facts = TurnFacts {
                answer_end: end,
                ..TurnFacts::default()
            };
            rows.push((facts, fine, "NOT_REQUESTED"));
        }
        for (facts, fine, mutation) in rows {
            assert_eq!(
                (classify(&facts), mutation_status(&facts)),
                (fine, mutation),
                "{facts:?}"
            );
        }
    }

    /// Issue 12: where each target ended decides, and the obligation facts classify.
    fn issue_12_rows() -> Vec<(TurnFacts, Fine, &'static str)> {
        let ok = || MutationResult::Succeeded { verified: true };
        let refused = || MutationResult::Blocked {
            reason: "Target outside expected targets before approval".into(),
        };
        let failed = || MutationResult::Failed {
            reason: "old_string was not found".into(),
        };
        let expecting = |targets: &[&str], facts: TurnFacts| TurnFacts {
            expected_targets: targets.iter().map(|s| s.to_string()).collect(),
            ..facts
        };
        vec![
            // A target that ended changed is done whatever failed before it.
            (
                edit_facts(vec![m("a", failed()), m("a", ok())], &[]),
                Fine::CompletedVerified,
                "SUCCEEDED",
            ),
            // A refused call on a target the request does not need is reported, not PARTIAL.
            (
                expecting(
                    &["a"],
                    edit_facts(vec![m("notes.txt", refused()), m("a", ok())], &[]),
                ),
                Fine::CompletedVerified,
                "SUCCEEDED",
            ),
            // ... and `./a` is the target `a`.
            (
                expecting(&["a"], edit_facts(vec![m("./a", ok())], &[])),
                Fine::CompletedVerified,
                "SUCCEEDED",
            ),
            // A write that failed after approval counts even on an unneeded target.
            (
                expecting(
                    &["a"],
                    edit_facts(vec![m("a", ok()), m("b", failed())], &[]),
                ),
                Fine::Partial,
                "PARTIAL",
            ),
            // A change that failed after the target changed counts (issue 27): the target is
            // not where the turn meant it to end. (The same call twice in one reply is run
            // once; the turn machine holds that.)
            (
                expecting(
                    &["a"],
                    edit_facts(vec![m("a", ok()), m("a", failed())], &[]),
                ),
                Fine::Partial,
                "PARTIAL",
            ),
            // A needed target that ended refused after another changed: PARTIAL.
            (
                expecting(
                    &["a", "b"],
                    edit_facts(vec![m("a", ok()), m("b", refused())], &["b"]),
                ),
                Fine::Partial,
                "PARTIAL",
            ),
            // An expected target never attempted after another changed: PARTIAL.
            (
                expecting(&["a", "b"], edit_facts(vec![m("a", ok())], &["b"])),
                Fine::Partial,
                "SUCCEEDED",
            ),
            // Nothing changed and only an unneeded target was refused: still blocked.
            (
                expecting(&["a"], edit_facts(vec![m("notes.txt", refused())], &["a"])),
                Fine::BlockedByPolicy,
                "FAILED",
            ),
            // The model did not act after the retry: FAILED, never COMPLETE.
            (
                TurnFacts {
                    action_not_taken: true,
                    obligation_retries: 1,
                    tools_offered: true,
                    ..edit_facts(vec![], &["a"])
                },
                Fine::Failed,
                "NOT_ATTEMPTED",
            ),
            (
                TurnFacts {
                    action_not_taken: true,
                    ..edit_facts(vec![], &[])
                },
                Fine::Failed,
                "NOT_ATTEMPTED",
            ),
            // A capability denial on a change turn failed it; on a question it is advice.
            (
                TurnFacts {
                    capability_denied: true,
                    tools_offered: true,
                    ..edit_facts(vec![], &[])
                },
                Fine::Failed,
                "NOT_ATTEMPTED",
            ),
            (
                TurnFacts {
                    capability_denied: true,
                    tools_offered: true,
                    ..TurnFacts::default()
                },
                Fine::AdvisoryOnly,
                "NOT_REQUESTED",
            ),
            // Retries are counted and change nothing alone.
            (
                TurnFacts {
                    obligation_retries: 1,
                    ..edit_facts(vec![m("a", ok())], &[])
                },
                Fine::CompletedVerified,
                "SUCCEEDED",
            ),
            (
                TurnFacts {
                    obligation_retries: 1,
                    ..TurnFacts::default()
                },
                Fine::ReadOnlyAnswered,
                "NOT_REQUESTED",
            ),
            // An unsolicited change blocked on a read-only turn leaves the answer standing.
            (
                TurnFacts {
                    read_only_blocked: true,
                    tools_offered: true,
                    tool_calls: 2,
                    ..TurnFacts::default()
                },
                Fine::ReadOnlyAnswered,
                "NOT_REQUESTED",
            ),
            // ... unless the answer lacked its evidence.
            (
                TurnFacts {
                    read_only_blocked: true,
                    evidence_missing: vec!["app.js".into()],
                    ..TurnFacts::default()
                },
                Fine::AdvisoryOnly,
                "NOT_REQUESTED",
            ),
            // A change that ended done, with the verifier finding problems: FAILED.
            (
                TurnFacts {
                    task_findings: vec!["index.html: #go missing".into()],
                    ..edit_facts(vec![m("a", failed()), m("a", ok())], &[])
                },
                Fine::Failed,
                "SUCCEEDED",
            ),
            // A change made through an approved MCP call that answered: done, unverified, even
            // when the model made no change call of Talos's own; one the server said failed
            // does not count as done.
            (
                TurnFacts {
                    action_not_taken: true,
                    external_ran: vec![ExternalRun {
                        tool: "mcp.fs.write_file".into(),
                        approved: true,
                        trouble: None,
                    }],
                    ..edit_facts(vec![], &["inside.txt"])
                },
                Fine::CompletedUnverified,
                "NOT_ATTEMPTED",
            ),
            (
                TurnFacts {
                    action_not_taken: true,
                    external_ran: vec![ExternalRun {
                        tool: "mcp.fs.write_file".into(),
                        approved: true,
                        trouble: Some("the server said it failed".into()),
                    }],
                    ..edit_facts(vec![], &["inside.txt"])
                },
                Fine::Failed,
                "NOT_ATTEMPTED",
            ),
        ]
    }
}
