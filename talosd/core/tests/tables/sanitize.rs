//! Table rows for sanitising proposed content: every strip rule with the content it must
//! remove, and the content each must leave alone (code, comments, indentation, tags, fences
//! that pair up, markdown and plain-text targets).

use pretty_assertions::assert_eq;
use talos_core::sanitize::{Sanitized, strip_commentary};

/// One row: what is written for `path`, and what was removed.
fn check(path: &str, content: &str, expected: &str, removed: &[&str]) {
    let result = strip_commentary(path, content);
    assert_eq!(
        result,
        Sanitized {
            content: expected.to_string(),
            changed: expected != content,
            removed: removed
                .iter()
                .map(|r| match *r {
                    "leading-fence" => "leading-fence",
                    "trailing-fence" => "trailing-fence",
                    _ => "trailing-commentary",
                })
                .collect(),
        },
        "{path}: {:?}",
        content.get(..200).unwrap_or(content)
    );
}

/// Rows that leave content as it is.
fn unchanged(path: &str, content: &str) {
    check(path, content, content, &[]);
}

/// Proves the trailing-commentary rule: a fence followed by markdown commentary goes, with
/// the fence.
#[test]
fn commentary_after_a_fence() {
    check(
        "style.css",
        "body { color: red; }\n```\n## Summary\n- Adjusted the body color\n",
        "body { color: red; }\n",
        &["trailing-commentary"],
    );
    check(
        "app.py",
        "def f():\n    return 1\n\n```\n\n**Explanation:**\n1. `f` returns one.\n   It is simple.\n\nLet me know if you need more!\n",
        "def f():\n    return 1\n",
        &["trailing-commentary"],
    );
    check(
        "main.rs",
        "fn main() {}\n```\nThis version prints nothing.\n---\n> Note the empty body here.\n",
        "fn main() {}\n",
        &["trailing-commentary"],
    );
    check(
        "run.sh",
        "echo hi\n```\n### Usage\nRun it like this:\n```bash\n./run.sh\n```\nThat is all.\n",
        "echo hi\n",
        &["trailing-commentary"],
    );
    check(
        "a.py",
        "x = 1\r\n```\r\n- Set x to one\r\n",
        "x = 1\r\n",
        &["trailing-commentary"],
    );
}

/// Proves commentary without a fence goes from code files, set off by a blank line.
#[test]
fn commentary_without_a_fence() {
    check(
        "app.py",
        "def f():\n    return 1\n\nThis code defines f, which returns one.\n",
        "def f():\n    return 1\n",
        &["trailing-commentary"],
    );
    check(
        "index.js",
        "export const x = 1;\n\nExplanation:\n- `x` is exported\n- It is one\n\nI have kept the rest unchanged.",
        "export const x = 1;\n",
        &["trailing-commentary"],
    );
    check(
        "lib.rs",
        "pub fn f() {}\n---\nI updated `f` to be public.\n",
        "pub fn f() {}\n",
        &["trailing-commentary"],
    );
    check(
        "main.go",
        "package main\n\n**Key changes:**\n- Added the package line\n",
        "package main\n",
        &["trailing-commentary"],
    );
    unchanged(
        "main.go",
        "package main\n\n**Changes:**\n- Added the package line\n",
    );
    unchanged(
        "main.go",
        "package main\n\n## Changes\n- Added the package line\n",
    );
    check(
        "page.html",
        "<html>\n<body>Hi</body>\n</html>\n\nLet me know if you want a footer.\n",
        "<html>\n<body>Hi</body>\n</html>\n",
        &["trailing-commentary"],
    );
    check(
        "config.json",
        "{\"a\": 1}\n\nHere is the config: it sets a to one.\n",
        "{\"a\": 1}\n",
        &["trailing-commentary"],
    );
}

/// Proves fence rules: a whole-content wrapper, a stray closing fence, a lone opening one.
#[test]
fn fences() {
    check(
        "app.py",
        "```python\nprint(1)\n```",
        "print(1)\n",
        &["leading-fence", "trailing-fence"],
    );
    check(
        "app.py",
        "\n```python\nprint(1)\n\nprint(2)\n```\n\n",
        "print(1)\n\nprint(2)\n",
        &["leading-fence", "trailing-fence"],
    );
    check("app.py", "print(1)\n```", "print(1)\n", &["trailing-fence"]);
    check(
        "app.py",
        "print(1)\n\n```\n",
        "print(1)\n",
        &["trailing-fence"],
    );
    check(
        "Makefile",
        "all:\n\techo hi\n```\n",
        "all:\n\techo hi\n",
        &["trailing-fence"],
    );
    check(
        "app.py",
        "```python\nprint(1)\n",
        "print(1)\n",
        &["leading-fence"],
    );
    check(
        "app.py",
        "```python\nprint(1)\n```\n\nThis prints one.\n",
        "print(1)\n",
        &["trailing-commentary", "leading-fence"],
    );
    check(
        "app.py",
        "```python\nprint(1)\n```\n```",
        "print(1)\n",
        &["trailing-fence", "leading-fence"],
    );
}

/// Proves content that could be file content is never stripped.
#[test]
fn content_stays() {
    let rows: [(&str, &str); 29] = [
        ("app.py", "\"\"\"\n\nThis module is stable.\n"),
        (
            "app.py",
            "Returns\n-------\n\nThis function returns the value.\n",
        ),
        ("app.py", "x = 1\n\nNote: keep x small.\n"),
        ("src/lib.rs", "x = 1\n\n# Note: keep this.\n"),
        ("index.php", "<?php echo 1; ?>\n\nThis page shows one.\n"),
        ("data.rb", "puts DATA.read\n__END__\n\nThis text is data.\n"),
        ("app.py", "```python\nx = 1\n```\ny = 2\n"),
        ("app.py", "  ```python\nx = 1\n"),
        ("app.py", "x = 1\n  ```\n"),
        ("app.py", "def f():\n    return 1\n"),
        ("app.py", "x = 1\n\n# This code sets x.\n"),
        ("app.py", "x = 1\n\n# Note: keep this.\n"),
        ("lib.rs", "fn f() {}\n\n// Let me know if this breaks.\n"),
        (
            "app.py",
            "MSG = \"\"\"\nHello.\n\nThis code does X.\n\"\"\"\n",
        ),
        ("app.js", "const s = `\nThis code does X.\n`;\n"),
        ("app.py", "x = 1\nThis code sets x.\n"),
        (
            "app.py",
            "def f():\n    \"\"\"Example:\n\n```python\nf()\n```\"\"\"\n",
        ),
        ("app.py", "doc = \"\"\"\n```\n## Title\n- item\n\"\"\"\n"),
        ("app.py", "x = 1\n\nIt sets x.\n"),
        ("page.html", "<p>Hello.</p>\n\n<p>This page says hi.</p>\n"),
        ("page.html", "<div>\nThis code does X.\n"),
        ("notes.yaml", "a: 1\n\nThis: is yaml\n"),
        (
            "LICENSE",
            "MIT License\n\nThis software is provided as is.\n",
        ),
        ("app.py", "This code does X.\n"),
        ("app.py", "print(1)\n```python\nx\n```\n"),
        ("app.py", "```\n```"),
        ("app.py", ""),
        ("app.py", "x = 1\n\n    This is indented text.\n"),
        ("app.c", "int x;\n\n#include <stdio.h>\n"),
    ];
    for (path, content) in rows {
        unchanged(path, content);
    }
}

/// Proves markdown and plain-text targets are exempt, whatever they hold.
#[test]
fn exempt_targets() {
    for path in [
        "README.md",
        "docs/Guide.MARKDOWN",
        "page.mdx",
        "notes.txt",
        "a/b.rst",
    ] {
        unchanged(path, "```python\nprint(1)\n```\n\nThis code prints one.\n");
        unchanged(path, "Intro\n```\n## Summary\n- item\n");
    }
}

/// Proves the scan window (the last `max(2000, 20%)` characters): commentary that starts
/// before it is left alone, with or without a fence.
#[test]
fn window() {
    let long_commentary = "- another point about the change\n".repeat(80);
    unchanged(
        "a.py",
        &format!("x = 1\n```\n## Summary\n{long_commentary}"),
    );
    unchanged("a.py", &format!("x = 1\n\nExplanation:\n{long_commentary}"));
    // 20% of this content is more than 2000 characters, and covers the commentary.
    let code = "x = 1\n".repeat(3000);
    check(
        "big.py",
        &format!("{code}```\n## Summary\n{long_commentary}"),
        &code,
        &["trailing-commentary"],
    );
}

/// Proves a window crowded with fences (more than 64) is never read as commentary.
#[test]
fn crowded_window() {
    let examples = "```\n- an example item\n".repeat(65);
    unchanged("a.rs", &format!("fn f() {{}}\n{examples}"));
    let examples = "```\n- an example item\n".repeat(63);
    check(
        "a.rs",
        &format!("fn f() {{}}\n{examples}```\n"),
        "fn f() {}\n",
        &["trailing-commentary"],
    );
}
