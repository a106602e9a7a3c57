//! The deterministic viewer `auto` mode uses for structural commands (`ls`, `show FILE`):
//! no model, the same boundary and ladder as any read, output shown to the person as trusted
//! information.

use talos_core::ladder::Action;
use talos_core::modes::Structural;
use talos_core::tools::ToolId;
use talos_core::turn::call::ApprovalAsk;
use talos_core::turn::record::{ApprovalRecord, Decision};
use talos_protocol::event::TurnEvent;

use super::context::TurnCtx;
use super::read_tools;

pub async fn answer(ctx: &mut TurnCtx, command: Structural) -> String {
    let (tool, raw) = match &command {
        Structural::List { path } => (ToolId::ListDir, path.clone()),
        Structural::Show { path } => (ToolId::ReadFile, path.clone()),
    };
    let call_id = ctx.core.next_call_id();
    let workspace = ctx.session.files.clone();
    let resolved = workspace.resolve(&raw);
    let decision = ctx.core.viewer_permission(&call_id, tool, &resolved.facts);
    match decision.action {
        Action::Deny => {
            ctx.core.record.facts.read_blocked = true;
            let problem = resolved.facts.problem.clone().unwrap_or_default();
            return format!("{} ({problem})", decision.message);
        }
        Action::Ask => {
            let ask = ApprovalAsk {
                tool,
                description: format!("protected read: {}", tool.name()),
                target: resolved.facts.relative.clone(),
                details: vec![
                    format!("permission: {}", decision.message),
                    "shown to you only; no model is involved".into(),
                ],
                diff: None,
                remember_eligible: false,
            };
            let (request_id, answer) = ctx.ask_for(ask).await;
            ctx.core.record.approvals.push(ApprovalRecord {
                request_id,
                call_id: call_id.clone(),
                tool,
                answer,
                diff_added: 0,
                diff_removed: 0,
                diff_truncated: false,
            });
            if answer.decision == Decision::Deny {
                ctx.core.record.facts.read_denied = true;
                return format!("Not shown: reading {raw} was not approved.");
            }
        }
        Action::Allow => {}
    }
    let shown = resolved
        .facts
        .relative
        .clone()
        .unwrap_or_else(|| raw.clone());
    let output = match command {
        Structural::List { .. } => read_tools::list_dir(&workspace, &resolved, &shown, 1, 500),
        Structural::Show { .. } => read_tools::read_file(&workspace, &resolved, &shown, 2000, 1),
    };
    let (success, text) = match output {
        Ok(text) => (true, text),
        Err(e) => (false, e.to_string()),
    };
    if !success {
        ctx.core.record.facts.read_blocked = true;
    }
    ctx.core
        .record
        .execution(&call_id, tool, success, Some(shown.clone()), &text);
    ctx.emit(TurnEvent::TrustedInfo {
        text: format!("{} {shown}", tool.name()),
    })
    .await;
    ctx.core.record.read_paths.push(shown);
    text
}
