//! The deterministic viewer `auto` mode uses for structural commands (`ls`, `show FILE`):
//! no model, the same boundary and ladder as any read, output shown to the person as trusted
//! information.

use talos_core::ladder::{self, Action};
use talos_core::modes::Structural;
use talos_core::tools::ToolId;
use talos_protocol as proto;
use talos_protocol::event::TurnEvent;
use talos_protocol::trace::{TraceApproval, TraceExecution, TracePermission};

use super::context::TurnCtx;
use super::read_tools;
use crate::to_proto;

pub async fn answer(ctx: &mut TurnCtx, command: Structural) -> String {
    let (tool, raw) = match &command {
        Structural::List { path } => (ToolId::ListDir, path.clone()),
        Structural::Show { path } => (ToolId::ReadFile, path.clone()),
    };
    let call_id = ctx.next_call_id();
    let resolved = ctx.session.files.resolve(&raw);
    let decision = ladder::decide(
        &ladder::LadderInput {
            tool,
            risk: tool.risk(),
            phase: talos_core::plan::Phase::Inspect,
            rules: &ctx.daemon.rules,
            grants: ctx.session.grants(),
        },
        &resolved.facts,
    );
    ctx.trace.permission_decisions.push(TracePermission {
        call_id: call_id.clone(),
        tool: tool.name().into(),
        action: decision.action.as_str().into(),
        reason_code: decision.reason_code.into(),
        relative_path: resolved.facts.relative.clone(),
        remember_eligible: false,
    });
    match decision.action {
        Action::Deny => {
            ctx.facts.read_blocked = true;
            let problem = resolved.facts.problem.clone().unwrap_or_default();
            return format!("{} ({problem})", decision.message);
        }
        Action::Ask => {
            let params = proto::ApprovalRequestParams {
                turn_id: ctx.turn_id.clone(),
                session_id: ctx.session.id.clone(),
                request_id: crate::ids::new_id("apr"),
                tool: tool.name().into(),
                description: format!("protected read: {}", tool.name()),
                target: resolved.facts.relative.clone(),
                details: vec![
                    format!("permission: {}", decision.message),
                    "shown to you only; no model is involved".into(),
                ],
                diff: None,
                remember_eligible: false,
            };
            let request_id = params.request_id.clone();
            let (answer, source) = ctx.ask(params).await;
            ctx.trace.approvals.push(TraceApproval {
                request_id,
                call_id: call_id.clone(),
                tool: tool.name().into(),
                decision: answer,
                source,
                diff_added: 0,
                diff_removed: 0,
                diff_truncated: false,
            });
            if answer == proto::Decision::Deny {
                ctx.facts.read_denied = true;
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
        Structural::List { .. } => {
            read_tools::list_dir(&ctx.session.files, &resolved, &shown, 1, 500)
        }
        Structural::Show { .. } => {
            read_tools::read_file(&ctx.session.files, &resolved, &shown, 2000, 1)
        }
    };
    let (success, text) = match output {
        Ok(text) => (true, text),
        Err(e) => (false, e.to_string()),
    };
    if !success {
        ctx.facts.read_blocked = true;
    }
    ctx.trace.executions.push(TraceExecution {
        call_id,
        tool: tool.name().into(),
        success,
        path: Some(shown.clone()),
        output: to_proto::text_digest(&text),
        sha256_after: None,
        error: None,
    });
    ctx.emit(TurnEvent::TrustedInfo {
        text: format!("{} {shown}", tool.name()),
    })
    .await;
    ctx.read_paths.push(shown);
    text
}
