//! systemd socket activation, the pure part: whether the environment hands this process a
//! listening socket (`LISTEN_PID`, `LISTEN_FDS`, as `sd_listen_fds(3)` reads them), and the
//! readiness message `talosd` sends to `NOTIFY_SOCKET` (`sd_notify(3)`).
//!
//! Stricter than `sd_listen_fds`: `LISTEN_PID` must be present and name this process (an
//! inherited pair meant for a parent is ignored), and exactly one descriptor must be passed
//! (`talosd` listens on one socket; more, or a `LISTEN_FDS_FIRST_FD` other than 3, is an error
//! rather than a guess).

/// What the activation variables ask of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Activation {
    /// No socket is passed to this process: bind the socket as when started by hand.
    None,
    /// One listening socket is passed, at descriptor 3.
    One,
    /// The variables name this process but cannot be honoured; the reason, for the log.
    Refused(String),
}

/// Reads the activation variables. `listen_pid` and `listen_fds` are the raw values of
/// `LISTEN_PID` and `LISTEN_FDS`, `first_fd` of `LISTEN_FDS_FIRST_FD`; `my_pid` is this process.
pub fn judge_activation(
    listen_pid: Option<&str>,
    listen_fds: Option<&str>,
    first_fd: Option<&str>,
    my_pid: u32,
) -> Activation {
    let Some(fds) = listen_fds else {
        return Activation::None;
    };
    match listen_pid.map(|pid| pid.trim().parse::<u32>()) {
        Some(Ok(pid)) if pid == my_pid => {}
        // Meant for another process (a parent that did not clear them), or unreadable.
        _ => return Activation::None,
    }
    if first_fd.is_some_and(|fd| fd.trim() != "3") {
        return Activation::Refused(format!(
            "LISTEN_FDS_FIRST_FD={} is not supported: systemd passes sockets from descriptor 3",
            first_fd.unwrap_or_default()
        ));
    }
    match fds.trim().parse::<u32>() {
        Ok(0) => Activation::None,
        Ok(1) => Activation::One,
        Ok(n) => Activation::Refused(format!(
            "LISTEN_FDS={n}: talosd listens on one socket; give the .socket unit one ListenStream"
        )),
        Err(_) => Activation::Refused(format!("LISTEN_FDS={fds:?} is not a number")),
    }
}

/// The datagram that tells the service manager `talosd` accepts connections on `socket`.
pub fn ready_message(pid: u32, socket: &str) -> String {
    format!("READY=1\nMAINPID={pid}\nSTATUS=listening on {socket}\n")
}

/// The datagram that tells the service manager `talosd` is stopping.
pub const STOPPING_MESSAGE: &str = "STOPPING=1\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// What a row expects: `N` nothing passed, `1` one socket, `R` refused.
    fn kind(a: &Activation) -> char {
        match a {
            Activation::None => 'N',
            Activation::One => '1',
            Activation::Refused(_) => 'R',
        }
    }

    #[test]
    fn activation_table() {
        type Row<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, char);
        #[rustfmt::skip]
        let rows: [Row; 12] = [
            // Started by hand or by `talos`: nothing passed.
            (None, None, None, 'N'),
            // The ordinary systemd case.
            (Some("42"), Some("1"), None, '1'),
            (Some(" 42 "), Some("1"), Some("3"), '1'),
            // Meant for another process (inherited from a parent): ignored.
            (Some("41"), Some("1"), None, 'N'),
            // No LISTEN_PID at all: not provably ours, ignored (sd_listen_fds does the same).
            (None, Some("1"), None, 'N'),
            (Some(""), Some("1"), None, 'N'),
            (Some("forty-two"), Some("1"), None, 'N'),
            // LISTEN_PID without LISTEN_FDS: nothing passed.
            (Some("42"), None, None, 'N'),
            (Some("42"), Some("0"), None, 'N'),
            // Ours but not something talosd can honour.
            (Some("42"), Some("2"), None, 'R'),
            (Some("42"), Some("x"), None, 'R'),
            (Some("42"), Some("1"), Some("5"), 'R'),
        ];
        for (pid, fds, first, expected) in rows {
            let got = judge_activation(pid, fds, first, 42);
            assert_eq!(kind(&got), expected, "{pid:?} {fds:?} {first:?}: {got:?}");
        }
    }

    #[test]
    fn ready_message_names_ready_and_the_main_pid() {
        let message = ready_message(7, "/run/user/1000/talos/talosd.sock");
        assert!(message.starts_with("READY=1\n"), "{message}");
        assert!(message.contains("\nMAINPID=7\n"), "{message}");
        assert!(STOPPING_MESSAGE.starts_with("STOPPING=1"));
    }
}
