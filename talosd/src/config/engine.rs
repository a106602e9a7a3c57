//! `model.engine` and `model.native_tools` (issue 25): which kind of server `model.url` is, and
//! whether tools are offered natively. Each is checked when the file is read; any other value
//! is refused with the values it takes.

use serde::{Deserialize, Serialize};

/// `model.engine`: `auto` (probe `/props`, then `/v1/models`), `llama.cpp`, or `openai` (an
/// OpenAI-compatible server: vLLM, SGLang, a hosted endpoint).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum EngineChoice {
    #[default]
    Auto,
    LlamaCpp,
    OpenAi,
}

impl EngineChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            EngineChoice::Auto => "auto",
            EngineChoice::LlamaCpp => "llama.cpp",
            EngineChoice::OpenAi => "openai",
        }
    }
}

impl TryFrom<String> for EngineChoice {
    type Error = String;
    fn try_from(name: String) -> Result<EngineChoice, String> {
        [
            EngineChoice::Auto,
            EngineChoice::LlamaCpp,
            EngineChoice::OpenAi,
        ]
        .into_iter()
        .find(|e| e.as_str() == name)
        .ok_or_else(|| {
            format!("model.engine `{name}` is not supported; use auto, llama.cpp or openai")
        })
    }
}

impl Serialize for EngineChoice {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// `model.native_tools`: `auto` (llama.cpp: what its chat template supports; an OpenAI
/// server: yes), `on`, or `off` (tools described in the prompt, calls written as text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum NativeTools {
    #[default]
    Auto,
    On,
    Off,
}

impl NativeTools {
    pub fn as_str(self) -> &'static str {
        match self {
            NativeTools::Auto => "auto",
            NativeTools::On => "on",
            NativeTools::Off => "off",
        }
    }
}

impl TryFrom<String> for NativeTools {
    type Error = String;
    fn try_from(name: String) -> Result<NativeTools, String> {
        [NativeTools::Auto, NativeTools::On, NativeTools::Off]
            .into_iter()
            .find(|e| e.as_str() == name)
            .ok_or_else(|| {
                format!("model.native_tools `{name}` is not supported; use auto, on or off")
            })
    }
}

impl Serialize for NativeTools {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}
