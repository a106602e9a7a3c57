//! The OpenAI-style `tools` entries of a chat request, one per tool of the turn's surface,
//! made from the core's catalogue (`talos_core::tools`): the model's wire, not the protocol's.

use serde_json::{Map, Value, json};
use talos_core::tools::{ParamKind, ToolId};

/// The OpenAI-style `tools` entry for one tool.
pub fn tool_schema(tool: ToolId) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in tool.params() {
        let kind = match p.kind {
            ParamKind::String => "string",
            ParamKind::Integer => "integer",
            ParamKind::Boolean => "boolean",
            ParamKind::Array => "array",
        };
        properties.insert(
            p.name.into(),
            match p.kind {
                ParamKind::Array => json!({"type": kind, "description": p.description, "items": {"type": "object"}, "minItems": 1}),
                ParamKind::String | ParamKind::Integer | ParamKind::Boolean => json!({"type": kind, "description": p.description}),
            },
        );
        if p.required {
            required.push(p.name);
        }
    }
    json!({
        "type": "function",
        "function": {
            "name": tool.name(),
            "description": tool.description(),
            "parameters": {"type": "object", "properties": properties, "required": required},
        }
    })
}
