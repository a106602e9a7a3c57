//! Task verification after the turn: for static web work, the workspace's HTML, CSS and
//! JavaScript are read from disk and checked by `webcheck` (links, ids, selectors, wiring,
//! placeholders). The findings go into the trace and the facts; the runtime states them
//! itself, whatever the model's answer said.

use std::collections::BTreeMap;
use std::path::Path;

use talos_core::turn::finish::{Interaction, WebFinding, WebReport};

use super::context::TurnCtx;
use crate::webcheck::{self, InteractionCheck};

const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: usize = 256 * 1024;
const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "build", "dist", ".talos"];

/// Runs the static web verifier when the core says it is due and the request is static web
/// work. Returns the lines the runtime adds to the answer.
pub fn static_web(ctx: &mut TurnCtx) -> Option<String> {
    let contract = ctx.core.plan.contract();
    if !ctx.core.web_check_due()
        || !webcheck::is_static_web(&contract.original_request, &contract.expected_targets)
    {
        return None;
    }
    let request = contract.original_request.clone();
    let files = web_files(&ctx.session.workspace);
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

/// The workspace's .html, .htm, .css and .js files (bounded), read through the boundary.
fn web_files(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if kind.is_dir() && !SKIP_DIRS.contains(&name.as_str()) {
                stack.push(entry.path());
            } else if kind.is_file()
                && [".html", ".htm", ".css", ".js", ".mjs"]
                    .iter()
                    .any(|e| name.to_lowercase().ends_with(e))
            {
                let Ok(rel) = entry
                    .path()
                    .strip_prefix(root)
                    .map(|p| p.to_string_lossy().into_owned())
                else {
                    continue;
                };
                if let Ok(Some(bytes)) = crate::boundary::read_bytes(&entry.path(), &rel)
                    && bytes.len() <= MAX_FILE_BYTES
                {
                    out.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
                }
                if out.len() >= MAX_FILES {
                    return out;
                }
            }
        }
    }
    out
}
