//! The format rung of the ladder: an allow does not cover a change of a file's line endings,
//! byte order mark or final newline. It runs once the proposed content is known (after the
//! path rungs in `ladder.rs`), so it is its own function.

use super::{Action, PermissionDecision, ReasonCode};
use crate::proposal::rules;

/// The format rung, once the proposed content is known: an allow (a configured rule or a
/// remembered approval) does not cover a change of the file's line endings, byte order mark or
/// final newline, which is asked. `None` when the decision stands.
pub fn format_rung(
    decision: &PermissionDecision,
    before: Option<&str>,
    after: &str,
) -> Option<PermissionDecision> {
    if decision.action != Action::Allow {
        return None;
    }
    let change = rules::format_change(before, after)?;
    Some(PermissionDecision {
        action: Action::Ask,
        reason_code: ReasonCode::FormatChangeAsk,
        message: format!(
            "the change alters the file's format: {change}; an allow does not cover that"
        ),
        remember_eligible: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proposal::ladder::ReasonCode;

    fn decision(action: Action) -> PermissionDecision {
        PermissionDecision {
            action,
            reason_code: ReasonCode::FormatChangeAsk,
            message: String::new(),
            remember_eligible: true,
        }
    }

    /// Proves an allow turns into an ask exactly when the change alters line endings, the BOM
    /// or the final newline, and that asks and denies are left as they are.
    #[test]
    fn an_allow_does_not_cover_a_format_change() {
        let rows: [(Action, Option<&str>, &str, bool); 7] = [
            (Action::Allow, Some("a\r\nb\r\n"), "a\nb\n", true),
            (Action::Allow, Some("\u{feff}a\n"), "a\n", true),
            (Action::Allow, Some("a\n"), "a", true),
            (Action::Allow, Some("a\n"), "b\n", false),
            (Action::Allow, None, "new\n", false),
            (Action::Ask, Some("a\r\n"), "a\n", false),
            (Action::Deny, Some("a\r\n"), "a\n", false),
        ];
        for (action, before, after, asks) in rows {
            let rung = format_rung(&decision(action), before, after);
            assert_eq!(rung.is_some(), asks, "{action:?} {before:?} -> {after:?}");
            if let Some(asked) = rung {
                assert_eq!(asked.action, Action::Ask);
                assert!(!asked.remember_eligible);
            }
        }
    }
}
