//! The shapes of a fully named change, read over the request's tokens: each shape is a family
//! of sentences ("VERB [the] KEY [in FILE] to VALUE" covers "Set TIMEOUT to 60 in settings.py",
//! "bump the version in package.json to 1.2.0" and "Increase MAX_USERS in constants.h to
//! 50"), tried in a fixed order, first match wins.

mod content;
mod tokens;

use super::ChangeAsk;
use crate::request::contract::exact_literal;
pub use content::content_in_words;
use tokens::{Tok, clause, tokens};

/// Verbs that introduce a replacement or a new value.
#[rustfmt::skip]
const VALUE_VERBS: &[&str] = &[
    "change", "set", "update", "bump", "increase", "decrease", "raise", "lower", "reduce",
    "make", "switch", "edit", "modify", "adjust", "replace", "rename", "turn", "convert", "move",
    "drop", "lift", "up", "correct", "fix",
];

/// Words that name what kind of symbol a rename is about.
#[rustfmt::skip]
const SYMBOL_KINDS: &[&str] = &[
    "function", "fn", "method", "variable", "var", "class", "struct", "enum", "trait", "type",
    "constant", "const", "field", "property", "symbol", "identifier", "parameter", "param",
    "module", "interface", "macro", "def", "func", "let", "attribute", "member", "argument",
];

const DETERMINERS: &[&str] = &["the", "a", "an", "its", "my", "our", "this", "that", "your"];

/// Words that open a place phrase ("in settings.py", "of the Makefile").
const PLACE_WORDS: &[&str] = &["in", "inside", "within", "of", "for", "on", "at", "from"];

/// Words that end a value ("to 60 and tell me", "to 60 then stop").
const VALUE_ENDERS: &[&str] = &["and", "then", "but", "so", "please", "everywhere", "too"];

const BOOLEAN_WORDS: &[&str] = &[
    "on", "off", "true", "false", "yes", "no", "enabled", "disabled",
];

pub(super) fn read(request: &str, targets: &[String]) -> Option<ChangeAsk> {
    let toks = tokens(request);
    let is_target = |t: &Tok| {
        targets
            .iter()
            .any(|p| p == &t.text || p.rsplit('/').next() == Some(t.text.as_str()))
    };
    rename_symbol(&toks, &is_target)
        .or_else(|| from_to(&toks, &is_target))
        .or_else(|| replace_with(&toks, &is_target))
        .or_else(|| instead_of(&toks, &is_target))
        .or_else(|| switch_on_off(&toks, &is_target))
        .or_else(|| key_to_value(&toks, &is_target))
        .or_else(|| {
            exact_literal(request)
                .or_else(|| content_in_words(request))
                .map(|content| ChangeAsk::Content { content })
        })
}

/// "rename [the] [function] X to Y": a symbol, not a file. Without a kind word, X must be in
/// backticks or the request must name the file it lives in.
fn rename_symbol(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let at = toks.iter().position(|t| t.lower == "rename")?;
    let mut k = at + 1;
    while toks
        .get(k)
        .is_some_and(|t| DETERMINERS.contains(&t.lower.as_str()))
    {
        k += 1;
    }
    let kind = toks
        .get(k)
        .is_some_and(|t| SYMBOL_KINDS.contains(&t.lower.as_str()));
    if kind {
        k += 1;
    }
    let from = toks.get(k)?;
    let joiner = toks.get(k + 1)?;
    if !matches!(joiner.lower.as_str(), "to" | "into" | "as") {
        return None;
    }
    let to = toks.get(k + 2)?;
    let from_name = identifier(&from.text)?;
    let to_name = identifier(&to.text)?;
    let names_file = toks.iter().any(is_target);
    if is_target(from) || is_target(to) || !(kind || from.quoted || names_file) {
        return None;
    }
    Some(ChangeAsk::RenameSymbol {
        from: from_name,
        to: to_name,
    })
}

/// `text` as an identifier (`add`, `parse_header`, `add()` read as `add`), or `None`.
fn identifier(text: &str) -> Option<String> {
    let name = text.strip_suffix("()").unwrap_or(text);
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok = (first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    ok.then(|| name.to_string())
}

/// "VERB [KEY] from A to B" (values of several words allowed).
fn from_to(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let verb = first_verb(toks)?;
    if matches!(toks[verb].lower.as_str(), "move" | "rename") {
        return None;
    }
    let from = (verb + 1..toks.len()).find(|&k| toks[k].lower == "from" && !toks[k].quoted)?;
    let to =
        (from + 1..toks.len().min(from + 9)).find(|&k| toks[k].lower == "to" && !toks[k].quoted)?;
    let old = value_run(&toks[from + 1..to], is_target, false)?;
    if toks[to - 1].ends && !toks[to - 1].colon {
        return None;
    }
    let new = value_run(&toks[to + 1..], is_target, true)?;
    let key = key_words(&toks[verb + 1..from], is_target);
    Some(ChangeAsk::Replace {
        from: old,
        to: new,
        key,
    })
}

/// "replace A with B" (A a literal: quoted, or not opened by a determiner).
fn replace_with(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let verb = toks
        .iter()
        .position(|t| t.lower == "replace" || t.lower == "swap")?;
    let with = (verb + 1..toks.len().min(verb + 8))
        .find(|&k| matches!(toks[k].lower.as_str(), "with" | "by" | "for") && !toks[k].quoted)?;
    let first = toks.get(verb + 1)?;
    if !first.quoted && DETERMINERS.contains(&first.lower.as_str()) {
        return None;
    }
    let old = value_run(&toks[verb + 1..with], is_target, false)?;
    let new = value_run(&toks[with + 1..], is_target, true)?;
    Some(ChangeAsk::Replace {
        from: old,
        to: new,
        key: None,
    })
}

/// "use B instead of A", "use B rather than A".
fn instead_of(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let verb = toks.iter().position(|t| t.lower == "use")?;
    let (pivot, len) = (verb + 1..toks.len().min(verb + 8)).find_map(|k| {
        let w = |d: usize| toks.get(k + d).map_or("", |t| t.lower.as_str());
        if w(0) == "instead" && w(1) == "of" || w(0) == "rather" && w(1) == "than" {
            Some((k, 2))
        } else {
            None
        }
    })?;
    let new = value_run(&toks[verb + 1..pivot], is_target, false)?;
    let old = value_run(&toks[pivot + len..], is_target, true)?;
    Some(ChangeAsk::Replace {
        from: old,
        to: new,
        key: None,
    })
}

/// "turn|switch [the] KEY on|off", "turn|switch on|off [the] KEY", "enable|disable KEY".
fn switch_on_off(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    for (v, t) in toks.iter().enumerate() {
        let value = match t.lower.as_str() {
            "enable" | "activate" => "on",
            "disable" | "deactivate" => "off",
            "turn" | "switch" | "toggle" => {
                let on_off = |k: usize| {
                    toks.get(k)
                        .filter(|t| matches!(t.lower.as_str(), "on" | "off"))
                        .map(|t| t.lower.clone())
                };
                if let Some(value) = on_off(v + 1) {
                    let key = key_words(clause(&toks[v + 2..]), is_target)?;
                    return Some(ChangeAsk::SetKey { key, value });
                }
                let end = (v + 1..toks.len().min(v + 7)).find(|&k| on_off(k).is_some())?;
                let key = key_words(&toks[v + 1..end], is_target)?;
                let value = on_off(end)?;
                return Some(ChangeAsk::SetKey { key, value });
            }
            _ => continue,
        };
        let key = key_words(clause(&toks[v + 1..]), is_target)?;
        return Some(ChangeAsk::SetKey {
            key,
            value: value.to_string(),
        });
    }
    None
}

/// "VERB [the] KEY [in FILE] to VALUE", "set KEY=VALUE", "make KEY VALUE" (VALUE a boolean or
/// a number).
fn key_to_value(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let verb = first_verb(toks)?;
    if matches!(toks[verb].lower.as_str(), "move" | "rename" | "replace") {
        return None;
    }
    if toks[verb].lower == "set"
        && let Some(t) = toks.get(verb + 1)
        && let Some((key, value)) = t.text.split_once('=')
        && identifier(key).is_some()
        && !value.is_empty()
    {
        return Some(ChangeAsk::SetKey {
            key: key.to_string(),
            value: value.trim_matches(['"', '\'']).to_string(),
        });
    }
    let span = clause(&toks[verb + 1..]);
    if let Some(to) = span.iter().position(|t| t.lower == "to" && !t.quoted) {
        let key = key_words(&span[..to], is_target)?;
        let value = single_value(&span[to + 1..], is_target)?;
        return Some(ChangeAsk::SetKey { key, value });
    }
    if toks[verb].lower == "make" {
        let at = span.iter().position(|t| is_plain_value(&t.lower))?;
        let key = key_words(&span[..at], is_target)?;
        let value = span[at].text.clone();
        return Some(ChangeAsk::SetKey { key, value });
    }
    None
}

fn is_plain_value(word: &str) -> bool {
    BOOLEAN_WORDS.contains(&word) || word.parse::<f64>().is_ok()
}

/// The first value verb of the request, at a clause start or after a leading place phrase.
fn first_verb(toks: &[Tok]) -> Option<usize> {
    toks.iter()
        .position(|t| !t.quoted && VALUE_VERBS.contains(&t.lower.as_str()))
}

/// The words naming what holds a value: determiners and place phrases dropped ("the log level
/// in logging.yaml" is `log level`), at most four words, never a file name. `None` when
/// nothing is left.
fn key_words(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    let mut k = 0;
    while let Some(t) = toks.get(k) {
        if !t.quoted && PLACE_WORDS.contains(&t.lower.as_str()) {
            // "in settings.py", "in the Makefile": skip to past the file.
            let mut j = k + 1;
            while toks
                .get(j)
                .is_some_and(|t| DETERMINERS.contains(&t.lower.as_str()))
            {
                j += 1;
            }
            if toks.get(j).is_some_and(is_target) {
                k = j + 1;
                continue;
            }
            break;
        }
        if is_target(t) {
            return None;
        }
        if !t.quoted && VALUE_ENDERS.contains(&t.lower.as_str()) {
            break;
        }
        if DETERMINERS.contains(&t.lower.as_str()) && !t.quoted {
            k += 1;
            continue;
        }
        if matches!(t.lower.as_str(), "value" | "setting" | "number") && !words.is_empty() {
            k += 1;
            continue;
        }
        words.push(t.text.as_str());
        if t.ends {
            break;
        }
        k += 1;
    }
    let well_formed = !words.is_empty()
        && words.len() <= 4
        && words
            .iter()
            .all(|w| w.chars().any(char::is_alphanumeric) && !BOOLEAN_WORDS.contains(w));
    well_formed.then(|| words.join(" "))
}

/// A value of up to eight tokens: to the end of the clause, a place phrase that names a file
/// ("to 60 in settings.py"), or a joining word ("and tell me").
fn value_run(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool, open_end: bool) -> Option<String> {
    let mut words: Vec<&str> = Vec::new();
    for (k, t) in toks.iter().enumerate() {
        if !t.quoted && !words.is_empty() {
            let place = PLACE_WORDS.contains(&t.lower.as_str()) && {
                let mut j = k + 1;
                while toks
                    .get(j)
                    .is_some_and(|t| DETERMINERS.contains(&t.lower.as_str()))
                {
                    j += 1;
                }
                toks.get(j).is_some_and(is_target)
            };
            if place || VALUE_ENDERS.contains(&t.lower.as_str()) {
                break;
            }
        }
        if is_target(t) {
            return None;
        }
        words.push(t.text.as_str());
        if t.quoted && !open_end && toks.len() > k + 1 {
            continue;
        }
        if t.ends || words.len() == 8 {
            break;
        }
    }
    let value = words.join(" ");
    (!value.is_empty() && value.chars().any(|c| !c.is_whitespace())).then_some(value)
}

/// One value token (quoted passages count as one), or `None` when several words follow
/// unquoted ("to something more readable" is a description, not a value).
fn single_value(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<String> {
    let first = toks.first()?;
    if is_target(first) || first.text.is_empty() {
        return None;
    }
    if first.quoted || first.ends {
        return Some(first.text.clone());
    }
    let next = toks.get(1).map_or("", |t| t.lower.as_str());
    let closes = next.is_empty()
        || VALUE_ENDERS.contains(&next)
        || (PLACE_WORDS.contains(&next) && toks.iter().skip(2).take(2).any(is_target))
        || matches!(
            next,
            "seconds" | "secs" | "ms" | "minutes" | "mb" | "gb" | "kb"
        );
    (closes && !DETERMINERS.contains(&first.lower.as_str())).then(|| first.text.clone())
}

#[cfg(test)]
mod tests;
