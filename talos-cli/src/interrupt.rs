//! Ctrl-C while a turn runs: the turn is cancelled over the protocol (`turn/cancel`), and the
//! process and the session stay. A thread waits for SIGINT; while a turn is armed it opens a
//! second connection and asks the daemon to cancel that session's turn, whose `CANCELLED`
//! outcome then ends the turn's `turn/start` call as usual. At the interactive prompt the line
//! editor reads Ctrl-C as a key (the terminal is in raw mode), so no signal arrives there.

use std::sync::{Arc, Mutex, PoisonError};

use signal_hook::consts::SIGINT;
use signal_hook::iterator::Signals;

use crate::client::{Client, ignore_messages};
use crate::failure::Failure;
use crate::render::Output;
use crate::socket::{self, AutoStart, SocketTarget};

/// The protocol method that cancels a session's running turn.
pub const TURN_CANCEL: &str = "turn/cancel";

/// The session whose turn a Ctrl-C cancels, when one runs.
#[derive(Debug, Clone)]
pub struct Interrupts {
    armed: Arc<Mutex<Option<String>>>,
    target: SocketTarget,
}

impl Interrupts {
    /// Takes over SIGINT for the rest of the process: a Ctrl-C with no turn armed is ignored.
    pub fn install(target: &SocketTarget, output: &Output) -> Result<Interrupts, Failure> {
        let mut signals = Signals::new([SIGINT])
            .map_err(|error| Failure::Usage(format!("cannot watch for Ctrl-C: {error}")))?;
        let interrupts = Interrupts {
            armed: Arc::new(Mutex::new(None)),
            target: target.clone(),
        };
        let watcher = interrupts.clone();
        let output = *output;
        std::thread::spawn(move || {
            for _ in signals.forever() {
                if watcher.armed_session().is_some() {
                    output.err_line("· cancelling the turn (Ctrl-C)");
                    watcher.cancel_now(&output);
                }
            }
        });
        Ok(interrupts)
    }

    /// A Ctrl-C from now on cancels `session_id`'s turn.
    pub fn arm(&self, session_id: &str) {
        *self.lock() = Some(session_id.to_string());
    }

    /// A Ctrl-C from now on is ignored.
    pub fn disarm(&self) {
        *self.lock() = None;
    }

    fn armed_session(&self) -> Option<String> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.armed.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Asks the daemon, on a connection of its own, to cancel the armed session's turn.
    pub fn cancel_now(&self, output: &Output) {
        let Some(session_id) = self.armed_session() else {
            return;
        };
        if let Err(failure) = cancel(&self.target, &session_id) {
            output.err_line(&format!("cannot cancel the turn: {failure}"));
        }
    }
}

/// `turn/cancel {sessionId}` on a new connection.
pub fn cancel(target: &SocketTarget, session_id: &str) -> Result<(), Failure> {
    let mut client = Client::new(socket::connect(target, AutoStart::Never)?)?;
    client.initialize()?;
    client.call(
        TURN_CANCEL,
        serde_json::json!({ "sessionId": session_id }),
        &mut ignore_messages,
    )?;
    Ok(())
}
