//! Issue 15's effects: the runtime's own reads of small expected targets before the first
//! model call on the strict level (through the same call machine as `talos.read_file`: checks, protection, the
//! ladder, the trace, read-before-write), the facts the constraint needs (which named files
//! exist, their text as read), and the schema each request carries. What the schema admits
//! is decided by `talos_core::constrain`; the checks that follow every reply are unchanged.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use talos_core::constrain::{self, Level, Step};
use talos_core::plan::ActionObligation;
use talos_core::protected::protected_kind;
use talos_core::surface::Surface;
use talos_core::tools::ToolId;
use talos_core::turn::call::Proposal;
use talos_core::turn::model;

use super::calls;
use super::context::TurnCtx;
use super::conversation::Aid;
use crate::workspace::{EntryKind, Workspace};

/// Gathers the facts and, on a change turn, reads the small expected targets itself; the
/// reads' results go into `messages` just before the request (the last message).
pub async fn prepare(ctx: &mut TurnCtx, messages: &mut Vec<Value>) -> Aid {
    let level = ctx.daemon.config.model.constrain_level();
    let mut aid = Aid {
        level: Some(level),
        ..Aid::default()
    };
    let contract = ctx.core.plan.contract().clone();
    let named: Vec<String> = contract
        .expected_targets
        .iter()
        .chain(contract.source_evidence_targets.iter())
        .cloned()
        .collect();
    for path in named {
        if aid.readable.contains(&path) {
            continue;
        }
        let workspace = ctx.session.files.clone();
        let shown = path.clone();
        let file = tokio::task::spawn_blocking(move || is_file(&workspace, &shown)).await;
        if file.unwrap_or(false) {
            aid.readable.push(path);
        }
    }
    let cap = ctx.daemon.config.turn.preread_max_bytes;
    let change_turn = contract.mutation_allowed
        && ctx.core.plan.obligation() == ActionObligation::MutatingToolRequired
        && ctx.core.surface().allows(ToolId::ReadFile);
    // The pre-read goes with the strict level (the managed small model's default): its text
    // is what strict offers as `old_string`. A `names` or `off` turn reads as before.
    if !change_turn || cap == 0 || level != Level::Strict {
        return aid;
    }
    let request = messages.pop();
    for path in &contract.expected_targets {
        // A protected path is never pre-read (the read's own checks would ask for it).
        if !aid.readable.contains(path) || protected_kind(path).is_some() {
            continue;
        }
        let workspace = ctx.session.files.clone();
        let shown = path.clone();
        let small = tokio::task::spawn_blocking(move || read_small(&workspace, &shown, cap)).await;
        let Ok(Some(text)) = small else {
            continue;
        };
        let mut args = BTreeMap::new();
        args.insert("path".to_string(), path.clone());
        let proposal = Proposal {
            native_id: String::new(),
            name: ToolId::ReadFile.name().into(),
            args: Ok(args),
            source: "runtime",
        };
        let report = calls::dispatch(ctx, proposal).await;
        if !report.text.starts_with("[error]") && ctx.core.record.read_paths.contains(path) {
            aid.read_texts.push((path.clone(), text));
            let wrapped = model::tool_result_message(ToolId::ReadFile.name(), &report, false);
            messages.push(json!({
                "role": "user",
                "content": format!("Talos read {path} for you before your first reply:\n{wrapped}"),
            }));
        }
    }
    messages.extend(request);
    aid
}

/// Whether `shown` is a regular file inside the workspace (a symlink in the last place is not).
fn is_file(workspace: &Workspace, shown: &str) -> bool {
    workspace
        .resolve(shown)
        .location
        .is_some_and(|location| matches!(workspace.kind(&location), Ok(Some(EntryKind::File))))
}

/// The file's text when it is UTF-8 and at most `cap` bytes; read through the workspace
/// handle, as every workspace read is.
fn read_small(workspace: &Workspace, shown: &str, cap: u64) -> Option<String> {
    let location = workspace.resolve(shown).location?;
    let bytes = workspace.read_limited(&location, shown, cap).ok()??;
    String::from_utf8(bytes).ok()
}

/// The schema for model call `index`, or `None` (level `off`, or nothing to constrain).
pub fn schema(ctx: &TurnCtx, aid: &mut Aid, surface: &Surface) -> Option<Value> {
    let level = aid.level?;
    let contract = ctx.core.plan.contract();
    let answer_allowed = ctx.core.answer_allowed();
    let step = Step {
        tools: surface.tools(),
        phase: ctx.core.phase,
        mutation_allowed: contract.mutation_allowed,
        expected: &contract.expected_targets,
        forbidden: &contract.forbidden_targets,
        readable: &aid.readable,
        read_texts: &aid.read_texts,
        answer_allowed,
    };
    let schema = constrain::compile(level, &step);
    aid.constrained = schema.is_some();
    schema
}

/// The reply's text as the loop reads it: the prose of a constrained `{"answer": …}`.
pub fn reply_text(aid: &Aid, content: &str) -> String {
    if aid.constrained
        && let Some(answer) = constrain::unwrap_answer(content)
    {
        return answer;
    }
    content.to_string()
}
