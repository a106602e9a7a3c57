//! Property tests for the approval screen on hostile text (`talos_core::deceptive`): it never
//! panics, whatever the target, details and diff hold (broken hunk headers, multi-byte
//! characters, floods); no warning it writes carries a hidden or control character raw; a
//! text with a hidden character is always warned about (or refused, for a path); and
//! `escaped` leaves nothing hidden behind.

use proptest::prelude::*;
use proptest::test_runner::Config;
use talos_core::deceptive::{ApprovalText, MAX_WARNINGS, escaped, hidden, path_refusal, warnings};

/// Pieces hostile text is made of: hidden characters, look-alikes, diff syntax, multi-byte
/// letters, controls and plain words.
const PIECES: [&str; 24] = [
    "\u{202E}",
    "\u{2066}",
    "\u{2069}",
    "\u{200B}",
    "\u{200D}",
    "\u{FEFF}",
    "\u{E0041}",
    "\u{00AD}",
    "\u{435}",
    "\u{FF0E}",
    ".env",
    "@@ -1,2 +1,3 @@",
    "@@ -99999999999999999999999 +x @@",
    "@@ -",
    "+",
    "-",
    " ",
    "\n",
    "argv: ",
    "\"",
    "\\",
    "é",
    "\u{1b}[2J",
    "word",
];

fn hostile() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES.to_vec()), 0..40)
        .prop_map(|pieces| pieces.concat())
}

fn clean(line: &str) -> bool {
    !line.chars().any(|c| hidden(c).is_some() || c.is_control())
}

proptest! {
    #![proptest_config(Config::with_cases(512))]

    /// Proves the screen never panics, writes only clean `warning: ` lines, caps them, and
    /// warns whenever the diff or a details line holds a hidden character (a leading byte
    /// order mark aside).
    #[test]
    fn the_screen_is_total_clean_and_complete(
        target in hostile(),
        details in prop::collection::vec(hostile(), 0..4),
        diff in hostile(),
        cut in hostile(),
    ) {
        let text = ApprovalText {
            description: "write operation: talos.write_file",
            target: Some(&target),
            details: &details,
            diff: Some(&diff),
            diff_cut: &cut,
        };
        let lines = warnings(&text);
        prop_assert!(lines.len() <= MAX_WARNINGS + 1);
        for line in &lines {
            prop_assert!(line.starts_with("warning: "), "{line:?}");
            prop_assert!(clean(line), "{line:?}");
        }
        let hides = |t: &str| t.chars().any(|c| hidden(c).is_some() && c != '\u{FEFF}');
        if hides(&target) || details.iter().any(|d| !d.starts_with("warning: ") && hides(d)) {
            prop_assert!(!lines.is_empty(), "nothing warned for {target:?} {details:?}");
        }
    }

    /// Proves `escaped` leaves no hidden or control character, and a path
    /// is refused exactly when it holds a hidden character, with a clean message.
    #[test]
    fn escaping_and_path_refusal(text in hostile()) {
        let shown = escaped(&text);
        prop_assert!(clean(&shown), "{shown:?}");
        let refusal = path_refusal(&text);
        prop_assert_eq!(refusal.is_some(), text.chars().any(|c| hidden(c).is_some()));
        if let Some(message) = refusal {
            prop_assert!(clean(&message), "{message:?}");
        }
    }
}
