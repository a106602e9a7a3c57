//! Hooks that can only narrow (issue 28). A `pre_call` hook is told each proposed call, after
//! the ladder has decided it, and answers one JSON object: `{"decision": "allow" | "ask" |
//! "deny", "reason": "..."}`. `deny` denies the call; `ask` makes an allowed call ask the
//! person (and never be answered by a remembered grant); `allow` leaves the ladder's decision
//! as it is, so it never skips an ask. A hook that crashes, times out, exits non-zero or says
//! anything else denies: hooks fail closed. A `post_turn` hook is told the outcome and cannot
//! change it. The daemon runs the programs; what their answers mean is decided here.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::proposal::ladder::{Action, PermissionDecision, ReasonCode};

/// What the daemon reports of one hook's run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookRun {
    /// It exited 0; its standard output (capped).
    Exited(Vec<u8>),
    /// It could not be started, exited non-zero, was killed, or ran past `hooks.timeout_secs`.
    Failed(String),
}

/// One hook's verdict on one call, as the trace keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookVerdict {
    /// The hook's place in `hooks.pre_call`.
    pub hook: usize,
    pub decision: Action,
    pub reason: String,
    /// Why the hook's answer was not used and the call denied (crash, timeout, bad output).
    pub problem: Option<String>,
}

/// One hook's run for the trace: its verdict on a call, or what a `post_turn` hook did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRecord {
    /// `pre_call` or `post_turn`.
    pub event: &'static str,
    /// The call it was asked about (`pre_call` only).
    pub call_id: Option<String>,
    pub hook: usize,
    /// `allow`, `ask` or `deny` for `pre_call`; `told` (or `failed`) for `post_turn`.
    pub decision: String,
    pub reason: String,
    pub problem: Option<String>,
}

/// What a `pre_call` hook is told on its standard input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProposedCall<'a> {
    pub call_id: &'a str,
    /// The tool as resolved (`talos.edit_file`, `mcp.fs.read_file`).
    pub tool: &'a str,
    pub arguments: &'a BTreeMap<String, String>,
    /// The workspace-relative target, when the call has one.
    pub target: Option<&'a str>,
    pub ladder: &'a PermissionDecision,
}

impl ProposedCall<'_> {
    /// The JSON object written to the hook's standard input.
    pub fn to_json(&self) -> Value {
        json!({
            "event": "pre_call",
            "callId": self.call_id,
            "tool": self.tool,
            "arguments": self.arguments,
            "target": self.target,
            "ladder": {
                "action": self.ladder.action.as_str(),
                "reasonCode": self.ladder.reason_code.as_str(),
            },
        })
    }
}

/// The largest answer a hook may give.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The verdict of hook `hook` from its run: its answer when it is exactly one JSON object
/// with a known `decision`, else a denial that says why.
pub fn verdict(hook: usize, run: &HookRun) -> HookVerdict {
    let denied = |problem: String| HookVerdict {
        hook,
        decision: Action::Deny,
        reason: String::new(),
        problem: Some(problem),
    };
    let bytes = match run {
        HookRun::Exited(bytes) => bytes,
        HookRun::Failed(problem) => return denied(problem.clone()),
    };
    if bytes.len() > MAX_ANSWER_BYTES {
        return denied(format!("answered more than {MAX_ANSWER_BYTES} bytes"));
    }
    let Ok(text) = std::str::from_utf8(bytes) else {
        return denied("answered with bytes that are not UTF-8".into());
    };
    let answer: Value = match serde_json::from_str(text.trim()) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => return denied("answered JSON that is not an object".into()),
        Err(e) => {
            return denied(format!(
                "answered something that is not one JSON object ({e})"
            ));
        }
    };
    let decision = match answer.get("decision").and_then(Value::as_str) {
        Some("allow") => Action::Allow,
        Some("ask") => Action::Ask,
        Some("deny") => Action::Deny,
        Some(other) => {
            let shown =
                crate::text::deceptive::escaped(&other.chars().take(40).collect::<String>());
            return denied(format!("answered an unknown decision `{shown}`"));
        }
        None => return denied("answered without a `decision`".into()),
    };
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .map(|r| crate::text::deceptive::escaped(&r.chars().take(300).collect::<String>()))
        .unwrap_or_default();
    HookVerdict {
        hook,
        decision,
        reason,
        problem: None,
    }
}

/// The verdicts of the `expected` hooks from the runs the daemon reported: a hook it did not
/// report on is a hook that did not allow.
pub fn verdicts(runs: &[HookRun], expected: usize) -> Vec<HookVerdict> {
    let missing = HookRun::Failed("no answer was reported".into());
    (0..expected)
        .map(|i| verdict(i, runs.get(i).unwrap_or(&missing)))
        .collect()
}

/// The ladder's decision narrowed by the hooks' verdicts: any deny denies, else any ask on an
/// allowed call asks (never remembered); `allow` changes nothing.
pub fn narrow(ladder: PermissionDecision, verdicts: &[HookVerdict]) -> PermissionDecision {
    if ladder.action == Action::Deny {
        return ladder;
    }
    if let Some(v) = verdicts.iter().find(|v| v.decision == Action::Deny) {
        let why = v
            .problem
            .as_ref()
            .map(|p| format!("hooks.pre_call[{}] failed, which denies: {p}", v.hook))
            .unwrap_or_else(|| format!("hooks.pre_call[{}] denied: {}", v.hook, shown(v)));
        return PermissionDecision {
            action: Action::Deny,
            reason_code: ReasonCode::HookDeny,
            message: why,
            remember_eligible: false,
        };
    }
    if let Some(v) = verdicts.iter().find(|v| v.decision == Action::Ask) {
        let message = format!("hooks.pre_call[{}] asks: {}", v.hook, shown(v));
        return PermissionDecision {
            action: Action::Ask,
            reason_code: if ladder.action == Action::Ask {
                ladder.reason_code
            } else {
                ReasonCode::HookAsk
            },
            message: if ladder.action == Action::Ask {
                format!("{} ({message})", ladder.message)
            } else {
                message
            },
            remember_eligible: false,
        };
    }
    ladder
}

fn shown(v: &HookVerdict) -> &str {
    if v.reason.is_empty() {
        "no reason given"
    } else {
        &v.reason
    }
}

impl HookVerdict {
    /// The verdict as the trace keeps it.
    pub fn record(&self, call_id: &str) -> HookRecord {
        HookRecord {
            event: "pre_call",
            call_id: Some(call_id.to_string()),
            hook: self.hook,
            decision: self.decision.as_str().to_string(),
            reason: self.reason.clone(),
            problem: self.problem.clone(),
        }
    }
}

/// What a `post_turn` hook's run is recorded as: it was told, or it failed (which changes
/// nothing about the turn).
pub fn post_turn_record(hook: usize, run: &HookRun) -> HookRecord {
    let (decision, problem) = match run {
        HookRun::Exited(_) => ("told", None),
        HookRun::Failed(problem) => ("failed", Some(problem.clone())),
    };
    HookRecord {
        event: "post_turn",
        call_id: None,
        hook,
        decision: decision.into(),
        reason: String::new(),
        problem,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ladder(action: Action, code: ReasonCode) -> PermissionDecision {
        PermissionDecision {
            action,
            reason_code: code,
            message: "ladder".into(),
            remember_eligible: true,
        }
    }

    fn run(text: &str) -> HookRun {
        HookRun::Exited(text.as_bytes().to_vec())
    }

    /// Every way a hook can answer, and what it comes to.
    #[test]
    fn a_hook_that_does_not_answer_exactly_denies() {
        let rows: [(HookRun, Action, Option<&str>); 10] = [
            (run(r#"{"decision":"allow"}"#), Action::Allow, None),
            (run(r#"{"decision":"ask","reason":"r"}"#), Action::Ask, None),
            (run("  {\"decision\":\"deny\"}\n"), Action::Deny, None),
            (
                run(r#"{"decision":"ALLOW"}"#),
                Action::Deny,
                Some("unknown decision"),
            ),
            (
                run(r#"{"reason":"x"}"#),
                Action::Deny,
                Some("without a `decision`"),
            ),
            (run("allow"), Action::Deny, Some("not one JSON object")),
            (run(r#"["allow"]"#), Action::Deny, Some("not an object")),
            (
                run(r#"{"decision":"allow"}{"decision":"allow"}"#),
                Action::Deny,
                Some("not one JSON object"),
            ),
            (HookRun::Exited(vec![0xff]), Action::Deny, Some("not UTF-8")),
            (
                HookRun::Failed("timed out after 5 s".into()),
                Action::Deny,
                Some("timed out"),
            ),
        ];
        for (input, action, problem) in rows {
            let v = verdict(0, &input);
            assert_eq!(v.decision, action, "{input:?}");
            match problem {
                Some(p) => assert!(v.problem.as_deref().is_some_and(|x| x.contains(p)), "{v:?}"),
                None => assert_eq!(v.problem, None, "{v:?}"),
            }
        }
        let huge = HookRun::Exited(vec![b' '; MAX_ANSWER_BYTES + 1]);
        assert_eq!(verdict(0, &huge).decision, Action::Deny);
    }

    /// The table of narrowing: a hook never widens, whatever it says.
    #[test]
    fn hooks_only_narrow_the_ladder() {
        use Action::{Allow, Ask, Deny};
        let v = |decision| HookVerdict {
            hook: 0,
            decision,
            reason: "because".into(),
            problem: None,
        };
        let rows = [
            (Allow, vec![v(Allow)], Allow, ReasonCode::DefaultReadAllow),
            (Ask, vec![v(Allow)], Ask, ReasonCode::DefaultWriteAsk),
            (Deny, vec![v(Allow)], Deny, ReasonCode::DefaultWriteAsk),
            (Allow, vec![v(Ask)], Ask, ReasonCode::HookAsk),
            (Ask, vec![v(Ask)], Ask, ReasonCode::DefaultWriteAsk),
            (Allow, vec![v(Allow), v(Deny)], Deny, ReasonCode::HookDeny),
            (Ask, vec![v(Ask), v(Deny)], Deny, ReasonCode::HookDeny),
            (Allow, vec![], Allow, ReasonCode::DefaultReadAllow),
        ];
        for (start, verdicts, action, code) in rows {
            let base = match start {
                Allow => ladder(Allow, ReasonCode::DefaultReadAllow),
                _ => ladder(start, ReasonCode::DefaultWriteAsk),
            };
            let narrowed = narrow(base, &verdicts);
            assert_eq!(narrowed.action, action, "{start:?} {verdicts:?}");
            assert_eq!(narrowed.reason_code, code, "{start:?} {verdicts:?}");
            if !verdicts.iter().all(|v| v.decision == Allow) && start != Deny {
                assert!(
                    !narrowed.remember_eligible,
                    "a hook's ask is never remembered"
                );
            }
        }
    }

    #[test]
    fn the_hook_is_told_the_call_and_the_ladders_decision() {
        let args = BTreeMap::from([("path".to_string(), "a.txt".to_string())]);
        let decision = ladder(Action::Ask, ReasonCode::DefaultWriteAsk);
        let told = ProposedCall {
            call_id: "call-1",
            tool: "talos.write_file",
            arguments: &args,
            target: Some("a.txt"),
            ladder: &decision,
        }
        .to_json();
        assert_eq!(told["event"], "pre_call");
        assert_eq!(told["arguments"]["path"], "a.txt");
        assert_eq!(told["ladder"]["action"], "ask");
        assert_eq!(told["ladder"]["reasonCode"], "DEFAULT_WRITE_ASK");
    }
}
