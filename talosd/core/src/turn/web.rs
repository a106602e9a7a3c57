//! The static web verifier's part of the turn, decided from its records: whether the check is
//! due, what its report records and adds to the answer, and (after a failed check) whether one
//! bounded repair of the already-targeted files runs.

use crate::contract::TaskType;
use crate::outcome::MutationResult;

use super::Turn;
use super::record::{CheckStatus, WarningCode};

/// What the static web verifier reported, as the daemon ran it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebReport {
    /// Files examined.
    pub checked: usize,
    pub findings: Vec<WebFinding>,
    pub interaction: Interaction,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebFinding {
    pub file: String,
    pub code: String,
    pub message: String,
}

/// The state of an interaction the request named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interaction {
    NotRequested,
    /// Named but not run, and why: not a pass.
    NotRun(String),
    Passed,
    Failed(String),
}

impl Turn {
    /// Whether the static web verifier is due: static web work that changed files or asked for
    /// a diagnosis.
    pub fn web_check_due(&self) -> bool {
        if !self.plan.contract().web.is_static_web {
            return false;
        }
        let changed = self
            .record
            .facts
            .mutations
            .iter()
            .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
        let diagnosis = matches!(
            self.plan.contract().task_type,
            TaskType::DiagnoseOnly | TaskType::VerifyOnly | TaskType::WorkspaceExplain
        );
        changed || diagnosis
    }

    /// Records the verifier's report; returns the lines the runtime adds to the answer.
    pub fn record_web(&mut self, report: &WebReport) -> Option<String> {
        let record = &mut self.record;
        if report.findings.is_empty() {
            let summary = format!(
                "static web checks found no problem in {} file(s)",
                report.checked
            );
            record.verified("task", ".", CheckStatus::Pass, &summary);
        }
        for finding in &report.findings {
            let summary = format!("{}: {}", finding.code, finding.message);
            record.verified("task", &finding.file, CheckStatus::Fail, &summary);
        }
        let mut lines: Vec<String> = report
            .findings
            .iter()
            .map(|f| format!("- {}: {}", f.file, f.message))
            .collect();
        match &report.interaction {
            Interaction::NotRequested => {}
            Interaction::Passed => {
                let summary = "INTERACTION: checked in a headless browser";
                record.verified("task", ".", CheckStatus::Pass, summary);
            }
            Interaction::NotRun(why) => {
                record.facts.task_unverified = true;
                record.warn(WarningCode::InteractionCheckNotRun, why.clone());
                lines.push(format!(
                    "- the interaction you described was not checked in a browser: {why} (not a pass)"
                ));
            }
            Interaction::Failed(why) => {
                let summary = format!("INTERACTION: {why}");
                record.verified("task", ".", CheckStatus::Fail, &summary);
                lines.push(format!("- interaction: {why}"));
                record.facts.task_findings.push(why.clone());
            }
        }
        record.facts.task_findings.extend(
            report
                .findings
                .iter()
                .map(|f| format!("{}: {}", f.file, f.message)),
        );
        (!lines.is_empty()).then(|| {
            format!(
                "Static web diagnostics (checked by Talos, not the model) found:\n{}",
                lines.join("\n")
            )
        })
    }
}
