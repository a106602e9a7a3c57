//! Identifiers: unguessable random ids for sessions, turns, traces, approvals and checkpoints,
//! each its own newtype so one cannot be passed where another is meant. The daemon keeps them
//! typed in its own state and turns them into plain strings only at the wire (`to_proto` and
//! the protocol structs).
//!
//! Ids come only from the kernel's random source (`getrandom(2)`). When it cannot be read, no
//! id is made: the caller gets an [`IdError`] and refuses what needed the id, rather than
//! handing out a value someone could predict.

use std::borrow::Borrow;
use std::fmt;

/// The kernel's random source failed; nothing that needed the id was done.
#[derive(Debug, thiserror::Error)]
#[error("cannot make an unguessable id: the system's random source failed ({0})")]
pub struct IdError(#[source] pub std::io::Error);

/// Declares one id newtype: a fresh random id with its prefix, read as a `&str`, shown as
/// itself, and looked up in maps by the `&str` a request carries.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// A fresh, unguessable id, or an error when the random source fails.
            pub fn new() -> Result<$name, IdError> {
                new_id($prefix).map($name)
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

impl SessionId {
    /// A session id read back from disk: `ses-` and 32 lowercase hex digits, or `None`.
    pub fn parse(text: &str) -> Option<SessionId> {
        let hex = text.strip_prefix("ses-")?;
        let well_formed = hex.len() == 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| SessionId(text.to_string()))
    }
}

/// `prefix-` followed by 32 hex characters from the kernel's random source.
pub fn new_id(prefix: &str) -> Result<String, IdError> {
    id_from(prefix, kernel_random)
}

/// Fills `bytes` from `getrandom(2)`, retrying short reads and interruptions.
fn kernel_random(bytes: &mut [u8]) -> std::io::Result<()> {
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(0) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The id text from 16 bytes of `source`; a failed source is an error, never a fallback.
fn id_from(
    prefix: &str,
    source: impl FnOnce(&mut [u8]) -> std::io::Result<()>,
) -> Result<String, IdError> {
    let mut bytes = [0u8; 16];
    source(&mut bytes).map_err(IdError)?;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    Ok(format!("{prefix}-{hex}"))
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
    fn ids_are_prefixed_and_distinct() -> Result<(), IdError> {
        check(&new_id("tmp")?, &new_id("tmp")?, "tmp-");
        check(
            SessionId::new()?.as_str(),
            SessionId::new()?.as_str(),
            "ses-",
        );
        check(
            &TurnId::new()?.to_string(),
            &TurnId::new()?.to_string(),
            "turn-",
        );
        check(
            &String::from(TraceId::new()?),
            &String::from(TraceId::new()?),
            "trc-",
        );
        check(
            &ApprovalId::new()?.into_string(),
            ApprovalId::new()?.as_str(),
            "apr-",
        );
        check(
            CheckpointId::new()?.as_str(),
            CheckpointId::new()?.as_str(),
            "chk-",
        );
        Ok(())
    }

    /// Proves a failing random source gives an error naming it, never a stand-in id (before
    /// issue 11 a hash of the time, the pid and a counter was returned).
    #[test]
    fn a_failing_random_source_makes_no_id() {
        let failing = |_: &mut [u8]| -> std::io::Result<()> {
            Err(std::io::Error::other("entropy unavailable"))
        };
        let error = id_from("ses", failing).expect_err("no id without randomness");
        assert!(
            error
                .to_string()
                .contains("random source failed (entropy unavailable)"),
            "{error}"
        );
        let zeros = |b: &mut [u8]| -> std::io::Result<()> {
            b.fill(0);
            Ok(())
        };
        assert_eq!(
            id_from("ses", zeros).expect("a working source"),
            format!("ses-{}", "0".repeat(32))
        );
    }

    /// One row per text: whether it reads back as a session id (a file name is not trusted).
    #[test]
    fn only_well_formed_session_ids_parse() {
        let good = format!("ses-{}", "0123456789abcdef".repeat(2));
        for (text, parses) in [
            (good.as_str(), true),
            ("ses-0123", false),
            ("trc-0123456789abcdef0123456789abcdef", false),
            ("ses-0123456789ABCDEF0123456789abcdef", false),
            ("ses-../../../../etc/passwd0123456789a", false),
            ("", false),
        ] {
            assert_eq!(SessionId::parse(text).is_some(), parses, "{text:?}");
        }
    }

    #[test]
    fn a_map_keyed_by_an_id_is_found_by_its_text() {
        let id = SessionId::new().expect("random ids");
        let text = id.to_string();
        let map = std::collections::HashMap::from([(id, 1)]);
        assert_eq!(map.get(text.as_str()), Some(&1));
        assert_eq!(map.get("ses-other"), None);
    }
}
