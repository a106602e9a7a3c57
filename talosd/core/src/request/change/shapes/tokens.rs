//! The request as the change shapes read it: tokens, each a run of non-blank characters or a
//! quoted passage, with the punctuation that ends a clause after it.

/// One token of the request: a run of non-blank characters, or a quoted passage.
#[derive(Debug, Clone)]
pub(super) struct Tok {
    /// As written, quotes and trailing punctuation removed.
    pub(super) text: String,
    pub(super) lower: String,
    /// Written in quotes or backticks.
    pub(super) quoted: bool,
    /// A clause ends after this token (`,` `.` `;` `!` `?` `:` after it).
    pub(super) ends: bool,
    /// A colon right after it ("the content: hello").
    pub(super) colon: bool,
    /// A comma right after it (a list goes on).
    pub(super) comma: bool,
    /// Written in double or single quotes: literal text, where backticks name code.
    pub(super) literal: bool,
}

/// The tokens up to the end of the first clause (the token that ends it included).
pub(super) fn clause(toks: &[Tok]) -> &[Tok] {
    let end = toks
        .iter()
        .position(|t| t.ends)
        .map_or(toks.len(), |k| k + 1);
    &toks[..end]
}

/// The request as tokens: quoted passages (`"…"`, `` `…` ``, and `'…'` opened after a blank)
/// are one token each; other tokens are runs of non-blank characters with sentence
/// punctuation stripped from their end (a value's own dots, as in `1.2.0`, are kept).
pub(super) fn tokens(request: &str) -> Vec<Tok> {
    let chars: Vec<char> = request.chars().collect();
    let mut out: Vec<Tok> = Vec::new();
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        if c.is_whitespace() {
            k += 1;
            continue;
        }
        let opens_quote =
            matches!(c, '"' | '`') || (c == '\'' && (k == 0 || chars[k - 1].is_whitespace()));
        if opens_quote && let Some(len) = chars[k + 1..].iter().position(|&q| q == c) {
            let text: String = chars[k + 1..k + 1 + len].iter().collect();
            k += len + 2;
            let stop = trailing(&chars, &mut k);
            out.push(Tok {
                lower: text.to_lowercase(),
                text,
                quoted: true,
                literal: c != '`',
                ends: stop.is_some(),
                colon: stop == Some(':'),
                comma: stop == Some(','),
            });
            continue;
        }
        let start = k;
        while k < chars.len() && !chars[k].is_whitespace() {
            k += 1;
        }
        let raw: String = chars[start..k].iter().collect();
        let text = raw.trim_end_matches([',', '.', ';', '!', '?', ':', ')']);
        let tail = &raw[text.len()..];
        let text = text.trim_start_matches('(').to_string();
        out.push(Tok {
            lower: text.to_lowercase(),
            text,
            quoted: false,
            literal: false,
            ends: !tail.is_empty() && tail != ")",
            colon: tail.contains(':'),
            comma: tail.starts_with(','),
        });
    }
    out
}

/// The first punctuation mark right after a closing quote, if any. Moves `k` past all of it.
fn trailing(chars: &[char], k: &mut usize) -> Option<char> {
    let mut first = None;
    while *k < chars.len() && matches!(chars[*k], ',' | '.' | ';' | '!' | '?' | ':') {
        first.get_or_insert(chars[*k]);
        *k += 1;
    }
    first
}
