//! The session bench (issue 23): one session of several turns on the real model, measured from
//! the client. Per turn it records how long after `turn/start` the first event arrived and the
//! first sign of the model (a `progress` or `stream_chunk` event), and from the trace each
//! model call's prompt and cached tokens. It prints the medians and, for turns 2 onwards, the
//! cached tokens per prompt token (how much of each prompt the server's cache reused: the
//! turns' stable prefix of system text, surface and history).

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};
use talos_protocol::Message;
use talos_tests::harness::{Answer, Client};
use talos_tests::real_llama::RealParts;

/// The turns, in order, repeated as needed: questions about one small file.
const PROMPTS: &[&str] = &[
    "What does settings.py configure?",
    "What is TIMEOUT in settings.py?",
    "What is RETRIES in settings.py?",
];

struct Turn {
    first_event: Option<Duration>,
    first_model_event: Option<Duration>,
    /// (prompt tokens, cached tokens) per model call.
    calls: Vec<(f64, f64)>,
    classification: String,
}

pub async fn run(parts: &RealParts, turns: usize) -> anyhow::Result<()> {
    let mut started = super::start(
        parts,
        "  max_tokens: 128\nturn:\n  max_model_calls: 4\napproval:\n  timeout_secs: 30\n",
    )
    .await?;
    let ws = tempfile::tempdir()?;
    std::fs::write(ws.path().join("settings.py"), super::SETTINGS)?;
    let home = started.home.path().to_path_buf();
    let session = started.client.open_session(ws.path(), "ask").await;
    let mut seen = Vec::new();
    for i in 0..turns {
        let prompt = PROMPTS[i % PROMPTS.len()];
        seen.push(turn(&mut started.client, &session, prompt, &home).await?);
    }
    super::stop(started).await?;
    report(&seen);
    Ok(())
}

async fn turn(
    client: &mut Client,
    session: &str,
    prompt: &str,
    home: &Path,
) -> anyhow::Result<Turn> {
    let started = Instant::now();
    let (mut first_event, mut first_model_event) = (None, None);
    let (response, _) = client
        .call_with(
            "turn/start",
            json!({"sessionId": session, "prompt": prompt}),
            |m: &Message| {
                if m.method.as_deref() == Some("approval/request") {
                    return Answer::Result(json!({"decision": "deny"}));
                }
                if m.method.as_deref() == Some("turn/event") {
                    first_event.get_or_insert(started.elapsed());
                    let kind = m.params.as_ref().map(|p| p["event"]["kind"].clone());
                    if kind
                        .as_ref()
                        .is_some_and(|k| k == "progress" || k == "stream_chunk")
                    {
                        first_model_event.get_or_insert(started.elapsed());
                    }
                }
                Answer::Ignore
            },
        )
        .await
        .context("daemon closed the connection")?;
    let outcome = response.result.context("turn/start failed")?;
    let trace_path = outcome["tracePath"]
        .as_str()
        .map(std::path::PathBuf::from)
        .or_else(|| super::find_trace(home, outcome["traceId"].as_str()?))
        .with_context(|| format!("no trace for {outcome}"))?;
    let trace: Value = serde_json::from_slice(&std::fs::read(&trace_path)?)?;
    let calls = trace["modelCalls"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["error"].is_null())
        .map(|c| {
            let get = |key: &str| c[key].as_f64().unwrap_or(0.0);
            (get("promptTokens"), get("cachedTokens"))
        })
        .collect();
    Ok(Turn {
        first_event,
        first_model_event,
        calls,
        classification: outcome["classification"].as_str().unwrap_or("").to_string(),
    })
}

fn report(turns: &[Turn]) {
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "session bench: {} turns of one session on the real model",
        turns.len()
    );
    for (i, t) in turns.iter().enumerate() {
        let (prompt, cached): (f64, f64) = t
            .calls
            .iter()
            .fold((0.0, 0.0), |(p, c), (cp, cc)| (p + cp, c + cc));
        println!(
            "  turn {:>2}: first event {} ms, first model event {} ms, {} model call(s), prompt {prompt:.0} tokens, cached {cached:.0} ({}), {}",
            i + 1,
            super::fmt(t.first_event.map(ms)),
            super::fmt(t.first_model_event.map(ms)),
            t.calls.len(),
            super::fmt((prompt > 0.0).then(|| cached / prompt)),
            t.classification
        );
    }
    let firsts: Vec<f64> = turns.iter().filter_map(|t| t.first_event.map(ms)).collect();
    let model: Vec<f64> = turns
        .iter()
        .filter_map(|t| t.first_model_event.map(ms))
        .collect();
    // Turns 2 onwards: every call's cached share of its prompt, and the first call's alone.
    let later = turns.get(1..).unwrap_or_default();
    let ratio = |calls: &mut dyn Iterator<Item = (f64, f64)>| {
        let (p, c) = calls.fold((0.0, 0.0), |(p, c), (cp, cc)| (p + cp, c + cc));
        (p > 0.0).then(|| c / p)
    };
    let all = ratio(&mut later.iter().flat_map(|t| t.calls.iter().copied()));
    let first_calls = ratio(&mut later.iter().filter_map(|t| t.calls.first().copied()));
    let per_turn: Vec<f64> = later
        .iter()
        .filter_map(|t| ratio(&mut t.calls.iter().copied()))
        .collect();
    println!(
        "  first event: median {} ms; first model event: median {} ms",
        super::fmt(super::median(&firsts)),
        super::fmt(super::median(&model))
    );
    println!(
        "  turns 2-{}: cached tokens per prompt token {} over all calls (median per turn {}), {} on each turn's first call",
        turns.len(),
        super::fmt(all),
        super::fmt(super::median(&per_turn)),
        super::fmt(first_calls)
    );
}
