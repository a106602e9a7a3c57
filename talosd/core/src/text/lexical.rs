//! The lexical toolkit the resolver's rules are written in: a request normalised once (ASCII
//! lowercase with byte offsets kept, typographic quotes made plain), its words with their byte
//! offsets, word-sequence phrase matching that tolerates any whitespace between words but no
//! punctuation, clause starts, and sentence-bounded spans. No regex crate: every rule of the
//! resolver is a small function over these pieces.

use std::collections::BTreeMap;

/// One word of the lowercase text: a run of letters, digits and `_`, with `'` or `-` kept when
/// they join two such characters ("don't", "re-style", "write_file").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Word<'t> {
    pub(crate) text: &'t str,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// A request prepared for matching. `text` keeps the writer's case; `lower` is its ASCII
/// lowercase, so every byte offset is valid in both.
#[derive(Debug)]
pub(crate) struct Lex<'t> {
    pub(crate) text: &'t str,
    pub(crate) lower: &'t str,
    pub(crate) words: Vec<Word<'t>>,
    /// Where each distinct word occurs, so phrase search costs its occurrences, not the text.
    index: BTreeMap<&'t str, Vec<usize>>,
}

/// Typographic apostrophes and quotes become ASCII, and unusual spaces become plain spaces, so
/// that "don’t" and “fix it” read like their ASCII spellings. Everything else is kept.
pub(crate) fn normalise(request: &str) -> String {
    request
        .trim()
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{02bc}' | '\u{2032}' => '\'',
            '\u{201c}' | '\u{201d}' | '\u{201e}' | '\u{2033}' => '"',
            '\u{00a0}' | '\u{2007}' | '\u{202f}' | '\u{2009}' | '\u{200a}' => ' ',
            other => other,
        })
        .collect()
}

/// The text with quoted passages blanked to spaces (byte lengths kept): the inside of each
/// pair of double quotes, and of each pair of single quotes that open after a non-letter and
/// close before one (so "don't" is never a quote). Quoted words ("what does 'fix the bug'
/// mean") then never read as a request.
pub(crate) fn blank_quotes(text: &str) -> String {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut ranges: Vec<(usize, usize)> = Vec::new();
    let mut open_double: Option<usize> = None;
    let mut open_single: Option<usize> = None;
    for (k, &(index, c)) in chars.iter().enumerate() {
        let before = k.checked_sub(1).map(|p| chars[p].1);
        let after = chars.get(k + 1).map(|n| n.1);
        match c {
            '"' => match open_double.take() {
                Some(open) => ranges.push((open, index)),
                None => open_double = Some(index),
            },
            '\'' => {
                let opens = !before.is_some_and(char::is_alphanumeric)
                    && after.is_some_and(char::is_alphanumeric);
                let closes = !after.is_some_and(char::is_alphanumeric)
                    && before.is_some_and(|b| !b.is_whitespace());
                match open_single {
                    Some(open) if closes => {
                        ranges.push((open, index));
                        open_single = None;
                    }
                    None if opens => open_single = Some(index),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    text.char_indices()
        .flat_map(|(index, c)| {
            let inside = ranges
                .iter()
                .any(|(open, close)| index > *open && index < *close);
            let (blank, width) = if inside { (' ', c.len_utf8()) } else { (c, 1) };
            std::iter::repeat_n(blank, width)
        })
        .collect()
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

impl<'t> Lex<'t> {
    /// `lower` must be `text.to_ascii_lowercase()` (or the same with quotes blanked).
    pub(crate) fn new(text: &'t str, lower: &'t str) -> Lex<'t> {
        let words = split_words(lower);
        let mut index: BTreeMap<&'t str, Vec<usize>> = BTreeMap::new();
        for (i, word) in words.iter().enumerate() {
            index.entry(word.text).or_default().push(i);
        }
        Lex {
            text,
            lower,
            words,
            index,
        }
    }

    /// Whether the words of `phrase` occur starting at word `index`, separated by whitespace only.
    pub(crate) fn seq(&self, index: usize, phrase: &str) -> bool {
        let mut last_end: Option<usize> = None;
        let mut position = index;
        for part in phrase.split_whitespace() {
            let Some(word) = self.words.get(position) else {
                return false;
            };
            if word.text != part {
                return false;
            }
            if let Some(end) = last_end
                && !self.lower[end..word.start].chars().all(char::is_whitespace)
            {
                return false;
            }
            last_end = Some(word.end);
            position += 1;
        }
        position > index
    }

    /// The number of words in `phrase`.
    pub(crate) fn len_of(phrase: &str) -> usize {
        phrase.split_whitespace().count()
    }

    /// Word indexes where `phrase` starts.
    pub(crate) fn positions(&self, phrase: &str) -> Vec<usize> {
        self.candidates(phrase)
            .iter()
            .copied()
            .filter(|&i| self.seq(i, phrase))
            .collect()
    }

    pub(crate) fn find(&self, phrase: &str) -> Option<usize> {
        self.candidates(phrase)
            .iter()
            .copied()
            .find(|&i| self.seq(i, phrase))
    }

    /// Where the first word of `phrase` occurs.
    fn candidates(&self, phrase: &str) -> &[usize] {
        phrase
            .split_whitespace()
            .next()
            .and_then(|first| self.index.get(first))
            .map_or(&[], Vec::as_slice)
    }

    pub(crate) fn has(&self, phrase: &str) -> bool {
        self.find(phrase).is_some()
    }

    pub(crate) fn has_any(&self, phrases: &[&str]) -> bool {
        phrases.iter().any(|p| self.has(p))
    }

    /// The first of `phrases` that matches at word `index`, if any.
    pub(crate) fn seq_any<'p>(&self, index: usize, phrases: &[&'p str]) -> Option<&'p str> {
        phrases.iter().copied().find(|p| self.seq(index, p))
    }

    /// The word at `index`, or "" past the end.
    pub(crate) fn word(&self, index: usize) -> &'t str {
        self.words.get(index).map_or("", |w| w.text)
    }

    /// Whether the text between words `a` and `a + 1` is whitespace only.
    pub(crate) fn tight(&self, a: usize) -> bool {
        match (self.words.get(a), self.words.get(a + 1)) {
            (Some(x), Some(y)) => self.lower[x.end..y.start].chars().all(char::is_whitespace),
            _ => false,
        }
    }

    /// The index of the first word that starts at or after byte `offset`.
    pub(crate) fn word_at_or_after(&self, offset: usize) -> usize {
        self.words.partition_point(|w| w.start < offset)
    }

    /// The index of the last word that ends at or before byte `offset`, if any.
    pub(crate) fn word_before(&self, offset: usize) -> Option<usize> {
        self.words
            .partition_point(|w| w.end <= offset)
            .checked_sub(1)
    }

    /// Word indexes that open a clause: the first word, every word after a sentence mark
    /// (`.`, `!`, `?`, `;`, `:` followed by whitespace) or a newline, and the word after the
    /// comma that closes a leading "In settings.py," or "For the footer," phrase.
    pub(crate) fn clause_starts(&self) -> Vec<usize> {
        let mut starts = Vec::new();
        for (i, word) in self.words.iter().enumerate() {
            let gap_start = if i == 0 { 0 } else { self.words[i - 1].end };
            if i == 0 || is_sentence_gap(&self.lower[gap_start..word.start]) {
                starts.push(i);
            }
        }
        let mut extra = Vec::new();
        for &start in &starts {
            if !matches!(
                self.word(start),
                "in" | "for" | "inside" | "within" | "on" | "at" | "regarding"
            ) {
                continue;
            }
            for j in start + 1..(start + 9).min(self.words.len()) {
                if starts.binary_search(&j).is_ok() {
                    break;
                }
                let gap = &self.lower[self.words[j - 1].end..self.words[j].start];
                if gap.contains(',') && !is_sentence_gap(gap) {
                    extra.push(j);
                    break;
                }
            }
        }
        starts.extend(extra);
        starts.sort_unstable();
        starts
    }

    /// The clause start at or before word `index`.
    pub(crate) fn clause_of(&self, starts: &[usize], index: usize) -> usize {
        starts
            .iter()
            .copied()
            .take_while(|s| *s <= index)
            .last()
            .unwrap_or(0)
    }
}

fn split_words(lower: &str) -> Vec<Word<'_>> {
    let chars: Vec<(usize, char)> = lower.char_indices().collect();
    let mut words = Vec::new();
    let mut start: Option<usize> = None;
    for (k, &(index, c)) in chars.iter().enumerate() {
        let joiner = (c == '\'' || c == '-')
            && start.is_some()
            && chars.get(k + 1).is_some_and(|(_, n)| is_word_char(*n));
        if is_word_char(c) || joiner {
            if start.is_none() {
                start = Some(index);
            }
        } else if let Some(s) = start.take() {
            words.push(Word {
                text: &lower[s..index],
                start: s,
                end: index,
            });
        }
    }
    if let Some(s) = start {
        words.push(Word {
            text: &lower[s..],
            start: s,
            end: lower.len(),
        });
    }
    words
}

/// Whether text between two words ends a sentence or clause: a newline, or one of `.!?;:`
/// followed by whitespace.
pub(crate) fn is_sentence_gap(gap: &str) -> bool {
    if gap.contains('\n') {
        return true;
    }
    let bytes = gap.as_bytes();
    bytes.iter().enumerate().any(|(i, b)| {
        matches!(b, b'.' | b'!' | b'?' | b';' | b':')
            && bytes.get(i + 1).is_some_and(u8::is_ascii_whitespace)
    })
}

/// The byte offset where the sentence that contains `from` ends, looking no further than
/// `limit`: the first `.`, `!`, `?` or `;` followed by whitespace or the end, or a newline.
fn sentence_end_before(text: &str, from: usize, limit: usize) -> usize {
    let bytes = &text.as_bytes()[..limit.min(text.len())];
    let mut i = from.min(bytes.len());
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'\n' {
            return i;
        }
        if matches!(b, b'.' | b'!' | b'?' | b';')
            && (i + 1 == bytes.len() || bytes[i + 1].is_ascii_whitespace())
        {
            return i;
        }
        i += 1;
    }
    bytes.len()
}

/// `text[from..]` cut at the end of its sentence and at `max` bytes (on a char boundary).
pub(crate) fn sentence_span(text: &str, from: usize, max: usize) -> (usize, usize) {
    let from = from.min(text.len());
    let mut end = sentence_end_before(text, from, from.saturating_add(max));
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (from, end)
}

/// Word-boundary substring search in lowercase text (for markers written with punctuation,
/// such as "talos.run_command" or "what's").
pub(crate) fn contains_bounded(text: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(found) = text[from..].find(needle) {
        let start = from + found;
        let end = start + needle.len();
        let before_ok = !text[..start].chars().next_back().is_some_and(is_word_char);
        let after_ok = !text[end..].chars().next().is_some_and(is_word_char);
        if before_ok && after_ok {
            return true;
        }
        from = start + needle.chars().next().map_or(1, char::len_utf8);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn words(text: &str) -> Vec<&str> {
        split_words(text).iter().map(|w| w.text).collect()
    }

    #[test]
    fn words_keep_apostrophes_and_hyphens_inside_words_only() {
        assert_eq!(
            words("don't re-style 'quoted' -x write_file index.html"),
            vec![
                "don't",
                "re-style",
                "quoted",
                "x",
                "write_file",
                "index",
                "html"
            ]
        );
    }

    #[test]
    fn phrases_match_across_any_whitespace_but_not_punctuation() {
        let lower = "do  not\tchange it. do. not change";
        let lex = Lex::new(lower, lower);
        assert_eq!(lex.positions("do not change"), vec![0]);
    }

    #[test]
    fn clause_starts_follow_sentences_and_a_leading_place_phrase() {
        let lower = "in settings.py, change timeout. then fix it; ok";
        let lex = Lex::new(lower, lower);
        let starts: Vec<&str> = lex.clause_starts().iter().map(|&i| lex.word(i)).collect();
        assert_eq!(starts, vec!["in", "change", "then", "ok"]);
    }

    #[test]
    fn quotes_are_blanked_pairwise_with_lengths_kept() {
        let text = "what does \"fix é\" mean? don't 'edit it' \"open";
        let blanked = blank_quotes(text);
        assert_eq!(blanked.len(), text.len());
        assert_eq!(blanked, "what does \"      \" mean? don't '       ' \"open");
    }
}
