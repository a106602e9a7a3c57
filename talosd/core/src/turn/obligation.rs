//! Obligations enforced, not only recorded (issue 12): when the model stops calling tools
//! before the plan's action or evidence obligation is met, the runtime re-prompts once, saying
//! what must be done and with which tools; when the retry fails too, the facts say so and the
//! answer becomes the runtime's statement (the guards). Also: whether the answer text must be
//! held until the guards have decided, and the runtime's own summary once the work is done.
//! Every decision here reads the turn's records (calls, results, reads, mutations); the only
//! words read are the request's ask for an explanation, which no record can show.

use crate::planning::plan::{ActionObligation, EvidenceObligation, RequestedResult};
use crate::planning::surface::Surface;
use crate::planning::tools::ToolId;
use crate::request::outcome::MutationResult;

use super::Turn;
use super::record::WarningCode;

/// Which obligations have had their one retry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Retried {
    action: bool,
    evidence: bool,
}

/// What the missing evidence of a listing question is called.
pub const LISTING: &str = "a directory listing";

/// What a missing file read is called when the question named no file.
pub const UNNAMED_EVIDENCE: &str = "the workspace files the question is about";

impl Turn {
    /// The re-prompt for a reply that made no call while an obligation is unmet, at most once
    /// per obligation; `None` when the answer may stand (the facts then say what is missing).
    pub fn obligation_retry(&mut self, surface: &Surface) -> Option<String> {
        let tools = tool_list(surface);
        if let Some(remaining) = self.action_unmet() {
            if self.retried.action {
                return None;
            }
            self.retried.action = true;
            self.record.facts.obligation_retries += 1;
            let message = format!(
                "[Runtime: this request requires a change that has not been made: {remaining}. \
                 A reply in prose, pasted code or a refusal does not make it. Call a tool now \
                 to make the change; the tools on this turn are: {tools}.]"
            );
            self.record
                .warn(WarningCode::ObligationRetry, format!("action: {remaining}"));
            return Some(message);
        }
        if self.listing_unmet() {
            if self.retried.evidence || !surface.tools().contains(&ToolId::ListDir) {
                return None;
            }
            self.retried.evidence = true;
            self.record.facts.obligation_retries += 1;
            self.record
                .warn(WarningCode::ObligationRetry, format!("evidence: {LISTING}"));
            return Some(format!(
                "[Runtime: this question is answered from a directory listing, and nothing has \
                 been listed this turn. Call talos.list_dir on the folder the question is about \
                 before you answer; the tools on this turn are: {tools}.]"
            ));
        }
        if let Some(unread) = self.evidence_unmet() {
            if self.retried.evidence || !surface.tools().contains(&ToolId::ReadFile) {
                return None;
            }
            self.retried.evidence = true;
            self.record.facts.obligation_retries += 1;
            let how = if unread == [UNNAMED_EVIDENCE] {
                "Find the files the question is about (talos.list_dir or talos.grep) and read \
                 them with talos.read_file"
                    .to_string()
            } else {
                format!("Call talos.read_file on {}", unread.join(", "))
            };
            let message = format!(
                "[Runtime: this question must be answered from the workspace, and {} has not \
                 been read this turn. {how} before you answer; the tools on this turn are: \
                 {tools}.]",
                unread.join(", ")
            );
            self.record.warn(
                WarningCode::ObligationRetry,
                format!("evidence: {}", unread.join(", ")),
            );
            return Some(message);
        }
        None
    }

    /// Records what the answer leaves unmet once no retry is left: the change not made (and,
    /// with no call at all on a turn that offered tools, a capability denial, whatever the
    /// wording), and the files not read.
    pub fn settle_obligations(&mut self) {
        if self.action_unmet().is_some() {
            let facts = &mut self.record.facts;
            facts.action_not_taken = true;
            let offered = self
                .record
                .tool_surfaces
                .iter()
                .any(|s| !s.tools.is_empty());
            facts.capability_denied = offered && self.record.tool_calls.is_empty();
        }
        let listing = self.listing_unmet().then(|| vec![LISTING.to_string()]);
        if let Some(unread) = listing.or_else(|| self.evidence_unmet()) {
            for target in unread {
                if !self.record.facts.evidence_missing.contains(&target) {
                    self.record.facts.evidence_missing.push(target);
                }
            }
        }
    }

    /// The change the plan requires and the records do not show, as the person would name it;
    /// `None` when it is met or when the person or the policy decided against it (a denial, a
    /// block or a failure is reported as such, not retried).
    fn action_unmet(&self) -> Option<String> {
        let contract = self.plan.contract();
        if self.plan.obligation() != ActionObligation::MutatingToolRequired
            || !contract.mutation_allowed
        {
            return None;
        }
        let facts = &self.record.facts;
        // A change made through an MCP server's tool is an act the records cannot check, not
        // an act not taken.
        let decided = facts.read_only_blocked
            || !facts.external_ran.is_empty()
            || facts.mutations.iter().any(|m| {
                matches!(
                    m.result,
                    MutationResult::Denied | MutationResult::Blocked { .. }
                )
            });
        if decided {
            return None;
        }
        let changed = |target: &str| {
            facts
                .mutations
                .iter()
                .any(|m| m.target == target && matches!(m.result, MutationResult::Succeeded { .. }))
        };
        let remaining: Vec<&str> = contract
            .expected_targets
            .iter()
            .map(String::as_str)
            .filter(|t| !changed(t))
            .collect();
        let any_change = facts
            .mutations
            .iter()
            .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
        match (remaining.is_empty(), contract.expected_targets.is_empty()) {
            (false, _) => Some(remaining.join(", ")),
            (true, true) if !any_change => Some("the change the request asks for".into()),
            (true, _) => None,
        }
    }

    /// Whether the plan allows a final answer now: no action, listing or evidence obligation
    /// is unmet (the decoding constraint then admits prose beside calls; issue 15).
    pub fn answer_allowed(&self) -> bool {
        self.action_unmet().is_none() && !self.listing_unmet() && self.evidence_unmet().is_none()
    }

    /// Whether a listing question was answered with nothing listed (and no listing refused).
    fn listing_unmet(&self) -> bool {
        let facts = &self.record.facts;
        self.plan.obligation() == ActionObligation::ListDirOnly
            && self.record.listings.is_empty()
            && !facts.read_denied
            && !facts.read_blocked
    }

    /// The files the answer had to rest on and that were not read; `None` when met, when the
    /// turn is not a question about the workspace, or when a read was denied or blocked.
    fn evidence_unmet(&self) -> Option<Vec<String>> {
        let needs_evidence = matches!(
            self.plan.evidence_obligation(),
            EvidenceObligation::ReadTargetRequired
                | EvidenceObligation::WorkspaceInspectionRequired
        ) || matches!(
            self.plan.obligation(),
            ActionObligation::InspectRequired | ActionObligation::VerifyFromEvidence
        );
        let facts = &self.record.facts;
        if !needs_evidence
            || facts.mutation_requested
            || facts.read_denied
            || facts.read_blocked
            || !facts.unreadable_documents.is_empty()
        {
            return None;
        }
        let named: Vec<&String> = self
            .plan
            .requested_results()
            .iter()
            .filter_map(|r| match r {
                RequestedResult::Read { target } => Some(target),
                RequestedResult::Changed { .. } | RequestedResult::Answer => None,
            })
            .collect();
        if named.is_empty() {
            return (!self.read_contents()).then(|| vec![UNNAMED_EVIDENCE.to_string()]);
        }
        let unread: Vec<String> = named
            .into_iter()
            .filter(|t| !self.record.read_paths.iter().any(|p| p == *t))
            .cloned()
            .collect();
        (!unread.is_empty()).then_some(unread)
    }

    /// Whether the turn gathered evidence: a file's contents read or searched, or a command's
    /// output (a listing alone is not).
    fn read_contents(&self) -> bool {
        !self.record.commands.is_empty()
            || self
                .record
                .executions
                .iter()
                .any(|e| e.success && matches!(e.tool, ToolId::ReadFile | ToolId::Grep))
    }

    /// Whether the answer text is held until the guards have decided: on turns with an action
    /// or evidence obligation the runtime may correct it, so nothing is streamed first.
    /// Whether the next model reply is held back instead of streamed: the turn's obligations
    /// hold every reply, and a reply decoded under a constraint is JSON (`{"answer": …}` or a
    /// call) whose prose is only known once it is complete. Once a constrained reply was held,
    /// the turn's final answer is sent as the held stream ([`Turn::answer_held`]).
    pub fn hold_reply(&mut self, constrained: bool) -> bool {
        self.held_constrained |= constrained;
        constrained || self.holds_answer()
    }

    /// Whether the final answer goes out as one held stream at the end of the turn.
    pub fn answer_held(&self) -> bool {
        self.held_constrained || self.holds_answer()
    }

    pub fn holds_answer(&self) -> bool {
        let action = matches!(
            self.plan.obligation(),
            ActionObligation::MutatingToolRequired
                | ActionObligation::InspectRequired
                | ActionObligation::VerifyFromEvidence
                | ActionObligation::ListDirOnly
        );
        let evidence = !matches!(
            self.plan.evidence_obligation(),
            EvidenceObligation::None | EvidenceObligation::ListDirectoryOnly
        );
        action || evidence
    }

    /// The runtime's summary when the work is done: every expected target changed and was
    /// read back as approved, and the request did not ask for an explanation. The loop then
    /// ends without another model call.
    pub fn work_done_summary(&self) -> Option<String> {
        let contract = self.plan.contract();
        let targets = &contract.expected_targets;
        if targets.is_empty()
            || !contract.mutation_allowed
            || asks_for_explanation(self.plan.original_request())
        {
            return None;
        }
        let facts = &self.record.facts;
        let verified = |target: &String| {
            facts.mutations.iter().any(|m| {
                &m.target == target && m.result == MutationResult::Succeeded { verified: true }
            })
        };
        if !targets.iter().all(verified) || !self.repair_changed() {
            return None;
        }
        // A change that asked for a check to pass is done when that check ran after it and passed.
        let check = match &contract.command {
            crate::request::contract::CommandAsk::AfterChange(profile) => {
                let ran = self.record.commands.iter().any(|c| &c.profile == profile);
                let failed = facts
                    .task_findings
                    .iter()
                    .any(|f| f.starts_with(profile.as_str()));
                if !ran || failed {
                    return None;
                }
                Some(format!("\n{profile} passed after the change."))
            }
            _ => None,
        };
        let files = match targets.as_slice() {
            [one] => format!("{one} was changed and read back as approved."),
            many => format!(
                "These files were changed and read back as approved:\n{}",
                many.iter()
                    .map(|t| format!("- {t}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            ),
        };
        Some(files + check.as_deref().unwrap_or(""))
    }
}

/// The tools offered, for a re-prompt.
fn tool_list(surface: &Surface) -> String {
    let names: Vec<&str> = surface.tools().iter().map(|t| t.name()).collect();
    names.join(", ")
}

/// Whether the request asks for an explanation besides the change ("... and explain why"):
/// words, because no record can show what the person wants to be told.
pub fn asks_for_explanation(request: &str) -> bool {
    let lower = request.to_lowercase();
    const ASKS: [&str; 8] = [
        "explain",
        "why ",
        "why?",
        "describe what",
        "describe how",
        "tell me what",
        "tell me how",
        "walk me through",
    ];
    ASKS.iter().any(|ask| lower.contains(ask))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constrained_replies_are_held_and_so_is_the_answer_after_them() {
        use crate::planning::plan::TurnPlan;
        use crate::planning::posture::{Posture, apply};
        let settings = || super::super::TurnSettings {
            mode: crate::planning::modes::SessionMode::Agent,
            strict_names: false,
            rules: Vec::new(),
            require_tool_call: false,
            allow_invisible_path_characters: false,
            model: Default::default(),
            pre_call_hooks: 0,
        };
        let chat = || {
            let plan = TurnPlan::from_turn(apply(
                Posture::Agent,
                crate::request::contract::resolve("hello there"),
            ));
            Turn::new(plan, settings(), crate::proposal::ladder::Grants::default())
        };
        // (constrained calls in order, held per call, answer held at the end)
        let rows: &[(&[bool], &[bool], bool)] = &[
            (&[false], &[false], false),
            (&[true], &[true], true),
            (&[false, true], &[false, true], true),
            (&[true, false], &[true, false], true),
        ];
        for (calls, held, at_end) in rows {
            let mut turn = chat();
            assert!(!turn.holds_answer(), "a chat turn streams");
            let got: Vec<bool> = calls.iter().map(|c| turn.hold_reply(*c)).collect();
            assert_eq!(&got[..], *held, "{calls:?}");
            assert_eq!(turn.answer_held(), *at_end, "{calls:?}");
        }
    }

    #[test]
    fn explanation_rows() {
        let rows: &[(&str, bool)] = &[
            ("In settings.py, change TIMEOUT from 30 to 60.", false),
            ("Change TIMEOUT to 60 and explain why it matters.", true),
            ("Fix the bug in app.py and tell me what was wrong.", true),
            ("Create notes.md with a list of todos.", false),
            ("Why? Just set DEBUG to false in config.py.", true),
        ];
        for (request, expected) in rows {
            assert_eq!(asks_for_explanation(request), *expected, "{request}");
        }
    }
}
