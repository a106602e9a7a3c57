//! The per-call decoding constraint (issue 15): what the plan already knows before the model
//! speaks (the surface, the phase, the expected and forbidden targets, the files the turn has
//! read) compiled into a JSON schema for the next model reply, which llama-server turns into a
//! grammar. The constraint is an aid to the model, never a replacement for a check: every
//! reply, constrained or not, goes through the same checks (`check::check_call`, the edit's
//! own checks, the ladder, discipline). See docs/decisions/0030-decoding-constraint.md.
//!
//! The reply the schema admits is one JSON object: a call `{"name": <tool>, "arguments":
//! {...}}` (a bare call object, which `textcall` reads as a call written as text), or, where
//! the plan allows a final answer, `{"answer": "<prose>"}`, which [`unwrap_answer`] turns back
//! into prose before the reply is parsed.

use serde_json::{Map, Value, json};

use crate::planning::tools::{ParamKind, ToolId};
use crate::proposal::change_rule::{self, ChangeRule};
use crate::request::change::ChangeAsk;
use crate::request::phase::Phase;
use crate::text::protected::protected_kind;

/// `model.constrain`: how much of the plan the request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// No constraint: the model's reply is free.
    Off,
    /// Tool names limited to the surface, required arguments present, `path` of a change
    /// limited to the expected targets.
    Names,
    /// `names`, `path` of `talos.read_file` limited to the named files that exist (when there
    /// are any), and `old_string` of `talos.edit_file` limited to text the file holds as read
    /// (whole lines, or runs of up to [`MAX_RUN`] consecutive lines, each occurring once).
    Strict,
}

impl Level {
    /// The name as `config.yaml` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Off => "off",
            Level::Names => "names",
            Level::Strict => "strict",
        }
    }

    /// `off`, `names` or `strict`; anything else is `None`.
    pub fn parse(name: &str) -> Option<Level> {
        [Level::Off, Level::Names, Level::Strict]
            .into_iter()
            .find(|l| l.as_str() == name)
    }
}

/// The longest run of consecutive lines offered as an `old_string`.
pub const MAX_RUN: usize = 3;

/// At most this many `old_string` candidates per file (the grammar stays small).
pub const MAX_CANDIDATES: usize = 256;

/// What the next model call is, as the constraint needs to know it.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// The surface of this call.
    pub tools: &'a [ToolId],
    pub phase: Phase,
    /// The contract allows a change.
    pub mutation_allowed: bool,
    /// The contract's expected targets (where a change may land when it names any).
    pub expected: &'a [String],
    /// The contract's forbidden targets.
    pub forbidden: &'a [String],
    /// Named workspace files that exist (the daemon checked); the protected ones are dropped
    /// here. A read's `path` on the strict level is one of them (any path when empty); an
    /// edit's `path` is an expected target among them or among `read_texts`.
    pub readable: &'a [String],
    /// Files and their text as this turn read them.
    pub read_texts: &'a [(String, String)],
    /// Files whose content this turn already knows and that did not change since (read, or
    /// written by this turn): a read of one is not admitted again (issue 24).
    pub known: &'a [String],
    /// What the changes must put in place (`crate::proposal::change_rule`).
    pub rules: &'a [ChangeRule],
    /// The plan allows a final answer now (no unmet obligation needs a tool).
    pub answer_allowed: bool,
}

impl Step<'_> {
    /// Every named file that exists is known (and there is at least one).
    fn named_known(&self) -> bool {
        !self.readable.is_empty() && self.readable.iter().all(|p| self.known.contains(p))
    }

    /// A change in APPLY whose expected targets that exist are all known, or whose every
    /// target's whole content the request gives ("Create VERSION containing 2.0.0"): nothing
    /// is left to read before the change. A read of a file the request gives in full is at
    /// best wasted and, for a file not there yet, a failure a small model repeats.
    fn ready_to_change(&self) -> bool {
        let existing: Vec<&String> = self
            .expected
            .iter()
            .filter(|t| self.readable.contains(t) || self.read_texts.iter().any(|(p, _)| p == *t))
            .collect();
        self.mutation_allowed
            && self.phase == Phase::Apply
            && (self.given_whole()
                || (!existing.is_empty() && existing.iter().all(|t| self.known.contains(t))))
    }

    /// New files whose whole content is the request's ("Create .nvmrc containing 20"): the
    /// write of each is the one call that does the change. A batch of free objects, a folder or
    /// a move would only give a small model room to run out its reply.
    fn creates_given_whole(&self) -> bool {
        self.given_whole()
            && !self
                .expected
                .iter()
                .any(|t| self.readable.contains(t) || self.read_texts.iter().any(|(p, _)| p == t))
    }

    /// Every expected target's whole content is the request's.
    fn given_whole(&self) -> bool {
        !self.expected.is_empty()
            && self
                .expected
                .iter()
                .all(|t| change_rule::rule_for(self.rules, t).is_some_and(ChangeRule::is_content))
    }
}

/// The JSON schema for the next reply, or `None` when there is nothing to constrain (level
/// `off`, or a turn with no tools).
pub fn compile(level: Level, step: &Step<'_>) -> Option<Value> {
    if level == Level::Off || step.tools.is_empty() {
        return None;
    }
    // A question whose named files are read: the answer, nothing else (issue 24).
    if !step.mutation_allowed && step.answer_allowed && step.named_known() {
        return Some(answer_schema());
    }
    let reads_done = step.ready_to_change();
    let mut variants: Vec<Value> = Vec::new();
    for &tool in step.tools {
        if reads_done && !tool.mutates() && tool != ToolId::RunCommand {
            continue;
        }
        if step.creates_given_whole() && step.phase == Phase::Apply && tool != ToolId::WriteFile {
            continue;
        }
        variants.extend(tool_variants(level, tool, step));
    }
    if step.answer_allowed || variants.is_empty() {
        variants.push(answer_schema());
    }
    Some(match variants.len() {
        1 => variants.remove(0),
        _ => json!({"anyOf": variants}),
    })
}

fn answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"answer": {"type": "string", "minLength": 1}},
        "required": ["answer"],
        "additionalProperties": false,
    })
}

/// Whether the strict level leaves the model only the choice of the line for an edit of
/// `path`: a replacement rule whose old value the file as read holds once in a line.
pub fn pins_new_text(level: Level, step: &Step<'_>, path: &str) -> bool {
    level == Level::Strict
        && step.tools.contains(&ToolId::EditFile)
        && step.phase == Phase::Apply
        && !replacement_pairs(step, path).is_empty()
}

/// The (old, new) lines the request's rule admits for `path` as read.
fn replacement_pairs(step: &Step<'_>, path: &str) -> Vec<(String, String)> {
    let Some(rule) = change_rule::rule_for(step.rules, path) else {
        return Vec::new();
    };
    step.read_texts
        .iter()
        .find(|(p, _)| p == path)
        .map(|(_, text)| change_rule::replacements_of(rule, text))
        .unwrap_or_default()
}

/// Whether a whole-file write of `path` would replace an existing file where the request
/// asked for a change of some of its lines (a key, a value, a symbol): never offered.
fn small_change_of_existing(step: &Step<'_>, path: &str) -> bool {
    let exists =
        step.readable.iter().any(|p| p == path) || step.read_texts.iter().any(|(p, _)| p == path);
    exists && change_rule::rule_for(step.rules, path).is_some_and(|r| !r.is_content())
}

/// The prose of a reply that is exactly `{"answer": "..."}` (the constraint's final answer).
pub fn unwrap_answer(content: &str) -> Option<String> {
    let value: Value = serde_json::from_str(content.trim()).ok()?;
    let object = value.as_object()?;
    if object.len() != 1 {
        return None;
    }
    object.get("answer")?.as_str().map(str::to_string)
}

/// The prose of a constrained answer cut before its end (`{"answer": "The parser retu`, the
/// reply limit reached): the JSON string's prefix, unescaped, so the person never sees the
/// constraint's JSON. `None` when the reply does not open as an answer.
pub fn salvage_answer(content: &str) -> Option<String> {
    let rest = content.trim_start().strip_prefix('{')?.trim_start();
    let rest = rest.strip_prefix("\"answer\"")?.trim_start();
    let rest = rest.strip_prefix(':')?.trim_start().strip_prefix('"')?;
    let mut out = String::new();
    let mut chars = rest.chars();
    while let Some(c) = chars.next() {
        let unescaped = match c {
            '"' => break,
            '\\' => match chars.next() {
                Some('n') => '\n',
                Some('t') => '\t',
                Some('r') => '\r',
                Some('b') => '\u{8}',
                Some('f') => '\u{c}',
                Some('u') => match escaped_char(&mut chars) {
                    Some(c) => c,
                    None => break,
                },
                Some(other) => other,
                None => break,
            },
            c => c,
        };
        out.push(unescaped);
    }
    Some(out)
}

/// The character of a `\uXXXX` escape (a surrogate pair's second half read too); `None` when
/// the text was cut inside it.
fn escaped_char(chars: &mut std::str::Chars<'_>) -> Option<char> {
    let first = hex_unit(chars)?;
    if !(0xD800..0xDC00).contains(&first) {
        return char::from_u32(first);
    }
    let (Some('\\'), Some('u')) = (chars.next(), chars.next()) else {
        return None;
    };
    let second = hex_unit(chars)?.checked_sub(0xDC00)?;
    char::from_u32(0x10000 + ((first - 0xD800) << 10) + second)
}

/// Four hex digits of a `\u` escape; `None` when fewer are left or they are not hex.
fn hex_unit(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let hex: String = chars.by_ref().take(4).collect();
    if hex.len() != 4 {
        return None;
    }
    u32::from_str_radix(&hex, 16).ok()
}

/// The call shapes one tool may take on this step (none when no path could pass).
fn tool_variants(level: Level, tool: ToolId, step: &Step<'_>) -> Vec<Value> {
    if tool.mutates() && (!step.mutation_allowed || step.phase != Phase::Apply) {
        return Vec::new();
    }
    let mut properties = Map::new();
    let mut required: Vec<&'static str> = Vec::new();
    for p in tool.params().into_iter().filter(|p| p.required) {
        required.push(p.name);
        let schema = match p.name {
            "path" | "from" | "to" => free_path(),
            "new_name" => json!({"type": "string", "maxLength": 255, "pattern": NAME_PATTERN}),
            _ => param_schema(p.kind),
        };
        properties.insert(p.name.into(), schema);
    }
    let paths = match path_choice(level, tool, step) {
        PathChoice::Free => None,
        PathChoice::OneOf(paths) if paths.is_empty() => return Vec::new(),
        PathChoice::OneOf(paths) => Some(paths),
    };
    let per_path = level == Level::Strict && tool == ToolId::EditFile;
    match paths {
        Some(paths) if per_path => paths
            .iter()
            .flat_map(|path| edit_variants(tool, &properties, &required, step, path))
            .collect(),
        // A file whose change the request names is edited, never rewritten whole.
        Some(paths) if level == Level::Strict && tool == ToolId::WriteFile => paths
            .iter()
            .filter(|path| !small_change_of_existing(step, path))
            .map(|path| {
                let mut props = properties.clone();
                props.insert("path".into(), json!({"const": path}));
                if let Some(ChangeRule {
                    ask: ChangeAsk::Content { content },
                    ..
                }) = change_rule::rule_for(step.rules, path)
                {
                    props.insert("content".into(), json!({"const": content}));
                }
                call_schema(tool, props, &required)
            })
            .collect(),
        Some(paths) => {
            let paths: Vec<String> = if tool == ToolId::WriteFile {
                paths
                    .into_iter()
                    .filter(|path| !small_change_of_existing(step, path))
                    .collect()
            } else {
                paths
            };
            if paths.is_empty() {
                return Vec::new();
            }
            properties.insert("path".into(), json!({"enum": paths}));
            vec![call_schema(tool, properties, &required)]
        }
        None => vec![call_schema(tool, properties, &required)],
    }
}

/// The strict level's edits of `path`: with a replacement rule, each line holding the old value
/// paired with exactly that line replaced; else any line (or run) the file holds once as
/// `old_string`, with the model's own `new_string`. None when no edit of the file could apply.
fn edit_variants(
    tool: ToolId,
    properties: &Map<String, Value>,
    required: &[&str],
    step: &Step<'_>,
    path: &str,
) -> Vec<Value> {
    let mut props = properties.clone();
    props.insert("path".into(), json!({"const": path}));
    let pairs = replacement_pairs(step, path);
    if !pairs.is_empty() {
        return pairs
            .into_iter()
            .map(|(old, new)| {
                let mut props = props.clone();
                props.insert("old_string".into(), json!({"const": old}));
                props.insert("new_string".into(), json!({"const": new}));
                call_schema(tool, props, required)
            })
            .collect();
    }
    if let Some((_, text)) = step.read_texts.iter().find(|(p, _)| p == path) {
        let runs = old_string_candidates(text);
        if runs.is_empty() {
            return Vec::new();
        }
        props.insert("old_string".into(), json!({"enum": runs}));
    }
    vec![call_schema(tool, props, required)]
}

fn call_schema(tool: ToolId, properties: Map<String, Value>, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"const": tool.name()},
            "arguments": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            },
        },
        "required": ["name", "arguments"],
        "additionalProperties": false,
    })
}

fn param_schema(kind: ParamKind) -> Value {
    match kind {
        ParamKind::String => json!({"type": "string", "minLength": 1}),
        ParamKind::Integer => json!({"type": "integer", "minimum": 1}),
        ParamKind::Boolean => json!({"type": "boolean"}),
        ParamKind::Array => json!({"type": "array", "items": {"type": "object"}, "minItems": 1}),
    }
}

/// A path not known in advance: printable characters a workspace path uses, never empty,
/// never a control character (the lexical path check refuses those).
pub const PATH_PATTERN: &str = "^[A-Za-z0-9_.@+,=~ /-]+$";

/// A new name for a rename: one path segment, not `.` or `..`.
pub const NAME_PATTERN: &str = "^[A-Za-z0-9_@+,=~-][A-Za-z0-9_.@+,=~ -]*$";

fn free_path() -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": 255, "pattern": PATH_PATTERN})
}

enum PathChoice {
    Free,
    OneOf(Vec<String>),
}

/// Which `path` values a tool's call may carry on this step.
fn path_choice(level: Level, tool: ToolId, step: &Step<'_>) -> PathChoice {
    let has_path = tool.params().iter().any(|p| p.name == "path" && p.required);
    if !has_path {
        return PathChoice::Free;
    }
    let allowed = |p: &&String| {
        protected_kind(p).is_none() && !step.forbidden.iter().any(|f| f == *p) && !p.is_empty()
    };
    let exists = |p: &&String| {
        step.readable.contains(p) || step.read_texts.iter().any(|(read, _)| read == *p)
    };
    match tool {
        // An edit changes an existing file: a named target that does not exist is offered to
        // `talos.write_file` only (the edit would fail with "File not found").
        ToolId::EditFile if !step.expected.is_empty() => PathChoice::OneOf(
            step.expected
                .iter()
                .filter(allowed)
                .filter(exists)
                .cloned()
                .collect(),
        ),
        ToolId::WriteFile | ToolId::DeletePath | ToolId::RenamePath
            if !step.expected.is_empty() =>
        {
            PathChoice::OneOf(step.expected.iter().filter(allowed).cloned().collect())
        }
        // A named file already known is not read again (issue 24).
        ToolId::ReadFile if level == Level::Strict && !step.readable.is_empty() => {
            PathChoice::OneOf(
                step.readable
                    .iter()
                    .filter(allowed)
                    .filter(|p| !step.known.contains(p))
                    .cloned()
                    .collect(),
            )
        }
        _ => PathChoice::Free,
    }
}

/// The `old_string` values the strict level offers for a file: each non-blank line and each
/// run of up to [`MAX_RUN`] consecutive lines (joined with `\n`), kept only when the text
/// occurs exactly once in the file (so `edit::apply_edit` finds it unambiguously), first lines
/// first, at most [`MAX_CANDIDATES`].
pub fn old_string_candidates(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut out: Vec<String> = Vec::new();
    for len in 1..=MAX_RUN {
        for start in 0..lines.len() {
            if start + len > lines.len() {
                break;
            }
            let run = lines[start..start + len].join("\n");
            let run = run.trim_end_matches('\r');
            if run.trim().is_empty()
                || text.matches(run).count() != 1
                || out.iter().any(|o| o == run)
            {
                continue;
            }
            out.push(run.to_string());
            if out.len() == MAX_CANDIDATES {
                return out;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
