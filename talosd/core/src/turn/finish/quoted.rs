//! A question about a value the named file assigns ("What port does server.js use?") whose
//! answer does not state the value the file holds gets the line quoted from Talos's own read,
//! marked as such: the person sees the record beside the model's words, and a small model's
//! wrong or missing fact does not stand alone as the answer.

use crate::text::assignment::assignments;
use crate::text::protected::protected_kind;

/// Words of a question that never name a key.
#[rustfmt::skip]
const NOT_KEYS: &[&str] = &[
    "what", "which", "is", "are", "the", "a", "an", "in", "of", "does", "do", "use", "uses",
    "set", "value", "how", "many", "much", "tell", "me", "file", "on", "off", "there", "it",
    "and", "to", "for", "this", "that", "configure", "configured", "say", "says", "whats",
];

/// At most this many lines are quoted.
const MAX_QUOTED: usize = 3;

/// The note quoting each line that assigns a key the question names, from the files this turn
/// read, when the answer does not hold that line's value; `None` when it holds them all.
pub(super) fn quoted_facts(
    question: &str,
    read_texts: &[(String, String)],
    answer: &str,
) -> Option<String> {
    let answer = answer.to_lowercase();
    let mut quoted: Vec<String> = Vec::new();
    for word in question
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .filter(|w| w.len() > 1 && !NOT_KEYS.contains(&w.to_lowercase().as_str()))
    {
        for (path, text) in read_texts {
            if protected_kind(path).is_some() || question_names_file(question, path, word) {
                continue;
            }
            let found = assignments(text, word);
            // One line assigns it, and only exact key names count (`port`, not a line that
            // merely holds a longer name with it).
            let [one] = found.as_slice() else { continue };
            let value = one.value().trim_matches(|c| c == '"' || c == '\'');
            let line = format!("{path}: `{}`", one.line.trim());
            if !value.is_empty()
                && !answer.contains(&value.to_lowercase())
                && !quoted.contains(&line)
            {
                quoted.push(line);
            }
        }
    }
    if quoted.is_empty() {
        return None;
    }
    quoted.truncate(MAX_QUOTED);
    Some(format!(
        "[From Talos's own read (not the model): {}]",
        quoted.join("; ")
    ))
}

/// The word is part of the file's name ("package" of package.json), not a key.
fn question_names_file(_question: &str, path: &str, word: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_lowercase();
    name.split('.').any(|part| part == word.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::quoted_facts;

    fn read(path: &str, text: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), text.to_string())]
    }

    /// Proves the value a question names is quoted from the read only when the answer lacks it.
    #[test]
    fn quoted_fact_rows() {
        let server = read("server.js", "const port = 3000;\napp.listen(port);\n");
        let config = read("config.py", "DEBUG = True\nPORT = 8000\n");
        let rows: Vec<(&str, &Vec<(String, String)>, &str, Option<&str>)> = vec![
            (
                "What port does server.js use?",
                &server,
                "The server listens.",
                Some("[From Talos's own read (not the model): server.js: `const port = 3000;`]"),
            ),
            (
                "What port does server.js use?",
                &server,
                "It uses port 3000.",
                None,
            ),
            (
                "Is DEBUG on in config.py?",
                &config,
                "No.",
                Some("[From Talos's own read (not the model): config.py: `DEBUG = True`]"),
            ),
            (
                "Is DEBUG on in config.py?",
                &config,
                "Yes, DEBUG is True.",
                None,
            ),
            (
                "What does config.py do?",
                &config,
                "It configures the app.",
                None,
            ),
        ];
        for (question, texts, answer, want) in rows {
            assert_eq!(
                quoted_facts(question, texts, answer).as_deref(),
                want,
                "{question}"
            );
        }
        let env = read(".env", "API_KEY=secret-value-123\n");
        assert_eq!(
            quoted_facts("What is API_KEY in .env?", &env, "I don't know."),
            None
        );
    }
}
