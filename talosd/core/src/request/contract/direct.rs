//! Direct answers: turns that get no tools. Bare small talk, the conversation boundary ("only
//! chatting", "don't use the workspace", "without reading files", near-slash-commands, a few
//! exact chat prompts), greetings with a chat-only hint, identity and capability questions, and
//! explicit "without inspecting the workspace" requests for a general answer. Identity and
//! capability questions are answered from a fixed runtime text ([`asks_about_talos`]).

use super::cues::{DIAGNOSE, WORKSPACE, asks_for_listing};
use crate::request::targets::TargetSpan;
use crate::text::lexical::Lex;

#[rustfmt::skip]
const SMALL_TALK: &[&str] = &[
    "hi", "hello", "hey", "hey there", "hello there", "yo", "good morning", "good afternoon",
    "good evening", "good night", "thanks", "thank you", "thank you so much", "thanks a lot",
    "thx", "ok", "okay", "cool", "nice", "great", "huh", "bye", "goodbye", "cheers", "awesome",
    "perfect", "how are you", "what's up", "sup", "lol", "haha",
];

#[rustfmt::skip]
const DIRECT_CHAT: &[&str] = &[
    "hello friend", "hello friend, how are you?", "how are you are you good?",
    "perfect just as i want it!", "thanks, that is perfect", "looks good",
];

#[rustfmt::skip]
const PRIVACY_NO_WORKSPACE: &[&str] = &[
    "only chatting", "just chat", "just chatting", "don't inspect my files",
    "dont inspect my files", "do not inspect my files", "don't inspect the files",
    "dont inspect the files", "do not inspect the files", "do not inspect files",
    "don't read my files", "dont read my files", "do not read files", "do not read my files",
    "don't search my files", "dont search my files", "do not search my files",
    "no workspace access", "no workspace", "don't use the workspace", "dont use the workspace",
    "do not use the workspace", "don't use workspace", "dont use workspace",
    "do not use workspace", "no file access", "without reading files", "without checking files",
    "without searching files", "without inspecting files",
];

#[rustfmt::skip]
const NO_INSPECTION: &[&str] = &[
    "do not inspect this workspace", "do not inspect the workspace",
    "don't inspect this workspace", "don't inspect the workspace", "dont inspect the workspace",
    "do not read the workspace", "don't read the workspace", "do not check the workspace",
    "without inspecting the workspace", "without inspecting workspace",
    "without checking the workspace", "without reading the workspace",
    "without using this workspace", "without using the workspace", "without inspecting the repo",
    "without checking the repo", "without reading the repo", "without inspecting the repository",
    "without reading the repository", "without inspecting the codebase",
    "without reading the codebase",
];

#[rustfmt::skip]
const IDENTITY: &[&str] = &[
    "who are you", "what are you", "what is talos", "who is talos", "tell me what you are",
    "tell me about yourself", "what's your name", "what is your name",
];

#[rustfmt::skip]
const CAPABILITY: &[&str] = &[
    "what can you do", "what can you help me with", "what can you help with",
    "how can you assist me", "how can you help", "how can talos help", "what can talos do",
    "what can talos help me with",
];

/// Whether a request asks who Talos is or what it can do ("Who are you?", "What can you do?"):
/// answered from a fixed runtime text, never by the model.
pub fn asks_about_talos(request: &str) -> bool {
    let text = crate::text::lexical::normalise(request);
    let lower = text.to_ascii_lowercase();
    let lex = Lex::new(&text, &lower);
    identity(&lex) || lex.has_any(CAPABILITY)
}

/// Whether the turn is answered without tools (checked before listing, verify, diagnose).
pub(crate) fn is_direct_answer(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    no_inspection_direct_answer(lex)
        || conversation_boundary(lex, spans)
        || greeting_with_chat_hint(lex)
        || (spans.is_empty() && (identity(lex) || lex.has_any(CAPABILITY)))
}

/// The whole request is a greeting or a thanks, punctuation and emoji aside.
pub(crate) fn bare_small_talk(lower: &str) -> bool {
    let core = lower
        .trim_matches(|c: char| !c.is_alphanumeric())
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let hmm =
        core.len() >= 2 && core.starts_with("hm") && core.chars().all(|c| c == 'h' || c == 'm');
    // "thank you, that worked", "great, thanks a lot": small talk in pieces.
    let acknowledgement = |piece: &str| {
        SMALL_TALK.contains(&piece)
            || [
                "that worked",
                "it worked",
                "that works",
                "it works",
                "all good",
                "works now",
            ]
            .contains(&piece)
    };
    let pieces: Vec<String> = core
        .split([',', '.', '!'])
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect();
    let in_pieces = pieces.len() > 1 && pieces.iter().all(|p| acknowledgement(p));
    SMALL_TALK.contains(&core.as_str()) || hmm || in_pieces
}

/// An identity question, not one about a dotted name ("what is talos.run_command?").
fn identity(lex: &Lex<'_>) -> bool {
    IDENTITY.iter().any(|phrase| {
        lex.positions(phrase).into_iter().any(|k| {
            let last = lex.words[k + Lex::len_of(phrase) - 1];
            let rest = &lex.lower[last.end..];
            !(rest.starts_with('.') && rest[1..].starts_with(|c: char| c.is_alphanumeric()))
        })
    })
}

fn no_inspection_direct_answer(lex: &Lex<'_>) -> bool {
    lex.has_any(NO_INSPECTION)
        && !asks_for_listing(lex)
        && !lex.has_any(&["search", "grep", "show me the files", "what files"])
        && !lex.lower.contains("read ")
}

fn conversation_boundary(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    let collapsed = lex.lower.split_whitespace().collect::<Vec<_>>().join(" ");
    if lex.has_any(PRIVACY_NO_WORKSPACE) && !positive_workspace_action(lex, spans) {
        return true;
    }
    let bare = collapsed.trim_end_matches(['.', '!', '?']);
    let near_slash = [
        "debug trace",
        "debug /trace",
        "last trace",
        "last /trace",
        "show trace",
        "show /trace",
    ]
    .contains(&bare)
        || [
            "show me the last trace",
            "show the last trace",
            "show last trace",
            "show me last trace",
        ]
        .contains(&bare);
    if near_slash {
        return true;
    }
    let workspace_intent = !spans.is_empty()
        || lex.has_any(&[
            "workspace",
            "repo",
            "repository",
            "read",
            "inspect",
            "search",
            "list",
            "show files",
            "what files",
            "my files",
            "this folder",
            "the folder",
        ]);
    if workspace_intent {
        return false;
    }
    let hi_how_are_you = matches!(lex.word(0), "hi" | "hello" | "hey") && lex.has("how are you");
    DIRECT_CHAT.contains(&collapsed.as_str()) || hi_how_are_you
}

/// A workspace action outside the privacy markers ("just chat, but list the files").
fn positive_workspace_action(lex: &Lex<'_>, spans: &[TargetSpan]) -> bool {
    let mut masked = lex.lower.to_string();
    for marker in PRIVACY_NO_WORKSPACE {
        for k in lex.positions(marker) {
            let end = lex.words[k + Lex::len_of(marker) - 1].end;
            masked.replace_range(
                lex.words[k].start..end,
                &" ".repeat(end - lex.words[k].start),
            );
        }
    }
    let view = Lex::new(lex.text, &masked);
    #[rustfmt::skip]
    const ACTIONS: &[&str] = &[
        "create", "edit", "modify", "change", "update", "fix", "repair", "overwrite", "rewrite",
        "replace", "write", "save", "apply", "add", "remove", "delete", "refactor", "read",
        "inspect", "search", "list", "show", "explain", "summarize", "summary", "describe",
        "diagnose", "grep", "find",
    ];
    #[rustfmt::skip]
    const PLACE_WORDS: &[&str] = &[
        "repo", "repository", "workspace", "project", "folder", "directory", "file", "files",
    ];
    (0..view.words.len()).any(|k| {
        ACTIONS.contains(&view.word(k)) && {
            let from = view.words[k].end;
            spans
                .iter()
                .any(|s| s.start >= from && s.start <= from + 80)
                || (k + 1..view.words.len())
                    .take_while(|&m| view.words[m].start <= from + 80)
                    .any(|m| PLACE_WORDS.contains(&view.word(m)))
        }
    }) || view.has_any(&[
        "what is in this workspace",
        "what's in this workspace",
        "what is in the repo",
    ])
}

fn greeting_with_chat_hint(lex: &Lex<'_>) -> bool {
    #[rustfmt::skip]
    const HINTS: &[&str] = &[
        "answer briefly", "just say hello", "just say hi", "say hello", "say hi", "are you awake",
        "normal assistant", "friendly sentence",
    ];
    matches!(lex.word(0), "hi" | "hello" | "hey" | "yo")
        && !lex.has_any(WORKSPACE)
        && !lex.has_any(DIAGNOSE)
        && !["read ", "search ", "grep ", "file", "folder", "directory"]
            .iter()
            .any(|m| lex.lower.contains(m))
        && lex.has_any(HINTS)
}
