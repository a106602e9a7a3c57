//! The approval prompt: showing an `approval/request` on stderr (description, target,
//! details, coloured diff preview), asking, and turning one line of stdin into a decision.
//! Anything but a clear yes is a denial: an empty line, EOF and a read error all deny.

use std::io::{self, BufRead, IsTerminal};

use talos_protocol::{ApprovalRequestParams, Decision};

use crate::render::{Output, Palette, Style, colour_diff, printable};

/// The question asked after the request is shown.
pub fn question(remember_eligible: bool) -> &'static str {
    if remember_eligible {
        "Allow? [y=yes, a=yes for session, N=no] "
    } else {
        "Allow? [y=yes, N=no] "
    }
}

/// The decision a line of input means; `None` is EOF or a read error.
pub fn parse_answer(line: Option<&str>, remember_eligible: bool) -> Decision {
    let Some(line) = line else {
        return Decision::Deny;
    };
    match line.trim().to_lowercase().as_str() {
        "y" | "yes" => Decision::Approve,
        "a" | "all" | "always" if remember_eligible => Decision::ApproveForSession,
        _ => Decision::Deny,
    }
}

/// The block shown before the question: a header naming the operation, then the target,
/// the details and the diff preview, indented.
pub fn describe(request: &ApprovalRequestParams, palette: Palette) -> String {
    let mut block = String::new();
    let header = format!("approval required: {}", printable(&request.description));
    block.push_str(&palette.paint(Style::Yellow, &header));
    block.push('\n');
    if let Some(target) = &request.target {
        // The daemon's details often restate the target with sizes; show it once.
        let restated = format!("target: {target}");
        if !request
            .details
            .iter()
            .any(|detail| detail.starts_with(&restated))
        {
            block.push_str(&format!("  target: {}\n", printable(target)));
        }
    }
    for detail in &request.details {
        block.push_str(&format!("  {}\n", printable(detail)));
    }
    if let Some(diff) = &request.diff {
        let mut header = format!("diff (+{} -{})", diff.added, diff.removed);
        if !diff.note.is_empty() {
            header.push_str(&format!(" {}", printable(&diff.note)));
        }
        block.push_str(&format!("  {}\n", palette.paint(Style::Bold, &header)));
        block.push_str(&colour_diff(&diff.text, palette, "  "));
    }
    block
}

/// Shows the request and the question on stderr and reads one line of stdin.
pub fn ask(request: &ApprovalRequestParams, output: &Output) -> Decision {
    output.err(&describe(request, output.stderr_palette));
    output.err(question(request.remember_eligible));
    let mut line = String::new();
    let prompting = crate::interrupt::Prompting::begin();
    let read = io::stdin().lock().read_line(&mut line);
    drop(prompting);
    let answer = match read {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.as_str()),
    };
    match answer {
        // A terminal echoes what was typed; piped input is echoed here so the transcript
        // shows the answer, and a closed stdin still ends the question's line.
        Some(text) if !io::stdin().is_terminal() => {
            output.err(&format!("{}\n", printable(text.trim())))
        }
        Some(_) => {}
        None => output.err("\n"),
    }
    parse_answer(answer, request.remember_eligible)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(line: Option<&str>, remember_eligible: bool, expected: Decision) {
        assert_eq!(
            parse_answer(line, remember_eligible),
            expected,
            "{line:?} {remember_eligible}"
        );
    }

    #[test]
    fn only_a_clear_yes_approves() {
        check(Some("y\n"), false, Decision::Approve);
        check(Some("yes\n"), true, Decision::Approve);
        check(Some("  Y \r\n"), false, Decision::Approve);
        check(Some("YES"), false, Decision::Approve);
        check(Some("a\n"), true, Decision::ApproveForSession);
        check(Some("all\n"), true, Decision::ApproveForSession);
        check(Some("Always\n"), true, Decision::ApproveForSession);
        check(Some("a\n"), false, Decision::Deny);
        check(Some("always\n"), false, Decision::Deny);
        check(Some("n\n"), true, Decision::Deny);
        check(Some("no\n"), false, Decision::Deny);
        check(Some("\n"), true, Decision::Deny);
        check(Some(""), true, Decision::Deny);
        check(Some("yess\n"), true, Decision::Deny);
        check(Some("y y\n"), true, Decision::Deny);
        check(None, true, Decision::Deny);
    }

    #[test]
    fn the_question_offers_session_approval_only_when_eligible() {
        assert_eq!(question(true), "Allow? [y=yes, a=yes for session, N=no] ");
        assert_eq!(question(false), "Allow? [y=yes, N=no] ");
    }

    fn request(details: &[&str], note: &str) -> ApprovalRequestParams {
        serde_json::from_value(json!({
            "turnId": "t1", "sessionId": "s1", "requestId": "r1", "tool": "talos.edit_file",
            "description": "write operation: talos.edit_file",
            "target": "settings.py",
            "details": details,
            "diff": {"text": "@@ -1 +1 @@\n-a\n+b\n...", "added": 1, "removed": 1, "truncated": true, "note": note},
            "rememberEligible": true
        }))
        .unwrap()
    }

    #[test]
    fn the_block_shows_description_target_details_and_diff() {
        assert_eq!(
            describe(&request(&["permission: ask"], ""), Palette::PLAIN),
            "approval required: write operation: talos.edit_file\n  target: settings.py\n  \
             permission: ask\n  diff (+1 -1)\n  @@ -1 +1 @@\n  -a\n  +b\n  ...\n"
        );
    }

    /// Proves a right-to-left override in the target, a details line and the diff reaches the
    /// terminal as `\u{202e}`, never raw, and the daemon's warning line is shown as sent.
    #[test]
    fn hidden_characters_are_shown_escaped() {
        let request: ApprovalRequestParams = serde_json::from_value(json!({
            "turnId": "t1", "sessionId": "s1", "requestId": "r1", "tool": "talos.write_file",
            "description": "write operation: talos.write_file",
            "target": "a\u{202e}txt.sh",
            "details": ["warning: this change contains a right-to-left override (U+202E) at line 2"],
            "diff": {"text": "@@ -0,0 +1,2 @@\n+ok\n+if admin \u{202e} } \u{2066}{\n", "added": 2, "removed": 0, "truncated": false, "note": "new file"},
            "rememberEligible": false
        }))
        .unwrap();
        let shown = describe(&request, Palette::PLAIN);
        assert_eq!(
            shown,
            "approval required: write operation: talos.write_file\n  \
             target: a\\u{202e}txt.sh\n  \
             warning: this change contains a right-to-left override (U+202E) at line 2\n  \
             diff (+2 -0) new file\n  @@ -0,0 +1,2 @@\n  +ok\n  \
             +if admin \\u{202e} } \\u{2066}{\n"
        );
        assert!(!shown.contains('\u{202e}') && !shown.contains('\u{2066}'));
    }

    #[test]
    fn a_target_restated_in_the_details_is_shown_once_and_the_note_follows_the_counts() {
        assert_eq!(
            describe(
                &request(&["target: settings.py (24 bytes, 2 lines)"], "new file"),
                Palette::PLAIN
            ),
            "approval required: write operation: talos.edit_file\n  \
             target: settings.py (24 bytes, 2 lines)\n  diff (+1 -1) new file\n  \
             @@ -1 +1 @@\n  -a\n  +b\n  ...\n"
        );
    }
}
