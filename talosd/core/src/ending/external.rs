//! The account of MCP calls in a turn's answer. Such a call runs on its server, outside
//! Talos's tools, checkpoints and read-backs: the answer lists each call that was sent (and
//! whether the person approved it or a rule allowed it), says Talos cannot verify what it did,
//! and no statement that no file was changed stands after one, whoever wrote it.

use crate::request::outcome::ExternalRun;

/// How the account starts.
pub const EXTERNAL_CALLS: &str = "[External calls:";

/// Statements that no file changed, as the runtime and models write them (ASCII, matched
/// whatever their case), and what each becomes once an external call ran.
const NOTHING_CHANGED: &[(&str, &str)] = &[
    ("no file was changed", "Talos's own tools changed no file"),
    (
        "no file changes were applied",
        "Talos's own tools applied no file change",
    ),
    ("no files were changed", "Talos's own tools changed no file"),
    ("nothing was changed", "Talos's own tools changed nothing"),
];

/// `answer` with the account of `ran` (unchanged when no call was sent).
pub fn account(answer: &str, ran: &[ExternalRun]) -> String {
    if ran.is_empty() {
        return answer.to_string();
    }
    let mut answer = answer.to_string();
    for (said, instead) in NOTHING_CHANGED {
        answer = replace_ascii_case(&answer, said, instead);
    }
    let mut out = format!(
        "{EXTERNAL_CALLS} these MCP calls were sent to their servers and ran outside Talos. Talos cannot verify what they did: its own records do not show it, and talos undo cannot reverse it.]"
    );
    for run in ran {
        let how = if run.approved {
            "approved"
        } else {
            "allowed by a rule"
        };
        let end = match &run.trouble {
            None => "the server answered".to_string(),
            Some(trouble) => format!("{trouble}; it may still have had effects"),
        };
        out.push_str(&format!("\n- {} ({how}): {end}", run.tool));
    }
    format!("{answer}\n\n{out}").trim_start().to_string()
}

/// `text` with every `from` (ASCII, any case) replaced by `to`, a capital kept where one began
/// the match.
fn replace_ascii_case(text: &str, from: &str, to: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = lower[at..].find(from) {
        let start = at + found;
        out.push_str(&text[at..start]);
        let capital = text[start..].starts_with(|c: char| c.is_ascii_uppercase());
        if capital {
            let mut chars = to.chars();
            if let Some(first) = chars.next() {
                out.extend(first.to_uppercase());
                out.push_str(chars.as_str());
            }
        } else {
            out.push_str(to);
        }
        at = start + from.len();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tool: &str, approved: bool, trouble: Option<&str>) -> ExternalRun {
        ExternalRun {
            tool: tool.into(),
            approved,
            trouble: trouble.map(str::to_string),
        }
    }

    /// Proves no "no file was changed" stands after an external call was sent, whoever wrote
    /// it, and each call is listed with how it was allowed and how it ended.
    #[test]
    fn nothing_changed_never_stands_after_an_external_call() {
        let answer = "[Action not taken: the request needs a change to inside.txt, and the model made no change call. No file was changed.]\nI wrote it; no files were changed by me.";
        let ran = [
            run("mcp.fs.write_file", true, None),
            run("mcp.fs.edit_file", false, Some("the server said it failed")),
        ];
        let out = account(answer, &ran);
        assert!(
            !out.to_lowercase().contains("no file was changed")
                && !out.to_lowercase().contains("no files were changed"),
            "{out}"
        );
        assert!(out.contains("Talos's own tools changed no file"), "{out}");
        assert!(out.contains("- mcp.fs.write_file (approved): the server answered"));
        assert!(out.contains("- mcp.fs.edit_file (allowed by a rule): the server said it failed"));
        assert!(out.contains("Talos cannot verify what they did"));
        assert_eq!(account(answer, &[]), answer);
    }
}
