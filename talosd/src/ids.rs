//! Identifiers: unguessable random ids for sessions, turns, traces, approvals and checkpoints,
//! each its own newtype so one cannot be passed where another is meant. The daemon keeps them
//! typed in its own state and turns them into plain strings only at the wire (`to_proto` and
//! the protocol structs).
// std::fs here: reads /dev/urandom, not a workspace file.
#![allow(clippy::disallowed_methods)]

use std::borrow::Borrow;
use std::fmt;
use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Declares one id newtype: a fresh random id with its prefix, read as a `&str`, shown as
/// itself, and looked up in maps by the `&str` a request carries.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// A fresh, unguessable id.
            #[allow(clippy::new_without_default)]
            pub fn new() -> $name {
                $name(new_id($prefix))
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id as the wire carries it.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        /// Maps keyed by this id are looked up with the id string a request names.
        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

id_type!(
    /// A session (`ses-…`): the key of the daemon's sessions map.
    SessionId,
    "ses"
);
id_type!(
    /// One turn of a session (`turn-…`).
    TurnId,
    "turn"
);
id_type!(
    /// One turn's trace record (`trc-…`).
    TraceId,
    "trc"
);
id_type!(
    /// One approval request (`apr-…`), which the client may answer through `approval/respond`.
    ApprovalId,
    "apr"
);
id_type!(
    /// One checkpoint's manifest in the store (`chk-…`).
    CheckpointId,
    "chk"
);

/// `prefix-` followed by 32 hex characters from the OS's random source. If that cannot be
/// read, a hash of the time, the pid and a counter stands in (unique, not unguessable).
pub fn new_id(prefix: &str) -> String {
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !from_os {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let seed = format!(
            "{nanos}-{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let hex = talos_core::digest::sha256_hex(seed.as_bytes());
        return format!("{prefix}-{}", &hex[..32]);
    }
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("{prefix}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per id kind: its text, the prefix it must carry and the length it must have.
    fn check(a: &str, b: &str, prefix: &str) {
        assert!(a.starts_with(prefix), "{a} should start with {prefix}");
        assert_eq!(a.len(), prefix.len() + 32, "{a}");
        assert_ne!(a, b);
    }

    #[test]
    fn ids_are_prefixed_and_distinct() {
        check(&new_id("tmp"), &new_id("tmp"), "tmp-");
        check(SessionId::new().as_str(), SessionId::new().as_str(), "ses-");
        check(
            &TurnId::new().to_string(),
            &TurnId::new().to_string(),
            "turn-",
        );
        check(
            &String::from(TraceId::new()),
            &String::from(TraceId::new()),
            "trc-",
        );
        check(
            &ApprovalId::new().into_string(),
            ApprovalId::new().as_str(),
            "apr-",
        );
        check(
            CheckpointId::new().as_str(),
            CheckpointId::new().as_str(),
            "chk-",
        );
    }

    #[test]
    fn a_map_keyed_by_an_id_is_found_by_its_text() {
        let id = SessionId::new();
        let text = id.to_string();
        let map = std::collections::HashMap::from([(id, 1)]);
        assert_eq!(map.get(text.as_str()), Some(&1));
        assert_eq!(map.get("ses-other"), None);
    }
}
