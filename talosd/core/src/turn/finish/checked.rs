//! What "verified" rests on at the end of a change turn: the request's own checks
//! (a change rule that held on a changed target, a workspace operation's postcondition, the
//! static web verifier, an after-change command), decided from the records. A turn whose
//! changes were only read back as approved, with nothing in the request to check, is
//! `COMPLETED_UNVERIFIED` and says so in its answer and its trace's verification.

use crate::proposal::change_rule;
use crate::request::contract::CommandAsk;
use crate::request::outcome::MutationResult;
use crate::turn::Turn;
use crate::turn::record::CheckStatus;

/// Why a change turn with nothing checkable is not verified, in the trace and the answer.
pub const NOTHING_CHECKABLE: &str =
    "written and read back as approved; nothing in the request could be checked";

/// The trace's verification `callId` for the request's own check of the whole turn.
const REQUEST_CHECK: &str = "request";

impl Turn {
    /// Settles [`crate::request::outcome::TurnFacts::nothing_checkable`] and, when it holds,
    /// records it in the trace's verification (once, however often the turn is settled).
    pub(super) fn settle_checks(&mut self) {
        let nothing = self.nothing_checkable();
        self.record.facts.nothing_checkable = nothing;
        let recorded = self
            .record
            .verification
            .iter()
            .any(|v| v.call_id == REQUEST_CHECK);
        if nothing && !recorded {
            self.record.verified(
                REQUEST_CHECK,
                ".",
                CheckStatus::NotChecked,
                NOTHING_CHECKABLE,
            );
        }
    }

    /// Files changed, and none of the request's own checks applies to them.
    fn nothing_checkable(&self) -> bool {
        let facts = &self.record.facts;
        let changed: Vec<&str> = facts
            .mutations
            .iter()
            .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
            .map(|m| m.target.as_str())
            .collect();
        if changed.is_empty() {
            return false;
        }
        let rules = change_rule::rules(&self.plan);
        let ruled = changed
            .iter()
            .any(|target| change_rule::rule_for(&rules, target).is_some());
        let operation = self
            .record
            .executions
            .iter()
            .any(|e| e.success && e.tool.is_workspace_operation());
        let task_checked = self.record.verification.iter().any(|v| v.call_id == "task");
        let command_checked = match &self.plan.contract().command {
            CommandAsk::AfterChange(profile) => {
                self.record.commands.iter().any(|c| &c.profile == profile)
            }
            CommandAsk::None | CommandAsk::Run(_) | CommandAsk::Unavailable(_) => false,
        };
        !(ruled || operation || task_checked || command_checked)
    }
}
