//! What a change request says the changed file must hold, when its words say it fully: a value
//! replaced ("change TIMEOUT from 30 to 60", "use clang instead of gcc"), a key given a new
//! value ("set TIMEOUT to 60", "turn DEBUG off", "bump the version to 1.2.0"), a symbol renamed
//! ("rename the function add to sum"), or the content of a new file ("containing 2.0.0").
//!
//! One reading feeds three stages: the plan's expectations, the decoding constraint (which
//! offers only the edits that do it) and the verifier (which checks the file after the write
//! with the same rule). It is read from the words alone, by families of shapes, never by
//! matching whole sentences; a request whose words do not fully say the new text gives `None`,
//! and the model's text is then its own (and the change is not called verified on the model's
//! word).

mod lines;
mod literal;
mod shapes;

pub use literal::exact_literal;

pub use shapes::content_in_words;

/// The change a request fully names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChangeAsk {
    /// `from` becomes `to` on the line that holds it; `key`, when the request names what holds
    /// the value ("the timeout", "the title"), picks the line among several.
    Replace {
        from: String,
        to: String,
        key: Option<String>,
    },
    /// The line assigning `key` gets `value`, in the file's own spelling (True/False, on/off).
    SetKey { key: String, value: String },
    /// Every whole-word `from` becomes `to`.
    RenameSymbol { from: String, to: String },
    /// The file holds exactly `content`.
    Content { content: String },
    /// The line holding `needle` is commented out with the file's own marker.
    CommentOut { needle: String },
    /// The commented-out line holding `needle` is back in.
    Uncomment { needle: String },
    /// The line holding `needle` is gone.
    RemoveLine { needle: String },
}

impl ChangeAsk {
    /// The kind of change, without the request's values (for traces).
    pub fn kind(&self) -> &'static str {
        match self {
            ChangeAsk::Replace { .. } => "replacement",
            ChangeAsk::SetKey { .. } => "key set",
            ChangeAsk::RenameSymbol { .. } => "symbol rename",
            ChangeAsk::Content { .. } => "given content",
            ChangeAsk::CommentOut { .. } => "line commented out",
            ChangeAsk::Uncomment { .. } => "line uncommented",
            ChangeAsk::RemoveLine { .. } => "line removed",
        }
    }

    /// One line for approvals, notes and answers: what the request asked the file to hold.
    pub fn describe(&self) -> String {
        match self {
            ChangeAsk::Replace { from, to, key } => match key {
                Some(key) => format!("change {key} from {from} to {to}"),
                None => format!("change {from} to {to}"),
            },
            ChangeAsk::SetKey { key, value } => format!("set {key} to {value}"),
            ChangeAsk::RenameSymbol { from, to } => format!("rename {from} to {to}"),
            ChangeAsk::CommentOut { needle } => format!("comment out the line with {needle}"),
            ChangeAsk::Uncomment { needle } => format!("uncomment the line with {needle}"),
            ChangeAsk::RemoveLine { needle } => format!("remove the line with {needle}"),
            ChangeAsk::Content { content } => {
                let first = content.lines().next().unwrap_or("");
                if content.lines().count() > 1 {
                    format!("write the given {} lines", content.lines().count())
                } else {
                    format!("write {first}")
                }
            }
        }
    }
}

/// The change the request names, read from its words, or `None` when they do not say the new
/// text fully. `targets` are the file targets the contract found, so a file name is never read
/// as a value or a symbol.
pub fn read(request: &str, targets: &[String]) -> Option<ChangeAsk> {
    let ask = lines::read(request).or_else(|| shapes::read(request, targets))?;
    let value_change = matches!(ask, ChangeAsk::Replace { .. } | ChangeAsk::SetKey { .. });
    // "Set TIMEOUT to 60 and RETRIES to 5" names two changes; one pin would call the second
    // a change beyond the request, so neither is pinned (the change is then not checked).
    (!(value_change && several_values(request))).then_some(ask)
}

/// Whether a second "… to VALUE" follows a joining word after the first one.
fn several_values(request: &str) -> bool {
    let words: Vec<String> = request
        .split_whitespace()
        .map(|w| w.to_lowercase())
        .collect();
    let bare = |w: &String| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string();
    let Some(first) = words.iter().position(|w| bare(w) == "to") else {
        return false;
    };
    let joined = words[first..]
        .iter()
        .position(|w| matches!(bare(w).as_str(), "and" | "also" | "then") || w.ends_with(','))
        .map(|k| first + k);
    joined.is_some_and(|j| words[j + 1..].iter().any(|w| bare(w) == "to"))
}
