//! Answer guards: compare the model's final answer with the turn's records and correct it
//! where the records disagree. The person sees what happened, not what the model hoped.

mod documents;
pub use documents::{DOCUMENT_NOTE_START, correct_document_claims, unreadable_documents};

use crate::outcome::{MutationResult, TurnFacts};

const CLAIM_MARKERS: &[&str] = &[
    "i have updated",
    "i've updated",
    "i updated",
    "i have edited",
    "i've edited",
    "i edited",
    "i have changed",
    "i've changed",
    "i changed",
    "i have applied",
    "i've applied",
    "i applied",
    "i have written",
    "i've written",
    "i wrote",
    "i have created",
    "i've created",
    "i created",
    "i have modified",
    "i've modified",
    "i modified",
    "i have saved",
    "i've saved",
    "i saved",
    "changes have been applied",
    "changes were applied",
    "the file has been updated",
    "the file has been modified",
    "the file has been edited",
    "the file has been saved",
    "has been updated to",
    "has been modified to",
];
const NO_CHANGE_CONTEXT: &[&str] = &[
    "changed nothing",
    "no changes were",
    "modified zero",
    "did not change",
    "didn't change",
];

/// How the answer starts when a clean verdict is contradicted by the task verifier.
pub const CLEAN_VERDICT_CONTRADICTED: &str =
    "[Verification check: the response below says nothing is wrong, but Talos's own checks found";

/// The answer a person sees, given the model's text and the records.
pub fn guard_answer(model_answer: &str, facts: &TurnFacts) -> String {
    let succeeded = facts
        .mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
    let denied: Vec<&str> = facts
        .mutations
        .iter()
        .filter(|m| m.result == MutationResult::Denied)
        .map(|m| m.target.as_str())
        .collect();
    let blocked: Vec<(&str, &str)> = facts
        .mutations
        .iter()
        .filter_map(|m| match &m.result {
            MutationResult::Blocked { reason } | MutationResult::Failed { reason } => {
                Some((m.target.as_str(), reason.as_str()))
            }
            MutationResult::Succeeded { .. } | MutationResult::Denied => None,
        })
        .collect();
    if facts.cancelled {
        return format!(
            "[Turn cancelled: the turn was stopped before it finished.]{}",
            summary_of_changes(facts)
        );
    }
    if facts.malformed_tool_call && !succeeded {
        return "[Truth check: the model produced an invalid tool-call payload, so no action was taken.]\nNo file changes were applied. Please retry the request.".into();
    }
    if !succeeded && !denied.is_empty() && blocked.is_empty() {
        let mut out = String::from(
            "[Truth check: no file was changed in this turn because the requested write was not approved.]\nNo file changes were applied because approval was denied for:\n",
        );
        for p in denied {
            out.push_str(&format!("- {p}: approval denied\n"));
        }
        out.push_str("Talos can still help in a later turn if you want to retry the edit or take a read-only approach.");
        return out;
    }
    if !succeeded && !blocked.is_empty() {
        let mut out = String::from(
            "[Truth check: no file was changed in this turn because the requested write was blocked or failed.]\nNo file changes were applied:\n",
        );
        for (p, reason) in blocked {
            out.push_str(&format!("- {p}: {reason}\n"));
        }
        for p in denied {
            out.push_str(&format!("- {p}: approval denied\n"));
        }
        return out.trim_end().to_string();
    }
    if facts.read_only_blocked && !succeeded {
        return "[Truth check: no file was changed in this turn. The model attempted to call mutating tools, but this turn was classified as read-only, so those calls were blocked.]\nNo file changes were applied. Ask explicitly to edit, update, or create files if you want Talos to modify the workspace.".into();
    }
    if facts.tool_calls == 0 && facts.tools_offered && denies_capability(model_answer) {
        return if facts.mutation_allowed {
            "[Capability correction: Talos can create and edit files in the current workspace on mutation-capable turns, subject to policy and approval.]\nNo file tool was called in this turn. If you want a workspace change, ask Talos to create, edit, update, or fix the file directly.".into()
        } else {
            "[Capability correction: Talos can inspect files in the current workspace with local read tools, but no file tool was called in this turn.]\nI can read, list, and search files in this workspace when the task calls for it. I did not inspect files in this turn, so I cannot give an evidence-backed workspace answer yet.".into()
        };
    }
    if !facts.mutation_requested && !facts.evidence_missing.is_empty() {
        return format!(
            "[Grounding check: the answer should rest on {}, but {} not read in this turn. The response below was produced without reading {}.]\n\n{model_answer}",
            facts.evidence_missing.join(", "),
            if facts.evidence_missing.len() == 1 {
                "it was"
            } else {
                "they were"
            },
            if facts.evidence_missing.len() == 1 {
                "it"
            } else {
                "them"
            },
        );
    }
    if !facts.task_findings.is_empty() && claims_no_problems(model_answer) {
        let n = facts.task_findings.len();
        return format!(
            "{CLEAN_VERDICT_CONTRADICTED} {n} problem{}. The runtime's findings follow the response.]\n\n{model_answer}",
            if n == 1 { "" } else { "s" }
        );
    }
    if !succeeded && claims_change(model_answer) {
        return format!(
            "[Truth check: the response below claims a file was changed, but no file-mutating tool succeeded in this turn. No file on disk was actually modified.]\n\n{model_answer}"
        );
    }
    if facts.mutation_allowed && !facts.unmet_targets.is_empty() {
        return format!(
            "{model_answer}\n\n[Action obligation failed: pending expected target progress was not satisfied.] Remaining target(s): {} Talos stopped this turn deterministically.",
            facts.unmet_targets.join(", ")
        )
        .trim_start()
        .to_string();
    }
    model_answer.to_string()
}

fn summary_of_changes(facts: &TurnFacts) -> String {
    let changed: Vec<&str> = facts
        .mutations
        .iter()
        .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
        .map(|m| m.target.as_str())
        .collect();
    if changed.is_empty() {
        "\nNo file was changed.".into()
    } else {
        format!("\nChanged before the stop: {}.", changed.join(", "))
    }
}

const INCAPABLE: &[&str] = &[
    "i can't create files",
    "i cannot create files",
    "i can't modify files",
    "i cannot modify files",
    "i can't edit files",
    "i cannot edit files",
    "i can't write files",
    "i cannot write files",
    "i don't have access to your",
    "i do not have access to your",
    "i can't access your",
    "i cannot access your",
    "i can't access files",
    "i cannot access files",
    "i can't read files",
    "i cannot read files",
    "i'm unable to access",
    "i am unable to access",
    "unable to modify files",
    "as an ai language model",
    "i don't have the ability to",
    "i do not have the ability to",
];

/// The model says it cannot do what the turn lets it do.
fn denies_capability(answer: &str) -> bool {
    let lower = answer.to_lowercase().replace('’', "'");
    INCAPABLE.iter().any(|m| lower.contains(m))
}

const CLEAN_VERDICTS: &[&str] = &[
    "no problems",
    "no issues",
    "no mismatches",
    "no mismatch",
    "no errors",
    "no bugs",
    "nothing wrong",
    "nothing is wrong",
    "everything looks fine",
    "everything looks good",
    "everything looks correct",
    "everything is fine",
    "everything is correct",
    "everything is working",
    "all good",
    "looks correct",
    "works correctly",
    "is working now",
    "is working correctly",
    "all selectors match",
    "all ids match",
];

/// The answer gives a clean verdict: nothing wrong, everything works.
pub fn claims_no_problems(answer: &str) -> bool {
    let lower = answer.to_lowercase().replace('’', "'");
    CLEAN_VERDICTS.iter().any(|m| lower.contains(m))
}

fn claims_change(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    CLAIM_MARKERS.iter().any(|m| lower.contains(m))
        && !NO_CHANGE_CONTEXT.iter().any(|m| lower.contains(m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outcome::MutationRecord;

    #[test]
    fn a_claimed_change_without_a_write_is_annotated() {
        let facts = TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            ..TurnFacts::default()
        };
        assert!(
            guard_answer("I have updated settings.py.", &facts)
                .starts_with("[Truth check: the response below claims")
        );
        assert_eq!(guard_answer("Nothing to do.", &facts), "Nothing to do.");
    }

    #[test]
    fn a_denial_replaces_the_answer() {
        let facts = TurnFacts {
            mutations: vec![MutationRecord {
                target: "settings.py".into(),
                result: MutationResult::Denied,
            }],
            ..TurnFacts::default()
        };
        let answer = guard_answer("Done! I changed it.", &facts);
        assert!(
            answer.contains("- settings.py: approval denied"),
            "{answer}"
        );
        assert!(!answer.contains("Done!"));
    }

    #[test]
    fn a_verified_change_keeps_the_answer() {
        let facts = TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            mutations: vec![MutationRecord {
                target: "a".into(),
                result: MutationResult::Succeeded { verified: true },
            }],
            ..TurnFacts::default()
        };
        assert_eq!(
            guard_answer("I have updated a.", &facts),
            "I have updated a."
        );
    }

    #[test]
    fn a_capability_denial_is_corrected_when_the_turn_could_act() {
        let facts = TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            tools_offered: true,
            ..TurnFacts::default()
        };
        assert!(
            guard_answer(
                "Sorry, as an AI language model I can't create files.",
                &facts
            )
            .starts_with("[Capability correction: Talos can create and edit files")
        );
        let read_only = TurnFacts {
            tools_offered: true,
            ..TurnFacts::default()
        };
        assert!(
            guard_answer("I don't have access to your files.", &read_only)
                .starts_with("[Capability correction: Talos can inspect files")
        );
        let chat = TurnFacts::default();
        assert_eq!(
            guard_answer("I can't create files.", &chat),
            "I can't create files.",
            "a chat turn offers no tools"
        );
    }

    #[test]
    fn a_clean_verdict_is_contradicted_by_the_runtimes_findings() {
        let facts = TurnFacts {
            tools_offered: true,
            tool_calls: 1,
            task_findings: vec!["app.js: #go is not in any page".into()],
            ..TurnFacts::default()
        };
        let answer = guard_answer("Everything looks fine, no mismatches.", &facts);
        assert!(
            answer.starts_with("[Verification check: the response below says nothing is wrong, but Talos's own checks found 1 problem."),
            "{answer}"
        );
        assert_eq!(
            guard_answer("The button id is wrong.", &facts),
            "The button id is wrong.",
            "an answer that admits the problem is left alone"
        );
        let clean = TurnFacts {
            tools_offered: true,
            tool_calls: 1,
            ..TurnFacts::default()
        };
        assert_eq!(
            guard_answer("No problems found.", &clean),
            "No problems found.",
            "without findings a clean verdict stands"
        );
    }

    #[test]
    fn an_answer_without_its_evidence_is_marked_ungrounded() {
        let facts = TurnFacts {
            evidence_missing: vec!["app.js".into()],
            tools_offered: true,
            tool_calls: 1,
            ..TurnFacts::default()
        };
        assert!(guard_answer("app.js is fine.", &facts).starts_with(
            "[Grounding check: the answer should rest on app.js, but it was not read in this turn."
        ));
    }
}
