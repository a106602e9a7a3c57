//! The characters a terminal draws as nothing or that reorder what it draws: bidirectional
//! controls and isolates (the "Trojan Source" technique), zero-width characters and other
//! invisible format characters. [`super::printable`] escapes them as `\u{202e}`, as it
//! escapes control characters. The CLI depends on the wire only, so this is its own copy of
//! the set the daemon names in approval warnings (`talos_core::deceptive`); the two are kept
//! alike by the rows below and the daemon's own table tests.

/// Inclusive ranges of hidden characters, in code point order.
const HIDDEN: &[(char, char)] = &[
    ('\u{00AD}', '\u{00AD}'),
    ('\u{034F}', '\u{034F}'),
    ('\u{061C}', '\u{061C}'),
    ('\u{115F}', '\u{1160}'),
    ('\u{17B4}', '\u{17B5}'),
    ('\u{180E}', '\u{180E}'),
    ('\u{200B}', '\u{200F}'),
    ('\u{2028}', '\u{202E}'),
    ('\u{2060}', '\u{206F}'),
    ('\u{3164}', '\u{3164}'),
    ('\u{FEFF}', '\u{FEFF}'),
    ('\u{FFA0}', '\u{FFA0}'),
    ('\u{FFF9}', '\u{FFFB}'),
    ('\u{E0000}', '\u{E007F}'),
    ('\u{E0100}', '\u{E01EF}'),
];

/// Whether `c` is drawn as nothing or reorders what is drawn.
pub fn hides(c: char) -> bool {
    HIDDEN
        .iter()
        .any(|(first, last)| (*first..=*last).contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves every bidirectional control and isolate, every zero-width character and the
    /// other invisible ones are hidden, and ordinary text, emoji presentation and look-alike
    /// letters are not.
    #[test]
    fn hidden_characters_rows() {
        let hidden = [
            '\u{202A}',
            '\u{202B}',
            '\u{202C}',
            '\u{202D}',
            '\u{202E}',
            '\u{2066}',
            '\u{2067}',
            '\u{2068}',
            '\u{2069}',
            '\u{200E}',
            '\u{200F}',
            '\u{061C}',
            '\u{200B}',
            '\u{200C}',
            '\u{200D}',
            '\u{2060}',
            '\u{FEFF}',
            '\u{180E}',
            '\u{00AD}',
            '\u{2062}',
            '\u{3164}',
            '\u{2028}',
            '\u{E0041}',
            '\u{E0100}',
        ];
        for c in hidden {
            assert!(hides(c), "{}", c.escape_unicode());
        }
        for c in [
            'a',
            ' ',
            'е',
            'é',
            '\u{FE0F}',
            '\u{2070}',
            '\u{202F}',
            '\u{E01F0}',
        ] {
            assert!(!hides(c), "{}", c.escape_unicode());
        }
    }
}
