//! Captured command output, before anything of it reaches the model: best-effort secret
//! redaction and a high-entropy check. Both are pure text functions; the daemon
//! captures, caps and decides what the model sees (output that needed redaction, or that
//! holds a high-entropy token, is withheld from the model).
//!
//! Redaction is best-effort and errs towards redacting: `key=value` and `key: value` with a
//! secret-like key, `Authorization` header values, `Bearer` tokens, well-known token shapes
//! (AWS access key ids, GitHub and GitLab tokens, Slack tokens) and private key blocks. It
//! does not promise to find every secret.

/// Text after redaction, and whether anything was redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub applied: bool,
}

const MASK: &str = "[REDACTED]";
const KEY_MASK: &str = "[REDACTED PRIVATE KEY]";

/// A key is secret-like when, lower-cased with `-` and `.` read as `_`, it ends with one of
/// these (`db_password`, `GITHUB_TOKEN`, `aws_secret_access_key`).
#[rustfmt::skip]
const SECRET_KEY_ENDINGS: [&str; 11] = [
    "password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "access_key",
    "private_key", "credential", "credentials",
];

/// Token shapes: (prefix, the characters that may follow, the fewest that must follow).
const TOKEN_SHAPES: [(&str, fn(u8) -> bool, usize); 10] = [
    ("AKIA", upper_or_digit, 16),
    ("ASIA", upper_or_digit, 16),
    ("ghp_", alnum, 20),
    ("gho_", alnum, 20),
    ("ghu_", alnum, 20),
    ("ghs_", alnum, 20),
    ("ghr_", alnum, 20),
    ("github_pat_", alnum_or_underscore, 20),
    ("glpat-", alnum_dash_or_underscore, 20),
    ("xoxb-", alnum_or_dash, 10),
];

/// Redacts what looks like a secret. Idempotent: redacting the result again changes nothing.
pub fn redact_secrets(text: &str) -> Redacted {
    let mut current = text.to_string();
    let mut applied = false;
    for pass in [
        private_key_blocks as fn(&str) -> Option<String>,
        authorization_values,
        bearer_tokens,
        token_shapes,
        secret_assignments,
    ] {
        if let Some(next) = pass(&current) {
            applied = true;
            current = next;
        }
    }
    Redacted {
        text: current,
        applied,
    }
}

/// Whether `text` holds a token that looks like a random secret: a run of 40..=512 chars of
/// `[A-Za-z0-9_+/-]` (optionally `=`-padded) that is not a 40- or 64-char hex hash or a
/// UUID, mixes at least three of lower case, upper case, digits and `_+/-`, and carries at
/// least 4.5 bits of Shannon entropy per char.
pub fn high_entropy(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || "_+/-=".contains(c)))
        .flat_map(|run| run.split('=').filter(|t| !t.is_empty()))
        .any(is_high_entropy_token)
}

fn is_high_entropy_token(token: &str) -> bool {
    if !(40..=512).contains(&token.len()) {
        return false;
    }
    let hex = token.bytes().all(|b| b.is_ascii_hexdigit());
    if hex && (token.len() == 40 || token.len() == 64) || is_uuid(token) {
        return false;
    }
    let classes = [
        token.bytes().any(|b| b.is_ascii_lowercase()),
        token.bytes().any(|b| b.is_ascii_uppercase()),
        token.bytes().any(|b| b.is_ascii_digit()),
        token.bytes().any(|b| b"_+/-".contains(&b)),
    ];
    classes.iter().filter(|c| **c).count() >= 3 && shannon_entropy(token) >= 4.5
}

/// Bits per char of the token's byte distribution.
fn shannon_entropy(token: &str) -> f64 {
    let mut counts = [0usize; 256];
    for b in token.bytes() {
        counts[usize::from(b)] += 1;
    }
    let length = token.len() as f64;
    counts
        .iter()
        .filter(|n| **n > 0)
        .map(|n| {
            let p = *n as f64 / length;
            -p * p.log2()
        })
        .sum()
}

fn is_uuid(token: &str) -> bool {
    let groups: Vec<&str> = token.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `-----BEGIN … PRIVATE KEY-----` through its `-----END … PRIVATE KEY-----` line (or the end
/// of the text when the block is cut off).
fn private_key_blocks(text: &str) -> Option<String> {
    const BEGIN: &str = "-----BEGIN ";
    const TAIL: &str = "PRIVATE KEY-----";
    let mut out = String::new();
    let mut rest = text;
    let mut changed = false;
    while let Some(start) = rest.find(BEGIN) {
        let header_end = rest[start..].find('\n').map_or(rest.len(), |n| start + n);
        if !rest[start..header_end].contains(TAIL) {
            out.push_str(&rest[..header_end]);
            rest = &rest[header_end..];
            continue;
        }
        out.push_str(&rest[..start]);
        out.push_str(KEY_MASK);
        changed = true;
        let after = &rest[header_end..];
        rest = match after.find("-----END ") {
            Some(end) => {
                let end_line = &after[end..];
                let close = end_line
                    .find(TAIL)
                    .map_or(end_line.len(), |n| n + TAIL.len());
                &after[end + close..]
            }
            None => "",
        };
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// The value of an `Authorization` header (`:` or `=`), to the end of its line.
fn authorization_values(text: &str) -> Option<String> {
    replace_after(text, "authorization", |tail| {
        let bytes = tail.as_bytes();
        let mut i = 0;
        while i < bytes.len() && matches!(bytes[i], b'"' | b'\'' | b' ' | b'\t') {
            i += 1;
        }
        if i >= bytes.len() || !matches!(bytes[i], b':' | b'=') {
            return None;
        }
        i += 1;
        while i < bytes.len() && matches!(bytes[i], b' ' | b'\t') {
            i += 1;
        }
        let end = tail[i..].find('\n').map_or(tail.len(), |n| i + n);
        let value = tail[i..end].trim_end_matches('\r');
        (!value.is_empty() && value != MASK).then_some((i, i + value.len()))
    })
}

/// The token after `Bearer ` (8 chars or more of a token alphabet).
fn bearer_tokens(text: &str) -> Option<String> {
    replace_after(text, "bearer ", |tail| {
        let end = tail
            .bytes()
            .position(|b| !(b.is_ascii_alphanumeric() || b"._~+/=-".contains(&b)))
            .unwrap_or(tail.len());
        (end >= 8).then_some((0, end))
    })
}

/// Well-known token shapes, each starting at a word boundary.
fn token_shapes(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let boundary = bytes[i].is_ascii()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
        let hit = boundary
            .then(|| {
                TOKEN_SHAPES.iter().find_map(|(prefix, allowed, least)| {
                    let body = text[i..].strip_prefix(prefix)?;
                    let n = body.bytes().take_while(|b| allowed(*b)).count();
                    (n >= *least).then_some(prefix.len() + n)
                })
            })
            .flatten();
        match hit {
            Some(length) => {
                out.push_str(&text[copied..i]);
                out.push_str(MASK);
                i += length;
                copied = i;
            }
            None => i += 1,
        }
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// `key=value`, `key: value`, `"key": "value"` and `--key=value` where the key is
/// secret-like. A `::` path separator and `==` comparisons are not assignments.
fn secret_assignments(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let separator = matches!(bytes[i], b'=' | b':')
            && bytes.get(i + 1) != Some(&bytes[i])
            && (i == 0 || bytes[i - 1] != bytes[i]);
        let value = if separator && secret_key_before(&text[..i]) {
            value_after(text, i + 1)
        } else {
            None
        };
        match value {
            Some((start, end)) if &text[start..end] != MASK => {
                out.push_str(&text[copied..start]);
                out.push_str(MASK);
                copied = end;
                i = end;
            }
            Some(_) | None => i += 1,
        }
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

/// Whether the text just before a separator ends with a secret-like key (a closing quote
/// and a space before `:` are allowed).
fn secret_key_before(head: &str) -> bool {
    let head = head.trim_end_matches([' ', '\t']);
    let head = head.strip_suffix(['"', '\'']).unwrap_or(head);
    let start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || "_-.".contains(*c)))
        .map_or(0, |(n, c)| n + c.len_utf8());
    let key = head[start..].to_ascii_lowercase().replace(['-', '.'], "_");
    !key.is_empty() && SECRET_KEY_ENDINGS.iter().any(|e| key.ends_with(e))
}

/// The value after a separator at `from`: quoted to its closing quote on the same line, or
/// bare to the next whitespace, quote, comma, semicolon or closing bracket.
fn value_after(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut start = from;
    while start < bytes.len() && matches!(bytes[start], b' ' | b'\t') {
        start += 1;
    }
    if text[start..].starts_with(MASK) {
        return Some((start, start + MASK.len()));
    }
    let quote = bytes
        .get(start)
        .copied()
        .filter(|b| matches!(b, b'"' | b'\''));
    let end = match quote {
        Some(q) => {
            start += 1;
            text[start..]
                .bytes()
                .position(|b| b == q || b == b'\n')
                .map_or(text.len(), |n| start + n)
        }
        None => text[start..]
            .bytes()
            .position(|b| b.is_ascii_whitespace() || b"\"',;)]}".contains(&b))
            .map_or(text.len(), |n| start + n),
    };
    (end > start).then_some((start, end))
}

/// Replaces, after each case-insensitive occurrence of the ASCII `needle`, the span that
/// `span` picks in the text that follows (offsets relative to it).
fn replace_after(
    text: &str,
    needle: &str,
    span: impl Fn(&str) -> Option<(usize, usize)>,
) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = String::new();
    let mut copied = 0;
    let mut search = 0;
    while let Some(found) = lower[search..].find(needle) {
        let tail_start = search + found + needle.len();
        match span(&text[tail_start..]) {
            Some((start, end)) => {
                out.push_str(&text[copied..tail_start + start]);
                out.push_str(MASK);
                copied = tail_start + end;
                search = copied;
            }
            None => search = tail_start,
        }
    }
    (copied > 0).then(|| {
        out.push_str(&text[copied..]);
        out
    })
}

fn upper_or_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
fn alnum_or_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}
fn alnum_or_dash(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-'
}
fn alnum_dash_or_underscore(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}
