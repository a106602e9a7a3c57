//! The interactive session's line editor (rustyline): the prompt with the mode, history kept
//! under the user's state directory, multi-line input (a line ending in `\` continues, Alt-Enter
//! inserts a newline, pasted text keeps its lines), and the approval question and the reading
//! question (`contract/choose`) read with the same editor so that Ctrl-C there denies (or
//! chooses nothing) and cancels instead of waiting for Enter.

use std::path::PathBuf;

use rustyline::error::ReadlineError;
use rustyline::{Cmd, Config, DefaultEditor, KeyEvent};
use talos_protocol::{ApprovalRequestParams, ContractChooseParams, Decision, Mode, ReadingChoice};

use crate::approval;
use crate::failure::Failure;
use crate::render::Output;

/// How many requests the history keeps.
const HISTORY_ENTRIES: usize = 1000;

/// What one prompt read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A request or a slash line (continuation lines joined with newlines).
    Line(String),
    /// Ctrl-C at the prompt: the line was cleared.
    Cleared,
    /// Ctrl-D, or the end of piped input.
    End,
}

/// What the approval question read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Decision(Decision),
    /// Ctrl-C: deny, and cancel the turn.
    Interrupted,
}

/// What the reading question read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chosen {
    /// The reading, or `None`: no clear answer, no choice.
    Choice(Option<ReadingChoice>),
    /// Ctrl-C: no choice, and cancel the turn.
    Interrupted,
}

pub struct Editor {
    line: DefaultEditor,
    history: Option<PathBuf>,
}

impl Editor {
    pub fn open() -> Result<Editor, Failure> {
        let config = Config::builder()
            .max_history_size(HISTORY_ENTRIES)
            .map_err(editor_failure)?
            .history_ignore_space(true)
            .bracketed_paste(true)
            .build();
        let mut line = DefaultEditor::with_config(config).map_err(editor_failure)?;
        line.bind_sequence(KeyEvent::alt('\r'), Cmd::Newline);
        let history = history_path();
        if let Some(path) = &history {
            // A missing or unreadable history is not worth refusing to start over.
            let _ = line.load_history(path);
        }
        Ok(Editor { line, history })
    }

    /// Reads one request or slash line at `prompt`.
    pub fn read(&mut self, prompt: &str) -> Result<Read, Failure> {
        let mut text = String::new();
        let mut current = prompt.to_string();
        loop {
            match self.line.readline(&current) {
                Ok(line) => match line.strip_suffix('\\') {
                    Some(head) => {
                        text.push_str(head);
                        text.push('\n');
                        current = "... ".into();
                    }
                    None => {
                        text.push_str(&line);
                        break;
                    }
                },
                Err(ReadlineError::Interrupted) => return Ok(Read::Cleared),
                Err(ReadlineError::Eof) if text.is_empty() => return Ok(Read::End),
                Err(ReadlineError::Eof) => break,
                Err(error) => return Err(editor_failure(error)),
            }
        }
        if !text.trim().is_empty() {
            let _ = self.line.add_history_entry(text.as_str());
            self.save_history();
        }
        Ok(Read::Line(text))
    }

    /// Shows the reading question on stderr and asks with the editor.
    pub fn choose(&mut self, request: &ContractChooseParams, output: &Output) -> Chosen {
        output.err(&crate::choice::describe(request, output));
        match self.line.readline(&crate::choice::question(request)) {
            Ok(line) => Chosen::Choice(crate::choice::parse_choice(Some(&line))),
            Err(ReadlineError::Interrupted) => Chosen::Interrupted,
            Err(_) => Chosen::Choice(None),
        }
    }

    /// Shows the approval request on stderr and asks with the editor.
    pub fn ask(&mut self, request: &ApprovalRequestParams, output: &Output) -> Answer {
        output.err(&approval::describe(request, output.stderr_palette));
        match self
            .line
            .readline(approval::question(request.remember_eligible))
        {
            Ok(line) => Answer::Decision(approval::parse_answer(
                Some(&line),
                request.remember_eligible,
            )),
            Err(ReadlineError::Interrupted) => Answer::Interrupted,
            Err(_) => Answer::Decision(Decision::Deny),
        }
    }

    fn save_history(&mut self) {
        let Some(path) = &self.history else {
            return;
        };
        if let Some(dir) = path.parent() {
            let _ = create_private_dir(dir);
        }
        let _ = self.line.save_history(path);
        let _ = restrict(path);
    }
}

/// The prompt: the mode, so the person always sees what a turn may do.
pub fn prompt(mode: Mode) -> String {
    format!("talos ({})> ", mode.as_str())
}

/// `$XDG_STATE_HOME/talos/history`, else `~/.local/state/talos/history`; `TALOS_HISTORY`
/// overrides it (an empty value keeps no history).
pub fn history_path() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("TALOS_HISTORY") {
        return (!path.is_empty()).then(|| PathBuf::from(path));
    }
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state"))
        })?;
    Some(state.join("talos").join("history"))
}

fn create_private_dir(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// The history holds what was typed: only its owner may read it.
fn restrict(path: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

fn editor_failure(error: ReadlineError) -> Failure {
    Failure::Usage(format!("the line editor failed: {error}"))
}
