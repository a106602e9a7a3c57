//! Rows: a request, the file targets the contract found, and the change its words name.

use super::super::{ChangeAsk, read};

fn replace(from: &str, to: &str, key: Option<&str>) -> Option<ChangeAsk> {
    Some(ChangeAsk::Replace {
        from: from.into(),
        to: to.into(),
        key: key.map(str::to_string),
    })
}

fn set(key: &str, value: &str) -> Option<ChangeAsk> {
    Some(ChangeAsk::SetKey {
        key: key.into(),
        value: value.into(),
    })
}

fn rename(from: &str, to: &str) -> Option<ChangeAsk> {
    Some(ChangeAsk::RenameSymbol {
        from: from.into(),
        to: to.into(),
    })
}

fn content(text: &str) -> Option<ChangeAsk> {
    Some(ChangeAsk::Content {
        content: text.into(),
    })
}

/// Proves each family of shapes reads the change its words name, and leaves descriptions free.
#[test]
#[rustfmt::skip]
fn change_shapes() {
    let rows: Vec<(&str, &[&str], Option<ChangeAsk>)> = vec![
        ("In settings.py, change TIMEOUT from 30 to 60.", &["settings.py"], replace("30", "60", Some("TIMEOUT"))),
        ("In settings.py change TIMEOUT from 30 to 60.", &["settings.py"], replace("30", "60", Some("TIMEOUT"))),
        ("In settings.py, change the timeout from 30 to 60.", &["settings.py"], replace("30", "60", Some("timeout"))),
        ("change TIMEOUT from 30 to 60 in settings.py", &["settings.py"], replace("30", "60", Some("TIMEOUT"))),
        ("In README.md, change the title from Demo to Talos Demo.", &["README.md"], replace("Demo", "Talos Demo", Some("title"))),
        ("change the heading from Hello World to Welcome Home", &[], replace("Hello World", "Welcome Home", Some("heading"))),
        ("change the heading from \"Hello World\" to \"Welcome Home\" in index.html", &["index.html"], replace("Hello World", "Welcome Home", Some("heading"))),
        ("Lower the log level in logging.yaml from debug to info", &["logging.yaml"], replace("debug", "info", Some("log level"))),
        ("In main.py, change the greeting from Hello to Hi.", &["main.py"], replace("Hello", "Hi", Some("greeting"))),
        ("In the Makefile, use clang instead of gcc", &["Makefile"], replace("gcc", "clang", None)),
        ("Use clang rather than gcc in the Makefile.", &["Makefile"], replace("gcc", "clang", None)),
        ("Replace gcc with clang in the Makefile", &["Makefile"], replace("gcc", "clang", None)),
        ("Replace 'Hello' with 'Hi there' in main.py", &["main.py"], replace("Hello", "Hi there", None)),
        ("Set TIMEOUT to 60 in settings.py", &["settings.py"], set("TIMEOUT", "60")),
        ("set TIMEOUT=60 in settings.py", &["settings.py"], set("TIMEOUT", "60")),
        ("Bump the version in package.json to 1.2.0", &["package.json"], set("version", "1.2.0")),
        ("Change the port in server.js to 8080", &["server.js"], set("port", "8080")),
        ("Increase MAX_USERS in constants.h to 50", &["constants.h"], set("MAX_USERS", "50")),
        ("In constants.h, raise `MAX_USERS` to 50.", &["constants.h"], set("MAX_USERS", "50")),
        ("Turn DEBUG off in config.py", &["config.py"], set("DEBUG", "off")),
        ("turn off DEBUG in config.py", &["config.py"], set("DEBUG", "off")),
        ("Switch the beta flag on in flags.yaml", &["flags.yaml"], set("beta flag", "on")),
        ("Enable beta in flags.yaml", &["flags.yaml"], set("beta", "on")),
        ("disable legacy in flags.yaml please", &["flags.yaml"], set("legacy", "off")),
        ("Make DEBUG false in config.py", &["config.py"], set("DEBUG", "false")),
        ("Rename the function add to sum in src/lib.rs", &["src/lib.rs"], rename("add", "sum")),
        ("In src/lib.rs, rename the function add to sum.", &["src/lib.rs"], rename("add", "sum")),
        ("rename `parse_header` to `read_header`", &[], rename("parse_header", "read_header")),
        ("Rename class Foo to Bar in app.py and its uses", &["app.py"], rename("Foo", "Bar")),
        ("Create VERSION containing 2.0.0", &["VERSION"], content("2.0.0")),
        ("Create .gitignore with the lines target/ and *.log", &[".gitignore"], content("target/\n*.log\n")),
        ("Create notes.txt with the content: hello world", &["notes.txt"], content("hello world")),
        ("Create todo.md with the text: - buy milk", &["todo.md"], content("- buy milk")),
        ("Overwrite notes.txt with exactly AFTER", &["notes.txt"], content("AFTER")),
        ("Change 30 to 60 in settings.py", &["settings.py"], replace("30", "60", None)),
        ("change \"Hello World\" to \"Welcome Home\" in index.html", &["index.html"], replace("Hello World", "Welcome Home", None)),
        ("Correct recieve to receive in guide.md", &["guide.md"], replace("recieve", "receive", None)),
        ("Fix the typo: \"teh\" should be \"the\" in README.md", &["README.md"], replace("teh", "the", None)),
        ("fix the typo \"recieve\" in utils.py, it should be \"receive\"", &["utils.py"], replace("recieve", "receive", None)),
        ("Fix typo: adress -> address in form.html", &["form.html"], replace("adress", "address", None)),
        ("Replace all occurrences of `foo` with `bar` in utils.py", &["utils.py"], replace("foo", "bar", None)),
        ("In server.js, replace port 3000 with 8080", &["server.js"], replace("3000", "8080", Some("port"))),
        ("Use port 8080 instead of 8000 in server.py", &["server.py"], replace("8000", "8080", Some("port"))),
        ("turn the feature flag NEW_UI on in flags.py", &["flags.py"], set("NEW_UI", "on")),
        ("set the cache size to 256 in cache.toml", &["cache.toml"], set("cache size", "256")),
        ("rename the `handle` method to `handle_request` in server.py", &["server.py"], rename("handle", "handle_request")),
        ("Rename the type alias Id to UserId in types.ts", &["types.ts"], rename("Id", "UserId")),
        ("Create .env.example with the line PORT=3000", &[".env.example"], content("PORT=3000\n")),
        ("Create a file named VERSION with 1.0.0 in it", &["VERSION"], content("1.0.0")),
        ("Write \"hello\" to greeting.txt", &["greeting.txt"], content("hello")),
        // Not fully named: the model's text is its own.
        ("Explain what DEBUG does in config.py, then turn it off", &["config.py"], None),
        ("Set TIMEOUT to 60 and DEBUG to False in settings.py", &["settings.py"], None),
        ("Fix the typo in README.md and bump the version in package.json to 1.0.1", &["README.md", "package.json"], None),
        ("Rename the helper function to something clearer in utils.py", &["utils.py"], None),
        ("Edit index.html so the title says Home", &["index.html"], None),
        ("Please create robots.txt with the lines User-agent: * and Disallow: /admin", &["robots.txt"], None),
        ("Rename old.txt to new.txt.", &["old.txt", "new.txt"], None),
        ("Create notes.md with a todo list", &["notes.md"], None),
        ("Create notes.md containing a list of names", &["notes.md"], None),
        ("Fix the bug in calc.py", &["calc.py"], None),
        ("Change the heading to something friendlier", &[], None),
        ("Move a.txt from docs to archive", &["a.txt"], None),
        ("What is the value of TIMEOUT in settings.py?", &["settings.py"], None),
    ];
    let mut wrong = Vec::new();
    for (request, targets, expected) in rows {
        let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
        let got = read(request, &targets);
        if got != expected {
            wrong.push(format!("{request}\n   got      {got:?}\n   expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
