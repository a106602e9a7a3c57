//! The load driver shared by the load case (`tests/tests/daemon/load.rs`) and `talos-bench load`:
//! many sessions spread over one or many connections to a running daemon, each running governed
//! edit turns one after another whose approvals the client answers at once, against a fake model
//! that reads, edits and answers. It checks, as it reads them, what the protocol promises for
//! every turn (each event's `seq` from 1 with no gap or repeat, one turn id per turn, the
//! `outcome` event last and equal to the `turn/start` response, the approval answered by the
//! client), and afterwards that the daemon's traces match the turns one for one and that every
//! workspace file holds the last edit's content exactly once. It measures each turn's time.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use talos_protocol::event::ApprovalSource;
use talos_protocol::trace::TraceRecord;
use talos_protocol::{
    ApprovalRequestParams, Classification, Decision, Message, TurnEvent, TurnEventParams,
    TurnOutcome, methods, rpc::MessageKind,
};
use tokio::sync::Barrier;

use crate::fake_llama::{Reply, Script, read_call, tool_results};
use crate::harness::Client;

/// The value of `TIMEOUT` in a workspace before its first turn.
pub const FIRST_TIMEOUT: usize = 30;

/// How the load is spread: `connections` connections, each opening
/// `sessions_per_connection` sessions, each session running `turns_per_session` edit turns one
/// after another (the sessions of a connection run at the same time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadShape {
    pub connections: usize,
    pub sessions_per_connection: usize,
    pub turns_per_session: usize,
}

/// One turn that ran and answered with an outcome, as the client saw it.
#[derive(Debug, Clone)]
pub struct TurnRun {
    pub session_id: String,
    /// The turn's position in its session, from 1.
    pub turn_number: usize,
    pub outcome: TurnOutcome,
    /// From sending `turn/start` to reading its response.
    pub elapsed: Duration,
}

/// What a load run did: every turn that finished, every broken promise, and the wall time from
/// the moment every session was open to the last response.
#[derive(Debug, Default)]
pub struct LoadRun {
    pub turns: Vec<TurnRun>,
    pub violations: Vec<String>,
    pub elapsed: Duration,
}

impl LoadShape {
    pub fn sessions(&self) -> usize {
        self.connections * self.sessions_per_connection
    }

    pub fn turns(&self) -> usize {
        self.sessions() * self.turns_per_session
    }
}

impl LoadRun {
    /// Finished turns per second of wall time.
    pub fn turns_per_second(&self) -> f64 {
        self.turns.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// The turn time at percentile `p` (0 to 100), by the nearest rank below.
    pub fn percentile(&self, p: usize) -> Duration {
        let mut times: Vec<Duration> = self.turns.iter().map(|t| t.elapsed).collect();
        times.sort();
        if times.is_empty() {
            return Duration::ZERO;
        }
        times[((times.len() - 1) * p.min(100)) / 100]
    }
}

/// The prompt of a session's `turn`-th turn (from 1): the edit from the value the previous
/// turn left to the next one.
pub fn edit_request(turn: usize) -> String {
    let from = FIRST_TIMEOUT + turn - 1;
    format!(
        "In settings.py, change TIMEOUT from {from} to {}.",
        from + 1
    )
}

/// The bytes of `settings.py` before the first turn (as [`crate::harness::timeout_workspace`]
/// writes it) and after `turns` turns.
pub fn settings_after(turns: usize) -> String {
    format!("TIMEOUT = {}\nRETRIES = 3\n", FIRST_TIMEOUT + turns)
}

/// A model that reads `settings.py`, edits the `TIMEOUT` line from and to the values the prompt
/// names, and answers, by how many tool results the request carries: any number of sessions and
/// turns can run against it at once.
pub fn edit_model() -> Script {
    Arc::new(|request: &Value| {
        let Some((from, to)) = prompt_values(request) else {
            return Reply::Text("I cannot tell which values to use.".into());
        };
        match tool_results(request) {
            0 => read_call("settings.py"),
            1 => Reply::ToolCalls(vec![(
                "talos.edit_file".into(),
                json!({"path": "settings.py", "old_string": format!("TIMEOUT = {from}"), "new_string": format!("TIMEOUT = {to}")})
                    .to_string(),
            )]),
            _ => Reply::Text(format!("Changed TIMEOUT to {to}.")),
        }
    })
}

/// The two numbers of "change TIMEOUT from A to B" in the turn's request: the last user message
/// that says it (earlier turns of the session come before it, as the conversation carries them).
fn prompt_values(request: &Value) -> Option<(usize, usize)> {
    let prompt = request["messages"]
        .as_array()?
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .find_map(|m| m["content"].as_str()?.split_once("change TIMEOUT from "))?
        .1;
    let (from, rest) = prompt.split_once(" to ")?;
    let to = rest.trim_end_matches('.');
    Some((from.parse().ok()?, to.parse().ok()?))
}

/// Runs `shape` against the daemon on `socket`; `workspaces` holds one directory per session
/// (`shape.sessions()` of them), each with `settings.py` as [`settings_after`]`(0)`. Every
/// broken promise is collected, not panicked on; a connection that stops answering for
/// `read_timeout` fails its task, which is reported as a violation.
pub async fn run(
    socket: &Path,
    shape: LoadShape,
    workspaces: &[PathBuf],
    read_timeout: Duration,
) -> LoadRun {
    assert_eq!(
        workspaces.len(),
        shape.sessions(),
        "one workspace per session"
    );
    let ready = Arc::new(Barrier::new(shape.connections + 1));
    let mut tasks = Vec::new();
    for (index, chunk) in workspaces
        .chunks(shape.sessions_per_connection.max(1))
        .enumerate()
    {
        let connection = Connection {
            index,
            socket: socket.to_path_buf(),
            workspaces: chunk.to_vec(),
            turns_per_session: shape.turns_per_session,
            read_timeout,
        };
        tasks.push(tokio::spawn(connection.drive(ready.clone())));
    }
    ready.wait().await;
    let started = Instant::now();
    let mut run = LoadRun::default();
    for (index, task) in tasks.into_iter().enumerate() {
        match task.await {
            Ok((turns, violations)) => {
                run.turns.extend(turns);
                run.violations.extend(violations);
            }
            Err(e) => run
                .violations
                .push(format!("connection {index}: its task failed: {e}")),
        }
    }
    run.elapsed = started.elapsed();
    if run.turns.len() != shape.turns() {
        run.violations.push(format!(
            "{} turns finished, {} expected",
            run.turns.len(),
            shape.turns()
        ));
    }
    run
}

/// The traces under `home/traces` against `turns`: exactly one trace file per turn, in its
/// session's folder, named and filled with that turn's ids and number, and nothing else there.
pub fn check_traces(home: &Path, turns: &[TurnRun]) -> Vec<String> {
    let mut violations = Vec::new();
    let mut expected: BTreeMap<String, &TurnRun> = turns
        .iter()
        .map(|t| (t.outcome.turn_id.clone(), t))
        .collect();
    let root = home.join("traces");
    let mut found = 0;
    for path in files_below(&root, &mut violations) {
        // The turn log beside each trace (traces.turn_log) must pair with a trace.
        if path.extension().is_some_and(|e| e == "log") {
            if !path.with_extension("json").exists() {
                violations.push(format!("{}: a turn log without its trace", path.display()));
            }
            continue;
        }
        found += 1;
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) => {
                violations.push(format!("{}: unreadable ({e})", path.display()));
                continue;
            }
        };
        let record: TraceRecord = match serde_json::from_str(&text) {
            Ok(record) => record,
            Err(e) => {
                violations.push(format!("{}: not a trace ({e})", path.display()));
                continue;
            }
        };
        let Some(turn) = expected.remove(&record.turn_id) else {
            violations.push(format!(
                "{}: turn {} is not a turn that ran, or has a second trace",
                path.display(),
                record.turn_id
            ));
            continue;
        };
        let named = root.join(&turn.session_id).join(format!(
            "{:06}-{}.json",
            turn.turn_number, turn.outcome.trace_id
        ));
        let wanted = (
            turn.session_id.as_str(),
            turn.turn_number as u64,
            turn.outcome.trace_id.as_str(),
        );
        let got = (
            record.session_id.as_str(),
            record.turn_number,
            record.trace_id.as_str(),
        );
        if path != named || got != wanted {
            violations.push(format!(
                "{}: trace of turn {} says (session, number, trace) {got:?}, the turn was {wanted:?} with its trace at {}",
                path.display(),
                record.turn_id,
                named.display()
            ));
        }
        if turn.outcome.trace_path.as_deref() != Some(path.to_string_lossy().as_ref()) {
            violations.push(format!(
                "turn {}: outcome names trace {:?}, the trace is at {}",
                record.turn_id,
                turn.outcome.trace_path,
                path.display()
            ));
        }
    }
    for turn_id in expected.keys() {
        violations.push(format!("turn {turn_id} ran but left no trace"));
    }
    if found != turns.len() {
        violations.push(format!(
            "{found} files under {}, {} turns ran",
            root.display(),
            turns.len()
        ));
    }
    violations
}

/// Every workspace holds only `settings.py`, with the content `turns` edits leave.
pub fn check_workspaces(workspaces: &[PathBuf], turns: usize) -> Vec<String> {
    let wanted = settings_after(turns);
    let mut violations = Vec::new();
    for ws in workspaces {
        let names: BTreeSet<String> = std::fs::read_dir(ws)
            .map(|entries| {
                entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if names != BTreeSet::from(["settings.py".to_string()]) {
            violations.push(format!("{}: holds {names:?}", ws.display()));
        }
        match std::fs::read_to_string(ws.join("settings.py")) {
            Ok(text) if text == wanted => {}
            Ok(text) => violations.push(format!(
                "{}/settings.py: {text:?}, expected {wanted:?}",
                ws.display()
            )),
            Err(e) => violations.push(format!("{}/settings.py: {e}", ws.display())),
        }
    }
    violations
}

/// Every file in the folders directly under `root` (one folder per session); anything that is
/// not such a file is a violation.
fn files_below(root: &Path, violations: &mut Vec<String>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let Ok(sessions) = std::fs::read_dir(root) else {
        violations.push(format!("{}: no traces folder", root.display()));
        return files;
    };
    for session in sessions.flatten() {
        let Ok(entries) = std::fs::read_dir(session.path()) else {
            violations.push(format!("{}: not a folder", session.path().display()));
            continue;
        };
        files.extend(entries.flatten().map(|e| e.path()));
    }
    files.sort();
    files
}

/// One client connection and the sessions it drives.
struct Connection {
    index: usize,
    socket: PathBuf,
    workspaces: Vec<PathBuf>,
    turns_per_session: usize,
    read_timeout: Duration,
}

/// A session on a connection and its turn in progress.
struct SessionRun {
    id: String,
    turns_done: usize,
    current: Option<TurnInProgress>,
}

/// What the client has seen of a running turn.
struct TurnInProgress {
    request_id: u64,
    started: Instant,
    events: Vec<TurnEventParams>,
    approvals: Vec<ApprovalRequestParams>,
}

impl Connection {
    /// Opens the sessions, waits for every connection to be ready, then runs every session's
    /// turns, answering approvals at once; returns the finished turns and the violations.
    async fn drive(self, ready: Arc<Barrier>) -> (Vec<TurnRun>, Vec<String>) {
        let mut client = Client::connect(&self.socket).await;
        client.read_timeout = self.read_timeout;
        let mut sessions = Vec::new();
        for ws in &self.workspaces {
            let id = client.open_session(ws, "agent").await;
            sessions.push(SessionRun {
                id,
                turns_done: 0,
                current: None,
            });
        }
        ready.wait().await;
        let (mut finished, mut violations) = (Vec::new(), Vec::new());
        let mut by_request: HashMap<u64, usize> = HashMap::new();
        let mut next_request = 1_000_000;
        for (index, session) in sessions.iter_mut().enumerate() {
            next_request += 1;
            start_turn(&mut client, session, next_request).await;
            by_request.insert(next_request, index);
        }
        while !by_request.is_empty() {
            let Some(message) = client.read().await else {
                violations.push(format!(
                    "connection {}: the daemon closed it with {} turns running",
                    self.index,
                    by_request.len()
                ));
                break;
            };
            let response_to = (message.kind() == MessageKind::Response)
                .then(|| message.id.as_ref().and_then(Value::as_u64))
                .flatten()
                .and_then(|id| by_request.remove(&id));
            if let Some(index) = response_to {
                let session = &mut sessions[index];
                match finish_turn(session, &message) {
                    Ok((turn, found)) => {
                        finished.push(turn);
                        violations.extend(found);
                    }
                    Err(found) => violations.push(found),
                }
                if session.turns_done < self.turns_per_session {
                    next_request += 1;
                    start_turn(&mut client, session, next_request).await;
                    by_request.insert(next_request, index);
                }
                continue;
            }
            if let Err(found) = self.observe(&mut client, &mut sessions, &message).await {
                violations.push(found);
            }
        }
        (finished, violations)
    }

    /// An event or an approval request: recorded against its session's running turn, and an
    /// approval answered `approve` at once.
    async fn observe(
        &self,
        client: &mut Client,
        sessions: &mut [SessionRun],
        message: &Message,
    ) -> Result<(), String> {
        match (message.kind(), message.method.as_deref()) {
            (MessageKind::Request, Some(methods::APPROVAL_REQUEST)) => {
                let id = message.id.clone().unwrap_or(Value::Null);
                client
                    .send_line(&Message::response(id, json!({"decision": "approve"})).to_line())
                    .await;
                let params: ApprovalRequestParams = parse(message)?;
                self.running(sessions, &params.session_id, message)?
                    .approvals
                    .push(params);
                Ok(())
            }
            (MessageKind::Notification, Some(methods::TURN_EVENT)) => {
                let params: TurnEventParams = parse(message)?;
                self.running(sessions, &params.session_id, message)?
                    .events
                    .push(params);
                Ok(())
            }
            _ => Err(format!(
                "connection {}: unexpected {}",
                self.index,
                message.to_line()
            )),
        }
    }

    /// The running turn of `session_id` on this connection, which `message` is about.
    fn running<'a>(
        &self,
        sessions: &'a mut [SessionRun],
        session_id: &str,
        message: &Message,
    ) -> Result<&'a mut TurnInProgress, String> {
        let found = sessions.iter_mut().find(|s| s.id == session_id);
        found.and_then(|s| s.current.as_mut()).ok_or_else(|| {
            format!(
                "connection {}: {} for session {session_id}, which runs no turn here",
                self.index,
                message.to_line()
            )
        })
    }
}

async fn start_turn(client: &mut Client, session: &mut SessionRun, request_id: u64) {
    let prompt = edit_request(session.turns_done + 1);
    let params = json!({"sessionId": session.id, "prompt": prompt});
    let line = Message::request(json!(request_id), methods::TURN_START, params).to_line();
    session.current = Some(TurnInProgress {
        request_id,
        started: Instant::now(),
        events: Vec::new(),
        approvals: Vec::new(),
    });
    client.send_line(&line).await;
}

/// The `turn/start` response of `session`'s running turn, checked against what was seen of it:
/// the turn as it ended and its broken promises, or why the response carries no outcome.
fn finish_turn(
    session: &mut SessionRun,
    response: &Message,
) -> Result<(TurnRun, Vec<String>), String> {
    session.turns_done += 1;
    let turn_number = session.turns_done;
    let what = format!("session {} turn {turn_number}", session.id);
    let Some(turn) = session.current.take() else {
        return Err(format!("{what}: a response for no running turn"));
    };
    let elapsed = turn.started.elapsed();
    let outcome = match (&response.error, &response.result) {
        (None, Some(result)) => serde_json::from_value::<TurnOutcome>(result.clone())
            .map_err(|e| format!("{what}: the response is not an outcome ({e})"))?,
        _ => {
            return Err(format!(
                "{what} (request {}): {}",
                turn.request_id,
                response.to_line()
            ));
        }
    };
    let violations = turn_violations(&session.id, &turn, &outcome)
        .into_iter()
        .map(|v| format!("{what} ({}): {v}", outcome.turn_id))
        .collect();
    let run = TurnRun {
        session_id: session.id.clone(),
        turn_number,
        outcome,
        elapsed,
    };
    Ok((run, violations))
}

/// What the protocol promises about one turn, checked against what the client saw: `seq` 1, 2,
/// 3, ... in arrival order, one session and turn id throughout, the `outcome` event last (and
/// only last) carrying the response's outcome, one approval asked and resolved by the client's
/// `approve`, and a verified edit.
fn turn_violations(session_id: &str, turn: &TurnInProgress, outcome: &TurnOutcome) -> Vec<String> {
    let mut violations = Vec::new();
    for (position, event) in turn.events.iter().enumerate() {
        let expected = position as u64 + 1;
        if event.seq != expected {
            violations.push(format!(
                "event {position} has seq {}, expected {expected}",
                event.seq
            ));
        }
        if event.turn_id != outcome.turn_id || event.session_id != session_id {
            violations.push(format!(
                "event seq {} belongs to {} {}",
                event.seq, event.session_id, event.turn_id
            ));
        }
        let last = position + 1 == turn.events.len();
        match (&event.event, last) {
            (TurnEvent::Outcome { outcome: said }, true) if said == outcome => {}
            (TurnEvent::Outcome { .. }, true) => {
                violations.push("the outcome event differs from the response".into());
            }
            (TurnEvent::Outcome { .. }, false) => {
                violations.push(format!("an outcome event at seq {} is not last", event.seq));
            }
            (_, true) => violations.push("the last event is not the outcome".into()),
            (_, false) => {}
        }
    }
    if turn.events.is_empty() {
        violations.push("no events".into());
    }
    let asked: Vec<&str> = turn
        .approvals
        .iter()
        .map(|a| a.request_id.as_str())
        .collect();
    let resolved: Vec<(&str, Decision, ApprovalSource)> = turn
        .events
        .iter()
        .filter_map(|e| match &e.event {
            TurnEvent::ApprovalResolved {
                request_id,
                decision,
                source,
            } => Some((request_id.as_str(), *decision, *source)),
            _ => None,
        })
        .collect();
    let answered: Vec<(&str, Decision, ApprovalSource)> = asked
        .iter()
        .map(|id| (*id, Decision::Approve, ApprovalSource::Client))
        .collect();
    if asked.len() != 1 || resolved != answered {
        violations.push(format!("approvals asked {asked:?}, resolved {resolved:?}"));
    }
    if turn.approvals.iter().any(|a| a.turn_id != outcome.turn_id) {
        violations.push("an approval request names another turn".into());
    }
    if outcome.classification != Classification::CompletedVerified {
        violations.push(format!(
            "classified {:?}: {:?}",
            outcome.classification, outcome.files
        ));
    }
    violations
}

fn parse<P: serde::de::DeserializeOwned>(message: &Message) -> Result<P, String> {
    let params = message.params.clone().unwrap_or(Value::Null);
    serde_json::from_value(params).map_err(|e| format!("unreadable {} ({e})", message.to_line()))
}
