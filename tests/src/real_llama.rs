//! The real llama-server parts that `packaging/get-llama.sh` installs, for the tests and the
//! benchmark that need them: found under `$TALOS_LLAMA_HOME`, or else
//! `$HOME/.local/share/talos/llama`. Tests with them run only when `TALOS_REAL_MODEL=1`.

use std::path::PathBuf;

/// The message a real-model test prints when it does not run.
pub const SKIPPED: &str = "skipped: set TALOS_REAL_MODEL=1 (needs packaging/get-llama.sh)";

/// The installed llama-server, model and tool-capable chat template.
#[derive(Debug, Clone)]
pub struct RealParts {
    pub home: PathBuf,
    pub server: PathBuf,
    pub model: PathBuf,
    pub template: PathBuf,
}

/// Whether the real-model tests are asked for.
pub fn enabled() -> bool {
    std::env::var("TALOS_REAL_MODEL").is_ok_and(|v| v == "1")
}

impl RealParts {
    /// The parts, or a message naming what is missing and how to get it.
    pub fn find() -> Result<RealParts, String> {
        let home = match std::env::var_os("TALOS_LLAMA_HOME") {
            Some(home) => PathBuf::from(home),
            None => std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(".local/share/talos/llama"))
                .ok_or("neither TALOS_LLAMA_HOME nor HOME is set")?,
        };
        let parts = RealParts {
            server: home.join("bin/llama-server"),
            model: home.join("models/SmolLM2-135M-Instruct.Q4_1.gguf"),
            template: home.join("templates/Qwen-Qwen2.5-7B-Instruct.jinja"),
            home,
        };
        let missing: Vec<String> = [&parts.server, &parts.model, &parts.template]
            .into_iter()
            .filter(|path| !path.is_file())
            .map(|path| path.display().to_string())
            .collect();
        if missing.is_empty() {
            Ok(parts)
        } else {
            Err(format!(
                "missing {}; run packaging/get-llama.sh (or set TALOS_LLAMA_HOME)",
                missing.join(", ")
            ))
        }
    }
}

/// Threads for a real server: every core, at most 8.
pub fn threads() -> u32 {
    std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(1).min(8))
        .unwrap_or(2)
}
