//! Filesystem work reached from async code runs where it cannot stall other connections: on a
//! multi-threaded runtime (the daemon's) the worker hands its other tasks to the rest of the
//! pool first (`block_in_place`); elsewhere (a current-thread test runtime) it simply runs.
//! Effects that own their inputs go to the blocking pool instead (`turn::calls`).

/// Runs `work`, which may block on the disk, without holding up the runtime's other tasks.
pub fn blocking<T>(work: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}
