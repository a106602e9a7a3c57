//! `checkpoint:` in `config.yaml`: how large a file a checkpoint may copy. A change whose
//! checkpoint would need more is refused (fails closed), never written without one.

use serde::{Deserialize, Serialize};

/// Default `checkpoint.max_file_bytes`: 10 MiB.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 << 20;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckpointConfig {
    /// The largest single file a checkpoint copies; a change needing a larger one is refused.
    pub max_file_bytes: u64,
}

impl Default for CheckpointConfig {
    fn default() -> Self {
        CheckpointConfig {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the default is 10 MiB and the key parses under `checkpoint:`.
    #[test]
    fn max_file_bytes_defaults_to_ten_mib_and_parses() {
        assert_eq!(CheckpointConfig::default().max_file_bytes, 10_485_760);
        let config = crate::config::Config::parse("checkpoint:\n  max_file_bytes: 16\n", "t")
            .map_err(|e| e.to_string());
        assert_eq!(config.map(|c| c.checkpoint.max_file_bytes), Ok(16));
        assert!(crate::config::Config::parse("checkpoint:\n  max_bytes: 16\n", "t").is_err());
    }
}
