//! The turn log: a plain-text file beside each trace holding what the trace keeps only as
//! digests, the request and the committed answer (the final answer after the guards), under a
//! short header (ids, times, workspace, mode, outcome). Header values have control characters
//! escaped so a hostile path cannot forge a line; the request and answer are kept verbatim.

use talos_protocol::time::utc;
use talos_protocol::trace::TraceRecord;

/// The turn log's file extension, beside `NNNNNN-<traceId>.json`.
pub const EXTENSION: &str = "log";

/// The words of a turn, which the trace does not keep.
#[derive(Debug, Clone)]
pub struct TurnText<'a> {
    /// The request as the person typed it.
    pub request: &'a str,
    /// The committed answer: the final answer after the guards.
    pub answer: &'a str,
    /// The workspace root.
    pub workspace: &'a str,
}

const REQUEST_MARK: &str = "=== request (";
const ANSWER_MARK: &str = "=== answer (";

/// The turn log's text.
pub fn render(record: &TraceRecord, text: &TurnText<'_>) -> String {
    let spelled = |value: serde_json::Result<serde_json::Value>| {
        value
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    };
    let status = spelled(serde_json::to_value(record.outcome.status));
    let classification = spelled(serde_json::to_value(record.outcome.classification));
    let header = [
        ("trace", record.trace_id.clone()),
        ("session", record.session_id.clone()),
        ("turn", record.turn_number.to_string()),
        ("started", utc(record.started_at_ms)),
        ("finished", utc(record.finished_at_ms)),
        ("workspace", text.workspace.to_string()),
        ("mode", record.mode.clone()),
        ("outcome", format!("{status} ({classification})")),
    ];
    let mut out = String::from("# Talos turn log\n");
    for (name, value) in header {
        out.push_str(&format!("{name}: {}\n", escaped(&value)));
    }
    for (mark, body) in [(REQUEST_MARK, text.request), (ANSWER_MARK, text.answer)] {
        let lines = body.lines().count();
        let noun = if lines == 1 { "line" } else { "lines" };
        out.push_str(&format!("\n{mark}{lines} {noun}) ===\n"));
        out.push_str(body);
        if !body.is_empty() && !body.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// The first line of the request in a turn log's text, when it has one.
pub fn first_request_line(log: &str) -> Option<String> {
    let mut lines = log.lines();
    let mark = lines.by_ref().find(|line| line.starts_with(REQUEST_MARK))?;
    let count: usize = mark[REQUEST_MARK.len()..].split(' ').next()?.parse().ok()?;
    if count == 0 {
        return None;
    }
    lines.next().map(|line| line.trim().to_string())
}

/// Control characters escaped, so a value stays on its line.
fn escaped(value: &str) -> String {
    value
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

#[cfg(test)]
// std::fs in the tests: hostile homes are built by path.
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn record() -> TraceRecord {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../protocol/tests/fixtures/trace/record.json"
        ))
        .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn the_log_holds_the_words_and_gives_back_the_first_line_of_the_request() {
        let rows: [(&str, Option<&str>); 4] = [
            ("fix it\nplease", Some("fix it")),
            ("one line", Some("one line")),
            ("", None),
            (
                "=== answer (1 line) ===\nx",
                Some("=== answer (1 line) ==="),
            ),
        ];
        for (request, first) in rows {
            let log = render(
                &record(),
                &TurnText {
                    request,
                    answer: "Done: TIMEOUT is 60.",
                    workspace: "/w\n=== request (1 line) ===\nforged",
                },
            );
            assert!(log.contains("\nDone: TIMEOUT is 60.\n"), "{log}");
            assert!(log.contains(request), "{log}");
            assert!(log.contains("workspace: /w\\n=== request"), "{log}");
            assert_eq!(first_request_line(&log).as_deref(), first, "{request:?}");
        }
    }
}
