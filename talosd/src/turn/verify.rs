//! Task verification after the turn: when the core says the static web check is due (the turn
//! changed a web file, or a diagnosis read one), the files it is about and what they link to
//! are read from disk and checked by `webcheck` (links, ids, selectors, wiring, placeholders,
//! unused assets). The core records the report, states the findings itself, whatever the
//! model's answer said, and decides whether its one bounded repair round runs.

use talos_core::turn::web::WebReport;

use super::context::TurnCtx;
use crate::webcheck;

/// The verifier's report on the files the core named, or `None` when there is no web file.
pub fn web_report(ctx: &TurnCtx, focus: &[String]) -> Option<WebReport> {
    let request = webcheck::request(&ctx.core.plan.contract().web);
    let files = webcheck::site_files(&ctx.files, focus);
    if files.is_empty() {
        return None;
    }
    Some(webcheck::check(&files, &request))
}
