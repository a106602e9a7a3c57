//! The task contract: what a turn may do, resolved from the request by deterministic code,
//! before the model is asked anything. "Not a planner and not an LLM classifier."
//!
//! [`resolve`] runs the pipeline: blank or synthetic input is UNKNOWN; checkpoint
//! restore, workspace switch and tool-alias questions are answered directly; the mutation
//! intent (`contract/mutation.rs`) decides whether the person asked for a change and why; the
//! task type follows (`contract/classify.rs`); targets are extracted with their negations and
//! evidence roles (`targets`); the roleful intent (`intent`) may sharpen the contract, and the
//! contract's target lists are always compiled back from that roleful list.

mod classify;
mod commands;
mod cues;
mod direct;
mod documents;
mod files;
/// The lexical toolkit moved to [`crate::text::lexical`]; the name stays here for the resolver's parts.
pub(crate) use crate::text::lexical;
pub use direct::asks_about_talos;
mod mutation;
mod questions;
mod read_only;
mod readings;
mod replacement;
mod web;
mod words;

use crate::request::change::ChangeAsk;
pub use crate::request::change::exact_literal;
use crate::request::intent::{self, TargetRef};
use crate::request::targets::{self, dedup};
pub(crate) use crate::request::task::Legacy;
pub use crate::request::task::{Reason, TaskType};
use crate::text::lexical::Lex;
pub use commands::{
    CommandAsk, WorkspaceCommands, after_change_run, available_profiles, with_workspace,
};
pub use files::{Choice, Reading, choose, names_to_find, with_files};
pub use readings::{ONLY_A_QUESTION, Readings, readings};
pub use replacement::{
    replacement, reversed as reversed_replacement, with_values as with_replacement_values,
};
pub use web::{
    NamedInteraction, WebRequest, has_default_web_targets, reconcile_default_web_targets,
    web_request,
};

/// What a static page must keep and must not grow (one of the contract's components; see
/// docs/decisions/0010-contract-components.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StaticWebRequirements {
    /// Facts listed after "preserve|keep|retain … facts|details|content:" (≤40, ≤120 chars).
    pub required_visible_facts: Vec<String>,
    /// The forbidden targets, as artifacts the page must not reference or create.
    pub forbidden_artifacts: Vec<String>,
}

/// What a turn may do. Built only by [`resolve`] (or `history::resolve_in_context`) and
/// rewritten only by the posture. The three target lists are compiled from `roleful_targets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskContract {
    pub task_type: TaskType,
    pub mutation_requested: bool,
    pub mutation_allowed: bool,
    pub verification_required: bool,
    pub expected_targets: Vec<String>,
    pub source_evidence_targets: Vec<String>,
    pub forbidden_targets: Vec<String>,
    pub original_request: String,
    /// Why the resolver decided what it did.
    pub reason: Reason,
    /// A read-only posture capped the contract (the mode allows no change).
    pub read_only_posture: bool,
    pub static_web: StaticWebRequirements,
    pub roleful_targets: Vec<TargetRef>,
    /// What the request says about web work, for the static web verifier (`contract/web.rs`).
    pub web: WebRequest,
    /// The command profile the request asks for in plain words, decided against the
    /// workspace by [`with_workspace`] (`contract/commands.rs`); `None` until then.
    pub command: CommandAsk,
    /// The change the request's words name fully (`crate::request::change`), for a change
    /// request only: what the constraint offers and the verifier checks.
    pub change: Option<ChangeAsk>,
    /// Whether the words decide the contract's kind, or the person must choose
    /// (`contract/files.rs`); decided against the workspace by [`with_files`].
    pub reading: Reading,
}

impl TaskContract {
    /// The reason as the trace states it: the resolver's reason, then what a posture added
    /// (`explicit-mutation-marker; capability-posture-read-only`).
    pub fn classification_reason(&self) -> String {
        if self.read_only_posture {
            format!("{}; capability-posture-read-only", self.reason.as_str())
        } else {
            self.reason.as_str().to_string()
        }
    }

    /// Whether the reason is an inherited follow-up (the turn continues an earlier one).
    pub fn is_inherited(&self) -> bool {
        matches!(
            self.reason,
            Reason::ConfirmationInherited
                | Reason::RepairInherited
                | Reason::CorrectionInherited
                | Reason::DeicticInherited
                | Reason::RevertInherited
        )
    }

    /// A contract whose target lists are compiled from `roleful_targets`, with the flags
    /// derived from the type: allowed = requested and FILE_EDIT|FILE_CREATE, verification =
    /// allowed or VERIFY_ONLY.
    pub(crate) fn compiled(
        task_type: TaskType,
        mutation_requested: bool,
        original_request: String,
        reason: Reason,
        static_web_facts: Vec<String>,
        roleful_targets: Vec<TargetRef>,
    ) -> TaskContract {
        let mutation_allowed = mutation_requested && task_type.mutates();
        let compiled = intent::compile(&roleful_targets, mutation_requested);
        let web = web::web_request(&original_request, &compiled.expected);
        let change = mutation_allowed
            .then(|| crate::request::change::read(&original_request, &compiled.expected))
            .flatten();
        TaskContract {
            task_type,
            mutation_requested,
            mutation_allowed,
            verification_required: mutation_allowed || task_type == TaskType::VerifyOnly,
            static_web: StaticWebRequirements {
                required_visible_facts: static_web_facts,
                forbidden_artifacts: compiled.forbidden.clone(),
            },
            expected_targets: compiled.expected,
            source_evidence_targets: compiled.source_evidence,
            forbidden_targets: compiled.forbidden,
            original_request,
            reason,
            read_only_posture: false,
            roleful_targets,
            web,
            command: CommandAsk::None,
            change,
            reading: Reading::Settled,
        }
    }
}

/// Resolves a request into a task contract.
pub fn resolve(request: &str) -> TaskContract {
    let text = lexical::normalise(request);
    if text.is_empty() || is_synthetic(&text) {
        return TaskContract::compiled(
            TaskType::Unknown,
            false,
            request.to_string(),
            Reason::Unknown,
            Vec::new(),
            Vec::new(),
        );
    }
    let lower = text.to_ascii_lowercase();
    let unquoted = lexical::blank_quotes(&lower);
    let lex = Lex::new(&text, &lower);
    let intent_lex = Lex::new(&text, &unquoted);
    let spans = targets::target_spans(&lex);
    let legacy = legacy(&lex, &intent_lex, &spans);
    let derived = intent::derive(&legacy, &lex, &spans);
    TaskContract::compiled(
        derived.task_type,
        derived.requested,
        request.to_string(),
        derived.reason,
        targets::required_visible_facts(&lex),
        documents::readable_fallback(&lex, &spans, derived.targets),
    )
}

/// Synthetic tool-result messages are never user requests.
fn is_synthetic(text: &str) -> bool {
    ["[tool_result:", "[compacted:", "[tool_result]"]
        .iter()
        .any(|p| text.starts_with(p))
}

fn legacy(lex: &Lex<'_>, intent_lex: &Lex<'_>, spans: &[targets::TargetSpan]) -> Legacy {
    let named = dedup(spans.iter().map(|s| s.path.clone()));
    let mut out = Legacy {
        task_type: TaskType::SmallTalk,
        requested: false,
        allowed: false,
        reason: Reason::NonMutating,
        expected: Vec::new(),
        outputs: Vec::new(),
        defaults: Vec::new(),
        sources: Vec::new(),
        forbidden: Vec::new(),
        preserved: Vec::new(),
        named: named.clone(),
    };
    let direct = if classify::checkpoint_restore(lex) {
        Some((TaskType::CheckpointRestore, Reason::CheckpointRestore))
    } else if classify::workspace_switch(lex) {
        Some((TaskType::SmallTalk, Reason::WorkspaceSwitch))
    } else if classify::tool_alias_question(lex) {
        Some((TaskType::SmallTalk, Reason::ToolAlias))
    } else {
        None
    };
    if let Some((task_type, reason)) = direct {
        out.task_type = task_type;
        out.reason = reason;
        return out;
    }
    let meta = classify::session_meta_evidence(lex, !spans.is_empty());
    let uncertainty = classify::session_uncertainty(lex);
    let status = questions::is_status_question(intent_lex);
    let reason = mutation::reason(intent_lex, spans);
    let requested = !meta && !uncertainty && !status && reason.is_mutation();
    let command = (!meta && !uncertainty && !status && !requested)
        .then(|| classify::command_verification(lex, spans))
        .flatten();
    (out.task_type, out.reason) = if meta {
        (TaskType::VerifyOnly, Reason::SessionMetaEvidence)
    } else if uncertainty {
        (TaskType::VerifyOnly, Reason::SessionUncertainty)
    } else if status {
        (TaskType::VerifyOnly, reason)
    } else if let Some(command) = command {
        (TaskType::VerifyOnly, command)
    } else if requested {
        (classify::mutation_type(intent_lex, reason), reason)
    } else {
        (classify::read_only_type(lex, spans), reason)
    };
    out.requested = requested;
    out.allowed = requested && out.task_type.mutates();
    out.forbidden = targets::forbidden_in(lex, spans);
    out.preserved = targets::preserved_in(lex, spans);
    out.expected = dedup(named.into_iter().chain(targets::directory_targets(lex)));
    if requested {
        mutation_targets(&mut out, lex, spans);
    }
    let read_forbidden = targets::read_forbidden_in(lex, spans);
    out.expected.retain(|t| !read_forbidden.contains(t));
    out.sources.retain(|t| !read_forbidden.contains(t));
    out
}

/// Outputs, batch destinations, source evidence and conventional targets of a mutation turn.
fn mutation_targets(out: &mut Legacy, lex: &Lex<'_>, spans: &[targets::TargetSpan]) {
    if let Some(artifact) = targets::source_to_outputs(lex, spans) {
        out.expected.retain(|t| !artifact.sources.contains(t));
        out.expected.retain(|t| !artifact.outputs.contains(t));
        out.sources = artifact.sources;
        out.outputs = artifact.outputs;
    }
    let destinations = targets::operation_destinations(lex);
    if out.reason == Reason::BatchWorkspaceApply {
        let batch = dedup(
            targets::directory_targets(lex)
                .into_iter()
                .chain(destinations),
        );
        if !batch.is_empty() {
            out.expected = batch;
        }
    } else {
        out.expected = dedup(out.expected.drain(..).chain(destinations));
    }
    if !out.allowed {
        return;
    }
    let also_targets = targets::sources_are_also_targets(lex);
    let lexical_sources = targets::lexical_source_evidence(lex, spans);
    let writes_remain = |sources: &[String], forbidden: &[String], expected: &[String]| {
        expected
            .iter()
            .any(|t| !sources.contains(t) && !forbidden.contains(t))
    };
    if !lexical_sources.is_empty()
        && (!out.outputs.is_empty()
            || writes_remain(&lexical_sources, &out.forbidden, &out.expected))
    {
        out.sources = dedup(out.sources.drain(..).chain(lexical_sources.iter().cloned()));
        if !also_targets {
            out.expected.retain(|t| !lexical_sources.contains(t));
        }
    }
    if out.reason == Reason::ReadThenMutation && !also_targets {
        let reads = targets::read_then_mutation_sources(lex, spans);
        if !reads.is_empty() && writes_remain(&reads, &out.forbidden, &out.expected) {
            out.expected.retain(|t| !reads.contains(t));
            out.sources = dedup(out.sources.drain(..).chain(reads));
        }
    }
    let forbidden = out.forbidden.clone();
    out.expected.retain(|t| !forbidden.contains(t));
    if out.expected.is_empty() && out.outputs.is_empty() {
        out.defaults =
            targets::conventional_static_web_targets(lex, out.task_type == TaskType::FileCreate);
        out.defaults.retain(|t| !forbidden.contains(t));
    }
}
