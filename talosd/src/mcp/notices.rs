//! What a server's notifications leave in the daemon's log. rmcp's own logging of each
//! notification, whole, is switched off (`crate::logging::filter` keeps `rmcp` at `warn`): a
//! server may send any number, each as large as a message may be. A server's log messages
//! (`notifications/message`) are logged here instead, escaped and cut to [`SHOWN`] bytes, at
//! most [`PER_WINDOW`] per connection every [`WINDOW`]; past that, how many were not logged is
//! said once the window ends. Other notifications leave nothing in the log.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::ClientHandler;
#[allow(deprecated)] // servers still send log messages; they are logged, capped, until gone
use rmcp::model::LoggingMessageNotificationParam;
use rmcp::service::{NotificationContext, RoleClient};

/// The most of one notification the log keeps, in bytes.
pub const SHOWN: usize = 512;
/// The most notifications logged per connection in one [`WINDOW`].
pub const PER_WINDOW: u32 = 20;
/// The rate limit's window.
pub const WINDOW: Duration = Duration::from_secs(10);

/// The client side of one connection: its server's name and its rate limit.
#[derive(Debug)]
pub struct Notices {
    server: String,
    window: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    started: Instant,
    logged: u32,
    dropped: u64,
}

impl Notices {
    pub fn new(server: &str) -> Notices {
        Notices {
            server: server.to_string(),
            window: Mutex::new(Window {
                started: Instant::now(),
                logged: 0,
                dropped: 0,
            }),
        }
    }

    /// Whether one more notification may be logged now; says how many were not, when a window
    /// that dropped some has ended.
    fn admit(&self) -> bool {
        let Ok(mut window) = self.window.lock() else {
            return false;
        };
        if window.started.elapsed() >= WINDOW {
            if window.dropped > 0 {
                tracing::info!(server = %self.server, dropped = window.dropped, "mcp notifications: {} were not logged (at most {PER_WINDOW} every {} s)", window.dropped, WINDOW.as_secs());
            }
            *window = Window {
                started: Instant::now(),
                logged: 0,
                dropped: 0,
            };
        }
        if window.logged < PER_WINDOW {
            window.logged += 1;
            true
        } else {
            window.dropped += 1;
            false
        }
    }
}

/// `data` as one escaped line of at most [`SHOWN`] bytes (a text is cut before it is copied).
pub fn shown(data: &serde_json::Value) -> String {
    let text = match data {
        serde_json::Value::String(s) => {
            let mut end = s.len().min(SHOWN * 2);
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s[..end].to_string()
        }
        other => other.to_string(),
    };
    let mut text = super::output::escape_controls(&text).replace('\n', "\\n");
    if super::output::cap_text(&mut text, SHOWN) {
        text.push_str("...(cut)");
    }
    text
}

#[allow(deprecated)] // as above: logging notifications are deprecated, not yet gone
impl ClientHandler for Notices {
    fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if self.admit() {
            tracing::info!(server = %self.server, level = ?params.level, "mcp log: {}", shown(&params.data));
        }
        std::future::ready(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Proves a flood is cut to the window's count and each note to its size.
    #[test]
    fn a_flood_is_rate_limited_and_each_note_cut() {
        let notices = Notices::new("s");
        let admitted = (0..1000).filter(|_| notices.admit()).count();
        assert_eq!(admitted, PER_WINDOW as usize);
        let big = serde_json::Value::String("\u{1b}x".repeat(1 << 20));
        let line = shown(&big);
        assert!(line.len() <= SHOWN + "...(cut)".len(), "{}", line.len());
        assert!(!line.contains('\u{1b}'));
        assert_eq!(shown(&serde_json::json!("b\nc")), "b\\nc");
    }
}
