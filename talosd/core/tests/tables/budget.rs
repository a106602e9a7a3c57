//! The context budget as rows (issue 23): given the sizes of a request's parts, what goes in
//! whole, what is cut to its note and what is left out; and the window of a long read.

use talos_core::budget::{
    self, Fit, Kind, Limits, MARGIN, MESSAGE_OVERHEAD, Part, Placement, assemble,
};

use Placement::{Note, Out, Whole};

fn part(kind: Kind, tokens: u64, note_tokens: u64, age: usize) -> Part {
    Part {
        kind,
        tokens,
        note_tokens,
        age,
    }
}

/// A context whose prompt room (after the reply and the margin) is exactly `room` tokens.
fn room(room: u64) -> Limits {
    Limits {
        context: room + 100 + MARGIN,
        reply: 100,
    }
}

/// Every row: the parts, the room, the placements expected.
fn check(what: &str, limits: Limits, parts: &[Part], expected: &[Placement]) {
    match assemble(limits, parts) {
        Fit::Fits { placements, tokens } => {
            assert_eq!(placements, expected, "{what}");
            assert!(
                tokens <= limits.prompt(),
                "{what}: {tokens} tokens over the room"
            );
        }
        Fit::TooSmall { needed, available } => {
            panic!("{what}: too small ({needed} needed, {available} available)")
        }
    }
}

const O: u64 = MESSAGE_OVERHEAD;

#[test]
fn what_goes_in_follows_the_fixed_order() {
    let system = part(Kind::System, 1000, 0, 0);
    let request = part(Kind::Request, 50, 0, 0);
    let rows: Vec<(&str, u64, Vec<Part>, Vec<Placement>)> = vec![
        (
            "everything fits",
            3000,
            vec![system, part(Kind::History, 200, 0, 0), request],
            vec![Whole, Whole, Whole],
        ),
        (
            "this turn's result is kept before the earlier turn",
            1050 + 2 * O + 600 + O,
            vec![
                system,
                part(Kind::History, 300, 0, 0),
                request,
                part(Kind::Turn, 600, 30, 0),
            ],
            vec![Whole, Out, Whole, Whole],
        ),
        (
            "pins before this turn's results: the result is cut to its note",
            1050 + 2 * O + 500 + O + 30 + O,
            vec![
                system,
                part(Kind::Pins, 500, 20, 0),
                request,
                part(Kind::Turn, 600, 30, 0),
            ],
            vec![Whole, Whole, Whole, Note],
        ),
        (
            "the newest result whole, the older cut to its note",
            1050 + 2 * O + 600 + O + 30 + O,
            vec![
                system,
                request,
                part(Kind::Turn, 600, 30, 1),
                part(Kind::Turn, 600, 30, 0),
            ],
            vec![Whole, Whole, Note, Whole],
        ),
        (
            "retrieval before history",
            1050 + 2 * O + 100 + O,
            vec![
                system,
                part(Kind::History, 100, 0, 0),
                part(Kind::Retrieval, 100, 0, 0),
                request,
            ],
            vec![Whole, Out, Whole, Whole],
        ),
        (
            "history: the newest earlier turns, without gaps",
            1050 + 2 * O + 100 + O + 50 + O,
            vec![
                system,
                part(Kind::History, 10, 0, 2),
                part(Kind::History, 500, 0, 1),
                part(Kind::History, 100, 0, 0),
                request,
            ],
            vec![Whole, Out, Out, Whole, Whole],
        ),
        (
            "a note that does not fit either is left out",
            1050 + 2 * O + 5,
            vec![system, request, part(Kind::Turn, 600, 30, 0)],
            vec![Whole, Whole, Out],
        ),
    ];
    for (what, tokens, parts, expected) in rows {
        check(what, room(tokens), &parts, &expected);
    }
}

#[test]
fn a_request_that_cannot_fit_names_both_sizes() {
    let parts = [
        part(Kind::System, 3000, 0, 0),
        part(Kind::Request, 2000, 0, 0),
        part(Kind::History, 10, 0, 0),
    ];
    let limits = Limits {
        context: 4096,
        reply: 512,
    };
    assert_eq!(
        assemble(limits, &parts),
        Fit::TooSmall {
            needed: 5000 + 2 * O,
            available: 4096 - 512 - MARGIN,
        }
    );
}

fn numbered(lines: usize, more: usize) -> String {
    let mut text: String = (1..=lines)
        .map(|n| format!("{n} | line number {n} of the file\n"))
        .collect();
    if more > 0 {
        text.push_str(&format!("... ({more} more lines)\n"));
    }
    text
}

#[test]
fn a_long_read_gets_a_window_that_fits_and_says_where_to_go_on() {
    let text = numbered(480, 0);
    let tokens = budget::estimate(&text);
    let window = budget::window(&text, tokens, 1000, "big.py").expect("it must be cut");
    assert!(
        budget::estimate(&window.text) <= 1000,
        "the window fits: {}",
        budget::estimate(&window.text)
    );
    let last = window
        .text
        .lines()
        .filter_map(|l| l.split_once(" | ")?.0.parse::<usize>().ok())
        .next_back()
        .expect("lines shown");
    assert_eq!(
        window.note,
        format!(
            "big.py: lines 1-{last} of 480 shown; read more with offset {}",
            last + 1
        )
    );
    assert!(window.text.ends_with(&format!("[{}]", window.note)));
    assert!(last > 20 && last < 480, "{last}");
}

#[test]
fn a_window_counts_the_lines_the_read_tool_left_out() {
    let text = numbered(500, 1500);
    let window = budget::window(&text, budget::estimate(&text), 600, "big.py").expect("cut");
    assert!(window.note.contains(" of 2000 shown"), "{}", window.note);
}

#[test]
fn what_fits_is_not_windowed_and_other_output_is_described_by_lines() {
    assert_eq!(budget::window("a\nb\n", 2, 2, "x"), None);
    let grep: String = (0..300).map(|n| format!("src/a.rs:{n}: match\n")).collect();
    let window = budget::window(&grep, budget::estimate(&grep), 400, "talos.grep").expect("cut");
    assert!(
        window.note.starts_with("talos.grep: the first ") && window.note.contains("of 300 lines"),
        "{}",
        window.note
    );
}

#[test]
fn the_estimate_is_conservative_for_code() {
    // One token per two bytes (measured: the default model's tokenizer takes 2.3 to 4.5).
    assert_eq!(budget::estimate(""), 0);
    assert_eq!(budget::estimate("abcd"), 2);
    assert_eq!(budget::estimate("abcde"), 3);
}
