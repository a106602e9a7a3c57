//! Table tests of the static-web verifier: a clean site, one row per finding code with the
//! smallest files that trigger it, negative rows that must stay quiet, and what the files say
//! about a named interaction. Requests are given as their facts (the task contract computes
//! them from the text; talosd/core/tests/tables/web.rs holds those rows).

use std::collections::BTreeMap;

use super::*;

const CLEAN_HTML: &str = r#"<!doctype html>
<html><head><title>Teaser</title><link rel="stylesheet" href="styles.css"></head>
<body><main id="app" class="card"><h1 class="title">Hello</h1>
<button id="teaser-button" class="btn">Show</button><p id="teaser-status"></p></main>
<script src="scripts.js"></script></body></html>"#;

const CLEAN_CSS: &str = ".card { padding: 1rem }\n.btn:hover { color: red }\n#teaser-status { margin: 0 }\n\
@media (max-width: 600px) { .title { font-size: 1rem } }\n[hidden] { display: none }\n\
input[type=text] { border: 0 }\n.open { display: block }\n";

const CLEAN_JS: &str = "const b = document.getElementById('teaser-button');\n\
const s = document.querySelector('#teaser-status');\n\
b.addEventListener('click', () => { s.textContent = 'Shown'; s.classList.add('open'); });\n";

/// The facts of "Add a button; clicking it shows a message" (and of "submit the form"):
/// behaviour asked, no interaction named.
const BEHAVIOUR: Request = Request {
    asks_for_behaviour: true,
    mentions_todo: false,
    interaction: None,
};

/// The facts of a request the checks read nothing from, such as "" or "make the title bigger".
const PLAIN: Request = Request {
    asks_for_behaviour: false,
    mentions_todo: false,
    interaction: None,
};

/// The facts of "build a todo list page": it mentions todo.
const TODO_PAGE: Request = Request {
    asks_for_behaviour: false,
    mentions_todo: true,
    interaction: None,
};

fn site(files: &[(&str, &str)]) -> BTreeMap<String, String> {
    files
        .iter()
        .map(|(p, c)| (p.to_string(), c.to_string()))
        .collect()
}

fn codes(files: &[(&str, &str)], request: &Request) -> Vec<&'static str> {
    check(&site(files), request)
        .findings
        .iter()
        .map(|f| f.code)
        .collect()
}

#[test]
fn clean_three_file_site_has_no_findings() {
    let files = site(&[
        ("index.html", CLEAN_HTML),
        ("styles.css", CLEAN_CSS),
        ("scripts.js", CLEAN_JS),
    ]);
    let report = check(&files, &BEHAVIOUR);
    assert_eq!(report.findings, vec![]);
    assert_eq!(
        report.checked,
        vec!["index.html", "scripts.js", "styles.css"]
    );
    assert_eq!(report.interaction, InteractionStatus::NotRequested);
}

#[test]
fn one_row_per_finding_code() {
    let page = |body: &str| format!("<!doctype html><html><head></head><body>{body}</body></html>");
    let rows: Vec<(Vec<(&str, String)>, Request, &str)> = vec![
        (
            vec![(
                "index.html",
                page(r#"<link rel="stylesheet" href="css/site.css"><p>x</p>"#),
            )],
            PLAIN,
            "MISSING_STYLESHEET",
        ),
        (
            vec![(
                "index.html",
                page(r#"<p>x</p><script src="app.js"></script>"#),
            )],
            PLAIN,
            "MISSING_SCRIPT",
        ),
        (
            vec![
                (
                    "index.html",
                    page(
                        r#"<link rel="stylesheet" href="a.css"><link rel="stylesheet" href="./a.css"><p>x</p>"#,
                    ),
                ),
                ("a.css", String::new()),
            ],
            PLAIN,
            "DUPLICATE_STYLESHEET",
        ),
        (
            vec![("index.html", page(r#"<p id="a">x</p><p id="a">y</p>"#))],
            PLAIN,
            "DUPLICATE_ID",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="a.css"><p>x</p>"#),
                ),
                ("a.css", ".missing { color: red }".to_string()),
            ],
            PLAIN,
            "SELECTOR_WITHOUT_ELEMENT",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<p>x</p><script src="a.js"></script>"#),
                ),
                (
                    "a.js",
                    "document.getElementById('nope').textContent = 'x';".to_string(),
                ),
            ],
            PLAIN,
            "SELECTOR_WITHOUT_ELEMENT",
        ),
        (
            vec![(
                "index.html",
                page("<p>x</p><script>document.querySelector('.gone').remove();</script>"),
            )],
            PLAIN,
            "SELECTOR_WITHOUT_ELEMENT",
        ),
        (
            vec![("index.html", page("<button>Go</button>"))],
            BEHAVIOUR,
            "NO_SCRIPT_FOR_BEHAVIOUR",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<button id="go">Go</button><script src="a.js"></script>"#),
                ),
                ("a.js", "console.log('ready');".to_string()),
            ],
            BEHAVIOUR,
            "CONTROL_NOT_WIRED",
        ),
        (
            vec![("index.html", page("<div>x</div></div>"))],
            PLAIN,
            "MALFORMED_CLOSING_TAG",
        ),
        (
            vec![("index.html", page("<p>Lorem ipsum dolor sit amet</p>"))],
            PLAIN,
            "PLACEHOLDER_CONTENT",
        ),
        (
            vec![("index.html", page("<!-- content -->"))],
            PLAIN,
            "PLACEHOLDER_CONTENT",
        ),
        (
            vec![("index.html", page("<p>FIXME: write this</p>"))],
            PLAIN,
            "PLACEHOLDER_CONTENT",
        ),
        (
            vec![("index.html", page("<div>x</div"))],
            PLAIN,
            "UNTERMINATED_CLOSING_TAG",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="a.css"><div class="card">x</div>"#),
                ),
                ("a.css", "card { padding: 1rem }".to_string()),
            ],
            PLAIN,
            "TYPE_SELECTOR_WITHOUT_ELEMENT",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="a.css"><p id="intro">x</p>"#),
                ),
                ("a.css", "intro { margin: 0 }".to_string()),
            ],
            PLAIN,
            "TYPE_SELECTOR_WITHOUT_ELEMENT",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<p>x</p><script src="a.js"></script>"#),
                ),
                ("a.js", "// TODO\n".to_string()),
            ],
            PLAIN,
            "PLACEHOLDER_ASSET",
        ),
        (
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="a.css"><p>x</p>"#),
                ),
                ("a.css", "/* styles here */\n".to_string()),
            ],
            PLAIN,
            "PLACEHOLDER_ASSET",
        ),
        (
            vec![
                ("index.html", page("<p>x</p>")),
                ("b.js", "// TODO\n".to_string()),
            ],
            PLAIN,
            "UNUSED_ASSET",
        ),
        (
            vec![
                ("index.html", page("<p>x</p>")),
                ("b.css", ".ghost { color: red }".to_string()),
            ],
            PLAIN,
            "UNUSED_ASSET",
        ),
    ];
    for (files, request, want) in rows {
        let lf: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
        assert_eq!(codes(&lf, &request), vec![want], "files: {lf:?}");
        let crlf: Vec<(&str, String)> = files.iter().map(|(p, c)| (*p, to_crlf(c))).collect();
        let crlf: Vec<(&str, &str)> = crlf.iter().map(|(p, c)| (*p, c.as_str())).collect();
        assert_eq!(codes(&crlf, &request), vec![want], "CRLF files: {crlf:?}");
    }
}

/// The same file written with Windows line endings, broken after every tag and statement.
fn to_crlf(content: &str) -> String {
    content
        .replace("\r\n", "\n")
        .replace('\n', "\r\n")
        .replace('>', ">\r\n")
        .replace(';', ";\r\n")
}

#[test]
fn a_clean_site_with_crlf_line_endings_has_no_findings() {
    let files = site(&[
        ("index.html", &to_crlf(CLEAN_HTML)),
        ("styles.css", &to_crlf(CLEAN_CSS)),
        ("scripts.js", &to_crlf(CLEAN_JS)),
    ]);
    assert_eq!(check(&files, &BEHAVIOUR).findings, vec![]);
}

#[test]
fn negative_rows_stay_quiet() {
    let page = |head: &str, body: &str| {
        format!("<!doctype html><html><head>{head}</head><body>{body}</body></html>")
    };
    let rows: Vec<(&str, Vec<(&str, String)>, Request)> = vec![
        (
            "absolute and CDN links",
            vec![(
                "index.html",
                page(
                    r#"<link rel="stylesheet" href="https://cdn.example/x.css">
                    <link rel="stylesheet" href="//cdn.example/y.css">
                    <link rel="stylesheet" href="data:text/css,p{}">"#,
                    r#"<p>x</p><script src="http://cdn.example/z.js"></script>"#,
                ),
            )],
            PLAIN,
        ),
        (
            "ids used by JS only",
            vec![
                ("index.html", page("", r#"<p id="out">x</p><script src="a.js"></script>"#)),
                ("a.js", "document.getElementById('out').textContent = 'y';".to_string()),
            ],
            PLAIN,
        ),
        (
            "pseudo-classes, @media, attribute selectors, :not()",
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="s.css">"#, r#"<a class="btn">x</a>"#),
                ),
                (
                    "s.css",
                    ".btn:hover{} @media print { .btn::after{} } a[href$=pdf]{} a:not(.nav){} \
                     @keyframes k { from {} to {} }"
                        .to_string(),
                ),
            ],
            PLAIN,
        ),
        (
            "a button with onclick",
            vec![(
                "index.html",
                page("", r#"<button onclick="this.textContent='hi'">Go</button>"#),
            )],
            BEHAVIOUR,
        ),
        (
            "class added by script",
            vec![
                ("index.html", page(r#"<link rel="stylesheet" href="s.css">"#, r#"<p id="p">x</p><script src="a.js"></script>"#)),
                ("s.css", ".is-active{}".to_string()),
                ("a.js", "document.getElementById('p').classList.add('is-active');".to_string()),
            ],
            PLAIN,
        ),
        (
            "element created by script",
            vec![
                ("index.html", page("", r#"<div id="root"></div><script src="a.js"></script>"#)),
                (
                    "a.js",
                    "const e = document.createElement('p'); e.id = 'made'; \
                     document.getElementById('root').append(e); \
                     document.getElementById('made').textContent = 'x';"
                        .to_string(),
                ),
            ],
            PLAIN,
        ),
        (
            "element made by another script of the page",
            vec![
                (
                    "index.html",
                    page("", r#"<script src="a.js"></script><script src="b.js"></script>"#),
                ),
                ("a.js", "document.body.innerHTML = '<p id=\"late\"></p>';".to_string()),
                ("b.js", "document.getElementById('late').textContent = 'x';".to_string()),
            ],
            PLAIN,
        ),
        (
            "submit button in a form wired by id",
            vec![
                (
                    "index.html",
                    page("", r#"<form id="f"><input name="q"><button>Send</button></form><script src="a.js"></script>"#),
                ),
                (
                    "a.js",
                    "document.getElementById('f').addEventListener('submit', e => e.preventDefault());"
                        .to_string(),
                ),
            ],
            BEHAVIOUR,
        ),
        (
            "TODO app",
            vec![("index.html", page("", "<h1>TODO list</h1>"))],
            TODO_PAGE,
        ),
        (
            "script in a subfolder, page-relative links",
            vec![
                (
                    "site/index.html",
                    page(r#"<link rel="stylesheet" href="../shared/s.css">"#, r#"<p class="x">x</p><script src="/site/js/a.js"></script>"#),
                ),
                ("shared/s.css", ".x{}".to_string()),
                ("site/js/a.js", "let x = 1;".to_string()),
            ],
            PLAIN,
        ),
        (
            "closing tags inside script strings and comments",
            vec![(
                "index.html",
                page("", "<!-- </div> --><p>x</p><script>const s = '</div></p>';</script>"),
            )],
            PLAIN,
        ),
        (
            "a closing tag terminated on the next line",
            vec![("index.html", page("", "<div>x</div\n>"))],
            PLAIN,
        ),
        (
            "type selectors of elements the page has, or of names it does not use",
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="s.css">"#, r#"<p class="p">x</p>"#),
                ),
                ("s.css", "p { x: y } section { x: y } P:hover { x: y }".to_string()),
            ],
            PLAIN,
        ),
        (
            "a script with code after its TODO comment, an empty stylesheet",
            vec![
                (
                    "index.html",
                    page(r#"<link rel="stylesheet" href="s.css">"#, r#"<p>x</p><script src="a.js"></script>"#),
                ),
                ("a.js", "// TODO: more\nlet x = 1;\n".to_string()),
                ("s.css", String::new()),
            ],
            PLAIN,
        ),
        (
            "a script of a project with no page",
            vec![("server.js", "// TODO\n".to_string())],
            PLAIN,
        ),
        (
            "a stylesheet judged only against the page that loads it",
            vec![
                (
                    "a.html",
                    page(r#"<link rel="stylesheet" href="s.css">"#, r#"<p class="only-a">x</p>"#),
                ),
                ("b.html", page("", r#"<p class="only-b">x</p>"#)),
                ("s.css", ".only-a { x: y }".to_string()),
            ],
            PLAIN,
        ),
    ];
    for (name, files, request) in rows {
        let lf: Vec<(&str, &str)> = files.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let report = check(&site(&lf), &request);
        assert_eq!(report.findings, vec![], "row: {name}");
        let crlf: Vec<(&str, String)> = files.iter().map(|(p, c)| (*p, to_crlf(c))).collect();
        let crlf: Vec<(&str, &str)> = crlf.iter().map(|(p, c)| (*p, c.as_str())).collect();
        let report = check(&site(&crlf), &request);
        assert_eq!(report.findings, vec![], "CRLF row: {name}");
    }
}

#[test]
fn messages_name_the_file_and_the_selector() {
    let files = site(&[
        (
            "index.html",
            r#"<link rel="stylesheet" href="a.css"><p id="a"></p><p id="a"></p>"#,
        ),
        ("a.css", ".card .ghost { x: y }"),
    ]);
    let report = check(&files, &PLAIN);
    let messages: Vec<(&str, &str, &str)> = report
        .findings
        .iter()
        .map(|f| (f.file.as_str(), f.code, f.message.as_str()))
        .collect();
    assert_eq!(
        messages,
        vec![
            (
                "index.html",
                "DUPLICATE_ID",
                "index.html uses id \"a\" 2 times (#a)"
            ),
            (
                "a.css",
                "SELECTOR_WITHOUT_ELEMENT",
                "a.css: selector `.card .ghost` names .card, which no element of index.html has"
            ),
            (
                "a.css",
                "SELECTOR_WITHOUT_ELEMENT",
                "a.css: selector `.card .ghost` names .ghost, which no element of index.html has"
            ),
        ]
    );
}

/// Proves what the files alone say about a named interaction: the page a browser would load,
/// a named id that no page holds, and no interaction named.
#[test]
fn interaction_status_rows() {
    let files = site(&[
        ("index.html", CLEAN_HTML),
        ("about.html", "<p id=\"about-note\">x</p>"),
        ("styles.css", CLEAN_CSS),
        ("scripts.js", CLEAN_JS),
    ]);
    let run = |trigger: &str, target: &str, page: Option<&str>| {
        InteractionStatus::NeedsBrowser(BrowserRun {
            trigger: trigger.to_string(),
            target: target.to_string(),
            page: page.map(str::to_string),
        })
    };
    let rows: &[(
        &BTreeMap<String, String>,
        Option<(&str, &str)>,
        InteractionStatus,
    )] = &[
        (
            &files,
            Some(("teaser-button", "teaser-status")),
            run("teaser-button", "teaser-status", Some("index.html")),
        ),
        (
            &files,
            Some(("teaser-status", "app")),
            run("teaser-status", "app", Some("index.html")),
        ),
        (
            &files,
            Some(("about-note", "teaser-status")),
            run("about-note", "teaser-status", Some("about.html")),
        ),
        (
            &files,
            Some(("teaser-button", "missing-status")),
            InteractionStatus::Failed("no element #missing-status in any page".to_string()),
        ),
        (
            &files,
            Some(("gone", "missing-status")),
            InteractionStatus::Failed("no element #gone, #missing-status in any page".to_string()),
        ),
        (&files, None, InteractionStatus::NotRequested),
        (&BTreeMap::new(), Some(("a", "b")), run("a", "b", None)),
    ];
    for (files, named, want) in rows {
        let request = Request {
            interaction: named.map(|(trigger, target)| Interaction {
                trigger: trigger.to_string(),
                target: target.to_string(),
            }),
            ..BEHAVIOUR
        };
        assert_eq!(
            &check(files, &request).interaction,
            want,
            "named: {named:?}"
        );
    }
}

#[test]
fn resolve_table() {
    let rows: &[(&str, &str, Option<&str>)] = &[
        ("index.html", "styles.css", Some("styles.css")),
        ("index.html", "./css/a.css?v=2", Some("css/a.css")),
        ("pages/about.html", "../a.css", Some("a.css")),
        ("pages/about.html", "/a.css", Some("a.css")),
        ("index.html", "https://x/a.css", None),
        ("index.html", "//cdn/a.css", None),
        ("index.html", "data:text/css,a", None),
        ("index.html", "", None),
    ];
    for (page, href, want) in rows {
        assert_eq!(resolve(page, href).as_deref(), *want, "{page} {href}");
    }
}

#[test]
fn page_links_table() {
    let rows: &[(&str, &str, &[&str])] = &[
        ("index.html", CLEAN_HTML, &["styles.css", "scripts.js"]),
        (
            "site/a.html",
            "<link rel=\"stylesheet\" href=\"../s.css\">\r\n<script src=\"https://x/y.js\"></script><script src=\"js/a.js\"></script>",
            &["s.css", "site/js/a.js"],
        ),
        ("index.html", "<p>no links</p>", &[]),
    ];
    for (page, content, want) in rows {
        assert_eq!(page_links(page, content), *want, "{page}");
    }
}
