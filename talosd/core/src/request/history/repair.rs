//! A repair follow-up ("fix the remaining problems") narrowed to what is left, from the
//! records of the turn before: the targets it did not change still must change, and the files
//! that can carry the fix of a finding its checks recorded may change. A finding is filed under
//! one file, but a static web problem is a relation between files: "scripts.js: no page loads
//! this script" is fixed in the page that should load it, and "index.html: #go has no handler"
//! may be fixed in the script. So the fix of a web finding may go in any web file of the
//! inherited targets; requiring the file it is filed under would refuse the fix, and requiring
//! every one of them would call a complete repair partial.

use crate::request::contract::{Reason, TaskContract};
use crate::request::intent::{TargetRef, TargetRole};

/// Of the targets a repair inherited to change: those the previous turn did not change stay
/// required; those a finding's fix may touch become allowed; the rest are only mentioned. Any
/// other contract, or one the records do not narrow, is returned as it is.
pub fn narrow_repair(
    contract: TaskContract,
    changed: &[String],
    findings: &[String],
) -> TaskContract {
    if contract.reason != Reason::RepairInherited {
        return contract;
    }
    let must: Vec<&TargetRef> = contract
        .roleful_targets
        .iter()
        .filter(|t| t.role == TargetRole::MustMutate)
        .collect();
    let was_changed = |path: &str| changed.iter().any(|c| c == path);
    let left = must.iter().filter(|t| !was_changed(&t.path)).count();
    let sites = fix_sites(findings, &must);
    // Nothing changed before: the whole contract is still to do. Everything changed and no
    // finding left: there is nothing to narrow to.
    if left == must.len() || (left == 0 && sites.is_empty()) {
        return contract;
    }
    let targets = contract
        .roleful_targets
        .iter()
        .map(|t| match t.role {
            TargetRole::MustMutate if was_changed(&t.path) => TargetRef {
                role: if sites.contains(&t.path.as_str()) {
                    TargetRole::MayMutate
                } else {
                    TargetRole::MentionedOnly
                },
                reason: if sites.contains(&t.path.as_str()) {
                    "may-carry-a-finding's-fix"
                } else {
                    "changed-by-the-previous-turn"
                },
                ..t.clone()
            },
            _ => t.clone(),
        })
        .collect();
    TaskContract::compiled(
        contract.task_type,
        true,
        contract.original_request,
        contract.reason,
        contract.static_web.required_visible_facts,
        targets,
    )
}

/// The inherited targets that may carry the fix of a finding (`file: message`): the file it is
/// filed under, and for a static web finding every web file among the targets.
fn fix_sites<'a>(findings: &[String], must: &[&'a TargetRef]) -> Vec<&'a str> {
    let filed: Vec<&str> = findings
        .iter()
        .map(|f| f.split_once(": ").map_or(f.as_str(), |(file, _)| file))
        .collect();
    let web_finding = filed.iter().any(|f| is_web_file(f));
    must.iter()
        .map(|t| t.path.as_str())
        .filter(|path| filed.contains(path) || (web_finding && is_web_file(path)))
        .collect()
}

fn is_web_file(path: &str) -> bool {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    matches!(
        ext.as_str(),
        "html" | "htm" | "css" | "js" | "mjs" | "cjs" | "ts" | "jsx" | "tsx"
    )
}
