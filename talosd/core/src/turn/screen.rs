//! Screening an approval before the daemon sends it: the `warning: ` lines
//! `talos_core::deceptive` finds in its target, diff, command arguments and other lines are
//! appended to its details (what the person and an editor see) and recorded as
//! `DECEPTIVE_TEXT_IN_APPROVAL` warnings (what the trace keeps).

use super::Turn;
use super::call::ApprovalAsk;
use super::record::WarningCode;
use crate::text::deceptive::{ApprovalText, warnings};

impl Turn {
    /// Adds the approval's warnings to its details and to the record; returns how many.
    pub fn screen_approval(&mut self, ask: &mut ApprovalAsk) -> usize {
        let found = warnings(&ApprovalText {
            description: &ask.description,
            target: ask.target.as_deref(),
            details: &ask.details,
            diff: ask.diff.as_ref().map(|d| d.text.as_str()),
            diff_cut: ask.diff.as_ref().map_or("", |d| d.cut.as_str()),
        });
        for line in &found {
            let what = line.strip_prefix("warning: ").unwrap_or(line);
            self.record.warn(
                WarningCode::DeceptiveTextInApproval,
                format!("{} approval: {what}", ask.tool),
            );
        }
        let count = found.len();
        ask.details.extend(found);
        count
    }
}
