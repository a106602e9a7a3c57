//! Issue 15's effects: the runtime's own reads of small expected targets before the first
//! model call on the strict level (through the same call machine as `talos.read_file`: checks, protection, the
//! ladder, the trace, read-before-write), the facts the constraint needs (which named files
//! exist, their text as read), and the schema each request carries. What the schema admits
//! is decided by `talos_core::constrain`; the checks that follow every reply are unchanged.

use std::collections::BTreeMap;

use serde_json::{Value, json};
use talos_core::constrain::{self, Level, Step};
use talos_core::plan::ActionObligation;
use talos_core::surface::Surface;
use talos_core::tools::ToolId;
use talos_core::turn::call::Proposal;
use talos_core::turn::model;

use super::context::TurnCtx;
use super::{calls, effects};

/// What the constraint knows besides the plan.
#[derive(Debug, Default)]
pub struct Aid {
    pub level: Option<Level>,
    /// Named files that exist (expected and evidence targets).
    pub readable: Vec<String>,
    /// Files and their text as this turn read them.
    pub read_texts: Vec<(String, String)>,
    /// The last request carried a schema: a reply that is exactly `{"answer": …}` can only
    /// be its answer variant, and is read as prose.
    pub constrained: bool,
}

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
    let mut sizes: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for path in named {
        if aid.readable.contains(&path) {
            continue;
        }
        let workspace = ctx.session.files.clone();
        let shown = path.clone();
        let current =
            tokio::task::spawn_blocking(move || effects::read_current(&workspace, &shown)).await;
        if let Ok(Ok(Some(bytes))) = current {
            aid.readable.push(path.clone());
            sizes.insert(path, bytes);
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
        let Some(bytes) = sizes.get(path) else {
            continue;
        };
        let Ok(text) = std::str::from_utf8(bytes) else {
            continue;
        };
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > cap {
            continue;
        }
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
            aid.read_texts.push((path.clone(), text.to_string()));
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
