//! The tool surface: which tools a turn may use, chosen from the contract and phase. The
//! system prompt describes only these, the model request carries only these, and the check
//! pipeline refuses any other before approval and before IO.
//!
//! `talos.run_command` is offered only on verification turns: a
//! turn that must verify, may not change files, names no target and is in VERIFY gets the
//! read-only tools and the command tool; an explicit command request that names the tool or a
//! profile gets the command tool alone. A request to run a raw command (`run pytest`) gets no
//! tools (row 4), and a change turn never gets the command tool (row 14).

use crate::planning::tools::ToolId;
use crate::request::contract::{TaskContract, TaskType};
use crate::request::phase::Phase;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    tools: Vec<ToolId>,
    reason: &'static str,
}

const READ_TOOLS: [ToolId; 4] = [
    ToolId::ReadFile,
    ToolId::ListDir,
    ToolId::Grep,
    ToolId::Search,
];
const VERIFY_TOOLS: [ToolId; 5] = [
    ToolId::ReadFile,
    ToolId::ListDir,
    ToolId::Grep,
    ToolId::Search,
    ToolId::RunCommand,
];

/// What in a request names the command tool or a profile (row 15), besides the built-in ids.
const COMMAND_PROFILE_MARKERS: [&str; 7] = [
    "talos.run_command",
    "command profile",
    "approved gradle",
    "approved bounded command",
    "profile gradle_",
    "profile cargo_",
    "profile ws:",
];

impl Surface {
    pub fn tools(&self) -> &[ToolId] {
        &self.tools
    }
    pub fn reason(&self) -> &'static str {
        self.reason
    }
    pub fn allows(&self, tool: ToolId) -> bool {
        self.tools.contains(&tool)
    }
    /// Names, sorted, as in the surface-check message.
    pub fn sorted_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.tools.iter().map(|t| t.name()).collect();
        names.sort_unstable();
        names
    }
    /// The intersection with `other`, keeping `other`'s reason: a later surface is never wider.
    pub fn narrowed_to(&self, other: &Surface) -> Surface {
        Surface {
            tools: other
                .tools
                .iter()
                .copied()
                .filter(|t| self.tools.contains(t))
                .collect(),
            reason: other.reason,
        }
    }
}

pub fn select(contract: &TaskContract, phase: Phase) -> Surface {
    let mut out = select_base(contract, phase);
    // A change turn that asked for a check to pass may run it (`contract/commands.rs`).
    if matches!(
        contract.command,
        crate::request::contract::CommandAsk::AfterChange(_)
    ) && contract.mutation_allowed
        && phase != Phase::Inspect
        && !out.tools.contains(&ToolId::RunCommand)
    {
        out.tools.push(ToolId::RunCommand);
    }
    out
}

fn select_base(contract: &TaskContract, phase: Phase) -> Surface {
    let surface = |tools: &[ToolId], reason| Surface {
        tools: tools.to_vec(),
        reason,
    };
    match contract.task_type {
        TaskType::SmallTalk => return surface(&[], "small-talk"),
        TaskType::CheckpointRestore => return surface(&[], "checkpoint restore direct answer"),
        TaskType::DirectoryListing => return surface(&[ToolId::ListDir], "directory listing"),
        TaskType::ReadOnlyQa
        | TaskType::WorkspaceExplain
        | TaskType::DiagnoseOnly
        | TaskType::FileEdit
        | TaskType::FileCreate
        | TaskType::VerifyOnly
        | TaskType::Unknown => {}
    }
    if contract.reason == crate::request::contract::Reason::UnsupportedCommand {
        return surface(&[], "unsupported command request");
    }
    if !contract.mutation_allowed || phase != Phase::Apply {
        if !contract.mutation_allowed
            && !contract.expected_targets.is_empty()
            && contract.task_type == TaskType::ReadOnlyQa
        {
            return surface(&[ToolId::ReadFile], "expected target read");
        }
        if contract.verification_required
            && !contract.mutation_allowed
            && contract.expected_targets.is_empty()
            && phase == Phase::Verify
        {
            if contract.reason == crate::request::contract::Reason::CommandVerification
                && names_command_profile(&contract.original_request)
            {
                return surface(&[ToolId::RunCommand], "explicit command profile surface");
            }
            return surface(&VERIFY_TOOLS, "verification command surface");
        }
        return surface(&READ_TOOLS, "read-only metadata surface");
    }
    let ops = contract_operations(contract);
    match ops.as_slice() {
        [] => {}
        [single] => {
            return Surface {
                tools: vec![*single],
                reason: op_reason(*single),
            };
        }
        _ => {
            let mut tools = vec![ToolId::ApplyWorkspaceBatch];
            tools.extend(ops.iter().copied());
            return Surface {
                tools,
                reason: "compound workspace operation surface",
            };
        }
    }
    let all_named_files = !contract.expected_targets.is_empty()
        && contract.expected_targets.iter().all(|t| is_named_file(t));
    let mut tools = READ_TOOLS.to_vec();
    if contract.task_type == TaskType::FileEdit && all_named_files {
        tools.extend([ToolId::WriteFile, ToolId::EditFile]);
        return Surface {
            tools,
            reason: "file edit target apply surface",
        };
    }
    tools.extend(
        ToolId::ALL
            .into_iter()
            .filter(|t| t.mutates() && t.risk() == crate::planning::tools::Risk::Write),
    );
    Surface {
        tools,
        reason: "mutation apply surface",
    }
}

/// The workspace operations the request asks for; "rename the function add to sum" changes
/// text inside files, never a file's name.
fn contract_operations(contract: &TaskContract) -> Vec<ToolId> {
    let mut ops = workspace_operations(&contract.original_request);
    if matches!(
        contract.change,
        Some(crate::request::change::ChangeAsk::RenameSymbol { .. })
    ) {
        ops.retain(|t| *t != ToolId::RenamePath);
    }
    ops
}

fn op_reason(tool: ToolId) -> &'static str {
    match tool {
        ToolId::MkDir => "workspace mkdir operation surface",
        ToolId::MovePath => "workspace move operation surface",
        ToolId::CopyPath => "workspace copy operation surface",
        ToolId::RenamePath => "workspace rename operation surface",
        ToolId::DeletePath => "workspace delete operation surface",
        ToolId::ApplyWorkspaceBatch => "compound workspace operation surface",
        ToolId::ReadFile
        | ToolId::ListDir
        | ToolId::Grep
        | ToolId::Search
        | ToolId::WriteFile
        | ToolId::EditFile
        | ToolId::RunCommand => "mutation apply surface",
    }
}

/// Whether a request names the command tool, a command profile or a built-in profile id.
pub fn names_command_profile(request: &str) -> bool {
    let lower = request.to_lowercase();
    COMMAND_PROFILE_MARKERS.iter().any(|m| lower.contains(m))
        || crate::request::task::BUILTIN_IDS.iter().any(|id| {
            lower
                .match_indices(id)
                .any(|(at, _)| is_whole_word(&lower, at, id.len()))
        })
}

/// Whether `text[at..at + len]` is not glued to identifier characters on either side.
fn is_whole_word(text: &str, at: usize, len: usize) -> bool {
    let glued = |c: char| c.is_alphanumeric() || c == '_';
    !text[..at].chars().next_back().is_some_and(glued)
        && !text[at + len..].chars().next().is_some_and(glued)
}

/// A target that names a file: one with an extension, or a file name the resolver knows
/// without one (`Makefile`, `VERSION`, `.gitignore`).
fn is_named_file(target: &str) -> bool {
    has_extension(target) || crate::request::targets::file_targets(target) == [target]
}

fn has_extension(target: &str) -> bool {
    let name = target.rsplit('/').next().unwrap_or(target);
    name.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=8).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

/// The typed workspace operations a request asks for, in catalogue order. A request that names
/// `apply_workspace_batch` or `operations_json` asks for a batch.
pub fn workspace_operations(request: &str) -> Vec<ToolId> {
    let lower = request.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let has = |w: &str| words.contains(&w);
    let near = |verbs: &[&str], nouns: &[&str]| {
        words.iter().enumerate().any(|(i, w)| {
            verbs.contains(w) && words[i + 1..].iter().take(4).any(|n| nouns.contains(n))
        })
    };
    let mut ops = Vec::new();
    if has("mkdir")
        || near(
            &["create", "make", "add"],
            &["directory", "directories", "folder", "folders", "dir"],
        )
    {
        ops.push(ToolId::MkDir);
    }
    if has("move") || has("mv") {
        ops.push(ToolId::MovePath);
    }
    if (has("copy") || has("cp")) && !lower.contains("copy of the") {
        ops.push(ToolId::CopyPath);
    }
    if has("rename") {
        ops.push(ToolId::RenamePath);
    }
    let delete_verb = has("delete") || has("rm") || has("remove");
    let names_a_thing = words.iter().any(|w| {
        matches!(
            *w,
            "file" | "files" | "folder" | "folders" | "directory" | "directories"
        )
    }) || !crate::request::targets::file_targets(request).is_empty();
    if delete_verb
        && names_a_thing
        && !words.contains(&"from")
        && !words.contains(&"line")
        && !words.contains(&"lines")
    {
        ops.push(ToolId::DeletePath);
    }
    if lower.contains("apply_workspace_batch") || lower.contains("operations_json") {
        ops.retain(|t| *t != ToolId::ApplyWorkspaceBatch);
        ops.insert(0, ToolId::ApplyWorkspaceBatch);
        if ops.len() == 1 {
            return ops;
        }
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::posture::{Posture, apply};
    use crate::request::contract::resolve;

    fn check(request: &str, posture: Posture, expected: &[&str], reason: &str) {
        let turn = apply(posture, resolve(request));
        let s = select(&turn.contract, turn.phase);
        assert_eq!(
            (s.sorted_names(), s.reason()),
            (expected.to_vec(), reason),
            "{request}"
        );
    }

    #[test]
    fn surface_rows() {
        let edit = "In settings.py, change TIMEOUT from 30 to 60.";
        check(
            edit,
            Posture::Agent,
            &[
                "talos.edit_file",
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.search",
                "talos.write_file",
            ],
            "file edit target apply surface",
        );
        check(
            edit,
            Posture::AskReadOnly,
            &[
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.search",
            ],
            "read-only metadata surface",
        );
        check(
            edit,
            Posture::PlanReadOnly,
            &[
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.search",
            ],
            "read-only metadata surface",
        );
        check("hello", Posture::Agent, &[], "small-talk");
        check(
            "list files",
            Posture::Agent,
            &["talos.list_dir"],
            "directory listing",
        );
        check(
            "What does settings.py configure?",
            Posture::Agent,
            &["talos.read_file"],
            "expected target read",
        );
        check(
            "please add a test for parsing",
            Posture::Agent,
            &[
                "talos.apply_workspace_batch",
                "talos.copy_path",
                "talos.edit_file",
                "talos.grep",
                "talos.list_dir",
                "talos.mkdir",
                "talos.move_path",
                "talos.read_file",
                "talos.rename_path",
                "talos.search",
                "talos.write_file",
            ],
            "mutation apply surface",
        );
        check(
            "Delete the file old.txt",
            Posture::Agent,
            &["talos.delete_path"],
            "workspace delete operation surface",
        );
        check(
            "Rename notes.txt to todo.txt",
            Posture::Agent,
            &["talos.rename_path"],
            "workspace rename operation surface",
        );
        check(
            "Create a folder called docs",
            Posture::Agent,
            &["talos.mkdir"],
            "workspace mkdir operation surface",
        );
        check(
            "Create a folder docs and move notes.md into it",
            Posture::Agent,
            &[
                "talos.apply_workspace_batch",
                "talos.mkdir",
                "talos.move_path",
            ],
            "compound workspace operation surface",
        );
        check(
            "Delete the file old.txt",
            Posture::AskReadOnly,
            &[
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.search",
            ],
            "read-only metadata surface",
        );
        check(
            "In app.py remove the line that prints debug",
            Posture::Agent,
            &[
                "talos.edit_file",
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.search",
                "talos.write_file",
            ],
            "file edit target apply surface",
        );
    }

    /// Proves the command rows: verification turns get the command tool (alone when the
    /// request names it or a profile), raw command requests get nothing, change turns and
    /// read-only postures never get it.
    #[test]
    fn command_surface_rows() {
        const READ_AND_COMMAND: &[&str] = &[
            "talos.grep",
            "talos.list_dir",
            "talos.read_file",
            "talos.run_command",
            "talos.search",
        ];
        const READ: &[&str] = &[
            "talos.grep",
            "talos.list_dir",
            "talos.read_file",
            "talos.search",
        ];
        let rows: &[(&str, Posture, &[&str], &str)] = &[
            (
                "Use talos.run_command with profile gradle_test",
                Posture::Agent,
                &["talos.run_command"],
                "explicit command profile surface",
            ),
            (
                "Use talos.run_command with profile cargo_test",
                Posture::Agent,
                &["talos.run_command"],
                "explicit command profile surface",
            ),
            (
                "Run the cargo_clippy profile",
                Posture::Agent,
                &["talos.run_command"],
                "explicit command profile surface",
            ),
            (
                "Run the approved gradle test profile",
                Posture::Agent,
                &["talos.run_command"],
                "explicit command profile surface",
            ),
            (
                "Run profile ws:check",
                Posture::Agent,
                &["talos.run_command"],
                "explicit command profile surface",
            ),
            (
                "run gradle build",
                Posture::Agent,
                READ_AND_COMMAND,
                "verification command surface",
            ),
            (
                "verify the build passes",
                Posture::Agent,
                READ_AND_COMMAND,
                "verification command surface",
            ),
            (
                "did you make the changes?",
                Posture::Agent,
                READ_AND_COMMAND,
                "verification command surface",
            ),
            (
                "Run pytest",
                Posture::Agent,
                &[],
                "unsupported command request",
            ),
            (
                "Run cargo test and tell me if it passes",
                Posture::Agent,
                &[],
                "unsupported command request",
            ),
            (
                "Run pytest",
                Posture::AskReadOnly,
                &[],
                "unsupported command request",
            ),
            (
                "Use talos.run_command with profile gradle_test",
                Posture::AskReadOnly,
                READ,
                "read-only metadata surface",
            ),
            (
                "run gradle build",
                Posture::PlanReadOnly,
                READ,
                "read-only metadata surface",
            ),
            (
                "What is talos.run_command?",
                Posture::Agent,
                READ,
                "read-only metadata surface",
            ),
        ];
        for (request, posture, expected, reason) in rows {
            check(request, *posture, expected, reason);
        }
    }

    /// Proves no change surface, in any phase, offers the command tool.
    #[test]
    fn change_turns_never_get_the_command_tool() {
        for request in [
            "please add a test for parsing",
            "In settings.py, change TIMEOUT from 30 to 60.",
            "Delete the file old.txt",
            "Create a folder docs and move notes.md into it",
            "Fix the failing test in parser.rs and run cargo_test",
        ] {
            let turn = apply(Posture::Agent, resolve(request));
            for phase in [Phase::Inspect, Phase::Apply, Phase::Verify] {
                assert!(
                    !select(&turn.contract, phase).allows(ToolId::RunCommand),
                    "{request} {phase:?}"
                );
            }
        }
    }

    /// Proves a profile id counts only as a whole word.
    #[test]
    fn profile_ids_are_named_as_whole_words() {
        assert!(names_command_profile("run cargo_test now"));
        assert!(names_command_profile("RUN GRADLE_CHECK"));
        assert!(!names_command_profile("run my_cargo_test_helper"));
        assert!(!names_command_profile("run cargo test"));
    }

    #[test]
    fn a_later_phase_never_widens_the_surface() {
        let turn = apply(Posture::Agent, resolve("list files"));
        let first = select(&turn.contract, turn.phase);
        let wide = select(&resolve("please add a test"), Phase::Apply);
        assert_eq!(
            first.narrowed_to(&wide).sorted_names(),
            vec!["talos.list_dir"]
        );
    }
}
