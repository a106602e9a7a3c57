//! The task-success bench: fixed sets of small, varied tasks (one-line edits, new files with
//! given content, renames, questions answered from one or two files) run through the real
//! daemon and managed llama-server, every approval answered yes, once per `model.constrain`
//! level in the same run. The `original` set asks mostly in one form; the `phrasings` set
//! (`phrasings.rs`) asks the same kinds of task as people word them. Per set and level it
//! prints: proposals that passed the runtime's checks, tasks done (the bench's own check of the
//! workspace or the answer), of those the ones the trace classifies as verified, false
//! successes (a task not done that Talos called COMPLETED_VERIFIED or READ_ONLY_ANSWERED), model
//! calls per task, prompt tokens per call, and wall time per task. `--check` runs no model: it
//! proves each task's own check can fail and can pass.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use talos_protocol::Message;
use talos_tests::harness::{Answer, Client};
use talos_tests::real_llama::RealParts;

/// What a task must leave behind.
pub enum Expect {
    /// The file holds this text (trailing whitespace aside).
    File(&'static str, &'static str),
    /// The file holds one of these texts (a comment marker with or without its space).
    FileAnyOf(&'static str, &'static [&'static str]),
    /// `from` is gone and `to` holds this text.
    Renamed(&'static str, &'static str, &'static str),
    /// The answer contains one of these texts.
    Answer(&'static [&'static str]),
    /// The answer contains every one of these texts.
    AnswerAll(&'static [&'static str]),
}

pub struct Task {
    pub files: &'static [(&'static str, &'static str)],
    pub request: &'static str,
    pub expect: Expect,
}

impl Expect {
    fn is_answer(&self) -> bool {
        matches!(self, Expect::Answer(_) | Expect::AnswerAll(_))
    }

    /// The bench's own judgement: the workspace (or the answer) shows the task done. The
    /// answer is judged on the model's words: a line Talos quoted from its own read is left
    /// out (`quoted` says whether that line held the fact).
    fn done(&self, ws: &Path, answer: &str) -> bool {
        let answer = answer
            .split("[From Talos's own read")
            .next()
            .unwrap_or(answer);
        let read = |p: &str| std::fs::read_to_string(ws.join(p)).ok();
        match *self {
            Expect::File(path, want) => read(path).is_some_and(|got| got.trim_end() == want),
            Expect::FileAnyOf(path, wants) => {
                read(path).is_some_and(|got| wants.contains(&got.trim_end()))
            }
            Expect::Renamed(from, to, want) => {
                read(from).is_none() && read(to).is_some_and(|got| got.trim_end() == want)
            }
            // Case aside: "true" answers "Is DEBUG on?" as well as "True".
            Expect::Answer(any) => any
                .iter()
                .any(|n| answer.to_lowercase().contains(&n.to_lowercase())),
            Expect::AnswerAll(all) => all
                .iter()
                .all(|n| answer.to_lowercase().contains(&n.to_lowercase())),
        }
    }

    /// Leaves the workspace as a correct turn would, and returns a correct answer.
    fn apply(&self, ws: &Path) -> std::io::Result<String> {
        let write = |p: &str, text: &str| std::fs::write(ws.join(p), format!("{text}\n"));
        match *self {
            Expect::File(path, want) => write(path, want)?,
            Expect::FileAnyOf(path, wants) => write(path, wants.first().copied().unwrap_or(""))?,
            Expect::Renamed(from, to, want) => {
                std::fs::remove_file(ws.join(from))?;
                write(to, want)?;
            }
            Expect::Answer(any) => return Ok(any.first().copied().unwrap_or("").to_string()),
            Expect::AnswerAll(all) => return Ok(all.join(", ")),
        }
        Ok(String::new())
    }
}

/// Which tasks a run takes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Set {
    Original,
    Phrasings,
}

impl Set {
    pub fn name(self) -> &'static str {
        match self {
            Set::Original => "original",
            Set::Phrasings => "phrasings",
        }
    }

    fn tasks(self) -> &'static [Task] {
        match self {
            Set::Original => TASKS,
            Set::Phrasings => crate::phrasings::PHRASINGS,
        }
    }

    /// `original`, `phrasings` or `all`.
    pub fn parse(word: &str) -> anyhow::Result<Vec<Set>> {
        match word {
            "original" => Ok(vec![Set::Original]),
            "phrasings" => Ok(vec![Set::Phrasings]),
            "all" => Ok(vec![Set::Original, Set::Phrasings]),
            other => anyhow::bail!("--set takes original, phrasings or all, not {other:?}"),
        }
    }
}

const SETTINGS: &str = "TIMEOUT = 30\nRETRIES = 3\n";
const SERVER: &str = "const port = 3000;\napp.listen(port);\n";
const PACKAGE: &str = "{\n  \"name\": \"demo\",\n  \"version\": \"1.0.0\"\n}\n";
const README: &str = "# Demo\n\nA small project that greets people.\n";

const TASKS: &[Task] = &[
    Task {
        files: &[("settings.py", SETTINGS)],
        request: "In settings.py, change TIMEOUT from 30 to 60.",
        expect: Expect::File("settings.py", "TIMEOUT = 60\nRETRIES = 3"),
    },
    Task {
        files: &[],
        request: "Create notes.txt with the content: hello world",
        expect: Expect::File("notes.txt", "hello world"),
    },
    Task {
        files: &[("settings.py", SETTINGS)],
        request: "What is the value of TIMEOUT in settings.py?",
        expect: Expect::Answer(&["30"]),
    },
    Task {
        files: &[("old.txt", "keep me\n")],
        request: "Rename old.txt to new.txt.",
        expect: Expect::Renamed("old.txt", "new.txt", "keep me"),
    },
    Task {
        files: &[("config.py", "DEBUG = True\nPORT = 8000\n")],
        request: "In config.py, change DEBUG from True to False.",
        expect: Expect::File("config.py", "DEBUG = False\nPORT = 8000"),
    },
    Task {
        files: &[],
        request: "Create VERSION containing 2.0.0",
        expect: Expect::File("VERSION", "2.0.0"),
    },
    Task {
        files: &[("server.js", SERVER)],
        request: "What port does server.js use?",
        expect: Expect::Answer(&["3000"]),
    },
    Task {
        files: &[("draft.md", "# Draft\n")],
        request: "Rename draft.md to final.md.",
        expect: Expect::Renamed("draft.md", "final.md", "# Draft"),
    },
    Task {
        files: &[("server.js", SERVER)],
        request: "In server.js, change the port from 3000 to 8080.",
        expect: Expect::File("server.js", "const port = 8080;\napp.listen(port);"),
    },
    Task {
        files: &[],
        request: "Create todo.md with the text: - buy milk",
        expect: Expect::File("todo.md", "- buy milk"),
    },
    Task {
        files: &[("package.json", PACKAGE)],
        request: "Which version is in package.json?",
        expect: Expect::Answer(&["1.0.0"]),
    },
    Task {
        files: &[("README.md", README)],
        request: "In README.md, change the title from Demo to Talos Demo.",
        expect: Expect::File(
            "README.md",
            "# Talos Demo\n\nA small project that greets people.",
        ),
    },
    Task {
        files: &[("README.md", README)],
        request: "What does README.md say the project does?",
        expect: Expect::Answer(&["greet"]),
    },
    Task {
        files: &[(
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n",
        )],
        request: "In src/lib.rs, rename the function add to sum.",
        expect: Expect::File(
            "src/lib.rs",
            "pub fn sum(a: i32, b: i32) -> i32 {\n    a + b\n}",
        ),
    },
    Task {
        files: &[("constants.h", "#define MAX_USERS 10\n#define MAX_ROOMS 4\n")],
        request: "In constants.h, change MAX_USERS from 10 to 50.",
        expect: Expect::File("constants.h", "#define MAX_USERS 50\n#define MAX_ROOMS 4"),
    },
    Task {
        files: &[("app.toml", "name = \"app\"\nworkers = 2\n")],
        request: "In app.toml, change workers from 2 to 4.",
        expect: Expect::File("app.toml", "name = \"app\"\nworkers = 4"),
    },
    Task {
        files: &[("package.json", PACKAGE)],
        request: "In package.json, change the version from 1.0.0 to 1.1.0.",
        expect: Expect::File(
            "package.json",
            "{\n  \"name\": \"demo\",\n  \"version\": \"1.1.0\"\n}",
        ),
    },
    Task {
        files: &[("main.py", "print(\"Hello\")\n")],
        request: "In main.py, change the greeting from Hello to Hi.",
        expect: Expect::File("main.py", "print(\"Hi\")"),
    },
    Task {
        files: &[("flags.yaml", "beta: false\nlegacy: true\n")],
        request: "In flags.yaml, change beta from false to true.",
        expect: Expect::File("flags.yaml", "beta: true\nlegacy: true"),
    },
    Task {
        files: &[("Makefile", "CC = gcc\n\nall:\n\t$(CC) main.c\n")],
        request: "In Makefile, change CC from gcc to clang.",
        expect: Expect::File("Makefile", "CC = clang\n\nall:\n\t$(CC) main.c"),
    },
    Task {
        files: &[("style.css", "body { color: red; }\n")],
        request: "In style.css, change the color from red to blue.",
        expect: Expect::File("style.css", "body { color: blue; }"),
    },
    Task {
        files: &[("index.html", "<title>Home</title>\n<h1>Home</h1>\n")],
        request: "In index.html, change the title from Home to Welcome.",
        expect: Expect::File("index.html", "<title>Welcome</title>\n<h1>Home</h1>"),
    },
];

/// One task's result.
#[derive(Default)]
struct Ran {
    proposals: usize,
    passed_checks: usize,
    done: bool,
    verified: bool,
    /// Not done, and the trace calls it COMPLETED_VERIFIED or READ_ONLY_ANSWERED.
    false_success: bool,
    /// Not done, and the trace calls it COMPLETED_UNVERIFIED: a claim of a change, marked
    /// unchecked.
    unverified_claim: bool,
    /// A question the model did not answer with the fact, where Talos's quoted line held it.
    quoted: bool,
    /// The outcome's classification and the start of the answer, shown for a task not done.
    classification: String,
    answer: String,
    model_calls: usize,
    prompt_tokens: Vec<f64>,
    wall: Duration,
}

/// Runs every task of the sets once per level, each level on a daemon of its own (all started
/// first, so that the levels take turns task by task and a partial run still compares them
/// fairly), and prints one table per set. Each task's figures also go to stderr as it ends.
pub async fn run(
    parts: &RealParts,
    sets: &[Set],
    levels: &[String],
    (limit, only): (usize, &[usize]),
) -> anyhow::Result<()> {
    let mut daemons = Vec::new();
    for level in levels {
        // A loaded machine can take minutes per model call: nothing times out before the
        // bench is interrupted.
        let extra = format!(
            "  constrain: {level}\n  max_tokens: 192\n  temperature: 0\n  request_timeout_secs: 3600\ntools:\n  tool_call_prefill: \"<tool_call>\\n\"\nturn:\n  max_model_calls: 4\napproval:\n  timeout_secs: 30\n"
        );
        let mut started = super::start(parts, &extra).await?;
        started.client.read_timeout = Duration::from_secs(3600);
        daemons.push(started);
    }
    let mut tables = Vec::new();
    for &set in sets {
        let mut table: Vec<(String, Vec<Ran>)> =
            levels.iter().map(|l| (l.clone(), Vec::new())).collect();
        let picked = set
            .tasks()
            .iter()
            .enumerate()
            .take(limit)
            .filter(|(n, _)| only.is_empty() || only.contains(&(n + 1)));
        for (n, task) in picked {
            for (started, (level, results)) in daemons.iter_mut().zip(table.iter_mut()) {
                let home = started.home.path().to_path_buf();
                let ran = run_task(&mut started.client, &home, task)
                    .await
                    .with_context(|| format!("task {} ({})", n + 1, task.request))?;
                eprintln!(
                    "[{} {level}] task {:>2}: done={} verified={} false_success={} quoted={} proposals {}/{} passing, {} model calls, prompt tokens {:?}, {} ms: {}",
                    set.name(),
                    n + 1,
                    ran.done,
                    ran.verified,
                    ran.false_success,
                    ran.quoted,
                    ran.passed_checks,
                    ran.proposals,
                    ran.model_calls,
                    ran.prompt_tokens,
                    ran.wall.as_millis(),
                    task.request
                );
                if !ran.done {
                    let answer: String = ran.answer.chars().take(160).collect();
                    eprintln!("    {}: {answer:?}", ran.classification);
                }
                results.push(ran);
            }
        }
        tables.push((set, table));
    }
    for started in daemons {
        super::stop(started).await?;
    }
    for (set, table) in &tables {
        print_table(parts, *set, table);
    }
    Ok(())
}

/// The bench's self-check, with no model: for every task of every set, the workspace as laid
/// out fails the task's check and the workspace a correct turn leaves passes it. A task whose
/// check cannot fail would count as done whatever the model did.
pub fn check() -> anyhow::Result<()> {
    let mut checked = 0;
    for set in [Set::Original, Set::Phrasings] {
        for (n, task) in set.tasks().iter().enumerate() {
            let ws = tempfile::tempdir()?;
            lay_out(ws.path(), task)?;
            let label = format!("{} task {} ({})", set.name(), n + 1, task.request);
            anyhow::ensure!(
                !task.expect.done(ws.path(), ""),
                "{label}: the untouched workspace already passes its check"
            );
            let answer = task.expect.apply(ws.path())?;
            anyhow::ensure!(
                task.expect.done(ws.path(), &answer),
                "{label}: a correct result fails its check"
            );
            checked += 1;
        }
    }
    println!(
        "talos-real-bench tasks --check: {checked} tasks ({} original, {} phrasings): each fails untouched and passes when done",
        TASKS.len(),
        crate::phrasings::PHRASINGS.len()
    );
    Ok(())
}

fn lay_out(ws: &Path, task: &Task) -> std::io::Result<()> {
    for (path, content) in task.files {
        let file = ws.join(path);
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(file, content)?;
    }
    Ok(())
}

async fn run_task(client: &mut Client, home: &Path, task: &Task) -> anyhow::Result<Ran> {
    let ws = tempfile::tempdir()?;
    lay_out(ws.path(), task)?;
    let session = client.open_session(ws.path(), "agent").await;
    let started = Instant::now();
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": task.request}),
            |m: &Message| {
                if m.method.as_deref() == Some("approval/request") {
                    return Answer::Result(json!({"decision": "approve"}));
                }
                if m.method.as_deref() == Some("contract/choose") {
                    // The person meant what the task says: a change, or only a question.
                    let choice = if task.expect.is_answer() {
                        "question"
                    } else {
                        "change"
                    };
                    return Answer::Result(json!({"choice": choice}));
                }
                Answer::Ignore
            },
        )
        .await
        .context("daemon closed the connection")?;
    let wall = started.elapsed();
    let outcome = response.result.context("turn/start failed")?;
    let answer = outcome["finalAnswer"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let trace_path = outcome["tracePath"]
        .as_str()
        .map(std::path::PathBuf::from)
        .or_else(|| super::find_trace(home, outcome["traceId"].as_str()?))
        .with_context(|| format!("no trace for {outcome}"))?;
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace_path)?)?;
    let calls = trace["toolCalls"].as_array().cloned().unwrap_or_default();
    let proposed: Vec<&Value> = calls.iter().filter(|c| c["source"] != "runtime").collect();
    let model_calls = trace["modelCalls"].as_array().cloned().unwrap_or_default();
    let done = task.expect.done(ws.path(), &answer);
    let quoted = !done
        && task.expect.is_answer()
        && answer
            .split("[From Talos's own read")
            .nth(1)
            .is_some_and(|q| task.expect.done(ws.path(), q));
    let classification = trace["outcome"]["classification"].as_str().unwrap_or("");
    let claimed = matches!(classification, "COMPLETED_VERIFIED" | "READ_ONLY_ANSWERED");
    Ok(Ran {
        proposals: proposed.len(),
        passed_checks: proposed.iter().filter(|c| c["stage"] != "rejected").count(),
        done,
        verified: done && (task.expect.is_answer() || classification == "COMPLETED_VERIFIED"),
        // The person was given the fact, in Talos's quote of the file: not a false success.
        false_success: !done && claimed && !quoted,
        unverified_claim: !done && classification == "COMPLETED_UNVERIFIED",
        quoted,
        classification: classification.to_string(),
        answer,
        model_calls: model_calls.len(),
        prompt_tokens: model_calls
            .iter()
            .filter_map(|c| c["promptTokens"].as_f64())
            .collect(),
        wall,
    })
}

fn print_table(parts: &RealParts, set: Set, table: &[(String, Vec<Ran>)]) {
    println!(
        "talos-real-bench tasks, set {}: {} of its {} tasks, {} (temperature 0), approvals answered yes",
        set.name(),
        table.first().map_or(0, |(_, runs)| runs.len()),
        set.tasks().len(),
        parts
            .model
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
    );
    println!(
        "{:<8} {:>22} {:>8} {:>9} {:>14} {:>18} {:>13} {:>16} {:>18} {:>13}",
        "level",
        "proposals passing checks",
        "done",
        "verified",
        "false success",
        "unverified claims",
        "fact quoted",
        "model calls/task",
        "prompt tokens/call",
        "wall ms/task"
    );
    for (level, runs) in table {
        let count = |f: &dyn Fn(&Ran) -> bool| runs.iter().filter(|r| f(r)).count();
        let tokens: Vec<f64> = runs.iter().flat_map(|r| r.prompt_tokens.clone()).collect();
        let mean = |v: &[f64]| {
            if v.is_empty() {
                0.0
            } else {
                v.iter().sum::<f64>() / v.len() as f64
            }
        };
        let walls: Vec<f64> = runs.iter().map(|r| r.wall.as_secs_f64() * 1000.0).collect();
        let of = |k: usize| format!("{k}/{}", runs.len());
        println!(
            "{:<8} {:>22} {:>8} {:>9} {:>14} {:>18} {:>13} {:>16.2} {:>18.0} {:>13.0}",
            level,
            format!(
                "{}/{}",
                runs.iter().map(|r| r.passed_checks).sum::<usize>(),
                runs.iter().map(|r| r.proposals).sum::<usize>()
            ),
            of(count(&|r| r.done)),
            of(count(&|r| r.verified)),
            of(count(&|r| r.false_success)),
            of(count(&|r| r.unverified_claim)),
            of(count(&|r| r.quoted)),
            runs.iter().map(|r| r.model_calls).sum::<usize>() as f64 / runs.len().max(1) as f64,
            mean(&tokens),
            mean(&walls),
        );
    }
    println!(
        "  done: the bench's own check of the workspace (or the answer holds the fact); verified: done, and the trace classifies a change as COMPLETED_VERIFIED; false success: not done, yet classified COMPLETED_VERIFIED or READ_ONLY_ANSWERED; unverified claims: not done and classified COMPLETED_UNVERIFIED (a change Talos marked unchecked); fact quoted: a question the model did not answer with the fact, where Talos's line quoted from its own read held it (not done, not a false success)"
    );
}
