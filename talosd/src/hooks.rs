//! Runs the configured hooks (issue 28): each `{command: [argv...]}` as an argument list, never
//! through a shell, in its own process group, with the command allow-list's environment, the
//! workspace root as its working directory, the JSON it is told on standard input and its
//! standard output captured (capped); past `hooks.timeout_secs` the whole group is killed.
//! What a hook's answer means is `talos_core::hooks`'s; this module only reports how each
//! run ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use talos_core::hooks::{self, HookRecord, HookRun};
use tokio_util::sync::CancellationToken;

use crate::config::{HookConfig, HooksConfig};
use crate::runner::InputBounds;

/// Why a hook was stopped before its time: its turn was cancelled (`pre_call`), or talosd is
/// stopping.
const STOPPED: &str = "stopped: the turn was cancelled or talosd is stopping";

/// Asks each `pre_call` hook about one call: `told` (the core's account of the call) with the
/// session, the turn and the workspace added.
pub async fn pre_call(
    config: &HooksConfig,
    workspace: &Path,
    (session_id, turn_id): (&str, &str),
    mut told: Value,
    cancel: &CancellationToken,
) -> Vec<HookRun> {
    if let Some(object) = told.as_object_mut() {
        object.insert("sessionId".into(), session_id.into());
        object.insert("turnId".into(), turn_id.into());
        object.insert("workspace".into(), workspace.display().to_string().into());
    }
    run_all(config, &config.pre_call, (workspace, cancel), &told).await
}

/// Runs each hook in turn with `told` on its standard input; one run per hook, in order. When
/// `cancel` fires, the running hook's group is killed at once and the rest are not started.
pub async fn run_all(
    config: &HooksConfig,
    hooks: &[HookConfig],
    (workspace, cancel): (&Path, &CancellationToken),
    told: &Value,
) -> Vec<HookRun> {
    let input = serde_json::to_vec(told).unwrap_or_default();
    let mut runs = Vec::with_capacity(hooks.len());
    for hook in hooks {
        if cancel.is_cancelled() {
            runs.push(HookRun::Failed(format!("not run: {STOPPED}")));
            continue;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let bounds = InputBounds {
            limit: Duration::from_secs(config.timeout_secs),
            stdout_cap: hooks::MAX_ANSWER_BYTES as u64 + 1,
            stop: Some(stop.clone()),
        };
        let (argv, cwd, input) = (hook.command.clone(), workspace.to_path_buf(), input.clone());
        let mut task = tokio::task::spawn_blocking(move || run_one(&argv, &cwd, input, &bounds));
        let joined = tokio::select! {
            joined = &mut task => joined,
            () = cancel.cancelled() => {
                // The blocking run looks at the flag every few milliseconds, kills the
                // group and returns; it is awaited so no hook outlives the call.
                stop.store(true, Ordering::Relaxed);
                task.await
            }
        };
        runs.push(
            joined.unwrap_or_else(|e| {
                HookRun::Failed(format!("internal: the hook task failed ({e})"))
            }),
        );
    }
    runs
}

/// What a `post_turn` hook is told: the outcome as `turn/start` answers it (the answer's
/// text included), with the session and workspace.
pub fn told_outcome(
    session_id: &str,
    workspace: &Path,
    outcome: &talos_protocol::TurnOutcome,
) -> Value {
    serde_json::json!({
        "event": "post_turn",
        "sessionId": session_id,
        "workspace": workspace.display().to_string(),
        "outcome": outcome,
    })
}

/// Tells each `post_turn` hook the outcome; what each run did, for the trace. A cancelled
/// turn's outcome is still told, so only `stopping` (the daemon's) stops these hooks.
pub async fn post_turn(
    config: &HooksConfig,
    (workspace, stopping): (&Path, &CancellationToken),
    told: &Value,
) -> Vec<HookRecord> {
    if config.post_turn.is_empty() {
        return Vec::new();
    }
    run_all(config, &config.post_turn, (workspace, stopping), told)
        .await
        .iter()
        .enumerate()
        .map(|(i, run)| hooks::post_turn_record(i, run))
        .collect()
}

fn run_one(argv: &[String], cwd: &Path, input: Vec<u8>, bounds: &InputBounds) -> HookRun {
    let Some((program, args)) = argv.split_first() else {
        return HookRun::Failed("the hook names no program".into());
    };
    let Some(program) = locate(program) else {
        return HookRun::Failed(format!(
            "cannot start {program}: a hook program is a full path or a name on talosd's PATH"
        ));
    };
    let env = crate::runner::allowed_env();
    let ran = crate::runner::run_with_input_in_dir(&program, args, &env, Some(cwd), input, bounds);
    match ran {
        Err(e) => HookRun::Failed(format!("cannot start {}: {e}", program.display())),
        Ok(run) if run.timed_out => HookRun::Failed(format!(
            "timed out after {} s (hooks.timeout_secs)",
            bounds.limit.as_secs()
        )),
        Ok(run) if run.stopped => HookRun::Failed(STOPPED.into()),
        Ok(run) => match run.code {
            Some(0) => HookRun::Exited(run.stdout),
            Some(code) => HookRun::Failed(format!("exited with status {code}")),
            None => HookRun::Failed("was killed by a signal".into()),
        },
    }
}

/// A program named without a folder is looked for in the absolute folders of talosd's `PATH`,
/// as a shell would not be asked to. A relative path is never taken from the workspace: the
/// configuration refuses one (`HooksConfig::problem`), since it would run whichever file
/// each workspace holds under that name.
fn locate(program: &str) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.is_absolute() {
        return Some(path.to_path_buf());
    }
    if program.contains('/') {
        return None;
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(program))
        .find(|candidate| crate::runner::is_executable(candidate))
}
