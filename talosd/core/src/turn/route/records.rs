//! "What did you change in the last two turns?", "which files did you touch so far?":
//! answered from the session's records of the turns the question names, never by the model,
//! so the answer can name no change the records do not show. Each turn is listed with its
//! request, how it ended, the files it changed and, where recorded, the replacement it made.

use crate::request::history::{ChangeScope, PriorOutcome};
use crate::turn::conversation::EarlierTurn;

/// A request is quoted up to this many characters.
const QUOTED_CHARS: usize = 80;

/// The answer from the records of the turns `scope` names (`earlier` is oldest first).
pub fn changes_from_records(earlier: &[EarlierTurn], scope: ChangeScope) -> String {
    if earlier.is_empty() {
        return "Talos's records hold no earlier turn of this session, so no file was changed in it.".into();
    }
    let (named, heading) = match scope {
        ChangeScope::LastTurns(n) => {
            let taken = n.min(earlier.len());
            let shortfall = if n > earlier.len() {
                format!(
                    " (only {} {} remembered)",
                    earlier.len(),
                    turns(earlier.len())
                )
            } else {
                String::new()
            };
            let what = if n == 1 {
                "the last turn".to_string()
            } else {
                format!("the last {n} turns")
            };
            (
                &earlier[earlier.len() - taken..],
                format!("{what}{shortfall}"),
            )
        }
        ChangeScope::Session => (
            earlier,
            format!(
                "this session's {} remembered {}",
                earlier.len(),
                turns(earlier.len())
            ),
        ),
    };
    let mut out = format!("From Talos's records of {heading}, oldest first:");
    let mut all_changed: Vec<&str> = Vec::new();
    for turn in named {
        out.push_str(&format!(
            "\n- \"{}\" ({}): {}.",
            quoted(&turn.request),
            ended(turn.outcome),
            changes(turn)
        ));
        for path in &turn.changed {
            if !all_changed.contains(&path.as_str()) {
                all_changed.push(path);
            }
        }
    }
    if all_changed.is_empty() {
        out.push_str("\nNo file was changed in them.");
    } else {
        out.push_str(&format!("\nFiles changed: {}.", all_changed.join(", ")));
    }
    out
}

fn turns(n: usize) -> &'static str {
    if n == 1 { "turn" } else { "turns" }
}

/// What one turn changed, as its records say.
fn changes(turn: &EarlierTurn) -> String {
    if turn.changed.is_empty() {
        return "no file changed".into();
    }
    let files: Vec<String> = turn
        .changed
        .iter()
        .map(|path| match &turn.replaced {
            Some(r) if &r.target == path => format!("{path} ({} -> {})", r.from, r.to),
            _ => path.clone(),
        })
        .collect();
    format!("changed {}", files.join(", "))
}

/// How a turn ended, in words.
fn ended(outcome: PriorOutcome) -> &'static str {
    match outcome {
        PriorOutcome::Verified => "completed and verified",
        PriorOutcome::Unverified => "completed, not verified",
        PriorOutcome::Incomplete => "not finished",
        PriorOutcome::Denied => "approval denied",
        PriorOutcome::Blocked => "blocked by policy",
        PriorOutcome::Failed => "failed",
        PriorOutcome::ReadOnly => "answered without changes",
    }
}

/// The request's first line, cut to [`QUOTED_CHARS`] characters.
fn quoted(request: &str) -> String {
    let line = request.lines().next().unwrap_or("").trim();
    if line.chars().count() <= QUOTED_CHARS {
        return line.to_string();
    }
    let cut: String = line.chars().take(QUOTED_CHARS).collect();
    format!("{}…", cut.trim_end())
}
