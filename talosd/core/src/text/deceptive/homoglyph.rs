//! Look-alike spellings of protected names: a path whose letters are Cyrillic, Greek,
//! Armenian or fullwidth stand-ins for Latin ones (or that hides zero-width characters between
//! them) reads as `.env` to the eye while naming another file. [`skeleton`] folds each
//! look-alike to the ASCII character it imitates; [`looks_like`] reports a path that is not
//! protected but whose skeleton is. The table is a deliberate subset of Unicode's confusables
//! (TR39): the letters and punctuation protected names are spelled with.

use crate::text::protected::protected_kind;

/// Look-alike characters and the ASCII character each imitates.
const LOOK_ALIKES: &[(char, char)] = &[
    // Latin letters that are not ASCII.
    ('ı', 'i'),
    ('ɡ', 'g'),
    ('ʏ', 'y'),
    // Greek capitals and small letters.
    ('Α', 'A'),
    ('Β', 'B'),
    ('Ε', 'E'),
    ('Ζ', 'Z'),
    ('Η', 'H'),
    ('Ι', 'I'),
    ('Κ', 'K'),
    ('Μ', 'M'),
    ('Ν', 'N'),
    ('Ο', 'O'),
    ('Ρ', 'P'),
    ('Τ', 'T'),
    ('Υ', 'Y'),
    ('Χ', 'X'),
    ('α', 'a'),
    ('ι', 'i'),
    ('κ', 'k'),
    ('ν', 'v'),
    ('ο', 'o'),
    ('ρ', 'p'),
    ('υ', 'u'),
    ('ϲ', 'c'),
    ('ϳ', 'j'),
    // Cyrillic capitals and small letters.
    ('Ѕ', 'S'),
    ('І', 'I'),
    ('Ј', 'J'),
    ('А', 'A'),
    ('В', 'B'),
    ('Е', 'E'),
    ('К', 'K'),
    ('М', 'M'),
    ('Н', 'H'),
    ('О', 'O'),
    ('Р', 'P'),
    ('С', 'C'),
    ('Т', 'T'),
    ('Х', 'X'),
    ('а', 'a'),
    ('е', 'e'),
    ('к', 'k'),
    ('о', 'o'),
    ('р', 'p'),
    ('с', 'c'),
    ('у', 'y'),
    ('х', 'x'),
    ('ѕ', 's'),
    ('і', 'i'),
    ('ј', 'j'),
    ('һ', 'h'),
    ('Ү', 'Y'),
    ('Ӏ', 'l'),
    ('ӏ', 'l'),
    ('ԁ', 'd'),
    ('Ԛ', 'Q'),
    ('ԛ', 'q'),
    ('Ԝ', 'W'),
    ('ԝ', 'w'),
    // Armenian.
    ('ս', 'u'),
    ('օ', 'o'),
    // Punctuation.
    ('‐', '-'),
    ('‑', '-'),
    ('․', '.'),
    ('⁄', '/'),
    ('−', '-'),
    ('∕', '/'),
    ('﹒', '.'),
];

/// `text` with each look-alike folded to the ASCII character it imitates (fullwidth forms
/// included) and hidden characters dropped; everything else is kept.
pub fn skeleton(text: &str) -> String {
    text.chars()
        .filter(|c| super::hidden(*c).is_none())
        .map(|c| {
            if ('\u{FF01}'..='\u{FF5E}').contains(&c) {
                return char::from_u32(u32::from(c) - 0xFEE0).unwrap_or(c);
            }
            LOOK_ALIKES
                .iter()
                .find(|(alike, _)| *alike == c)
                .map_or(c, |(_, ascii)| *ascii)
        })
        .collect()
}

/// The protected name a path imitates (its skeleton, lowercased), when the path itself is
/// not protected but reads as one that is: `.еnv` (Cyrillic `е`) looks like `.env`.
pub fn looks_like(path: &str) -> Option<String> {
    if path.is_ascii() || protected_kind(path).is_some() {
        return None;
    }
    let folded = skeleton(path);
    if folded == path || protected_kind(&folded).is_none() {
        return None;
    }
    Some(folded.to_lowercase())
}

/// The look-alike characters of `text`, as `U+0435` code points, distinct and in order.
pub fn look_alike_code_points(text: &str) -> Vec<String> {
    let mut points: Vec<String> = Vec::new();
    for c in text.chars() {
        let folds = ('\u{FF01}'..='\u{FF5E}').contains(&c)
            || LOOK_ALIKES.iter().any(|(alike, _)| *alike == c)
            || super::hidden(c).is_some();
        let point = format!("U+{:04X}", u32::from(c));
        if folds && !points.contains(&point) {
            points.push(point);
        }
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(path: &str, expected: Option<&str>) {
        assert_eq!(looks_like(path).as_deref(), expected, "{path}");
    }

    /// Proves look-alike spellings of protected names are reported with the name they imitate,
    /// and that the real names, ordinary paths and non-ASCII names that imitate nothing are not.
    #[test]
    fn look_alikes_of_protected_names() {
        let rows: &[(&str, Option<&str>)] = &[
            // Cyrillic е, а, о, с, р, і, ѕ.
            (".\u{435}nv", Some(".env")),
            (".\u{435}nv.local", Some(".env.local")),
            ("config/.\u{435}nv", Some("config/.env")),
            (".g\u{456}t/config", Some(".git/config")),
            ("\u{455}ecrets/db.txt", Some("secrets/db.txt")),
            ("id_r\u{455}a", Some("id_rsa")),
            (".\u{455}sh/known_hosts", Some(".ssh/known_hosts")),
            ("api_t\u{43E}ken.txt", Some("api_token.txt")),
            ("server.k\u{435}y", Some("server.key")),
            (".np\u{43C}rc", None),
            (".npm\u{433}c", None),
            ("cr\u{435}dentials", Some("credentials")),
            ("pass\u{461}ord", None),
            // Greek ο and ι, Armenian օ.
            (".gnupg/pubring.kbx", None),
            (".talοs/state", Some(".talos/state")),
            (".g\u{3B9}t", Some(".git")),
            ("t\u{585}ken", Some("token")),
            // Fullwidth and the one dot leader.
            ("\u{FF0E}env", Some(".env")),
            ("\u{FF0E}\u{FF45}\u{FF4E}\u{FF56}", Some(".env")),
            ("\u{2024}env", Some(".env")),
            // Zero-width characters between the letters.
            (".e\u{200B}nv", Some(".env")),
            (".en\u{200D}v", Some(".env")),
            // The real names, ordinary and harmless non-ASCII paths.
            (".env", None),
            ("src/main.rs", None),
            ("docs/café.md", None),
            ("docs/\u{43E}\u{442}\u{447}\u{451}\u{442}.md", None),
            ("notes/.\u{435}nvelope", None),
        ];
        for (path, expected) in rows {
            check(path, *expected);
        }
    }

    /// Proves the skeleton folds each table entry and fullwidth ASCII, and drops hidden
    /// characters.
    #[test]
    fn skeleton_folds_look_alikes() {
        for (alike, ascii) in LOOK_ALIKES {
            assert_eq!(skeleton(&alike.to_string()), ascii.to_string(), "{alike}");
        }
        assert_eq!(skeleton("\u{FF21}\u{FF5A}\u{FF10}"), "Az0");
        assert_eq!(skeleton("a\u{202E}b\u{FEFF}c"), "abc");
        assert_eq!(skeleton("plain"), "plain");
    }

    /// Proves the code points a warning names are the look-alikes', once each.
    #[test]
    fn look_alike_code_points_are_listed_once() {
        assert_eq!(look_alike_code_points(".\u{435}n\u{435}v"), vec!["U+0435"]);
        assert_eq!(
            look_alike_code_points("\u{FF0E}e\u{200B}nv"),
            vec!["U+FF0E", "U+200B"]
        );
        assert!(look_alike_code_points(".env").is_empty());
    }
}
