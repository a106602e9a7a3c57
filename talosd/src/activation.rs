//! systemd socket activation and readiness, the effects: takes the listening socket systemd
//! passes at descriptor 3 (`LISTEN_FDS`/`LISTEN_PID`, judged by
//! [`talos_core::activation::judge_activation`]) and tells the service manager when `talosd`
//! is ready (`NOTIFY_SOCKET`). Started by `talos` or by hand, neither variable is set and both
//! do nothing. The socket's trust checks are [`crate::socket::adopt`]'s.

use std::os::unix::net::{SocketAddr, UnixDatagram, UnixListener};
use std::path::Path;

use talos_core::activation::{Activation, judge_activation};

/// The listening socket passed to this process, if any. Call before any thread starts: it
/// clears `LISTEN_PID` and `LISTEN_FDS` so no child takes them for its own.
pub fn passed_listener() -> anyhow::Result<Option<UnixListener>> {
    let var = |name: &str| std::env::var(name).ok();
    let verdict = judge_activation(
        var("LISTEN_PID").as_deref(),
        var("LISTEN_FDS").as_deref(),
        var("LISTEN_FDS_FIRST_FD").as_deref(),
        std::process::id(),
    );
    match verdict {
        Activation::None => Ok(None),
        Activation::Refused(why) => anyhow::bail!("socket activation: {why}"),
        Activation::One => {
            // Validates an AF_UNIX stream socket, marks it close-on-exec (no child inherits
            // the listener) and clears the variables.
            let mut fds = listenfd::ListenFd::from_env();
            let listener = fds
                .take_unix_listener(0)
                .map_err(|e| anyhow::anyhow!("socket activation: descriptor 3: {e}"))?;
            listener
                .map(Some)
                .ok_or_else(|| anyhow::anyhow!("socket activation: descriptor 3 was not passed"))
        }
    }
}

/// Tells the service manager `talosd` accepts connections on `socket` (`READY=1`).
pub fn notify_ready(socket: &Path) {
    let message =
        talos_core::activation::ready_message(std::process::id(), &socket.display().to_string());
    notify(&message);
}

/// Tells the service manager `talosd` is stopping (`STOPPING=1`).
pub fn notify_stopping() {
    notify(talos_core::activation::STOPPING_MESSAGE);
}

/// Sends `message` to the service manager's `NOTIFY_SOCKET`, when one is set (a path, or an
/// abstract name written with a leading `@`). Without one it does nothing; a failure is logged,
/// never fatal: the socket already accepts connections.
pub fn notify(message: &str) {
    let Some(target) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    if let Err(e) = send(Path::new(&target), message) {
        tracing::warn!(error = %e, notify_socket = %Path::new(&target).display(), "cannot notify the service manager");
    }
}

fn send(target: &Path, message: &str) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let socket = UnixDatagram::unbound()?;
    let bytes = target.as_os_str().as_bytes();
    let address = match bytes.strip_prefix(b"@") {
        Some(name) => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(name)?
        }
        None => SocketAddr::from_pathname(target)?,
    };
    socket.send_to_addr(message.as_bytes(), &address)?;
    Ok(())
}
