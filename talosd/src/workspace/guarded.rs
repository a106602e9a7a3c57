//! One check-and-write at a time per file, across every session of the daemon (issue 26,
//! defect 3). Two sessions that change one file each compare the file with the bytes their
//! person approved against and then write; without a lock both could pass the comparison
//! before either wrote, and the later write would silently undo the earlier one. Under the
//! lock the second finds the file changed and writes nothing.
//!
//! The lock is a fixed set of stripes keyed by the workspace root and the path inside it, so
//! unrelated files rarely wait for each other and nothing grows with the number of files.
//! It orders Talos's own writers only: an editor saving the file at the same instant is not
//! held off (the comparison then catches what it can, as before).

use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

use talos_core::turn::call::WriteFailure;

use super::Workspace;

const STRIPES: usize = 64;
static LOCKS: [Mutex<()>; STRIPES] = [const { Mutex::new(()) }; STRIPES];

impl Workspace {
    /// Holds the write lock of `location` (a path inside this workspace) until dropped.
    pub fn lock_file(&self, location: &str) -> MutexGuard<'static, ()> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.root().hash(&mut hasher);
        location.hash(&mut hasher);
        let stripe = usize::try_from(hasher.finish() % STRIPES as u64).unwrap_or(0);
        // A writer that panicked left nothing half-done that the lock guards: go on.
        LOCKS[stripe]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Writes `bytes` to `shown` if the file still holds `expected` (`None`: it must not
    /// exist), then reads it back; the whole under the file's write lock.
    pub fn write_if_unchanged(
        &self,
        shown: &str,
        expected: Option<&[u8]>,
        bytes: &[u8],
    ) -> Result<Vec<u8>, WriteFailure> {
        // The boundary again, at the moment of IO, and the bytes the person approved against.
        let now = self
            .recheck(shown, shown)
            .map_err(|e| WriteFailure::Recheck(e.to_string()))?;
        let location = now.location.unwrap_or_else(|| shown.to_string());
        let _one_writer = self.lock_file(&location);
        let current = self
            .read(&location, shown)
            .map_err(|e| WriteFailure::Recheck(e.to_string()))?;
        if current.as_deref() != expected {
            return Err(WriteFailure::Stale);
        }
        self.write_atomic(&location, shown, bytes)
            .map_err(|e| WriteFailure::Write(e.to_string()))?;
        match self.read(&location, shown) {
            Ok(bytes) => Ok(bytes.unwrap_or_default()),
            Err(e) => Err(WriteFailure::ReadBack(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves two writers that both saw the same file never both win: in every round one
    /// change lands and the other is refused as stale, and the file holds the winner's bytes.
    /// Without the lock this loses an update within a few hundred rounds on two cores.
    #[test]
    fn two_sessions_racing_on_one_file_never_lose_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        let (mut both_won, mut lost) = (0, 0);
        for round in 0..100 {
            let original = format!("TIMEOUT = {round}\n");
            std::fs::write(root.join("settings.py"), &original).unwrap();
            let barrier = std::sync::Barrier::new(2);
            let results: Vec<(Result<Vec<u8>, WriteFailure>, String)> = std::thread::scope(|s| {
                let handles: Vec<_> = ["a", "b"]
                    .into_iter()
                    .map(|who| {
                        let (root, barrier, original) = (&root, &barrier, &original);
                        s.spawn(move || {
                            let ws = Workspace::open(root).unwrap();
                            let mine = format!("TIMEOUT = {round} # {who}\n");
                            barrier.wait();
                            let result = ws.write_if_unchanged(
                                "settings.py",
                                Some(original.as_bytes()),
                                mine.as_bytes(),
                            );
                            (result, mine)
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let winners: Vec<&String> = results
                .iter()
                .filter(|(r, _)| r.is_ok())
                .map(|(_, mine)| mine)
                .collect();
            let on_disk = std::fs::read_to_string(root.join("settings.py")).unwrap();
            if winners.len() > 1 {
                both_won += 1;
            }
            if winners.len() == 1 && on_disk != *winners[0] {
                lost += 1;
            }
            for (result, _) in &results {
                if let Err(failure) = result {
                    assert!(matches!(failure, WriteFailure::Stale), "{failure:?}");
                }
            }
        }
        assert_eq!((both_won, lost), (0, 0), "rounds where a change was lost");
    }
}
