//! The running turn's context: its ids, the client connection, event emission with `seq`,
//! approvals over the socket, and the core's turn (`talos_core::turn::Turn`), which decides
//! and keeps the records the outcome and trace are built from.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use talos_core::turn::Turn;
use talos_protocol as proto;
use talos_protocol::event::{ApprovalSource, TurnEvent, TurnEventParams};
use talos_protocol::trace::TraceRecord;
use tokio_util::sync::CancellationToken;

use crate::connection::Peer;
use crate::ids::{ApprovalId, TurnId};
use crate::server::Daemon;
use crate::sessions::Session;

pub struct TurnCtx {
    pub daemon: Arc<Daemon>,
    pub session: Arc<Session>,
    /// The session's workspace handle, held for the whole turn.
    pub files: Arc<crate::workspace::Workspace>,
    pub peer: Arc<Peer>,
    pub turn_id: TurnId,
    /// The claim's token: cancelled by `turn/cancel` or when the daemon stops.
    pub cancel: CancellationToken,
    /// The trace header; its lists are filled from the core's record when the turn ends.
    pub trace: TraceRecord,
    pub core: Turn,
    /// The turn's model, held for the whole turn.
    pub model: crate::models::Lease,
    /// The checkpoint the call in flight took, until its change completes it.
    pub checkpoint: Option<String>,
    seq: u64,
}

impl TurnCtx {
    pub fn new(
        daemon: Arc<Daemon>,
        (session, files): (Arc<Session>, Arc<crate::workspace::Workspace>),
        peer: Arc<Peer>,
        turn_id: TurnId,
        (trace, core): (TraceRecord, Turn),
        model: crate::models::Lease,
        cancel: CancellationToken,
    ) -> TurnCtx {
        TurnCtx {
            daemon,
            session,
            files,
            peer,
            turn_id,
            cancel,
            trace,
            core,
            model,
            checkpoint: None,
            seq: 0,
        }
    }

    /// Sends the notices the core queued, in order.
    pub async fn emit_notices(&mut self) {
        for notice in self.core.drain_notices() {
            self.emit(crate::to_proto::record::notice(notice)).await;
        }
    }

    /// Sends one event to the client that started the turn. Waits while its queue is full;
    /// a client that is gone simply no longer receives events.
    pub async fn emit(&mut self, event: TurnEvent) {
        self.seq += 1;
        let params = TurnEventParams {
            session_id: self.session.id.to_string(),
            turn_id: self.turn_id.to_string(),
            seq: self.seq,
            event,
        };
        if let Ok(value) = serde_json::to_value(params) {
            let _ = self.peer.notify(proto::TURN_EVENT, value).await;
        }
    }

    pub fn client_gone(&self) -> bool {
        self.peer.closed.is_cancelled()
    }

    /// Asks the turn's own connection. End of input, disconnect, timeout and cancel deny.
    pub async fn ask(
        &mut self,
        request: ApprovalId,
        params: proto::ApprovalRequestParams,
    ) -> (proto::Decision, ApprovalSource) {
        self.emit(TurnEvent::ApprovalRequested {
            request_id: params.request_id.clone(),
            tool: params.tool.clone(),
            description: params.description.clone(),
        })
        .await;
        let request_id = params.request_id.clone();
        let timeout = Duration::from_secs(self.daemon.config.approval.timeout_secs);
        let peer = self.peer.clone();
        let value = serde_json::to_value(&params).unwrap_or(Value::Null);
        let request = peer.request(proto::APPROVAL_REQUEST, value, Some(request));
        let (decision, source) = tokio::select! {
            answer = tokio::time::timeout(timeout, request) => match answer {
                // An answer that comes once the turn is cancelled is the cancel's, not the
                // person's.
                Ok(Ok(_)) if self.cancel.is_cancelled() => (proto::Decision::Deny, ApprovalSource::Cancelled),
                Ok(Ok(message)) => {
                    let decision = message
                        .result
                        .and_then(|r| serde_json::from_value::<proto::ApprovalResult>(r).ok())
                        .map_or(proto::Decision::Deny, |r| r.decision);
                    (decision, ApprovalSource::Client)
                }
                Ok(Err(_closed)) if self.cancel.is_cancelled() => (proto::Decision::Deny, ApprovalSource::Cancelled),
                Ok(Err(_closed)) => (proto::Decision::Deny, ApprovalSource::Disconnect),
                Err(_elapsed) => (proto::Decision::Deny, ApprovalSource::Timeout),
            },
            () = self.cancel.cancelled() => (proto::Decision::Deny, ApprovalSource::Cancelled),
        };
        self.emit(TurnEvent::ApprovalResolved {
            request_id,
            decision,
            source,
        })
        .await;
        (decision, source)
    }
}

impl TurnCtx {
    /// Asks for the core's approval request, screened first: characters that change what the
    /// person sees become `warning: ` lines in its details and warnings in the trace. Returns
    /// the request id and the answer.
    pub async fn ask_for(
        &mut self,
        call_id: &str,
        mut ask: talos_core::turn::call::ApprovalAsk,
    ) -> Result<(String, talos_core::turn::record::Answer), crate::ids::IdError> {
        self.core.screen_approval(&mut ask);
        let request = ApprovalId::new()?;
        let params = proto::ApprovalRequestParams {
            turn_id: self.turn_id.to_string(),
            session_id: self.session.id.to_string(),
            request_id: request.to_string(),
            tool: ask.tool.clone(),
            description: ask.description,
            target: ask.target,
            details: ask.details,
            diff: ask.diff.as_ref().map(crate::to_proto::diff),
            remember_eligible: ask.remember_eligible,
            call_id: Some(call_id.to_string()),
            change: ask.change.map(|c| proto::ProposedChange {
                path: c.path,
                old_text: c.before,
                new_text: c.after,
            }),
        };
        let request_id = params.request_id.clone();
        let (decision, source) = self.ask(request, params).await;
        Ok((
            request_id,
            crate::to_proto::record::answer(decision, source),
        ))
    }
}
