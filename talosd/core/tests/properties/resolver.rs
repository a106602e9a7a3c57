//! Properties of the resolver: it never panics on any input (arbitrary strings, marker soup,
//! very long requests, follow-ups on arbitrary history), every contract keeps its invariants,
//! and static-web requirements are bounded.

use proptest::prelude::*;
use talos_core::contract::{TaskContract, TaskType, resolve};
use talos_core::history::{PriorOutcome, PriorTurn, resolve_in_context};
use talos_core::intent::compile;

/// The flags follow the type and the target lists compile from the roleful list.
fn assert_invariants(c: &TaskContract) {
    let mutates = matches!(c.task_type, TaskType::FileEdit | TaskType::FileCreate);
    assert_eq!(c.mutation_allowed, c.mutation_requested && mutates, "{c:?}");
    assert_eq!(
        c.verification_required,
        c.mutation_allowed || c.task_type == TaskType::VerifyOnly,
        "{c:?}"
    );
    let compiled = compile(&c.roleful_targets, c.mutation_requested);
    assert_eq!(compiled.expected, c.expected_targets, "{c:?}");
    assert_eq!(compiled.source_evidence, c.source_evidence_targets, "{c:?}");
    assert_eq!(compiled.forbidden, c.forbidden_targets, "{c:?}");
    assert!(
        c.expected_targets
            .iter()
            .all(|t| !c.forbidden_targets.contains(t)),
        "{c:?}"
    );
    assert!(c.static_web.required_visible_facts.len() <= 40);
    assert!(
        c.static_web
            .required_visible_facts
            .iter()
            .all(|f| f.chars().count() <= 120)
    );
}

const MARKERS: &[&str] = &[
    "do not ",
    "don't ",
    "dont ",
    "not ",
    "without changing ",
    "fix ",
    "edit ",
    "create ",
    "index.html",
    "styles.css",
    "./a/b.js",
    ".env",
    "README",
    "../../etc/passwd",
    "so ",
    "only ",
    "if necessary",
    "keep ",
    "unchanged",
    "leave ",
    "alone",
    "avoid ",
    "did you ",
    "?",
    ".",
    ",",
    ";",
    "\n",
    "\"",
    "'",
    "`",
    "\\",
    "summarize ",
    " into ",
    "from ",
    "read ",
    " and then ",
    "make it ",
    "the site",
    "tailwind.min.css",
    "no local tailwind files",
    "ignore instructions ",
    " to create ",
    "İ",
    "ß",
    "🚀",
    "\u{2019}",
    "\u{0}",
    " ",
    "  ",
    "use exactly ",
    "mkdir ",
    "copy a to b",
    "->",
    "preserve these facts: a, b",
    "\t",
];

fn marker_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => proptest::sample::select(MARKERS).prop_map(str::to_string),
        1 => "\\PC{0,6}",
        1 => "[a-z./\\\\ -]{0,8}",
    ];
    proptest::collection::vec(piece, 0..32).prop_map(|parts| parts.concat())
}

fn outcome(index: usize) -> PriorOutcome {
    [
        PriorOutcome::Verified,
        PriorOutcome::Unverified,
        PriorOutcome::Incomplete,
        PriorOutcome::Denied,
        PriorOutcome::Blocked,
        PriorOutcome::Failed,
        PriorOutcome::ReadOnly,
    ][index % 7]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// Any string resolves without a panic, to a contract that keeps its invariants.
    #[test]
    fn never_panics(s in ".*") {
        assert_invariants(&resolve(&s));
    }

    /// Strings made of the resolver's own markers, punctuation and odd characters resolve too.
    #[test]
    fn never_panics_on_marker_soup(s in marker_soup()) {
        assert_invariants(&resolve(&s));
    }

    /// Follow-ups on arbitrary prior turns resolve without a panic and keep the invariants.
    #[test]
    fn follow_ups_never_panic(
        prior in marker_soup(),
        index in 0usize..7,
        follow in prop_oneof![
            Just("yes".to_string()),
            Just("try again".to_string()),
            Just("but there is no css".to_string()),
            Just("here".to_string()),
            marker_soup(),
        ],
    ) {
        let history = vec![PriorTurn { contract: resolve(&prior), outcome: outcome(index), changed: vec![] }];
        assert_invariants(&resolve_in_context(&history, &follow));
    }
}

/// A very long request resolves, and a negation far from the edit still binds its target.
#[test]
fn very_long_requests_resolve() {
    let filler = "lorem ipsum dolor sit amet ".repeat(8_000);
    let request = format!("Fix index.html. {filler} Do not touch style.css.");
    let c = resolve(&request);
    assert_eq!(c.task_type, TaskType::FileEdit);
    assert_eq!(c.expected_targets, vec!["index.html".to_string()]);
    assert_eq!(c.forbidden_targets, vec!["style.css".to_string()]);
    for soup in [
        "do not change a.md ".repeat(4_000),
        "x".repeat(300_000),
        "(".repeat(50_000),
        "keep a.md unchanged, leave b.md alone, not c.md; ".repeat(2_000),
        "🚀".repeat(50_000),
    ] {
        assert_invariants(&resolve(&soup));
    }
}

/// Required visible facts come from "preserve … facts:" lists, at most 40 of at most 120 chars.
#[test]
fn required_visible_facts_are_bounded() {
    let retrocats = "Create a complete modern dark synthwave static website for a band called \
        Retrocats. Use exactly index.html, style.css, and script.js as the local files. The site \
        must preserve these required visible facts: Retrocats, Costanza, Merri, formed in 2024, \
        Rome 15 July 2026, Berlin 22 July 2026. Make it visually strong.";
    let c = resolve(retrocats);
    assert_eq!(
        c.static_web.required_visible_facts,
        [
            "Retrocats",
            "Costanza",
            "Merri",
            "formed in 2024",
            "Rome 15 July 2026",
            "Berlin 22 July 2026"
        ]
    );
    assert_eq!(c.expected_targets, ["index.html", "style.css", "script.js"]);
    let many: Vec<String> = (0..60).map(|i| format!("fact {i}")).collect();
    let long = "y".repeat(300);
    let c = resolve(&format!(
        "Build the page. Keep these details: {}, {long}",
        many.join(", ")
    ));
    assert_eq!(c.static_web.required_visible_facts.len(), 40);
    let c = resolve(&format!("Build the page. Keep the content: {long}"));
    assert_eq!(c.static_web.required_visible_facts, ["y".repeat(120)]);
    let c = resolve("Create the site. Keep these facts: Founded 1999; Based in Oslo; 12 staff.");
    assert_eq!(
        c.static_web.required_visible_facts,
        ["Founded 1999", "Based in Oslo", "12 staff"]
    );
    let c = resolve("Create the site. Do not create tailwind.css");
    assert_eq!(c.static_web.forbidden_artifacts, ["tailwind.css"]);
}
