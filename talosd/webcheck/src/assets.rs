//! Stylesheets and scripts that hold nothing: only comments (`/* styles here */`, `// TODO`),
//! or one placeholder line (`TODO`, `add your code here`, `...`). A file with no text at all is
//! not judged here (a new empty file is a choice, not a placeholder). Also here: a stylesheet
//! or script that no given page loads is unused (`UNUSED_ASSET`), and is not judged further.

use super::{Finding, Site};

/// What kind of asset a file is, for its comment syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AssetKind {
    /// CSS: `/* ... */` comments.
    Stylesheet,
    /// JavaScript: `/* ... */` and `// ...` comments.
    Script,
}

/// `UNUSED_ASSET` for each stylesheet or script no page loads (only when there are pages: a
/// script of a project with no page is not web work), and `PLACEHOLDER_ASSET` for each loaded
/// one that holds nothing.
pub(crate) fn check_assets(site: &Site<'_>, findings: &mut Vec<Finding>) {
    let sheets = site
        .sheets
        .iter()
        .map(|(path, content)| (*path, *content, AssetKind::Stylesheet));
    let scripts = site.scripts.keys().filter_map(|path| {
        site.sources
            .get(*path)
            .map(|content| (*path, content.as_str(), AssetKind::Script))
    });
    for (path, content, kind) in sheets.chain(scripts) {
        let sheet = kind == AssetKind::Stylesheet;
        if site.pages_using(path, sheet).is_empty() {
            if !site.pages.is_empty() {
                let what = if sheet { "stylesheet" } else { "script" };
                findings.push(Finding {
                    file: path.to_string(),
                    code: "UNUSED_ASSET",
                    message: format!("{path}: no page loads this {what}, so it has no effect"),
                });
            }
            continue;
        }
        if let Some(why) = placeholder_only(content, kind) {
            findings.push(Finding {
                file: path.to_string(),
                code: "PLACEHOLDER_ASSET",
                message: format!("{path} {why}, no code"),
            });
        }
    }
}

/// Why `content` holds nothing but comments or a placeholder line, or `None` when it holds
/// code (or no text at all).
pub(crate) fn placeholder_only(content: &str, kind: AssetKind) -> Option<&'static str> {
    if content.trim().is_empty() {
        return None;
    }
    let code = without_comments(content, kind);
    let lines: Vec<&str> = code
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    match lines.as_slice() {
        [] => Some("holds only comments"),
        [line] if is_placeholder_line(line) => Some("holds only a placeholder line"),
        _ => None,
    }
}

/// A line that says "code goes here" instead of being code: no code punctuation, and a
/// placeholder word or nothing but dots.
fn is_placeholder_line(line: &str) -> bool {
    if line.contains(['{', '}', '(', ')', '=', ';', ':']) {
        return false;
    }
    if line.chars().all(|c| c == '.' || c == '…') {
        return true;
    }
    let lower = line.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    ["todo", "fixme", "tbd", "here", "placeholder"]
        .iter()
        .any(|w| words.contains(w))
}

/// The content with its comments removed (string literals are not read: a `//` inside a
/// string cuts the line, which only ever leaves code behind, never hides it).
fn without_comments(content: &str, kind: AssetKind) -> String {
    let mut out = String::with_capacity(content.len());
    let mut rest = content;
    loop {
        let block = rest.find("/*");
        let line = match kind {
            AssetKind::Script => rest.find("//"),
            AssetKind::Stylesheet => None,
        };
        match (block, line) {
            (Some(b), l) if l.is_none_or(|l| b < l) => {
                out.push_str(&rest[..b]);
                match rest[b + 2..].find("*/") {
                    Some(end) => rest = &rest[b + 2 + end + 2..],
                    None => return out,
                }
            }
            (_, Some(l)) => {
                out.push_str(&rest[..l]);
                match rest[l..].find('\n') {
                    Some(end) => rest = &rest[l + end..],
                    None => return out,
                }
            }
            (_, None) => {
                out.push_str(rest);
                return out;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_only_table() {
        use AssetKind::{Script, Stylesheet};
        let rows: &[(&str, AssetKind, Option<&str>)] = &[
            (
                "/* styles here */\n",
                Stylesheet,
                Some("holds only comments"),
            ),
            (
                "/* a */\r\n/* b */\r\n",
                Stylesheet,
                Some("holds only comments"),
            ),
            ("// TODO\n", Script, Some("holds only comments")),
            (
                "// TODO\r\n/* later */\r\n",
                Script,
                Some("holds only comments"),
            ),
            ("TODO\n", Script, Some("holds only a placeholder line")),
            (
                "Add your styles here\r\n",
                Stylesheet,
                Some("holds only a placeholder line"),
            ),
            ("...\n", Script, Some("holds only a placeholder line")),
            ("", Script, None),
            ("  \n", Stylesheet, None),
            ("/* base */\nbody { margin: 0 }\n", Stylesheet, None),
            ("// go\nlet here = 1;\n", Script, None),
            ("fetch('http://x/here');\n", Script, None),
            ("init\n", Script, None),
            ("// TODO: more\nconsole.log('hi');\r\n", Script, None),
        ];
        for (content, kind, want) in rows {
            assert_eq!(placeholder_only(content, *kind), *want, "{content:?}");
        }
    }
}
