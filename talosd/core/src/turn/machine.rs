//! The whole turn as one sans-IO state machine (issue 23): [`Turn::step`] takes the answer
//! to the last effect and returns the next, in the fixed order of a turn: the route, the model
//! server's facts, pins, the index's hint, the named files and the runtime's own reads, then
//! model requests (each assembled within the context budget), the calls each reply proposes
//! (through the nested call machine), the obligation retry, the static web check and its one
//! repair round, and the end. The daemon performs each [`TurnEffect`] and reports its result
//! as a [`TurnInput`]; it decides nothing.

mod preread;
mod reply;
mod request;

use std::collections::VecDeque;

use crate::planning::budget::{Kind, Limits};
use crate::planning::prompt::ToolCalling;
use crate::planning::retrieval::{self, Hit, Retrieval};
use crate::planning::tools::ToolId;
use crate::proposal::constrain::Level;

use super::Turn;
use super::call::{self, Call, Proposal};
use super::conversation::{Conversation, EarlierTurn, Entry, Message, Role};
use super::finish::Final;
use super::model::NativeCall;
use super::record::{CallingRecord, WarningCode};
use super::route::{self, PriorRecord, Route};
use super::view::View;

/// What the model server said about itself before the first request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerFacts {
    /// Its chat template can call tools natively.
    pub native_tools: bool,
    /// The context of one request (one slot), when the server says.
    pub n_ctx: Option<u64>,
    /// An OpenAI-compatible server, not llama.cpp: its JSON-schema decoding is taken to handle
    /// the `names` level's schemas, not the strict level's long enums.
    pub openai: bool,
}

/// Why the model server could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerProblem {
    /// The managed server has not loaded (or failed to start).
    NotReady(String),
    /// Nothing answered at the configured address.
    Unreachable(String),
    /// The server answered and refused the request for its key (HTTP 401 or 403).
    Refused(String),
}

/// A named file as the daemon found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedFile {
    pub path: String,
    /// A regular file inside the workspace.
    pub file: bool,
    /// Its text when it is UTF-8 and at most the pre-read cap.
    pub small_text: Option<String>,
}

/// A model reply as the engine received it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelReply {
    pub content: String,
    pub tool_calls: Vec<NativeCall>,
    pub finish_reason: String,
    pub prompt_tokens: Option<u64>,
    pub completion_tokens: Option<u64>,
    pub cached_tokens: Option<u64>,
}

/// Why a model request failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFailure {
    /// The server said the prompt does not fit its context, with its own numbers.
    ContextExceeded {
        prompt_tokens: Option<u64>,
        n_ctx: Option<u64>,
        message: String,
    },
    Other(String),
}

/// What the daemon counts in tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Countable {
    Text(String),
    /// The native tool definitions of these tools, as the request carries them.
    Tools(Vec<ToolId>),
}

/// One model request, assembled by the core.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub index: usize,
    /// The system message first.
    pub messages: Vec<Message>,
    /// Offered as native `tools` (empty when calls are written as text).
    pub tools: Vec<ToolId>,
    /// The MCP tools offered, as native tool definitions (empty when calls are written as
    /// text: the system text lists them then).
    pub external_tools: Vec<serde_json::Value>,
    pub tool_choice_required: bool,
    /// The decoding constraint (`crate::proposal::constrain`).
    pub schema: Option<serde_json::Value>,
    /// Read the reply to its end without streaming its text (the guards decide it first).
    pub hold: bool,
    /// The context the request may use, and what the core counted for its prompt.
    pub context_tokens: u64,
    pub prompt_tokens: u64,
}

/// The answer to the last [`TurnEffect`].
#[derive(Debug, Clone, PartialEq)]
pub enum TurnInput {
    Start,
    Server(Result<ServerFacts, ServerProblem>),
    /// Each pin's shown path and bytes, or why it could not be read.
    Pinned(Vec<Result<(String, Vec<u8>), String>>),
    /// The index's hits and the ignore files its walk did not read.
    Retrieved(Retrieval),
    Named(Vec<NamedFile>),
    /// One count per item asked, or `None` when the server has no tokenizer.
    Counted(Option<Vec<u64>>),
    Replied(ModelReply),
    ModelFailed(ModelFailure),
    /// The reply stream stopped because the turn was cancelled.
    Interrupted,
    /// The answer to the nested call's (or viewer's) effect.
    Call(call::Input),
    /// The static web verifier's report (`None`: no web file to check).
    Web(Option<super::web::WebReport>),
}

/// What the daemon must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEffect {
    /// Wait for the model server and read its facts; answer [`TurnInput::Server`].
    Probe,
    /// Read the pinned files; answer [`TurnInput::Pinned`].
    Pin(Vec<String>),
    /// Search the workspace index; answer [`TurnInput::Retrieved`].
    Retrieve { query: String },
    /// Which named `paths` are regular files, with the text of those in `read` that are UTF-8
    /// and at most `read_cap` bytes; answer [`TurnInput::Named`].
    Inspect {
        paths: Vec<String>,
        read: Vec<String>,
        read_cap: u64,
    },
    /// Count tokens; answer [`TurnInput::Counted`].
    Count(Vec<Countable>),
    /// Send a model request; answer [`TurnInput::Replied`], [`TurnInput::ModelFailed`] or
    /// [`TurnInput::Interrupted`].
    Request(ModelRequest),
    /// The nested call's effect; answer [`TurnInput::Call`].
    Call {
        call_id: String,
        effect: call::Effect,
    },
    /// Run the static web verifier on these files; answer [`TurnInput::Web`].
    WebCheck { focus: Vec<String> },
    /// The turn is over.
    Finish(Final),
}

/// A fact of IO that stops the turn's loop at its next decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    /// `turn/cancel`, or the daemon is stopping.
    Cancelled,
    /// The client that started the turn went away.
    ClientGone,
}

/// The model-side settings of a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelSettings {
    /// `tools.native_calling`: offer native tool calls when the server can take them.
    pub native_calling: bool,
    /// `model.constrain` in force.
    pub constrain: Level,
    /// `turn.preread_max_bytes` (0: no pre-read).
    pub preread_max_bytes: u64,
    /// `model.ctx_per_request`: the context of one request when the server does not say.
    pub ctx_per_request: u64,
    /// `model.reply_tokens`: tokens kept for the reply.
    pub reply_tokens: u64,
}

impl Default for ModelSettings {
    fn default() -> ModelSettings {
        ModelSettings {
            native_calling: true,
            constrain: Level::Off,
            preread_max_bytes: 0,
            ctx_per_request: 4096,
            reply_tokens: 512,
        }
    }
}

/// Where the turn is.
#[derive(Debug, Clone, Default)]
pub(crate) enum Stage {
    #[default]
    Start,
    Viewing,
    Probing,
    Pinning,
    Retrieving,
    Inspecting,
    /// The runtime reads the named targets itself, one call each.
    PreReading(Vec<(String, String)>),
    Counting,
    Requesting,
    /// The calls of the last reply.
    Calling,
    /// The static web check: whether a repair round may follow, and whether it ran.
    Checking {
        repairable: bool,
    },
    Done,
}

impl Default for Machine {
    fn default() -> Machine {
        Machine {
            stage: Stage::default(),
            prior: None,
            earlier: Vec::new(),
            calling: None,
            level: Level::Off,
            conversation: None,
            readable: Vec::new(),
            read_texts: Vec::new(),
            constrained: false,
            next: 0,
            end: 0,
            limits: None,
            scale: (1, 1),
            overflow_retried: None,
            counted_system: None,
            counted_tools: None,
            counting: Vec::new(),
            active: Active::default(),
            queue: VecDeque::new(),
            round: Round::default(),
            interrupt: None,
            answer: String::new(),
            diagnostics: None,
            repairing: false,
            finished: None,
            instructions_cut_told: false,
        }
    }
}

/// What the nested machine is.
#[derive(Debug, Clone, Default)]
pub(crate) enum Active {
    #[default]
    None,
    /// A call the model proposed, or a runtime read (with the path and its text).
    Call(Box<Call>, Option<(String, String)>),
    View(View),
}

/// The machine's state besides the turn's record.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    pub stage: Stage,
    pub prior: Option<PriorRecord>,
    pub earlier: Vec<EarlierTurn>,
    pub calling: Option<ToolCalling>,
    /// The constraint level in force for this server (`strict` is `names` on an OpenAI one).
    pub level: Level,
    pub conversation: Option<Conversation>,
    pub readable: Vec<String>,
    pub read_texts: Vec<(String, String)>,
    pub constrained: bool,
    /// The next model call's index, and the index the loop stops at.
    pub next: usize,
    pub end: usize,
    pub limits: Option<Limits>,
    /// Counts are multiplied by `scale.0 / scale.1` (the server's own count against ours,
    /// after it said a prompt was too long).
    pub scale: (u64, u64),
    /// The request index whose overflow was retried.
    pub overflow_retried: Option<usize>,
    pub counted_system: Option<(String, u64)>,
    pub counted_tools: Option<(Vec<ToolId>, u64)>,
    /// What each count in flight is for, and its estimate should the daemon have none.
    pub counting: Vec<(CountSlot, u64)>,
    pub active: Active,
    pub queue: VecDeque<Proposal>,
    pub round: Round,
    pub interrupt: Option<Interrupt>,
    /// The model's answer once the loop ended, and the repair round's.
    pub answer: String,
    pub diagnostics: Option<String>,
    /// In the one web repair round.
    pub repairing: bool,
    /// The end, once decided (a step after it gives it again).
    pub finished: Option<Final>,
    /// Whether the person was told the project's instructions were cut to fit the context.
    pub instructions_cut_told: bool,
}

/// What a count in flight is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CountSlot {
    System(String),
    Tools(Vec<ToolId>),
    /// The entry at this position of `Conversation::entries`.
    Entry(usize),
}

/// The reply being dispatched.
#[derive(Debug, Clone, Default)]
pub(crate) struct Round {
    pub index: usize,
    pub surface: Option<crate::planning::surface::Surface>,
    /// What the budget cut from the request.
    pub cut: Vec<String>,
    pub native: bool,
    pub broken_note: bool,
    pub stop: Option<String>,
    /// The request as sent, for the record and the usage notice.
    pub request: Option<ModelRequest>,
    /// The calls of this reply run so far (name and arguments): an identical one later in
    /// the same reply is answered, not run again (issue 27).
    pub ran: Vec<(
        String,
        Result<std::collections::BTreeMap<String, String>, String>,
    )>,
    /// Whether a call of this reply changed a file.
    pub mutated: bool,
}

impl Turn {
    /// The session's context for this turn: the previous outcome (for a status question) and
    /// the earlier turns the conversation carries.
    pub fn with_context(mut self, prior: Option<PriorRecord>, earlier: Vec<EarlierTurn>) -> Turn {
        self.machine.prior = prior;
        self.machine.earlier = earlier;
        self
    }

    /// A fact of IO the daemon saw: the loop stops at its next decision.
    pub fn interrupt(&mut self, cause: Interrupt) {
        if cause == Interrupt::Cancelled {
            self.record.facts.cancelled = true;
        }
        self.machine.interrupt.get_or_insert(cause);
    }

    /// The next effect, given the answer to the last one.
    pub fn step(&mut self, input: TurnInput) -> TurnEffect {
        let stage = std::mem::take(&mut self.machine.stage);
        match (stage, input) {
            (Stage::Start, TurnInput::Start) => self.start(),
            (Stage::Viewing, TurnInput::Call(input)) => self.view_step(input),
            (Stage::Probing, TurnInput::Server(server)) => self.probed(server),
            (Stage::Pinning, TurnInput::Pinned(pins)) => self.pinned(pins),
            (Stage::Retrieving, TurnInput::Retrieved(found)) => {
                self.record.unread_ignore_files(&found.unread_ignore_files);
                self.retrieved(found.hits)
            }
            (Stage::Inspecting, TurnInput::Named(files)) => self.inspected(files),
            (Stage::PreReading(queue), TurnInput::Call(input)) => self.preread_step(queue, input),
            (Stage::Counting, TurnInput::Counted(counts)) => self.counted(counts),
            (Stage::Requesting, TurnInput::Replied(reply)) => self.replied(reply),
            (Stage::Requesting, TurnInput::ModelFailed(failure)) => self.failed(failure),
            (Stage::Requesting, TurnInput::Interrupted) => {
                self.interrupt(Interrupt::Cancelled);
                self.loop_over(String::new())
            }
            (Stage::Calling, TurnInput::Call(input)) => self.call_step(input),
            (Stage::Checking { repairable }, TurnInput::Web(report)) => {
                self.web_checked(repairable, report)
            }
            (Stage::Done, _) => match self.machine.finished.clone() {
                Some(done) => {
                    self.machine.stage = Stage::Done;
                    TurnEffect::Finish(done)
                }
                None => self.conclude_now(),
            },
            (stage, input) => self.unexpected(stage, &input),
        }
    }

    /// An input the stage does not expect is a bug in the daemon: the turn ends with what it
    /// has, recorded, and nothing more is done.
    fn unexpected(&mut self, stage: Stage, input: &TurnInput) -> TurnEffect {
        self.record.warn(
            WarningCode::ToolLoopStopped,
            format!("internal: the turn got {input:?} in {stage:?}; it stopped"),
        );
        self.machine.interrupt = Some(Interrupt::Cancelled);
        self.conclude_now()
    }

    fn conclude_now(&mut self) -> TurnEffect {
        self.settle();
        let answer = std::mem::take(&mut self.machine.answer);
        let done = self.finish(&answer, None);
        self.machine.finished = Some(done.clone());
        self.machine.stage = Stage::Done;
        TurnEffect::Finish(done)
    }

    fn start(&mut self) -> TurnEffect {
        let request = self.plan.original_request().to_string();
        let route = route::route(
            self.settings.mode,
            &self.plan,
            &request,
            self.machine.prior.is_some(),
        );
        if route != Route::Model {
            self.record.tool_calling = CallingRecord::None;
        }
        // The viewer's report quotes files, so the guards still read it; every other route
        // below answers in the runtime's own words.
        self.record.facts.runtime_answer = !matches!(route, Route::Model | Route::Viewer(_));
        match route {
            Route::Viewer(command) => {
                let view = View::new(self, &command);
                self.machine.active = Active::View(view);
                self.view_step(call::Input::Start)
            }
            Route::StatusFromRecords => {
                let answer = self
                    .machine
                    .prior
                    .as_ref()
                    .map(route::status_from_records)
                    .unwrap_or_default();
                self.end(answer)
            }
            Route::ChangesFromRecords(scope) => {
                let answer = route::changes_from_records(&self.machine.earlier, scope);
                self.end(answer)
            }
            Route::Fixed(text) => self.end(text.to_string()),
            Route::Ambiguous(text) => {
                self.record.facts.contract_ambiguous = true;
                self.end(text)
            }
            Route::UnreadableDocuments(documents) => {
                let message = format!("{} cannot be read by the text tools", documents.join(", "));
                self.record.warn(WarningCode::DocumentNotReadable, message);
                let answer = route::document_note(&documents);
                self.record.facts.unreadable_documents = documents;
                self.end(answer)
            }
            Route::Model => {
                self.machine.stage = Stage::Probing;
                TurnEffect::Probe
            }
        }
    }

    fn view_step(&mut self, input: call::Input) -> TurnEffect {
        let Active::View(mut view) = std::mem::take(&mut self.machine.active) else {
            return self.end(String::new());
        };
        match view.step(self, input) {
            call::Effect::Finish(report) => self.end(report.text),
            effect => {
                let call_id = view.id().to_string();
                self.machine.active = Active::View(view);
                self.machine.stage = Stage::Viewing;
                TurnEffect::Call { call_id, effect }
            }
        }
    }

    fn probed(&mut self, server: Result<ServerFacts, ServerProblem>) -> TurnEffect {
        let facts = match server {
            Ok(facts) => facts,
            // Without native calling nothing needed the server's answer: the first request
            // finds out whether it is there.
            Err(ServerProblem::Unreachable(_)) if !self.settings.model.native_calling => {
                ServerFacts::default()
            }
            Err(problem) => return self.server_failed(problem),
        };
        let calling = if self.settings.model.native_calling && facts.native_tools {
            ToolCalling::Native
        } else {
            ToolCalling::Text
        };
        self.record.tool_calling = match calling {
            ToolCalling::Native => CallingRecord::Native,
            ToolCalling::Text => CallingRecord::Text,
        };
        self.machine.calling = Some(calling);
        self.machine.level = match (facts.openai, self.settings.model.constrain) {
            (true, Level::Strict) => Level::Names,
            (_, level) => level,
        };
        self.machine.limits = Some(Limits {
            context: facts.n_ctx.unwrap_or(self.settings.model.ctx_per_request),
            reply: self.settings.model.reply_tokens,
        });
        self.machine.scale = (1, 1);
        self.machine.end = self.plan.iteration_budget();
        self.machine.conversation = Some(self.opening());
        let pins = self.plan.pinned().to_vec();
        if pins.is_empty() {
            return self.pinned(Vec::new());
        }
        self.machine.stage = Stage::Pinning;
        TurnEffect::Pin(pins)
    }

    fn server_failed(&mut self, problem: ServerProblem) -> TurnEffect {
        self.record.facts.model_failed = true;
        let (code, reason, answer) = match problem {
            ServerProblem::NotReady(reason) => (
                WarningCode::ModelNotReady,
                reason.clone(),
                format!("The model server is not available: {reason}"),
            ),
            ServerProblem::Unreachable(reason) => (
                WarningCode::ModelUnreachable,
                reason.clone(),
                format!("The model server could not be reached: {reason}"),
            ),
            ServerProblem::Refused(reason) => (
                WarningCode::ModelRefused,
                reason.clone(),
                format!("The model was not asked: {reason}."),
            ),
        };
        self.record.warn(code, reason.clone());
        self.notify(super::Notice::Error(reason));
        self.end(answer)
    }

    /// The conversation before any file is read: the earlier turns and the request.
    fn opening(&self) -> Conversation {
        let request = self.plan.original_request().to_string();
        Conversation {
            instructions: self.instructions_entry(),
            history: self
                .machine
                .earlier
                .iter()
                .map(super::conversation::earlier_entry)
                .collect(),
            request: Some(Entry::new(
                Kind::Request,
                vec![Message::new(Role::User, request)],
                None,
            )),
            ..Conversation::default()
        }
    }

    fn pinned(&mut self, pins: Vec<Result<(String, Vec<u8>), String>>) -> TurnEffect {
        let mut blocks = Vec::new();
        for pin in pins {
            match pin.and_then(|(shown, bytes)| self.pin(&shown, bytes)) {
                Ok(block) => blocks.push(block),
                Err(message) => self.notify(super::Notice::Error(message)),
            }
        }
        if !blocks.is_empty()
            && let Some(conversation) = self.machine.conversation.as_mut()
        {
            conversation.pins = Some(Entry::new(
                Kind::Pins,
                vec![Message::new(Role::User, blocks.join("\n\n"))],
                Some("[The pinned files were left out of this request: they do not fit the model's context.]".into()),
            ));
        }
        let contract = self.plan.contract();
        let named = contract.expected_targets.len() + contract.source_evidence_targets.len();
        if retrieval::retrieves_first(
            contract.task_type,
            contract.mutation_requested,
            named,
            self.plan.surface().allows(ToolId::Search),
        ) {
            self.machine.stage = Stage::Retrieving;
            return TurnEffect::Retrieve {
                query: self.plan.original_request().to_string(),
            };
        }
        self.retrieved(None)
    }

    fn retrieved(&mut self, hits: Option<Vec<Hit>>) -> TurnEffect {
        let hint = hits.and_then(|hits| retrieval::hint(self.plan.original_request(), &hits));
        if let (Some(hint), Some(conversation)) = (hint, self.machine.conversation.as_mut()) {
            conversation.retrieval = Some(Entry::new(
                Kind::Retrieval,
                vec![Message::new(Role::User, hint)],
                None,
            ));
        }
        let contract = self.plan.contract();
        let mut paths: Vec<String> = Vec::new();
        for path in contract
            .expected_targets
            .iter()
            .chain(contract.source_evidence_targets.iter())
        {
            if !paths.contains(path) {
                paths.push(path.clone());
            }
        }
        self.machine.stage = Stage::Inspecting;
        TurnEffect::Inspect {
            paths,
            read: self.preread_candidates(),
            read_cap: self.settings.model.preread_max_bytes,
        }
    }
}
