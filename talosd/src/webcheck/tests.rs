//! The daemon side of the static web verifier: the request's facts come from the task contract,
//! and a named interaction is not run without a browser, passes or fails in one when chromium is
//! installed, and fails without a browser when a named element is in no page.

use std::collections::BTreeMap;

use talos_core::contract::resolve;

use super::*;

const HTML: &str = r#"<!doctype html>
<html><head><title>Teaser</title><link rel="stylesheet" href="styles.css"></head>
<body><main id="app" class="card"><h1 class="title">Hello</h1>
<button id="teaser-button" class="btn">Show</button><p id="teaser-status"></p></main>
<script src="scripts.js"></script></body></html>"#;

const CSS: &str = ".card { padding: 1rem }\n.btn:hover { color: red }\n#teaser-status { margin: 0 }\n\
@media (max-width: 600px) { .title { font-size: 1rem } }\n[hidden] { display: none }\n\
input[type=text] { border: 0 }\n.open { display: block }\n";

const JS: &str = "const b = document.getElementById('teaser-button');\n\
const s = document.querySelector('#teaser-status');\n\
b.addEventListener('click', () => { s.textContent = 'Shown'; s.classList.add('open'); });\n";

fn site(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect()
}

/// The check as the turn runs it: the facts of `text` from its resolved contract.
fn check_text(files: &BTreeMap<String, String>, text: &str) -> WebReport {
    check(files, &request(&resolve(text).web))
}

#[test]
fn interaction_rows() {
    let files = site(&[
        ("index.html", HTML),
        ("styles.css", CSS),
        ("scripts.js", JS),
    ]);
    let no_browser = !std::path::Path::new(CHROMIUM).exists();
    let req = "clicking #teaser-button updates #teaser-status";
    let got = check_text(&files, req).interaction;
    if no_browser {
        assert_eq!(
            got,
            Interaction::NotRun("no headless browser installed".to_string())
        );
    } else {
        assert_eq!(got, Interaction::Passed, "the handler sets the text");
        let inert = site(&[
            ("index.html", HTML),
            ("styles.css", CSS),
            (
                "scripts.js",
                "const b = document.getElementById('teaser-button');\n\
                 b.addEventListener('click', () => { console.log('clicked'); });\n",
            ),
        ]);
        assert_eq!(
            check_text(&inert, req).interaction,
            Interaction::Failed(
                "clicking #teaser-button did not change #teaser-status in a headless browser"
                    .to_string()
            ),
            "a handler that changes nothing fails in the browser"
        );
    }
    assert_eq!(
        check_text(&files, "clicking #teaser-button updates #missing-status").interaction,
        Interaction::Failed("no element #missing-status in any page".to_string())
    );
    assert_eq!(
        check_text(&files, "make the title bigger").interaction,
        Interaction::NotRequested
    );
}

/// Proves the contract's facts reach the pure checks: behaviour asked in the text makes an
/// unwired button a finding, and a request that mentions todo keeps a TODO heading quiet.
#[test]
fn request_facts_reach_the_checks() {
    let button = site(&[(
        "index.html",
        "<!doctype html><html><head></head><body><button>Go</button></body></html>",
    )]);
    let todo = site(&[(
        "index.html",
        "<!doctype html><html><head></head><body><h1>TODO list</h1></body></html>",
    )]);
    let rows: &[(&BTreeMap<String, String>, &str, &[&str])] = &[
        (
            &button,
            "Add a button; clicking it shows a message",
            &["NO_SCRIPT_FOR_BEHAVIOUR"],
        ),
        (&button, "make the heading blue", &[]),
        (&todo, "build a todo list page", &[]),
        (&todo, "build a list page", &["PLACEHOLDER_CONTENT"]),
    ];
    for (files, text, want) in rows {
        let report = check_text(files, text);
        let codes: Vec<&str> = report.findings.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, *want, "request: {text}");
    }
}

/// Proves the verifier reads the files the turn is about and what they link to: a changed page
/// brings its assets, a changed stylesheet the pages that load it (and their assets), an asset
/// no page loads a few pages of its folder, no focus the whole site; never the other pages.
#[test]
fn site_files_follow_the_links_of_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, content: &str| {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write(
        "index.html",
        r#"<link rel="stylesheet" href="s.css"><script src="a.js"></script>"#,
    );
    write("about.html", "<p>about</p>");
    write(
        "blog/post.html",
        r#"<link rel="stylesheet" href="../s.css">"#,
    );
    write("blog/other.html", "<p>other</p>");
    write("s.css", "p {}");
    write("a.js", "let a = 1;");
    write("blog/lone.js", "let b = 2;");
    let workspace = crate::workspace::Workspace::open(dir.path()).unwrap();
    let rows: &[(&[&str], &[&str])] = &[
        (&["index.html"], &["a.js", "index.html", "s.css"]),
        (&["./index.html"], &["a.js", "index.html", "s.css"]),
        (
            &["s.css"],
            &["a.js", "blog/post.html", "index.html", "s.css"],
        ),
        (
            &["blog/lone.js"],
            &["blog/lone.js", "blog/other.html", "blog/post.html", "s.css"],
        ),
        (&["notes.md", "gone.html"], &[]),
        (
            &[],
            &[
                "a.js",
                "about.html",
                "blog/lone.js",
                "blog/other.html",
                "blog/post.html",
                "index.html",
                "s.css",
            ],
        ),
    ];
    for (focus, want) in rows {
        let focus: Vec<String> = focus.iter().map(|f| f.to_string()).collect();
        let got: Vec<String> = site_files(&workspace, &focus).into_keys().collect();
        assert_eq!(got, *want, "focus {focus:?}");
    }
}
