//! The tool surface: which tools a turn may use, chosen from the contract and phase. The
//! system prompt describes only these, the model request carries only these, and the check
//! pipeline refuses any other before approval and before IO.

use crate::contract::{TaskContract, TaskType};
use crate::plan::Phase;
use crate::tools::ToolId;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Surface {
    tools: Vec<ToolId>,
    reason: &'static str,
}

const READ_TOOLS: [ToolId; 3] = [ToolId::ReadFile, ToolId::ListDir, ToolId::Grep];

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
    if !contract.mutation_allowed || phase != Phase::Apply {
        if !contract.mutation_allowed
            && !contract.expected_targets.is_empty()
            && contract.task_type == TaskType::ReadOnlyQa
        {
            return surface(&[ToolId::ReadFile], "expected target read");
        }
        return surface(&READ_TOOLS, "read-only metadata surface");
    }
    let mut tools = READ_TOOLS.to_vec();
    tools.extend([ToolId::WriteFile, ToolId::EditFile]);
    let reason = match contract.task_type {
        TaskType::FileEdit if !contract.expected_targets.is_empty() => {
            "file edit target apply surface"
        }
        _ => "mutation apply surface",
    };
    Surface { tools, reason }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::resolve;
    use crate::posture::{Posture, apply};

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
                "talos.write_file",
            ],
            "file edit target apply surface",
        );
        check(
            edit,
            Posture::AskReadOnly,
            &["talos.grep", "talos.list_dir", "talos.read_file"],
            "read-only metadata surface",
        );
        check(
            edit,
            Posture::PlanReadOnly,
            &["talos.grep", "talos.list_dir", "talos.read_file"],
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
                "talos.edit_file",
                "talos.grep",
                "talos.list_dir",
                "talos.read_file",
                "talos.write_file",
            ],
            "mutation apply surface",
        );
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
