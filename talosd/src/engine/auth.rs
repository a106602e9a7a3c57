//! The model server's key in what Talos says (issue 25): a refusal (HTTP 401 or 403) becomes one
//! sentence naming the status, what the server said and the setting to look at, and nothing a
//! server echoes back carries the key. Pure text; the key is sent by `engine.rs` as
//! `Authorization: Bearer`, in a header value marked sensitive.

use serde_json::Value;

/// What stands for the key wherever a server echoed it.
const WITHHELD: &str = "[key withheld]";

/// `text` with every occurrence of `key` replaced.
pub fn redact(text: &str, key: Option<&str>) -> String {
    match key {
        Some(key) if !key.is_empty() => text.replace(key, WITHHELD),
        _ => text.to_string(),
    }
}

/// The message for a refused request. `note` says where the key came from, or why the
/// configured one could not be used; `None`: no key is configured.
pub fn refusal(status: u16, body: &str, key: Option<&str>, note: Option<&str>) -> String {
    let said = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.chars().take(120).collect());
    let said = redact(said.trim(), key);
    let what = if said.is_empty() {
        format!("HTTP {status}")
    } else {
        format!("HTTP {status}: {said}")
    };
    match (key, note) {
        (Some(_), Some(note)) => {
            format!("the model server refused the request ({what}); it did not accept {note}")
        }
        (None, Some(problem)) => {
            format!("the model server refused the request ({what}); no key was sent: {problem}")
        }
        (_, None) => format!(
            "the model server refused the request ({what}); it wants an API key: set model.api_key_env (the name of an environment variable holding it) or model.api_key_file"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_names_the_status_the_setting_and_never_the_key() {
        let llama =
            r#"{"error":{"message":"Invalid API Key","type":"authentication_error","code":401}}"#;
        let openai = r#"{"error":{"message":"Incorrect API key provided: sk-secret-123. You can find your key...","type":"invalid_request_error"}}"#;
        let rows: [(&str, Option<&str>, Option<&str>, &str); 4] = [
            (
                llama,
                None,
                None,
                "the model server refused the request (HTTP 401: Invalid API Key); it wants an API key: set model.api_key_env (the name of an environment variable holding it) or model.api_key_file",
            ),
            (
                llama,
                Some("sk-secret-123"),
                Some("the key from model.api_key_env TALOS_KEY"),
                "the model server refused the request (HTTP 401: Invalid API Key); it did not accept the key from model.api_key_env TALOS_KEY",
            ),
            (
                openai,
                Some("sk-secret-123"),
                Some("the key from model.api_key_file /k"),
                "the model server refused the request (HTTP 401: Incorrect API key provided: [key withheld]. You can find your key...); it did not accept the key from model.api_key_file /k",
            ),
            (
                "",
                None,
                Some(
                    "model.api_key_env TALOS_KEY: the environment variable is not set for talosd (or is empty)",
                ),
                "the model server refused the request (HTTP 401); no key was sent: model.api_key_env TALOS_KEY: the environment variable is not set for talosd (or is empty)",
            ),
        ];
        for (body, key, note, expected) in rows {
            let message = refusal(401, body, key, note);
            assert_eq!(message, expected);
            assert!(!message.contains("sk-secret-123"));
        }
    }
}
