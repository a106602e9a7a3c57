//! Ctrl-C while a turn runs. In `talos run` ([`watch`]) the first one sends `turn/cancel` for
//! the session on a second connection, so the daemon stops the turn (model request aborted,
//! pending approval denied, command killed) and the `CANCELLED` outcome is printed as any other;
//! if the outcome has not arrived within [`GRACE`], or on a second Ctrl-C, the process exits 130
//! at once. In the interactive session ([`Interrupts`]) a Ctrl-C during a turn cancels it the
//! same way and the session stays; at the prompt the line editor reads Ctrl-C as a key (the
//! terminal is in raw mode), so no signal arrives there.
//!
//! The watch is a thread blocked on `signal-hook`'s signal iterator (no `unsafe` here), started
//! once the session is known and closed when the turn's answer is in. While the approval prompt
//! waits for a line on the terminal the outcome cannot be printed (the prompt still reads), so a
//! Ctrl-C there cancels the turn, says so, and exits 130 at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use signal_hook::consts::SIGINT;
use signal_hook::iterator::{Handle, Signals};
use talos_protocol::{TURN_CANCEL, TurnCancelParams};

use crate::client::{Client, ignore_messages, params};
use crate::render::{Output, Style};
use crate::socket::{AutoStart, SocketTarget};

/// How long after a cancel the outcome may take before the process exits anyway.
pub const GRACE: Duration = Duration::from_secs(5);
/// The exit code of a process ended by Ctrl-C (128 + SIGINT), as shells report it.
pub const EXIT_INTERRUPTED: i32 = 130;

/// Whether the approval prompt is waiting for a line on stdin.
static PROMPTING: AtomicBool = AtomicBool::new(false);

/// Marks the approval prompt as waiting until dropped.
pub struct Prompting(());

impl Prompting {
    pub fn begin() -> Prompting {
        PROMPTING.store(true, Ordering::SeqCst);
        Prompting(())
    }
}

impl Drop for Prompting {
    fn drop(&mut self) {
        PROMPTING.store(false, Ordering::SeqCst);
    }
}

/// A running watch; dropping it stops watching.
pub struct Watch {
    handle: Handle,
    thread: Option<JoinHandle<()>>,
}

/// Watches for Ctrl-C while the session's turn runs. `None` when the handler cannot be
/// installed: Ctrl-C then ends the process as before.
pub fn watch(target: &SocketTarget, session_id: &str, output: Output) -> Option<Watch> {
    let mut signals = Signals::new([SIGINT]).ok()?;
    let handle = signals.handle();
    let (target, session_id) = (target.clone(), session_id.to_string());
    let thread = std::thread::spawn(move || {
        let mut asked = false;
        for _ in signals.forever() {
            if asked {
                std::process::exit(EXIT_INTERRUPTED);
            }
            asked = true;
            let palette = output.stderr_palette;
            output.err_line(
                &palette.paint(Style::Yellow, "cancelling the turn (Ctrl-C again to quit)"),
            );
            if let Err(error) = cancel(&target, &session_id) {
                output.err_line(&format!("cannot cancel the turn: {error}"));
                std::process::exit(EXIT_INTERRUPTED);
            }
            if PROMPTING.load(Ordering::SeqCst) {
                output.err_line("\nturn cancelled: the approval is denied and nothing is written");
                std::process::exit(EXIT_INTERRUPTED);
            }
            std::thread::spawn(|| {
                std::thread::sleep(GRACE);
                std::process::exit(EXIT_INTERRUPTED);
            });
        }
    });
    Some(Watch {
        handle,
        thread: Some(thread),
    })
}

/// `turn/cancel` for the session, on a connection of its own.
pub fn cancel(target: &SocketTarget, session_id: &str) -> Result<(), crate::failure::Failure> {
    let mut client = Client::new(crate::socket::connect(target, AutoStart::Never)?)?;
    client.initialize()?;
    let request = params(serde_json::to_value(TurnCancelParams {
        session_id: session_id.to_string(),
    }));
    client.call(TURN_CANCEL, request, &mut ignore_messages)?;
    Ok(())
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The interactive session's Ctrl-C: the session whose turn it cancels, when one runs.
#[derive(Debug, Clone)]
pub struct Interrupts {
    armed: Arc<Mutex<Option<String>>>,
    target: SocketTarget,
}

impl Interrupts {
    /// Takes over SIGINT for the rest of the process: a Ctrl-C with no turn armed is ignored.
    pub fn install(
        target: &SocketTarget,
        output: &Output,
    ) -> Result<Interrupts, crate::failure::Failure> {
        let mut signals = Signals::new([SIGINT]).map_err(|error| {
            crate::failure::Failure::Usage(format!("cannot watch for Ctrl-C: {error}"))
        })?;
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
