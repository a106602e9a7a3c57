//! The `traces` and `retention` sections of `config.yaml`: whether a plain-text turn log is
//! written beside each trace, and the limits the home's traces, turn logs and checkpoints are
//! kept under (see docs/traces.md).

use serde::{Deserialize, Serialize};

/// `traces:` in `config.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TracesConfig {
    /// Write `NNNNNN-<traceId>.log` (the request and the committed answer, in words) beside
    /// each trace. Default true.
    pub turn_log: bool,
}

/// `retention:` in `config.yaml`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionConfig {
    /// Traces, turn logs and checkpoints older than this are removed. Default 30, at least 1.
    pub max_age_days: u64,
    /// Traces, turn logs and checkpoints together are kept under this many bytes, oldest
    /// removed first. Default 1 GiB, at least 1.
    pub max_bytes: u64,
}

impl Default for TracesConfig {
    fn default() -> Self {
        TracesConfig { turn_log: true }
    }
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            max_age_days: 30,
            max_bytes: 1 << 30,
        }
    }
}

impl RetentionConfig {
    /// Why the limits cannot be used, naming the setting.
    pub fn problem(&self) -> Option<&'static str> {
        if self.max_age_days == 0 {
            Some("retention.max_age_days must be at least 1")
        } else if self.max_bytes == 0 {
            Some("retention.max_bytes must be at least 1")
        } else {
            None
        }
    }

    /// The limits as the core's retention plan takes them.
    pub fn limits(&self) -> talos_core::retention::Limits {
        talos_core::retention::Limits {
            max_age_ms: self.max_age_days.saturating_mul(86_400_000),
            max_bytes: self.max_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;

    #[test]
    fn defaults_keep_a_turn_log_and_thirty_days_within_one_gib() {
        let config = Config::parse("", "config.yaml").unwrap();
        assert!(config.traces.turn_log);
        assert_eq!(config.retention.max_age_days, 30);
        assert_eq!(config.retention.max_bytes, 1_073_741_824);
    }

    #[test]
    fn settings_are_read_and_bad_ones_are_refused_by_name() {
        let config = Config::parse(
            "traces:\n  turn_log: false\nretention:\n  max_age_days: 7\n  max_bytes: 4096\n",
            "config.yaml",
        )
        .unwrap();
        assert!(!config.traces.turn_log);
        assert_eq!(
            (config.retention.max_age_days, config.retention.max_bytes),
            (7, 4096)
        );
        for (text, expected) in [
            ("retention:\n  max_age_days: 0\n", "retention.max_age_days"),
            ("retention:\n  max_bytes: 0\n", "retention.max_bytes"),
            ("retention:\n  keep: 3\n", "unknown field `keep`"),
            ("traces:\n  turn_log: maybe\n", "turn_log"),
        ] {
            let error = Config::parse(text, "config.yaml").unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }
}
