//! Characters that change what the eye sees: bidirectional controls and isolates (the "Trojan
//! Source" technique, CVE-2021-42574), zero-width characters and other invisible format
//! characters, and look-alike spellings of protected names (a Cyrillic `е` in `.еnv`). What
//! the person approves must be what they see, so every approval the daemon sends is screened
//! here ([`approval::warnings`]), a path holding such a character is refused before approval
//! ([`path_refusal`]) unless the configuration allows it, and text that names such a path in
//! a record is [`escaped`].

mod approval;
mod homoglyph;

pub use approval::{ApprovalText, MAX_WARNINGS, warnings};
pub use homoglyph::{looks_like, skeleton};

/// What a hidden character does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HiddenClass {
    /// Reorders how text is displayed: embeddings, overrides, isolates, marks.
    Bidirectional,
    /// Takes no width: the text looks the same with or without it.
    ZeroWidth,
    /// Another character a terminal draws as nothing (format characters, fillers, tags).
    Invisible,
}

/// A character that changes what the eye sees, with the name a warning gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hidden {
    pub character: char,
    pub name: &'static str,
    pub class: HiddenClass,
}

impl Hidden {
    /// `U+202E`.
    pub fn code_point(&self) -> String {
        format!("U+{:04X}", u32::from(self.character))
    }

    /// `a right-to-left override (U+202E)`: the name with its article and code point.
    pub fn described(&self) -> String {
        let article = match self.name.chars().next() {
            Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
            _ => "a",
        };
        format!("{article} {} ({})", self.name, self.code_point())
    }
}

/// Single characters, by code point: (character, name, class).
const SINGLE: &[(char, &str, HiddenClass)] = &[
    ('\u{00AD}', "soft hyphen", HiddenClass::Invisible),
    (
        '\u{034F}',
        "combining grapheme joiner",
        HiddenClass::Invisible,
    ),
    ('\u{061C}', "arabic letter mark", HiddenClass::Bidirectional),
    ('\u{115F}', "hangul choseong filler", HiddenClass::Invisible),
    (
        '\u{1160}',
        "hangul jungseong filler",
        HiddenClass::Invisible,
    ),
    (
        '\u{17B4}',
        "khmer vowel inherent aq",
        HiddenClass::Invisible,
    ),
    (
        '\u{17B5}',
        "khmer vowel inherent aa",
        HiddenClass::Invisible,
    ),
    (
        '\u{180E}',
        "mongolian vowel separator",
        HiddenClass::ZeroWidth,
    ),
    ('\u{200B}', "zero width space", HiddenClass::ZeroWidth),
    ('\u{200C}', "zero width non-joiner", HiddenClass::ZeroWidth),
    ('\u{200D}', "zero width joiner", HiddenClass::ZeroWidth),
    ('\u{200E}', "left-to-right mark", HiddenClass::Bidirectional),
    ('\u{200F}', "right-to-left mark", HiddenClass::Bidirectional),
    ('\u{2028}', "line separator", HiddenClass::Invisible),
    ('\u{2029}', "paragraph separator", HiddenClass::Invisible),
    (
        '\u{202A}',
        "left-to-right embedding",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{202B}',
        "right-to-left embedding",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{202C}',
        "pop directional formatting",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{202D}',
        "left-to-right override",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{202E}',
        "right-to-left override",
        HiddenClass::Bidirectional,
    ),
    ('\u{2060}', "word joiner", HiddenClass::ZeroWidth),
    (
        '\u{2061}',
        "invisible function application",
        HiddenClass::Invisible,
    ),
    ('\u{2062}', "invisible times", HiddenClass::Invisible),
    ('\u{2063}', "invisible separator", HiddenClass::Invisible),
    ('\u{2064}', "invisible plus", HiddenClass::Invisible),
    (
        '\u{2066}',
        "left-to-right isolate",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{2067}',
        "right-to-left isolate",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{2068}',
        "first strong isolate",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{2069}',
        "pop directional isolate",
        HiddenClass::Bidirectional,
    ),
    (
        '\u{206A}',
        "inhibit symmetric swapping",
        HiddenClass::Invisible,
    ),
    (
        '\u{206B}',
        "activate symmetric swapping",
        HiddenClass::Invisible,
    ),
    (
        '\u{206C}',
        "inhibit arabic form shaping",
        HiddenClass::Invisible,
    ),
    (
        '\u{206D}',
        "activate arabic form shaping",
        HiddenClass::Invisible,
    ),
    ('\u{206E}', "national digit shapes", HiddenClass::Invisible),
    ('\u{206F}', "nominal digit shapes", HiddenClass::Invisible),
    ('\u{3164}', "hangul filler", HiddenClass::Invisible),
    (
        '\u{FEFF}',
        "zero width no-break space",
        HiddenClass::ZeroWidth,
    ),
    (
        '\u{FFA0}',
        "halfwidth hangul filler",
        HiddenClass::Invisible,
    ),
    (
        '\u{FFF9}',
        "interlinear annotation anchor",
        HiddenClass::Invisible,
    ),
    (
        '\u{FFFA}',
        "interlinear annotation separator",
        HiddenClass::Invisible,
    ),
    (
        '\u{FFFB}',
        "interlinear annotation terminator",
        HiddenClass::Invisible,
    ),
];

/// Ranges: (first, last, name, class). Tag characters can spell ASCII nobody sees; the
/// supplementary variation selectors can carry bytes the same way. (The ordinary variation
/// selectors U+FE00 to U+FE0F are left alone: every emoji presentation uses U+FE0F.)
const RANGES: &[(char, char, &str, HiddenClass)] = &[
    (
        '\u{E0000}',
        '\u{E007F}',
        "tag character",
        HiddenClass::Invisible,
    ),
    (
        '\u{E0100}',
        '\u{E01EF}',
        "variation selector",
        HiddenClass::Invisible,
    ),
];

/// The character's entry when it is one that changes what the eye sees: a named one of the
/// tables above, else any other character of Unicode's `Default_Ignorable_Code_Point` or
/// `Bidi_Control` sets (assigned or not), which a terminal draws as nothing or uses to reorder
/// text. The sets come from the Unicode data `regex-syntax` compiles in, not from a hand list
/// (issue 26, defect 11); the ordinary variation selectors stay allowed, as above.
pub fn hidden(character: char) -> Option<Hidden> {
    if let Ok(i) = SINGLE.binary_search_by_key(&character, |(c, _, _)| *c) {
        let (character, name, class) = SINGLE[i];
        return Some(Hidden {
            character,
            name,
            class,
        });
    }
    let ranged = RANGES
        .iter()
        .find(|(first, last, _, _)| (*first..=*last).contains(&character))
        .map(|(_, _, name, class)| Hidden {
            character,
            name,
            class: *class,
        });
    ranged.or_else(|| unicode_hidden(character))
}

/// Variation selectors 1 to 16: every emoji presentation uses one.
const EMOJI_SELECTORS: (char, char) = ('\u{FE00}', '\u{FE0F}');

fn unicode_hidden(character: char) -> Option<Hidden> {
    let (bidi, ignorable) = unicode_sets();
    let within = |set: &[(char, char)]| {
        set.binary_search_by(|(first, last)| {
            if *last < character {
                std::cmp::Ordering::Less
            } else if *first > character {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
    };
    if within(bidi) {
        return Some(Hidden {
            character,
            name: "bidirectional control",
            class: HiddenClass::Bidirectional,
        });
    }
    let emoji = (EMOJI_SELECTORS.0..=EMOJI_SELECTORS.1).contains(&character);
    (!emoji && within(ignorable)).then_some(Hidden {
        character,
        name: "default-ignorable character",
        class: HiddenClass::Invisible,
    })
}

/// `Bidi_Control` and `Default_Ignorable_Code_Point`, as sorted inclusive ranges.
fn unicode_sets() -> &'static (Vec<(char, char)>, Vec<(char, char)>) {
    static SETS: std::sync::OnceLock<(Vec<(char, char)>, Vec<(char, char)>)> =
        std::sync::OnceLock::new();
    SETS.get_or_init(|| {
        (
            property_ranges("Bidi_Control"),
            property_ranges("Default_Ignorable_Code_Point"),
        )
    })
}

/// The ranges of one Unicode boolean property (empty if the parser does not know it, which a
/// test rules out).
fn property_ranges(property: &str) -> Vec<(char, char)> {
    use regex_syntax::hir::{Class, HirKind};
    let Ok(hir) = regex_syntax::parse(&format!("\\p{{{property}}}")) else {
        return Vec::new();
    };
    match hir.kind() {
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .map(|r| (r.start(), r.end()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Each distinct hidden character of `text`, in the order they first appear.
pub fn hidden_in(text: &str) -> Vec<Hidden> {
    let mut found: Vec<Hidden> = Vec::new();
    for h in text.chars().filter_map(hidden) {
        if !found.iter().any(|f| f.character == h.character) {
            found.push(h);
        }
    }
    found
}

/// `text` (a path, a label: one line) with every hidden character and every control
/// character, newline and tab included, written as `\u{202e}`, so a record or a message never
/// carries one raw.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || hidden(c).is_some() {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Why a path the model proposed is refused before approval: it holds a character that
/// changes what the eye sees. `None` when it holds none.
pub fn path_refusal(path: &str) -> Option<String> {
    let found = hidden_in(path);
    let first = found.first()?;
    let more = match found.len() {
        1 => String::new(),
        n => format!(" and {} other hidden character(s)", n - 1),
    };
    Some(format!(
        "path `{}` contains {}{more}; a path with bidirectional, zero-width or invisible characters is refused before approval, because the person cannot see what it names (the permissions.allow_invisible_path_characters setting allows them)",
        escaped(path),
        first.described()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(character: char, expected: Option<(&str, HiddenClass)>) {
        assert_eq!(
            hidden(character).map(|h| (h.name, h.class)),
            expected,
            "{}",
            character.escape_unicode()
        );
    }

    /// Proves each bidirectional control and isolate is found, with its name.
    #[test]
    fn every_bidirectional_control_and_isolate_is_named() {
        use HiddenClass::Bidirectional as B;
        let rows = [
            ('\u{202A}', "left-to-right embedding"),
            ('\u{202B}', "right-to-left embedding"),
            ('\u{202C}', "pop directional formatting"),
            ('\u{202D}', "left-to-right override"),
            ('\u{202E}', "right-to-left override"),
            ('\u{2066}', "left-to-right isolate"),
            ('\u{2067}', "right-to-left isolate"),
            ('\u{2068}', "first strong isolate"),
            ('\u{2069}', "pop directional isolate"),
            ('\u{200E}', "left-to-right mark"),
            ('\u{200F}', "right-to-left mark"),
            ('\u{061C}', "arabic letter mark"),
        ];
        for (character, name) in rows {
            check(character, Some((name, B)));
        }
    }

    /// Proves each zero-width character is found, with its name.
    #[test]
    fn every_zero_width_character_is_named() {
        use HiddenClass::ZeroWidth as Z;
        let rows = [
            ('\u{200B}', "zero width space"),
            ('\u{200C}', "zero width non-joiner"),
            ('\u{200D}', "zero width joiner"),
            ('\u{2060}', "word joiner"),
            ('\u{FEFF}', "zero width no-break space"),
            ('\u{180E}', "mongolian vowel separator"),
        ];
        for (character, name) in rows {
            check(character, Some((name, Z)));
        }
    }

    /// Proves the other invisible characters are found, ranges included at both ends, and
    /// that ordinary text, emoji presentation and visible punctuation are not.
    #[test]
    fn other_invisible_characters_and_what_is_left_alone() {
        use HiddenClass::Invisible as I;
        let rows = [
            ('\u{00AD}', Some(("soft hyphen", I))),
            ('\u{2062}', Some(("invisible times", I))),
            ('\u{3164}', Some(("hangul filler", I))),
            ('\u{2028}', Some(("line separator", I))),
            ('\u{E0000}', Some(("tag character", I))),
            ('\u{E0041}', Some(("tag character", I))),
            ('\u{E007F}', Some(("tag character", I))),
            ('\u{E0100}', Some(("variation selector", I))),
            ('\u{E01EF}', Some(("variation selector", I))),
            ('\u{E01F0}', Some(("default-ignorable character", I))),
            ('\u{FE0F}', None),
            ('a', None),
            ('е', None),
            ('\u{2029}', Some(("paragraph separator", I))),
            ('\u{2065}', Some(("default-ignorable character", I))),
            ('\u{180B}', Some(("default-ignorable character", I))),
            ('\u{1D173}', Some(("default-ignorable character", I))),
            ('\u{1BCA0}', Some(("default-ignorable character", I))),
            ('\u{2070}', None),
            ('\u{202F}', None),
            ('\n', None),
        ];
        for (character, expected) in rows {
            check(character, expected);
        }
    }

    /// Proves the set is Unicode's, not a hand list: every `Default_Ignorable_Code_Point` and
    /// `Bidi_Control` character (assigned or not) is hidden, but for the emoji variation
    /// selectors, and the sets are the size Unicode gives them.
    #[test]
    fn every_default_ignorable_and_bidi_control_character_is_hidden() {
        let (bidi, ignorable) = unicode_sets();
        let count = |set: &[(char, char)]| -> u32 {
            set.iter()
                .map(|(a, b)| u32::from(*b) - u32::from(*a) + 1)
                .sum()
        };
        assert_eq!(count(bidi), 12, "Bidi_Control: {bidi:?}");
        assert!(count(ignorable) > 4000, "Default_Ignorable_Code_Point");
        let mut named_by_hand_only = 0;
        for (first, last) in bidi.iter().chain(ignorable) {
            for c in (u32::from(*first)..=u32::from(*last)).filter_map(char::from_u32) {
                let emoji = (EMOJI_SELECTORS.0..=EMOJI_SELECTORS.1).contains(&c);
                assert_eq!(hidden(c).is_some(), !emoji, "U+{:04X}", u32::from(c));
                if !emoji && SINGLE.binary_search_by_key(&c, |(s, _, _)| *s).is_err() {
                    named_by_hand_only += 1;
                }
            }
        }
        assert!(named_by_hand_only > 0);
    }

    /// Proves the table stays sorted, so the binary search finds every entry.
    #[test]
    fn the_single_character_table_is_sorted_and_unique() {
        assert!(SINGLE.windows(2).all(|w| w[0].0 < w[1].0));
        for (character, name, _) in SINGLE {
            assert_eq!(hidden(*character).map(|h| h.name), Some(*name));
        }
    }

    /// Proves the warning wording: article, name and code point.
    #[test]
    fn described_names_the_character_and_its_code_point() {
        let rows = [
            ('\u{202E}', "a right-to-left override (U+202E)"),
            ('\u{2062}', "an invisible times (U+2062)"),
            ('\u{061C}', "an arabic letter mark (U+061C)"),
            ('\u{E0041}', "a tag character (U+E0041)"),
        ];
        for (character, expected) in rows {
            assert_eq!(
                hidden(character).map(|h| h.described()).as_deref(),
                Some(expected)
            );
        }
    }

    /// Proves escaping shows hidden and control characters as `\u{..}` and keeps the rest.
    #[test]
    fn escaped_makes_every_hidden_character_visible() {
        let rows = [
            ("plain.txt", "plain.txt"),
            ("a\u{202E}txt.exe", "a\\u{202e}txt.exe"),
            ("x\u{200B}y\u{1b}[31m", "x\\u{200b}y\\u{1b}[31m"),
            (".еnv\n\tz", ".еnv\\u{a}\\u{9}z"),
        ];
        for (text, expected) in rows {
            assert_eq!(escaped(text), expected);
        }
    }

    /// Proves a path with a hidden character is refused (escaped, naming the setting) and an
    /// ordinary or merely non-ASCII path is not.
    #[test]
    fn paths_with_hidden_characters_are_refused() {
        assert_eq!(path_refusal("src/main.rs"), None);
        assert_eq!(path_refusal("docs/café.md"), None);
        assert_eq!(path_refusal(".еnv"), None);
        let refused = path_refusal("invoice\u{202E}fdp.exe").unwrap_or_default();
        assert!(
            refused.starts_with(
                "path `invoice\\u{202e}fdp.exe` contains a right-to-left override (U+202E);"
            ),
            "{refused}"
        );
        assert!(refused.contains("permissions.allow_invisible_path_characters"));
        let two = path_refusal("a\u{200B}b\u{2066}c\u{200B}").unwrap_or_default();
        assert!(
            two.contains("a zero width space (U+200B) and 1 other hidden character(s)"),
            "{two}"
        );
    }
}
