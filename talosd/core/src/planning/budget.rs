//! The context budget of one model request (issue 23): how many tokens a request may hold,
//! what goes in when everything does not fit, and the window of a long tool result that does.
//! Pure: the sizes come in (counted by the server's tokenizer where it has one, else
//! [`estimate`]), the decision comes out. What is kept follows a fixed order ([`Kind`]): the
//! system text and tool surface, the request, pins, this turn's tool results, retrieval, the
//! session's earlier turns. A part that does not fit is cut whole; what the model is told
//! instead is the caller's note.

/// Bytes per token of the conservative estimate used when the server has no tokenizer: one
/// token for every two bytes of UTF-8. Measured with llama-server b11434's `/tokenize` on the
/// default model (SmolLM2-135M) and this repository's own files, a shell script took 2.3 bytes
/// per token, Rust, Python and English prose 3.3 to 3.4, JSON 4.5: the estimate counts more
/// tokens than that server does (docs/configuration.md, `model.ctx_per_request`). Other
/// tokenizers were not measured.
pub const ESTIMATE_BYTES_PER_TOKEN: u64 = 2;

/// Tokens a chat template adds around each message (role markers, separators).
pub const MESSAGE_OVERHEAD: u64 = 8;

/// Tokens kept free besides the reply: the template's own start and end, and rounding.
pub const MARGIN: u64 = 32;

/// A conservative token count of `text` when no tokenizer is at hand.
pub fn estimate(text: &str) -> u64 {
    (text.len() as u64).div_ceil(ESTIMATE_BYTES_PER_TOKEN)
}

/// What a part of a request is, in the order parts are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// The system text and the tool surface: always sent.
    System,
    /// The request as typed: always sent.
    Request,
    /// The project's instruction files (`AGENTS.md`).
    Instructions,
    /// Files the person pinned.
    Pins,
    /// This turn's model replies, tool results and runtime reads.
    Turn,
    /// The workspace index's hint.
    Retrieval,
    /// The session's earlier turns, as recorded.
    History,
}

/// One part of a request: what it is, how many tokens it takes, how many its note takes when
/// it is cut (0: it is left out without a trace), and its age within its kind (0 = newest).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Part {
    pub kind: Kind,
    pub tokens: u64,
    pub note_tokens: u64,
    pub age: usize,
}

/// The context one request may use, and what is kept for the reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Tokens of context per request (the server's slot, else `model.ctx_per_request`).
    pub context: u64,
    /// Tokens kept for the reply (`model.reply_tokens`).
    pub reply: u64,
}

impl Limits {
    /// Tokens the prompt may take.
    pub fn prompt(&self) -> u64 {
        self.context
            .saturating_sub(self.reply)
            .saturating_sub(MARGIN)
    }
}

/// Whether each part goes in whole, is cut to its note, or is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    Whole,
    Note,
    Out,
}

/// The request as it will be sent, or why it cannot be.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fit {
    /// One placement per part, in the caller's order, and the tokens the prompt will take.
    Fits {
        placements: Vec<Placement>,
        tokens: u64,
    },
    /// Even the system text and the request do not fit: `needed` tokens against `available`.
    TooSmall { needed: u64, available: u64 },
}

/// Decides what goes in. The system text and the request always do (or nothing is sent);
/// then the other parts in [`Kind`] order, newest first within a kind, each whole if it fits
/// and as its note otherwise. History stops at the first earlier turn that does not fit, so
/// the turns carried are always the most recent ones, without gaps.
pub fn assemble(limits: Limits, parts: &[Part]) -> Fit {
    let available = limits.prompt();
    let required: u64 = parts
        .iter()
        .filter(|p| matches!(p.kind, Kind::System | Kind::Request))
        .map(|p| p.tokens + MESSAGE_OVERHEAD)
        .sum();
    if required > available {
        return Fit::TooSmall {
            needed: required,
            available,
        };
    }
    let mut order: Vec<usize> = (0..parts.len())
        .filter(|i| !matches!(parts[*i].kind, Kind::System | Kind::Request))
        .collect();
    order.sort_by_key(|i| (parts[*i].kind, parts[*i].age));
    let mut placements: Vec<Placement> = parts
        .iter()
        .map(|p| match p.kind {
            Kind::System | Kind::Request => Placement::Whole,
            _ => Placement::Out,
        })
        .collect();
    let mut used = required;
    let mut history_full = false;
    for i in order {
        let part = parts[i];
        let whole = part.tokens + MESSAGE_OVERHEAD;
        if !(part.kind == Kind::History && history_full) && used + whole <= available {
            placements[i] = Placement::Whole;
            used += whole;
            continue;
        }
        history_full |= part.kind == Kind::History;
        let note = part.note_tokens + MESSAGE_OVERHEAD;
        if part.note_tokens > 0 && used + note <= available {
            placements[i] = Placement::Note;
            used += note;
        }
    }
    Fit::Fits {
        placements,
        tokens: used,
    }
}

/// A long tool result cut to the lines that fit, with the note that says what is shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub text: String,
    /// e.g. `big.py: lines 1-120 of 480 shown; read more with offset 121`.
    pub note: String,
}

/// The window of `text` (which counts `tokens`) that fits in `allowance` tokens: whole lines
/// from the start, sized by the text's own tokens per byte with a tenth spare, and a note the
/// model can act on. `label` names what was read (a path). `None` when it fits as it is.
/// Numbered read output (`12 | line`) is described by its line numbers and the file's total
/// (from a trailing `... (N more lines)`); other output by its count of lines.
pub fn window(text: &str, tokens: u64, allowance: u64, label: &str) -> Option<Window> {
    if tokens <= allowance {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let bytes = (text.len() as u64).max(1);
    // Tokens of `n` bytes at this text's own rate, rounded up, with a tenth spare.
    let cost = |n: u64| (n * tokens * 11).div_ceil(bytes * 10);
    let note_reserve = 40;
    let mut kept = 0usize;
    let mut used_bytes = 0u64;
    for line in &lines {
        let next = used_bytes + line.len() as u64 + 1;
        if cost(next) + note_reserve > allowance {
            break;
        }
        used_bytes = next;
        kept += 1;
    }
    let shown = &lines[..kept];
    let note = describe(&lines, shown, label);
    let mut out = shown.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&format!("[{note}]"));
    Some(Window { text: out, note })
}

fn describe(all: &[&str], shown: &[&str], label: &str) -> String {
    let number = |line: &str| line.split_once(" | ")?.0.trim().parse::<usize>().ok();
    let numbered: Vec<usize> = all.iter().filter_map(|l| number(l)).collect();
    let (Some(first), Some(last)) = (numbered.first(), numbered.last()) else {
        return format!(
            "{label}: the first {} of {} lines of the output shown; the rest does not fit the model's context",
            shown.len(),
            all.len()
        );
    };
    let more = all
        .iter()
        .rev()
        .find_map(|l| {
            let (count, rest) = l.strip_prefix("... (")?.split_once(" more lines")?;
            rest.starts_with([')', ';']).then_some(())?;
            count.parse::<usize>().ok()
        })
        .unwrap_or(0);
    let total = last + more;
    match shown.iter().rev().find_map(|l| number(l)) {
        Some(end) => format!(
            "{label}: lines {first}-{end} of {total} shown; read more with offset {}",
            end + 1
        ),
        None => format!(
            "{label}: none of its {total} lines fit the model's context here; read a smaller part with offset and max_lines"
        ),
    }
}
