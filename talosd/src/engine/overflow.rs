//! Recognising a model server's "the prompt does not fit the context" answer, so the engine can
//! report it as `EngineError::ContextExceeded` instead of an opaque status. Pure text parsing of
//! the three shapes Talos meets: llama-server's `exceed_context_size_error` (HTTP 400, or an
//! SSE `data: {"error": ...}` event), OpenAI's `context_length_exceeded`, and vLLM's wording of
//! the same ("maximum context length is N tokens. However, you requested M tokens").

use serde_json::Value;

use super::EngineError;

/// Message phrases that say the prompt does not fit, whatever the error's `type` or `code`.
const OVERFLOW_PHRASES: [&str; 4] = [
    "exceeds the available context size",
    "larger than the max context size",
    "maximum context length",
    "context_length_exceeded",
];

/// The context-overflow error a response body describes, or `None` for any other body.
pub(crate) fn context_exceeded(body: &str) -> Option<EngineError> {
    let value: Value = serde_json::from_str(body.trim()).ok()?;
    context_exceeded_value(&value)
}

/// As [`context_exceeded`], for a body already parsed: `{"error": {...}}`, or vLLM's older
/// unwrapped `{"object": "error", "message": ...}`.
pub(crate) fn context_exceeded_value(value: &Value) -> Option<EngineError> {
    let error = match value.get("error") {
        Some(error @ Value::Object(_)) => error,
        Some(_) => return None,
        None if value.get("message").is_some() => value,
        None => return None,
    };
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let typed = error.get("type").and_then(Value::as_str) == Some("exceed_context_size_error")
        || error.get("code").and_then(Value::as_str) == Some("context_length_exceeded");
    let lowered = message.to_ascii_lowercase();
    if !typed && !OVERFLOW_PHRASES.iter().any(|p| lowered.contains(p)) {
        return None;
    }
    let (said_prompt, said_ctx) = numbers_in_message(&lowered);
    Some(EngineError::ContextExceeded {
        prompt_tokens: error
            .get("n_prompt_tokens")
            .and_then(Value::as_u64)
            .or(said_prompt),
        n_ctx: error.get("n_ctx").and_then(Value::as_u64).or(said_ctx),
        message: message.chars().take(300).collect(),
    })
}

/// (prompt tokens, context size) as an overflow message states them, from lowercase text.
fn numbers_in_message(message: &str) -> (Option<u64>, Option<u64>) {
    let n_ctx = number_after(message, "maximum context length is")
        .or_else(|| number_after(message, "context size ("));
    let prompt = number_before(message, " in the messages")
        .or_else(|| number_after(message, "resulted in"))
        .or_else(|| number_after(message, "your request has"))
        .or_else(|| number_after(message, "you requested"))
        .or_else(|| number_after(message, "request ("))
        .or_else(|| number_after(message, "input ("));
    (prompt, n_ctx)
}

/// The number that follows `marker` (after spaces and an opening parenthesis), commas allowed.
fn number_after(text: &str, marker: &str) -> Option<u64> {
    let start = text.find(marker)? + marker.len();
    let rest = text[start..].trim_start_matches([' ', '(']);
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The number that ends right before `marker` ("7000 in the messages").
fn number_before(text: &str, marker: &str) -> Option<u64> {
    let end = text.find(marker)?;
    let head = &text[..end];
    let start = head
        .rfind(|c: char| !(c.is_ascii_digit() || c == ','))
        .map_or(0, |i| i + 1);
    let digits: String = head[start..].chars().filter(char::is_ascii_digit).collect();
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (body, expected (prompt_tokens, n_ctx) when it is an overflow, or None).
    #[allow(clippy::type_complexity)]
    const ROWS: &[(&str, Option<(Option<u64>, Option<u64>)>)] = &[
        // llama-server b11434, HTTP 400 (server-task.cpp: server_task_result_error::to_json).
        (
            r#"{"error":{"code":400,"message":"request (7620 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":7620,"n_ctx":4096}}"#,
            Some((Some(7620), Some(4096))),
        ),
        // The same type without the numeric fields: the message still gives them.
        (
            r#"{"error":{"code":400,"message":"request (7620 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error"}}"#,
            Some((Some(7620), Some(4096))),
        ),
        // llama-server's other wording (a slot that cannot split its prompt).
        (
            r#"{"error":{"code":400,"message":"input (5000 tokens) is larger than the max context size (4096 tokens). skipping","type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}}"#,
            Some((Some(5000), Some(4096))),
        ),
        // OpenAI.
        (
            r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 4096 tokens. However, your messages resulted in 7620 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages"}}"#,
            Some((Some(7620), Some(4096))),
        ),
        // OpenAI's older wording, counting messages and completion apart.
        (
            r#"{"error":{"code":"context_length_exceeded","message":"This model's maximum context length is 4,096 tokens. However, you requested 8,120 tokens (7,620 in the messages, 500 in the completion).","type":"invalid_request_error"}}"#,
            Some((Some(7620), Some(4096))),
        ),
        // The code alone, with a message that states no numbers.
        (
            r#"{"error":{"code":"context_length_exceeded","message":"too long","type":"invalid_request_error"}}"#,
            Some((None, None)),
        ),
        // vLLM, wrapped.
        (
            r#"{"error":{"message":"This model's maximum context length is 4096 tokens. However, you requested 7620 tokens (7620 in the messages, 0 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}}"#,
            Some((Some(7620), Some(4096))),
        ),
        // vLLM, older and unwrapped; no split given.
        (
            r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 3000 tokens. Please reduce the length of the messages.","type":"BadRequestError","param":null,"code":400}"#,
            Some((Some(3000), Some(2048))),
        ),
        // Not overflows.
        (
            r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#,
            None,
        ),
        (
            r#"{"error":{"code":400,"message":"Failed to initialize samplers","type":"invalid_request_error"}}"#,
            None,
        ),
        (r#"{"error":"not found"}"#, None),
        (r#"{"choices":[]}"#, None),
        ("<html>502 Bad Gateway</html>", None),
        ("", None),
    ];

    #[test]
    fn overflow_bodies_are_recognised_with_their_numbers() {
        for (body, expected) in ROWS {
            let got = context_exceeded(body).map(|e| match e {
                EngineError::ContextExceeded {
                    prompt_tokens,
                    n_ctx,
                    message,
                } => {
                    assert!(!message.is_empty(), "{body}: message kept");
                    (prompt_tokens, n_ctx)
                }
                other => panic!("{body}: not ContextExceeded: {other:?}"),
            });
            assert_eq!(got, *expected, "{body}");
        }
    }

    #[test]
    fn the_display_says_what_it_knows() {
        let rows = [
            (
                Some(7620),
                Some(4096),
                "the request (7620 tokens) exceeds the model's context (4096 tokens)",
            ),
            (
                Some(7620),
                None,
                "the request (7620 tokens) exceeds the model's context",
            ),
            (
                None,
                Some(4096),
                "the request exceeds the model's context (4096 tokens)",
            ),
            (None, None, "the request exceeds the model's context"),
        ];
        for (prompt_tokens, n_ctx, text) in rows {
            let error = EngineError::ContextExceeded {
                prompt_tokens,
                n_ctx,
                message: "x".into(),
            };
            assert_eq!(error.to_string(), text);
        }
    }
}
