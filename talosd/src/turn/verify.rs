//! Task verification after the turn: for static web work, the workspace's HTML, CSS and
//! JavaScript are read from disk and checked by `webcheck` (links, ids, selectors, wiring,
//! placeholders). The findings go into the trace and the facts; the runtime states them
//! itself, whatever the model's answer said.

use std::collections::BTreeMap;

use talos_core::turn::web::{Interaction, WebFinding, WebReport};

use super::context::TurnCtx;
use crate::webcheck::{self, InteractionCheck};
use crate::workspace::Workspace;

const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: usize = 256 * 1024;
const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "build", "dist", ".talos"];

/// Runs the static web verifier when the core says it is due (static web work that changed
/// files or asked for a diagnosis). Returns the lines the runtime adds to the answer.
pub fn static_web(ctx: &mut TurnCtx) -> Option<String> {
    if !ctx.core.web_check_due() {
        return None;
    }
    let request = webcheck::request(&ctx.core.plan.contract().web);
    let files = web_files(&ctx.session.files);
    if files.is_empty() {
        return None;
    }
    let report = webcheck::check(&files, &request);
    let report = WebReport {
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
    };
    ctx.core.record_web(&report)
}

/// The workspace's .html, .htm, .css and .js files (bounded), read through the workspace
/// handle.
fn web_files(workspace: &Workspace) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut is_web = |location: &str| {
        let name = location
            .rsplit('/')
            .next()
            .unwrap_or(location)
            .to_lowercase();
        [".html", ".htm", ".css", ".js", ".mjs"]
            .iter()
            .any(|e| name.ends_with(e))
    };
    for rel in workspace.files(".", SKIP_DIRS, usize::MAX, &mut is_web) {
        if let Ok(Some(bytes)) = workspace.read_limited(&rel, &rel, MAX_FILE_BYTES as u64) {
            out.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
        }
        if out.len() >= MAX_FILES {
            break;
        }
    }
    out
}
