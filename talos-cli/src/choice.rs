//! The reading prompt: a `contract/choose` shown on stderr like an approval (the request, then
//! `Change config.py? [c=change, q=only answer a question]`), and one line of the terminal read
//! as the person's choice. Only a clear `c` or `q` chooses: an empty line, anything else, end
//! of input and a read error choose nothing, and the daemon ends the turn CONTRACT_AMBIGUOUS
//! without a guess. `talos run` asks only on a terminal and never with `--json` (it declines
//! the request at `initialize` instead: [`DECLINED_WITHOUT_A_TERMINAL`]).

use std::io::{self, BufRead, IsTerminal};

use serde_json::Value;
use talos_protocol::{
    CONTRACT_CHOOSE, ContractChooseParams, ContractChooseResult, ErrorCode, Message, ReadingChoice,
    RpcError,
};

use crate::render::{Output, Style, printable};

/// What `talos run` declines at `initialize` when it cannot ask (`--json`, no terminal).
pub const DECLINED_WITHOUT_A_TERMINAL: [&str; 1] = [CONTRACT_CHOOSE];

/// The question asked after the request is shown.
pub fn question(request: &ContractChooseParams) -> String {
    format!(
        "{} [c=change, q={}] ",
        printable(&request.change.description),
        printable(&request.question.description.to_lowercase())
    )
}

/// The choice a line of input means; `None` (no choice) for anything but a clear answer, and
/// for end of input or a read error.
pub fn parse_choice(line: Option<&str>) -> Option<ReadingChoice> {
    match line?.trim().to_lowercase().as_str() {
        "c" | "change" => Some(ReadingChoice::Change),
        "q" | "question" => Some(ReadingChoice::Question),
        _ => None,
    }
}

/// The block shown before the question.
pub fn describe(request: &ContractChooseParams, output: &Output) -> String {
    let header = "the request could mean a change or only a question:";
    format!(
        "{}\n  request: {}\n",
        output.stderr_palette.paint(Style::Yellow, header),
        printable(&request.request)
    )
}

/// Whether `talos run` can ask here: a human turn with a terminal on stdin.
pub fn can_ask(human: bool) -> bool {
    human && io::stdin().is_terminal()
}

/// Shows the request and the question on stderr and reads one line of stdin.
pub fn ask(request: &ContractChooseParams, output: &Output) -> Option<ReadingChoice> {
    output.err(&describe(request, output));
    output.err(&question(request));
    let mut line = String::new();
    let prompting = crate::interrupt::Prompting::begin();
    let read = io::stdin().lock().read_line(&mut line);
    drop(prompting);
    let answer = match read {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.as_str()),
    };
    if answer.is_none() {
        output.err("\n");
    }
    let choice = parse_choice(answer);
    if choice.is_none() {
        output.err_line("· no choice: the turn ends without a guess");
    }
    choice
}

/// The reply to a `contract/choose` request `id`: the choice, or an error when there is none
/// (the daemon reads an error as no choice).
pub fn reply(id: Value, choice: Option<ReadingChoice>) -> Message {
    match choice.and_then(|choice| serde_json::to_value(ContractChooseResult { choice }).ok()) {
        Some(result) => Message::response(id, result),
        None => Message::error_response(
            id,
            RpcError::new(ErrorCode::InvalidRequest, "no choice was made"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request() -> ContractChooseParams {
        serde_json::from_value(json!({
            "turnId": "t1", "sessionId": "s1", "request": "I think DEBUG in config.py should change",
            "change": {"targets": ["config.py"], "description": "Change config.py?"},
            "question": {"description": "Only answer a question"}
        }))
        .unwrap()
    }

    /// Proves only a clear `c` or `q` chooses; everything else is no choice.
    #[test]
    fn only_a_clear_answer_chooses() {
        for (line, expected) in [
            (Some("c\n"), Some(ReadingChoice::Change)),
            (Some(" Change \r\n"), Some(ReadingChoice::Change)),
            (Some("q\n"), Some(ReadingChoice::Question)),
            (Some("QUESTION"), Some(ReadingChoice::Question)),
            (Some("\n"), None),
            (Some("y\n"), None),
            (Some("cq\n"), None),
            (None, None),
        ] {
            assert_eq!(parse_choice(line), expected, "{line:?}");
        }
    }

    /// Proves the question names the change and offers both readings.
    #[test]
    fn the_question_names_both_readings() {
        assert_eq!(
            question(&request()),
            "Change config.py? [c=change, q=only answer a question] "
        );
    }

    /// Proves no choice is an error reply, and a choice its result.
    #[test]
    fn the_reply_is_the_choice_or_an_error() {
        let chosen = reply(json!(3), Some(ReadingChoice::Question));
        assert_eq!(chosen.result, Some(json!({"choice": "question"})));
        let none = reply(json!(3), None);
        assert!(none.result.is_none() && none.error.is_some());
    }
}
