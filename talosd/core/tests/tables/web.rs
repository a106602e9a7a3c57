//! Table tests of the contract's web facts (`contract/web.rs`): whether a request is static web
//! work, whether it asks for behaviour, whether it mentions todo, and which interaction it
//! names. The first rows of each table are the daemon's former regex classifier's rows; the
//! rest prove each alternative of the ported patterns, their word boundaries and their case
//! folding, and that the resolver fills the facts in.

use pretty_assertions::assert_eq;
use talos_core::contract::{
    NamedInteraction, WebRequest, has_default_web_targets, reconcile_default_web_targets, resolve,
    web_request,
};
use talos_core::history::{PriorOutcome, PriorTurn, resolve_in_context};

fn facts(request: &str, targets: &[&str]) -> WebRequest {
    let targets: Vec<String> = targets.iter().map(|t| t.to_string()).collect();
    web_request(request, &targets)
}

/// One check for the three yes/no facts: `field` picks the fact a table is about.
fn check_flags(rows: &[(&str, &[&str], bool)], field: fn(&WebRequest) -> bool, what: &str) {
    for (request, targets, want) in rows {
        assert_eq!(
            field(&facts(request, targets)),
            *want,
            "{what}: request {request:?}, targets {targets:?}"
        );
    }
}

#[test]
fn is_static_web_rows() {
    let rows: &[(&str, &[&str], bool)] = &[
        // The former classifier's rows.
        ("Build a landing page for my bakery", &[], true),
        ("make a small website", &[], true),
        ("Fix the stylesheet colours", &[], true),
        ("add a button that counts clicks", &[], true),
        ("edit index.html to add a footer", &[], true),
        ("update about.htm", &[], true),
        ("change the title", &["site/index.html"], true),
        ("tweak it", &["styles.css"], true),
        ("fix the parser bug in src/lib.rs", &["src/lib.rs"], false),
        ("add a CLI flag --verbose", &[], false),
        // Targets: .html, .htm, .css in any case; nothing else.
        ("tweak it", &["A/B.HTM"], true),
        ("tweak it", &["site.Css"], true),
        ("tweak it", &["notes.md", "a.cssx"], false),
        // web\s*sites?
        ("a web site for me", &[], true),
        ("two WEBSITES", &[], true),
        ("web\tsites", &[], true),
        ("a website's footer", &[], true),
        ("websitex", &[], false),
        ("cobweb site", &[], false),
        // web\s*pages?
        ("a webpage", &[], true),
        ("web   pages", &[], true),
        ("web-page", &[], false),
        // landing\s+pages?
        ("landing\npages", &[], true),
        ("landingpage", &[], false),
        ("landing zone", &[], false),
        // index\.html?
        ("open INDEX.HTM", &[], true),
        ("index.html, then", &[], true),
        ("index html", &[], false),
        ("index.htmx", &[], false),
        // style\s*sheets?
        ("style sheets", &[], true),
        ("a STYLESHEET.", &[], true),
        ("styles sheet", &[], false),
        ("stylesheeted", &[], false),
        // buttons?
        ("two Buttons", &[], true),
        ("buttonhole", &[], false),
        ("rebutton", &[], false),
        // click(s|ing|ed)?
        ("clicked", &[], true),
        ("clicking", &[], true),
        ("CLICKS", &[], true),
        ("pre-click", &[], true),
        ("clickable", &[], false),
        ("doubleclick", &[], false),
        // [\w-]+\.html?
        ("fix my-page.html now", &[], true),
        ("fix a_b.HTM", &[], true),
        ("see docs/about.html", &[], true),
        ("fix -x.html", &[], true),
        ("fix .html", &[], false),
        ("fix page.htmlx", &[], false),
        ("fix page.html_", &[], false),
        // (?i) folds the Kelvin sign to k and the long s to s.
        ("clic\u{212A} it", &[], true),
        ("\u{17F}tyle\u{17F}heet", &[], true),
        ("a sub-web page", &[], true),
        ("", &[], false),
    ];
    check_flags(rows, |f| f.is_static_web, "is_static_web");
}

#[test]
fn asks_for_behaviour_rows() {
    let rows: &[(&str, &[&str], bool)] = &[
        // The former classifier's rows.
        ("clicking the button shows a message", &[], true),
        ("a counter that goes up", &[], true),
        ("make it interactive", &[], true),
        ("toggle dark mode", &[], true),
        ("when the button is pressed", &[], true),
        ("a static page about cats", &[], false),
        ("make the heading blue", &[], false),
        // click(s|ing|ed)?
        ("on click", &[], true),
        ("it Clicks", &[], true),
        ("once clicked", &[], true),
        ("clicker game", &[], false),
        // toggl(e|es|ed|ing)
        ("it toggles", &[], true),
        ("TOGGLED on", &[], true),
        ("toggling it", &[], true),
        ("toggl", &[], false),
        ("toggler", &[], false),
        // counters?
        ("two counters", &[], true),
        ("countering", &[], false),
        ("a count", &[], false),
        // interactive
        ("Interactive map", &[], true),
        ("interactively", &[], false),
        // submit(s|ted|ting)?
        ("submit it", &[], true),
        ("it submits", &[], true),
        ("once submitted", &[], true),
        ("on submitting", &[], true),
        ("a submitter", &[], false),
        ("submission", &[], false),
        // onclick
        ("an onClick handler", &[], true),
        ("onclicks", &[], false),
        // events?
        ("an event", &[], true),
        ("dom events", &[], true),
        ("eventual", &[], false),
        ("prevent it", &[], false),
        // when\s+the\s+button
        ("WHEN  THE\nBUTTON", &[], true),
        ("when the buttons", &[], false),
        ("when the button-bar", &[], true),
        ("when the buttonbar", &[], false),
        ("when thebutton", &[], false),
        // Word boundaries are the core's word characters.
        ("click_here", &[], false),
        ("re-click", &[], true),
        ("clické", &[], false),
        ("click\u{301}", &[], false),
        ("click\u{200D}", &[], false),
    ];
    check_flags(rows, |f| f.asks_for_behaviour, "asks_for_behaviour");
}

#[test]
fn mentions_todo_rows() {
    let rows: &[(&str, &[&str], bool)] = &[
        ("build a todo list page", &[], true),
        ("a TODO app", &[], true),
        ("mytodos", &[], true),
        ("to do list", &[], false),
        ("", &[], false),
    ];
    check_flags(rows, |f| f.mentions_todo, "mentions_todo");
}

#[test]
fn interaction_rows() {
    let rows: &[(&str, Option<(&str, &str)>)] = &[
        // The former classifier's rows.
        (
            "Make it so clicking #teaser-button updates #teaser-status",
            Some(("teaser-button", "teaser-status")),
        ),
        (
            "When I click #go it changes #out to say hi",
            Some(("go", "out")),
        ),
        (
            "click the button #b1 and it shows #msg",
            Some(("b1", "msg")),
        ),
        ("clicking `#a` updates `#b`", Some(("a", "b"))),
        ("add a button that shows a message", None),
        ("clicking #a does nothing", None),
        ("make #x blue", None),
        // Each trigger word.
        ("click #a to update #b", Some(("a", "b"))),
        ("it clicks #a then sets #b", Some(("a", "b"))),
        ("once clicked #a, fill #b", Some(("a", "b"))),
        ("TAP #a; reveal #b", Some(("a", "b"))),
        ("tapping #a toggles #b", Some(("a", "b"))),
        ("press #a shows #b", Some(("a", "b"))),
        ("pressing #a changes #b", Some(("a", "b"))),
        // Each effect word.
        ("click #a: updating #b", Some(("a", "b"))),
        ("click #a, changing #b", Some(("a", "b"))),
        ("click #a, showing #b", Some(("a", "b"))),
        ("click #a reveals #b", Some(("a", "b"))),
        ("click #a toggle #b", Some(("a", "b"))),
        ("click #a fills #b", Some(("a", "b"))),
        ("click #a sets #b", Some(("a", "b"))),
        ("click #a change #b", Some(("a", "b"))),
        ("click #a show #b", Some(("a", "b"))),
        ("click #a update #b", Some(("a", "b"))),
        ("click #a set #b", Some(("a", "b"))),
        ("click #a fill #b", Some(("a", "b"))),
        ("click #a reveal #b", Some(("a", "b"))),
        // The optional words between the verb and the id.
        ("click on #a then set #b", Some(("a", "b"))),
        ("click on the #a then set #b", Some(("a", "b"))),
        ("click on the big #a then set #b", Some(("a", "b"))),
        ("click on the big red #a then set #b", None),
        ("click #a: set the text of #b", Some(("a", "b"))),
        ("click #a: set the text in the #b", Some(("a", "b"))),
        ("click #a: set the text in the big #b", None),
        ("click #a: set text in status #b", Some(("a", "b"))),
        ("click #a: set the label #b", Some(("a", "b"))),
        ("click #a: set the text to #b", None),
        ("click on `#a` then set the `#b`", Some(("a", "b"))),
        // Ids: a letter first, then letters, digits, `_` and `-`; any case in the verbs.
        ("CLICK #Go-1_x UPDATES #Out", Some(("Go-1_x", "Out"))),
        ("click #1a updates #b", None),
        ("click #a updates #-b", None),
        ("click # a updates #b", None),
        ("click  \t#a updates\n#b", Some(("a", "b"))),
        ("click#a updates #b", None),
        ("click #a updates#b", None),
        ("clicks #\u{17F}a sets #b", Some(("\u{17F}a", "b"))),
        (
            "click #a\u{301}b sets #c\u{203F}d",
            Some(("a\u{301}b", "c\u{203F}d")),
        ),
        // Word boundary before the verbs, none needed after the id.
        ("doubleclick #a updates #b", None),
        ("click #a reupdates #b", None),
        ("click #a updates #b.", Some(("a", "b"))),
        ("click #a.x updates #b", Some(("a", "b"))),
        // The first trigger, the first effect after it; the same id twice is none.
        ("click #a updates #b, click #c updates #d", Some(("a", "b"))),
        ("updates #b after click #a", None),
        ("click #a updates #a", None),
        ("click #a updates #A", Some(("a", "A"))),
        ("", None),
        // The trigger first as the subject, the click word after the effect.
        ("Make #a update #b when clicked", Some(("a", "b"))),
        (
            "make `#a` update `#b` when it is clicked.",
            Some(("a", "b")),
        ),
        ("#go should set #out on click", Some(("go", "out"))),
        (
            "#plus will increment #count when pressed",
            Some(("plus", "count")),
        ),
        (
            "The #menu-btn toggles #menu when tapped",
            Some(("menu-btn", "menu")),
        ),
        ("Make #a update #b. Then click save.", None),
        ("Make #a update #b", None),
        ("make #a blue when clicked", None),
        // The trigger in "when #a is clicked", the effect before or after it.
        ("When #a is clicked, update #b", Some(("a", "b"))),
        ("update #b when #a is clicked", Some(("a", "b"))),
        (
            "once `#save` gets pressed, show #toast",
            Some(("save", "toast")),
        ),
        ("when #a is ready, update #b", None),
        ("when #a is clicked, update #a", None),
    ];
    for (request, want) in rows {
        let want = want.map(|(trigger, target)| NamedInteraction {
            trigger: trigger.to_string(),
            target: target.to_string(),
        });
        assert_eq!(
            facts(request, &[]).interaction,
            want,
            "request: {request:?}"
        );
    }
}

/// Proves the resolver fills the web facts from the request and its expected targets, and that
/// a follow-up's facts read the whole inherited request.
#[test]
fn contracts_carry_the_web_facts() {
    let named = resolve("In index.html, make it so clicking #go updates #out");
    assert_eq!(
        named.web,
        WebRequest {
            is_static_web: true,
            asks_for_behaviour: true,
            mentions_todo: false,
            interaction: Some(NamedInteraction {
                trigger: "go".to_string(),
                target: "out".to_string(),
            }),
        }
    );
    assert_eq!(
        resolve("In settings.py, change TIMEOUT from 30 to 60.").web,
        WebRequest::default()
    );
    let by_target = resolve("Fix the colours in site/main.css");
    assert!(
        by_target.web.is_static_web,
        "{:?}",
        by_target.expected_targets
    );
    assert_eq!(resolve("").web, WebRequest::default());
    let prior = PriorTurn {
        contract: resolve("Create a landing page where clicking #go updates #out"),
        outcome: PriorOutcome::Verified,
        changed: vec![],
    };
    let follow_up = resolve_in_context(&[prior], "but there is no css");
    assert!(
        follow_up.original_request.contains("follow-up"),
        "{}",
        follow_up.original_request
    );
    assert_eq!(
        follow_up.web.interaction, named.web.interaction,
        "the inherited request still names the interaction"
    );
}

/// Proves the conventional default targets take the workspace's names: the page's own link of
/// that kind first, then an existing `styles.css` / `scripts.js`; a default that exists, a
/// name the person gave and a workspace with neither stay as they are.
#[test]
fn default_web_targets_are_reconciled_with_the_workspace() {
    const SITE: &str = "Create a modern website with css and javascript";
    let names = |items: &[&str]| -> Vec<String> { items.iter().map(|s| s.to_string()).collect() };
    // (what, request, existing names, the page's links, expected targets after)
    let rows: &[(&str, &str, &[&str], &[&str], &[&str])] = &[
        (
            "existing plural names",
            SITE,
            &["index.html", "styles.css", "scripts.js"],
            &[],
            &["index.html", "styles.css", "scripts.js"],
        ),
        (
            "the names the page links",
            SITE,
            &["index.html", "styles.css"],
            &["css/site.css", "js/app.js"],
            &["index.html", "css/site.css", "js/app.js"],
        ),
        (
            "a default that exists stays",
            SITE,
            &["style.css", "styles.css", "scripts.js"],
            &[],
            &["index.html", "style.css", "scripts.js"],
        ),
        (
            "an empty workspace keeps the conventional names",
            SITE,
            &[],
            &[],
            &["index.html", "style.css", "script.js"],
        ),
        (
            "a name the person gave is never renamed",
            "Create style.css with a blue background",
            &["styles.css"],
            &["styles.css"],
            &["style.css"],
        ),
    ];
    for (what, request, existing, linked, want) in rows {
        let contract = resolve(request);
        let reconciled =
            reconcile_default_web_targets(contract.clone(), &names(existing), &names(linked));
        assert_eq!(reconciled.expected_targets, names(want), "{what}");
        assert_eq!(
            has_default_web_targets(&contract),
            *request == SITE,
            "{what}: defaults present"
        );
    }
}
