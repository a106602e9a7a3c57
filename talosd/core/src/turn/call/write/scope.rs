//! How much of an existing file a change takes, against what the request asked: a
//! whole-file `talos.write_file` of a file the request asked a small change of is refused
//! before approval (use `talos.edit_file`), at every constraint level; and an approval whose
//! change removes more than half of the file's lines says so first, above the diff, with what
//! the request asked.

use crate::planning::tools::ToolArgs;
use crate::proposal::change_rule;
use crate::text::digest::count_lines;
use crate::turn::Turn;

/// The refusal of a whole-file write of an existing file whose rule asks a small change;
/// `None` otherwise.
pub(super) fn whole_write_refused(
    turn: &Turn,
    args: &ToolArgs,
    shown: &str,
    before: Option<&str>,
) -> Option<String> {
    if !matches!(args, ToolArgs::WriteFile { .. }) || before.is_none() {
        return None;
    }
    let rules = change_rule::rules(&turn.plan);
    let rule = change_rule::rule_for(&rules, shown).filter(|r| r.small_change())?;
    Some(format!(
        "{shown} already exists and the request asked for a small change to it ({}). Make that change with talos.edit_file, replacing only the line that changes; a whole-file talos.write_file of {shown} is refused. No approval was requested and no file was changed.",
        rule.asked()
    ))
}

/// The line an approval starts with when the change removes more than half of an existing
/// file's lines: how much it removes, and what the request asked (its rule for the file, else
/// the request's first line).
pub(super) fn removal_note(
    turn: &Turn,
    shown: &str,
    before: Option<&str>,
    removed: usize,
) -> Option<String> {
    let total = count_lines(before?);
    if total == 0 || removed * 2 <= total {
        return None;
    }
    let takes = if removed >= total {
        format!("replaces all {total} lines of {shown}")
    } else {
        format!("removes {removed} of the {total} lines of {shown}")
    };
    let rules = change_rule::rules(&turn.plan);
    let asked = match change_rule::rule_for(&rules, shown) {
        Some(rule) => format!("the request asked to {}", rule.asked()),
        None => {
            let request = turn.plan.original_request();
            let first = request.lines().next().unwrap_or(request).trim();
            format!("the request: \"{first}\"")
        }
    };
    Some(format!("{takes}; {asked}"))
}
