//! The stream filter: while a model's text streams to the person, tool-call protocol text (a
//! fenced JSON block naming a tool, or a bare JSON object line naming one) is held back and
//! dropped, so the terminal shows prose, not the call. The runtime reports calls itself.

/// How many bytes a suspected call may hold back before the filter gives up and shows them.
const MAX_HELD: usize = 256 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFilter {
    /// Text not yet decided on.
    held: String,
}

impl StreamFilter {
    pub fn new() -> StreamFilter {
        StreamFilter::default()
    }

    /// Takes the next chunk; returns what may be shown now.
    pub fn push(&mut self, chunk: &str) -> String {
        self.held.push_str(chunk);
        self.drain(false)
    }

    /// The stream ended: returns what is left to show.
    pub fn finish(&mut self) -> String {
        self.drain(true)
    }

    fn drain(&mut self, end: bool) -> String {
        let mut out = String::new();
        loop {
            // Show everything up to the first place a call could start.
            let Some(start) = candidate_start(&self.held) else {
                // Keep a trailing partial "``" or a line-start "{" prefix for the next chunk.
                let keep = if end { 0 } else { partial_tail(&self.held) };
                let cut = self.held.len() - keep;
                out.push_str(&self.held[..cut]);
                self.held.drain(..cut);
                return out;
            };
            out.push_str(&self.held[..start]);
            self.held.drain(..start);
            match block_end(&self.held) {
                Some(len) => {
                    let block: String = self.held.drain(..len).collect();
                    if !looks_like_call(&block) {
                        out.push_str(&block);
                    }
                }
                None if end || self.held.len() > MAX_HELD => {
                    let block = std::mem::take(&mut self.held);
                    if !looks_like_call(&block) {
                        out.push_str(&block);
                    }
                    return out;
                }
                None => return out,
            }
        }
    }
}

/// The first fence, or `{` at a line start.
fn candidate_start(text: &str) -> Option<usize> {
    let fence = text.find("```");
    let brace = text
        .char_indices()
        .find(|(i, c)| *c == '{' && (*i == 0 || text[..*i].ends_with('\n')))
        .map(|(i, _)| i);
    match (fence, brace) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Bytes at the end that may be the beginning of a fence.
fn partial_tail(text: &str) -> usize {
    if text.ends_with("``") {
        2
    } else if text.ends_with('`') {
        1
    } else {
        0
    }
}

/// The length of the complete block at the start of `text`, if it is complete.
fn block_end(text: &str) -> Option<usize> {
    if let Some(rest) = text.strip_prefix("```") {
        let close = rest.find("```")?;
        return Some(3 + close + 3);
    }
    // A bare object line: complete at the end of the line once braces balance.
    let mut depth = 0i32;
    let mut in_string = false;
    let mut escaped = false;
    for (i, c) in text.char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (true, false, _) => {}
            (false, _, '"') => in_string = true,
            (false, _, '{') => depth += 1,
            (false, _, '}') => {
                depth -= 1;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            (false, _, _) => {}
        }
    }
    None
}

fn looks_like_call(block: &str) -> bool {
    let body = block.trim_start_matches('`');
    let body = body
        .trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '_')
        .trim_start();
    body.starts_with('{')
        && [
            "\"name\"",
            "\"tool_name\"",
            "\"tool\"",
            "\"function\"",
            "\"function_name\"",
        ]
        .iter()
        .any(|k| block.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(chunks: &[&str]) -> String {
        let mut f = StreamFilter::new();
        let mut out: String = chunks.iter().map(|c| f.push(c)).collect();
        out.push_str(&f.finish());
        out
    }

    #[test]
    fn filter_rows() {
        let call =
            "```json\n{\"name\": \"talos.read_file\", \"parameters\": {\"path\": \"a\"}}\n```";
        assert_eq!(run(&["Reading it.\n", call]), "Reading it.\n");
        assert_eq!(
            run(&[
                "Reading it.\n``",
                "`json\n{\"name\": \"talos.read",
                "_file\"}\n``",
                "`\nDone."
            ]),
            "Reading it.\n\nDone."
        );
        assert_eq!(
            run(&["Here:\n```python\nprint(1)\n```\n"]),
            "Here:\n```python\nprint(1)\n```\n"
        );
        assert_eq!(
            run(&["{\"name\": \"talos.list_dir\", \"arguments\": {\"path\": \".\"}}\nok"]),
            "\nok"
        );
        assert_eq!(run(&["plain ", "text"]), "plain text");
        assert_eq!(run(&["a {b} c"]), "a {b} c");
        assert_eq!(
            run(&["```json\n{\"name\": \"talos.write_file\", \"parameters\": {\"path\""]),
            "",
            "an unfinished call is never shown"
        );
        assert_eq!(run(&["{\"config\": 1}\n"]), "{\"config\": 1}\n");
    }
}
