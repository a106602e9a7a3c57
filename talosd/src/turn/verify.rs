//! Task verification after the turn: for static web work, the workspace's HTML, CSS and
//! JavaScript are read from disk and checked by `webcheck` (links, ids, selectors, wiring,
//! placeholders). The findings go into the trace and the facts; the runtime states them
//! itself, whatever the model's answer said.

use std::collections::BTreeMap;
use std::path::Path;

use talos_core::contract::TaskType;
use talos_core::outcome::MutationResult;
use talos_core::plan::TurnPlan;
use talos_protocol::trace::{TraceVerification, TraceWarning};

use super::context::TurnCtx;
use crate::webcheck::{self, InteractionCheck};

const MAX_FILES: usize = 200;
const MAX_FILE_BYTES: usize = 256 * 1024;
const SKIP_DIRS: &[&str] = &[".git", "node_modules", "target", "build", "dist", ".talos"];

/// Runs the static web verifier when the turn is static web work that changed files or asked
/// for a diagnosis. Returns the lines the runtime adds to the answer.
pub fn static_web(ctx: &mut TurnCtx, plan: &TurnPlan) -> Option<String> {
    let contract = plan.contract();
    let changed = ctx
        .facts
        .mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
    let diagnosis = matches!(
        contract.task_type,
        TaskType::DiagnoseOnly | TaskType::VerifyOnly | TaskType::WorkspaceExplain
    );
    if !(changed || diagnosis) || !contract.web.is_static_web {
        return None;
    }
    let files = web_files(&ctx.session.workspace);
    if files.is_empty() {
        return None;
    }
    let report = webcheck::check(&files, &webcheck::request(&contract.web));
    if report.findings.is_empty() {
        ctx.trace.verification.push(TraceVerification {
            call_id: "task".into(),
            path: ".".into(),
            status: "PASS".into(),
            summary: format!(
                "static web checks found no problem in {} file(s)",
                report.checked.len()
            ),
        });
    }
    for finding in &report.findings {
        ctx.trace.verification.push(TraceVerification {
            call_id: "task".into(),
            path: finding.file.clone(),
            status: "FAIL".into(),
            summary: format!("{}: {}", finding.code, finding.message),
        });
    }
    let mut lines: Vec<String> = report
        .findings
        .iter()
        .map(|f| format!("- {}: {}", f.file, f.message))
        .collect();
    match &report.interaction {
        InteractionCheck::NotRequested => {}
        InteractionCheck::Passed => {
            ctx.trace.verification.push(TraceVerification {
                call_id: "task".into(),
                path: ".".into(),
                status: "PASS".into(),
                summary: "INTERACTION: checked in a headless browser".into(),
            });
        }
        InteractionCheck::NotRun(why) => {
            ctx.facts.task_unverified = true;
            ctx.trace.warnings.push(TraceWarning {
                code: "INTERACTION_CHECK_NOT_RUN".into(),
                message: why.clone(),
            });
            lines.push(format!(
                "- the interaction you described was not checked in a browser: {why} (not a pass)"
            ));
        }
        InteractionCheck::Failed(why) => {
            ctx.trace.verification.push(TraceVerification {
                call_id: "task".into(),
                path: ".".into(),
                status: "FAIL".into(),
                summary: format!("INTERACTION: {why}"),
            });
            lines.push(format!("- interaction: {why}"));
            ctx.facts.task_findings.push(why.clone());
        }
    }
    ctx.facts.task_findings.extend(
        report
            .findings
            .iter()
            .map(|f| format!("{}: {}", f.file, f.message)),
    );
    if lines.is_empty() {
        return None;
    }
    Some(format!(
        "Static web diagnostics (checked by Talos, not the model) found:\n{}",
        lines.join("\n")
    ))
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
