//! Traces for a person, pure: the list of recent turns (`talos trace`), one trace rendered as
//! sections (`talos trace show ID`: request, contract, plan and surface, each model call with
//! its tokens and what the context budget cut, each proposed call with the check or rung that
//! decided it, approvals, checkpoints, verification, commands, warnings,
//! outcome and answer) and what `talos gc` removed. Every text from the daemon passes through
//! [`printable`]; colour only where the palette allows it.

use talos_protocol::time::utc;
use talos_protocol::trace::{TraceModelCall, TraceRecord, TraceToolCall};
use talos_protocol::{CompletionStatus, DaemonGcResult, GcCount, TraceGetResult, TraceSummary};

use crate::render::{Palette, Style, printable, table, thousands};
use crate::spelling::{classification_name, decision_name, source_name, status_name};

/// The marks the daemon's turn log puts before the request and the answer.
const REQUEST_MARK: &str = "=== request (";
const ANSWER_MARK: &str = "=== answer (";

/// `talos trace`: one row per turn, newest first.
pub fn list(traces: &[TraceSummary], palette: Palette) -> String {
    if traces.is_empty() {
        return "No traces for this workspace.\n".into();
    }
    let columns: Vec<String> = ["when (UTC)", "trace", "status", "request"]
        .map(String::from)
        .to_vec();
    let rows: Vec<Vec<String>> = traces
        .iter()
        .map(|t| {
            vec![
                utc(t.started_at_ms)[..16].to_string(),
                t.trace_id.clone(),
                status_name(t.status).to_string(),
                t.request
                    .clone()
                    .unwrap_or_else(|| "(no turn log)".to_string()),
            ]
        })
        .collect();
    table(&columns, &rows, palette)
}

/// `talos trace show ID`: the sections in the order a turn ran.
pub fn show(got: &TraceGetResult, palette: Palette) -> String {
    let t = &got.trace;
    let mut out = Sections::new(palette);
    let (request, answer) = got.turn_log.as_deref().map(turn_words).unwrap_or_default();
    heading_lines(&mut out, t);
    request_section(&mut out, t, request);
    contract_section(&mut out, t);
    plan_section(&mut out, t);
    model_calls_section(&mut out, t);
    calls_section(&mut out, t);
    approvals_section(&mut out, t);
    checkpoints_section(&mut out, t);
    verification_section(&mut out, t);
    commands_and_warnings(&mut out, t);
    out.heading("Answer");
    match answer {
        Some(answer) => out.block(&answer),
        None => out.line(&format!(
            "not kept (no turn log): {} characters, {}",
            t.outcome.answer.chars, t.outcome.answer.hash
        )),
    }
    out.text
}

/// The title, when and how long, and the outcome.
fn heading_lines(out: &mut Sections, t: &TraceRecord) {
    out.title(&format!(
        "Trace {} · session {} · turn {} · {}",
        t.trace_id, t.session_id, t.turn_number, t.mode
    ));
    out.line(&format!(
        "{} · {}",
        utc(t.started_at_ms),
        duration(t.finished_at_ms.saturating_sub(t.started_at_ms))
    ));
    let palette = out.palette;
    out.raw(&outcome_line(t, palette));
}

/// The request as the turn log kept it (or its digest), and the targets it named.
fn request_section(out: &mut Sections, t: &TraceRecord, request: Option<String>) {
    out.heading("Request");
    match request {
        Some(request) => out.block(&request),
        None => out.line(&format!(
            "not kept (no turn log): {} characters, {}",
            t.request.chars, t.request.hash
        )),
    }
    if !t.request_targets.is_empty() {
        out.line(&format!("targets named: {}", t.request_targets.join(", ")));
    }
}

/// The task contract the request was resolved into.
fn contract_section(out: &mut Sections, t: &TraceRecord) {
    let c = &t.task_contract;
    out.heading("Contract");
    out.line(&format!(
        "{} · change requested {} · allowed {} · verification {}",
        c.task_type,
        yes(c.mutation_requested),
        yes(c.mutation_allowed),
        if c.verification_required {
            "required"
        } else {
            "not required"
        }
    ));
    out.list("expected", &c.expected_targets);
    out.list("evidence", &c.source_evidence_targets);
    out.list("forbidden", &c.forbidden_targets);
    out.line(&format!("why: {}", c.classification_reason));
}

/// The turn plan, the tool surface of each model call and the phase changes.
fn plan_section(out: &mut Sections, t: &TraceRecord) {
    let p = &t.turn_plan;
    out.heading("Plan and surface");
    out.line(&format!(
        "posture {} · phase {} → {} · at most {} model calls",
        p.posture, p.phase_initial, p.phase_final, p.iteration_budget
    ));
    out.line(&format!(
        "obligations: act {} · evidence {} · answer {}",
        p.action_obligation, p.evidence_obligation, p.output_obligation
    ));
    out.list("blocked tools", &p.blocked_tools);
    out.line(&format!("surface: {}", p.surface_reason));
    for s in &t.tool_surfaces {
        out.line(&format!(
            "model call {} ({}): {}",
            s.model_call,
            s.phase,
            s.tools.join(", ")
        ));
    }
    for change in &t.phase_transitions {
        out.line(&format!(
            "phase {} → {}: {}",
            change.from, change.to, change.reason
        ));
    }
}

/// Each model call with its tokens and what the context budget cut.
fn model_calls_section(out: &mut Sections, t: &TraceRecord) {
    out.heading("Model calls");
    if t.model_calls.is_empty() {
        out.line("none made");
    }
    for call in &t.model_calls {
        for line in model_call_lines(call) {
            out.line(&line);
        }
    }
}

/// Each proposed call with the check or rung that decided it.
fn calls_section(out: &mut Sections, t: &TraceRecord) {
    out.heading("Calls");
    if t.tool_calls.is_empty() {
        out.line("none proposed");
    }
    for call in &t.tool_calls {
        let palette = out.palette;
        out.raw(&call_line(call, palette));
        for detail in call_details(t, &call.call_id) {
            out.line(&format!("    {detail}"));
        }
    }
}

/// Each approval asked, how and by whom it was answered, and its diff's size.
fn approvals_section(out: &mut Sections, t: &TraceRecord) {
    out.heading("Approvals");
    if t.approvals.is_empty() {
        out.line("none asked");
    }
    for a in &t.approvals {
        out.line(&format!(
            "{} {} ({}): {} by {}, diff +{} -{}{}",
            a.call_id,
            a.tool,
            a.request_id,
            decision_name(a.decision),
            source_name(a.source),
            a.diff_added,
            a.diff_removed,
            if a.diff_truncated { ", cut" } else { "" }
        ));
    }
}

/// Each checkpoint taken before a change.
fn checkpoints_section(out: &mut Sections, t: &TraceRecord) {
    out.heading("Checkpoints");
    if t.checkpoints.is_empty() {
        out.line("none taken");
    }
    for c in &t.checkpoints {
        let id = c.checkpoint_id.as_deref().unwrap_or("-");
        let before = if c.existed_before {
            "existed before"
        } else {
            "did not exist before"
        };
        let problem = c
            .message
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        out.line(&format!(
            "{} {}: {} {id} ({before}){problem}",
            c.call_id, c.path, c.status
        ));
    }
}

/// Each verification, green when it passed.
fn verification_section(out: &mut Sections, t: &TraceRecord) {
    out.heading("Verification");
    if t.verification.is_empty() {
        out.line("nothing verified");
    }
    let palette = out.palette;
    for v in &t.verification {
        let style = if v.status == "PASS" {
            Style::Green
        } else {
            Style::Red
        };
        out.raw(&format!(
            "{} {}: {} {}",
            printable(&v.call_id),
            printable(&v.path),
            palette.paint(style, &printable(&v.status)),
            printable(&v.summary)
        ));
    }
}

/// The commands run and the warnings, each section only when it has lines.
fn commands_and_warnings(out: &mut Sections, t: &TraceRecord) {
    if !t.commands.is_empty() {
        out.heading("Commands");
        for c in &t.commands {
            let exit = c
                .exit_code
                .map_or_else(|| "no exit code".to_string(), |code| format!("exit {code}"));
            out.line(&format!(
                "{} {}: {} · {exit}{}{} · {}",
                c.call_id,
                c.profile,
                c.argv.join(" "),
                if c.timed_out { " · timed out" } else { "" },
                if c.cancelled { " · cancelled" } else { "" },
                duration(c.duration_ms)
            ));
        }
    }
    if !t.warnings.is_empty() {
        out.heading("Warnings");
        for w in &t.warnings {
            out.line(&format!("{}: {}", w.code, w.message));
        }
    }
}

/// `talos gc`: what was removed, per kind, and what is kept.
pub fn gc(result: &DaemonGcResult) -> String {
    let count =
        |name: &str, c: &GcCount| format!("{name}: {} files, {}\n", c.files, bytes(c.bytes));
    let mut text = String::from("Removed\n");
    for (name, c) in [
        ("  traces", &result.traces),
        ("  turn logs", &result.turn_logs),
        ("  checkpoints", &result.checkpoints),
        ("  checkpoint objects", &result.checkpoint_objects),
        ("  sessions", &result.sessions),
    ] {
        text.push_str(&count(name, c));
    }
    text.push_str(&format!(
        "Kept {} (limits: {} days, {})\n",
        bytes(result.bytes_after),
        result.max_age_days,
        bytes(result.max_bytes)
    ));
    if result.checkpoints_deferred {
        text.push_str(
            "Checkpoints were left alone: a turn was running. Run `talos gc` again later.\n",
        );
    }
    text
}

/// The request and the answer in a turn log's text. Each mark says how many lines follow
/// (`=== request (3 lines) ===`), so a request or answer holding a mark of its own cannot end or
/// start a section.
pub(crate) fn turn_words(log: &str) -> (Option<String>, Option<String>) {
    let mut lines = log.lines();
    let mut take = |mark: &str| -> Option<String> {
        let header = lines.by_ref().find(|line| line.starts_with(mark))?;
        let count: usize = header[mark.len()..].split(' ').next()?.parse().ok()?;
        Some(lines.by_ref().take(count).collect::<Vec<_>>().join("\n"))
    };
    let request = take(REQUEST_MARK);
    let answer = request.as_ref().and_then(|_| take(ANSWER_MARK));
    (request, answer)
}

/// `#1 tool_calls · 1 tool call · prompt 3,083 tokens (2,900 cached) · completion 37 · context
/// 4,096 · budgeted 3,050`, each count only when the trace has it (a cached count of 0 too: the
/// cache missed), then the error and each note of what the context budget cut, indented under
/// it.
fn model_call_lines(call: &TraceModelCall) -> Vec<String> {
    let mut parts = vec![format!(
        "#{} {}",
        call.index,
        if call.finish_reason.is_empty() {
            "failed"
        } else {
            &call.finish_reason
        }
    )];
    if call.tool_calls > 0 {
        let plural = if call.tool_calls == 1 { "" } else { "s" };
        parts.push(format!("{} tool call{plural}", call.tool_calls));
    }
    match (call.prompt_tokens, call.cached_tokens) {
        (Some(prompt), Some(cached)) => parts.push(format!(
            "prompt {} tokens ({} cached)",
            thousands(prompt),
            thousands(cached)
        )),
        (Some(prompt), None) => parts.push(format!("prompt {} tokens", thousands(prompt))),
        (None, Some(cached)) => parts.push(format!("cached {}", thousands(cached))),
        (None, None) => {}
    }
    let counts = [
        ("completion", call.completion_tokens),
        ("context", call.context_tokens),
        ("budgeted", call.budgeted_tokens),
    ];
    for (name, count) in counts {
        if let Some(count) = count {
            parts.push(format!("{name} {}", thousands(count)));
        }
    }
    let mut lines = vec![parts.join(" · ")];
    if let Some(error) = &call.error {
        lines.push(format!("    error: {error}"));
    }
    lines.extend(call.cut.iter().map(|note| format!("    cut: {note}")));
    lines
}

/// `call-2 talos.edit_file settings.py: executed` with the stage coloured.
fn call_line(call: &TraceToolCall, palette: Palette) -> String {
    let tool = call.tool.as_deref().unwrap_or(&call.requested_name);
    let path = call
        .path_hint
        .as_deref()
        .map(|p| format!(" {p}"))
        .unwrap_or_default();
    let style = match call.stage.as_str() {
        "executed" => Style::Green,
        "rejected" | "denied" | "failed" => Style::Red,
        _ => Style::Yellow,
    };
    let renamed = if call
        .tool
        .as_deref()
        .is_some_and(|t| t != call.requested_name)
    {
        format!(" (written as {})", call.requested_name)
    } else {
        String::new()
    };
    let line = format!("{} {tool}{path}{renamed} [{}]: ", call.call_id, call.source);
    format!(
        "{}{}",
        printable(&line),
        palette.paint(style, &printable(&call.stage))
    )
}

/// What decided a call: the check that rejected it, the ladder's rung, the approval, and how
/// it ran.
fn call_details(t: &TraceRecord, call_id: &str) -> Vec<String> {
    let mut details = Vec::new();
    if let Some(call) = t.tool_calls.iter().find(|c| c.call_id == call_id)
        && let Some(rejection) = &call.rejection
    {
        details.push(format!("check: {rejection}"));
    }
    for p in t
        .permission_decisions
        .iter()
        .filter(|p| p.call_id == call_id)
    {
        details.push(format!("ladder: {} ({})", p.action, p.reason_code));
    }
    for a in t.approvals.iter().filter(|a| a.call_id == call_id) {
        details.push(format!(
            "approval: {} by {}",
            decision_name(a.decision),
            source_name(a.source)
        ));
    }
    for e in t.executions.iter().filter(|e| e.call_id == call_id) {
        let result = if e.success { "ran" } else { "failed" };
        let error = e
            .error
            .as_deref()
            .map(|m| format!(": {m}"))
            .unwrap_or_default();
        details.push(format!("result: {result}{error}"));
    }
    details
}

fn outcome_line(t: &TraceRecord, palette: Palette) -> String {
    let o = &t.outcome;
    let style = match o.status {
        CompletionStatus::Complete => Style::Green,
        CompletionStatus::Failed => Style::Red,
        CompletionStatus::Partial
        | CompletionStatus::Blocked
        | CompletionStatus::AdvisoryOnly
        | CompletionStatus::Cancelled => Style::Yellow,
    };
    format!(
        "outcome {} ({}) · changes {} · approvals {}",
        palette.paint(style, status_name(o.status)),
        classification_name(o.classification),
        printable(&o.mutation_status),
        printable(&o.approval_status)
    )
}

/// The sections of a rendered trace: a bold heading, then indented lines.
struct Sections {
    palette: Palette,
    text: String,
}

impl Sections {
    fn new(palette: Palette) -> Sections {
        Sections {
            palette,
            text: String::new(),
        }
    }

    fn title(&mut self, title: &str) {
        let title = self.palette.paint(Style::Bold, &printable(title));
        self.text.push_str(&format!("{title}\n"));
    }

    fn heading(&mut self, heading: &str) {
        let heading = self.palette.paint(Style::Bold, heading);
        self.text.push_str(&format!("\n{heading}\n"));
    }

    fn line(&mut self, line: &str) {
        self.text.push_str(&format!("  {}\n", printable(line)));
    }

    /// A line whose daemon text is already escaped (it carries colour).
    fn raw(&mut self, line: &str) {
        self.text.push_str(&format!("  {line}\n"));
    }

    fn block(&mut self, block: &str) {
        if block.is_empty() {
            return self.line("(empty)");
        }
        for line in block.lines() {
            self.line(line);
        }
    }

    fn list(&mut self, name: &str, items: &[String]) {
        if !items.is_empty() {
            self.line(&format!("{name}: {}", items.join(", ")));
        }
    }
}

fn yes(value: bool) -> &'static str {
    if value { "yes" } else { "no" }
}

fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else {
        format!("{}.{} s", ms / 1000, ms % 1000 / 100)
    }
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / f64::from(1u32 << 30)),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1u32 << 20)),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} bytes"),
    }
}

#[cfg(test)]
#[path = "trace_view/tests.rs"]
mod tests;
