//! The daemon's log: lines go to stderr (the log file when detached), and a line that cannot be
//! written (a full disk, a closed pipe, `/dev/full`) is counted and dropped. Logging is never
//! fatal: no write error reaches the code that logs, and tracing's own report of a failed write
//! (which would go to the same broken stderr, and panic there) is switched off. The count is
//! shown by `daemon/status` as `logLinesDropped`.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

static DROPPED: AtomicU64 = AtomicU64::new(0);

/// How many log lines could not be written since the daemon started.
pub fn dropped_lines() -> u64 {
    DROPPED.load(Ordering::Relaxed)
}

/// Installs the subscriber: the `TALOS_LOG` filter (default `info`), plain text, to stderr.
pub fn init() {
    tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(|| Forgiving(std::io::stderr()))
        .with_ansi(false)
        .log_internal_errors(false)
        .init();
}

/// The `TALOS_LOG` filter (default `info`), with rmcp kept at `warn` unless `TALOS_LOG` names
/// it: rmcp logs every notification an MCP server sends, whole, at `info` (and every request
/// and result at `debug`), which lets a server write the daemon's log at the speed of its
/// pipe. Talos logs what servers say itself, capped and rate-limited (`mcp::notices`).
pub fn filter() -> tracing_subscriber::EnvFilter {
    let wanted = std::env::var("TALOS_LOG").unwrap_or_default();
    let base = if wanted.trim().is_empty() {
        tracing_subscriber::EnvFilter::new("info")
    } else {
        tracing_subscriber::EnvFilter::try_new(&wanted)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"))
    };
    if wanted.contains("rmcp") {
        return base;
    }
    match "rmcp=warn".parse() {
        Ok(directive) => base.add_directive(directive),
        Err(_) => base,
    }
}

/// A writer that reports every write as done; the bytes it could not write are counted as a
/// dropped line instead of failing the caller.
pub struct Forgiving<W: Write>(pub W);

impl<W: Write> Write for Forgiving<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.write_all(buf).is_err() {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let _ = self.0.flush();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink that fails every write, like stderr on a full disk.
    struct Full;

    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from_raw_os_error(28))
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Err(std::io::Error::from_raw_os_error(28))
        }
    }

    #[test]
    fn a_failed_line_is_counted_and_the_writer_reports_success() {
        let before = dropped_lines();
        let mut writer = Forgiving(Full);
        assert_eq!(writer.write(b"one line\n").ok(), Some(9));
        assert!(writer.flush().is_ok());
        assert!(dropped_lines() > before);
        let mut fine = Forgiving(Vec::new());
        assert_eq!(fine.write(b"kept\n").ok(), Some(5));
        assert_eq!(fine.0, b"kept\n");
    }
}
