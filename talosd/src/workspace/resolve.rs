//! The ladder's facts about a path: its text checked by `talos_core::pathname`, then walked
//! from the root descriptor one component at a time (`statat` without following, `readlinkat`
//! for links), so a symlink inside the root is followed to where it lands and one that leaves
//! (absolute, through `..`, or dangling) fails closed. These are facts for the decision; the
//! kernel checks the path again when it is opened.

use std::collections::VecDeque;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use talos_core::ladder::PathFacts;
use talos_core::pathname;
use talos_core::protected::protected_kind;

use super::{MAX_HOPS, Resolved, Workspace};

fn refused(raw: &str, problem: &str) -> Resolved {
    Resolved {
        facts: PathFacts {
            relative: Some(raw.to_string()),
            escapes: true,
            problem: Some(problem.to_string()),
            protected: protected_kind(raw),
            hard_links: 0,
        },
        location: None,
        final_is_symlink: false,
    }
}

/// Where a walk from the root ended.
struct Followed {
    /// The real segments, symlinks followed; missing ones kept as written.
    done: Vec<String>,
    /// The last written segment was itself a symlink.
    final_is_symlink: bool,
    /// The link count of the regular file the path lands on; 0 for anything else.
    hard_links: u64,
}

const DANGLING: &str = "symlink whose target does not exist";
const LEAVES: &str = "symlink leaves the workspace";
const UNINSPECTABLE: &str = "path cannot be inspected";

impl Workspace {
    /// Resolves `raw` (as the model or a person wrote it) beneath the root.
    pub fn resolve(&self, raw: &str) -> Resolved {
        let lexical = match pathname::workspace_segments(raw) {
            Ok(segments) => segments,
            Err(problem) => return refused(raw, problem.message()),
        };
        let lexical_relative = lexical.join("/");
        match self.follow(lexical) {
            Ok(Followed {
                done,
                final_is_symlink,
                hard_links,
            }) => {
                let relative =
                    pathname::joined(&done.iter().map(String::as_str).collect::<Vec<_>>());
                let protected =
                    protected_kind(&relative).or_else(|| protected_kind(&lexical_relative));
                Resolved {
                    facts: PathFacts {
                        relative: Some(relative.clone()),
                        escapes: false,
                        problem: None,
                        protected,
                        hard_links,
                    },
                    location: Some(relative),
                    final_is_symlink,
                }
            }
            Err(problem) => refused(raw, problem),
        }
    }

    /// Walks `lexical` from the root: the real segments (links followed), whether the last
    /// written segment was itself a link, and the link count of the regular file it lands on.
    /// Missing segments are kept as written.
    fn follow(&self, lexical: Vec<&str>) -> Result<Followed, &'static str> {
        let mut pending: VecDeque<String> = lexical.into_iter().map(str::to_string).collect();
        let mut done: Vec<String> = Vec::new();
        let mut current: Option<OwnedFd> = None;
        let mut from_target = 0usize;
        let mut hops = 0usize;
        let mut final_is_symlink = false;
        let mut hard_links = 0;
        while let Some(part) = pending.pop_front() {
            let in_target = from_target > 0;
            from_target = from_target.saturating_sub(1);
            match part.as_str() {
                "" | "." => continue,
                ".." => {
                    if done.pop().is_none() {
                        return Err(LEAVES);
                    }
                    current = self.reopen(&done)?;
                    continue;
                }
                _ => {}
            }
            let at = current.as_ref().map_or(self.root_fd(), AsFd::as_fd);
            let stat = match rustix::fs::statat(at, part.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) if in_target || from_target > 0 => return Err(DANGLING),
                Err(Errno::NOENT) => {
                    done.push(part);
                    done.extend(pending);
                    return Ok(Followed {
                        done,
                        final_is_symlink: false,
                        hard_links: 0,
                    });
                }
                Err(_) if in_target => return Err(DANGLING),
                Err(_) => return Err(UNINSPECTABLE),
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink => {
                    hops += 1;
                    if hops > MAX_HOPS {
                        return Err(DANGLING);
                    }
                    if !in_target {
                        final_is_symlink = pending.is_empty();
                    }
                    let target = rustix::fs::readlinkat(at, part.as_str(), Vec::new())
                        .map_err(|_| UNINSPECTABLE)?;
                    let target = target.to_str().map_err(|_| UNINSPECTABLE)?.to_string();
                    let relative = if target.starts_with('/') {
                        let inside = Path::new(&target)
                            .strip_prefix(&self.root)
                            .map_err(|_| LEAVES)?;
                        done.clear();
                        current = None;
                        inside.to_str().ok_or(UNINSPECTABLE)?.to_string()
                    } else {
                        target
                    };
                    let parts: Vec<String> = relative
                        .split('/')
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .collect();
                    from_target += parts.len();
                    for p in parts.into_iter().rev() {
                        pending.push_front(p);
                    }
                }
                FileType::Directory => {
                    let next = rustix::fs::openat(
                        at,
                        part.as_str(),
                        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                        Mode::empty(),
                    )
                    .map_err(|_| UNINSPECTABLE)?;
                    done.push(part);
                    current = Some(next);
                }
                file_type => {
                    done.push(part);
                    if pending.is_empty() && file_type == FileType::RegularFile {
                        hard_links = super::link_count(&stat);
                    }
                    if !pending.is_empty() {
                        return Err(if from_target > 0 {
                            DANGLING
                        } else {
                            UNINSPECTABLE
                        });
                    }
                }
            }
        }
        Ok(Followed {
            done,
            final_is_symlink,
            hard_links,
        })
    }

    /// A descriptor of `done` (link-free, beneath the root), or `None` for the root.
    fn reopen(&self, done: &[String]) -> Result<Option<OwnedFd>, &'static str> {
        if done.is_empty() {
            return Ok(None);
        }
        self.dir_fd(&done.join("/"))
            .map(Some)
            .map_err(|_| UNINSPECTABLE)
    }
}
