//! Open-file limits (issue 26, defect 4): each session holds a descriptor on its workspace, so
//! the daemon raises its soft `RLIMIT_NOFILE` to the hard limit when it starts, and refuses a
//! new session past a cap derived from the limit (with room kept for connections, traces,
//! checkpoints, the index and the model server's sockets), with a clear error rather than new
//! connections that hang and turns that fail without a trace.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// Descriptors kept for everything that is not a session's workspace handle.
pub const RESERVED_DESCRIPTORS: u64 = 256;
/// The most sessions one daemon holds, however high the limit.
pub const MAX_SESSIONS: usize = 4096;
/// The fewest, however low the limit.
const MIN_SESSIONS: usize = 16;

/// Raises the soft open-file limit to the hard one; the soft limit in force afterwards.
pub fn raise_open_files() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (limit.current, limit.maximum)
        && soft < hard
    {
        let raised = Rlimit {
            current: Some(hard),
            maximum: Some(hard),
        };
        if let Err(e) = setrlimit(Resource::Nofile, raised) {
            tracing::warn!(soft, hard, error = %e, "cannot raise the open-file limit");
        }
    }
    getrlimit(Resource::Nofile).current
}

/// The session cap for a soft open-file limit (`None`: unlimited).
pub fn session_cap(soft: Option<u64>) -> usize {
    match soft {
        None => MAX_SESSIONS,
        Some(soft) => usize::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS))
            .unwrap_or(MAX_SESSIONS)
            .clamp(MIN_SESSIONS, MAX_SESSIONS),
    }
}

/// The cap under the limit in force now.
pub fn current_session_cap() -> usize {
    session_cap(getrlimit(Resource::Nofile).current)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_cap_leaves_room_under_the_limit_rows() {
        let rows = [
            (Some(1024), 768),
            (Some(256), 16),
            (Some(0), 16),
            (Some(65_536), 4096),
            (None, 4096),
        ];
        for (soft, cap) in rows {
            assert_eq!(session_cap(soft), cap, "{soft:?}");
        }
    }
}
