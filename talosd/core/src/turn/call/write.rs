//! The governed file change (write_file, edit_file): read-before-edit is decided once the
//! file's bytes are known (an edit whose `old_string` matches exactly once runs without a prior
//! read, with a hint to read first next time; an unread edit that does not match, and a full
//! write replacing an existing file not read this turn, are refused with a read-first answer),
//! the proposed content is sanitised, an exact literal the person asked for replaces what the
//! model proposed, the format rung of the ladder turns an allow into an ask, the person
//! approves a capped diff, a checkpoint is taken (no checkpoint, no write), the daemon writes
//! only if the bytes are still the approved pre-image, and the read-back is verified against
//! the approval.

mod scope;

use super::{Accepted, ApprovalAsk, Call, Effect, Input, State, unexpected};
use crate::planning::plan::Expectation;
use crate::planning::tools::{ToolArgs, ToolId};
use crate::proposal::discipline::{CallEnd, UNREAD_EDIT_HINT};
use crate::proposal::ladder::{Action, PermissionDecision};
use crate::request::outcome::{MutationRecord, MutationResult};
use crate::text::diff::{self, Preview};
use crate::text::digest::{count_lines, sha256};
use crate::text::edit::{self, WriteCheck};
use crate::turn::record::{
    ApprovalRecord, CheckStatus, CheckpointRecord, Decision, ExecutionRecord, WarningCode,
};
use crate::turn::{Notice, Turn};

/// Why the daemon could not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteFailure {
    /// The file's bytes are no longer the approved pre-image.
    Stale,
    /// The path or file could not be checked again at the moment of IO (the reason).
    Recheck(String),
    /// The write itself failed (the reason).
    Write(String),
    /// Written, but reading it back failed (the reason).
    ReadBack(String),
}

#[derive(Debug, Clone)]
pub(crate) struct WriteFlow {
    accepted: Accepted,
    shown: String,
    step: Step,
    /// The target exists and was not read this turn (an edit that matched exactly once).
    unread: bool,
}

#[derive(Debug, Clone)]
enum Step {
    Current,
    Asked(Change),
    Remembered(Change),
    Checkpointing(Change),
    Writing(Change),
}

/// The change as approved.
#[derive(Debug, Clone)]
struct Change {
    before: Option<Vec<u8>>,
    after: String,
    check: WriteCheck,
    preview: Preview,
}

impl WriteFlow {
    pub(crate) fn start(call: &Call, turn: &mut Turn, accepted: Accepted) -> (State, Effect) {
        let shown = accepted.shown();
        if accepted.first.as_ref().is_some_and(|r| r.final_is_symlink) {
            let text = format!(
                "Path not allowed before approval: `{shown}` is a symlink. No approval was requested and no file was changed."
            );
            return blocked(call, turn, &accepted, &shown, text);
        }
        let effect = Effect::ReadCurrent {
            path: shown.clone(),
        };
        let flow = WriteFlow {
            accepted,
            shown,
            step: Step::Current,
            unread: false,
        };
        (State::Write(flow), effect)
    }

    pub(crate) fn step(self, call: &Call, turn: &mut Turn, input: Input) -> (State, Effect) {
        match (self.step.clone(), input) {
            (Step::Current, Input::Current(current)) => self.current(call, turn, current),
            (Step::Asked(change), Input::Answered { request_id, answer }) => {
                turn.record.approvals.push(ApprovalRecord {
                    request_id,
                    call_id: call.id.clone(),
                    tool: self.accepted.tool,
                    answer,
                    diff_added: change.preview.added,
                    diff_removed: change.preview.removed,
                    diff_truncated: change.preview.truncated,
                });
                match answer.decision {
                    Decision::Deny => self.denied(call, turn, answer.source.describe()),
                    Decision::ApproveForSession if self.accepted.decision.remember_eligible => {
                        turn.grants.remember_writes = true;
                        self.next(Step::Remembered(change), Effect::RememberWrites)
                    }
                    Decision::ApproveForSession | Decision::Approve => self.checkpoint(change),
                }
            }
            (Step::Remembered(change), Input::Done) => self.checkpoint(change),
            (Step::Checkpointing(change), Input::Checkpointed(taken)) => {
                self.checkpointed(call, turn, change, taken)
            }
            (Step::Checkpointing(_), Input::Cancelled) => {
                let text = "the turn was cancelled before the write".to_string();
                failed(call, turn, &self.accepted, &self.shown, text)
            }
            (Step::Writing(change), Input::Written(written)) => {
                self.written(call, turn, change, written)
            }
            (_, other) => unexpected(&other),
        }
    }

    fn next(self, step: Step, effect: Effect) -> (State, Effect) {
        (State::Write(WriteFlow { step, ..self }), effect)
    }

    fn current(
        self,
        call: &Call,
        turn: &mut Turn,
        current: Result<Option<Vec<u8>>, String>,
    ) -> (State, Effect) {
        let shown = self.shown.clone();
        let before = match current {
            Ok(before) => before,
            Err(e) => {
                let text = format!("{e}. No approval was requested and no file was changed.");
                return blocked(call, turn, &self.accepted, &shown, text);
            }
        };
        let Ok(before_text) = before.as_deref().map(std::str::from_utf8).transpose() else {
            let text = format!(
                "{shown} is not UTF-8 text; Talos does not edit binary files. No approval was requested and no file was changed."
            );
            return blocked(call, turn, &self.accepted, &shown, text);
        };
        let unread = before.is_some()
            && !self
                .accepted
                .args
                .path()
                .is_some_and(|path| turn.guard.was_read(path));
        let args = &self.accepted.args;
        if let Some(text) =
            scope::whole_write_refused(turn, args, &shown, before_text).or_else(|| {
                unread
                    .then(|| read_first(turn, args, &shown, before_text))
                    .flatten()
            })
        {
            return blocked(call, turn, &self.accepted, &shown, text);
        }
        let (after, check) = match proposed(call, turn, &self.accepted.args, &shown, before_text) {
            Ok(change) => change,
            Err(text) => return blocked(call, turn, &self.accepted, &shown, text),
        };
        if before_text == Some(after.as_str()) {
            // A degenerate proposal (issue 15): nothing would change, so nothing is asked.
            let text = format!(
                "The proposed content of {shown} is identical to its current content - no change would be made. No approval was requested and no file was changed."
            );
            return blocked(call, turn, &self.accepted, &shown, text);
        }
        let mut flow = self;
        flow.unread = unread;
        let flow = flow;
        let (after, check) = exact_literal(call, turn, &shown, after, check);
        let preview = diff::preview(before_text, &after);
        let removal = scope::removal_note(turn, &shown, before_text, preview.removed);
        let decision = format_rung(call, turn, &flow.accepted, &shown, before_text, &after);
        let change = Change {
            before,
            after,
            check,
            preview,
        };
        if decision.action == Action::Ask {
            let ask = approval(flow.accepted.tool, &shown, &decision, &change, removal);
            let mut flow = flow;
            flow.accepted.decision = decision;
            return flow.next(Step::Asked(change), Effect::Ask(ask));
        }
        turn.notify(Notice::Info(format!(
            "{} {shown}: allowed without a prompt ({})",
            flow.accepted.tool.name(),
            decision.reason_code
        )));
        flow.checkpoint(change)
    }

    fn checkpoint(self, change: Change) -> (State, Effect) {
        let effect = Effect::Checkpoint {
            tool: self.accepted.tool,
            paths: vec![self.shown.clone()],
            before: Some(change.before.clone()),
        };
        self.next(Step::Checkpointing(change), effect)
    }

    fn denied(self, call: &Call, turn: &mut Turn, source: &str) -> (State, Effect) {
        let shown = &self.shown;
        turn.record.facts.mutations.push(MutationRecord {
            target: shown.clone(),
            result: MutationResult::Denied,
        });
        turn.record
            .file(shown, false, format!("approval denied ({source})"));
        let text = format!(
            "User did not approve the {} call. Target path: `{shown}`. The user is in control of the workspace; ask what they want to do differently before retrying, or take a different action that does not need approval.",
            self.accepted.tool.name()
        );
        call.conclude_change(turn, &self.accepted, text, CallEnd::Denied, true)
    }

    fn checkpointed(
        self,
        call: &Call,
        turn: &mut Turn,
        change: Change,
        taken: Result<crate::turn::record::CheckpointTaken, String>,
    ) -> (State, Effect) {
        let error = taken.as_ref().err().cloned();
        let existed_before = match &taken {
            Ok(t) => t.existed_before,
            Err(_) => change.before.is_some(),
        };
        turn.record.checkpoints.push(CheckpointRecord {
            call_id: call.id.clone(),
            existed_before,
            result: taken,
            path: self.shown.clone(),
        });
        if let Some(e) = error {
            let text = format!("Required checkpoint failed before mutation: {e}");
            return failed(call, turn, &self.accepted, &self.shown, text);
        }
        let effect = Effect::Write {
            path: self.shown.clone(),
            expected: change.before.clone(),
            bytes: change.after.clone().into_bytes(),
        };
        self.next(Step::Writing(change), effect)
    }

    fn written(
        self,
        call: &Call,
        turn: &mut Turn,
        change: Change,
        written: Result<Vec<u8>, WriteFailure>,
    ) -> (State, Effect) {
        let shown = self.shown.clone();
        let on_disk = match written {
            Ok(bytes) => bytes,
            Err(failure) => {
                let text = failure_text(&shown, failure);
                return failed(call, turn, &self.accepted, &shown, text);
            }
        };
        let verification = edit::verify_write(&change.check, &on_disk);
        let status = if verification.passed {
            CheckStatus::Pass
        } else {
            CheckStatus::IntegrityFail
        };
        turn.record
            .verified(&call.id, &shown, status, &verification.summary);
        turn.record.executions.push(ExecutionRecord {
            call_id: call.id.clone(),
            tool: self.accepted.tool,
            success: verification.passed,
            path: Some(shown.clone()),
            output: crate::text::digest::digest_text(&verification.summary),
            sha256_after: Some(sha256(&on_disk)),
            error: None,
        });
        if !verification.passed {
            return self.integrity_failed(call, turn, &shown, &verification.summary);
        }
        let problem = request_problem(call, turn, &shown, change.before.as_deref(), &on_disk);
        remember_written(turn, &shown, &on_disk);
        turn.record.facts.mutations.push(MutationRecord {
            target: shown.clone(),
            result: MutationResult::Succeeded {
                verified: problem.is_none(),
            },
        });
        if let Some(problem) = problem {
            return self.not_as_asked(call, turn, &shown, problem);
        }
        let verb = match (self.accepted.tool, change.before.is_some()) {
            (ToolId::EditFile, _) => "Edited",
            (_, true) => "Updated",
            (_, false) => "Created",
        };
        let (added, removed) = (change.preview.added, change.preview.removed);
        let detail = format!(
            "{verb} ({} bytes, +{added} -{removed}), verified",
            on_disk.len()
        );
        turn.record.file(&shown, true, detail);
        turn.notify(Notice::Ok(format!(
            "{verb} {shown}: {}",
            verification.summary
        )));
        let mut text = format!(
            "{verb} {shown} ({} lines, {} bytes). Verified: {}. [verification: PASS]",
            count_lines(&change.after),
            on_disk.len(),
            verification.summary
        );
        if self.unread {
            text.push_str(UNREAD_EDIT_HINT);
        }
        call.conclude_change(turn, &self.accepted, text, CallEnd::Succeeded, false)
    }

    /// Written, but the read-back is not what was approved.
    fn integrity_failed(
        self,
        call: &Call,
        turn: &mut Turn,
        shown: &str,
        summary: &str,
    ) -> (State, Effect) {
        turn.record.facts.mutations.push(MutationRecord {
            target: shown.to_string(),
            result: MutationResult::Failed {
                reason: summary.to_string(),
            },
        });
        turn.record
            .file(shown, true, format!("written but not verified: {summary}"));
        let text = format!("File verification failed: {summary}. [verification: INTEGRITY_FAIL]");
        call.conclude_change(turn, &self.accepted, text, CallEnd::Failed, true)
    }

    /// Written and read back as approved, but not what the request asked the file to hold
    /// (`crate::proposal::change_rule::check`): changed, not verified, and the model is told why.
    fn not_as_asked(
        self,
        call: &Call,
        turn: &mut Turn,
        shown: &str,
        problem: String,
    ) -> (State, Effect) {
        turn.record
            .verified(&call.id, shown, CheckStatus::Fail, &problem);
        let detail = format!("written and read back as approved, but {problem}");
        turn.record.file(shown, true, detail);
        turn.notify(Notice::Info(format!(
            "Changed {shown}, but {problem}: the change is not verified."
        )));
        let text = format!(
            "Changed {shown} and read it back as approved, but {problem}, which the request asked for. [verification: FAIL]"
        );
        call.conclude_change(turn, &self.accepted, text, CallEnd::Succeeded, false)
    }
}

/// What the written file lacks of the request's rule for it; a rule that held is recorded in
/// the verification, so "verified" names what was checked, not only the read-back.
fn request_problem(
    call: &Call,
    turn: &mut Turn,
    shown: &str,
    before: Option<&[u8]>,
    on_disk: &[u8],
) -> Option<String> {
    match rule_check(turn, shown, before, on_disk)? {
        Ok(held) => {
            let summary = format!("request check: {held}");
            turn.record
                .verified(&call.id, shown, CheckStatus::Pass, &summary);
            None
        }
        Err(problem) => Some(problem),
    }
}

/// The request's rule for the written file, checked against the file as it was before this
/// turn first changed it (a repair's second edit is judged with the first): `None` when the
/// request gave no rule for it, else what held or what the file lacks.
fn rule_check(
    turn: &mut Turn,
    shown: &str,
    before: Option<&[u8]>,
    on_disk: &[u8],
) -> Option<Result<String, String>> {
    let rules = crate::proposal::change_rule::rules(&turn.plan);
    let rule = crate::proposal::change_rule::rule_for(&rules, shown)?;
    let original = turn
        .originals
        .entry(shown.to_string())
        .or_insert_with(|| before.map(|b| String::from_utf8_lossy(b).into_owned()));
    let after = String::from_utf8_lossy(on_disk);
    Some(
        match crate::proposal::change_rule::check(rule, original.as_deref(), &after) {
            None => Ok(rule.held()),
            Some(problem) => Err(problem),
        },
    )
}

/// What the model is told when a write failed.
fn failure_text(shown: &str, failure: WriteFailure) -> String {
    match failure {
        WriteFailure::Stale => format!(
            "{shown} changed since the change was approved; nothing written. Read it again and propose the change anew."
        ),
        WriteFailure::Recheck(e) => format!("{e}. The file was not written."),
        WriteFailure::Write(e) => e,
        WriteFailure::ReadBack(e) => format!("written, but the read-back failed: {e}"),
    }
}

/// The read-first answer for a change of an existing file not read this turn: a full write
/// (unless the person gave its exact content), or an edit whose `old_string` does not match
/// exactly once. `None`: the change goes on (an edit that matches once proves the model knows
/// the text).
fn read_first(turn: &Turn, args: &ToolArgs, shown: &str, before: Option<&str>) -> Option<String> {
    let ending = "No approval was requested and no file was changed.";
    match args {
        ToolArgs::WriteFile { .. } => {
            let literal = turn.plan.expectations().iter().any(|e| match e {
                Expectation::ExactContent { target, .. } => target == shown,
                Expectation::MustChange { .. } | Expectation::Change { .. } => false,
            });
            (!literal).then(|| format!(
                "{shown} already exists and was not read in this turn. Read {shown} with talos.read_file before replacing it with talos.write_file, or change part of it with talos.edit_file. {ending}"
            ))
        }
        ToolArgs::EditFile {
            old_string,
            new_string,
            ..
        } => {
            let matches = before.map_or(0, |text| text.matches(old_string.as_str()).count());
            let checkable = !old_string.is_empty() && old_string != new_string;
            (checkable && matches != 1).then(|| {
                let problem = if matches == 0 {
                    format!("old_string was not found in {shown}")
                } else {
                    format!("old_string found {matches} times in {shown}")
                };
                format!(
                    "{problem}, and {shown} was not read in this turn. Read {shown} with talos.read_file before editing it, then retry the edit with the exact text you saw. {ending}"
                )
            })
        }
        ToolArgs::ReadFile { .. }
        | ToolArgs::ListDir { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::Search { .. }
        | ToolArgs::MkDir { .. }
        | ToolArgs::MovePath { .. }
        | ToolArgs::CopyPath { .. }
        | ToolArgs::RenamePath { .. }
        | ToolArgs::DeletePath { .. }
        | ToolArgs::ApplyWorkspaceBatch { .. }
        | ToolArgs::RunCommand { .. } => None,
    }
}

/// The content the call proposes, sanitised, and what the read-back must show.
fn proposed(
    call: &Call,
    turn: &mut Turn,
    args: &ToolArgs,
    shown: &str,
    before: Option<&str>,
) -> Result<(String, WriteCheck), String> {
    match args {
        ToolArgs::WriteFile { content, .. } => {
            let content = sanitized(call, turn, shown, "content", content);
            Ok((content.clone(), WriteCheck::Exact(content)))
        }
        ToolArgs::EditFile {
            old_string,
            new_string,
            ..
        } => {
            let current = before.ok_or_else(|| format!(
                "File not found: {shown}. talos.edit_file changes existing files; use talos.write_file to create one. No approval was requested and no file was changed."
            ))?;
            let new_string = sanitized(call, turn, shown, "new_string", new_string);
            let after =
                edit::apply_edit(current, old_string, &new_string).map_err(|e| e.message(shown))?;
            Ok((
                after.clone(),
                WriteCheck::Contains {
                    replacement: new_string,
                    approved: after,
                },
            ))
        }
        ToolArgs::ReadFile { .. }
        | ToolArgs::ListDir { .. }
        | ToolArgs::Grep { .. }
        | ToolArgs::Search { .. }
        | ToolArgs::MkDir { .. }
        | ToolArgs::MovePath { .. }
        | ToolArgs::CopyPath { .. }
        | ToolArgs::RenamePath { .. }
        | ToolArgs::DeletePath { .. }
        | ToolArgs::ApplyWorkspaceBatch { .. }
        | ToolArgs::RunCommand { .. } => Err("not a file write".into()),
    }
}

/// The proposed text without trailing commentary or stray fences: what the approval shows is
/// exactly what is written. A change is recorded (as digests, never the text).
fn sanitized(call: &Call, turn: &mut Turn, path: &str, field: &str, text: &str) -> String {
    let result = crate::text::sanitize::strip_commentary(path, text);
    if result.changed {
        turn.record.warn(
            WarningCode::ToolContentSanitized,
            format!(
                "{}: {field} of {path}: removed {} ({} -> {} bytes)",
                call.id,
                result.removed.join(", "),
                text.len(),
                result.content.len()
            ),
        );
    }
    result.content
}

/// The person asked for exact content: the written bytes are that literal, whatever the model
/// proposed. The correction is recorded by hashes, never by the text.
fn exact_literal(
    call: &Call,
    turn: &mut Turn,
    shown: &str,
    after: String,
    check: WriteCheck,
) -> (String, WriteCheck) {
    let literal = turn.plan.expectations().iter().find_map(|e| match e {
        Expectation::ExactContent { target, content } if target == shown => Some(content.clone()),
        Expectation::ExactContent { .. }
        | Expectation::MustChange { .. }
        | Expectation::Change { .. } => None,
    });
    match literal {
        Some(literal) if differs(turn, &after, &literal) => {
            turn.record.warn(
                WarningCode::ExactLiteralWriteCorrected,
                format!(
                    "{}: {shown}: proposed {} corrected to the requested literal {}",
                    call.id,
                    sha256(after.as_bytes()),
                    sha256(literal.as_bytes())
                ),
            );
            turn.notify(Notice::Info(format!(
                "{shown}: the proposed content was corrected to the exact content you asked for"
            )));
            (literal.clone(), WriteCheck::Exact(literal))
        }
        Some(_) | None => (after, check),
    }
}

/// The next edit of a written file is offered against what it holds now (a rename's second
/// line), not against the text first read.
fn remember_written(turn: &mut Turn, shown: &str, on_disk: &[u8]) {
    if let Some(entry) = turn
        .machine
        .read_texts
        .iter_mut()
        .find(|(path, _)| path == shown)
    {
        entry.1 = String::from_utf8_lossy(on_disk).into_owned();
    }
}

/// Whether the proposed content is not the literal: byte for byte for "with exactly …"; for
/// content given in words ("containing 2.0.0") a final line break the words cannot spell is
/// the file's own, not a different text.
fn differs(turn: &Turn, after: &str, literal: &str) -> bool {
    let exact = crate::request::change::exact_literal(&turn.plan.contract().original_request);
    if exact.is_some() {
        after != literal
    } else {
        after.trim_end_matches('\n') != literal.trim_end_matches('\n')
    }
}

/// The format rung of the ladder ([`crate::proposal::ladder::format_rung`]), recorded when it asks.
fn format_rung(
    call: &Call,
    turn: &mut Turn,
    accepted: &Accepted,
    shown: &str,
    before: Option<&str>,
    after: &str,
) -> PermissionDecision {
    match crate::proposal::ladder::format_rung(&accepted.decision, before, after) {
        Some(asked) => {
            turn.permission(&call.id, accepted.tool, &asked, Some(shown.to_string()));
            asked
        }
        None => accepted.decision.clone(),
    }
}

/// The approval of a write: what removes most of the file first (`removal`), then the
/// permission, the target, the checkpoint and the diff.
fn approval(
    tool: ToolId,
    shown: &str,
    decision: &PermissionDecision,
    change: &Change,
    removal: Option<String>,
) -> ApprovalAsk {
    let lines = count_lines(&change.after);
    let mut details = vec![format!(
        "target: {shown} ({} bytes, {lines} lines)",
        change.after.len()
    )];
    if !decision.message.is_empty() {
        details.insert(0, format!("permission: {}", decision.message));
    }
    if let Some(removal) = removal {
        details.insert(0, removal);
    }
    details.push("checkpoint: the current file is saved before the write".into());
    ApprovalAsk {
        tool: tool.name().into(),
        description: format!("write operation: {}", tool.name()),
        target: Some(shown.to_string()),
        details,
        diff: Some(change.preview.clone()),
        change: super::ProposedChange::of(shown, change.before.as_deref(), &change.after),
        remember_eligible: decision.remember_eligible,
    }
}

/// Refused before approval: nothing was asked and nothing written.
pub(super) fn blocked(
    call: &Call,
    turn: &mut Turn,
    accepted: &Accepted,
    shown: &str,
    text: String,
) -> (State, Effect) {
    let reason = super::first_sentence(&text);
    let result = MutationResult::Blocked {
        reason: reason.clone(),
    };
    unchanged(call, turn, accepted, (shown, result, reason), text, false)
}

/// Attempted and failed after approval: the loop stops.
fn failed(
    call: &Call,
    turn: &mut Turn,
    accepted: &Accepted,
    shown: &str,
    text: String,
) -> (State, Effect) {
    let reason = super::first_sentence(&text);
    let result = MutationResult::Failed {
        reason: reason.clone(),
    };
    unchanged(call, turn, accepted, (shown, result, reason), text, true)
}

/// Records a change that did not happen (target, result, detail) and ends the call.
fn unchanged(
    call: &Call,
    turn: &mut Turn,
    accepted: &Accepted,
    (shown, result, detail): (&str, MutationResult, String),
    text: String,
    stop: bool,
) -> (State, Effect) {
    turn.record.facts.mutations.push(MutationRecord {
        target: shown.into(),
        result,
    });
    turn.record.file(shown, false, detail);
    call.conclude_change(turn, accepted, text, CallEnd::Failed, stop)
}
