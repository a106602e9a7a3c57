//! The trace renderer's rows: the list, one trace with and without its turn log, hostile text,
//! colour only with a colour palette, times and the gc report.

use serde_json::json;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{DaemonGcResult, GcCount, TraceGetResult, TraceSummary};

use super::*;

fn record() -> TraceRecord {
    serde_json::from_str(include_str!(
        "../../../protocol/tests/fixtures/trace/record.json"
    ))
    .unwrap()
}

fn log(request: &str, answer: &str) -> String {
    let count = |text: &str| text.lines().count();
    format!(
        "# Talos turn log\ntrace: trc-1\n\n=== request ({} lines) ===\n{request}\n\n=== answer ({} lines) ===\n{answer}\n",
        count(request),
        count(answer)
    )
}

fn summary(request: Option<&str>) -> TraceSummary {
    serde_json::from_value(json!({
        "traceId": "trc-0123456789abcdef0123456789abcdef", "sessionId": "ses-1", "turnNumber": 1,
        "startedAtMs": 1_764_557_347_000u64, "finishedAtMs": 1_764_557_351_200u64, "mode": "agent",
        "status": "COMPLETE", "classification": "COMPLETED_VERIFIED", "request": request
    }))
    .unwrap()
}

#[test]
fn the_list_shows_time_id_status_and_the_first_line_of_the_request() {
    let rows = [summary(Some("fix the \u{1b}[2J timeout")), summary(None)];
    assert_eq!(
        list(&rows, Palette::PLAIN),
        "when (UTC)        trace                                 status    request\n\
         2025-12-01 02:49  trc-0123456789abcdef0123456789abcdef  COMPLETE  fix the \\u{1b}[2J timeout\n\
         2025-12-01 02:49  trc-0123456789abcdef0123456789abcdef  COMPLETE  (no turn log)\n"
    );
    assert_eq!(list(&[], Palette::PLAIN), "No traces for this workspace.\n");
}

#[test]
fn a_trace_is_rendered_in_sections_with_what_decided_each_call() {
    let got = TraceGetResult {
        trace: record(),
        turn_log: Some(log(
            "In settings.py, change TIMEOUT.\n=== answer (1 line) ===",
            "Done: TIMEOUT is 60.",
        )),
    };
    let text = show(&got, Palette::PLAIN);
    let order = [
        "Trace trc-",
        "outcome COMPLETE (COMPLETED_VERIFIED) · changes SUCCEEDED",
        "\nRequest\n  In settings.py, change TIMEOUT.\n  === answer (1 line) ===\n",
        "\nContract\n  FILE_EDIT · change requested yes · allowed yes · verification required\n",
        "  expected: settings.py\n",
        "\nPlan and surface\n",
        "\nCalls\n  call-1 talos.read_file settings.py [native]: executed\n      ladder: allow (DEFAULT_READ_ALLOW)\n",
        "  call-2 talos.edit_file settings.py [native]: executed\n      ladder: ask (DEFAULT_WRITE_ASK)\n      approval: approve by client\n",
        "\nApprovals\n  call-2 talos.edit_file",
        "\nCheckpoints\n  call-2 settings.py: created chk-03123d2ac974557f63a7274b7dbb6e07 (existed before)\n",
        "\nVerification\n  call-2 settings.py: PASS read-back matches",
        "\nWarnings\n  EVIDENCE_TARGET_NOT_READ:",
        "\nAnswer\n  Done: TIMEOUT is 60.\n",
    ];
    let mut from = 0;
    for part in order {
        let at = text[from..]
            .find(part)
            .unwrap_or_else(|| panic!("{part:?} missing after byte {from} in:\n{text}"));
        from += at + part.len();
    }
    assert!(!text.contains('\u{1b}'), "no colour without a terminal");
    assert!(show(&got, Palette::COLOUR).contains("\u{1b}[32mCOMPLETE\u{1b}[0m"));
}

#[test]
fn without_a_turn_log_the_words_are_reported_as_not_kept() {
    let got = TraceGetResult {
        trace: record(),
        turn_log: None,
    };
    let text = show(&got, Palette::PLAIN);
    assert!(
        text.contains("\nRequest\n  not kept (no turn log): "),
        "{text}"
    );
    assert!(
        text.contains("\nAnswer\n  not kept (no turn log): 46 characters, sha256:"),
        "{text}"
    );
}

#[test]
fn control_characters_in_a_turn_log_are_escaped() {
    let got = TraceGetResult {
        trace: record(),
        turn_log: Some(log("clear \u{1b}[2J", "bell \u{7}")),
    };
    let text = show(&got, Palette::PLAIN);
    assert!(text.contains("  clear \\u{1b}[2J\n"), "{text}");
    let mut hostile = got.clone();
    hostile.trace.tool_calls[0].path_hint = Some("a\u{1b}[2Jb".into());
    hostile.trace.verification[0].summary = "ok\u{1b}]0;title\u{7}".into();
    let coloured = show(&hostile, Palette::COLOUR);
    assert!(!coloured.contains("\u{1b}[2J"), "{coloured}");
    assert!(!coloured.contains("\u{1b}]0;"), "{coloured}");
    assert!(coloured.contains("a\\u{1b}[2Jb"), "{coloured}");
    assert!(text.contains("  bell \\u{7}\n"), "{text}");
}

#[test]
fn turn_words_follow_the_line_counts() {
    for (log_text, expected) in [
        (log("a\n\nb", "c"), (Some("a\n\nb"), Some("c"))),
        (log("", ""), (Some(""), Some(""))),
        ("no marks".to_string(), (None, None)),
        (
            "=== request (2 lines) ===\nx\n=== answer (9 lines) ===\n\n=== answer (1 lines) ===\ny\n"
                .to_string(),
            (Some("x\n=== answer (9 lines) ==="), Some("y")),
        ),
    ] {
        let (request, answer) = turn_words(&log_text);
        assert_eq!(
            (request.as_deref(), answer.as_deref()),
            expected,
            "{log_text:?}"
        );
    }
}

#[test]
fn durations_and_sizes_are_short() {
    assert_eq!(
        [duration(999), duration(4_250)],
        ["999 ms".to_string(), "4.2 s".to_string()]
    );
    assert_eq!(
        [bytes(12), bytes(2048), bytes(1 << 30)],
        ["12 bytes".to_string(), "2.0 KiB".into(), "1.0 GiB".into()]
    );
}

#[test]
fn the_gc_report_names_each_kind_and_a_deferral() {
    let c = |files, bytes| GcCount { files, bytes };
    let mut result = DaemonGcResult {
        traces: c(2, 2048),
        turn_logs: c(2, 100),
        checkpoints: c(1, 300),
        checkpoint_objects: c(3, 5 << 20),
        sessions: c(1, 900),
        bytes_after: 1 << 20,
        max_bytes: 1 << 30,
        max_age_days: 30,
        checkpoints_deferred: false,
    };
    assert_eq!(
        gc(&result),
        "Removed\n  traces: 2 files, 2.0 KiB\n  turn logs: 2 files, 100 bytes\n  checkpoints: 1 files, 300 bytes\n  checkpoint objects: 3 files, 5.0 MiB\n  sessions: 1 files, 900 bytes\nKept 1.0 MiB (limits: 30 days, 1.0 GiB)\n"
    );
    result.checkpoints_deferred = true;
    assert!(gc(&result).ends_with("a turn was running. Run `talos gc` again later.\n"));
}

/// Proves each model call shows the counts its trace holds, and the context budget's cuts
/// indented under it.
#[test]
fn model_calls_show_their_tokens_and_cuts_rows() {
    let call = |value: serde_json::Value| -> TraceModelCall {
        let mut base = json!({
            "index": 1, "finishReason": "tool_calls", "toolCalls": 1,
            "content": {"hash": "sha256:0", "chars": 0, "bytes": 0, "lines": 0}
        });
        base.as_object_mut()
            .unwrap()
            .extend(value.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    };
    let rows: &[(serde_json::Value, &[&str])] = &[
        (json!({}), &["#1 tool_calls · 1 tool call"]),
        (
            json!({"promptTokens": 3_083, "cachedTokens": 2_900, "completionTokens": 37,
                   "contextTokens": 4_096, "budgetedTokens": 3_050,
                   "cut": ["history: 2 earlier turns left out", "a.py: read cut to 40 lines"]}),
            &[
                "#1 tool_calls · 1 tool call · prompt 3,083 tokens (2,900 cached) · completion 37 · context 4,096 · budgeted 3,050",
                "    cut: history: 2 earlier turns left out",
                "    cut: a.py: read cut to 40 lines",
            ],
        ),
        (
            json!({"promptTokens": 42, "cachedTokens": 0, "toolCalls": 0, "finishReason": "stop"}),
            &["#1 stop · prompt 42 tokens (0 cached)"],
        ),
        (
            json!({"finishReason": "", "toolCalls": 0, "budgetedTokens": 5_000,
                   "contextTokens": 4_096, "error": "model call failed: HTTP 500"}),
            &[
                "#1 failed · context 4,096 · budgeted 5,000",
                "    error: model call failed: HTTP 500",
            ],
        ),
    ];
    for (fields, expected) in rows {
        assert_eq!(
            model_call_lines(&call(fields.clone())),
            *expected,
            "{fields}"
        );
    }
    let text = show(
        &TraceGetResult {
            trace: record(),
            turn_log: None,
        },
        Palette::PLAIN,
    );
    assert!(
        text.contains(
            "\nModel calls\n  #0 tool_calls · 1 tool call · prompt 42 tokens · completion 7\n  #1 tool_calls · 1 tool call · prompt 42 tokens (40 cached) · completion 7 · context 4,096 · budgeted 44\n      cut: settings.py: read result shortened to 2 of 40 lines\n  #2 stop"
        ),
        "{text}"
    );
    let mut none = record();
    none.model_calls.clear();
    let text = show(
        &TraceGetResult {
            trace: none,
            turn_log: None,
        },
        Palette::PLAIN,
    );
    assert!(text.contains("\nModel calls\n  none made\n"), "{text}");
}
