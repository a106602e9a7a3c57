//! The messages a turn sends the model, kept by the core (issue 23): the session's earlier
//! turns as their records hold them (the request as typed, the committed answer, the files
//! changed), pins, the index's hint, the runtime's own reads, the request, and this turn's
//! replies and tool results. Each part knows its token count once the daemon has counted it,
//! and what replaces it when the context budget cuts it (`crate::planning::budget`). The order is fixed
//! so that what repeats from one request to the next (system text, history) is a stable
//! prefix the server's prompt cache reuses.

use crate::planning::budget::{self, Kind, Placement};
use crate::request::history::{PriorOutcome, RecordedChange};

use super::model::NativeCall;

/// Who says a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    /// A native tool call's result.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// One chat message as the engine sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// The native calls an assistant message made.
    pub tool_calls: Vec<NativeCall>,
    /// The native call a tool message answers.
    pub tool_call_id: Option<String>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

/// An earlier turn of the session, as its records hold it: never a summary by the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EarlierTurn {
    /// The request as typed.
    pub request: String,
    /// The committed final answer (after the guards; protected lines withheld).
    pub answer: String,
    /// The files the turn changed, as recorded.
    pub changed: Vec<String>,
    /// How the turn ended.
    pub outcome: PriorOutcome,
    /// The replacement it made, where its records hold one (`history::replacement_made`).
    pub replaced: Option<RecordedChange>,
}

/// A tool's output as the call reported it, kept so a long one can be windowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ToolOutput {
    /// Said before the result (a runtime read says what it is).
    pub prefix: String,
    pub name: String,
    /// What was read (the path), for the window's note.
    pub label: String,
    /// The text as shown (a window of `whole` once the budget cut it).
    pub text: String,
    /// The whole output, as the call reported it.
    pub whole: String,
    pub broken_note: bool,
    pub windowed: bool,
}

impl ToolOutput {
    /// The message content: the prefix and the wrapped result.
    pub fn content(&self) -> String {
        format!(
            "{}{}",
            self.prefix,
            super::model::wrap_result(&self.name, &self.text, self.broken_note)
        )
    }
}

/// One part of the conversation: its messages, their count, and its note when cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub kind: Kind,
    pub messages: Vec<Message>,
    /// The messages' tokens, once counted (scaled by the turn's calibration when used).
    pub tokens: Option<u64>,
    /// What replaces the content when the budget cuts the entry (`None`: left out).
    pub note: Option<String>,
    pub note_tokens: u64,
    pub output: Option<ToolOutput>,
}

impl Entry {
    pub fn new(kind: Kind, messages: Vec<Message>, note: Option<String>) -> Entry {
        let note_tokens = note.as_deref().map_or(0, budget::estimate);
        Entry {
            kind,
            messages,
            tokens: None,
            note,
            note_tokens,
            output: None,
        }
    }

    /// The text the daemon counts: every message's content (and its calls' arguments).
    pub fn text(&self) -> String {
        let mut text = String::new();
        for message in &self.messages {
            text.push_str(&message.content);
            for call in &message.tool_calls {
                text.push_str(&call.name);
                text.push_str(&call.arguments);
            }
        }
        text
    }

    /// The messages as placed: whole, with the note as their content, or none.
    fn placed(&self, placement: Placement) -> Vec<Message> {
        match (placement, &self.note) {
            (Placement::Whole, _) => self.messages.clone(),
            (Placement::Note, Some(note)) => self
                .messages
                .iter()
                .map(|m| Message {
                    content: note.clone(),
                    ..m.clone()
                })
                .collect(),
            (Placement::Note, None) | (Placement::Out, _) => Vec::new(),
        }
    }
}

/// The conversation of one turn.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Conversation {
    /// The project's instruction files: first, as they change least often.
    pub instructions: Option<Entry>,
    /// Earlier turns, oldest first.
    pub history: Vec<Entry>,
    pub pins: Option<Entry>,
    pub retrieval: Option<Entry>,
    /// The runtime's own reads, told before the request.
    pub prereads: Vec<Entry>,
    pub request: Option<Entry>,
    /// This turn's replies and results, in order.
    pub turn: Vec<Entry>,
}

impl Conversation {
    /// Every entry in the order it is sent (after the system text).
    pub fn entries(&self) -> Vec<&Entry> {
        let mut all: Vec<&Entry> = self.instructions.iter().collect();
        all.extend(self.history.iter());
        all.extend(self.pins.iter());
        all.extend(self.retrieval.iter());
        all.extend(self.prereads.iter());
        all.extend(self.request.iter());
        all.extend(self.turn.iter());
        all
    }

    pub fn entries_mut(&mut self) -> Vec<&mut Entry> {
        let mut all: Vec<&mut Entry> = self.instructions.iter_mut().collect();
        all.extend(self.history.iter_mut());
        all.extend(self.pins.iter_mut());
        all.extend(self.retrieval.iter_mut());
        all.extend(self.prereads.iter_mut());
        all.extend(self.request.iter_mut());
        all.extend(self.turn.iter_mut());
        all
    }

    /// The budget's parts, in [`Conversation::entries`] order, with ages within each kind.
    pub fn parts(&self, scale: impl Fn(u64) -> u64) -> Vec<budget::Part> {
        let entries = self.entries();
        let mut parts = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let age = entries[i + 1..]
                .iter()
                .filter(|e| e.kind == entry.kind)
                .count();
            let extra = entry.messages.len().saturating_sub(1) as u64 * budget::MESSAGE_OVERHEAD;
            parts.push(budget::Part {
                kind: entry.kind,
                tokens: scale(entry.tokens.unwrap_or(0)) + extra,
                note_tokens: entry.note.as_ref().map_or(0, |_| entry.note_tokens + extra),
                age,
            });
        }
        parts
    }

    /// The messages as the placements say, after the system message, and the notes of what
    /// was cut.
    pub fn placed(&self, placements: &[Placement]) -> (Vec<Message>, Vec<String>) {
        let mut messages = Vec::new();
        let mut cut = Vec::new();
        for (entry, placement) in self.entries().into_iter().zip(placements) {
            if *placement != Placement::Whole {
                cut.push(cut_label(entry));
            }
            messages.extend(entry.placed(*placement));
        }
        (messages, cut)
    }
}

/// What a cut entry is called in the trace.
fn cut_label(entry: &Entry) -> String {
    let what = match entry.kind {
        Kind::System | Kind::Request => "the request",
        Kind::Instructions => "the project's instructions",
        Kind::Pins => "the pinned files",
        Kind::Turn => "a tool result of this turn",
        Kind::Retrieval => "the index's hint",
        Kind::History => "an earlier turn",
    };
    match &entry.output {
        Some(output) => format!("{what} ({} {})", output.name, output.label),
        None => what.to_string(),
    }
}

/// An earlier turn as the two messages it was: the request, and the answer with the files
/// the records say it changed.
pub(crate) fn earlier_entry(turn: &EarlierTurn) -> Entry {
    let mut answer = turn.answer.clone();
    if !turn.changed.is_empty() {
        let replaced = turn.replaced.as_ref().map_or(String::new(), |r| {
            format!(" ({}: {} -> {})", r.target, r.from, r.to)
        });
        answer.push_str(&format!(
            "\n\n[Talos's record of this turn: changed {}{replaced}.]",
            turn.changed.join(", ")
        ));
    }
    Entry::new(
        Kind::History,
        vec![
            Message::new(Role::User, turn.request.clone()),
            Message::new(Role::Assistant, answer),
        ],
        None,
    )
}

/// The note that stands for a tool result the budget cut.
pub(crate) fn cut_note(name: &str, label: &str) -> String {
    format!(
        "[tool_result: {name}]\n[This result ({label}) was cut: it no longer fits the model's context. Call the tool again with a narrower request (offset and max_lines for a file) if you still need it.]\n[/tool_result]"
    )
}
