//! Task types: the checks that come before mutation intent (checkpoint restore, workspace
//! switch, tool-alias questions, session questions, command verification), FILE_EDIT versus
//! FILE_CREATE for a mutation, and the read-only pipeline (direct answers and the conversation
//! boundary, directory listing, verify, diagnose, workspace, bare small talk, plain questions).

use super::cues::{DIAGNOSE, WORKSPACE, asks_for_listing, simple_listing_shape};
use super::direct;
use super::{Reason, TaskType};
use crate::request::targets::TargetSpan;
use crate::text::lexical::{Lex, contains_bounded};

#[rustfmt::skip]
const CREATE_MARKERS: &[&str] = &[
    "create", "write a", "write the", "save as", "add a", "add the", "new file", "build",
    "generate", "scaffold", "set up", "setup", "make a", "make an", "make me", "mkdir",
];
#[rustfmt::skip]
const EDIT_LEADING: &[&str] = &[
    "edit", "overwrite", "modify", "change", "update", "fix", "rewrite", "replace", "append",
    "remove", "delete", "adjust", "tweak", "restyle", "redesign", "refactor",
];
#[rustfmt::skip]
const CREATE_LEADING: &[&str] = &[
    "create", "write", "build", "generate", "scaffold", "make", "add",
];
const NEGATING: &[&str] = &["not", "don't", "dont", "never", "without", "no"];

/// "Undo your last change", "restore what you changed" (not "how do I undo …").
pub(crate) fn checkpoint_restore(lex: &Lex<'_>) -> bool {
    let lower = lex.lower;
    let question = ["how ", "what ", "why ", "explain ", "tell me "]
        .iter()
        .any(|p| lower.starts_with(p));
    let restore_verb = lex.words.iter().any(|w| {
        ["revert", "undo", "rollback", "restore"]
            .iter()
            .any(|v| w.text.starts_with(v))
    }) || lex.has("roll back");
    let prior_work = [
        "your change",
        "talos change",
        "previous change",
        "last change",
        "last turn",
        "previous turn",
        "what you changed",
        "what you did",
    ]
    .iter()
    .any(|r| lower.contains(r));
    !question && restore_verb && prior_work
}

pub(crate) fn workspace_switch(lex: &Lex<'_>) -> bool {
    let lower = lex.lower;
    if !lower.contains("workspace") {
        return false;
    }
    let verbs = ["change", "switch", "set", "open"];
    let owners = ["", "the ", "your ", "its ", "current "];
    verbs.iter().any(|v| {
        owners
            .iter()
            .any(|o| lower.contains(&format!("{v} {o}workspace")))
    }) || (lower.contains("use ") && lower.contains(" as the current workspace"))
        || lower.contains("point talos at")
        || lower.contains("point you at")
}

pub(crate) fn tool_alias_question(lex: &Lex<'_>) -> bool {
    let lower = lex.lower;
    let asks = [
        "can talos use",
        "can you use",
        "can it use",
        "alias supported",
    ]
    .iter()
    .any(|m| lower.contains(m));
    let tool_like = lower.split_whitespace().any(|token| {
        let token = token.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        token.contains('_')
            || token
                .split_once('.')
                .is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && !b.contains('.'))
                && token
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_'))
    });
    lower.contains("alias") && asks && tool_like
}

/// "Did you read notes.md earlier?" — a question about evidence already gathered.
pub(crate) fn session_meta_evidence(lex: &Lex<'_>, has_targets: bool) -> bool {
    let lower = lex.lower;
    if !lower.contains('?') || !has_targets {
        return false;
    }
    if [
        "read it now",
        "read them now",
        "open it now",
        "inspect it now",
    ]
    .iter()
    .any(|m| lower.contains(m))
    {
        return false;
    }
    let prior_action = ["did you", "have you", "has talos", "did talos"]
        .iter()
        .any(|who| {
            ["read", "write", "edit", "change", "modify", "update"]
                .iter()
                .any(|v| lower.contains(&format!("{who} {v}")))
        });
    let scoped = [
        "verified evidence",
        "runtime evidence",
        "from this session",
        "in this session",
        "earlier",
        "previously",
        "already",
    ]
    .iter()
    .any(|m| lower.contains(m));
    let content = [
        "summarize",
        "summary",
        "tell me",
        "show me",
        "content",
        "what is in",
        "what does",
    ]
    .iter()
    .any(|m| lower.contains(m));
    prior_action && (scoped || !content)
}

pub(crate) fn session_uncertainty(lex: &Lex<'_>) -> bool {
    let lower = lex.lower;
    lower.contains('?')
        && ["unsure", "uncertain", "not sure"]
            .iter()
            .any(|m| lower.contains(m))
        && ["session", "audit", "turn", "trace", "evidence"]
            .iter()
            .any(|m| contains_bounded(lower, m))
}

/// A request to run a command check: explicit (the command tool, or a command profile such
/// as `cargo_test`) or unsupported (python, cargo, "run the command", …).
pub(crate) fn command_verification(lex: &Lex<'_>, spans: &[TargetSpan]) -> Option<Reason> {
    let lower = lex.lower;
    let about_tool = [
        "what is talos.run_command",
        "what does talos.run_command",
        "how does talos.run_command",
        "how to use talos.run_command",
        "can talos use talos.run_command",
    ]
    .iter()
    .any(|m| lower.contains(m));
    let action = [
        "run ",
        "execute ",
        "call ",
        "try ",
        "probe ",
        "verify ",
        "check ",
        "use talos.run_command with",
    ]
    .iter()
    .any(|m| lower.contains(m));
    if about_tool || !action {
        return None;
    }
    let tool = [
        "talos.run_command",
        "run_command",
        "profile gradle_",
        "profile cargo_",
        "profile ws:",
        "args_json",
        "timeout_ms",
    ]
    .iter()
    .any(|m| lower.contains(m))
        || crate::request::task::BUILTIN_IDS
            .iter()
            .any(|id| lower.contains(id));
    let gradle = lower.contains("gradle")
        && ["test", "build", "gradle check", "passes", "pass "]
            .iter()
            .any(|m| lower.contains(m));
    if tool || gradle {
        return Some(Reason::CommandVerification);
    }
    unsupported_command(lex, spans).then_some(Reason::UnsupportedCommand)
}

fn unsupported_command(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    #[rustfmt::skip]
    const RUNNERS: &[&str] = &[
        "python", "python3", "py", "pytest", "cargo", "npm", "npx", "yarn", "pnpm", "node", "bash",
        "sh", "make", "mvn", "go", "java",
    ];
    let py_target = |offset: usize| {
        crate::request::targets::span_starting_at(spans, offset)
            .is_some_and(|s| s.path.to_ascii_lowercase().ends_with(".py"))
    };
    let runs = (0..lex.words.len()).any(|k| {
        let action = matches!(
            lex.word(k),
            "run" | "execute" | "try" | "probe" | "verify" | "check" | "test"
        );
        action
            && k + 1 < lex.words.len()
            && lex.tight(k)
            && (RUNNERS.contains(&lex.word(k + 1)) && lex.word(k) != "check"
                || lex.seq(k + 1, "the python file")
                || lex.seq(k + 1, "this python file")
                || py_target(lex.words[k + 1].start))
    });
    let python_module = lex.has("python m pytest")
        || (0..lex.words.len()).any(|k| {
            matches!(lex.word(k), "python" | "python3" | "py")
                && lex.words.get(k + 1).is_some_and(|w| py_target(w.start))
        });
    let command_words = lex.lower.contains("command")
        && (["run", "execute", "call", "try"]
            .iter()
            .any(|v| lex.has(&format!("{v} the command")) || lex.has(&format!("{v} command")))
            || [
                "if it can't run",
                "if it cannot run",
                "safe command",
                "command check",
            ]
            .iter()
            .any(|m| lex.lower.contains(m)));
    runs || python_module || command_words
}

/// FILE_CREATE when a create marker leads, FILE_EDIT otherwise.
pub(crate) fn mutation_type(lex: &Lex<'_>, reason: Reason) -> TaskType {
    match reason {
        Reason::ReviewAndFix => return TaskType::FileEdit,
        Reason::SourceToTargetArtifact => return TaskType::FileCreate,
        _ => {}
    }
    let live = |phrase: &str| {
        lex.positions(phrase)
            .into_iter()
            .find(|&k| k == 0 || !NEGATING.contains(&lex.word(k - 1)))
    };
    let missing_files = lex.has_any(&["rest files", "remaining files", "missing files"])
        && ["make", "create", "add"].iter().any(|v| live(v).is_some());
    if missing_files {
        return TaskType::FileCreate;
    }
    if !CREATE_MARKERS.iter().any(|m| live(m).is_some()) {
        return TaskType::FileEdit;
    }
    let first = |verbs: &[&str]| verbs.iter().filter_map(|v| live(v)).min();
    match (first(EDIT_LEADING), first(CREATE_LEADING)) {
        (Some(edit), Some(create)) if edit < create => TaskType::FileEdit,
        (Some(_), None) => TaskType::FileEdit,
        _ => TaskType::FileCreate,
    }
}

/// The read-only pipeline, first match wins.
pub(crate) fn read_only_type(lex: &Lex<'_>, spans: &[TargetSpan]) -> TaskType {
    if direct::is_direct_answer(lex, spans) {
        return TaskType::SmallTalk;
    }
    if simple_listing(lex) {
        return TaskType::DirectoryListing;
    }
    if lex
        .words
        .iter()
        .any(|w| w.text.starts_with("verify") || w.text.starts_with("confirm"))
    {
        return TaskType::VerifyOnly;
    }
    let diagnose_word = lex.words.iter().any(|w| {
        ["inspect", "diagnos", "mismatch", "selector"]
            .iter()
            .any(|p| w.text.starts_with(p))
    });
    if diagnose_word || lex.has_any(DIAGNOSE) {
        return TaskType::DiagnoseOnly;
    }
    let plural_places = [
        "workspaces",
        "repos",
        "projects",
        "repositories",
        "codebases",
    ];
    let workspace_word = lex.words.iter().any(|w| plural_places.contains(&w.text));
    if workspace_word || lex.has_any(WORKSPACE) {
        return TaskType::WorkspaceExplain;
    }
    if direct::bare_small_talk(lex.lower) {
        return TaskType::SmallTalk;
    }
    TaskType::ReadOnlyQa
}

fn simple_listing(lex: &Lex<'_>) -> bool {
    #[rustfmt::skip]
    const ONLY: &[&str] = &[
        "list files only", "list the files only", "only list files", "only list the files",
        "files only", "file names only", "names only", "do not show content", "don't show content",
        "do not show file contents", "do not read content", "do not read files",
        "don't read files", "without showing content", "without reading files", "no content",
    ];
    #[rustfmt::skip]
    const EXCLUDE: &[&str] = &[
        "read", "explain", "summarize", "summary", "inspect", "diagnose", "search", "grep", "find",
        "content", "contents", "what does",
    ];
    let listing_only = asks_for_listing(lex)
        && !lex.has_any(&[
            "summarize",
            "summary",
            "explain",
            "diagnose",
            "search",
            "grep",
            "what does",
        ])
        && lex.has_any(ONLY);
    listing_only || (!lex.has_any(EXCLUDE) && simple_listing_shape(lex))
}
