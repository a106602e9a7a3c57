//! Loop discipline: what the tool loop remembers within one turn and refuses because of it.
//! A call repeating one that already failed, or one that was already refused, stops the loop;
//! too many failures stop it; after a failed edit the file must be read again before the next
//! edit; a change the person denied is not asked again; and no later step may widen the
//! surface captured when the turn began. Whether a file was read this turn ([`LoopGuard::was_read`])
//! is asked by the write flow once it has the file's bytes: an edit whose `old_string` matches
//! exactly once runs without a prior read, a full write replacing an unread file does not.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::planning::surface::Surface;
use crate::planning::tools::{ToolArgs, ToolId};

/// Appended to the result of an edit of a file not read this turn (the reference's hint).
pub const UNREAD_EDIT_HINT: &str = "\nHint: You did not read this file before editing. Call talos.read_file first to see the current content, then retry the edit with the exact text.";

/// Failed calls a turn tolerates before the loop stops.
pub const MAX_FAILURES: u32 = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Proceed,
    /// Refused before approval and before IO; the model is told why and the loop goes on.
    Refuse(String),
    /// The loop ends now.
    Stop(String),
    /// A read of this path with these arguments already succeeded this turn and the file did
    /// not change since: it is not read again (issue 24).
    AlreadyRead(String),
}

/// How a call ended, as the guard needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallEnd {
    Succeeded,
    Failed,
    Denied,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoopGuard {
    captured: Vec<ToolId>,
    read: BTreeSet<String>,
    needs_reread: BTreeSet<String>,
    failures: BTreeMap<String, u32>,
    denied: BTreeSet<String>,
    /// Calls refused before approval by this guard; an identical repeat stops the loop.
    refused: BTreeSet<String>,
    /// The failed write and edit calls of each path: a later successful read of the path
    /// forgets them, so the call the read made possible is not a mindless repeat.
    failed_changes: BTreeMap<String, BTreeSet<String>>,
    /// The successful reads of each path (their signatures) since it last changed.
    reads: BTreeMap<String, BTreeSet<String>>,
    total_failures: u32,
}

/// A call's identity for repetition checks: the tool and its normalised arguments.
pub fn signature(tool: ToolId, args: &ToolArgs) -> String {
    format!("{}\u{1f}{args:?}", tool.name())
}

/// A surface wider than the one the turn captured: the tools it would add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Escalation {
    pub wider: Vec<String>,
}

impl fmt::Display for Escalation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "refused an escalated retry beyond the captured current-turn authority: {}",
            self.wider.join(", ")
        )
    }
}

impl std::error::Error for Escalation {}

impl LoopGuard {
    /// Captures the turn's authority: the surface it started with.
    pub fn new(surface: &Surface) -> LoopGuard {
        LoopGuard {
            captured: surface.tools().to_vec(),
            read: BTreeSet::new(),
            needs_reread: BTreeSet::new(),
            failures: BTreeMap::new(),
            denied: BTreeSet::new(),
            refused: BTreeSet::new(),
            failed_changes: BTreeMap::new(),
            reads: BTreeMap::new(),
            total_failures: 0,
        }
    }

    /// Refuses a surface wider than the captured one: a retry never escalates.
    pub fn admit(&self, surface: &Surface) -> Result<(), Escalation> {
        let wider: Vec<&str> = surface
            .tools()
            .iter()
            .filter(|t| !self.captured.contains(t))
            .map(|t| t.name())
            .collect();
        if wider.is_empty() {
            Ok(())
        } else {
            Err(Escalation {
                wider: wider.into_iter().map(String::from).collect(),
            })
        }
    }

    /// The verdict on a call before approval. A refusal counts toward the repeat stop like a
    /// failure: the identical call proposed again stops the loop.
    pub fn before_call(&mut self, tool: ToolId, args: &ToolArgs) -> Verdict {
        let sig = signature(tool, args);
        if self.failures.get(&sig).is_some_and(|n| *n > 0) {
            return Verdict::Stop(format!(
                "[Tool loop stopped: the model repeated a {} call that had already failed.]",
                tool.name()
            ));
        }
        if let (ToolId::ReadFile, Some(path)) = (tool, args.path())
            && self.reads.get(path).is_some_and(|s| s.contains(&sig))
        {
            if !self.refused.insert(sig) {
                return Verdict::Stop(format!(
                    "[Tool loop stopped: the model asked again for {path}, already read.]"
                ));
            }
            return Verdict::AlreadyRead(path.to_string());
        }
        let refusal = self.refusal(tool, args, &sig);
        let Some(message) = refusal else {
            return Verdict::Proceed;
        };
        if !self.refused.insert(sig) {
            return Verdict::Stop(format!(
                "[Tool loop stopped: the model repeated a {} call that had already been refused.]",
                tool.name()
            ));
        }
        Verdict::Refuse(message)
    }

    fn refusal(&self, tool: ToolId, args: &ToolArgs, sig: &str) -> Option<String> {
        if self.denied.contains(sig) {
            return Some(format!(
                "The user already denied this {} call in this turn; it is not asked again. No approval was requested and no file was changed.",
                tool.name()
            ));
        }
        match args {
            ToolArgs::EditFile { path, .. } if self.needs_reread.contains(path) => Some(format!(
                "The previous edit of {path} failed. Call talos.read_file on {path} to see its current content before editing it again. No approval was requested and no file was changed."
            )),
            _ => None,
        }
    }

    /// Whether `path` was read (or written) successfully this turn and not spoiled since by a
    /// failed edit.
    pub fn was_read(&self, path: &str) -> bool {
        self.read.contains(path)
    }

    pub fn after_call(&mut self, tool: ToolId, args: &ToolArgs, end: CallEnd) {
        let sig = signature(tool, args);
        match end {
            CallEnd::Succeeded => {
                if let Some(path) = args.path() {
                    match tool {
                        ToolId::ReadFile | ToolId::WriteFile | ToolId::EditFile => {
                            if tool == ToolId::ReadFile {
                                self.reads
                                    .entry(path.to_string())
                                    .or_default()
                                    .insert(sig.clone());
                            } else {
                                self.reads.remove(path);
                            }
                            self.read.insert(path.to_string());
                            self.needs_reread.remove(path);
                            for sig in self.failed_changes.remove(path).unwrap_or_default() {
                                self.failures.remove(&sig);
                            }
                        }
                        ToolId::ListDir
                        | ToolId::Grep
                        | ToolId::Search
                        | ToolId::MkDir
                        | ToolId::MovePath
                        | ToolId::CopyPath
                        | ToolId::RenamePath
                        | ToolId::DeletePath
                        | ToolId::ApplyWorkspaceBatch
                        | ToolId::RunCommand => {}
                    }
                }
            }
            CallEnd::Failed => {
                if let (ToolId::WriteFile | ToolId::EditFile, Some(path)) = (tool, args.path()) {
                    self.failed_changes
                        .entry(path.to_string())
                        .or_default()
                        .insert(sig.clone());
                }
                *self.failures.entry(sig).or_insert(0) += 1;
                self.total_failures += 1;
                if let ToolArgs::EditFile { path, .. } = args {
                    self.needs_reread.insert(path.clone());
                    self.read.remove(path);
                    self.reads.remove(path);
                }
            }
            CallEnd::Denied => {
                self.denied.insert(sig);
            }
        }
    }

    /// Records a refusal that counts as a failure (a rejected call the model keeps proposing).
    pub fn note_rejection(&mut self, key: &str) -> Option<String> {
        let count = self
            .failures
            .entry(format!("rejected\u{1f}{key}"))
            .or_insert(0);
        *count += 1;
        self.total_failures += 1;
        if *count > 1 {
            return Some(
                "[Tool loop stopped: the model repeated a call that had already been refused.]"
                    .into(),
            );
        }
        self.should_stop()
    }

    pub fn should_stop(&self) -> Option<String> {
        (self.total_failures >= MAX_FAILURES).then(|| {
            format!(
                "[Tool loop stopped: {} tool calls failed in this turn.]",
                self.total_failures
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::plan::TurnPlan;
    use crate::planning::posture::{Posture, apply};
    use crate::request::contract::resolve;
    use crate::request::phase::Phase;

    fn guard() -> LoopGuard {
        let plan = TurnPlan::from_turn(apply(
            Posture::Agent,
            resolve("In settings.py, change TIMEOUT from 30 to 60."),
        ));
        LoopGuard::new(plan.surface())
    }
    fn edit(old: &str) -> ToolArgs {
        ToolArgs::EditFile {
            path: "settings.py".into(),
            old_string: old.into(),
            new_string: "TIMEOUT = 60".into(),
        }
    }
    fn read() -> ToolArgs {
        ToolArgs::ReadFile {
            path: "settings.py".into(),
            max_lines: 500,
            offset: 1,
        }
    }

    /// Proves a write refused for want of a read, proposed again after the read, goes on (the
    /// read is what it lacked), while the same write repeated without a read stops the loop.
    #[test]
    fn a_read_between_a_failed_write_and_its_repeat_lets_it_go_on() {
        let write = ToolArgs::WriteFile {
            path: "settings.py".into(),
            content: "TIMEOUT = 60\n".into(),
        };
        let mut g = guard();
        assert_eq!(g.before_call(ToolId::WriteFile, &write), Verdict::Proceed);
        g.after_call(ToolId::WriteFile, &write, CallEnd::Failed);
        assert!(matches!(
            g.before_call(ToolId::WriteFile, &write),
            Verdict::Stop(_)
        ));
        g.after_call(ToolId::ReadFile, &read(), CallEnd::Succeeded);
        assert_eq!(g.before_call(ToolId::WriteFile, &write), Verdict::Proceed);
    }

    #[test]
    fn an_unread_edit_goes_on_to_the_write_flow_and_a_failed_edit_needs_a_fresh_read() {
        let mut g = guard();
        assert_eq!(
            g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")),
            Verdict::Proceed,
            "the write flow decides on an unread edit once it has the bytes"
        );
        assert!(!g.was_read("settings.py"));
        g.after_call(ToolId::ReadFile, &read(), CallEnd::Succeeded);
        assert!(g.was_read("settings.py"));
        assert_eq!(
            g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")),
            Verdict::Proceed
        );
        g.after_call(ToolId::EditFile, &edit("TIMEOUT = 3O"), CallEnd::Failed);
        assert!(
            matches!(g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")), Verdict::Refuse(m) if m.starts_with("The previous edit of settings.py failed"))
        );
        assert!(
            matches!(
                g.before_call(ToolId::EditFile, &edit("TIMEOUT = 3O")),
                Verdict::Stop(_)
            ),
            "repeating the failed call stops the loop"
        );
        g.after_call(ToolId::ReadFile, &read(), CallEnd::Succeeded);
        assert_eq!(
            g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")),
            Verdict::Proceed
        );
    }

    #[test]
    fn a_denied_change_is_not_asked_again_and_failures_are_capped() {
        let mut g = guard();
        g.after_call(ToolId::ReadFile, &read(), CallEnd::Succeeded);
        g.after_call(ToolId::EditFile, &edit("TIMEOUT = 30"), CallEnd::Denied);
        assert!(
            matches!(g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")), Verdict::Refuse(m) if m.contains("already denied"))
        );
        assert!(
            matches!(g.before_call(ToolId::EditFile, &edit("TIMEOUT = 30")), Verdict::Stop(m) if m.contains("already been refused")),
            "a refused identical call repeated stops the loop like a failed one"
        );
        assert!(
            g.should_stop().is_none(),
            "refusals do not count toward the failure cap"
        );
        for i in 0..MAX_FAILURES {
            g.after_call(
                ToolId::ReadFile,
                &ToolArgs::ReadFile {
                    path: format!("missing{i}"),
                    max_lines: 1,
                    offset: 1,
                },
                CallEnd::Failed,
            );
        }
        assert!(g.should_stop().is_some());
    }

    #[test]
    fn a_wider_surface_is_refused() {
        let narrow = TurnPlan::from_turn(apply(
            Posture::AskReadOnly,
            resolve("In settings.py, change TIMEOUT from 30 to 60."),
        ));
        let wide = TurnPlan::from_turn(apply(
            Posture::Agent,
            resolve("In settings.py, change TIMEOUT from 30 to 60."),
        ));
        let g = LoopGuard::new(narrow.surface());
        assert!(g.admit(narrow.surface()).is_ok());
        assert!(g.admit(&narrow.surface_for(Phase::Verify)).is_ok());
        assert_eq!(
            g.admit(wide.surface()).unwrap_err().to_string(),
            "refused an escalated retry beyond the captured current-turn authority: talos.write_file, talos.edit_file"
        );
    }

    #[test]
    fn repeated_refusals_stop_the_loop() {
        let mut g = guard();
        assert_eq!(g.note_rejection("talos.edit_file outside surface"), None);
        assert!(
            g.note_rejection("talos.edit_file outside surface")
                .is_some()
        );
    }
}
