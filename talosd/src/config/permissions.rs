//! `permissions` in `config.yaml`: each rule's fields parsed with the config, so that a
//! bad effect, tool, risk, phase or glob is a parse error naming its line, never a rule that
//! silently allows. Lists accept a single value too (`tools: talos.write_file`). Beside the
//! rules, `allow_invisible_path_characters` (off by default).

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, IntoDeserializer, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use talos_core::plan::Phase;
use talos_core::rules::{Effect, Glob, Rule};
use talos_core::tools::{self, Risk, ToolId};

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PermissionsConfig {
    pub rules: Vec<RuleConfig>,
    /// `permissions.allow_invisible_path_characters`: let a proposed path hold bidirectional,
    /// zero-width or other invisible characters. Off by default: such a path is refused
    /// before approval, because the person cannot see what it names. When on, the approval
    /// still carries a warning naming each character.
    pub allow_invisible_path_characters: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    pub effect: EffectName,
    #[serde(default)]
    pub tools: List<ToolName>,
    #[serde(default)]
    pub risks: List<RiskName>,
    #[serde(default)]
    pub phases: List<PhaseName>,
    #[serde(default)]
    pub paths: List<GlobPattern>,
    #[serde(default)]
    pub within_workspace: Option<bool>,
    #[serde(default)]
    pub reason: Option<String>,
}

impl PermissionsConfig {
    /// The rules as the core matches them.
    pub fn rules(&self) -> Vec<Rule> {
        self.rules
            .iter()
            .map(|r| Rule {
                effect: r.effect.0,
                tools: r
                    .tools
                    .0
                    .iter()
                    .filter_map(|t| match &t.0 {
                        ToolChoice::Own(id) => Some(*id),
                        ToolChoice::Mcp(_) => None,
                    })
                    .collect(),
                mcp_tools: r
                    .tools
                    .0
                    .iter()
                    .filter_map(|t| match &t.0 {
                        ToolChoice::Mcp(name) => Some(name.clone()),
                        ToolChoice::Own(_) => None,
                    })
                    .collect(),
                risks: r.risks.0.iter().map(|t| t.0).collect(),
                phases: r.phases.0.iter().map(|t| t.0).collect(),
                paths: r.paths.0.iter().map(|t| t.0.clone()).collect(),
                within_workspace: r.within_workspace,
                reason: r
                    .reason
                    .clone()
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| "permission rule".into()),
            })
            .collect()
    }
}

/// One value or a list of them.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        List(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ListVisitor<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a value or a list of values")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<List<T>, E> {
                T::deserialize(v.into_deserializer()).map(|t| List(vec![t]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut out = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    out.push(item);
                }
                Ok(List(out))
            }
        }
        deserializer.deserialize_any(ListVisitor(PhantomData))
    }
}

/// Always written as a list.
impl<T: Serialize> Serialize for List<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for item in &self.0 {
            seq.serialize_element(item)?;
        }
        seq.end()
    }
}

/// Defines a newtype read from a string through a parse function, and written back as the
/// name `$show` gives.
macro_rules! from_str_newtype {
    ($name:ident, $inner:ty, $expecting:literal, $parse:expr, $show:expr) => {
        #[derive(Debug, Clone, PartialEq)]
        pub struct $name(pub $inner);

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let text = String::deserialize(deserializer)?;
                let parse: fn(&str) -> Result<$inner, String> = $parse;
                parse(&text)
                    .map($name)
                    .map_err(|e| de::Error::custom(format!("{e} (expected {})", $expecting)))
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let show: fn(&$inner) -> &str = $show;
                serializer.serialize_str(show(&self.0))
            }
        }
    };
}

from_str_newtype!(
    EffectName,
    Effect,
    "allow, ask or deny",
    |s| match s.trim().to_lowercase().as_str() {
        "allow" => Ok(Effect::Allow),
        "ask" => Ok(Effect::Ask),
        "deny" => Ok(Effect::Deny),
        _ => Err(format!("invalid permission rule effect `{s}`")),
    },
    |effect| match effect {
        Effect::Allow => "allow",
        Effect::Ask => "ask",
        Effect::Deny => "deny",
    }
);

/// A rule's tool: one of Talos's own, or an MCP server's by its qualified name
/// (`mcp.fs.read_file`, or `mcp.fs.*` for every tool of the server).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolChoice {
    Own(ToolId),
    Mcp(String),
}

from_str_newtype!(
    ToolName,
    ToolChoice,
    "a tool name such as talos.write_file or mcp.fs.read_file",
    |s| match s.strip_prefix("mcp.") {
        Some(rest) if mcp_pattern(rest) => Ok(ToolChoice::Mcp(s.to_string())),
        Some(_) => Err(format!(
            "`{s}` is not an MCP tool name: write mcp.SERVER.TOOL or mcp.SERVER.*"
        )),
        None => tools::resolve_name(s, false)
            .tool()
            .map(ToolChoice::Own)
            .ok_or_else(|| format!("unknown tool `{s}` in a permission rule")),
    },
    |tool| match tool {
        ToolChoice::Own(id) => id.name(),
        ToolChoice::Mcp(name) => name.as_str(),
    }
);

/// `SERVER.TOOL` or `SERVER.*` after `mcp.`.
fn mcp_pattern(rest: &str) -> bool {
    let Some((server, tool)) = rest.split_once('.') else {
        return false;
    };
    crate::config::usable_server_name(server)
        && (tool == "*" || talos_core::mcp::usable_tool_name(tool))
}

from_str_newtype!(
    RiskName,
    Risk,
    "read_only, write or destructive",
    |s| match s.trim().to_lowercase().as_str() {
        "read_only" | "readonly" | "read-only" => Ok(Risk::ReadOnly),
        "write" => Ok(Risk::Write),
        "destructive" => Ok(Risk::Destructive),
        _ => Err(format!("invalid risk `{s}`")),
    },
    |risk| match risk {
        Risk::ReadOnly => "read_only",
        Risk::Write => "write",
        Risk::Destructive => "destructive",
    }
);

from_str_newtype!(
    PhaseName,
    Phase,
    "inspect, apply or verify",
    |s| match s.trim().to_lowercase().as_str() {
        "inspect" => Ok(Phase::Inspect),
        "apply" => Ok(Phase::Apply),
        "verify" => Ok(Phase::Verify),
        _ => Err(format!("invalid phase `{s}`")),
    },
    |phase| match phase {
        Phase::Inspect => "inspect",
        Phase::Apply => "apply",
        Phase::Verify => "verify",
    }
);

from_str_newtype!(
    GlobPattern,
    Glob,
    "a path glob such as docs/**",
    |s| { Glob::new(s).map_err(|e| e.to_string()) },
    |glob| glob.as_str()
);

#[cfg(test)]
mod tests {
    use crate::config::Config;

    /// Proves a rule serializes (for docs/configuration.md's tidy test) to names the parser
    /// reads back as the same rule, and that every field appears, unset ones as null or [].
    #[test]
    fn a_rule_serializes_to_what_parses_back() {
        let text = "permissions:\n  rules:\n    - effect: ASK\n      tools: create_file\n      risks: [read-only, destructive]\n      phases: [Verify]\n      paths: [\"./docs/**\"]\n      within_workspace: false\n      reason: why\n    - effect: deny\n";
        let config = Config::parse(text, "c").unwrap();
        let written = serde_yaml_ng::to_string(&config).unwrap();
        assert_eq!(Config::parse(&written, "c").unwrap(), config, "{written}");
        let rules = serde_json::to_value(&config.permissions.rules).unwrap();
        assert_eq!(
            rules,
            serde_json::json!([
                {"effect": "ask", "tools": ["talos.write_file"], "risks": ["read_only", "destructive"],
                 "phases": ["verify"], "paths": ["docs/**"], "within_workspace": false, "reason": "why"},
                {"effect": "deny", "tools": [], "risks": [], "phases": [], "paths": [],
                 "within_workspace": null, "reason": null}
            ])
        );
    }
}
