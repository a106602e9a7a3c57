//! The runtime's statement of mixed results, one line per file, from where each target ended
//! ([`crate::request::outcome::target_states`]): changed (and verified or not), failed, refused, not
//! approved, not attempted, and whether the request needed it.

use crate::request::outcome::{TargetEnd, TargetState, TurnFacts, target_states};

/// The heading of the per-file statement.
pub const PER_FILE_HEADING: &str = "Per-file results (from Talos's records, not the model):";

/// The statement when the results are mixed: a target that did not end changed, or one that
/// changed only after a refused or failed attempt. `None` when every target simply changed
/// (or nothing was touched).
pub fn statement(facts: &TurnFacts) -> Option<String> {
    let states = target_states(facts);
    let mixed = states.iter().any(|s| !s.changed() || s.unsuccessful > 0);
    if states.is_empty() || !mixed {
        return None;
    }
    let lines: Vec<String> = states.iter().map(line).collect();
    Some(format!("{PER_FILE_HEADING}\n{}", lines.join("\n")))
}

fn line(state: &TargetState) -> String {
    let end = match &state.end {
        TargetEnd::Changed { verified: true } => "changed and verified".to_string(),
        TargetEnd::Changed { verified: false } => "changed, not verified".to_string(),
        TargetEnd::Failed { reason } => format!("failed: {}", reason.trim_end_matches('.')),
        TargetEnd::Refused { reason } => format!("refused: {}", reason.trim_end_matches('.')),
        TargetEnd::Denied => "not changed: approval denied".to_string(),
        TargetEnd::NotAttempted => "not attempted".to_string(),
    };
    // A refusal or failure that came after the change is said as coming after it: the file
    // changed, and a later change of it did not land.
    let earlier = match (&state.later_failure, state.changed(), state.unsuccessful) {
        (Some(reason), _, _) => format!(
            "; then a later change of it did not land: {}",
            reason.trim_end_matches('.')
        ),
        (None, true, 1) => " (after 1 refused or failed attempt)".to_string(),
        (None, true, n) if n > 1 => format!(" (after {n} refused or failed attempts)"),
        _ => String::new(),
    };
    let unneeded = if state.needed {
        ""
    } else {
        " (not needed by the request)"
    };
    format!("- {}: {end}{earlier}{unneeded}", state.target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::outcome::{MutationRecord, MutationResult};

    fn m(target: &str, result: MutationResult) -> MutationRecord {
        MutationRecord {
            target: target.into(),
            result,
        }
    }

    #[test]
    fn the_statement_lists_each_file_by_where_it_ended() {
        let ok = || MutationResult::Succeeded { verified: true };
        let refused = || MutationResult::Blocked {
            reason: "Target outside expected targets before approval.".into(),
        };
        // (expected targets, mutations, unmet, statement lines or None)
        type Rows = Vec<(
            &'static [&'static str],
            Vec<MutationRecord>,
            &'static [&'static str],
            Option<&'static str>,
        )>;
        let rows: Rows = vec![
            (&["a"], vec![m("a", ok())], &[], None),
            (&[], vec![], &[], None),
            (
                &["a", "b", "c"],
                vec![
                    m("a", ok()),
                    m(
                        "b",
                        MutationResult::Failed {
                            reason: "disk full".into(),
                        },
                    ),
                ],
                &["b", "c"],
                Some("- a: changed and verified\n- b: failed: disk full\n- c: not attempted"),
            ),
            (
                &["a"],
                vec![m("notes.txt", refused()), m("a", ok())],
                &[],
                Some(
                    "- notes.txt: refused: Target outside expected targets before approval (not needed by the request)\n- a: changed and verified",
                ),
            ),
            (
                &["a"],
                vec![
                    m("a", refused()),
                    m("a", MutationResult::Succeeded { verified: false }),
                ],
                &[],
                Some("- a: changed, not verified (after 1 refused or failed attempt)"),
            ),
            (
                &["a"],
                vec![m("a", ok()), m("a", refused())],
                &[],
                Some(
                    "- a: changed and verified; then a later change of it did not land: Target outside expected targets before approval",
                ),
            ),
            (
                &[],
                vec![m("a", ok()), m("b", MutationResult::Denied)],
                &[],
                Some("- a: changed and verified\n- b: not changed: approval denied"),
            ),
        ];
        for (expected, mutations, unmet, lines) in rows {
            let facts = TurnFacts {
                mutation_requested: true,
                mutation_allowed: true,
                expected_targets: expected.iter().map(|s| s.to_string()).collect(),
                unmet_targets: unmet.iter().map(|s| s.to_string()).collect(),
                mutations,
                ..TurnFacts::default()
            };
            let want = lines.map(|l| format!("{PER_FILE_HEADING}\n{l}"));
            assert_eq!(statement(&facts), want, "{facts:?}");
        }
    }
}
