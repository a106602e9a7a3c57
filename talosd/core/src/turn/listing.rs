//! A listing turn answers from its listing (issue 12, item 8): when the model's answer uses
//! none of the names the listing returned, or names files the listing does not hold, the
//! answer is the listing itself (names only, protected names included, never contents). The
//! decision compares the answer with the recorded listing; no phrase list is read.

use super::Turn;
use crate::request::task::TaskType;

/// How the answer starts when the runtime answers from the listing.
pub const LISTING_ANSWER: &str = "[Listing check: the model's answer did not match the directory listing, so Talos answers from the listing itself (names only).]";

impl Turn {
    /// The runtime's answer for a listing turn whose answer does not use its listing; `None`
    /// when the turn is not a listing, nothing was listed, or the answer uses the listing.
    pub fn answer_from_listing(&self, answer: &str) -> Option<String> {
        if self.plan.contract().task_type != TaskType::DirectoryListing {
            return None;
        }
        let (path, listing) = self.record.listings.last()?;
        if uses_listing(answer, listing) {
            return None;
        }
        let folder = if path.is_empty() || path == "." {
            "the workspace root".to_string()
        } else {
            format!("`{path}`")
        };
        Some(format!("{LISTING_ANSWER}\n\nIn {folder}:\n{listing}"))
    }
}

/// The names a listing holds (its lines, without the truncation note or a folder's `/`).
fn names(listing: &str) -> Vec<&str> {
    listing
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("... (") && *l != "(empty directory)")
        .map(|l| l.trim_end_matches('/'))
        .collect()
}

/// Whether `answer` rests on `listing`: it names at least one listed entry (or says an empty
/// folder is empty) and every file name it mentions is one the listing holds.
pub fn uses_listing(answer: &str, listing: &str) -> bool {
    let listed = names(listing);
    let basename = |n: &str| n.rsplit('/').next().unwrap_or(n).to_string();
    let known: Vec<String> = listed
        .iter()
        .flat_map(|n| [n.to_string(), basename(n)])
        .collect();
    let mentioned = crate::ending::guard::sentences::file_names(answer);
    if mentioned.iter().any(|m| !known.iter().any(|k| k == m)) {
        return false;
    }
    if listed.is_empty() {
        return mentioned.is_empty() && answer.to_lowercase().contains("empty");
    }
    listed
        .iter()
        .any(|n| answer.contains(*n) || answer.contains(basename(n).as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves the answer is judged against the listing it came from: a name from it counts,
    /// an invented file or no name at all does not, with CRLF answers too.
    #[test]
    fn an_answer_uses_its_listing_rows() {
        let listing = ".env\nREADME.md\nsrc/\nsrc/main.rs";
        let rows: &[(&str, &str, bool)] = &[
            (
                "names the files",
                "The folder has README.md and src/.",
                true,
            ),
            (
                "a nested file by its base name",
                "There is main.rs under src.",
                true,
            ),
            ("CRLF answer", "Files:\r\n- README.md\r\n- .env\r\n", true),
            ("a protected name is a name", "Only .env is there.", true),
            ("no name at all", "I cannot list directories.", false),
            ("an invented file", "It has README.md and setup.py.", false),
            ("a sentence-ending period", "See README.md.", true),
            (
                "a version number is not a file",
                "README.md mentions version 1.2.",
                true,
            ),
            (
                "a URL is not a file",
                "README.md links https://example.com/x.html",
                true,
            ),
        ];
        for (what, answer, want) in rows {
            assert_eq!(uses_listing(answer, listing), *want, "{what}");
        }
        assert!(uses_listing("The folder is empty.", "(empty directory)"));
        assert!(!uses_listing("It has main.py.", "(empty directory)"));
        assert!(!uses_listing("Here you go.", "(empty directory)"));
        assert!(uses_listing(
            "a.txt and more",
            "a.txt\nb.txt\n... (truncated at 2 entries)"
        ));
    }
}
