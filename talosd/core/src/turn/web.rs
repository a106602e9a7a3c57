//! The static web verifier's part of the turn, decided from its records: whether the check is
//! due, what its report records and adds to the answer, and (after a failed check) whether one
//! bounded repair of the already-targeted files runs.

use crate::request::contract::TaskType;
use crate::request::outcome::MutationResult;

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

/// One bounded repair after a failed web check: what the model is told, and the only files
/// it may edit (those the turn already changed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebRepair {
    /// The re-prompt: what failed and which files may be edited.
    pub prompt: String,
    /// The files the repair may edit, in the order the turn changed them.
    pub files: Vec<String>,
}

/// Whether a workspace path is a web file by its extension (case-insensitive).
pub fn is_web_file(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    [".html", ".htm", ".css", ".js", ".mjs"]
        .iter()
        .any(|e| lower.ends_with(e))
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
    /// Whether the static web verifier is due: the turn changed a web file (`.html`, `.htm`,
    /// `.css`, `.js`, `.mjs`) whatever words the request used, a diagnosis (diagnose, verify,
    /// explain) read one, or a diagnosis of static web work read none (then the whole site is
    /// its subject).
    pub fn web_check_due(&self) -> bool {
        !self.web_focus().is_empty() || (self.diagnosis() && self.plan.contract().web.is_static_web)
    }

    /// The web files the check is about, in record order and without repeats: those the turn
    /// changed, and on a diagnosis those it read. Empty on a due check means the whole site.
    /// The daemon checks these and what they link to (pages that load a changed stylesheet or
    /// script, the assets a changed page links), not the whole tree.
    pub fn web_focus(&self) -> Vec<String> {
        let changed = self
            .record
            .facts
            .mutations
            .iter()
            .filter(|m| matches!(m.result, MutationResult::Succeeded { .. }))
            .map(|m| m.target.as_str());
        let read = self
            .record
            .read_paths
            .iter()
            .map(String::as_str)
            .filter(|_| self.diagnosis());
        let mut focus: Vec<String> = Vec::new();
        for path in changed.chain(read) {
            if is_web_file(path) && !focus.iter().any(|f| f == path) {
                focus.push(path.to_string());
            }
        }
        focus
    }

    /// After a failed check: one bounded repair of the files the turn already changed, when
    /// every expected target changed and the findings are in those files (or the named
    /// interaction failed). At most once per turn: deciding it records `WEB_REPAIR_RUN`, and
    /// the first check's findings give way to the check that runs after the repair (its
    /// verification records stay in the trace). The daemon runs one more model round with the
    /// surface limited to [`WebRepair::files`] and [`WebRepair::prompt`], then checks again.
    pub fn web_repair_due(&mut self, report: &WebReport) -> Option<WebRepair> {
        let facts = &self.record.facts;
        let repaired = self
            .record
            .warnings
            .iter()
            .any(|w| w.code == WarningCode::WebRepairRun);
        if repaired
            || !facts.mutation_allowed
            || facts.cancelled
            || facts.model_failed
            || !facts.unmet_targets.is_empty()
        {
            return None;
        }
        let mut files: Vec<String> = Vec::new();
        for m in &facts.mutations {
            if matches!(m.result, MutationResult::Succeeded { .. }) && !files.contains(&m.target) {
                files.push(m.target.clone());
            }
        }
        let mut problems: Vec<String> = report
            .findings
            .iter()
            .filter(|f| files.contains(&f.file))
            .map(|f| format!("- {}: {}", f.file, f.message))
            .collect();
        if let Interaction::Failed(why) = &report.interaction {
            problems.push(format!("- interaction: {why}"));
        }
        if files.is_empty() || problems.is_empty() {
            return None;
        }
        let prompt = format!(
            "Talos checked the files you changed and found problems:\n{}\n\
             Fix these problems now. You may edit only these files: {}. \
             Do not create or change any other file. When they are fixed, stop and say what you changed.",
            problems.join("\n"),
            files.join(", ")
        );
        self.record.warn(
            WarningCode::WebRepairRun,
            format!(
                "the static web checks found {} problem(s) in the changed files; one repair of {} runs",
                problems.len(),
                files.join(", ")
            ),
        );
        self.record.facts.task_findings.clear();
        self.record.facts.task_unverified = false;
        Some(WebRepair { prompt, files })
    }

    /// Starts the repair round [`Turn::web_repair_due`] decided: the turn goes back to APPLY,
    /// and until it ends a change may only touch [`WebRepair::files`].
    pub fn begin_repair(&mut self, repair: &WebRepair) {
        self.record.phase_transitions.push((
            self.phase,
            crate::planning::plan::Phase::Apply,
            "web repair: the checks failed after the last change".into(),
        ));
        self.phase = crate::planning::plan::Phase::Apply;
        self.repair_files = Some(repair.files.clone());
        self.repair_from = self.record.facts.mutations.len();
    }

    /// During a repair round, why a change of `paths` is refused: a path outside the files the
    /// repair may edit. `None` outside a repair, or when every path is one of them.
    pub(crate) fn outside_repair<P: AsRef<str>>(&self, paths: &[P]) -> Option<String> {
        let files = self.repair_files.as_ref()?;
        let key = |p: &str| p.trim_start_matches("./").replace('\\', "/");
        let outside = paths
            .iter()
            .map(|p| p.as_ref())
            .find(|p| !files.iter().any(|f| key(f) == key(p)))?;
        Some(format!(
            "Target outside the repair before approval: `{outside}` is not one of the files this repair may edit ({}). No approval was requested and no file was changed.",
            files.join(", ")
        ))
    }

    /// During a repair round, whether it changed a file yet (the work is not done before).
    pub(crate) fn repair_changed(&self) -> bool {
        self.repair_files.is_none()
            || self.record.facts.mutations[self.repair_from..]
                .iter()
                .any(|m| matches!(m.result, MutationResult::Succeeded { .. }))
    }

    fn diagnosis(&self) -> bool {
        matches!(
            self.plan.contract().task_type,
            TaskType::DiagnoseOnly | TaskType::VerifyOnly | TaskType::WorkspaceExplain
        )
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
