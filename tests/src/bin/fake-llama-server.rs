//! fake-llama-server: a stand-in for llama.cpp's `llama-server` executable, for the managed-mode
//! tests. It takes llama-server's command line (`-m`, `--host`, `--port`, `-c`, `-t`,
//! `--parallel`, `--jinja`, `--chat-template-file`, `--no-webui`; other flags are skipped, with
//! their value when they have one) and serves `/health`, `/props`, `/tokenize` and
//! `/v1/chat/completions` on `host:port` with the same code as the in-process fake
//! (`talos_tests::fake_llama::serve`).
//!
//! What it does is chosen by a JSON object of [`Behaviour`] fields, merged in this order (later
//! wins): `FAKE_LLAMA_BEHAVIOUR` (a JSON object), one `FAKE_LLAMA_<FIELD>` variable per field
//! (for example `FAKE_LLAMA_LOADING_MS=1500`; the value is JSON, or a string), and the "model"
//! file itself when its content is a JSON object. The file is what the tests use: it needs no
//! environment and reaches the process whoever launches it.
//!
//! For the tests to find its processes, every process appends its pid to `<model>.pids` when it
//! starts, and the process that listens writes its pid to `<model>.pid` once it listens.
//! Every process exits on its own after `max_lifetime_ms` (default 300 s), and `parent_grace_ms`
//! (default 1 s) after whoever launched it is gone, so a test run leaves no server behind.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test fixture: a broken setup should panic

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::{Map, Value};
use talos_tests::fake_llama::{Reply, Script, Serving, Usage, scripted, serve};

/// The hidden flag a `fork_listener` parent passes to the copy of itself that listens.
const FORKED_FLAG: &str = "--fake-forked-listener";

/// Everything a test can switch.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Behaviour {
    /// `/health` (and chat) answer 503 `Loading model` for this long after start.
    loading_ms: u64,
    /// Exit with status 1 right after answering this many chat requests.
    crash_after_requests: Option<u64>,
    /// Exit with status 2 at start, before listening.
    exit_immediately: bool,
    /// Start a copy of this binary that does the listening while this process only waits for
    /// it: the listener then belongs to another pid.
    fork_listener: bool,
    /// How long a forked listener outlives its parent before it exits on its own. Long enough
    /// that a test sees whether whoever killed the parent also killed it.
    orphan_grace_ms: u64,
    /// How long the server outlives whoever launched it (a daemon, or the test binary that
    /// ran a daemon in-process) before it exits on its own: short, so a test run leaves no
    /// server behind; a test of what a restarted daemon does with an orphan asks for longer.
    parent_grace_ms: u64,
    /// `/props` `chat_template_caps.supports_tool_calls`.
    supports_tool_calls: bool,
    /// The context of one slot: `/props` `default_generation_settings.n_ctx`, and a prompt
    /// that reaches it is refused as llama-server refuses it (`Serving::n_ctx`). `-c` is not
    /// read for this, so a test that wants a limit says so. Default: none.
    n_ctx: Option<u64>,
    /// Whether `POST /tokenize` answers (default true).
    tokenize: bool,
    reply: ReplySpec,
    /// Append every chat request body to this file as one JSON line.
    record: Option<PathBuf>,
    usage: Usage,
    max_lifetime_ms: u64,
    /// On SIGTERM keep serving this long before exiting, as a large model's server takes a
    /// while to stop (0: SIGTERM ends it at once).
    stop_ms: u64,
}

/// The scripted reply: a text; a native tool call and the text after its result; or a list of
/// steps, the n-th answering a request that already carries n tool results (the last repeats).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum ReplySpec {
    Text(String),
    Call {
        tool_call: CallSpec,
        #[serde(default = "done")]
        then: String,
    },
    Steps(Vec<StepSpec>),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum StepSpec {
    Text(String),
    Call { tool_call: CallSpec },
    Calls { tool_calls: Vec<CallSpec> },
    Error { error: u16, message: String },
}

/// A native tool call; `arguments` is a JSON object, or the exact text the model would write.
#[derive(Debug, Clone, Deserialize)]
struct CallSpec {
    name: String,
    arguments: Value,
}

/// The parts of llama-server's command line this fake uses.
#[derive(Debug, Clone, Default)]
struct Args {
    model: Option<PathBuf>,
    host: String,
    port: u16,
    parallel: u32,
    forked: bool,
    version: bool,
    /// Everything as given, for the forked copy.
    raw: Vec<String>,
}

impl Default for Behaviour {
    fn default() -> Self {
        Behaviour {
            loading_ms: 0,
            crash_after_requests: None,
            exit_immediately: false,
            fork_listener: false,
            orphan_grace_ms: 15_000,
            parent_grace_ms: 1_000,
            supports_tool_calls: true,
            n_ctx: None,
            tokenize: true,
            reply: ReplySpec::Text("OK.".into()),
            record: None,
            usage: Usage::default(),
            max_lifetime_ms: 300_000,
            stop_ms: 0,
        }
    }
}

fn done() -> String {
    "Done.".into()
}

impl CallSpec {
    fn reply(&self) -> (String, String) {
        let arguments = match &self.arguments {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        (self.name.clone(), arguments)
    }
}

impl ReplySpec {
    fn script(&self) -> Script {
        match self {
            ReplySpec::Text(text) => scripted(vec![Reply::Text(text.clone())]),
            ReplySpec::Call { tool_call, then } => scripted(vec![
                Reply::ToolCalls(vec![tool_call.reply()]),
                Reply::Text(then.clone()),
            ]),
            ReplySpec::Steps(steps) if steps.is_empty() => scripted(vec![Reply::Text(done())]),
            ReplySpec::Steps(steps) => scripted(steps.iter().map(StepSpec::reply).collect()),
        }
    }
}

impl StepSpec {
    fn reply(&self) -> Reply {
        match self {
            StepSpec::Text(text) => Reply::Text(text.clone()),
            StepSpec::Call { tool_call } => Reply::ToolCalls(vec![tool_call.reply()]),
            StepSpec::Calls { tool_calls } => {
                Reply::ToolCalls(tool_calls.iter().map(CallSpec::reply).collect())
            }
            StepSpec::Error { error, message } => Reply::Error(*error, message.clone()),
        }
    }
}

impl Args {
    fn parse(raw: Vec<String>) -> Result<Args, String> {
        let mut args = Args {
            host: "127.0.0.1".into(),
            port: 8080,
            parallel: 1,
            raw: raw.clone(),
            ..Args::default()
        };
        let mut items = raw.into_iter().peekable();
        while let Some(flag) = items.next() {
            let mut value = |name: &str| {
                items
                    .next()
                    .ok_or_else(|| format!("error: {name} expects a value"))
            };
            match flag.as_str() {
                "-m" | "--model" => args.model = Some(PathBuf::from(value(&flag)?)),
                "--host" => args.host = value(&flag)?,
                "--port" => args.port = number(&flag, &value(&flag)?)?,
                "-np" | "--parallel" => args.parallel = number(&flag, &value(&flag)?)?,
                "-c"
                | "--ctx-size"
                | "-t"
                | "--threads"
                | "--chat-template-file"
                | "-a"
                | "--alias"
                | "--api-key" => {
                    value(&flag)?;
                }
                "--jinja" | "--no-jinja" | "--no-webui" | "--metrics" | "--props"
                | "--kv-unified" => {}
                "--version" => args.version = true,
                FORKED_FLAG => args.forked = true,
                // An unknown flag takes the next word as its value unless that is a flag.
                unknown
                    if unknown.starts_with('-')
                        && !unknown.contains('=')
                        && items.peek().is_some_and(|next| {
                            !next.starts_with('-') || next.parse::<f64>().is_ok()
                        }) =>
                {
                    items.next();
                }
                _ => {}
            }
        }
        Ok(args)
    }
}

fn number<T: std::str::FromStr>(flag: &str, text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("error: invalid value for {flag}: {text}"))
}

fn main() -> ExitCode {
    let args = match Args::parse(std::env::args().skip(1).collect()) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(1);
        }
    };
    if args.version {
        eprintln!("version: 0.0.0 (fake-llama-server)");
        return ExitCode::SUCCESS;
    }
    let Some(model) = args.model.clone() else {
        eprintln!("error: no model given (-m)");
        return ExitCode::from(1);
    };
    let behaviour = match load_behaviour(&model) {
        Ok(behaviour) => behaviour,
        Err(message) => {
            eprintln!("fake-llama-server: {message}");
            return ExitCode::from(1);
        }
    };
    append_line(&sibling(&model, "pids"), &std::process::id().to_string());
    exit_after(Duration::from_millis(behaviour.max_lifetime_ms));
    if behaviour.exit_immediately {
        eprintln!("fake-llama-server: exiting at start as asked");
        return ExitCode::from(2);
    }
    if behaviour.fork_listener && !args.forked {
        return wait_for_forked_listener(&args);
    }
    if args.forked {
        exit_when_orphaned(Duration::from_millis(behaviour.orphan_grace_ms));
    } else {
        exit_when_orphaned(Duration::from_millis(behaviour.parent_grace_ms));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(listen(args, model, behaviour))
}

/// Serves until killed, or until `crash_after_requests` ends the process.
async fn listen(args: Args, model: PathBuf, behaviour: Behaviour) -> ExitCode {
    let started = Instant::now();
    let address = format!("{}:{}", args.host, args.port);
    let listener = match tokio::net::TcpListener::bind(&address).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("fake-llama-server: cannot bind {address}: {e}");
            return ExitCode::from(1);
        }
    };
    std::fs::write(sibling(&model, "pid"), std::process::id().to_string()).expect("pid file");
    eprintln!("fake-llama-server: listening on http://{address}");
    if behaviour.stop_ms > 0 {
        let linger = Duration::from_millis(behaviour.stop_ms);
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("SIGTERM handler");
        tokio::spawn(async move {
            term.recv().await;
            tokio::time::sleep(linger).await;
            std::process::exit(0);
        });
    }
    let record = behaviour.record.clone();
    let on_request = Arc::new(move |request: &Value| {
        if let Some(path) = &record {
            append_line(path, &request.to_string());
        }
    });
    let answered = Arc::new(AtomicU64::new(0));
    let crash_after = behaviour.crash_after_requests;
    let after_reply = Arc::new(move || {
        let count = answered.fetch_add(1, Ordering::SeqCst) + 1;
        if crash_after.is_some_and(|limit| count >= limit) {
            eprintln!("fake-llama-server: crashing after {count} chat requests as asked");
            std::process::exit(1);
        }
    });
    let serving = Serving {
        native: behaviour.supports_tool_calls,
        slots: args.parallel,
        n_ctx: behaviour.n_ctx,
        hide_n_ctx: false,
        api_key: None,
        openai: false,
        tokenize: behaviour.tokenize,
        endless_tokenize: false,
        usage: behaviour.usage,
        loading_until: Some(started + Duration::from_millis(behaviour.loading_ms)),
        on_request: Some(on_request),
        after_reply: Some(after_reply),
    };
    serve(listener, serving, behaviour.reply.script()).await;
    ExitCode::from(1)
}

/// The `fork_listener` parent: runs a copy of itself that listens, and only waits for it.
fn wait_for_forked_listener(args: &Args) -> ExitCode {
    let exe = std::env::current_exe().expect("own executable");
    let mut child = match Command::new(exe).args(&args.raw).arg(FORKED_FLAG).spawn() {
        Ok(child) => child,
        Err(e) => {
            eprintln!("fake-llama-server: cannot start the forked listener: {e}");
            return ExitCode::from(1);
        }
    };
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// The behaviour: environment first, then the model file when it holds a JSON object.
fn load_behaviour(model: &Path) -> Result<Behaviour, String> {
    let mut merged = Map::new();
    if let Ok(text) = std::env::var("FAKE_LLAMA_BEHAVIOUR") {
        match serde_json::from_str(&text) {
            Ok(Value::Object(fields)) => merged.extend(fields),
            _ => return Err("FAKE_LLAMA_BEHAVIOUR is not a JSON object".into()),
        }
    }
    for (name, value) in std::env::vars() {
        if let Some(field) = name.strip_prefix("FAKE_LLAMA_")
            && field != "BEHAVIOUR"
        {
            let value = serde_json::from_str(&value).unwrap_or(Value::String(value));
            merged.insert(field.to_ascii_lowercase(), value);
        }
    }
    if let Ok(Value::Object(fields)) = std::fs::read(model)
        .map_err(|_| ())
        .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|_| ()))
    {
        merged.extend(fields);
    }
    serde_json::from_value(Value::Object(merged)).map_err(|e| format!("bad behaviour: {e}"))
}

/// `<model>.<extension>`, beside the model file.
fn sibling(model: &Path, extension: &str) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".");
    name.push(extension);
    PathBuf::from(name)
}

fn append_line(path: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .expect("append file");
    file.write_all(format!("{line}\n").as_bytes())
        .expect("append line");
}

/// Ends the process after `lifetime`, whatever it is doing.
fn exit_after(lifetime: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(lifetime);
        eprintln!("fake-llama-server: max lifetime reached");
        std::process::exit(3);
    });
}

/// A process whose parent is gone lingers for `grace`, then exits.
fn exit_when_orphaned(grace: Duration) {
    let parent = std::os::unix::process::parent_id();
    std::thread::spawn(move || {
        // A launcher that exited before this line ran left the process to init already.
        while parent != 1 && std::os::unix::process::parent_id() == parent {
            std::thread::sleep(Duration::from_millis(50));
        }
        std::thread::sleep(grace);
        eprintln!("fake-llama-server: orphaned listener exits");
        std::process::exit(4);
    });
}
