//! `auto` mode's deterministic viewer as rows: the effects it asks for, its answer, and the
//! records (no model, the ladder in INSPECT, a protected read asks, output shown as trusted).

use crate::turn_support::{Reply, answer, name, turn};
use talos_core::ladder::Grants;
use talos_core::modes::{SessionMode, Structural};
use talos_core::turn::Notice;
use talos_core::turn::call::{Effect, Input};
use talos_core::turn::view::View;

struct Row {
    what: &'static str,
    command: Structural,
    script: Vec<Reply>,
    effects: &'static [&'static str],
    says: &'static str,
    read_blocked: bool,
    read_denied: bool,
    trusted: bool,
}

fn check(row: Row) {
    let mut turn = turn("ls", SessionMode::Auto, Grants::default());
    let mut view = View::new(&mut turn, &row.command);
    let mut input = Input::Start;
    let mut seen = Vec::new();
    let mut replies = row.script.iter();
    let text = loop {
        let effect = view.step(&mut turn, input);
        seen.push(name(&effect));
        if let Effect::Finish(report) = effect {
            break report.text;
        }
        let reply = replies
            .next()
            .unwrap_or_else(|| panic!("{}: script ended", row.what));
        input = answer(reply, &effect);
    };
    assert_eq!(seen, row.effects, "{}: effects", row.what);
    assert!(
        text.contains(row.says),
        "{}: {text:?} lacks {:?}",
        row.what,
        row.says
    );
    let facts = &turn.record().facts;
    assert_eq!(
        facts.read_blocked, row.read_blocked,
        "{}: read_blocked",
        row.what
    );
    assert_eq!(
        facts.read_denied, row.read_denied,
        "{}: read_denied",
        row.what
    );
    let trusted = turn
        .drain_notices()
        .iter()
        .any(|n| matches!(n, Notice::TrustedInfo(_)));
    assert_eq!(trusted, row.trusted, "{}: trusted info", row.what);
    assert_eq!(
        turn.record().permission_decisions.len(),
        1,
        "{}: one ladder decision",
        row.what
    );
}

/// Proves each way the viewer can go, without a model.
#[test]
fn the_viewer_reads_through_the_same_boundary_and_ladder() {
    let show = |path: &str| Structural::Show { path: path.into() };
    let rows = vec![
        Row {
            what: "a plain file is read and shown as trusted information",
            command: show("notes.md"),
            script: vec![Reply::Paths, Reply::Output("1 | hello")],
            effects: &["resolve", "read", "finish"],
            says: "1 | hello",
            read_blocked: false,
            read_denied: false,
            trusted: true,
        },
        Row {
            what: "a path the kernel resolves outside is denied before any read",
            command: show("link/secret"),
            script: vec![Reply::Paths],
            effects: &["resolve", "finish"],
            says: "symlink leaves the workspace",
            read_blocked: true,
            read_denied: false,
            trusted: false,
        },
        Row {
            what: "a protected file asks, and a denial shows nothing",
            command: show(".env"),
            script: vec![Reply::Paths, Reply::Deny],
            effects: &["resolve", "ask", "finish"],
            says: "Not shown: reading .env was not approved.",
            read_blocked: false,
            read_denied: true,
            trusted: false,
        },
        Row {
            what: "an approved protected read is shown",
            command: show(".env"),
            script: vec![Reply::Paths, Reply::Approve, Reply::Output("1 | KEY=v")],
            effects: &["resolve", "ask", "read", "finish"],
            says: "1 | KEY=v",
            read_blocked: false,
            read_denied: false,
            trusted: true,
        },
        Row {
            what: "a listing is read like a file",
            command: Structural::List { path: ".".into() },
            script: vec![Reply::Paths, Reply::Output("a.txt\nsrc/")],
            effects: &["resolve", "read", "finish"],
            says: "src/",
            read_blocked: false,
            read_denied: false,
            trusted: true,
        },
    ];
    for row in rows {
        check(row);
    }
}
