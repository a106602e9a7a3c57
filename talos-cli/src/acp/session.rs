//! ACP's session methods on Talos sessions: `session/new` opens one on `cwd`, `session/load`
//! reopens a persisted one and replays its history, `session/set_mode` moves the ACP session to
//! a Talos session in the chosen mode.

use agent_client_protocol_schema::v1::{
    ContentBlock, ContentChunk, LoadSessionRequest, LoadSessionResponse, NewSessionRequest,
    NewSessionResponse, SessionNotification, SessionUpdate, SetSessionModeRequest,
    SetSessionModeResponse,
};
use serde_json::Value;
use talos_protocol::{
    Mode, SESSION_RESUME, SessionResumeParams, SessionResumeResult, TRACE_GET, TRACE_LIST,
    TraceGetParams, TraceGetResult, TraceListParams, TraceListResult,
};

use super::{Bridge, Refused, Session, map};
use crate::client::{ignore_messages, params};

/// The editor's `cwd` as Talos's workspace: absolute, existing, canonical.
fn workspace(cwd: &std::path::Path) -> Result<String, Refused> {
    if !cwd.is_absolute() {
        return Err(Refused::params(format!(
            "cwd must be an absolute path, not {}",
            cwd.display()
        )));
    }
    crate::canonical_workspace(cwd).map_err(|f| Refused::params(f.to_string()))
}

impl Bridge {
    pub(super) fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, Refused> {
        let workspace = workspace(&request.cwd)?;
        let (mcp, notes) = super::mcp::editor_servers(&request.mcp_servers);
        let mut client = self.connect()?;
        let talos_id =
            crate::sessions::open_in(&mut client, (&workspace, None), Mode::Agent, true, &mcp)?;
        self.lock().insert(
            talos_id.clone(),
            Session {
                workspace,
                mode: Mode::Agent,
                talos_id: talos_id.clone(),
                running: None,
                mcp: mcp.clone(),
            },
        );
        Ok(NewSessionResponse::new(talos_id)
            .modes(map::modes(Mode::Agent))
            .meta(super::mcp::meta(&mcp, &notes)))
    }

    /// Reopens a session the daemon persisted (or still holds) and replays each earlier turn
    /// as the user's message and Talos's committed answer, before answering. An editor session
    /// moved to other modes is reopened as the last Talos session of its chain, in that mode,
    /// with the turns of every session of the chain replayed (issue 26, defect 6). A prompt
    /// this bridge still runs in the session keeps its cancel (defect 7).
    pub(super) fn load_session(
        &self,
        request: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Refused> {
        let workspace = workspace(&request.cwd)?;
        let (mcp, notes) = super::mcp::editor_servers(&request.mcp_servers);
        let acp_id = request.session_id.0.to_string();
        let mut client = self.connect()?;
        let chain = self.links(&mut client)?.chain(&acp_id, &workspace);
        let last = chain.last().cloned().unwrap_or_else(|| acp_id.clone());
        let resumed: SessionResumeResult = serde_json::from_value(
            client
                .call(
                    SESSION_RESUME,
                    params(serde_json::to_value(SessionResumeParams {
                        session_id: last.clone(),
                        mcp_servers: mcp.clone(),
                    })),
                    &mut ignore_messages,
                )
                .map_err(|failure| Refused::from(failure).about_session(&acp_id))?,
        )
        .map_err(|e| Refused::from(crate::failure::Failure::Connection(e.to_string())))?;
        if resumed.session.workspace != workspace {
            return Err(Refused::params(format!(
                "session {acp_id} is on workspace {}, not {workspace}",
                resumed.session.workspace
            )));
        }
        let mode = resumed.session.mode;
        for talos_id in &chain {
            self.replay(&mut client, (&acp_id, &workspace), talos_id)?;
        }
        let mut sessions = self.lock();
        let running = sessions.get(&acp_id).and_then(|s| s.running.clone());
        sessions.insert(
            acp_id.clone(),
            Session {
                workspace,
                mode,
                talos_id: last,
                running,
                mcp: mcp.clone(),
            },
        );
        drop(sessions);
        Ok(LoadSessionResponse::new()
            .modes(map::modes(mode))
            .meta(super::mcp::meta(&mcp, &notes)))
    }

    /// The turns of the Talos session `talos_id` on `workspace`, oldest first, as
    /// `user_message_chunk` and `agent_message_chunk` updates of the editor's session
    /// `acp_id`; a turn on any other workspace is never replayed. A turn whose log is no
    /// longer kept is replayed as a note saying so.
    fn replay(
        &self,
        client: &mut crate::client::Client,
        (acp_id, workspace): (&str, &str),
        talos_id: &str,
    ) -> Result<(), Refused> {
        let listed: TraceListResult = serde_json::from_value(client.call(
            TRACE_LIST,
            params(serde_json::to_value(TraceListParams {
                session_id: Some(talos_id.to_string()),
                workspace: Some(workspace.to_string()),
                limit: Some(1000),
            })),
            &mut ignore_messages,
        )?)
        .map_err(|e| Refused::from(crate::failure::Failure::Connection(e.to_string())))?;
        let mut traces = listed.traces;
        traces.sort_by_key(|t| t.turn_number);
        for summary in traces {
            let got: Option<TraceGetResult> = client
                .call(
                    TRACE_GET,
                    params(serde_json::to_value(TraceGetParams {
                        trace_id: summary.trace_id.clone(),
                    })),
                    &mut ignore_messages,
                )
                .ok()
                .and_then(|v| serde_json::from_value(v).ok());
            let (request, answer) = got
                .and_then(|g| g.turn_log)
                .map(|log| crate::trace_view::turn_words(&log))
                .unwrap_or((None, None));
            let not_kept = "(not kept: the turn log was turned off or removed)";
            let request = request
                .or(summary.request)
                .unwrap_or_else(|| not_kept.into());
            self.update(acp_id, SessionUpdate::UserMessageChunk(chunk(request)));
            self.update(
                acp_id,
                SessionUpdate::AgentMessageChunk(chunk(answer.unwrap_or_else(|| not_kept.into()))),
            );
        }
        Ok(())
    }

    /// Moves the session to a new Talos session in the chosen mode on the same workspace that
    /// continues the conversation (`continueFrom`: the earlier turns, so follow-ups carry
    /// over). What was approved "for the session" does not carry over: grants are never copied.
    pub(super) fn set_mode(
        &self,
        request: SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Refused> {
        let acp_id = request.session_id.0.to_string();
        let mode = map::mode_from_id(&request.mode_id.0).ok_or_else(|| {
            Refused::params(format!(
                "unknown mode {}; the modes are agent, ask, plan, auto and private",
                request.mode_id.0
            ))
        })?;
        let session = self
            .session(&acp_id)
            .ok_or_else(|| Refused::session_not_found(&acp_id))?;
        if session.running.is_some() {
            return Err(Refused::params(
                "a prompt is running in this session; change the mode when it has ended",
            ));
        }
        if session.mode != mode {
            let mut client = self.connect()?;
            let talos_id = crate::sessions::continue_in(
                &mut client,
                &session.workspace,
                mode,
                &session.talos_id,
                &session.mcp,
            )?;
            // Written before the editor hears the mode changed, so a reload finds it.
            self.links(&mut client)?
                .extend(&acp_id, &session.workspace, &talos_id)
                .map_err(|e| {
                    Refused::new(
                        super::wire::INTERNAL_ERROR,
                        format!("cannot record the session's new mode: {e}"),
                    )
                })?;
            if let Some(s) = self.lock().get_mut(&acp_id) {
                s.mode = mode;
                s.talos_id = talos_id;
            }
            // The session left behind is the daemon's to forget: its file stays, so a reload
            // still replays its turns, but it no longer counts against the session cap.
            super::leave::release(&mut client, &session.talos_id);
        }
        Ok(SetSessionModeResponse::new())
    }

    /// Sends one `session/update`.
    pub(super) fn update(&self, acp_id: &str, update: SessionUpdate) {
        let notification = SessionNotification::new(acp_id.to_string(), update);
        self.wire.notify(
            "session/update",
            serde_json::to_value(notification).unwrap_or(Value::Null),
        );
    }
}

/// A text chunk.
pub(super) fn chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.into()))
}
