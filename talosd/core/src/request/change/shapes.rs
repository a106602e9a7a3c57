//! The shapes of a fully named change, read over the request's tokens: each shape is a family
//! of sentences ("VERB [the] KEY [in FILE] to VALUE" covers "Set TIMEOUT to 60 in settings.py",
//! "bump the version in package.json to 1.2.0" and "Increase MAX_USERS in constants.h to
//! 50"), tried in a fixed order, first match wins.

mod content;
mod tokens;

use super::ChangeAsk;
use super::exact_literal;
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

/// Words that say what kind of thing a key is, dropped beside an identifier.
#[rustfmt::skip]
const GENERIC_NOUNS: &[&str] = &[
    "flag", "feature", "setting", "option", "constant", "variable", "var", "key", "env",
    "parameter", "field", "property", "entry", "value", "config",
];

/// A key that only points back ("turn it off"): what it names is in another clause.
const PRONOUNS: &[&str] = &["it", "them", "this", "that", "these", "those", "everything"];

/// Verbs that open a change clause, for counting the changes a request asks.
#[rustfmt::skip]
const CHANGE_VERBS: &[&str] = &[
    "change", "set", "update", "bump", "increase", "decrease", "raise", "lower", "reduce",
    "make", "switch", "edit", "modify", "adjust", "replace", "rename", "turn", "convert", "move",
    "drop", "correct", "fix", "create", "add", "append", "insert", "delete", "remove", "write",
    "enable", "disable", "swap", "copy", "comment", "uncomment", "prepend",
];

const BOOLEAN_WORDS: &[&str] = &[
    "on", "off", "true", "false", "yes", "no", "enabled", "disabled",
];

pub(super) fn read(request: &str, targets: &[String]) -> Option<ChangeAsk> {
    let toks = tokens(request);
    let is_target = |t: &Tok| {
        targets.iter().any(|p| {
            let base = p.rsplit('/').next().unwrap_or(p);
            // A document named by its noun ("the readme" for README.md, "the gitignore"), never
            // an ordinary stem ("cache" for cache.toml is a word of the key).
            let dotfile = base.strip_prefix('.');
            let stem = dotfile.unwrap_or(base);
            let stem = stem.rsplit_once('.').map_or(stem, |(stem, _)| stem);
            let document = dotfile.is_some() || stem.chars().all(|c| !c.is_lowercase());
            p == &t.text
                || base.eq_ignore_ascii_case(&t.text)
                || document && stem.eq_ignore_ascii_case(&t.text)
        })
    };
    if let Some(rename) = rename_symbol(&toks, &is_target) {
        return Some(rename);
    }
    // Two changes in one request ("fix the typo and bump the version"): no one pin says both.
    if change_clauses(&toks, &is_target) > 1 {
        return None;
    }
    typo_fix(&toks, &is_target)
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
    let is_kind = |k: usize| {
        toks.get(k)
            .is_some_and(|t| !t.quoted && SYMBOL_KINDS.contains(&t.lower.as_str()))
    };
    // "the function add", "the type alias Id", and "the add function", "the `handle` method".
    let mut kind = false;
    while is_kind(k) && k < at + 4 {
        kind = true;
        k += 1;
        if toks.get(k).is_some_and(|t| t.lower == "alias") {
            k += 1;
        }
    }
    let from = toks.get(k)?;
    let mut joiner_at = k + 1;
    while is_kind(joiner_at) && joiner_at < k + 3 {
        kind = true;
        joiner_at += 1;
    }
    let joiner = toks.get(joiner_at)?;
    if !matches!(joiner.lower.as_str(), "to" | "into" | "as") {
        return None;
    }
    let to = toks.get(joiner_at + 1)?;
    // The new name ends its clause or a place phrase follows: "to something clearer" is a wish.
    let closes = to.ends
        || to.quoted
        || toks.get(joiner_at + 2).is_none_or(|t| {
            PLACE_WORDS.contains(&t.lower.as_str())
                || VALUE_ENDERS.contains(&t.lower.as_str())
                || t.lower == "and"
        });
    if !closes {
        return None;
    }
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
    let name = name.strip_suffix('(').unwrap_or(name);
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok = (first.is_alphabetic() || first == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$');
    ok.then(|| name.to_string())
}

/// A typo named with its correction: "fix the typo: "teh" should be "the"", "fix the typo
/// "recieve", it should be "receive"", "fix typo: adress -> address". The request must speak
/// of a typo, a spelling or a fix; each value is one word or one quoted passage.
fn typo_fix(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<ChangeAsk> {
    let speaks = toks.iter().any(|t| {
        !t.quoted
            && (matches!(
                t.lower.as_str(),
                "fix" | "correct" | "typo" | "typos" | "spelling"
            ) || t.lower.starts_with("misspel"))
    });
    if !speaks {
        return None;
    }
    let one = |t: &Tok| {
        (!is_target(t) && !t.text.is_empty() && !t.text.contains(' ') || t.quoted)
            .then(|| t.text.clone())
    };
    for k in 1..toks.len() {
        let arrow = !toks[k].quoted && matches!(toks[k].text.as_str(), "->" | "→" | "=>");
        let should = !toks[k].quoted
            && toks[k].lower == "should"
            && toks.get(k + 1).is_some_and(|t| t.lower == "be");
        let (old_at, new_at) = match (arrow, should) {
            (true, _) => (k - 1, k + 1),
            (_, true) => {
                let before = &toks[k - 1];
                let old_at = if PRONOUNS.contains(&before.lower.as_str()) && !before.quoted {
                    (0..k - 1).rev().find(|&j| toks[j].quoted)?
                } else {
                    k - 1
                };
                (old_at, k + 2)
            }
            _ => continue,
        };
        let from = one(&toks[old_at])?;
        let to = one(toks.get(new_at)?)?;
        return Some(ChangeAsk::Replace {
            from,
            to,
            key: None,
        });
    }
    None
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
    let start = verb + 1 + literal_lead_in(&toks[verb + 1..with]);
    let first = toks.get(start)?;
    let open = DETERMINERS.contains(&first.lower.as_str())
        || matches!(first.lower.as_str(), "every" | "all" | "each" | "any");
    if !first.quoted && open {
        return None;
    }
    let old = value_run(&toks[start..with], is_target, false)?;
    let new = value_run(&toks[with + 1..], is_target, true)?;
    Some(keyed_replace(&old, &new))
}

/// The words before a literal that only say it is one: "all occurrences of", "every instance
/// of", "the word", "the string", "the text". Their length in tokens.
fn literal_lead_in(toks: &[Tok]) -> usize {
    let w = |k: usize| {
        toks.get(k)
            .filter(|t| !t.quoted)
            .map_or("", |t| t.lower.as_str())
    };
    let quantified = matches!(w(0), "all" | "every" | "each")
        && matches!(
            w(1),
            "occurrences" | "occurrence" | "instances" | "instance" | "uses"
        )
        && w(2) == "of";
    if quantified {
        return 3;
    }
    let named = w(0) == "the" && matches!(w(1), "word" | "string" | "text" | "phrase" | "value");
    if named && toks.len() > 2 { 2 } else { 0 }
}

/// A replacement whose values may carry the key they belong to: "port 3000" with "8080" is
/// 3000 replaced by 8080 on the port's line.
fn keyed_replace(old: &str, new: &str) -> ChangeAsk {
    let split = |value: &str| -> Option<(String, String)> {
        let (key, value) = value.split_once(' ')?;
        let keyish = key.chars().all(|c| c.is_alphabetic() || c == '_');
        let valueish = !value.contains(' ') && value.parse::<f64>().is_ok();
        (keyish && valueish).then(|| (key.to_string(), value.to_string()))
    };
    let (old_key, from) = split(old).map_or((None, old.to_string()), |(k, v)| (Some(k), v));
    let (new_key, to) = split(new).map_or((None, new.to_string()), |(k, v)| (Some(k), v));
    let key = match (old_key, new_key) {
        (Some(a), Some(b)) if !a.eq_ignore_ascii_case(&b) => {
            return ChangeAsk::Replace {
                from: old.to_string(),
                to: new.to_string(),
                key: None,
            };
        }
        (a, b) => a.or(b),
    };
    ChangeAsk::Replace { from, to, key }
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
    Some(keyed_replace(&old, &new))
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
        let value = single_value(&span[to + 1..], is_target)?;
        if another_pair(&span[to + 1..]) {
            return None;
        }
        // "change 30 to 60", "change "Hello" to "Hi"", "correct recieve to receive": the words
        // before "to" are the old text, not a key.
        let old = &span[..to];
        let literal = old.len() == 1 && (old[0].literal || old[0].lower.parse::<f64>().is_ok());
        if literal || matches!(toks[verb].lower.as_str(), "correct" | "fix") {
            let from = value_run(old, is_target, false)?;
            return Some(ChangeAsk::Replace {
                from,
                to: value,
                key: None,
            });
        }
        let key = strict_key(old, is_target)?;
        return Some(ChangeAsk::SetKey { key, value });
    }
    if matches!(toks[verb].lower.as_str(), "make" | "set") {
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

/// How many clauses of the request open with a change verb: at the start, after a clause's
/// end, after "and", "then" or "also", or after the file a leading place phrase names.
fn change_clauses(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> usize {
    // After a colon comes given text ("with the content: add more"), not another clause.
    let end = toks
        .iter()
        .position(|t| t.colon)
        .map_or(toks.len(), |k| k + 1);
    (0..end)
        .filter(|&k| {
            let t = &toks[k];
            let opens = k == 0 || {
                let before = &toks[k - 1];
                before.ends
                    || matches!(before.lower.as_str(), "and" | "then" | "also" | "please")
                    || is_target(before)
            };
            !t.quoted && opens && CHANGE_VERBS.contains(&t.lower.as_str())
        })
        .count()
}

/// The first value verb of the request, at a clause start or after a leading place phrase.
fn first_verb(toks: &[Tok]) -> Option<usize> {
    toks.iter()
        .position(|t| !t.quoted && VALUE_VERBS.contains(&t.lower.as_str()))
}

/// After a value, another "and KEY to VALUE" ("set TIMEOUT to 60 and DEBUG to False"): two
/// changes, which one pin cannot say.
fn another_pair(after: &[Tok]) -> bool {
    after.iter().enumerate().any(|(k, t)| {
        t.lower == "and"
            && after[k + 1..]
                .iter()
                .take(5)
                .any(|t| !t.quoted && matches!(t.lower.as_str(), "to" | "from"))
    })
}

/// The key before "to" when the words are only a key (determiners and the file's place
/// phrase): "the typo in README.md and bump the version in package.json" is no key.
fn strict_key(toks: &[Tok], is_target: &dyn Fn(&Tok) -> bool) -> Option<String> {
    let stops = toks
        .iter()
        .enumerate()
        .any(|(k, t)| !t.quoted && VALUE_ENDERS.contains(&t.lower.as_str()) && k > 0);
    if stops {
        return None;
    }
    key_words(toks, is_target)
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
    // "the feature flag NEW_UI", "the `legacy_api` flag": the identifier is the key.
    let code = |w: &str| {
        w.contains('_')
            || (w.len() > 1
                && w.chars().any(char::is_alphabetic)
                && w.chars().all(|c| !c.is_lowercase()))
    };
    if words.len() > 1
        && let [identifier] = words
            .iter()
            .copied()
            .filter(|w| !GENERIC_NOUNS.contains(&w.to_lowercase().as_str()))
            .collect::<Vec<_>>()[..]
        && code(identifier)
    {
        words = vec![identifier];
    }
    let well_formed = !words.is_empty()
        && words.len() <= 4
        && !(words.len() == 1 && PRONOUNS.contains(&words[0].to_lowercase().as_str()))
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
