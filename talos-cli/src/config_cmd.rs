//! `talos config path` and `talos config check [FILE]`: both run the daemon program (the one
//! `talos` would start: `$TALOS_DAEMON`, else `talosd` beside `talos`, else on `PATH`) with
//! `--config-path` or `--check-config`, so the file and the errors (with their line numbers)
//! are exactly the daemon's, from its one loader, and no daemon is started or contacted. The
//! CLI does not link the daemon (tidy's dependency matrix); it runs it.

use std::ffi::OsString;
use std::process::Command;

use crate::failure::Failure;
use crate::socket::daemon_program;

/// Runs the daemon program with `args`, its output passed through; its exit code.
pub fn run(args: &[OsString]) -> Result<u8, Failure> {
    let current_exe = std::env::current_exe().ok();
    let program = daemon_program(std::env::var_os("TALOS_DAEMON"), current_exe.as_deref());
    let status = Command::new(&program)
        .args(args)
        .status()
        .map_err(|error| {
            Failure::Usage(format!(
                "cannot run {} to read the configuration: {error}",
                program.display()
            ))
        })?;
    Ok(match status.code() {
        Some(0) => 0,
        _ => 1,
    })
}
