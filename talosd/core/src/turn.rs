//! The turn as a sans-IO state machine. The daemon gives it facts (the model's reply, a call's
//! result, an approval's answer, the verifier's findings) and gets back what to do next: which
//! route the turn takes ([`route`]), what each proposed call needs ([`call::Call::step`] returns
//! one [`call::Effect`] at a time), when the loop stops and the phase moves ([`model`]), and
//! what the final answer and outcome are ([`finish`]). Everything the turn decides and does is
//! kept in its [`record::TurnRecord`], which the daemon turns into the wire trace in one place.
//! The daemon performs effects and reports results; it holds no `if` about policy.

pub mod call;
pub mod conversation;
pub mod finish;
pub mod listing;
pub mod machine;
pub mod model;
pub mod obligation;
pub mod pins;
pub mod record;
pub mod route;
mod screen;
pub mod view;
pub mod web;

use crate::planning::modes::SessionMode;
use crate::planning::plan::{Phase, TurnPlan};
use crate::planning::surface::Surface;
use crate::planning::tools::ToolId;
use crate::proposal::discipline::LoopGuard;
use crate::proposal::ladder::{Grants, PermissionDecision};
use crate::proposal::rules::Rule;
use record::{PermissionRecord, TurnRecord};

/// What the person is told while the turn runs; the daemon turns each into a turn event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    ToolProgress {
        tool: String,
        call_id: String,
        message: String,
    },
    Info(String),
    Ok(String),
    /// Shown to the person as trusted information (never to the model).
    TrustedInfo(String),
    /// The plan's steps, told once when the turn starts.
    Plan(Vec<crate::planning::plan::PlanStep>),
    /// A failure the runtime reports (the model server, a pin refused, the context).
    Error(String),
    /// The project's instruction files the turn uses: told first, before the plan.
    Instructions(Vec<crate::request::instructions::Used>),
    /// One model call's use of the context, after its reply.
    Usage {
        model_call: usize,
        prompt_tokens: u64,
        cached_tokens: Option<u64>,
        completion_tokens: Option<u64>,
        context_tokens: u64,
    },
    /// Where one proposed call stands: running once its checks passed, then how it ended.
    Call {
        call_id: String,
        /// The tool as the model named it.
        tool: String,
        status: CallStatus,
        /// The workspace-relative target (protected names hidden), when the call has one.
        target: Option<String>,
        /// Why it was rejected, denied or failed.
        reason: Option<String>,
    },
}

/// Where one call stands, from the turn's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallStatus {
    /// Past the checks and the ladder's refusal; it may still ask for approval.
    Running,
    Completed,
    Failed,
    /// Refused by a check or the loop's discipline before it ran.
    Rejected,
    /// Denied by the policy or by the person.
    Denied,
}

impl CallStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CallStatus::Running => "running",
            CallStatus::Completed => "completed",
            CallStatus::Failed => "failed",
            CallStatus::Rejected => "rejected",
            CallStatus::Denied => "denied",
        }
    }
}

/// The turn's settings from the daemon's configuration and the session.
#[derive(Debug, Clone)]
pub struct TurnSettings {
    pub mode: SessionMode,
    /// Tool names must be canonical (no aliases).
    pub strict_names: bool,
    /// Configured permission rules.
    pub rules: Vec<Rule>,
    /// Ask the model for a tool call on the first request when the plan needs one.
    pub require_tool_call: bool,
    /// Let a proposed path hold bidirectional, zero-width or invisible characters (they are
    /// refused before approval otherwise; `permissions.allow_invisible_path_characters`).
    pub allow_invisible_path_characters: bool,
    /// How the model is asked: native calls, the constraint, the pre-read, the budget.
    pub model: machine::ModelSettings,
    /// How many `hooks.pre_call` hooks are configured (each call asks them all).
    pub pre_call_hooks: usize,
}

/// One turn in flight.
#[derive(Debug, Clone)]
pub struct Turn {
    pub plan: TurnPlan,
    pub settings: TurnSettings,
    pub phase: Phase,
    /// The turn's record: written only by the core (read it with [`Turn::record`]).
    pub(crate) record: TurnRecord,
    /// The session's remembered approvals, as they stand for the next call.
    pub grants: Grants,
    guard: LoopGuard,
    calls: u64,
    notices: Vec<Notice>,
    retried: obligation::Retried,
    /// During the one web repair round: the only files a change may touch.
    repair_files: Option<Vec<String>>,
    /// The first mutation record of the repair round.
    repair_from: usize,
    /// A constrained reply was held back (its text is JSON, read out as prose afterwards).
    held_constrained: bool,
    /// The whole turn's state machine ([`Turn::step`]).
    machine: machine::Machine,
    /// Each changed file as it was before this turn first changed it (the literal check).
    originals: std::collections::BTreeMap<String, Option<String>>,
    /// The project's instructions as the model is shown them ([`Turn::with_instructions`]).
    instructions: Option<String>,
    /// The MCP tools this turn offers ([`Turn::with_external`]).
    pub(crate) external: Vec<crate::proposal::mcp::ExternalTool>,
    /// The workspace's absolute path, against which MCP arguments' paths are placed (empty:
    /// unknown, and every such path is outside).
    pub(crate) external_root: String,
}

impl Turn {
    pub fn new(plan: TurnPlan, settings: TurnSettings, grants: Grants) -> Turn {
        let guard = LoopGuard::new(plan.surface());
        let phase = plan.initial_phase();
        let mut record = TurnRecord::default();
        record.facts.mutation_requested = plan.contract().mutation_requested;
        record.facts.mutation_allowed = plan.contract().mutation_allowed;
        let notices = vec![Notice::Plan(crate::planning::plan::steps(&plan))];
        Turn {
            plan,
            settings,
            phase,
            record,
            grants,
            guard,
            calls: 0,
            notices,
            retried: obligation::Retried::default(),
            repair_files: None,
            repair_from: 0,
            held_constrained: false,
            machine: machine::Machine::default(),
            originals: std::collections::BTreeMap::new(),
            instructions: None,
            external: Vec::new(),
            external_root: String::new(),
        }
    }

    /// The turn's record, as it stands.
    pub fn record(&self) -> &TurnRecord {
        &self.record
    }

    /// The record for table rows that set up facts directly. The daemon never calls it (a
    /// tidy test holds that): its facts reach the core as inputs.
    #[doc(hidden)]
    pub fn record_for_rows(&mut self) -> &mut TurnRecord {
        &mut self.record
    }

    /// Takes the files the outcome lists (once the turn is over).
    pub fn take_files(&mut self) -> Vec<record::FileResult> {
        std::mem::take(&mut self.record.files)
    }

    /// Takes the task verifier's findings (once the turn is over).
    pub fn take_findings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.record.facts.task_findings)
    }

    /// The next call id (`call-1`, `call-2`, ...).
    pub fn next_call_id(&mut self) -> String {
        self.calls += 1;
        format!("call-{}", self.calls)
    }

    /// Starts a proposed call; drive it with [`call::Call::step`] from [`call::Input::Start`].
    pub fn propose(&mut self, proposal: call::Proposal) -> call::Call {
        let id = self.next_call_id();
        call::Call::new(id, proposal)
    }

    /// The surface of the current phase.
    pub fn surface(&self) -> Surface {
        self.plan.surface_for(self.phase)
    }

    /// Notices queued since the last drain, in order.
    pub fn drain_notices(&mut self) -> Vec<Notice> {
        std::mem::take(&mut self.notices)
    }

    pub(crate) fn notify(&mut self, notice: Notice) {
        self.notices.push(notice);
    }

    /// Records a permission decision.
    pub fn permission(
        &mut self,
        call_id: &str,
        tool: ToolId,
        decision: &PermissionDecision,
        relative_path: Option<String>,
    ) {
        self.record.permission_decisions.push(PermissionRecord {
            call_id: call_id.to_string(),
            tool: tool.name().into(),
            action: decision.action,
            reason_code: decision.reason_code.to_string(),
            // A path with hidden characters (allowed by the configuration) is kept escaped.
            relative_path: relative_path.map(|p| crate::text::deceptive::escaped(&p)),
            remember_eligible: decision.remember_eligible,
        });
    }
}

impl Turn {
    /// The ladder's decision for `auto` mode's deterministic viewer (a read in INSPECT),
    /// recorded.
    pub fn viewer_permission(
        &mut self,
        call_id: &str,
        tool: ToolId,
        facts: &crate::text::protected::PathFacts,
    ) -> PermissionDecision {
        let decision = crate::proposal::ladder::decide(
            &crate::proposal::ladder::LadderInput {
                tool,
                risk: tool.risk(),
                phase: Phase::Inspect,
                rules: &self.settings.rules,
                grants: self.grants,
            },
            facts,
        );
        let mut recorded = decision.clone();
        recorded.remember_eligible = false;
        self.permission(call_id, tool, &recorded, facts.relative.clone());
        decision
    }
}
