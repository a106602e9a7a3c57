//! Property tests for sanitising proposed content: `strip_commentary` never panics, is
//! idempotent, never changes markdown or plain-text targets, only cuts (what it keeps is a
//! slice of the input, a prefix unless a leading fence went), reports `changed` and
//! `removed` truthfully, and leaves content made only of code lines alone.

use proptest::prelude::*;
use proptest::test_runner::Config;
use talos_core::sanitize::strip_commentary;

const PATHS: [&str; 12] = [
    "app.py",
    "src/lib.rs",
    "index.js",
    "style.css",
    "page.html",
    "data.json",
    "run.sh",
    "Makefile",
    "notes.yaml",
    "README.md",
    "guide.markdown",
    "x",
];

/// Lines a model may write into file content: code, comments, fences and commentary.
const LINES: [&str; 30] = [
    "```",
    "```python",
    "````",
    "## Summary",
    "# comment",
    "- Added error handling",
    "  - nested point here",
    "1. First change.",
    "**Explanation:**",
    "Explanation:",
    "This code does X.",
    "Let me know if you need more!",
    "I have updated the file.",
    "It now returns early.",
    "---",
    "> A quoted remark here",
    "",
    "   ",
    "x = 1",
    "def f():",
    "    return x;",
    "}",
    "fn main() {",
    "<div>Hello</div>",
    "// note: keep",
    "print(\"This code does X.\")",
    "\t\tindented()",
    "é✓😀 text.",
    "\r",
    "`inline` code.",
];

/// Code lines only: nothing here may ever be stripped.
const CODE_LINES: [&str; 14] = [
    "x = 1",
    "def f(a, b):",
    "    return a + b",
    "}",
    "fn main() {",
    "    let y = x;",
    "<div class=\"a\">Hi</div>",
    "// This code does X.",
    "# Note: keep this.",
    "/* Explanation: */",
    "    This is indented prose.",
    "print(\"Let me know.\")",
    "",
    "if (a && b) {",
];

fn content_from(lines: &[&str], newline: &str, final_newline: bool) -> String {
    let mut text = lines.join(newline);
    if final_newline {
        text.push_str(newline);
    }
    text
}

fn check_one(path: &str, content: &str) -> Result<(), TestCaseError> {
    let once = strip_commentary(path, content);
    let twice = strip_commentary(path, &once.content);
    prop_assert_eq!(
        &twice.content,
        &once.content,
        "not idempotent for {}: {:?}",
        path,
        content
    );
    prop_assert!(!twice.changed);
    prop_assert_eq!(once.changed, once.content != content);
    prop_assert_eq!(once.changed, !once.removed.is_empty());
    let exempt = path.ends_with(".md") || path.ends_with(".markdown");
    if exempt {
        prop_assert_eq!(&once.content, content);
    }
    if once.removed.contains(&"leading-fence") {
        prop_assert!(
            content.contains(once.content.as_str()),
            "not a slice: {:?}",
            content
        );
    } else {
        prop_assert!(
            content.starts_with(once.content.as_str()),
            "not a prefix: {:?}",
            content
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(Config::with_cases(3000))]

    /// Proves arbitrary text never panics and keeps every invariant.
    #[test]
    fn arbitrary_text(path in prop::sample::select(&PATHS[..]), content in "\\PC*|[\\s\\S]{0,300}") {
        check_one(path, &content)?;
    }

    /// Proves text built from code, fences and commentary lines keeps every invariant.
    #[test]
    fn built_from_lines(
        path in prop::sample::select(&PATHS[..]),
        lines in prop::collection::vec(prop::sample::select(&LINES[..]), 0..30),
        crlf in any::<bool>(),
        final_newline in any::<bool>(),
    ) {
        let content = content_from(&lines, if crlf { "\r\n" } else { "\n" }, final_newline);
        check_one(path, &content)?;
    }

    /// Proves content made only of code lines is never changed, whatever the target.
    #[test]
    fn code_is_never_stripped(
        path in prop::sample::select(&PATHS[..]),
        lines in prop::collection::vec(prop::sample::select(&CODE_LINES[..]), 0..30),
        final_newline in any::<bool>(),
    ) {
        let content = content_from(&lines, "\n", final_newline);
        let result = strip_commentary(path, &content);
        prop_assert_eq!(result.content, content);
        prop_assert!(!result.changed);
    }

    /// Proves commentary after a fence at the end of code always goes, leaving the code.
    #[test]
    fn appended_commentary_goes(
        code in prop::collection::vec(prop::sample::select(&CODE_LINES[..4]), 1..10),
        commentary in prop::collection::vec(prop::sample::select(&LINES[3..15]), 1..8),
    ) {
        let code_text = content_from(&code, "\n", true);
        let content = format!("{code_text}```\n{}", commentary.join("\n"));
        let result = strip_commentary("app.py", &content);
        let starts_markdown = commentary[0] != "It now returns early.";
        if starts_markdown {
            prop_assert_eq!(result.content, code_text.trim_end().to_string() + "\n");
        } else {
            prop_assert_eq!(result.content, content);
        }
    }
}
