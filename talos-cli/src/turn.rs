//! The `talos run` conversation: a session (reused or new), then `turn/start`, rendering the turn's
//! events and answering its approval requests while the response is outstanding, then the
//! outcome. Human output streams the answer to stdout and narrates on stderr; while the model
//! works on a held reply, `progress` events redraw one live line on stderr (terminals only), and
//! the last `usage` event of the turn becomes a context footer under the outcome line. `--json`
//! output is one compact JSON line per event, approval request and outcome.

use serde_json::{Value, json};
use talos_protocol::{
    APPROVAL_REQUEST, ApprovalRequestParams, ApprovalResult, CONTRACT_CHOOSE, CompletionStatus,
    ContractChooseParams, Decision, ErrorCode, Message, Mode, ReadingChoice, RpcError, TURN_EVENT,
    TURN_START, TurnEvent, TurnEventParams, TurnOutcome, TurnStartParams,
};

use crate::client::{Client, params, refuse_request};
use crate::failure::Failure;
use crate::render::{
    ContextUse, Output, Style, context_line, file_line, printable, progress_text, status_line,
    table,
};
use crate::spelling::{decision_name, source_name};
use crate::{approval, choice};

/// How the turn is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
}

/// What `talos run` asks for.
#[derive(Debug, Clone)]
pub struct RunRequest {
    /// Absolute, canonical workspace root.
    pub workspace: String,
    pub mode: Mode,
    pub prompt: String,
    /// Workspace-relative files pinned into the turn.
    pub pins: Vec<String>,
    /// Open a new session instead of reusing the daemon's idle one for this workspace and mode.
    pub new_session: bool,
    /// The model this turn and the session's later ones use (`model/select`).
    pub model: Option<String>,
    pub format: Format,
}

/// How an approval request is answered: shown and asked on the terminal.
pub type Asker<'a> = &'a mut dyn FnMut(&ApprovalRequestParams, &Output) -> Decision;

/// How a turn's questions to the person are answered: its approvals, and the reading of an
/// uncertain request (`contract/choose`).
pub trait Asks {
    /// The person's decision on an approval.
    fn approve(&mut self, request: &ApprovalRequestParams, output: &Output) -> Decision;
    /// The person's reading; `None` is no choice, and the daemon ends the turn without a
    /// guess (`CONTRACT_AMBIGUOUS`).
    fn choose(&mut self, request: &ContractChooseParams, output: &Output) -> Option<ReadingChoice>;
}

/// `talos run`'s questions: each asked on the terminal.
pub struct OnTheTerminal;

impl Asks for OnTheTerminal {
    fn approve(&mut self, request: &ApprovalRequestParams, output: &Output) -> Decision {
        approval::ask(request, output)
    }

    fn choose(&mut self, request: &ContractChooseParams, output: &Output) -> Option<ReadingChoice> {
        choice::ask(request, output)
    }
}

/// Everything the turn has shown so far, so the outcome neither repeats nor loses text.
struct TurnView<'a> {
    output: &'a Output,
    format: Format,
    ask: &'a mut dyn Asks,
    /// All streamed text of the turn.
    streamed: String,
    /// The text of the most recent stream.
    current_stream: String,
    /// Whether stdout's last byte was something other than a newline.
    stdout_mid_line: bool,
    /// The context use of the turn's latest `usage` event.
    context: Option<ContextUse>,
}

/// How a turn ended: its status, and the context its last model call used when the daemon said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    pub status: CompletionStatus,
    pub context: Option<ContextUse>,
}

/// Runs one turn on an initialized connection and returns its completion status. With the
/// daemon's socket given, Ctrl-C while the turn runs cancels it (`interrupt`).
pub fn run(
    client: &mut Client,
    request: &RunRequest,
    output: &Output,
    cancel_through: Option<&crate::socket::SocketTarget>,
) -> Result<CompletionStatus, Failure> {
    let here = crate::sessions::here(&request.workspace);
    let session_id = crate::sessions::open_in(
        client,
        (&request.workspace, here.as_deref()),
        request.mode,
        request.new_session,
        &[],
    )?;
    if let Some(name) = &request.model {
        crate::sessions::select_model(client, &session_id, name)?;
    }
    let prompt = expanded(client, &session_id, &request.prompt, output)?;
    let turn = TurnStartParams {
        session_id,
        prompt,
        pins: request.pins.clone(),
    };
    let watch = cancel_through
        .and_then(|target| crate::interrupt::watch(target, &turn.session_id, *output));
    let finished = run_in(client, &turn, request.format, output, &mut OnTheTerminal);
    drop(watch);
    finished.map(|finished| finished.status)
}

/// The request `talos run` sends: a `/NAME args` line for a custom command the session has is
/// the daemon's expansion of it (said on stderr, as the interactive session says it), so the
/// slash line itself never reaches the model; any other text is sent as typed.
fn expanded(
    client: &mut Client,
    session_id: &str,
    prompt: &str,
    output: &Output,
) -> Result<String, Failure> {
    let Some((name, arguments)) = crate::custom::split(prompt) else {
        return Ok(prompt.to_string());
    };
    match crate::custom::expand(client, session_id, name, arguments) {
        Ok(expanded) => {
            let from = if expanded.source == "workspace" {
                "a workspace command"
            } else {
                "your command"
            };
            output.err_line(&crate::render::printable_line(&format!(
                "/{name} ({from}) asks: {}",
                expanded.request
            )));
            Ok(expanded.request)
        }
        Err(Failure::Rpc(error))
            if error.code == talos_protocol::ErrorCode::InvalidParams.code() =>
        {
            output.err_line(&crate::render::printable_line(&format!(
                "/{name} is no custom command of this workspace; the line is sent as typed"
            )));
            Ok(prompt.to_string())
        }
        Err(other) => Err(other),
    }
}

/// Runs one turn in an open session, answering its approvals and its reading with `ask`.
pub fn run_in(
    client: &mut Client,
    turn_params: &TurnStartParams,
    format: Format,
    output: &Output,
    ask: &mut dyn Asks,
) -> Result<Finished, Failure> {
    let mut view = TurnView {
        output,
        format,
        ask,
        streamed: String::new(),
        current_stream: String::new(),
        stdout_mid_line: false,
        context: None,
    };
    let outcome = client.call(
        TURN_START,
        params(serde_json::to_value(turn_params)),
        &mut |message| view.on_message(message),
    );
    // A turn that broke off leaves no live line behind it.
    output.end_live();
    let status = view.finish(outcome?)?;
    Ok(Finished {
        status,
        context: view.context,
    })
}

impl TurnView<'_> {
    fn on_message(&mut self, message: Message) -> Result<Option<Message>, Failure> {
        match message.method.as_deref() {
            Some(TURN_EVENT) if message.id.is_none() => {
                self.on_event(message.params.unwrap_or(Value::Null))?;
                Ok(None)
            }
            Some(APPROVAL_REQUEST) => match message.id.clone() {
                Some(id) => self
                    .on_approval(id, message.params.unwrap_or(Value::Null))
                    .map(Some),
                None => Ok(None),
            },
            Some(CONTRACT_CHOOSE) => match message.id.clone() {
                Some(id) => self
                    .on_choose(id, message.params.unwrap_or(Value::Null))
                    .map(Some),
                None => Ok(None),
            },
            _ => Ok(refuse_request(&message)),
        }
    }

    /// Asks which reading the person means. `--json` never asks (it declined the request at
    /// `initialize`; a daemon that asks anyway gets no choice).
    fn on_choose(&mut self, id: Value, raw: Value) -> Result<Message, Failure> {
        if self.format == Format::Json {
            self.json_line(&json!({ "contractChoose": raw }))?;
            return Ok(choice::reply(id, None));
        }
        let Ok(request) = serde_json::from_value::<ContractChooseParams>(raw) else {
            return Ok(choice::reply(id, None));
        };
        self.output.end_live();
        self.end_line()?;
        let chosen = self.ask.choose(&request, self.output);
        Ok(choice::reply(id, chosen))
    }

    fn on_event(&mut self, raw: Value) -> Result<(), Failure> {
        match self.format {
            Format::Json => self.json_line(&raw),
            Format::Human => match serde_json::from_value::<TurnEventParams>(raw) {
                Ok(params) => self.show_event(params.event),
                // An event kind from a newer daemon: nothing this client can show.
                Err(_) => Ok(()),
            },
        }
    }

    fn show_event(&mut self, event: TurnEvent) -> Result<(), Failure> {
        let output = self.output;
        let palette = output.stderr_palette;
        let note = |text: &str| {
            output.err_line(&palette.paint(Style::Dim, &format!("· {}", printable(text))))
        };
        if let TurnEvent::Progress {
            tokens,
            prompt_tokens,
            ..
        } = event
        {
            // `\r` would wipe a half-printed answer line on the same terminal.
            if !self.stdout_mid_line {
                let text = progress_text(tokens, prompt_tokens);
                output.live(&palette.paint(Style::Dim, &text));
            }
            return Ok(());
        }
        // The model's reply ended, or the turn moved on: the live line has said its piece.
        output.end_live();
        match event {
            TurnEvent::StreamStart { .. } => self.current_stream.clear(),
            TurnEvent::StreamChunk { text, .. } => {
                self.out(&text)?;
                self.current_stream.push_str(&text);
                self.streamed.push_str(&text);
            }
            TurnEvent::StreamEnd { .. } => self.end_line()?,
            TurnEvent::Ok { text } | TurnEvent::Info { text } | TurnEvent::TrustedInfo { text } => {
                note(&text);
            }
            TurnEvent::Error { message } => {
                output.err_line(&format!(
                    "{} {}",
                    palette.paint(Style::Red, "error:"),
                    printable(&message)
                ));
            }
            TurnEvent::Table { columns, rows } => {
                self.end_line()?;
                self.out(&table(&columns, &rows, output.stdout_palette))?;
            }
            TurnEvent::ToolProgress { tool, message, .. } => note(&format!("{tool}: {message}")),
            TurnEvent::ApprovalRequested { description, .. } => {
                note(&format!("approval requested: {description}"));
            }
            TurnEvent::ApprovalResolved {
                decision, source, ..
            } => {
                note(&format!(
                    "approval {} ({})",
                    decision_name(decision),
                    source_name(source)
                ));
            }
            TurnEvent::Usage { .. } => self.context = ContextUse::of(&event),
            TurnEvent::Instructions { files } => {
                if let Some(line) = crate::render::instructions_line(&files) {
                    note(&line);
                }
            }
            // Drawn above, before anything else could erase it.
            TurnEvent::Progress { .. } => {}
            // The turn/start response carries the outcome; the streamed text was shown as chunks.
            // The plan and the calls' states are for clients that draw them (editors): here
            // `tool_progress` already says what each call does.
            TurnEvent::Outcome { .. }
            | TurnEvent::Streamed { .. }
            | TurnEvent::Plan { .. }
            | TurnEvent::Call { .. } => {}
        }
        Ok(())
    }

    fn on_approval(&mut self, id: Value, raw: Value) -> Result<Message, Failure> {
        if self.format == Format::Json {
            self.json_line(&json!({ "approvalRequest": raw }))?;
        }
        let request: ApprovalRequestParams = match serde_json::from_value(raw) {
            Ok(request) => request,
            Err(error) => {
                let error = RpcError::new(
                    ErrorCode::InvalidParams,
                    format!("invalid approval request: {error}"),
                );
                return Ok(Message::error_response(id, error));
            }
        };
        if self.format == Format::Human {
            // The prompt goes to stderr; keep it off the end of a half-printed answer line and
            // off the live line.
            self.output.end_live();
            self.end_line()?;
        }
        let decision = self.ask.approve(&request, self.output);
        Ok(Message::response(
            id,
            params(serde_json::to_value(ApprovalResult { decision })),
        ))
    }

    /// Shows the outcome and returns its status.
    fn finish(&mut self, raw: Value) -> Result<CompletionStatus, Failure> {
        if self.format == Format::Json {
            self.json_line(&json!({ "outcome": raw }))?;
        }
        let outcome: TurnOutcome = serde_json::from_value(raw)
            .map_err(|error| Failure::Connection(format!("invalid turn/start result: {error}")))?;
        if self.format == Format::Human {
            self.end_line()?;
            if let Some(text) =
                answer_to_print(&outcome.final_answer, &self.streamed, &self.current_stream)
            {
                self.out(text)?;
                self.end_line()?;
            }
            for file in &outcome.files {
                self.output
                    .err_line(&file_line(file, self.output.stderr_palette));
            }
            self.output
                .err_line(&status_line(&outcome, self.output.stderr_palette));
            if let Some(context) = &self.context {
                self.output
                    .err_line(&footer(context, self.output.stderr_palette));
            }
        }
        Ok(outcome.status)
    }

    fn out(&mut self, text: &str) -> Result<(), Failure> {
        if text.is_empty() {
            return Ok(());
        }
        self.output.out(text)?;
        self.stdout_mid_line = !text.ends_with('\n');
        Ok(())
    }

    /// Ends a half-written stdout line.
    fn end_line(&mut self) -> Result<(), Failure> {
        if self.stdout_mid_line {
            self.out("\n")
        } else {
            Ok(())
        }
    }

    fn json_line(&mut self, value: &Value) -> Result<(), Failure> {
        self.out(&format!("{value}\n"))
    }
}

/// The line under the outcome line: the context the turn's last model call used, dimmed.
pub fn footer(context: &ContextUse, palette: crate::render::Palette) -> String {
    palette.paint(Style::Dim, &context_line(context))
}

/// What of the final answer still needs printing: nothing when it is empty or is what was
/// already streamed (the whole turn's stream or its last stream), only the tail when the
/// runtime appended to the streamed text, else all of it (a guard replaced the answer).
fn answer_to_print<'a>(
    final_answer: &'a str,
    streamed: &str,
    last_stream: &str,
) -> Option<&'a str> {
    let answer = final_answer.trim();
    if answer.is_empty() || answer == streamed.trim() || answer == last_stream.trim() {
        return None;
    }
    for already in [streamed.trim(), last_stream.trim()] {
        if !already.is_empty()
            && let Some(tail) = answer.strip_prefix(already)
        {
            return Some(tail.trim_start()).filter(|t| !t.is_empty());
        }
    }
    Some(answer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_is_the_context_line_dimmed_only_with_colour_rows() {
        use crate::render::Palette;
        let context = ContextUse {
            used: 3_120,
            size: 4_096,
            cached: Some(2_900),
        };
        for (palette, expected) in [
            (
                Palette::PLAIN,
                "context 3,120 / 4,096 tokens (2,900 cached)",
            ),
            (
                Palette::COLOUR,
                "\x1b[2mcontext 3,120 / 4,096 tokens (2,900 cached)\x1b[0m",
            ),
        ] {
            assert_eq!(footer(&context, palette), expected);
        }
    }

    #[test]
    fn the_final_answer_is_printed_only_where_it_adds_something() {
        for (answer, streamed, last, expected) in [
            ("Done.", "Done.\n", "Done.\n", None),
            ("Done.", "Thinking...\nDone.", "Done.", None),
            ("", "", "", None),
            ("  \n", "", "", None),
            ("Done.", "", "", Some("Done.")),
            (
                "Edited a.py.",
                "Let me look.",
                "Let me look.",
                Some("Edited a.py."),
            ),
            (
                "Ramble.\n\n[Action obligation failed] x",
                "Ramble.",
                "Ramble.",
                Some("[Action obligation failed] x"),
            ),
            (
                "[Truth check] no change.\n\nRamble.",
                "Ramble.",
                "Ramble.",
                Some("[Truth check] no change.\n\nRamble."),
            ),
        ] {
            assert_eq!(
                answer_to_print(answer, streamed, last),
                expected,
                "{answer:?} {streamed:?}"
            );
        }
    }
}
