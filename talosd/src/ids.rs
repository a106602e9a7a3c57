//! Identifiers: unguessable random ids for sessions, turns, traces and approvals.
// std::fs here: reads /dev/urandom, not a workspace file.
#![allow(clippy::disallowed_methods)]

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

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
    #[test]
    fn ids_are_prefixed_and_distinct() {
        let a = super::new_id("apr");
        let b = super::new_id("apr");
        assert!(a.starts_with("apr-") && a.len() == 36);
        assert_ne!(a, b);
    }
}
