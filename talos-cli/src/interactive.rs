//! `talos` with no subcommand: an interactive session on one workspace. Requests run as turns
//! in the workspace's session (continued as `talos run` continues it), answers stream as they
//! arrive, approvals are asked inline, and slash commands reach the daemon's other methods.
//! Ctrl-C cancels a running turn and keeps the session; at the prompt it clears the line;
//! Ctrl-D leaves. Each turn ends with its context footer, which `/status` shows again. The
//! README's "The interactive session" says what a person sees.

mod editor;
pub(crate) mod slash;

use talos_protocol::{CompletionStatus, Mode, TurnStartParams};

use crate::client::Client;
use crate::failure::Failure;
use crate::interrupt::Interrupts;
use crate::render::{ContextUse, Output, Style, printable};
use crate::socket::{self, AutoStart, SocketTarget};
use crate::turn::{self, Format};
use editor::{Answer, Chosen, Editor, Read};
use slash::Slash;

/// What the interactive session starts with.
#[derive(Debug, Clone)]
pub struct Start {
    /// Absolute, canonical workspace root.
    pub workspace: String,
    pub mode: Mode,
}

/// The session as it stands between prompts.
struct Repl<'a> {
    target: &'a SocketTarget,
    output: &'a Output,
    workspace: String,
    mode: Mode,
    client: Client,
    session_id: String,
    interrupts: Interrupts,
    editor: Editor,
    /// The context the last turn's last model call used (`None` when it reported none).
    last_context: Option<ContextUse>,
    /// The model chosen with `/model NAME`, chosen again in a `/new` session.
    model: Option<String>,
}

/// Runs the session until `/exit` or Ctrl-D; the exit code is 0.
pub fn run(target: &SocketTarget, start: Start, output: &Output) -> Result<u8, Failure> {
    let mut client = connect(target)?;
    let session_id = crate::sessions::open_in(
        &mut client,
        (
            &start.workspace,
            crate::sessions::here(&start.workspace).as_deref(),
        ),
        start.mode,
        false,
        &[],
    )?;
    let mut repl = Repl {
        target,
        output,
        workspace: start.workspace,
        mode: start.mode,
        client,
        session_id,
        interrupts: Interrupts::install(target, output)?,
        editor: Editor::open()?,
        last_context: None,
        model: None,
    };
    output.err_line(&output.stderr_palette.paint(
        Style::Dim,
        &format!(
            "talos: {} ({} mode). /help lists the commands; Ctrl-D leaves.",
            repl.workspace,
            repl.mode.as_str()
        ),
    ));
    loop {
        let line = match repl.editor.read(&editor::prompt(repl.mode))? {
            Read::End => break,
            Read::Cleared => continue,
            Read::Line(line) => line,
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let done = if text.starts_with('/') {
            repl.slash(text)
        } else {
            repl.turn(&line).map(|_| false)
        };
        match done {
            Ok(true) => break,
            Ok(false) => {}
            // A broken connection (the daemon restarted, ...) is reported; the next command
            // connects again.
            Err(failure) => repl.report(failure)?,
        }
    }
    Ok(0)
}

/// The approval question asked with the line editor: Ctrl-C there denies, and cancels the
/// armed turn when one runs.
fn ask_with<'e>(
    editor: &'e mut Editor,
    interrupts: &'e Interrupts,
) -> impl FnMut(&talos_protocol::ApprovalRequestParams, &Output) -> talos_protocol::Decision + 'e {
    move |request, output| match editor.ask(request, output) {
        Answer::Decision(decision) => decision,
        Answer::Interrupted => {
            output.err_line("· denied (Ctrl-C)");
            interrupts.cancel_now(output);
            talos_protocol::Decision::Deny
        }
    }
}

/// A turn's questions asked with the line editor: Ctrl-C at either denies (or chooses
/// nothing) and cancels the armed turn.
struct EditorAsks<'e> {
    editor: &'e mut Editor,
    interrupts: &'e Interrupts,
}

impl turn::Asks for EditorAsks<'_> {
    fn approve(
        &mut self,
        request: &talos_protocol::ApprovalRequestParams,
        output: &Output,
    ) -> talos_protocol::Decision {
        ask_with(self.editor, self.interrupts)(request, output)
    }

    fn choose(
        &mut self,
        request: &talos_protocol::ContractChooseParams,
        output: &Output,
    ) -> Option<talos_protocol::ReadingChoice> {
        match self.editor.choose(request, output) {
            Chosen::Choice(Some(choice)) => Some(choice),
            Chosen::Choice(None) => {
                output.err_line("· no choice: the turn ends without a guess");
                None
            }
            Chosen::Interrupted => {
                output.err_line("· no choice (Ctrl-C)");
                self.interrupts.cancel_now(output);
                None
            }
        }
    }
}

/// `/status`'s line about the session's last turn: its context footer, when it had one.
fn last_turn_line(context: Option<&ContextUse>) -> Option<String> {
    context.map(|context| format!("last turn: {}", crate::render::context_line(context)))
}

fn connect(target: &SocketTarget) -> Result<Client, Failure> {
    let mut client = Client::new(socket::connect(target, AutoStart::Start)?)?;
    client.initialize()?;
    Ok(client)
}

impl Repl<'_> {
    /// Runs one request as a turn in the session; a Ctrl-C meanwhile cancels it.
    fn turn(&mut self, prompt: &str) -> Result<CompletionStatus, Failure> {
        let params = TurnStartParams {
            session_id: self.session_id.clone(),
            prompt: prompt.to_string(),
            pins: Vec::new(),
        };
        self.interrupts.arm(&self.session_id);
        let mut asks = EditorAsks {
            editor: &mut self.editor,
            interrupts: &self.interrupts,
        };
        let finished = turn::run_in(
            &mut self.client,
            &params,
            Format::Human,
            self.output,
            &mut asks,
        );
        self.interrupts.disarm();
        self.last_context = finished.as_ref().ok().and_then(|f| f.context);
        finished.map(|finished| finished.status)
    }

    /// Runs a custom command: the daemon expands it, and the request runs as if typed. An
    /// unknown name is told with the session's own command it is nearest to.
    fn custom(&mut self, name: &str, arguments: &str) -> Result<bool, Failure> {
        let expanded =
            match crate::custom::expand(&mut self.client, &self.session_id, name, arguments) {
                Ok(expanded) => expanded,
                Err(Failure::Rpc(error))
                    if error.code == talos_protocol::ErrorCode::InvalidParams.code() =>
                {
                    let line = match slash::closest(&format!("/{name}")) {
                        Some(_) => slash::unknown_message(&format!("/{name}")),
                        None => format!("{} (/help lists the commands)", error.message),
                    };
                    self.output.err_line(&printable(&line));
                    return Ok(false);
                }
                Err(other) => return Err(other),
            };
        let from = if expanded.source == "workspace" {
            "a workspace command"
        } else {
            "your command"
        };
        self.output.err_line(&self.output.stderr_palette.paint(
            Style::Dim,
            &format!("/{name} ({from}) asks: {}", printable(&expanded.request)),
        ));
        self.turn(&expanded.request).map(|_| false)
    }

    /// Runs a slash line; `Ok(true)` when the session ends.
    fn slash(&mut self, line: &str) -> Result<bool, Failure> {
        let command = match slash::parse(line) {
            Ok(command) => command,
            Err(error) => {
                self.output.err_line(&error.0);
                return Ok(false);
            }
        };
        let (client, output, workspace) = (&mut self.client, self.output, self.workspace.as_str());
        match command {
            Slash::Help => self.help()?,
            Slash::Commands => self.list_commands()?,
            Slash::Custom { name, arguments } => return self.custom(&name, &arguments),
            Slash::Exit => return Ok(true),
            Slash::Mode(mode) => self.switch_mode(mode)?,
            Slash::New => self.new_session()?,
            Slash::Status => self.status()?,
            Slash::Model(None) => crate::control::model_status(client, false, output)?,
            Slash::Model(Some(name)) => self.select_model(&name)?,
            Slash::Grants { revoke } => {
                crate::sessions::grants(client, workspace, Some(self.mode), revoke, false, output)?
            }
            Slash::Profiles { trust: false } => {
                crate::profiles::show(client, workspace, false, output)?
            }
            Slash::Profiles { trust: true } => {
                crate::profiles::trust(client, workspace, false, output)?
            }
            Slash::Checkpoints => crate::checkpoints::list(client, workspace, false, output)?,
            Slash::CheckpointShow(id) => crate::checkpoints::show(client, &id, false, output)?,
            Slash::Restore(id) => {
                let ask = &mut ask_with(&mut self.editor, &self.interrupts);
                crate::checkpoints::restore(client, &id, false, false, output, ask)?;
            }
            Slash::Undo => {
                let ask = &mut ask_with(&mut self.editor, &self.interrupts);
                crate::checkpoints::undo_session(
                    client,
                    &self.session_id,
                    false,
                    false,
                    output,
                    ask,
                )?;
            }
            Slash::Trace(None) => crate::traces::list(client, workspace, 10, false, output)?,
            Slash::Trace(Some(id)) => crate::traces::show(client, &id, false, output)?,
        }
        Ok(false)
    }

    /// `/help`: the slash commands, then the custom ones when there are any.
    fn help(&mut self) -> Result<(), Failure> {
        self.output.out(&slash::help())?;
        if let Ok(listed) = crate::custom::list(&mut self.client, &self.session_id)
            && !listed.commands.is_empty()
        {
            let lines = crate::custom::lines(&listed).join("\n");
            self.output.out(&format!("{lines}\n"))?;
        }
        Ok(())
    }

    /// `/commands`: the custom commands, or where to add one.
    fn list_commands(&mut self) -> Result<(), Failure> {
        let listed = crate::custom::list(&mut self.client, &self.session_id)?;
        let lines = crate::custom::lines(&listed);
        if lines.is_empty() {
            self.output.out("no custom commands: add .talos/commands/NAME.md (or commands/NAME.md in the Talos config dir)\n")
        } else {
            self.output.out(&format!("{}\n", lines.join("\n")))
        }
    }

    /// `/mode MODE`: the session continues in another mode.
    fn switch_mode(&mut self, mode: Mode) -> Result<(), Failure> {
        self.session_id = crate::sessions::continue_in(
            &mut self.client,
            &self.workspace,
            mode,
            &self.session_id,
            &[],
        )?;
        self.mode = mode;
        self.output.err_line(&format!(
            "mode {} (session {})",
            mode.as_str(),
            self.session_id
        ));
        Ok(())
    }

    /// `/new`: a new session on the workspace, with the model chosen before.
    fn new_session(&mut self) -> Result<(), Failure> {
        let workspace = self.workspace.as_str();
        self.session_id = crate::sessions::open_in(
            &mut self.client,
            (workspace, crate::sessions::here(workspace).as_deref()),
            self.mode,
            true,
            &[],
        )?;
        if let Some(name) = &self.model {
            crate::sessions::select_model(&mut self.client, &self.session_id, name)?;
        }
        self.last_context = None;
        self.output
            .err_line(&format!("new session {}", self.session_id));
        Ok(())
    }

    /// `/status`: the daemon's status, the session's model and instructions, the last turn.
    fn status(&mut self) -> Result<(), Failure> {
        let output = self.output;
        crate::control::status(&mut self.client, false, output)?;
        if let Some(info) =
            crate::sessions::info_of(&mut self.client, &self.workspace, &self.session_id)
        {
            output.out(&format!("session model: {}\n", printable(&info.model)))?;
            let line = crate::render::instructions_line(&info.instructions)
                .unwrap_or_else(|| "instructions: none used by the last turn".into());
            output.out(&format!("{}\n", printable(&line)))?;
        }
        if let Some(line) = last_turn_line(self.last_context.as_ref()) {
            output.out(&format!("{line}\n"))?;
        }
        Ok(())
    }

    /// `/model NAME`: the session's next turns use another model.
    fn select_model(&mut self, name: &str) -> Result<(), Failure> {
        let chosen = crate::sessions::select_model(&mut self.client, &self.session_id, name)?;
        self.model = Some(chosen.name.clone());
        self.output.err_line(&format!(
            "model {} ({} {}) for the next turns (was {})",
            chosen.name, chosen.mode, chosen.url, chosen.previous
        ));
        Ok(())
    }

    /// Shows a failure; a broken connection is replaced by a new one.
    fn report(&mut self, failure: Failure) -> Result<(), Failure> {
        let message = failure.to_string();
        if matches!(failure, Failure::BrokenPipe) {
            return Err(failure);
        }
        self.output.err_line(&format!(
            "{} {message}",
            self.output.stderr_palette.paint(Style::Red, "error:")
        ));
        if matches!(failure, Failure::Connection(_) | Failure::NotRunning(_)) {
            self.client = connect(self.target)?;
            self.session_id = crate::sessions::open_in(
                &mut self.client,
                (
                    &self.workspace,
                    crate::sessions::here(&self.workspace).as_deref(),
                ),
                self.mode,
                false,
                &[],
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_shows_the_last_turns_context_rows() {
        let rows = [
            (None, None),
            (
                Some(ContextUse {
                    used: 3_120,
                    size: 4_096,
                    cached: Some(2_900),
                }),
                Some("last turn: context 3,120 / 4,096 tokens (2,900 cached)"),
            ),
            (
                Some(ContextUse {
                    used: 80,
                    size: 4_096,
                    cached: None,
                }),
                Some("last turn: context 80 / 4,096 tokens"),
            ),
        ];
        for (context, expected) in rows {
            assert_eq!(
                last_turn_line(context.as_ref()).as_deref(),
                expected,
                "{context:?}"
            );
        }
    }
}
