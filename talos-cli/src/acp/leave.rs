//! What the bridge does when its editor leaves (stdin ends): every Talos session it opened or
//! loaded is released (`session/close` with `release`), so the daemon forgets it and it no
//! longer counts against the daemon's session cap, while its file stays for a later
//! `session/load`. A prompt still running is cancelled first, then its session released once
//! the turn has ended.

use std::sync::atomic::Ordering;
use std::time::Duration;

use talos_protocol::{SESSION_CLOSE, SessionCloseParams};

use super::Bridge;
use crate::client::{Client, ignore_messages, params};
use crate::failure::Failure;

/// How many times a release is asked again while the session's cancelled turn ends.
const BUSY_RETRIES: u32 = 100;
const BUSY_WAIT: Duration = Duration::from_millis(50);

impl Bridge {
    /// Releases every session this bridge holds; called once stdin has ended.
    pub(super) fn leave(&self) {
        let sessions: Vec<super::Session> = self.lock().drain().map(|(_, s)| s).collect();
        if sessions.is_empty() {
            return;
        }
        // A daemon that is gone holds nothing: none is started just to be told so.
        let connected = crate::socket::connect(&self.target, crate::socket::AutoStart::Never)
            .and_then(Client::new)
            .and_then(|mut client| client.initialize().map(|_| client));
        let Ok(mut client) = connected else {
            return;
        };
        for session in sessions {
            if let Some(flag) = &session.running {
                flag.store(true, Ordering::SeqCst);
                if let Err(failure) = crate::interrupt::cancel(&self.target, &session.talos_id) {
                    eprintln!("talos acp: cannot cancel the turn: {failure}");
                }
            }
            release(&mut client, &session.talos_id);
        }
    }
}

/// Asks the daemon to release `talos_id`, again while a turn still holds it (bounded).
pub(super) fn release(client: &mut Client, talos_id: &str) {
    let busy = talos_protocol::rpc::ErrorCode::SessionBusy.code();
    for _ in 0..BUSY_RETRIES {
        let request = params(serde_json::to_value(SessionCloseParams {
            session_id: talos_id.to_string(),
            release: true,
        }));
        match client.call(SESSION_CLOSE, request, &mut ignore_messages) {
            Err(Failure::Rpc(error)) if error.code == busy => std::thread::sleep(BUSY_WAIT),
            Err(failure) => {
                eprintln!("talos acp: cannot release session {talos_id}: {failure}");
                return;
            }
            Ok(_) => return,
        }
    }
    eprintln!("talos acp: session {talos_id} still runs a turn; it is left to the daemon");
}
