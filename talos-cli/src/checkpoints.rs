//! `talos checkpoints`, `talos checkpoint show ID`, `talos restore ID` and `talos undo`: the
//! checkpoints of a workspace, one checkpoint against the disk now, and restores. A restore is
//! approved in the terminal like any change (the prompt of `talos run`); the daemon decides and
//! performs it.

use crate::turn::Asker;
use serde_json::{Value, json};
use talos_protocol::time::utc;
use talos_protocol::{
    APPROVAL_REQUEST, ApprovalRequestParams, ApprovalResult, CHECKPOINT_LIST, CHECKPOINT_RESTORE,
    CHECKPOINT_SHOW, CheckpointListResult, CheckpointShowResult, Decision, ErrorCode, Message,
    Mode, RestoreOutcome, RestoreResult, RpcError, TURN_UNDO,
};

use crate::client::{Client, ignore_messages, params, refuse_request};
use crate::failure::Failure;
use crate::render::{Output, Style, colour_diff, printable, table};

/// `talos checkpoints [--workspace DIR]`.
pub fn list(
    client: &mut Client,
    workspace: &str,
    json: bool,
    output: &Output,
) -> Result<(), Failure> {
    let raw = client.call(
        CHECKPOINT_LIST,
        json!({ "workspace": workspace }),
        &mut ignore_messages,
    )?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let listed: CheckpointListResult =
        serde_json::from_value(raw).map_err(|e| invalid(CHECKPOINT_LIST, e))?;
    if listed.checkpoints.is_empty() {
        return output.out(&format!(
            "no checkpoints for {}\n",
            printable(&listed.workspace)
        ));
    }
    let columns = [
        "ID",
        "TIME (UTC)",
        "TURN",
        "TRIGGER",
        "FILES",
        "BYTES",
        "PATHS",
    ]
    .map(String::from);
    let rows: Vec<Vec<String>> = listed
        .checkpoints
        .iter()
        .map(|c| {
            vec![
                c.checkpoint_id.clone(),
                utc(c.created_at_ms),
                c.turn_id.clone(),
                c.trigger.clone(),
                c.files.to_string(),
                c.bytes.to_string(),
                printable(&shorten(&c.paths.join(", "))).into_owned(),
            ]
        })
        .collect();
    let mut text = table(&columns, &rows, output.stdout_palette);
    text.push_str("restore one with: talos restore ID; undo the last turn with: talos undo\n");
    output.out(&text)
}

/// `talos checkpoint show ID`.
pub fn show(client: &mut Client, id: &str, json: bool, output: &Output) -> Result<(), Failure> {
    let raw = client.call(
        CHECKPOINT_SHOW,
        json!({ "checkpointId": id }),
        &mut ignore_messages,
    )?;
    if json {
        return output.out(&format!("{raw}\n"));
    }
    let shown: CheckpointShowResult =
        serde_json::from_value(raw).map_err(|e| invalid(CHECKPOINT_SHOW, e))?;
    let c = &shown.checkpoint;
    let palette = output.stdout_palette;
    let mut text = format!(
        "{}\n  workspace: {}\n  taken: {} by {} in {}\n",
        palette.paint(Style::Bold, &format!("checkpoint {}", c.checkpoint_id)),
        printable(&shown.workspace),
        utc(c.created_at_ms),
        c.trigger,
        c.turn_id
    );
    for file in &shown.files {
        let conflict = if file.conflict {
            "  CONFLICT: changed by someone else since"
        } else {
            ""
        };
        text.push_str(&format!(
            "  {}: captured {}, now {}; a restore would: {}{conflict}\n",
            printable(&file.path),
            file.captured,
            file.current,
            action_name(file.action)
        ));
        if let Some(diff) = &file.diff {
            text.push_str(&format!(
                "    diff from now to the captured version (+{} -{}){}\n",
                diff.added,
                diff.removed,
                if diff.truncated { ", cut" } else { "" }
            ));
            text.push_str(&colour_diff(&diff.text, palette, "    "));
        }
    }
    output.out(&text)
}

/// `talos restore ID`: the result's exit code (0 restored, 1 denied or a path failed).
pub fn restore(
    client: &mut Client,
    id: &str,
    overwrite_conflicts: bool,
    json: bool,
    output: &Output,
    ask: Asker<'_>,
) -> Result<u8, Failure> {
    let raw = client.call(
        CHECKPOINT_RESTORE,
        json!({ "checkpointId": id, "overwriteConflicts": overwrite_conflicts }),
        &mut |m| answer_approval(m, output, ask),
    )?;
    finish(CHECKPOINT_RESTORE, raw, json, output)
}

/// `talos undo [--workspace DIR]`: undoes the last changing turn of the workspace's session
/// (the `agent` session first, as `talos run` uses it).
pub fn undo(
    client: &mut Client,
    workspace: &str,
    overwrite_conflicts: bool,
    json: bool,
    output: &Output,
) -> Result<u8, Failure> {
    let mut sessions = crate::sessions::on_workspace(client, workspace, None)?;
    sessions.sort_by_key(|s| s.mode != Mode::Agent);
    for session in &sessions {
        match undo_session(
            client,
            &session.session_id,
            overwrite_conflicts,
            json,
            output,
            &mut crate::approval::ask,
        ) {
            Err(Failure::Rpc(RpcError { code, .. })) if code == ErrorCode::InvalidParams.code() => {
            }
            done => return done,
        }
    }
    Err(Failure::Usage(format!(
        "nothing to undo: no session on {} has a turn that changed files (see talos checkpoints, then talos restore ID)",
        printable(workspace)
    )))
}

/// `turn/undo` for one session (an interactive session's `/undo` names its own): the exit
/// code as for `talos restore`; "nothing left to undo" is `-32602`.
pub fn undo_session(
    client: &mut Client,
    session_id: &str,
    overwrite_conflicts: bool,
    json: bool,
    output: &Output,
    ask: Asker<'_>,
) -> Result<u8, Failure> {
    let raw = client.call(
        TURN_UNDO,
        json!({ "sessionId": session_id, "overwriteConflicts": overwrite_conflicts }),
        &mut |m| answer_approval(m, output, ask),
    )?;
    finish(TURN_UNDO, raw, json, output)
}

fn finish(method: &str, raw: Value, json: bool, output: &Output) -> Result<u8, Failure> {
    let result: RestoreResult =
        serde_json::from_value(raw.clone()).map_err(|e| invalid(method, e))?;
    let failed = result.decision == Some(Decision::Deny)
        || result
            .files
            .iter()
            .any(|f| f.outcome == RestoreOutcome::Failed);
    if json {
        output.out(&format!("{raw}\n"))?;
    } else {
        let mut text = String::new();
        for file in &result.files {
            let outcome = match file.outcome {
                RestoreOutcome::Done => "done",
                RestoreOutcome::NotDone => "not done",
                RestoreOutcome::Failed => "FAILED",
            };
            text.push_str(&format!(
                "  {}: {} ({outcome}){}{}\n",
                printable(&file.path),
                action_name(file.action),
                if file.conflict { ", conflict" } else { "" },
                file.message
                    .as_deref()
                    .map(|m| format!(": {}", printable(m)))
                    .unwrap_or_default()
            ));
        }
        text.push_str(&format!("{}\n", printable(&result.message)));
        output.out(&text)?;
    }
    Ok(u8::from(failed))
}

/// Answers the daemon's `approval/request` with the terminal prompt; anything else is refused.
fn answer_approval(
    message: Message,
    output: &Output,
    ask: Asker<'_>,
) -> Result<Option<Message>, Failure> {
    if message.method.as_deref() != Some(APPROVAL_REQUEST) {
        return Ok(refuse_request(&message));
    }
    let Some(id) = message.id.clone() else {
        return Ok(None);
    };
    let decision = match serde_json::from_value::<ApprovalRequestParams>(
        message.params.unwrap_or(Value::Null),
    ) {
        Ok(request) => ask(&request, output),
        Err(_) => Decision::Deny,
    };
    Ok(Some(Message::response(
        id,
        params(serde_json::to_value(ApprovalResult { decision })),
    )))
}

fn action_name(action: talos_protocol::RestoreAction) -> &'static str {
    use talos_protocol::RestoreAction as A;
    match action {
        A::Restore => "restore the captured bytes",
        A::Delete => "delete (did not exist before)",
        A::Directory => "make the directory",
        A::Unchanged => "nothing (already as captured)",
        A::SkipConflict => "keep (conflict)",
        A::Refuse => "refuse (unsafe path)",
    }
}

fn invalid(method: &str, e: serde_json::Error) -> Failure {
    Failure::Connection(format!("invalid {method} result: {e}"))
}

fn shorten(text: &str) -> String {
    const MAX: usize = 60;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX - 3).collect();
    format!("{cut}...")
}
