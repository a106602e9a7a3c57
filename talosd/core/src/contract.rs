//! The task contract: what a turn may do, resolved from the request by deterministic code,
//! before the model is asked anything. "Not a planner and not an LLM classifier."

use crate::targets;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskType {
    SmallTalk,
    DirectoryListing,
    ReadOnlyQa,
    WorkspaceExplain,
    DiagnoseOnly,
    FileEdit,
    FileCreate,
    CheckpointRestore,
    VerifyOnly,
    Unknown,
}

impl TaskType {
    pub fn as_str(self) -> &'static str {
        match self {
            TaskType::SmallTalk => "SMALL_TALK",
            TaskType::DirectoryListing => "DIRECTORY_LISTING",
            TaskType::ReadOnlyQa => "READ_ONLY_QA",
            TaskType::WorkspaceExplain => "WORKSPACE_EXPLAIN",
            TaskType::DiagnoseOnly => "DIAGNOSE_ONLY",
            TaskType::FileEdit => "FILE_EDIT",
            TaskType::FileCreate => "FILE_CREATE",
            TaskType::CheckpointRestore => "CHECKPOINT_RESTORE",
            TaskType::VerifyOnly => "VERIFY_ONLY",
            TaskType::Unknown => "UNKNOWN",
        }
    }
}

/// What a turn may do. Built only by [`resolve`] and rewritten only by the posture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskContract {
    pub task_type: TaskType,
    pub mutation_requested: bool,
    pub mutation_allowed: bool,
    pub verification_required: bool,
    pub expected_targets: Vec<String>,
    pub source_evidence_targets: Vec<String>,
    pub forbidden_targets: Vec<String>,
    pub original_request: String,
    pub classification_reason: String,
}

const MUTATION_VERBS: &[&str] = &[
    "edit",
    "modify",
    "change",
    "update",
    "fix",
    "repair",
    "overwrite",
    "rewrite",
    "replace",
    "write",
    "create",
    "save",
    "apply",
    "append",
    "add",
    "remove",
    "delete",
    "rename",
    "refactor",
    "put",
    "implement",
    "make",
    "set",
    "insert",
    "generate",
    "build",
    "scaffold",
    "restyle",
];
const CREATE_MARKERS: &[&str] = &[
    "create",
    "write a",
    "write the",
    "save as",
    "add a new",
    "new file",
    "generate",
    "scaffold",
    "make a",
    "make an",
    "make me",
];
const STATUS_QUESTION_MARKERS: &[&str] = &[
    "did you",
    "have you",
    "is it done",
    "is it working",
    "is it fixed",
    "was it",
    "were the",
    "what did you change",
    "what did you do",
    "why did nothing change",
    "did it work",
];
const ADVISORY_OPENERS: &[&str] = &[
    "should i",
    "should we",
    "could i",
    "can i",
    "may i",
    "how do i",
    "how would",
    "how should",
    "how to",
    "what would",
    "explain how",
];
const READ_ONLY_NEGATIONS: &[&str] = &[
    "do not change anything",
    "don't change anything",
    "do not modify anything",
    "don't modify anything",
    "leave files unchanged",
    "no file changes",
    "without changing anything",
    "do not edit anything",
    "don't edit anything",
    "do not make changes",
    "don't make changes",
    "do not change any file",
    "don't change any file",
];
const SMALL_TALK: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "yo",
    "good morning",
    "good afternoon",
    "good evening",
    "thanks",
    "thank you",
    "thx",
    "ok",
    "okay",
    "cool",
    "nice",
    "great",
    "hmm",
    "huh",
    "who are you",
    "what are you",
    "what is talos",
    "what can you do",
    "how are you",
];
const LISTING_MARKERS: &[&str] = &[
    "list files",
    "list the files",
    "list all files",
    "list directory",
    "list the directory",
    "what files are",
    "which files are",
    "show files",
    "show the files",
    "ls",
    "dir",
    "list the contents",
    "list contents",
];
const DIAGNOSE_MARKERS: &[&str] = &[
    "inspect",
    "diagnose",
    "check whether",
    "check if",
    "mismatch",
    "selector",
    "broken",
    "what is wrong",
    "what's wrong",
    "why does",
    "why is",
];
const WORKSPACE_MARKERS: &[&str] = &[
    "workspace",
    "repo",
    "repository",
    "project",
    "codebase",
    "what is in this",
    "explain this",
    "this folder",
    "this directory",
];
const RESTORE_VERBS: &[&str] = &["revert", "undo", "rollback", "roll back", "restore"];
const RESTORE_REFERENCES: &[&str] = &[
    "your change",
    "talos change",
    "previous change",
    "last change",
    "last turn",
    "previous turn",
    "what you changed",
    "what you did",
];

/// Resolves a request into a task contract.
pub fn resolve(request: &str) -> TaskContract {
    let text = request.trim();
    let lower = text.to_lowercase();
    let words = words(&lower);
    let mut contract = TaskContract {
        task_type: TaskType::Unknown,
        mutation_requested: false,
        mutation_allowed: false,
        verification_required: false,
        expected_targets: Vec::new(),
        source_evidence_targets: Vec::new(),
        forbidden_targets: Vec::new(),
        original_request: request.to_string(),
        classification_reason: "unknown".into(),
    };
    if text.is_empty() {
        contract.classification_reason = "empty-user-request".into();
        return contract;
    }
    let targets = targets::file_targets(text);
    let forbidden = targets::forbidden_targets(text);
    let (task_type, reason) = classify(&lower, &words, &targets, &forbidden);
    contract.task_type = task_type;
    contract.classification_reason = reason.into();
    contract.mutation_requested = matches!(task_type, TaskType::FileEdit | TaskType::FileCreate);
    contract.mutation_allowed = contract.mutation_requested;
    contract.verification_required = contract.mutation_allowed || task_type == TaskType::VerifyOnly;
    contract.expected_targets = if contract.mutation_allowed {
        targets
            .into_iter()
            .filter(|t| !forbidden.contains(t))
            .collect()
    } else {
        targets
    };
    contract.forbidden_targets = forbidden;
    contract
}

fn classify(
    lower: &str,
    words: &[&str],
    targets: &[String],
    forbidden: &[String],
) -> (TaskType, &'static str) {
    let starts_with_question = ["how ", "what ", "why ", "explain ", "tell me "]
        .iter()
        .any(|p| lower.starts_with(p));
    if !starts_with_question
        && RESTORE_VERBS.iter().any(|v| contains_phrase(lower, v))
        && RESTORE_REFERENCES.iter().any(|r| lower.contains(r))
    {
        return (TaskType::CheckpointRestore, "checkpoint-restore-request");
    }
    if STATUS_QUESTION_MARKERS
        .iter()
        .any(|m| contains_phrase(lower, m))
    {
        return (TaskType::VerifyOnly, "prior-change-status-question");
    }
    let bare = lower.trim_end_matches(['!', '?', '.', ' ']);
    if SMALL_TALK.contains(&bare) {
        return (TaskType::SmallTalk, "small-talk");
    }
    if READ_ONLY_NEGATIONS.iter().any(|m| lower.contains(m)) {
        return read_only_kind(lower, words, targets, "global-read-only-negation");
    }
    if ADVISORY_OPENERS.iter().any(|m| lower.starts_with(m)) {
        return read_only_kind(lower, words, targets, "advisory-mutation-question");
    }
    let first_verb = words.iter().position(|w| MUTATION_VERBS.contains(w));
    let live_targets = targets.iter().any(|t| !forbidden.contains(t));
    let explicit = first_verb.is_some_and(|i| verb_is_imperative(words, i));
    if let Some(index) = first_verb
        && (live_targets || explicit)
        && !is_question_about(lower)
    {
        let verb = words[index];
        let create = CREATE_MARKERS.iter().any(|m| contains_phrase(lower, m))
            || ["create", "write", "generate", "scaffold"].contains(&verb);
        let edit_first = [
            "edit", "modify", "change", "update", "fix", "rewrite", "replace", "append", "remove",
            "delete", "refactor",
        ]
        .contains(&verb);
        let task = if create && !edit_first {
            TaskType::FileCreate
        } else {
            TaskType::FileEdit
        };
        let reason = if live_targets {
            "explicit-mutation-verb-with-file-target"
        } else {
            "explicit-request-pattern"
        };
        return (task, reason);
    }
    read_only_kind(lower, words, targets, "non-mutating")
}

fn read_only_kind(
    lower: &str,
    words: &[&str],
    targets: &[String],
    reason: &'static str,
) -> (TaskType, &'static str) {
    if LISTING_MARKERS.iter().any(|m| contains_phrase(lower, m)) && targets.is_empty() {
        return (
            TaskType::DirectoryListing,
            reason_or(reason, "directory-listing"),
        );
    }
    if words.iter().any(|w| *w == "verify" || *w == "confirm") {
        return (TaskType::VerifyOnly, reason_or(reason, "verify-request"));
    }
    if DIAGNOSE_MARKERS.iter().any(|m| contains_phrase(lower, m)) {
        return (
            TaskType::DiagnoseOnly,
            reason_or(reason, "diagnose-request"),
        );
    }
    if WORKSPACE_MARKERS.iter().any(|m| contains_phrase(lower, m)) && targets.is_empty() {
        return (
            TaskType::WorkspaceExplain,
            reason_or(reason, "workspace-explain"),
        );
    }
    (TaskType::ReadOnlyQa, reason)
}

fn reason_or(reason: &'static str, specific: &'static str) -> &'static str {
    if reason == "non-mutating" {
        specific
    } else {
        reason
    }
}

/// A mutation verb counts without a file target only when it opens the request (after an
/// optional polite or chatty prefix), as in "please add a test".
fn verb_is_imperative(words: &[&str], index: usize) -> bool {
    const PREFIX: &[&str] = &[
        "please", "now", "ok", "okay", "so", "then", "and", "can", "could", "would", "will", "you",
        "i", "want", "need", "to", "let's", "lets", "just", "only", "also", "hey", "hi",
    ];
    words[..index].iter().all(|w| PREFIX.contains(w))
}

fn is_question_about(lower: &str) -> bool {
    [
        "what does",
        "what is",
        "what's",
        "where is",
        "which ",
        "who ",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
}

fn words(lower: &str) -> Vec<&str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '_'))
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether `phrase` occurs in `text` on word boundaries.
pub(crate) fn contains_phrase(text: &str, phrase: &str) -> bool {
    let mut from = 0;
    while let Some(found) = text[from..].find(phrase) {
        let start = from + found;
        let end = start + phrase.len();
        let before_ok = start == 0
            || !text[..start]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric);
        let after_ok = end == text.len()
            || !text[end..]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric);
        if before_ok && after_ok {
            return true;
        }
        from = start + phrase.len().max(1);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(request: &str, task: TaskType, allowed: bool, expected: &[&str], forbidden: &[&str]) {
        let c = resolve(request);
        assert_eq!(
            (
                c.task_type,
                c.mutation_allowed,
                c.expected_targets.clone(),
                c.forbidden_targets.clone()
            ),
            (
                task,
                allowed,
                expected.iter().map(|s| s.to_string()).collect(),
                forbidden.iter().map(|s| s.to_string()).collect()
            ),
            "{request:?} -> {}",
            c.classification_reason
        );
        assert_eq!(
            c.verification_required,
            allowed || task == TaskType::VerifyOnly
        );
    }

    #[test]
    fn contract_rows() {
        use TaskType::*;
        check(
            "In settings.py, change TIMEOUT from 30 to 60.",
            FileEdit,
            true,
            &["settings.py"],
            &[],
        );
        check("hello", SmallTalk, false, &[], &[]);
        check("Thanks!", SmallTalk, false, &[], &[]);
        check("list files", DirectoryListing, false, &[], &[]);
        check(
            "What files are in this folder?",
            DirectoryListing,
            false,
            &[],
            &[],
        );
        check(
            "What does settings.py configure?",
            ReadOnlyQa,
            false,
            &["settings.py"],
            &[],
        );
        check(
            "Create notes.md with a todo list",
            FileCreate,
            true,
            &["notes.md"],
            &[],
        );
        check(
            "Write a new file hello.py that prints hi",
            FileCreate,
            true,
            &["hello.py"],
            &[],
        );
        check(
            "Fix only styles.css. Do not change index.html or scripts.js.",
            FileEdit,
            true,
            &["styles.css"],
            &["index.html", "scripts.js"],
        );
        check("did you make the changes?", VerifyOnly, false, &[], &[]);
        check("is it working now?", VerifyOnly, false, &[], &[]);
        check(
            "Explain settings.py but do not change anything",
            ReadOnlyQa,
            false,
            &["settings.py"],
            &[],
        );
        check(
            "How do I change the port in server.py?",
            ReadOnlyQa,
            false,
            &["server.py"],
            &[],
        );
        check("Explain this repository", WorkspaceExplain, false, &[], &[]);
        check(
            "Inspect app.js and tell me what is wrong",
            DiagnoseOnly,
            false,
            &["app.js"],
            &[],
        );
        check("undo your last change", CheckpointRestore, false, &[], &[]);
        check("please add a test for parsing", FileEdit, true, &[], &[]);
        check(
            "Write ../outside.txt with hello",
            FileCreate,
            true,
            &["../outside.txt"],
            &[],
        );
        check("", Unknown, false, &[], &[]);
    }
}
