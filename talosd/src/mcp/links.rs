//! A last look before an MCP call nobody was asked about: each path its arguments name that
//! is inside the workspace by its text is walked through the workspace handle (links followed,
//! one that leaves or dangles failing closed), and the call is not made when one leads out of
//! the workspace or lands on a protected path. The core places paths by their text alone (it
//! does no IO); a link inside the workspace that points out of it is seen only here. What
//! changes on disk between this look and the server's own is not seen.

use crate::workspace::Workspace;

/// Why the call must not be made unasked, or `None` when every path (relative to the
/// workspace) stays inside it and is not protected.
pub fn leads_out(files: &Workspace, relatives: &[String]) -> Option<String> {
    for relative in relatives.iter().filter(|r| !r.is_empty()) {
        let facts = files.resolve(relative).facts;
        let why = if facts.escapes {
            facts
                .problem
                .unwrap_or_else(|| "it leaves the workspace".into())
        } else if let Some(kind) = facts.protected {
            format!("it leads to a protected path ({})", kind.as_str())
        } else {
            continue;
        };
        return Some(format!(
            "`{}` is not a plain path inside the workspace on disk ({why}): a rule does not answer an MCP call there, and nobody was asked, so the call was not made",
            super::output::escape_controls(relative)
        ));
    }
    None
}

#[cfg(test)]
// std::fs in the tests: the links are planted in a temporary workspace by path.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// Proves a link inside the workspace that points out of it is caught, at the end of the
    /// path or in its middle, dangling or not, and plain paths inside pass.
    #[test]
    fn links_out_of_the_workspace_are_caught() {
        let ws = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let root = ws.path();
        std::os::unix::fs::symlink(out.path(), root.join("dir-link")).unwrap();
        std::os::unix::fs::symlink(out.path().join("keys"), root.join("file-link")).unwrap();
        std::os::unix::fs::symlink(".ssh", root.join("keys-link")).unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
        let files = Workspace::open(root).unwrap();
        let inside = |p: &str| leads_out(&files, &[p.to_string()]).is_none();
        assert!(inside("new.txt"));
        assert!(inside("sub/new/deeper.txt"));
        assert!(inside(""));
        assert!(!inside("dir-link/authorized_keys"));
        assert!(!inside("file-link"));
        assert!(!inside("keys-link/authorized_keys"));
        assert!(leads_out(&files, &[]).is_none());
    }
}
