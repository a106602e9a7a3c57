//! `talos doctor [--json]`: checks what a turn needs and explains each problem with its fix.
//! Facts are gathered here (files, the daemon program, the socket) and by `talosd --doctor`
//! (what needs the configuration: `config.yaml` with its line numbers, the llama-server
//! binary and its version, the model file with its size and the default model's SHA-256, the
//! chat template, the port, the home's disk use against the retention limits); what blocks a
//! turn is [`blocks`], a pure rule with a table test. Exit 0 when nothing blocks a turn.
//!
//! Checked here: the daemon program, the socket directory (owner, mode, not a symlink), the
//! running daemon, Landlock and unprivileged user namespaces (command containment), and
//! chromium (interaction checks).

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};
use talos_protocol::socket::trust::{EntryFacts, EntryKind, judge_socket_dir};

use crate::client::Client;
use crate::failure::Failure;
use crate::render::Output;
use crate::socket::{self, AutoStart, SocketTarget, daemon_program};

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Fine.
    Ok,
    /// Worth fixing; turns still run.
    Warn,
    /// A turn cannot run until this is fixed.
    Fail,
}

/// One check: its name, outcome, what was found and how to fix it.
#[derive(Debug, Clone)]
pub struct Check {
    pub name: String,
    pub status: Status,
    pub detail: String,
    pub fix: String,
}

fn check(name: &str, status: Status, detail: String, fix: &str) -> Check {
    Check {
        name: name.to_string(),
        status,
        detail,
        fix: fix.to_string(),
    }
}

/// Whether any check blocks a turn.
pub fn blocks(checks: &[Check]) -> bool {
    checks.iter().any(|c| c.status == Status::Fail)
}

/// Runs every check and prints them; the exit code (0 when nothing blocks a turn, 1 otherwise).
pub fn run(target: &SocketTarget, json: bool, output: &Output) -> Result<u8, Failure> {
    let mut checks = daemon_program_checks();
    checks.extend([
        socket_dir_check(&target.path),
        daemon_check(target),
        landlock_check(),
        userns_check(),
        chromium_check(),
    ]);
    if json {
        let list: Vec<Value> = checks
            .iter()
            .map(|c| json!({"name": c.name, "status": status_name(c.status), "detail": c.detail, "fix": c.fix}))
            .collect();
        output.out(&format!(
            "{}\n",
            json!({"ok": !blocks(&checks), "checks": list})
        ))?;
    } else {
        for c in &checks {
            output.out(&format!(
                "{:<5} {}: {}\n",
                status_name(c.status),
                c.name,
                c.detail
            ))?;
            if c.status != Status::Ok && !c.fix.is_empty() {
                output.out(&format!("      fix: {}\n", c.fix))?;
            }
        }
    }
    Ok(u8::from(blocks(&checks)))
}

fn status_name(status: Status) -> &'static str {
    match status {
        Status::Ok => "ok",
        Status::Warn => "warn",
        Status::Fail => "fail",
    }
}

/// The checks `talosd --doctor` makes with the daemon's own configuration loader.
fn daemon_program_checks() -> Vec<Check> {
    let current_exe = std::env::current_exe().ok();
    let program = daemon_program(std::env::var_os("TALOS_DAEMON"), current_exe.as_deref());
    let fail = |detail: String| {
        vec![check(
            "daemon program",
            Status::Fail,
            detail,
            "install talosd beside talos (the same release), or set TALOS_DAEMON to its path",
        )]
    };
    let out = match Command::new(&program).arg("--doctor").output() {
        Ok(out) => out,
        Err(e) => return fail(format!("cannot run {}: {e}", program.display())),
    };
    let report: Option<Value> = serde_json::from_slice(&out.stdout).ok();
    let list = report
        .as_ref()
        .and_then(|r| r["checks"].as_array())
        .filter(|_| out.status.success());
    let Some(list) = list else {
        let said = String::from_utf8_lossy(&out.stderr);
        return fail(format!(
            "{} --doctor gave no report ({}): {}",
            program.display(),
            out.status,
            said.trim()
        ));
    };
    let mut checks = vec![same_release(
        &program,
        report.as_ref().and_then(|r| r["version"].as_str()),
    )];
    checks.extend(list.iter().map(parse_check));
    checks
}

/// `talos` and the `talosd` it starts must come from one release: the protocol handshake
/// refuses a daemon of another protocol version, and their checks and messages are one set.
fn same_release(program: &Path, version: Option<&str>) -> Check {
    let mine = env!("CARGO_PKG_VERSION");
    match version {
        Some(v) if v == mine => check(
            "daemon program",
            Status::Ok,
            format!("{} {v}, the same release as talos", program.display()),
            "",
        ),
        other => check(
            "daemon program",
            Status::Warn,
            format!(
                "{} is version {}, talos is {mine}",
                program.display(),
                other.unwrap_or("unknown")
            ),
            "install talos and talosd from the same release (a running daemon of another protocol version is refused)",
        ),
    }
}

/// One check from `talosd --doctor`'s report; a malformed one is itself a failed check.
fn parse_check(value: &Value) -> Check {
    let text = |key: &str| value[key].as_str().map(str::to_string);
    let status = match value["status"].as_str() {
        Some("ok") => Some(Status::Ok),
        Some("warn") => Some(Status::Warn),
        Some("fail") => Some(Status::Fail),
        _ => None,
    };
    match (text("name"), status, text("detail"), text("fix")) {
        (Some(name), Some(status), Some(detail), Some(fix)) => Check {
            name,
            status,
            detail,
            fix,
        },
        _ => check(
            "daemon program",
            Status::Fail,
            format!("talosd --doctor reported a malformed check: {value}"),
            "install talos and talosd from the same release",
        ),
    }
}

/// The socket's directory: absent (created 0700 on first use), or ours, private, no symlink.
fn socket_dir_check(socket: &Path) -> Check {
    let name = "socket directory";
    let Some(dir) = socket.parent() else {
        return check(
            name,
            Status::Fail,
            format!("{} has no parent", socket.display()),
            "choose another --socket",
        );
    };
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(meta) => meta,
        Err(_) => {
            return check(
                name,
                Status::Ok,
                format!(
                    "{} does not exist yet; created 0700 on first use",
                    dir.display()
                ),
                "",
            );
        }
    };
    use std::os::unix::fs::MetadataExt;
    let kind = if meta.file_type().is_symlink() {
        EntryKind::Symlink
    } else if meta.is_dir() {
        EntryKind::Directory
    } else {
        EntryKind::Other
    };
    let facts = EntryFacts {
        kind,
        owner: meta.uid(),
        mode: meta.mode() & 0o7777,
    };
    match judge_socket_dir(facts, socket::effective_uid()) {
        Ok(()) => check(
            name,
            Status::Ok,
            format!("{} (mode {:04o}, yours)", dir.display(), facts.mode),
            "",
        ),
        Err(why) => check(
            name,
            Status::Fail,
            format!("{}: {why:?}", dir.display()),
            "remove it (talos recreates it 0700), or choose a --socket in a directory only you can write",
        ),
    }
}

/// Whether a daemon answers on the socket (not running is fine: talos starts it).
fn daemon_check(target: &SocketTarget) -> Check {
    let name = "daemon";
    match socket::connect(target, AutoStart::Never)
        .and_then(Client::new)
        .and_then(|mut c| c.initialize().map(|_| ()))
    {
        Ok(()) => check(
            name,
            Status::Ok,
            format!("answering on {}", target.path.display()),
            "",
        ),
        Err(Failure::NotRunning(path)) => check(
            name,
            Status::Ok,
            format!(
                "not running (talos starts it on first use; socket {})",
                path.display()
            ),
            "",
        ),
        Err(Failure::Untrusted(refusal)) => check(
            name,
            Status::Fail,
            refusal.to_string(),
            "remove what is on the socket path that is not yours",
        ),
        Err(other) => check(
            name,
            Status::Fail,
            other.to_string(),
            "`talos stop`, then look at the daemon log under the Talos home's logs/",
        ),
    }
}

fn landlock_check() -> Check {
    let lsm = std::fs::read_to_string("/sys/kernel/security/lsm").unwrap_or_default();
    if lsm.split(',').any(|m| m.trim() == "landlock") {
        check("landlock", Status::Ok, "enabled".into(), "")
    } else {
        check(
            "landlock",
            Status::Warn,
            "not among the active LSMs (or /sys/kernel/security is not readable)".into(),
            "boot a kernel with lsm=...,landlock; commands then run without filesystem containment",
        )
    }
}

fn userns_check() -> Check {
    let read = |p: &str| {
        std::fs::read_to_string(p)
            .ok()
            .map(|s| s.trim().to_string())
    };
    let max = read("/proc/sys/user/max_user_namespaces");
    let clone = read("/proc/sys/kernel/unprivileged_userns_clone");
    let apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    if max.as_deref() == Some("0")
        || clone.as_deref() == Some("0")
        || apparmor.as_deref() == Some("1")
    {
        check(
            "user namespaces",
            Status::Warn,
            "unprivileged user namespaces are off: commands cannot get an empty network namespace"
                .into(),
            "sysctl user.max_user_namespaces=15000 and kernel.unprivileged_userns_clone=1 (or the AppArmor restriction off)",
        )
    } else {
        check(
            "user namespaces",
            Status::Ok,
            "unprivileged user and network namespaces allowed".into(),
            "",
        )
    }
}

fn chromium_check() -> Check {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = ["chromium", "chromium-browser", "google-chrome", "chrome"]
        .iter()
        .find_map(|name| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        });
    match found {
        Some(p) => check("chromium", Status::Ok, p.display().to_string(), ""),
        None => check(
            "chromium",
            Status::Warn,
            "not on PATH: interaction checks (webcheck) are skipped".into(),
            "apt-get install chromium",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_from_talosd_is_taken_only_when_whole() {
        let rows = [
            (
                json!({"name": "port", "status": "warn", "detail": "d", "fix": "f"}),
                ("port", Status::Warn),
            ),
            (
                json!({"name": "port", "status": "fine", "detail": "d", "fix": "f"}),
                ("daemon program", Status::Fail),
            ),
            (
                json!({"name": "port", "status": "ok", "detail": "d"}),
                ("daemon program", Status::Fail),
            ),
            (json!("ok"), ("daemon program", Status::Fail)),
        ];
        for (value, (name, status)) in rows {
            let c = parse_check(&value);
            assert_eq!((c.name.as_str(), c.status), (name, status), "{value}");
        }
    }

    #[test]
    fn talosd_of_another_release_is_named() {
        let mine = env!("CARGO_PKG_VERSION");
        let rows = [
            (Some(mine), Status::Ok),
            (Some("0.0.0-other"), Status::Warn),
            (None, Status::Warn),
        ];
        for (version, status) in rows {
            let c = same_release(Path::new("/usr/bin/talosd"), version);
            assert_eq!(c.status, status, "{version:?}: {c:?}");
        }
    }

    #[test]
    fn only_a_failed_check_blocks_a_turn() {
        let c = |status| check("x", status, String::new(), "");
        let rows: [(&[Status], bool); 5] = [
            (&[], false),
            (&[Status::Ok], false),
            (&[Status::Ok, Status::Warn], false),
            (&[Status::Warn, Status::Fail], true),
            (&[Status::Fail], true),
        ];
        for (statuses, expected) in rows {
            let checks: Vec<Check> = statuses.iter().map(|s| c(*s)).collect();
            assert_eq!(blocks(&checks), expected, "{statuses:?}");
        }
    }
}
