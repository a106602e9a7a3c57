//! Applying the retention policy (`retention`) for the daemon: once when it starts, then every
//! hour while it serves, and on `daemon/gc`. The disk work runs off the async workers. Nothing is
//! pruned while the configuration is invalid: the limits the person set are unknown then.

use std::sync::Arc;
use std::time::Duration;

use talos_protocol::DaemonGcResult;

use crate::server::Daemon;

/// How long a workspace index may go without an update before retention removes it.
pub const INDEX_MAX_AGE_MS: u64 = 30 * 24 * 3600 * 1000;

/// How often a serving daemon applies the policy.
pub const INTERVAL: Duration = Duration::from_secs(3600);

/// Applies the policy once: checkpoints too when no turn runs, else traces and turn logs only.
pub fn run_once(daemon: &Daemon) -> Result<DaemonGcResult, String> {
    if let Some(error) = &daemon.config_error {
        return Err(format!(
            "nothing is pruned until the configuration is fixed: {error}"
        ));
    }
    let exclusive = daemon.retention.try_exclusive();
    let running = daemon.retention.running();
    let traces = daemon.home.traces();
    let checkpoints = daemon.home.checkpoints();
    let result = crate::offload::blocking(|| {
        crate::retention::sweep(
            crate::retention::Stores {
                traces: &traces,
                checkpoints: &checkpoints,
            },
            daemon.config.retention.limits(),
            crate::clock::now_ms(),
            &running,
            exclusive.as_ref(),
        )
    });
    // Persisted sessions not saved within the age limit and not open now go: their files hold
    // the requests' text, which the age limit promises not to keep.
    let mut result = result;
    let open: std::collections::HashSet<String> = daemon
        .sessions
        .lock()
        .map(|s| s.keys().map(|id| id.as_str().to_string()).collect())
        .unwrap_or_default();
    let cutoff = crate::clock::now_ms().saturating_sub(daemon.config.retention.limits().max_age_ms);
    let store = crate::session_store::SessionStore::new(daemon.home.sessions());
    let (files, bytes) = crate::offload::blocking(|| store.prune_older_than(cutoff, &open));
    result.sessions = talos_protocol::GcCount { files, bytes };
    // Workspace indexes (issue 16): those of vanished workspaces, or idle for 30 days, go.
    let index_home = daemon.home.index();
    let indexes = crate::offload::blocking(|| crate::index::prune(&index_home, INDEX_MAX_AGE_MS));
    tracing::info!(
        indexes,
        traces = result.traces.files,
        turn_logs = result.turn_logs.files,
        checkpoints = result.checkpoints.files,
        objects = result.checkpoint_objects.files,
        sessions = result.sessions.files,
        bytes_after = result.bytes_after,
        deferred = result.checkpoints_deferred,
        "retention applied"
    );
    Ok(result)
}

/// Applies the policy every [`INTERVAL`] until the daemon stops.
pub async fn periodic(daemon: Arc<Daemon>) {
    loop {
        tokio::select! {
            _ = daemon.stopping.cancelled() => return,
            _ = tokio::time::sleep(INTERVAL) => {
                if let Err(e) = run_once(&daemon) {
                    tracing::warn!(error = %e, "retention skipped");
                }
            }
        }
    }
}
