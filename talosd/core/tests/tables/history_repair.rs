//! A repair follow-up works on what is left (issue 27, item 5): "fix the remaining problems"
//! after a turn that changed some targets keeps, of the targets it inherits to change, those
//! the previous turn did not change and those its checks' findings are about.

use talos_core::history::{PriorOutcome, PriorTurn, narrow_repair, resolve_in_context};

fn repair_after(request: &str) -> talos_core::contract::TaskContract {
    let prior = PriorTurn {
        contract: talos_core::contract::resolve(request),
        outcome: PriorOutcome::Incomplete,
        changed: vec![],
    };
    resolve_in_context(&[prior], "fix the remaining problems")
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_repair_keeps_what_is_left_rows() {
    let request = "Create index.html, app.js and style.css for a start button";
    // (changed by the previous turn, its findings, the targets the repair must change)
    let rows: &[(&[&str], &[&str], &[&str])] = &[
        (&["index.html", "app.js"], &[], &["style.css"]),
        // A web finding may be fixed in any web file of the site: the changed ones become
        // allowed, not required (see the allowed-targets rows), and what is left stays required.
        (
            &["index.html", "app.js"],
            &["app.js: #start is not in any page"],
            &["style.css"],
        ),
        // Nothing changed, or everything: the inherited targets stand.
        (&[], &[], &["index.html", "app.js", "style.css"]),
        (
            &["index.html", "app.js", "style.css"],
            &[],
            &["index.html", "app.js", "style.css"],
        ),
    ];
    for (changed, findings, expected) in rows {
        let repair = repair_after(request);
        let narrowed = narrow_repair(repair, &strings(changed), &strings(findings));
        let mut got = narrowed.expected_targets.clone();
        got.sort();
        let mut want = strings(expected);
        want.sort();
        assert_eq!(got, want, "changed {changed:?}, findings {findings:?}");
        assert!(narrowed.mutation_requested);
    }
}

/// The files a finding's fix may touch are allowed: "scripts.js: no page loads this script" is
/// fixed in the page, so the page the previous turn wrote is not refused, and a fix in either
/// file is enough (none of them becomes required).
#[test]
fn a_finding_allows_the_files_that_can_carry_its_fix_rows() {
    let request = "Create index.html and scripts.js for a greeting";
    // (changed, findings, required, allowed)
    let rows: &[(&[&str], &[&str], &[&str], &[&str])] = &[
        (
            &["index.html", "scripts.js"],
            &["scripts.js: no page loads this script, so it has no effect"],
            &[],
            &["index.html", "scripts.js"],
        ),
        (
            &["index.html", "scripts.js"],
            &["index.html: button #go has no click handler"],
            &[],
            &["index.html", "scripts.js"],
        ),
        // Everything changed and nothing found: nothing to narrow, the contract stands.
        (
            &["index.html", "scripts.js"],
            &[],
            &["index.html", "scripts.js"],
            &[],
        ),
    ];
    for (changed, findings, required, allowed) in rows {
        let narrowed = narrow_repair(repair_after(request), &strings(changed), &strings(findings));
        let mut got = narrowed.expected_targets.clone();
        got.sort();
        assert_eq!(got, strings(required), "required, findings {findings:?}");
        let mut may: Vec<String> = narrowed
            .roleful_targets
            .iter()
            .filter(|t| t.role == talos_core::intent::TargetRole::MayMutate)
            .map(|t| t.path.clone())
            .collect();
        may.sort();
        assert_eq!(may, strings(allowed), "allowed, findings {findings:?}");
    }
}

#[test]
fn other_contracts_are_left_alone() {
    let fresh = talos_core::contract::resolve("In settings.py, change TIMEOUT from 30 to 60.");
    let same = narrow_repair(fresh.clone(), &strings(&["settings.py"]), &[]);
    assert_eq!(same, fresh);
}
