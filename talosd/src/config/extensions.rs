//! `instructions:` and `hooks:` in `config.yaml` (issue 28): which project instruction files a
//! turn reads and how much of them, and the commands that may narrow a call (`pre_call`) or
//! are told a turn's outcome (`post_turn`). Neither can widen what a turn may do.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct InstructionsConfig {
    /// File names looked for in each folder from the workspace root down to the session's
    /// directory, then in the Talos config dir. `[]` reads none.
    pub files: Vec<String>,
    /// All instruction files together are cut at this many bytes.
    pub max_bytes: u64,
}

impl Default for InstructionsConfig {
    fn default() -> Self {
        InstructionsConfig {
            files: vec!["AGENTS.md".into()],
            max_bytes: talos_core::instructions::DEFAULT_MAX_BYTES as u64,
        }
    }
}

impl InstructionsConfig {
    pub(super) fn problem(&self) -> Option<String> {
        if self.max_bytes == 0 {
            return Some(
                "instructions.max_bytes must be at least 1; set instructions.files: [] to read none"
                    .into(),
            );
        }
        self.files
            .iter()
            .find(|name| !talos_core::instructions::plain_name(name))
            .map(|name| {
                format!(
                    "instructions.files holds `{}`: each entry is one file name, without a folder",
                    name.escape_debug()
                )
            })
    }
}

/// One hook: a program and its arguments, never a shell line.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct HookConfig {
    pub command: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct HooksConfig {
    /// Asked about each proposed call after the ladder; may only narrow it.
    pub pre_call: Vec<HookConfig>,
    /// Told each turn's outcome; cannot change it.
    pub post_turn: Vec<HookConfig>,
    /// How long one hook may take; past it, a `pre_call` hook denies.
    pub timeout_secs: u64,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            pre_call: Vec::new(),
            post_turn: Vec::new(),
            timeout_secs: 5,
        }
    }
}

impl HooksConfig {
    pub(super) fn problem(&self) -> Option<String> {
        if self.timeout_secs == 0 {
            return Some("hooks.timeout_secs must be at least 1".into());
        }
        let lists = [("pre_call", &self.pre_call), ("post_turn", &self.post_turn)];
        for (list, hooks) in lists {
            for (i, hook) in hooks.iter().enumerate() {
                let Some(program) = hook.command.first().filter(|p| !p.trim().is_empty()) else {
                    return Some(format!(
                        "hooks.{list}[{i}].command must name a program (a list: [program, args...])"
                    ));
                };
                // A relative path would run whichever file each workspace holds under that
                // name, before anyone approved anything.
                if program.contains('/') && !program.starts_with('/') {
                    return Some(format!(
                        "hooks.{list}[{i}].command names `{}`, a relative path: give the program's full path, or a name found on talosd's PATH",
                        program.escape_debug()
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    fn refusal(text: &str) -> String {
        Config::parse(text, "t").map_or_else(|e| e.to_string(), |_| "accepted".into())
    }

    #[test]
    fn defaults_read_agents_md_within_32_kib_and_hooks_have_5_seconds() {
        let config = Config::default();
        assert_eq!(config.instructions.files, vec!["AGENTS.md"]);
        assert_eq!(config.instructions.max_bytes, 32_768);
        assert_eq!(config.hooks.timeout_secs, 5);
        assert!(config.hooks.pre_call.is_empty());
    }

    #[test]
    fn bad_instruction_and_hook_settings_are_refused_by_name() {
        let rows = [
            ("instructions:\n  max_bytes: 0\n", "instructions.max_bytes"),
            (
                "instructions:\n  files: [../x.md]\n",
                "instructions.files holds `../x.md`",
            ),
            ("hooks:\n  timeout_secs: 0\n", "hooks.timeout_secs"),
            (
                "hooks:\n  pre_call:\n    - command: []\n",
                "hooks.pre_call[0].command",
            ),
            ("hooks:\n  pre_call:\n    - command: \"rm -rf /\"\n", "t:"),
            (
                "hooks:\n  pre_call:\n    - command: [./check.sh]\n",
                "hooks.pre_call[0].command names `./check.sh`, a relative path",
            ),
            (
                "hooks:\n  post_turn:\n    - command: [tools/after, -v]\n",
                "hooks.post_turn[0].command names `tools/after`, a relative path",
            ),
        ];
        for (text, expected) in rows {
            let got = refusal(text);
            assert!(got.contains(expected), "{text:?}: {got}");
        }
        let ok = Config::parse(
            "hooks:\n  pre_call:\n    - command: [/usr/bin/guard, --strict]\n",
            "t",
        );
        assert!(ok.is_ok_and(|c| c.hooks.pre_call[0].command.len() == 2));
    }
}
