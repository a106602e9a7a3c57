//! The web facts of a request, for the static web verifier: whether it is static web work,
//! whether it asks for behaviour, whether it mentions "todo", and which interaction ("clicking
//! #a updates #b") it names; and the reconciliation of the conventional default targets
//! (`style.css`, `script.js`) with the names the workspace already uses.
//!
//! These were four regular expressions in the daemon; they are ported here by hand, each as a
//! list of [`Piece`]s that reads like the pattern it replaces (the pattern is quoted on each
//! list). The semantics are the regex crate's: `(?i)` (ASCII case, plus the long s and the
//! Kelvin sign, the two non-ASCII characters that fold to an ASCII letter), `\s` (Unicode white
//! space), `\b` and `\w` (letters, digits and `_`, the core's word character everywhere; the
//! regex crate's `\w` also holds combining marks and a few connector characters, and no digits
//! outside `Nd`, a difference only text with those characters next to a keyword could see).
//! Every repetition in these patterns is followed by a character it cannot contain, so taking
//! the whole run is the only way a match goes on and no backtracking is needed.

use Piece::{Optional, Run, Space, Words};

use super::TaskContract;
use crate::request::intent::TargetSource;

/// What a request says about web work.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebRequest {
    /// Static web work: an `.html`/`.htm`/`.css` expected target, or words like website, web
    /// page, landing page, index.html, stylesheet, button, click, `about.html`.
    pub is_static_web: bool,
    /// The request asks for behaviour (click, toggle, counter, interactive, submit, onclick,
    /// event, "when the button").
    pub asks_for_behaviour: bool,
    /// The request mentions "todo" anywhere, in any case (so a TODO on a page is content).
    pub mentions_todo: bool,
    /// The interaction the request names, if any.
    pub interaction: Option<NamedInteraction>,
}

/// "Clicking #trigger updates #target": an element id after click/tap/press and another after
/// update/change/show/reveal/toggle/fill/set/increment; also "make #trigger update #target when
/// clicked" and "when #trigger is clicked, update #target".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedInteraction {
    /// The id of the element clicked.
    pub trigger: String,
    /// The id of the element that must change.
    pub target: String,
}

/// The web facts of `request` whose expected targets are `targets`.
pub fn web_request(request: &str, targets: &[String]) -> WebRequest {
    let web_target = targets.iter().any(|t| {
        let t = t.to_ascii_lowercase();
        t.ends_with(".html") || t.ends_with(".htm") || t.ends_with(".css")
    });
    let text = Text::new(request);
    WebRequest {
        is_static_web: web_target || text.matches_any(WEB_WORDS),
        asks_for_behaviour: text.matches_any(BEHAVIOUR_WORDS),
        mentions_todo: request.to_ascii_lowercase().contains("todo"),
        interaction: requested_interaction(request),
    }
}

/// The conventional default names the resolver gives a site (`style.css`, `script.js`) and,
/// for each, the names an existing site often uses instead.
const DEFAULT_NAMES: &[(&str, &str, &[&str])] = &[
    ("style.css", ".css", &["styles.css"]),
    ("script.js", ".js", &["scripts.js"]),
];

/// Whether the contract holds a runtime default web target the workspace could rename (so the
/// daemon reads the workspace's names only then).
pub fn has_default_web_targets(contract: &TaskContract) -> bool {
    contract.roleful_targets.iter().any(|t| {
        t.source == TargetSource::RuntimeDefault
            && DEFAULT_NAMES.iter().any(|(name, _, _)| t.path == *name)
    })
}

/// Default web targets reconciled with the workspace: a runtime default `style.css` /
/// `script.js` that does not exist takes the name of the page's own link of that kind
/// (`linked`: what the page, usually `index.html`, loads, as workspace paths), else of an
/// existing `styles.css` / `scripts.js` (`existing`: the workspace's file names). Targets the
/// person named are never renamed.
pub fn reconcile_default_web_targets(
    mut contract: TaskContract,
    existing: &[String],
    linked: &[String],
) -> TaskContract {
    let mut renames: Vec<(String, String)> = Vec::new();
    for target in &contract.roleful_targets {
        if target.source != TargetSource::RuntimeDefault || existing.contains(&target.path) {
            continue;
        }
        let Some((_, extension, plurals)) = DEFAULT_NAMES
            .iter()
            .find(|(name, _, _)| target.path == *name)
        else {
            continue;
        };
        let page_link = linked
            .iter()
            .find(|l| l.to_ascii_lowercase().ends_with(extension));
        let plural = plurals
            .iter()
            .map(|p| p.to_string())
            .find(|p| existing.contains(p));
        if let Some(name) = page_link.cloned().or(plural) {
            renames.push((target.path.clone(), name));
        }
    }
    for (from, to) in renames {
        for target in contract
            .roleful_targets
            .iter_mut()
            .filter(|t| t.path == from && t.source == TargetSource::RuntimeDefault)
        {
            target.path = to.clone();
        }
        let mut renamed: Vec<String> = Vec::new();
        for path in contract.expected_targets.drain(..) {
            let path = if path == from { to.clone() } else { path };
            if !renamed.contains(&path) {
                renamed.push(path);
            }
        }
        contract.expected_targets = renamed;
    }
    contract
}

/// One step of a pattern.
#[derive(Debug, Clone, Copy)]
enum Piece {
    /// One of these spellings (ASCII lowercase), compared as `(?i)` compares.
    Words(&'static [&'static str]),
    /// `\s*` (at least 0) or `\s+` (at least 1).
    Space(usize),
    /// `\w+`, or `[\w-]+` when `hyphen` is set.
    Run { hyphen: bool },
    /// `(?:...)?`: the group, or nothing.
    Optional(&'static [Piece]),
}

const CLICK: &[&str] = &["click", "clicks", "clicking", "clicked"];

/// `\b(web\s*sites?|web\s*pages?|landing\s+pages?|index\.html?|style\s*sheets?|buttons?|
/// click(s|ing|ed)?|[\w-]+\.html?)\b`, case-insensitive.
const WEB_WORDS: &[&[Piece]] = &[
    &[Words(&["web"]), Space(0), Words(&["site", "sites"])],
    &[Words(&["web"]), Space(0), Words(&["page", "pages"])],
    &[Words(&["landing"]), Space(1), Words(&["page", "pages"])],
    &[Words(&["index.htm", "index.html"])],
    &[Words(&["style"]), Space(0), Words(&["sheet", "sheets"])],
    &[Words(&["button", "buttons"])],
    &[Words(CLICK)],
    &[Run { hyphen: true }, Words(&[".htm", ".html"])],
];

/// `\b(click(s|ing|ed)?|toggl(e|es|ed|ing)|counters?|interactive|submit(s|ted|ting)?|onclick|
/// events?|when\s+the\s+button)\b`, case-insensitive.
const BEHAVIOUR_WORDS: &[&[Piece]] = &[
    &[Words(CLICK)],
    &[Words(&["toggle", "toggles", "toggled", "toggling"])],
    &[Words(&["counter", "counters"])],
    &[Words(&["interactive"])],
    &[Words(&["submit", "submits", "submitted", "submitting"])],
    &[Words(&["onclick"])],
    &[Words(&["event", "events"])],
    &[
        Words(&["when"]),
        Space(1),
        Words(&["the"]),
        Space(1),
        Words(&["button"]),
    ],
];

/// `\b(?:click|clicks|clicking|clicked|tap|tapping|press|pressing)\s+(?:on\s+)?(?:the\s+)?
/// (?:\w+\s+)?`?#`, case-insensitive; the id (`[A-Za-z][\w-]*`) follows.
const TRIGGER: &[Piece] = &[
    Words(&[
        "click", "clicks", "clicking", "clicked", "tap", "tapping", "press", "pressing",
    ]),
    Space(1),
    Optional(&[Words(&["on"]), Space(1)]),
    Optional(&[Words(&["the"]), Space(1)]),
    Optional(&[Run { hyphen: false }, Space(1)]),
    Optional(&[Words(&["`"])]),
    Words(&["#"]),
];

/// `\b(?:update|updates|updating|change|changes|changing|show|shows|showing|reveal|reveals|
/// toggle|toggles|fill|fills|set|sets|increment|increments)\s+(?:the\s+)?(?:text\s+(?:of|in)\s+)?(?:\w+\s+)?`?#`,
/// case-insensitive; the id (`[A-Za-z][\w-]*`) follows.
const EFFECT: &[Piece] = &[
    Words(&[
        "update",
        "updates",
        "updating",
        "change",
        "changes",
        "changing",
        "show",
        "shows",
        "showing",
        "reveal",
        "reveals",
        "toggle",
        "toggles",
        "fill",
        "fills",
        "set",
        "sets",
        "increment",
        "increments",
    ]),
    Space(1),
    Optional(&[Words(&["the"]), Space(1)]),
    Optional(&[Words(&["text"]), Space(1), Words(&["of", "in"]), Space(1)]),
    Optional(&[Run { hyphen: false }, Space(1)]),
    Optional(&[Words(&["`"])]),
    Words(&["#"]),
];

/// `\b(?:when|once|if|after)\s+`?#`, case-insensitive; the id follows, then [`CLICKED`].
const PASSIVE_TRIGGER: &[Piece] = &[
    Words(&["when", "once", "if", "after"]),
    Space(1),
    Optional(&[Words(&["`"])]),
    Words(&["#"]),
];

/// `` `?\s+(?:is|gets)\s+(?:clicked|tapped|pressed)\b `` right after the trigger's id.
const CLICKED: &[Piece] = &[
    Optional(&[Words(&["`"])]),
    Space(1),
    Words(&["is", "gets"]),
    Space(1),
    Words(&["clicked", "tapped", "pressed"]),
];

/// `` `?\s+(?:(?:should|will|must|can|to)\s+)? `` between a subject id and its effect
/// ("make #a update #b", "#a should set #b").
const SUBJECT: &[Piece] = &[
    Optional(&[Words(&["`"])]),
    Space(1),
    Optional(&[Words(&["should", "will", "must", "can", "to"]), Space(1)]),
];

/// `\b(?:click|clicks|clicked|clicking|tap|tapped|press|pressed)\b`, case-insensitive: the
/// click word that makes "#a updates #b" an interaction when it follows in the sentence.
const CLICK_AFTER: &[&[Piece]] = &[&[Words(&[
    "click", "clicks", "clicked", "clicking", "tap", "tapped", "press", "pressed",
])]];

/// The interaction a request names, in one of three shapes: the first trigger id and the first
/// effect id after it ("clicking #teaser-button updates #teaser-status"); a trigger "when #a is
/// clicked" and the first effect id anywhere ("when #a is clicked, update #b", "update #b when
/// #a is clicked"); or a subject id followed by an effect and a click word later in the same
/// sentence ("make #a update #b when clicked", "#a should set #b on click"). None when the two
/// ids are the same.
fn requested_interaction(request: &str) -> Option<NamedInteraction> {
    let named = trigger_first(request)
        .or_else(|| passive_trigger(request))
        .or_else(|| subject_first(request))?;
    (named.trigger != named.target).then_some(named)
}

fn trigger_first(request: &str) -> Option<NamedInteraction> {
    let (trigger, after) = Text::new(request).first_id(TRIGGER)?;
    let rest = &request[after..];
    let (target, _) = Text::new(rest).first_id(EFFECT)?;
    Some(NamedInteraction {
        trigger: request[trigger.0..trigger.1].to_string(),
        target: rest[target.0..target.1].to_string(),
    })
}

fn passive_trigger(request: &str) -> Option<NamedInteraction> {
    let text = Text::new(request);
    let trigger = text.starts().find_map(|start| {
        text.ends(PASSIVE_TRIGGER, start)
            .into_iter()
            .find_map(|hash_end| {
                let id = text.id_at(hash_end)?;
                let clicked = text.ends(CLICKED, id.1);
                clicked.iter().any(|&end| text.boundary(end)).then_some(id)
            })
    })?;
    let trigger = &request[trigger.0..trigger.1];
    let mut from = 0;
    while let Some(((start, end), after)) = Text::new(&request[from..]).first_id(EFFECT) {
        let target = &request[from + start..from + end];
        if target != trigger {
            return Some(NamedInteraction {
                trigger: trigger.to_string(),
                target: target.to_string(),
            });
        }
        from += after;
    }
    None
}

fn subject_first(request: &str) -> Option<NamedInteraction> {
    let text = Text::new(request);
    request
        .char_indices()
        .filter(|(_, c)| *c == '#')
        .find_map(|(at, _)| {
            let subject = text.id_at(at + 1)?;
            text.ends(SUBJECT, subject.1).into_iter().find_map(|verb| {
                text.ends(EFFECT, verb).into_iter().find_map(|hash_end| {
                    let target = text.id_at(hash_end)?;
                    let rest = &request[target.1..];
                    let sentence = rest.find(['.', '!', '?', ';']).map_or(rest, |e| &rest[..e]);
                    Text::new(sentence)
                        .matches_any(CLICK_AFTER)
                        .then(|| NamedInteraction {
                            trigger: request[subject.0..subject.1].to_string(),
                            target: request[target.0..target.1].to_string(),
                        })
                })
            })
        })
}

/// A text prepared for matching: for every byte offset, where the run of word characters, of
/// word characters and `-`, and of white space starting there ends (so no run is scanned twice).
struct Text<'t> {
    text: &'t str,
    word_run: Vec<usize>,
    name_run: Vec<usize>,
    space_run: Vec<usize>,
}

/// The regex crate's Unicode `\w` without its tables: letters, digits and `_`, the combining
/// mark blocks, the other connector punctuation and the two join controls. It differs only on
/// digits outside `Nd` (`²`, `½`, `①`: word characters here, not there) and on combining marks
/// outside those blocks that are not letters (there, not here).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || matches!(c,
            '_' | '\u{203F}' | '\u{2040}' | '\u{2054}' | '\u{FE33}' | '\u{FE34}'
            | '\u{FE4D}'..='\u{FE4F}' | '\u{FF3F}' | '\u{200C}' | '\u{200D}'
            | '\u{0300}'..='\u{036F}' | '\u{1AB0}'..='\u{1AFF}' | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}' | '\u{FE20}'..='\u{FE2F}')
}

/// Whether `got` equals `want` (ASCII lowercase) under `(?i)`.
fn folds_to(got: char, want: char) -> bool {
    got.to_ascii_lowercase() == want
        || (want == 's' && got == '\u{17F}')
        || (want == 'k' && got == '\u{212A}')
}

impl<'t> Text<'t> {
    fn new(text: &'t str) -> Text<'t> {
        let mut runs = Text {
            text,
            word_run: vec![text.len(); text.len() + 1],
            name_run: vec![text.len(); text.len() + 1],
            space_run: vec![text.len(); text.len() + 1],
        };
        for (at, c) in text.char_indices().rev() {
            let next = at + c.len_utf8();
            runs.word_run[at] = if is_word_char(c) {
                runs.word_run[next]
            } else {
                at
            };
            runs.name_run[at] = if is_word_char(c) || c == '-' {
                runs.name_run[next]
            } else {
                at
            };
            runs.space_run[at] = if c.is_whitespace() {
                runs.space_run[next]
            } else {
                at
            };
        }
        runs
    }

    /// `\b` at byte `at`: a word character on exactly one side.
    fn boundary(&self, at: usize) -> bool {
        let before = self.text[..at]
            .chars()
            .next_back()
            .is_some_and(is_word_char);
        let after = self.text[at..].chars().next().is_some_and(is_word_char);
        before != after
    }

    /// Whether `\b(alternative)\b` matches anywhere for one of the alternatives.
    fn matches_any(&self, alternatives: &[&[Piece]]) -> bool {
        self.starts().any(|start| {
            alternatives.iter().any(|pieces| {
                self.ends(pieces, start)
                    .into_iter()
                    .any(|end| self.boundary(end))
            })
        })
    }

    /// The id after the leftmost match of `\b(pieces)` followed by `[A-Za-z][\w-]*`, as its
    /// byte range, and where the whole match ends.
    fn first_id(&self, pieces: &[Piece]) -> Option<((usize, usize), usize)> {
        self.starts().find_map(|start| {
            self.ends(pieces, start).into_iter().find_map(|hash_end| {
                let first = self.text[hash_end..].chars().next()?;
                let letter =
                    first.is_ascii_alphabetic() || first == '\u{17F}' || first == '\u{212A}';
                let end = self.name_run[hash_end];
                letter.then_some(((hash_end, end), end))
            })
        })
    }

    /// The id (`[A-Za-z][\w-]*`, the long s and the Kelvin sign counting as letters) starting
    /// at byte `at`, as its byte range.
    fn id_at(&self, at: usize) -> Option<(usize, usize)> {
        let first = self.text.get(at..)?.chars().next()?;
        let letter = first.is_ascii_alphabetic() || first == '\u{17F}' || first == '\u{212A}';
        letter.then(|| (at, self.name_run[at]))
    }

    /// Byte offsets (char boundaries) where `\b` holds, in order.
    fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        self.text
            .char_indices()
            .map(|(at, _)| at)
            .chain(std::iter::once(self.text.len()))
            .filter(|&at| self.boundary(at))
    }

    /// Where `pieces` can end when they start at `start`, in the pattern's order of preference.
    fn ends(&self, pieces: &[Piece], start: usize) -> Vec<usize> {
        let mut positions = vec![start];
        for piece in pieces {
            let mut next = Vec::new();
            for at in positions {
                for end in self.piece_ends(*piece, at) {
                    if !next.contains(&end) {
                        next.push(end);
                    }
                }
            }
            if next.is_empty() {
                return next;
            }
            positions = next;
        }
        positions
    }

    fn piece_ends(&self, piece: Piece, at: usize) -> Vec<usize> {
        match piece {
            Words(spellings) => spellings
                .iter()
                .filter_map(|spelling| self.literal_end(at, spelling))
                .collect(),
            Space(least) => {
                let end = self.space_run[at];
                if least == 0 || end > at {
                    vec![end]
                } else {
                    Vec::new()
                }
            }
            Run { hyphen } => {
                let end = if hyphen {
                    self.name_run[at]
                } else {
                    self.word_run[at]
                };
                if end > at { vec![end] } else { Vec::new() }
            }
            Optional(group) => {
                let mut ends = self.ends(group, at);
                if !ends.contains(&at) {
                    ends.push(at);
                }
                ends
            }
        }
    }

    /// Where `spelling` ends if it starts at byte `at`, compared as `(?i)` compares.
    fn literal_end(&self, at: usize, spelling: &str) -> Option<usize> {
        let mut chars = self.text[at..].char_indices();
        for want in spelling.chars() {
            let (_, got) = chars.next()?;
            if !folds_to(got, want) {
                return None;
            }
        }
        Some(chars.next().map_or(self.text.len(), |(i, _)| at + i))
    }
}
