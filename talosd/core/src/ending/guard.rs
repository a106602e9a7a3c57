//! Answer guards: compare the model's final answer with the turn's records and correct it
//! where the records disagree. The person sees what happened, not what the model hoped. A
//! contradicted claim is replaced, not annotated: the answer becomes the runtime's statement
//! of what the records show, and only the model's sentences that do not conflict with them
//! are kept ([`sentences`]). Mixed results are stated per file ([`per_file`]).

mod claims;
mod documents;
pub mod per_file;
pub mod sentences;
pub use documents::{DOCUMENT_NOTE_START, correct_document_claims, unreadable_documents};

use crate::request::outcome::{MutationResult, TurnFacts, target_states};
pub use sentences::claims_no_problems;

/// Whether any sentence of `text` is a refusal ("I can't share ...").
pub fn sentences_refuse(text: &str) -> bool {
    sentences::split(text).iter().any(|s| sentences::refuses(s))
}

/// How the answer starts when a clean verdict was removed because the task verifier found
/// problems.
pub const CLEAN_VERDICT_CONTRADICTED: &str =
    "[Verification check: the model's verdict was removed because Talos's own checks found";

/// How the answer starts when a workspace question was answered without reading what it is
/// about: the runtime's statement replaces the model's answer.
pub const NOT_INSPECTED: &str = "[Not inspected:";

/// How the runtime's own stop reason starts when it is the turn's answer.
const LOOP_STOPPED: &str = "[Tool loop stopped";

/// What follows a read-only answer when the model also tried to change files.
pub const READ_ONLY_BLOCK_NOTE: &str = "[Note: the model also tried to change files, but this turn only answers your question, so Talos blocked the change and no file was changed. Ask explicitly to edit, update, or create files if you want a change.]";

const READ_ONLY_BLOCK_REPLACEMENT: &str = "[Truth check: no file was changed in this turn. The model attempted to call mutating tools, but this turn was classified as read-only, so those calls were blocked.]\nNo file changes were applied. Ask explicitly to edit, update, or create files if you want Talos to modify the workspace.";

/// The answer a person sees, given the model's text and the records.
pub fn guard_answer(model_answer: &str, facts: &TurnFacts) -> String {
    if let Some(replaced) = replacement(model_answer, facts) {
        return replaced;
    }
    let succeeded = facts
        .mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
    let mut answer = model_answer.to_string();
    let mut after = Vec::new();
    if facts.read_only_blocked && !succeeded {
        // A change nobody asked for, blocked: the answer to the question stands, with a note.
        let (kept, _) = sentences::keep(&answer, |s| {
            sentences::claims_change(s) || sentences::claims_done(s)
        });
        if kept.is_empty() && facts.reading.is_empty() {
            return READ_ONLY_BLOCK_REPLACEMENT.into();
        }
        if kept.is_empty() {
            return format!(
                "{READ_ONLY_BLOCK_REPLACEMENT}\nNothing was changed: the request was read as {}.",
                facts.reading
            );
        }
        answer = kept;
        after.push(READ_ONLY_BLOCK_NOTE.to_string());
    }
    let answer = if !facts.mutation_requested && !facts.evidence_missing.is_empty() {
        let statement = ungrounded(&facts.evidence_missing, facts.obligation_retries > 0);
        // The runtime's own stop reason (not the model's words) still says why the loop ended.
        if answer.starts_with(LOOP_STOPPED) {
            join(&statement, &answer)
        } else {
            statement
        }
    } else if !facts.task_findings.is_empty() && facts.mutation_requested {
        // A change turn whose checks found problems: the clean verdict goes, and the account of
        // the changes is still held to where each target ended (issue 27).
        changes_checked(&verdict_checked(&answer, facts), facts, succeeded)
    } else if !facts.task_findings.is_empty() {
        verdict_checked(&answer, facts)
    } else {
        changes_checked(&answer, facts, succeeded)
    };
    after.insert(0, answer);
    after.retain(|part| !part.trim().is_empty());
    after.join("\n\n")
}

/// Answers the records replace whole (the model's text, where any of it is kept, follows).
fn replacement(model_answer: &str, facts: &TurnFacts) -> Option<String> {
    let succeeded = facts
        .mutations
        .iter()
        .any(|m| matches!(m.result, MutationResult::Succeeded { .. }));
    let denied: Vec<&str> = facts
        .mutations
        .iter()
        .filter(|m| m.result == MutationResult::Denied)
        .map(|m| m.target.as_str())
        .collect();
    let blocked: Vec<(&str, &str)> = facts
        .mutations
        .iter()
        .filter_map(|m| match &m.result {
            MutationResult::Blocked { reason } | MutationResult::Failed { reason } => {
                Some((m.target.as_str(), reason.as_str()))
            }
            MutationResult::Succeeded { .. } | MutationResult::Denied => None,
        })
        .collect();
    if facts.cancelled {
        return Some(format!(
            "[Turn cancelled: the turn was stopped before it finished.]{}",
            summary_of_changes(facts)
        ));
    }
    if facts.malformed_tool_call && !succeeded {
        return Some("[Truth check: the model produced an invalid tool-call payload, so no action was taken.]\nNo file changes were applied. Please retry the request.".into());
    }
    if !succeeded && let Some(text) = unapplied_writes(facts, &denied, &blocked) {
        return Some(text);
    }
    if facts.read_only_blocked && facts.mutation_requested && !succeeded {
        return Some(READ_ONLY_BLOCK_REPLACEMENT.into());
    }
    let denies =
        facts.tool_calls == 0 && facts.tools_offered && sentences::denies_capability(model_answer);
    if !succeeded && (facts.capability_denied || denies) {
        let correction = if facts.mutation_allowed {
            "[Capability correction: Talos can create and edit files in the current workspace on mutation-capable turns, subject to policy and approval.]\nNo file tool was called in this turn. If you want a workspace change, ask Talos to create, edit, update, or fix the file directly."
        } else {
            "[Capability correction: Talos can inspect files in the current workspace with local read tools, but no file tool was called in this turn.]\nI can read, list, and search files in this workspace when the task calls for it. I did not inspect files in this turn, so I cannot give an evidence-backed workspace answer yet."
        };
        // The records call it a capability denial: none of the model's sentences stands
        // (issue 27), whatever else they say.
        return Some(correction.to_string());
    }
    if facts.action_not_taken && !succeeded {
        return Some(action_not_taken(model_answer, facts));
    }
    None
}

/// When no change succeeded: the account of the writes that were denied (and none blocked), or
/// blocked or failed, path by path; `None` when there were none.
fn unapplied_writes(
    facts: &TurnFacts,
    denied: &[&str],
    blocked: &[(&str, &str)],
) -> Option<String> {
    if !denied.is_empty() && blocked.is_empty() {
        let mut out = String::from(
            "[Truth check: no file was changed in this turn because the requested write was not approved.]\nNo file changes were applied because approval was denied for:\n",
        );
        for p in denied {
            out.push_str(&format!("- {p}: approval denied\n"));
        }
        out.push_str("Talos can still help in a later turn if you want to retry the edit or take a read-only approach.");
        return Some(out);
    }
    if !blocked.is_empty() {
        let mut out = String::from(
            "[Truth check: no file was changed in this turn because the requested write was blocked or failed.]\nNo file changes were applied:\n",
        );
        for (p, reason) in blocked {
            out.push_str(&format!("- {p}: {reason}\n"));
        }
        for p in denied {
            out.push_str(&format!("- {p}: approval denied\n"));
        }
        for p in not_attempted(facts) {
            out.push_str(&format!("- {p}: not attempted\n"));
        }
        return Some(out.trim_end().to_string());
    }
    None
}

/// The statement that the change the request needs was not made, with the model's sentences
/// that neither claim success nor refuse.
fn action_not_taken(model_answer: &str, facts: &TurnFacts) -> String {
    let targets = not_attempted(facts);
    let what = if targets.is_empty() {
        String::new()
    } else {
        format!(" to {}", targets.join(", "))
    };
    let statement = format!(
        "[Action not taken: the request needs a change{what}, and the model made no change call, even after Talos asked it again. No file was changed.]"
    );
    let (kept, _) = sentences::keep(model_answer, |s| {
        sentences::claims_success(s) || sentences::refuses(s)
    });
    join(&statement, &kept)
}

fn ungrounded(missing: &[String], asked_again: bool) -> String {
    let one = missing.len() == 1;
    format!(
        "{NOT_INSPECTED} the answer had to rest on {}, but {} not read in this turn{}. The model's answer is not shown: it could not have come from the workspace. Ask again, naming the files to read.]",
        missing.join(", "),
        if one { "it was" } else { "they were" },
        if asked_again {
            ", even after Talos asked for it"
        } else {
            ""
        },
    )
}

/// The task verifier found problems: whatever the model's verdict, its sentences that say
/// nothing is wrong do not reach the person (the findings follow the answer). On a question
/// turn (verify, diagnose) the answer *is* the verdict: when no sentence reads as one, and it
/// names none of the files the findings are in and no problem at all, it is contradicted
/// whatever its wording, and none of it is kept.
fn verdict_checked(answer: &str, facts: &TurnFacts) -> String {
    let findings = facts.task_findings.len();
    let plural = if findings == 1 { "" } else { "s" };
    let statement = format!(
        "{CLEAN_VERDICT_CONTRADICTED} {findings} problem{plural} (listed below); its statement that nothing is wrong does not stand.]"
    );
    if facts.mutation_requested {
        let (kept, dropped) = sentences::keep(answer, sentences::clean_verdict);
        return if dropped {
            join(&statement, &kept)
        } else {
            answer.to_string()
        };
    }
    // A question turn (verify, diagnose): the records decide. A sentence stands only when it
    // names a file, selector or id a finding is about, and is no clean verdict; the rest is
    // not kept, and the findings follow (issue 27).
    let subjects = finding_subjects(&facts.task_findings);
    let said_clean = sentences::split(answer)
        .iter()
        .any(|s| sentences::clean_verdict(s));
    // A sentence that names what a finding is about and says it is there or works ("The
    // class `cta-button` is present in both files") says the opposite of the finding.
    let selectors: Vec<String> = subjects
        .iter()
        .filter(|s| s.starts_with('#') || s.starts_with('.'))
        .cloned()
        .collect();
    let denied = |s: &str| names_any(s, &selectors) && sentences::affirms_presence(s);
    let said_otherwise = sentences::split(answer).iter().any(|s| denied(s));
    let (kept, dropped) = sentences::keep(answer, |s| {
        sentences::clean_verdict(s) || !names_any(s, &subjects) || denied(s)
    });
    let not_kept = if said_otherwise {
        format!(
            "[Verification check: Talos's own checks found {findings} problem{plural} (listed below); the model's sentences that say otherwise were not kept.]"
        )
    } else {
        format!(
            "[Verification check: Talos's own checks found {findings} problem{plural} (listed below); the model's text that names none of the files, selectors or ids they are about was not kept.]"
        )
    };
    match (said_clean, dropped) {
        (true, _) => join(&statement, &kept),
        (false, true) => join(&not_kept, &kept),
        (false, false) => answer.to_string(),
    }
}

/// What the findings (`file: message`) are about: each file's name and the selectors, ids and
/// quoted names in the message (`#list`, `.add`, `` `cta-button` ``).
fn finding_subjects(findings: &[String]) -> Vec<String> {
    let mut subjects = Vec::new();
    for finding in findings {
        let (file, message) = finding.split_once(": ").unwrap_or((finding.as_str(), ""));
        subjects.push(file.rsplit('/').next().unwrap_or(file).to_string());
        for word in message.split_whitespace() {
            let word = word.trim_matches(|c: char| ",;:()[]{}<>\"'`".contains(c));
            let word = word.trim_end_matches(['.', '!', '?']);
            let selector = word.len() > 1
                && (word.starts_with('#') || word.starts_with('.'))
                && word[1..]
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_');
            if selector {
                subjects.push(word.to_string());
            }
        }
        let quoted = message.split(['`', '"', '\'']).skip(1).step_by(2);
        for name in quoted {
            if !name.trim().is_empty() {
                subjects.push(name.trim().to_string());
            }
        }
    }
    subjects.sort();
    subjects.dedup();
    subjects
}

/// Whether a sentence names one of `subjects` (a selector also by its bare name in quotes or
/// backticks).
fn names_any(sentence: &str, subjects: &[String]) -> bool {
    let named = sentences::file_names(sentence);
    subjects.iter().any(|subject| {
        if subject.starts_with('#') || subject.starts_with('.') {
            let bare = &subject[1..];
            contains_token(sentence, subject)
                || [
                    format!("`{bare}`"),
                    format!("\"{bare}\""),
                    format!("'{bare}'"),
                ]
                .iter()
                .any(|q| sentence.contains(q.as_str()))
        } else {
            named.iter().any(|n| n == subject) || contains_token(sentence, subject)
        }
    })
}

/// Whether `token` occurs in `text` not as part of a longer name.
fn contains_token(text: &str, token: &str) -> bool {
    let name_char = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(token).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + token.len()..].chars().next();
        !before.is_some_and(name_char) && !after.is_some_and(name_char)
    })
}

/// The model's account of the changes against where each target ended.
fn changes_checked(answer: &str, facts: &TurnFacts, succeeded: bool) -> String {
    let states = target_states(facts);
    let unfinished = states.iter().any(|s| s.unfinished());
    let obligation = (facts.mutation_allowed && !facts.unmet_targets.is_empty()).then(|| {
        format!(
            "[Action obligation failed: pending expected target progress was not satisfied.] Remaining target(s): {} Talos stopped this turn deterministically.",
            facts.unmet_targets.join(", ")
        )
    });
    let per_file = per_file::statement(facts);
    if !succeeded {
        let (kept, dropped) = sentences::keep(answer, |s| claims::contradicted(facts, s));
        let body = if dropped {
            join(&claims::nothing_changed(facts), &kept)
        } else {
            answer.to_string()
        };
        return parts(&[Some(body), obligation]);
    }
    if unfinished {
        // Some part the request needs did not end changed: a success claim does not stand.
        let (kept, dropped) = sentences::keep(answer, sentences::claims_success);
        let changed = states.iter().filter(|s| s.changed() && s.needed).count();
        let needed = states.iter().filter(|s| s.needed).count();
        let removed = if dropped {
            " The model's claim that the task was complete was removed."
        } else {
            ""
        };
        let statement = format!(
            "[Truth check: the task is only partly done: {changed} of {needed} required file(s) changed.{removed}]"
        );
        return parts(&[Some(join(&statement, &kept)), per_file, obligation]);
    }
    parts(&[Some(answer.to_string()), per_file, obligation])
}

/// Expected targets no call touched.
fn not_attempted(facts: &TurnFacts) -> Vec<String> {
    facts
        .unmet_targets
        .iter()
        .filter(|t| !facts.mutations.iter().any(|m| &m.target == *t))
        .cloned()
        .collect()
}

fn join(statement: &str, kept: &str) -> String {
    if kept.trim().is_empty() {
        statement.to_string()
    } else {
        format!("{statement}\n\n{}", kept.trim())
    }
}

fn parts(parts: &[Option<String>]) -> String {
    parts
        .iter()
        .flatten()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// What a cancelled turn had already written, from the records: each file with whether its
/// read-back matched, and how to take it back (issue 26, defect 9).
fn summary_of_changes(facts: &TurnFacts) -> String {
    let changed: Vec<String> = facts
        .mutations
        .iter()
        .filter_map(|m| match m.result {
            MutationResult::Succeeded { verified: true } => {
                Some(format!("{} (written and read back as approved)", m.target))
            }
            MutationResult::Succeeded { verified: false } => Some(format!(
                "{} (written; the read-back did not match)",
                m.target
            )),
            _ => None,
        })
        .collect();
    if changed.is_empty() {
        "\nNo file was changed.".into()
    } else {
        format!(
            "\nThe cancel came after a change was written; it stays on disk: {}. `talos undo` (or /undo) restores what this turn wrote.",
            changed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::outcome::MutationRecord;

    /// What the guarded answer must look like.
    enum Says {
        Exactly(&'static str),
        /// Starts with the first, contains each of the rest, and lacks the last.
        Shape(&'static str, &'static [&'static str], &'static str),
    }

    fn m(target: &str, result: MutationResult) -> MutationRecord {
        MutationRecord {
            target: target.into(),
            result,
        }
    }

    fn edit(mutations: Vec<MutationRecord>, expected: &[&str], unmet: &[&str]) -> TurnFacts {
        TurnFacts {
            mutation_requested: true,
            mutation_allowed: true,
            tools_offered: true,
            tool_calls: mutations.len(),
            expected_targets: expected.iter().map(|s| s.to_string()).collect(),
            unmet_targets: unmet.iter().map(|s| s.to_string()).collect(),
            mutations,
            ..TurnFacts::default()
        }
    }

    fn check(what: &str, answer: &str, facts: &TurnFacts, says: Says) {
        let got = guard_answer(answer, facts);
        match says {
            Says::Exactly(want) => assert_eq!(got, want, "{what}"),
            Says::Shape(start, contains, lacks) => {
                assert!(got.starts_with(start), "{what}: {got}");
                for part in contains {
                    assert!(got.contains(part), "{what}: {got} lacks {part:?}");
                }
                assert!(
                    lacks.is_empty() || !got.contains(lacks),
                    "{what}: {got} has {lacks:?}"
                );
            }
        }
    }

    #[test]
    fn every_guard_holds() {
        let ok = || MutationResult::Succeeded { verified: true };
        let refused = || MutationResult::Blocked {
            reason: "Target outside expected targets before approval".into(),
        };
        let finding = |facts: TurnFacts| TurnFacts {
            tools_offered: true,
            tool_calls: 1,
            task_findings: vec!["app.js: #go is not in any page".into()],
            ..facts
        };
        let rows: Vec<(&str, &str, TurnFacts, Says)> = vec![
            (
                "a claimed change without a write is removed, not annotated",
                "I have updated settings.py. TIMEOUT controls the wait.",
                edit(vec![], &["settings.py"], &["settings.py"]),
                Says::Shape(
                    "[Truth check: Nothing was changed: the request asked for a change to settings.py, and the model proposed none. The model's claim that it changed a file was removed.]",
                    &[
                        "TIMEOUT controls the wait.",
                        "Remaining target(s): settings.py",
                    ],
                    "I have updated",
                ),
            ),
            (
                "an answer with no claim is left alone",
                "Nothing to do.",
                TurnFacts {
                    mutation_requested: true,
                    mutation_allowed: true,
                    ..TurnFacts::default()
                },
                Says::Exactly("Nothing to do."),
            ),
            (
                "a denial replaces the answer",
                "Done! I changed it.",
                TurnFacts {
                    mutations: vec![m("settings.py", MutationResult::Denied)],
                    ..TurnFacts::default()
                },
                Says::Shape(
                    "[Truth check: no file was changed",
                    &["- settings.py: approval denied"],
                    "Done!",
                ),
            ),
            (
                "a verified change keeps the answer",
                "I have updated a.",
                edit(vec![m("a", ok())], &["a"], &[]),
                Says::Exactly("I have updated a."),
            ),
            (
                "a capability denial is corrected when the turn could act, and none of the model's text stands",
                "Sorry, as an AI language model I can't create files. Here is a todo list: milk",
                edit(vec![], &[], &[]),
                Says::Shape(
                    "[Capability correction: Talos can create and edit files",
                    &[],
                    "todo list",
                ),
            ),
            (
                "a capability denial on a read-only turn",
                "I don't have access to your files.",
                TurnFacts {
                    tools_offered: true,
                    ..TurnFacts::default()
                },
                Says::Shape(
                    "[Capability correction: Talos can inspect files",
                    &[],
                    "have access",
                ),
            ),
            (
                "a refusal the records call a capability denial, whatever its wording",
                "I'd rather you did that yourself. I won't touch your disk.",
                TurnFacts {
                    capability_denied: true,
                    ..edit(vec![], &[], &[])
                },
                Says::Shape(
                    "[Capability correction: Talos can create and edit files",
                    &[],
                    "rather you did",
                ),
            ),
            (
                "a chat turn offers no tools",
                "I can't create files.",
                TurnFacts::default(),
                Says::Exactly("I can't create files."),
            ),
            (
                "the model did not act after the retry: the runtime says what was not done",
                "All done! Here is the code: x = 1",
                TurnFacts {
                    action_not_taken: true,
                    obligation_retries: 1,
                    ..edit(vec![], &["a.py"], &["a.py"])
                },
                Says::Shape(
                    "[Action not taken: the request needs a change to a.py",
                    &["No file was changed."],
                    "All done",
                ),
            ),
            (
                "a clean verdict the checks contradict is removed",
                "Everything looks fine, no mismatches. The page has one button.",
                finding(TurnFacts::default()),
                Says::Shape(
                    "[Verification check: the model's verdict was removed because Talos's own checks found 1 problem (listed below)",
                    &[],
                    "one button",
                ),
            ),
            (
                "a favourable verdict in other words is removed too",
                "The wiring is correct.",
                finding(TurnFacts::default()),
                Says::Shape(CLEAN_VERDICT_CONTRADICTED, &[], "wiring"),
            ),
            (
                "a verdict in words no list knows, naming neither a problem nor its file, is replaced",
                "Splendid work overall. The page has one button.",
                finding(TurnFacts::default()),
                Says::Shape(
                    "[Verification check: Talos's own checks found 1 problem (listed below); the model's text that names none",
                    &[],
                    "Splendid",
                ),
            ),
            (
                "an answer that names the finding's file stands",
                "Look at app.js again.",
                finding(TurnFacts::default()),
                Says::Exactly("Look at app.js again."),
            ),
            (
                "an answer that names none of what the findings are about is not kept",
                "The button id is wrong. The issue is just that the page needs a newer browser.",
                finding(TurnFacts::default()),
                Says::Shape(
                    "[Verification check: Talos's own checks found 1 problem (listed below); the model's text that names none of the files, selectors or ids they are about was not kept.]",
                    &[],
                    "newer browser",
                ),
            ),
            (
                "a sentence naming a finding's selector stands, the rest is not kept",
                "The #go button is not in index.html. No further action is needed.",
                finding(TurnFacts::default()),
                Says::Shape(
                    "[Verification check: Talos's own checks found 1 problem",
                    &["The #go button is not in index.html."],
                    "No further action",
                ),
            ),
            (
                "a clean verdict in any wording is one, even beside a finding's file",
                "There are no static HTML, CSS, or JavaScript problems in app.js.",
                finding(TurnFacts::default()),
                Says::Shape(CLEAN_VERDICT_CONTRADICTED, &[], "JavaScript problems"),
            ),
            (
                "a selector named by its bare name in backticks counts",
                "The class `cta-button` is fine. The element `go` is never defined.",
                finding(TurnFacts::default()),
                Says::Shape(
                    CLEAN_VERDICT_CONTRADICTED,
                    &["The element `go` is never defined."],
                    "cta-button",
                ),
            ),
            (
                "a sentence saying a finding's selector is there is the opposite of the record",
                "The id `go` is present in both HTML and JavaScript. Look at app.js.",
                finding(TurnFacts::default()),
                Says::Shape(
                    "[Verification check: Talos's own checks found 1 problem (listed below); the model's sentences that say otherwise were not kept.]",
                    &["Look at app.js."],
                    "is present",
                ),
            ),
            (
                "a sentence saying a finding's selector is missing stands",
                "The id `go` is not present in any page.",
                finding(TurnFacts::default()),
                Says::Exactly("The id `go` is not present in any page."),
            ),
            (
                "without findings a clean verdict stands",
                "No problems found.",
                TurnFacts {
                    tools_offered: true,
                    tool_calls: 1,
                    ..TurnFacts::default()
                },
                Says::Exactly("No problems found."),
            ),
            (
                "an answer without its evidence is replaced by what was not inspected",
                "app.js is fine.",
                TurnFacts {
                    evidence_missing: vec!["app.js".into()],
                    tools_offered: true,
                    tool_calls: 1,
                    ..TurnFacts::default()
                },
                Says::Shape(
                    "[Not inspected: the answer had to rest on app.js, but it was not read in this turn. The model's answer is not shown",
                    &[],
                    "app.js is fine.",
                ),
            ),
            (
                "a partial change then \"all done\": the success claim is corrected, per file",
                "Done! I created all three files. Each says hello.",
                edit(vec![m("a", ok()), m("b", ok())], &["a", "b", "c"], &["c"]),
                Says::Shape(
                    "[Truth check: the task is only partly done: 2 of 3 required file(s) changed. The model's claim that the task was complete was removed.]",
                    &[
                        "Each says hello.",
                        "- a: changed and verified",
                        "- c: not attempted",
                        "Remaining target(s): c",
                    ],
                    "Done!",
                ),
            ),
            (
                "a partial change whose checks also found problems: both guards hold",
                "Done! I created all three files. Everything works.",
                TurnFacts {
                    task_findings: vec!["a: #go is not in any page".into()],
                    ..edit(vec![m("a", ok()), m("b", ok())], &["a", "b", "c"], &["c"])
                },
                Says::Shape(
                    "[Truth check: the task is only partly done: 2 of 3 required file(s) changed.",
                    &["- c: not attempted", "Remaining target(s): c"],
                    "Done!",
                ),
            ),
            (
                "a required part failed after another succeeded: corrected",
                "All changes applied.",
                edit(
                    vec![
                        m("a", ok()),
                        m(
                            "b",
                            MutationResult::Failed {
                                reason: "disk full".into(),
                            },
                        ),
                    ],
                    &["a", "b"],
                    &["b"],
                ),
                Says::Shape(
                    "[Truth check: the task is only partly done: 1 of 2 required file(s) changed.",
                    &["- b: failed: disk full"],
                    "All changes",
                ),
            ),
            (
                "a refusal on an unneeded target is reported, the answer stands",
                "Done.",
                edit(vec![m("notes.txt", refused()), m("a", ok())], &["a"], &[]),
                Says::Exactly(
                    "Done.\n\nPer-file results (from Talos's records, not the model):\n- notes.txt: refused: Target outside expected targets before approval (not needed by the request)\n- a: changed and verified",
                ),
            ),
            (
                "an unsolicited change blocked on a read-only turn keeps the answer and adds the note",
                "TIMEOUT is 30 seconds. I have updated settings.py to 60.",
                TurnFacts {
                    read_only_blocked: true,
                    tools_offered: true,
                    tool_calls: 2,
                    ..TurnFacts::default()
                },
                Says::Exactly(
                    "TIMEOUT is 30 seconds.\n\n[Note: the model also tried to change files, but this turn only answers your question, so Talos blocked the change and no file was changed. Ask explicitly to edit, update, or create files if you want a change.]",
                ),
            ),
            (
                "a read-only block with nothing else to say is the old replacement",
                "I have updated settings.py.",
                TurnFacts {
                    read_only_blocked: true,
                    tools_offered: true,
                    tool_calls: 1,
                    ..TurnFacts::default()
                },
                Says::Exactly(READ_ONLY_BLOCK_REPLACEMENT),
            ),
            (
                "a change the person asked for, blocked on a read-only turn, is replaced",
                "TIMEOUT is 30.",
                TurnFacts {
                    read_only_blocked: true,
                    mutation_requested: true,
                    ..TurnFacts::default()
                },
                Says::Exactly(READ_ONLY_BLOCK_REPLACEMENT),
            ),
        ];
        for (what, answer, facts, says) in rows {
            check(what, answer, &facts, says);
        }
    }
}
