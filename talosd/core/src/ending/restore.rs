//! Restoring checkpoints, decided: which checkpoints `turn/undo` restores, what a restore does
//! to each path (write the captured bytes back, delete a path that did not exist before, make a
//! directory again, leave it alone), which paths are conflicts (changed by someone else since
//! the change the checkpoint guarded), the order the daemon performs the steps in, and the
//! lines and diff the person approves. Values in, values out: the daemon reads the manifests and the
//! current state of each path and passes them in, then performs the steps.

use crate::text::diff;

/// A path's state as a checkpoint recorded it (before the change, or after it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Captured {
    /// A regular file with these bytes (their SHA-256, lowercase hex) and size.
    File { sha256: String, size: u64 },
    /// A directory (compared by kind only: its contents are rows of their own).
    Directory,
    /// Nothing there.
    Absent,
}

/// A path's state now, as the daemon found it (through the workspace handle).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Current {
    File {
        sha256: String,
    },
    Directory,
    Absent,
    /// A symlink in the final position: a restore never follows or replaces one.
    Symlink,
    /// The path cannot be reached inside the workspace now (it leaves the root, passes
    /// through a symlink, or cannot be read); the daemon's reason.
    Refused(String),
}

/// One path of a checkpoint: its state before the change and, when recorded, after it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub path: String,
    pub before: Captured,
    /// What the change left; `None` when it was not recorded (the change failed before it
    /// wrote, or the checkpoint predates the record), which makes a difference a conflict.
    pub after: Option<Captured>,
}

/// What a restore does to one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Write the captured bytes back.
    Restore { sha256: String, size: u64 },
    /// Remove it: it did not exist before the change.
    Delete,
    /// Remove the directory there now and everything in it: it did not exist before the
    /// change (what it holds now is kept in the safety checkpoint).
    DeleteTree,
    /// Make the directory again.
    Directory,
    /// Nothing to do: it already holds the captured state.
    Unchanged,
    /// Left as it is: someone else changed it since, and the person did not ask to overwrite.
    SkipConflict,
    /// Left as it is: the path cannot be reached safely now.
    Refuse(String),
}

/// One path's step: the action, and whether the path is a conflict (changed by someone else
/// since the checkpoint's change). A conflict is overwritten only when the person asked for
/// it (`overwrite_conflicts`) and approved with the conflict shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub path: String,
    pub action: Action,
    pub conflict: bool,
}

/// What the daemon knows about one stored checkpoint, for choosing what `turn/undo` restores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    pub checkpoint_id: String,
    pub session_id: Option<String>,
    pub turn_id: String,
    pub created_at_ms: u64,
    /// Taken by a restore (a safety checkpoint), not by a turn's change.
    pub by_restore: bool,
    /// The turn a safety checkpoint's restore undid.
    pub undoes: Option<String>,
    /// Whether the change it guarded was recorded as done.
    pub changed: bool,
}

/// Merges several checkpoints of one unit (oldest first) into one row per path: the state
/// before the first change to it and the state after the last recorded change to it, in the
/// order paths were first seen.
pub fn merge(checkpoints: &[Vec<Row>]) -> Vec<Row> {
    let mut merged: Vec<Row> = Vec::new();
    for row in checkpoints.iter().flatten() {
        match merged.iter_mut().find(|m| m.path == row.path) {
            Some(existing) => {
                if row.after.is_some() {
                    existing.after = row.after.clone();
                }
            }
            None => merged.push(row.clone()),
        }
    }
    merged
}

/// The checkpoints `turn/undo` restores for `session`: every checkpoint of the session's last
/// turn that changed something and has not been undone already, oldest first. Safety
/// checkpoints are never chosen (restore one by id to undo an undo).
pub fn undo_unit(summaries: &[Summary], session: &str) -> Vec<String> {
    let undone: Vec<&str> = summaries
        .iter()
        .filter(|s| s.by_restore)
        .filter_map(|s| s.undoes.as_deref())
        .collect();
    let candidates: Vec<&Summary> = summaries
        .iter()
        .filter(|s| {
            !s.by_restore
                && s.changed
                && s.session_id.as_deref() == Some(session)
                && !undone.contains(&s.turn_id.as_str())
        })
        .collect();
    let Some(last) = candidates.iter().max_by(|a, b| {
        a.created_at_ms
            .cmp(&b.created_at_ms)
            .then(a.checkpoint_id.cmp(&b.checkpoint_id))
    }) else {
        return Vec::new();
    };
    let mut unit: Vec<&Summary> = candidates
        .iter()
        .copied()
        .filter(|s| s.turn_id == last.turn_id)
        .collect();
    unit.sort_by(|a, b| {
        a.created_at_ms
            .cmp(&b.created_at_ms)
            .then(a.checkpoint_id.cmp(&b.checkpoint_id))
    });
    unit.into_iter().map(|s| s.checkpoint_id.clone()).collect()
}

/// Decides each path's step from its row and its current state (`current[i]` for
/// `rows[i]`), in the order the daemon must perform them: deletions deepest first, then
/// directories shallowest first, then files; paths left alone last.
pub fn plan(rows: &[Row], current: &[Current], overwrite_conflicts: bool) -> Vec<Step> {
    let mut steps: Vec<Step> = rows
        .iter()
        .zip(current)
        .map(|(row, now)| step(row, now, overwrite_conflicts))
        .collect();
    steps.sort_by_key(|s| {
        let depth = s.path.split('/').count();
        match s.action {
            Action::Delete | Action::DeleteTree => (0, usize::MAX - depth),
            Action::Directory => (1, depth),
            Action::Restore { .. } => (2, depth),
            Action::Unchanged | Action::SkipConflict | Action::Refuse(_) => (3, 0),
        }
    });
    steps
}

fn step(row: &Row, now: &Current, overwrite_conflicts: bool) -> Step {
    let done = |action: Action, conflict: bool| Step {
        path: row.path.clone(),
        action,
        conflict,
    };
    match now {
        Current::Refused(reason) => return done(Action::Refuse(reason.clone()), false),
        Current::Symlink => {
            return done(
                Action::Refuse(
                    "a symlink is there now; a restore never follows or replaces one".into(),
                ),
                false,
            );
        }
        Current::File { .. } | Current::Directory | Current::Absent => {}
    }
    if holds(now, &row.before) {
        return done(Action::Unchanged, false);
    }
    let conflict = match &row.after {
        Some(after) => !holds(now, after),
        None => true,
    };
    if conflict && !overwrite_conflicts {
        return done(Action::SkipConflict, true);
    }
    let action = match &row.before {
        Captured::File { sha256, size } => Action::Restore {
            sha256: sha256.clone(),
            size: *size,
        },
        Captured::Directory => Action::Directory,
        Captured::Absent if *now == Current::Directory => Action::DeleteTree,
        Captured::Absent => Action::Delete,
    };
    done(action, conflict)
}

/// Whether the current state is the captured one.
fn holds(now: &Current, captured: &Captured) -> bool {
    match (now, captured) {
        (Current::File { sha256: a }, Captured::File { sha256: b, .. }) => a == b,
        (Current::Directory, Captured::Directory) | (Current::Absent, Captured::Absent) => true,
        _ => false,
    }
}

/// Whether any step changes the disk.
pub fn changes(steps: &[Step]) -> bool {
    steps.iter().any(|s| changes_disk(&s.action))
}

/// Whether this action changes the disk.
pub fn changes_disk(action: &Action) -> bool {
    match action {
        Action::Restore { .. } | Action::Delete | Action::DeleteTree | Action::Directory => true,
        Action::Unchanged | Action::SkipConflict | Action::Refuse(_) => false,
    }
}

/// The approval's one-line description.
pub fn description(what: &str, steps: &[Step]) -> String {
    let changing = steps.iter().filter(|s| changes_disk(&s.action)).count();
    let conflicts = steps.iter().filter(|s| s.conflict).count();
    let mut text = format!(
        "restore {what}: {changing} path{} to change",
        if changing == 1 { "" } else { "s" }
    );
    if conflicts > 0 {
        text.push_str(&format!(
            ", {conflicts} conflict{} (changed by someone else since)",
            if conflicts == 1 { "" } else { "s" }
        ));
    }
    text
}

/// The approval's lines, one per path, saying exactly what approving does to it.
pub fn lines(steps: &[Step]) -> Vec<String> {
    steps.iter().map(line).collect()
}

/// One path's line.
pub fn line(step: &Step) -> String {
    let path = &step.path;
    let conflict = if step.conflict {
        "CONFLICT, changed by someone else since the checkpoint; your version will be overwritten: "
    } else {
        ""
    };
    match &step.action {
        Action::Restore { size, .. } => {
            format!("{conflict}restored: {path} (the captured {size} bytes)")
        }
        Action::Delete => format!("{conflict}deleted: {path} (it did not exist before)"),
        Action::DeleteTree => format!(
            "{conflict}deleted: {path}/ and everything in it now (it did not exist before; what it holds is kept in the safety checkpoint)"
        ),
        Action::Directory => format!("{conflict}directory: {path} (made again)"),
        Action::Unchanged => format!("unchanged: {path} (already as captured)"),
        Action::SkipConflict => format!(
            "CONFLICT, skipped: {path} was changed by someone else since the checkpoint and is kept as it is (restore with overwriteConflicts to replace it)"
        ),
        Action::Refuse(reason) => format!("refused: {path} ({reason})"),
    }
}

/// One file's two sides for the approval's diff: its text now (`None`: absent) and after the
/// restore (`None`: deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sides {
    pub path: String,
    pub now: Option<String>,
    pub restored: Option<String>,
}

/// The approval's diff for every file a restore changes: each file's unified diff from now to
/// after the restore under a `=== PATH` line, capped as one approval diff
/// ([`diff::MAX_DIFF_LINES`], [`diff::MAX_DIFF_CHARS`]). `None` when no file has two sides.
pub fn preview(files: &[Sides]) -> Option<diff::Preview> {
    let mut lines: Vec<String> = Vec::new();
    let (mut added, mut removed) = (0, 0);
    for file in files {
        let one = diff::preview(file.now.as_deref(), file.restored.as_deref().unwrap_or(""));
        added += one.added;
        removed += one.removed;
        let what = match (&file.now, &file.restored) {
            (_, None) => "deleted",
            (None, Some(_)) => "restored, new",
            (Some(_), Some(_)) => "restored",
        };
        lines.push(format!("=== {} ({what})", file.path));
        lines.extend(
            one.text
                .lines()
                .filter(|l| !l.starts_with("... ("))
                .map(str::to_string),
        );
    }
    if files.is_empty() {
        return None;
    }
    let mut text = String::new();
    let mut shown = 0;
    for line in &lines {
        if shown == diff::MAX_DIFF_LINES || text.len() + line.len() + 1 > diff::MAX_DIFF_CHARS {
            break;
        }
        text.push_str(line);
        text.push('\n');
        shown += 1;
    }
    let truncated = shown < lines.len();
    if truncated {
        text.push_str(&format!("... ({} more diff lines)\n", lines.len() - shown));
    }
    Some(diff::Preview {
        text,
        added,
        removed,
        truncated,
        note: "",
        cut: diff::cut_lines(&lines[shown..]),
    })
}

#[cfg(test)]
mod tests;
