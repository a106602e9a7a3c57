//! `models:` and `model.default` (issue 25): several named models in one daemon. Each entry of
//! `models:` has every setting `model:` has (managed or `connect_only`, its own server, key,
//! context and constraint); `model.default` names the one a session uses until it selects
//! another, and `model.max_running` how many managed entries may run at once. Without
//! `models:`, `model:` is the one model, named [`IMPLICIT_MODEL`].

use super::{Config, Invalid, ModelConfig, ModelMode};

/// The name of the one model when `models:` is empty.
pub const IMPLICIT_MODEL: &str = "default";

/// The longest entry name.
const MAX_NAME: usize = 64;

/// Settings of `model:` that an entry may not hold.
const TOP_ONLY: [&str; 2] = ["default", "max_running"];

/// One model as the daemon runs it: its name and its settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelEntryConfig {
    pub name: String,
    pub model: ModelConfig,
}

impl Config {
    /// Every model, the default first and the others by name.
    pub fn model_entries(&self) -> Vec<ModelEntryConfig> {
        if self.models.is_empty() {
            return vec![ModelEntryConfig {
                name: IMPLICIT_MODEL.into(),
                model: self.model.clone(),
            }];
        }
        let default = self.default_model();
        let mut entries: Vec<ModelEntryConfig> = self
            .models
            .iter()
            .map(|(name, model)| ModelEntryConfig {
                name: name.clone(),
                model: model.clone(),
            })
            .collect();
        entries.sort_by_key(|e| e.name != default);
        entries
    }

    /// The name of the model a session uses until it selects another.
    pub fn default_model(&self) -> String {
        match self.models.keys().next() {
            None => IMPLICIT_MODEL.into(),
            Some(only) if self.model.default.is_empty() => only.clone(),
            Some(_) => self.model.default.clone(),
        }
    }

    /// The settings of the default model.
    pub fn default_entry(&self) -> ModelEntryConfig {
        let mut entries = self.model_entries();
        entries.swap_remove(0)
    }

    /// The checks of `models:` and `model.default` (with `models:` empty, of `model:` alone).
    pub(super) fn validate_models(&self) -> Result<(), Invalid> {
        let models = |m: String| Invalid::Models(m);
        let names = || self.models.keys().cloned().collect::<Vec<_>>().join(", ");
        if self.models.is_empty() {
            let default = &self.model.default;
            if !default.is_empty() && default != IMPLICIT_MODEL {
                return Err(models(format!(
                    "model.default `{default}` names no entry: models: is empty"
                )));
            }
            return self.model.validate();
        }
        if let Some(key) = set_beside_models(&self.model) {
            return Err(models(format!(
                "model.{key} is set beside models:; with models: each entry holds its own settings, and model: only default and max_running"
            )));
        }
        if self.model.max_running == 0 {
            return Err(Invalid::MaxRunningZero);
        }
        for (name, entry) in &self.models {
            check_entry(name, entry)?;
        }
        let default = &self.model.default;
        if default.is_empty() && self.models.len() > 1 {
            return Err(models(format!(
                "model.default must name the model sessions start with, one of {}",
                names()
            )));
        }
        if !default.is_empty() && !self.models.contains_key(default) {
            return Err(models(format!(
                "model.default `{default}` is not an entry of models: ({})",
                names()
            )));
        }
        if self.model.max_running > 1 {
            self.check_ports()?;
        }
        Ok(())
    }

    /// Managed entries that may run together need ports of their own.
    fn check_ports(&self) -> Result<(), Invalid> {
        let managed: Vec<(&String, u16)> = self
            .models
            .iter()
            .filter(|(_, m)| m.mode == ModelMode::Managed)
            .map(|(name, m)| (name, m.port))
            .collect();
        for (i, (a, port)) in managed.iter().enumerate() {
            if let Some((b, _)) = managed[i + 1..].iter().find(|(_, p)| p == port) {
                return Err(Invalid::Models(format!(
                    "models.{a} and models.{b} are both managed on port {port}; with model.max_running above 1 give each its own port"
                )));
            }
        }
        Ok(())
    }
}

/// One entry's name and settings.
fn check_entry(name: &str, entry: &ModelConfig) -> Result<(), Invalid> {
    let in_entry = |problem: Invalid| Invalid::InEntry {
        name: name.to_string(),
        problem: Box::new(problem),
    };
    let usable = !name.is_empty()
        && name.len() <= MAX_NAME
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !usable {
        return Err(Invalid::Models(format!(
            "models: `{name}` is not a usable name; use letters, digits, `.`, `_` and `-` (at most {MAX_NAME})"
        )));
    }
    let defaults = ModelConfig::default();
    if entry.default != defaults.default || entry.max_running != defaults.max_running {
        return Err(in_entry(Invalid::Models(format!(
            "{} belong to model:, not to an entry",
            TOP_ONLY.join(" and ")
        ))));
    }
    entry.validate().map_err(in_entry)
}

/// The first setting of `model:` other than `default` and `max_running` that differs from
/// its default, as config.yaml spells it.
fn set_beside_models(model: &ModelConfig) -> Option<String> {
    let given = serde_json::to_value(model).ok()?;
    let defaults = serde_json::to_value(ModelConfig::default()).ok()?;
    let (given, defaults) = (given.as_object()?, defaults.as_object()?);
    given
        .iter()
        .filter(|(key, _)| !TOP_ONLY.contains(&key.as_str()))
        .find(|(key, value)| defaults.get(*key) != Some(*value))
        .map(|(key, _)| key.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "model:\n  default: small\nmodels:\n  small: {}\n  gpu:\n    mode: connect_only\n    url: https://gpu.example:8443\n";

    #[test]
    fn entries_list_the_default_first_and_without_models_the_one_model() {
        let one = Config::parse("", "c").unwrap();
        let names: Vec<String> = one.model_entries().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["default"]);
        let two = Config::parse(TWO, "c").unwrap();
        let names: Vec<String> = two.model_entries().into_iter().map(|e| e.name).collect();
        assert_eq!(names, ["small", "gpu"]);
        assert_eq!(two.default_entry().model.mode, ModelMode::Managed);
        let only = Config::parse("models:\n  gpu:\n    mode: connect_only\n", "c").unwrap();
        assert_eq!(only.default_model(), "gpu");
    }

    #[test]
    fn models_refusals_name_the_setting() {
        let rows = [
            (
                "models:\n  a: {}\n  b: {}\n",
                "model.default must name the model sessions start with, one of a, b",
            ),
            (
                "model:\n  default: c\nmodels:\n  a: {}\n",
                "model.default `c` is not an entry of models: (a)",
            ),
            (
                "model:\n  default: big\n",
                "model.default `big` names no entry: models: is empty",
            ),
            (
                "model:\n  default: a\n  ctx: 4096\nmodels:\n  a: {}\n",
                "model.ctx is set beside models:",
            ),
            (
                "models:\n  a:\n    default: a\n",
                "models.a: default and max_running belong to model:, not to an entry",
            ),
            (
                "models:\n  a:\n    port: 0\n",
                "models.a: model.port must be a port number, not 0",
            ),
            (
                "models:\n  \"a b\": {}\n",
                "models: `a b` is not a usable name",
            ),
            (
                "model:\n  default: a\n  max_running: 2\nmodels:\n  a: {}\n  b: {}\n",
                "are both managed on port",
            ),
            (
                "model:\n  default: a\n  max_running: 0\nmodels:\n  a: {}\n",
                "model.max_running must be at least 1",
            ),
        ];
        for (text, want) in rows {
            let error = Config::parse(text, "c").unwrap_err().to_string();
            assert!(error.contains(want), "{text:?}: {error}");
        }
        let apart = "model:\n  default: a\n  max_running: 2\nmodels:\n  a:\n    port: 18001\n  b:\n    port: 18002\n";
        assert!(Config::parse(apart, "c").is_ok());
        assert!(Config::parse(TWO, "c").is_ok());
    }
}
