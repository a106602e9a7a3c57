//! `talosd --doctor`: the checks that need the daemon's configuration (issue 17, item 3), as
//! one JSON object on stdout for `talos doctor` to merge with its own: the configuration file,
//! the llama-server binary (found, runs, its version), the model file (present, size, GGUF,
//! SHA-256 for the default model), the chat template, the configured port (free, or held by
//! the server this home's daemon launched), and the home's disk use against the retention
//! limits, each configured MCP server (`mcp`: starts and lists its tools); and, for the folder it runs in, the ignore files the index walk would not read
//! (`ignore_files`, through the `Workspace` handle). Facts are gathered in `facts`; each
//! verdict is a pure `judge_*` rule with rows.
// std::fs here: the Talos home, the model and the server binary, never workspace files.
#![allow(clippy::disallowed_methods)]

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::config::{Config, ModelMode};
use crate::paths::Home;

mod facts;
mod ignore_files;
mod judge;
mod mcp;
#[cfg(test)]
mod tests;

pub use judge::{Disk, ModelFile, PortHolder, Status};

pub use crate::config::{DEFAULT_MODEL_FILE, DEFAULT_MODEL_SHA256};

/// How long `llama-server --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// One check as `talos doctor` prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub fix: String,
}

impl Check {
    pub fn new(name: &'static str, status: Status, detail: String, fix: &str) -> Check {
        Check {
            name,
            status,
            detail,
            fix: fix.to_string(),
        }
    }

    fn to_json(&self) -> Value {
        json!({"name": self.name, "status": self.status.as_str(), "detail": self.detail, "fix": self.fix})
    }
}

/// Every check, for the home and configuration file given, and the folder this runs in.
pub fn checks(home: &Home, config_file: &Path) -> Vec<Check> {
    let mut out = configured(home, config_file);
    let found = match std::env::current_dir() {
        Ok(dir) => ignore_files::found(&dir, ignore_files::WALK_TIME),
        Err(e) => ignore_files::Found::NotChecked(format!("no current folder: {e}")),
    };
    out.push(ignore_files::verdict(&found));
    out
}

/// Every configuration-dependent check.
fn configured(home: &Home, config_file: &Path) -> Vec<Check> {
    let missing = std::fs::symlink_metadata(config_file).is_err();
    let config = match Config::load(config_file) {
        Ok(config) => config,
        Err(e) => {
            return vec![
                Check::new(
                    "config",
                    Status::Fail,
                    format!("configuration error: {e}"),
                    "correct the line named (`talos config check` repeats this); the daemon refuses turns until then",
                ),
                Check::new(
                    "model",
                    Status::Warn,
                    "not checked: the configuration does not load".into(),
                    "fix the configuration first",
                ),
            ];
        }
    };
    let shown = config_file.display();
    let mut out = vec![Check::new(
        "config",
        Status::Ok,
        if missing {
            format!("{shown}: no such file; the defaults apply")
        } else {
            format!("{shown}: valid")
        },
        "",
    )];
    let several = !config.models.is_empty();
    for entry in config.model_entries() {
        let checks = model_checks(home, &entry.model);
        out.extend(checks.into_iter().map(|mut check| {
            if several {
                check.detail = format!("models.{}: {}", entry.name, check.detail);
            }
            check
        }));
    }
    out.push(judge::disk(&facts::disk(home), &config.retention));
    out.extend(mcp::checks(&config));
    out
}

/// The checks of one model's settings.
fn model_checks(home: &Home, m: &crate::config::ModelConfig) -> Vec<Check> {
    match m.mode {
        ModelMode::ConnectOnly => vec![judge::connection(
            &m.url,
            m.api_key().map(|key| key.map(|k| k.source)),
        )],
        ModelMode::Managed => {
            let default_name = Path::new(&m.path)
                .file_name()
                .is_some_and(|n| n == DEFAULT_MODEL_FILE);
            let record = crate::supervisor::launch_record(&home.state, m.port);
            vec![
                judge::server(&m.server, facts::server(&m.server, VERSION_TIMEOUT)),
                judge::model(&m.path, &facts::model(&m.path, default_name)),
                judge::template(
                    &m.chat_template_file,
                    facts::template(&m.chat_template_file),
                ),
                judge::port(m.port, facts::port(m.port, &record)),
            ]
        }
    }
}

/// `talosd --doctor`: the checks as one JSON object (`{"version": ..., "checks": [...]}`),
/// `version` being this program's, for `talos doctor` to compare with its own.
pub fn report(home: &Home, config_file: &Path) -> Value {
    let list: Vec<Value> = checks(home, config_file)
        .iter()
        .map(Check::to_json)
        .collect();
    json!({ "version": env!("CARGO_PKG_VERSION"), "checks": list })
}
