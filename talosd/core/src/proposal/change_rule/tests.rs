//! Rows for the change rules: which edits each admits, and the verifier's check after a write.

use super::*;

fn rule(target: &str, ask: ChangeAsk) -> ChangeRule {
    ChangeRule {
        target: target.into(),
        ask,
    }
}

fn replace(from: &str, to: &str, key: Option<&str>) -> ChangeAsk {
    ChangeAsk::Replace {
        from: from.into(),
        to: to.into(),
        key: key.map(str::to_string),
    }
}

fn set(key: &str, value: &str) -> ChangeAsk {
    ChangeAsk::SetKey {
        key: key.into(),
        value: value.into(),
    }
}

fn rename(from: &str, to: &str) -> ChangeAsk {
    ChangeAsk::RenameSymbol {
        from: from.into(),
        to: to.into(),
    }
}

/// Proves a replacement admits the lines holding the old value as a word (those naming the
/// key, when the request names one), each with the new value, values of several words too.
#[test]
#[rustfmt::skip]
fn replacements_are_the_lines_holding_the_old_value_as_a_word() {
    let rows: Vec<(&str, ChangeAsk, &[(&str, &str)])> = vec![
        ("TIMEOUT = 30\nRETRIES = 3\n", replace("30", "60", None), &[("TIMEOUT = 30", "TIMEOUT = 60")]),
        ("x = 300\ny = 30\n", replace("30", "60", None), &[("y = 30", "y = 60")]),
        ("<title>Home</title>\n<h1>Home</h1>\n", replace("Home", "Welcome", None),
            &[("<title>Home</title>", "<title>Welcome</title>"), ("<h1>Home</h1>", "<h1>Welcome</h1>")]),
        ("<title>Home</title>\n<h1>Home</h1>\n", replace("Home", "Welcome", Some("title")),
            &[("<title>Home</title>", "<title>Welcome</title>")]),
        ("a = 1\na = 1\n", replace("1", "2", None), &[]),
        ("v = 1.0.0 # 1.0.0\n", replace("1.0.0", "1.1.0", None), &[("v = 1.0.0 # 1.0.0", "v = 1.1.0 # 1.1.0")]),
        ("TIMEOUT = 30\nRETRY_DELAY = 30\n", replace("30", "60", Some("timeout")), &[("TIMEOUT = 30", "TIMEOUT = 60")]),
        ("TIMEOUT = 30\nRETRY_DELAY = 30\n", replace("30", "60", None),
            &[("TIMEOUT = 30", "TIMEOUT = 60"), ("RETRY_DELAY = 30", "RETRY_DELAY = 60")]),
        ("# Demo\n\nA small project.\n", replace("Demo", "Talos Demo", Some("title")), &[("# Demo", "# Talos Demo")]),
        ("<h1>Hello World</h1>\n", replace("Hello World", "Welcome Home", Some("heading")), &[("<h1>Hello World</h1>", "<h1>Welcome Home</h1>")]),
        ("DEBUG = True\nPORT = 8000\n", set("DEBUG", "off"), &[("DEBUG = True", "DEBUG = False")]),
        ("DEBUG = False\n", set("DEBUG", "off"), &[]),
        ("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\nfn t() { add(1, 2); }\n", rename("add", "sum"),
            &[("pub fn add(a: i32, b: i32) -> i32 {", "pub fn sum(a: i32, b: i32) -> i32 {"), ("fn t() { add(1, 2); }", "fn t() { sum(1, 2); }")]),
    ];
    for (text, ask, expected) in rows {
        let got = replacements_of(&rule("f", ask.clone()), text);
        let expected: Vec<(String, String)> =
            expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(got, expected, "{text:?}: {ask:?}");
    }
}

/// Proves every edit a rule admits, applied to the file, passes the verifier's check: the
/// constraint is the verifier run backwards, for every kind of rule.
#[test]
fn every_admitted_edit_passes_the_check() {
    let rows: Vec<(&str, ChangeAsk)> = vec![
        (
            "TIMEOUT = 30\nRETRIES = 3\n",
            replace("30", "60", Some("TIMEOUT")),
        ),
        (
            "# Demo\n\nA small project.\n",
            replace("Demo", "Talos Demo", Some("title")),
        ),
        ("DEBUG = True\nPORT = 8000\n", set("DEBUG", "off")),
        ("{\n  \"version\": \"1.0.0\"\n}\n", set("version", "1.2.0")),
        ("#define MAX_USERS 10\n", set("MAX_USERS", "50")),
        (
            "CC = gcc\nall:\n\t$(CC) main.c\n",
            replace("gcc", "clang", None),
        ),
    ];
    for (text, ask) in rows {
        let r = rule("f", ask.clone());
        let pairs = replacements_of(&r, text);
        assert_eq!(pairs.len(), 1, "{ask:?} on {text:?}: {pairs:?}");
        for (old, new) in pairs {
            let after = text.replacen(&old, &new, 1);
            assert_eq!(check(&r, Some(text), &after), None, "{ask:?}: {after:?}");
        }
    }
}

/// Proves the check after a write: the asked change made and nothing else, the key's new
/// value in any spelling, a rename leaving no old name, and an ambiguous line never verified.
#[test]
fn the_check_asks_for_the_change_made_and_nothing_else() {
    let demo = rule("settings.py", replace("30", "60", Some("TIMEOUT")));
    let before = Some("TIMEOUT = 30\nRETRIES = 3\n");
    assert_eq!(check(&demo, before, "TIMEOUT = 60\nRETRIES = 3\n"), None);
    assert_eq!(check(&demo, before, "TIMEOUT = 60\nRETRIES = 3"), None);
    assert!(check(&demo, before, "RETRIES = 30, TIMEOUT = 60\nRETRIES = 3\n").is_some());
    assert!(check(&demo, before, "TIMEOUT = 600\nRETRIES = 3\n").is_some());
    assert!(check(&demo, before, "temporary file with default size of 10MB\n").is_some());
    // The file never held 30 (the request was stale): the new value is enough.
    assert_eq!(check(&demo, Some("TIMEOUT = 45\n"), "TIMEOUT = 60\n"), None);
    // 30 on two lines and no key: whichever line changed, the request did not say which.
    let unnamed = rule("settings.py", replace("30", "60", None));
    let two = Some("TIMEOUT = 30\nRETRY_DELAY = 30\n");
    let why = check(&unnamed, two, "TIMEOUT = 60\nRETRY_DELAY = 30\n");
    assert!(
        why.as_deref()
            .is_some_and(|w| w.contains("did not say which")),
        "{why:?}"
    );
    // The key names the line: only that line passes.
    let named = rule("settings.py", replace("30", "60", Some("timeout")));
    assert_eq!(check(&named, two, "TIMEOUT = 60\nRETRY_DELAY = 30\n"), None);
    assert!(check(&named, two, "TIMEOUT = 30\nRETRY_DELAY = 60\n").is_some());
    let debug = rule("config.py", set("DEBUG", "off"));
    let config = Some("DEBUG = True\nPORT = 8000\n");
    assert_eq!(check(&debug, config, "DEBUG = False\nPORT = 8000\n"), None);
    assert!(check(&debug, config, "DEBUG = True\nPORT = 8000\n").is_some());
    assert!(check(&debug, config, "DEBUG = False\n").is_some());
    assert!(check(&debug, config, "off\n").is_some());
    let sum = rule("src/lib.rs", rename("add", "sum"));
    let lib = Some("pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n");
    assert_eq!(
        check(
            &sum,
            lib,
            "pub fn sum(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
        ),
        None
    );
    assert!(
        check(
            &sum,
            lib,
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"
        )
        .is_some()
    );
    assert!(check(&sum, lib, "src/talos.rename_path").is_some());
    let print = rule(
        "main.py",
        ChangeAsk::CommentOut {
            needle: "print".into(),
        },
    );
    let main = Some("import sys\n    print(\"Hello\")\n");
    assert_eq!(
        check(&print, main, "import sys\n    # print(\"Hello\")\n"),
        None
    );
    assert!(check(&print, main, "import sys\n").is_some());
    let back = rule(
        "main.js",
        ChangeAsk::Uncomment {
            needle: "log".into(),
        },
    );
    let js = Some("// console.log(x);\nrun();\n");
    assert_eq!(check(&back, js, "console.log(x);\nrun();\n"), None);
    let gone = rule(
        "flags.yaml",
        ChangeAsk::RemoveLine {
            needle: "legacy".into(),
        },
    );
    let flags = Some("beta: false\nlegacy: true\n");
    assert_eq!(check(&gone, flags, "beta: false\n"), None);
    assert!(check(&gone, flags, "beta: false\nlegacy: false\n").is_some());
    let exact = rule(
        "n.txt",
        ChangeAsk::Content {
            content: "hi\n".into(),
        },
    );
    assert_eq!(check(&exact, None, "hi\n"), None);
    assert_eq!(check(&exact, None, "hi"), None);
    assert!(check(&exact, None, "ho").is_some());
}
