//! Task verification after the turn: when the core says the static web check is due (the turn
//! changed a web file, or a diagnosis read one), the files it is about and what they link to
//! are read from disk and checked by `webcheck` (links, ids, selectors, wiring, placeholders,
//! unused assets). The findings go into the trace and the facts; the runtime states them
//! itself, whatever the model's answer said. After a failed check the core may decide one
//! bounded repair ([`static_web_repairable`]); the turn loop runs it and checks again.

use talos_core::turn::web::{Interaction, WebFinding, WebRepair, WebReport};

use super::context::TurnCtx;
use crate::webcheck::{self, InteractionCheck};

/// Runs the static web verifier when the core says it is due. Returns the lines the runtime
/// adds to the answer.
pub fn static_web(ctx: &mut TurnCtx) -> Option<String> {
    let report = web_report(ctx)?;
    ctx.core.record_web(&report)
}

/// [`static_web`], and the repair the core decides after a failed check (at most one per turn).
/// When a repair comes back, the lines are the first check's: the caller runs the repair
/// round (surface limited to [`WebRepair::files`], prompt [`WebRepair::prompt`]), then calls
/// [`static_web`] again and uses its lines instead.
pub fn static_web_repairable(ctx: &mut TurnCtx) -> (Option<String>, Option<WebRepair>) {
    let Some(report) = web_report(ctx) else {
        return (None, None);
    };
    let lines = ctx.core.record_web(&report);
    let repair = ctx.core.web_repair_due(&report);
    (lines, repair)
}

/// The verifier's report on the turn's focus, when the check is due and there is a web file.
fn web_report(ctx: &mut TurnCtx) -> Option<WebReport> {
    if !ctx.core.web_check_due() {
        return None;
    }
    let request = webcheck::request(&ctx.core.plan.contract().web);
    let files = webcheck::site_files(&ctx.session.files, &ctx.core.web_focus());
    if files.is_empty() {
        return None;
    }
    let report = webcheck::check(&files, &request);
    Some(WebReport {
        checked: report.checked.len(),
        findings: report
            .findings
            .into_iter()
            .map(|f| WebFinding {
                file: f.file,
                code: f.code.to_string(),
                message: f.message,
            })
            .collect(),
        interaction: match report.interaction {
            InteractionCheck::NotRequested => Interaction::NotRequested,
            InteractionCheck::NotRun(why) => Interaction::NotRun(why),
            InteractionCheck::Passed => Interaction::Passed,
            InteractionCheck::Failed(why) => Interaction::Failed(why),
        },
    })
}
