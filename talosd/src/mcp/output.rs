//! What an MCP server says, made safe to show and to hand to a model: tool names checked
//! (`^[A-Za-z0-9_-]{1,64}$`, anything else is skipped with its name escaped), descriptions
//! capped and escaped, call results joined into text, non-text blocks summarised, control
//! characters other than `\n` and `\t` escaped, and the text capped. Pure: values in, values out.

use rmcp::model::{CallToolResult, ContentBlock, Tool};

use super::{Listing, McpOutput, McpTool};

/// The longest description kept, in bytes.
pub const MAX_DESCRIPTION: usize = 1024;
/// The most tools one server may offer; more are skipped.
pub const MAX_TOOLS: usize = 256;

/// `text` with every control character except `\n` and `\t` (and the Unicode format and
/// bidirectional controls) written as an escape (`\u{1b}`), so nothing reaches a terminal raw.
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if (c.is_control() && c != '\n' && c != '\t') || is_invisible_format(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Bidirectional controls, zero-width characters and other invisible format characters.
fn is_invisible_format(c: char) -> bool {
    matches!(c,
        '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}'
        | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}' | '\u{061C}' | '\u{180E}')
}

/// `text` cut to at most `cap` bytes on a character boundary; whether it was cut.
pub fn cap_text(text: &mut String, cap: usize) -> bool {
    if text.len() <= cap {
        return false;
    }
    let mut end = cap;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    true
}

/// Whether a tool name may be offered.
pub fn usable_tool_name(name: &str) -> bool {
    talos_core::mcp::usable_tool_name(name)
}

/// The tools of `server` as Talos offers them, and why the others are not.
pub fn listing(server: &str, tools: Vec<Tool>) -> Listing {
    let mut listing = Listing::default();
    for tool in tools {
        let name = tool.name.to_string();
        if !usable_tool_name(&name) {
            listing.skipped.push(format!(
                "mcp.{server}: the tool `{}` is not offered: its name is not letters, digits, `_` and `-` (at most 64)",
                name.escape_default()
            ));
            continue;
        }
        if listing.tools.len() >= MAX_TOOLS {
            listing.skipped.push(format!(
                "mcp.{server}.{name} is not offered: the server lists more than {MAX_TOOLS} tools"
            ));
            continue;
        }
        let mut description = escape_controls(tool.description.as_deref().unwrap_or(""));
        cap_text(&mut description, MAX_DESCRIPTION);
        let read_only_hint = tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        listing.tools.push(McpTool {
            server: server.to_string(),
            name,
            description,
            input_schema: serde_json::Value::Object((*tool.input_schema).clone()),
            read_only_hint,
            destructive_hint: tool.annotations.as_ref().and_then(|a| a.destructive_hint),
        });
    }
    listing
}

/// One call's result as text: text blocks joined by newlines, other blocks summarised,
/// escaped, capped at `cap` bytes.
pub fn output(result: &CallToolResult, cap: usize) -> McpOutput {
    let mut text = String::new();
    for block in &result.content {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&block_text(block));
        // Stop copying well past the cap: the rest would be cut anyway.
        if text.len() > cap.saturating_mul(2) {
            break;
        }
    }
    if result.content.is_empty()
        && let Some(structured) = &result.structured_content
    {
        text = structured.to_string();
    }
    let mut text = escape_controls(&text);
    let truncated = cap_text(&mut text, cap);
    McpOutput {
        text,
        is_error: result.is_error.unwrap_or(false),
        truncated,
    }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(t) => t.text.clone(),
        ContentBlock::Image(i) => {
            format!("[image {}, {} bytes]", i.mime_type, decoded_len(&i.data))
        }
        ContentBlock::Audio(a) => {
            format!("[audio {}, {} bytes]", a.mime_type, decoded_len(&a.data))
        }
        ContentBlock::Resource(r) => format!("[embedded resource {}]", resource_uri(r)),
        ContentBlock::ResourceLink(r) => format!("[resource link {}]", r.uri),
        // rmcp's enum is non-exhaustive: a kind it adds later is named, not shown raw.
        _ => "[content of another kind]".into(),
    }
}

fn resource_uri(resource: &rmcp::model::EmbeddedResource) -> String {
    serde_json::to_value(&resource.resource)
        .ok()
        .and_then(|v| v.get("uri").and_then(|u| u.as_str()).map(str::to_string))
        .unwrap_or_default()
}

/// The size base64 `data` decodes to.
fn decoded_len(data: &str) -> usize {
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_text_is_capped_on_a_boundary() {
        let rows = [
            ("plain\ttext\n", "plain\ttext\n"),
            ("\u{1b}[31mred", "\\u{1b}[31mred"),
            ("a\u{202e}b", "a\\u{202e}b"),
            ("nul\0", "nul\\u{0}"),
        ];
        for (input, want) in rows {
            assert_eq!(escape_controls(input), want);
        }
        let mut text = "ééé".to_string();
        assert!(cap_text(&mut text, 3));
        assert_eq!(text, "é");
    }

    #[test]
    fn tool_names_rows() {
        let rows = [
            ("echo", true),
            ("get-sum_2", true),
            ("", false),
            ("a.b", false),
            ("has space", false),
            ("bell\u{7}", false),
            ("rtl\u{202e}", false),
        ];
        for (name, ok) in rows {
            assert_eq!(usable_tool_name(name), ok, "{name:?}");
        }
        assert!(!usable_tool_name(&"x".repeat(65)));
    }
}
