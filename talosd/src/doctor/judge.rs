//! The verdicts of `talosd --doctor`: pure functions from gathered facts to a check with its
//! fix. What blocks a turn is `Fail`; `Warn` is worth fixing while turns still run.

use super::{Check, DEFAULT_MODEL_SHA256};
use crate::config::RetentionConfig;

/// How one check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "fail",
        }
    }
}

/// Below this much free space, writes to the home (traces, checkpoints) fail: a turn cannot
/// be recorded.
pub const FREE_FAIL: u64 = 64 << 20;
/// Below this much, a warning.
pub const FREE_WARN: u64 = 1 << 30;

/// What was found at `model.server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Server {
    Missing,
    /// A directory, FIFO, device or dangling link.
    NotAFile,
    NotExecutable,
    /// It ran and printed this version line.
    Runs(String),
    /// It is there but `--version` failed (the reason).
    Broken(String),
}

/// What was found at `model.path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFile {
    Missing,
    NotAFile,
    Unreadable(String),
    /// `sha256` is computed only for the default model's file name (the only one pinned).
    Present {
        size: u64,
        gguf: bool,
        sha256: Option<String>,
    },
}

/// What was found at `model.chat_template_file`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Template {
    Unset,
    Present,
    Missing,
}

/// Who listens on 127.0.0.1:`model.port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortHolder {
    Free,
    /// The llama-server this home's daemon launched (pid).
    Ours(u32),
    /// Someone else: the pid and program name when `/proc` tells.
    Other {
        pid: Option<u32>,
        program: Option<String>,
    },
}

/// The home's disk use by part, and the free space on its filesystem.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Disk {
    pub home: String,
    /// (part, bytes): traces, checkpoints, sessions, index, logs, other.
    pub parts: Vec<(&'static str, u64)>,
    pub free: Option<u64>,
}

const GET_LLAMA: &str = "run get-llama.sh (packaging/ in the source, /usr/share/talos/ from the .deb, the tarball's folder): it builds llama-server and installs the default model; or set model.server in config.yaml";

/// A `connect_only` server: where it is, whether the way there is clear text to another host
/// (a warning), and where its key comes from (never the key). `key`: the setting the key is
/// read from, `None` when none is configured, or why the configured one cannot be used.
pub fn connection(url: &str, key: Result<Option<String>, String>) -> Check {
    let parsed = url::Url::parse(url).ok();
    let loopback = parsed.as_ref().is_some_and(|u| match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    });
    let clear_text = parsed.as_ref().is_some_and(|u| u.scheme() == "http");
    let keyed = match &key {
        Ok(Some(source)) => format!("; its API key is read from {source}"),
        Ok(None) => String::new(),
        Err(_) => String::new(),
    };
    let what = format!(
        "not launched by Talos (model.mode: connect_only); turns use the server at {url}{keyed}"
    );
    if let Err(problem) = key {
        return Check::new(
            "llama-server",
            Status::Fail,
            format!("{what}; the API key cannot be used: {problem}"),
            "set the variable for talosd, or fix the key file (a private file: chmod 600)",
        );
    }
    if clear_text && !loopback {
        return Check::new(
            "llama-server",
            Status::Warn,
            format!("{what}; requests, answers and any API key cross the network in clear text"),
            "use an https URL (with model.ca_file for a private CA), or keep the server on loopback",
        );
    }
    Check::new("llama-server", Status::Ok, what, "")
}

pub fn server(path: &str, found: Server) -> Check {
    let name = "llama-server";
    match found {
        Server::Runs(version) => Check::new(name, Status::Ok, format!("{path} ({version})"), ""),
        Server::Missing => Check::new(name, Status::Fail, format!("{path}: not found"), GET_LLAMA),
        Server::NotAFile => Check::new(
            name,
            Status::Fail,
            format!("{path}: not a regular file"),
            GET_LLAMA,
        ),
        Server::NotExecutable => Check::new(
            name,
            Status::Fail,
            format!("{path}: not executable"),
            "chmod +x it, or run get-llama.sh again",
        ),
        Server::Broken(why) => Check::new(
            name,
            Status::Fail,
            format!("{path} does not run: {why}"),
            "run get-llama.sh again to rebuild it; its build log is in the llama home",
        ),
    }
}

pub fn model(path: &str, found: &ModelFile) -> Check {
    let name = "model";
    let fix = "run get-llama.sh (installs the default model), or set model.path in config.yaml to a GGUF file";
    match found {
        ModelFile::Missing => Check::new(name, Status::Fail, format!("{path}: not found"), fix),
        ModelFile::NotAFile => Check::new(
            name,
            Status::Fail,
            format!("{path}: not a regular file"),
            fix,
        ),
        ModelFile::Unreadable(why) => Check::new(
            name,
            Status::Fail,
            format!("{path}: cannot read: {why}"),
            "make it readable by this user",
        ),
        ModelFile::Present { gguf: false, .. } => Check::new(
            name,
            Status::Fail,
            format!("{path}: not a GGUF file (it does not start with `GGUF`)"),
            fix,
        ),
        ModelFile::Present {
            size, sha256: None, ..
        } => Check::new(
            name,
            Status::Ok,
            format!(
                "{path} ({}, GGUF; not the default model, so no pinned SHA-256 to compare)",
                mib(*size)
            ),
            "",
        ),
        ModelFile::Present {
            size,
            sha256: Some(sum),
            ..
        } if sum == DEFAULT_MODEL_SHA256 => Check::new(
            name,
            Status::Ok,
            format!("{path} ({}, GGUF, SHA-256 {sum} as pinned)", mib(*size)),
            "",
        ),
        ModelFile::Present {
            size,
            sha256: Some(sum),
            ..
        } => Check::new(
            name,
            Status::Fail,
            format!(
                "{path} ({}): SHA-256 {sum}, but the default model is pinned to {DEFAULT_MODEL_SHA256}",
                mib(*size)
            ),
            "delete it and run get-llama.sh again (a partial or altered download)",
        ),
    }
}

pub fn template(path: &str, found: Template) -> Check {
    let name = "chat template";
    match found {
        Template::Unset => Check::new(
            name,
            Status::Ok,
            "none set: llama-server uses the model's own template".into(),
            "",
        ),
        Template::Present => Check::new(name, Status::Ok, path.to_string(), ""),
        Template::Missing => Check::new(
            name,
            Status::Fail,
            format!("{path}: not found (llama-server cannot start with it)"),
            "set model.chat_template_file to an existing file, or remove the key",
        ),
    }
}

pub fn port(port: u16, holder: PortHolder) -> Check {
    let name = "port";
    match holder {
        PortHolder::Free => Check::new(
            name,
            Status::Ok,
            format!("127.0.0.1:{port} is free for llama-server"),
            "",
        ),
        PortHolder::Ours(pid) => Check::new(
            name,
            Status::Ok,
            format!(
                "127.0.0.1:{port} is held by the llama-server this home's talosd launched (pid {pid})"
            ),
            "",
        ),
        PortHolder::Other { pid, program } => {
            let who = match (pid, program) {
                (Some(pid), Some(program)) => format!("pid {pid} ({program})"),
                (Some(pid), None) => format!("pid {pid}"),
                _ => "another process (not identified from /proc)".to_string(),
            };
            Check::new(
                name,
                Status::Fail,
                format!(
                    "127.0.0.1:{port} is already in use by {who}; Talos never takes over another server"
                ),
                "stop that process, or set model.port in config.yaml to a free port",
            )
        }
    }
}

pub fn disk(disk: &Disk, retention: &RetentionConfig) -> Check {
    let name = "disk";
    let total: u64 = disk.parts.iter().map(|(_, n)| n).sum();
    let retained: u64 = disk
        .parts
        .iter()
        .filter(|(part, _)| matches!(*part, "traces" | "checkpoints"))
        .map(|(_, n)| n)
        .sum();
    let parts: Vec<String> = disk
        .parts
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(part, n)| format!("{part} {}", mib(*n)))
        .collect();
    let free = disk.free.map_or("free space unknown".to_string(), |f| {
        format!("{} free", mib(f))
    });
    let detail = format!(
        "{}: {} ({}); retention keeps traces (with restore records), turn logs and checkpoints under {} and {} days; {free}",
        disk.home,
        mib(total),
        if parts.is_empty() {
            "empty".to_string()
        } else {
            parts.join(", ")
        },
        mib(retention.max_bytes),
        retention.max_age_days
    );
    match disk.free {
        Some(f) if f < FREE_FAIL => Check::new(
            name,
            Status::Fail,
            detail,
            "free space on that filesystem: turns cannot record traces or checkpoints",
        ),
        Some(f) if f < FREE_WARN => Check::new(
            name,
            Status::Warn,
            detail,
            "free space on that filesystem, or lower retention.max_bytes and run `talos gc`",
        ),
        _ if retained > retention.max_bytes => Check::new(
            name,
            Status::Warn,
            detail,
            "over retention.max_bytes: `talos gc` prunes the oldest now (a running daemon also does hourly)",
        ),
        _ => Check::new(name, Status::Ok, detail, ""),
    }
}

/// Bytes with one decimal in KiB, MiB or GiB.
pub fn mib(bytes: u64) -> String {
    let b = bytes as f64;
    if bytes < 1 << 20 {
        format!("{:.1} KiB", b / 1024.0)
    } else if bytes < 1 << 30 {
        format!("{:.1} MiB", b / 1_048_576.0)
    } else {
        format!("{:.1} GiB", b / 1_073_741_824.0)
    }
}
