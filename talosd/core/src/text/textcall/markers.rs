//! The markers that make text look like a tool call: the keys that may hold a tool's name and
//! the XML wrapper tags models put around a call. The vocabulary below the lenient JSON
//! scanner, the shape rules and the block scanner, which all recognise calls by it.

/// Keys that may hold the tool name, in the order they are tried.
pub(crate) const NAME_KEYS: [&str; 5] = ["name", "function", "function_name", "tool_name", "tool"];

/// The deprecated XML wrappers, matched exactly as `<tag>`.
const XML_TAGS: [&str; 4] = ["tool_call", "function_call", "tool", "function"];

/// The tag of a deprecated XML wrapper opening at the start of `text`.
pub(crate) fn xml_tag_at(text: &str) -> Option<&'static str> {
    let rest = text.strip_prefix('<')?;
    XML_TAGS.into_iter().find(|tag| {
        rest.strip_prefix(tag)
            .is_some_and(|after| after.starts_with('>'))
    })
}
