//! Tests of the engine against canned HTTP answers: `/props` as server facts, `/tokenize` counts
//! and the memory of a server without it, a context overflow refused up front or reported in
//! the stream, and the `generated` progress count.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

const LLAMA_OVERFLOW: &str = r#"{"error":{"code":400,"message":"request (7620 tokens) exceeds the available context size (4096 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":7620,"n_ctx":4096}}"#;

/// A server on loopback that answers every request with `answer(request text)` (a whole raw
/// HTTP response), counting the requests.
async fn canned(answer: fn(&str) -> String) -> (Engine, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    let n = stream.read(&mut buf).await.unwrap_or(0);
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    if n == 0 || complete(&text) {
                        break;
                    }
                }
                let text = String::from_utf8_lossy(&request).to_string();
                let _ = stream.write_all(answer(&text).as_bytes()).await;
                let _ = stream.shutdown().await;
            });
        }
    });
    (Engine::new(&ModelConfig::default(), &url).unwrap(), count)
}

/// Whether a raw request has its headers and its whole body.
fn complete(text: &str) -> bool {
    let Some((head, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = head
        .lines()
        .find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        })
        .unwrap_or(0);
    body.len() >= length
}

fn response(status: &str, content_type: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

fn sse(events: &[Value], done: bool) -> String {
    let mut body: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    if done {
        body.push_str("data: [DONE]\n\n");
    }
    format!("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{body}")
}

fn delta(delta: Value) -> Value {
    json!({"choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

fn exceeded(e: &EngineError) -> Option<(Option<u64>, Option<u64>)> {
    match e {
        EngineError::ContextExceeded {
            prompt_tokens,
            n_ctx,
            ..
        } => Some((*prompt_tokens, *n_ctx)),
        _ => None,
    }
}

#[test]
fn props_rows_become_server_facts() {
    let rows = [
        (
            json!({"chat_template_caps": {"supports_tool_calls": true}, "total_slots": 2,
                   "default_generation_settings": {"n_ctx": 4096, "params": {}}}),
            ServerFacts {
                engine: Kind::LlamaCpp,
                native_tools: true,
                n_ctx: Some(4096),
                slots: Some(2),
            },
        ),
        (
            json!({"chat_template_caps": {"supports_tool_calls": false}, "total_slots": 1}),
            ServerFacts {
                engine: Kind::LlamaCpp,
                native_tools: false,
                n_ctx: None,
                slots: Some(1),
            },
        ),
        (
            json!({"default_generation_settings": {"n_ctx": 0}, "total_slots": -1}),
            ServerFacts::default(),
        ),
        (json!({}), ServerFacts::default()),
    ];
    for (props, facts) in rows {
        assert_eq!(facts_from_props(&props), facts, "{props}");
    }
}

#[tokio::test]
async fn server_facts_come_from_one_props_request() {
    let (engine, count) = canned(|_| {
        response(
            "200 OK",
            "application/json",
            r#"{"chat_template_caps":{"supports_tool_calls":true},"total_slots":3,"default_generation_settings":{"n_ctx":2048}}"#,
        )
    })
    .await;
    let facts = engine.server_facts().await.unwrap();
    assert_eq!(
        facts,
        ServerFacts {
            engine: Kind::LlamaCpp,
            native_tools: true,
            n_ctx: Some(2048),
            slots: Some(3),
        }
    );
    assert_eq!(count.load(Ordering::SeqCst), 1);
    assert!(engine.supports_native_tools().await.unwrap());
}

#[tokio::test]
async fn a_server_without_props_has_no_facts_and_an_absent_one_cannot_be_reached() {
    let (engine, _) = canned(|_| response("404 Not Found", "text/plain", "nope")).await;
    assert_eq!(engine.server_facts().await.unwrap(), ServerFacts::default());
    assert!(!engine.supports_native_tools().await.unwrap());
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let gone = Engine::new(&ModelConfig::default(), &loopback_url(port)).unwrap();
    assert!(matches!(
        gone.server_facts().await,
        Err(EngineError::Connect { .. })
    ));
}

#[tokio::test]
async fn count_tokens_reads_the_tokens_array_and_skips_empty_texts() {
    let (engine, count) = canned(|request| {
        // One token per word of the content, as a stand-in tokenizer.
        let body = request.split_once("\r\n\r\n").map_or("", |(_, b)| b);
        let value: Value = serde_json::from_str(body).unwrap();
        assert_eq!(value["add_special"], false);
        let words = value["content"]
            .as_str()
            .unwrap()
            .split_whitespace()
            .count();
        let tokens: Vec<usize> = (0..words).collect();
        response(
            "200 OK",
            "application/json",
            &json!({"tokens": tokens}).to_string(),
        )
    })
    .await;
    let texts = [
        "one two three".to_string(),
        String::new(),
        "x".repeat(20_000),
    ];
    assert_eq!(engine.count_tokens(&texts).await, Some(vec![3, 0, 1]));
    assert_eq!(
        count.load(Ordering::SeqCst),
        2,
        "no request for the empty text"
    );
    assert_eq!(engine.count_tokens(&[]).await, Some(vec![]));
}

#[tokio::test]
async fn a_server_without_tokenize_is_asked_once() {
    for answer in [
        (|_: &str| {
            response(
                "404 Not Found",
                "application/json",
                r#"{"error":"not found"}"#,
            )
        }) as fn(&str) -> String,
        |_: &str| response("200 OK", "text/html", "<html>hello</html>"),
    ] {
        let (engine, count) = canned(answer).await;
        let texts = ["some text".to_string()];
        assert_eq!(engine.count_tokens(&texts).await, None);
        assert_eq!(engine.clone().count_tokens(&texts).await, None);
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "remembered, shared by clones"
        );
    }
}

#[tokio::test]
async fn a_transient_tokenize_failure_is_not_remembered() {
    let (engine, count) = canned(|_| {
        response(
            "503 Service Unavailable",
            "application/json",
            r#"{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}"#,
        )
    })
    .await;
    let texts = ["some text".to_string()];
    assert_eq!(engine.count_tokens(&texts).await, None);
    assert_eq!(engine.count_tokens(&texts).await, None);
    assert_eq!(count.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_overflow_refused_up_front_is_context_exceeded() {
    let (engine, _) = canned(|_| {
        response(
            "400 Bad Request",
            "application/json; charset=utf-8",
            LLAMA_OVERFLOW,
        )
    })
    .await;
    let e = engine
        .start_chat(&json!({"messages": []}))
        .await
        .unwrap_err();
    assert_eq!(exceeded(&e), Some((Some(7620), Some(4096))), "{e:?}");
    assert_eq!(
        e.to_string(),
        "the request (7620 tokens) exceeds the model's context (4096 tokens)"
    );
}

#[tokio::test]
async fn another_refusal_is_still_a_status() {
    let (engine, _) = canned(|_| {
        response(
            "400 Bad Request",
            "application/json",
            r#"{"error":{"code":400,"message":"Failed to initialize samplers","type":"invalid_request_error"}}"#,
        )
    })
    .await;
    let e = engine
        .start_chat(&json!({"messages": []}))
        .await
        .unwrap_err();
    assert!(
        matches!(e, EngineError::Status { status: 400, .. }),
        "{e:?}"
    );
}

#[tokio::test]
async fn an_overflow_in_the_stream_is_context_exceeded() {
    let (engine, _) = canned(|_| {
        sse(
            &[
                delta(json!({"role": "assistant", "content": null})),
                delta(json!({"content": "Hel"})),
                serde_json::from_str(LLAMA_OVERFLOW).unwrap(),
            ],
            false,
        )
    })
    .await;
    let mut stream = engine.start_chat(&json!({"messages": []})).await.unwrap();
    assert_eq!(stream.next_text().await.unwrap().as_deref(), Some("Hel"));
    assert_eq!(stream.generated(), 1);
    let e = stream.next_text().await.unwrap_err();
    assert_eq!(exceeded(&e), Some((Some(7620), Some(4096))), "{e:?}");
}

#[tokio::test]
async fn another_error_in_the_stream_is_malformed() {
    let (engine, _) = canned(|_| {
        sse(
            &[json!({"error": {"code": 500, "message": "boom", "type": "server_error"}})],
            false,
        )
    })
    .await;
    let mut stream = engine.start_chat(&json!({"messages": []})).await.unwrap();
    let e = stream.next_text().await.unwrap_err();
    assert!(matches!(e, EngineError::Malformed(_)), "{e:?}");
}

#[tokio::test]
async fn generated_counts_the_deltas_that_carried_text_or_call_text() {
    let (engine, _) = canned(|_| {
        sse(
            &[
                delta(json!({"role": "assistant", "content": null})),
                delta(json!({"content": "I will "})),
                delta(json!({"content": ""})),
                delta(json!({"content": "read."})),
                delta(json!({"tool_calls": [{"index": 0, "id": "c0", "type": "function",
                                             "function": {"name": "talos.read_file", "arguments": ""}}]})),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]})),
                delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.py\"}"}}]})),
                json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
                json!({"choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 9,
                        "prompt_tokens_details": {"cached_tokens": 12}}}),
            ],
            true,
        )
    })
    .await;
    let mut stream = engine.start_chat(&json!({"messages": []})).await.unwrap();
    assert_eq!(stream.generated(), 0);
    while stream.next_text().await.unwrap().is_some() {}
    assert_eq!(stream.generated(), 5);
    let reply = stream.finish().await.unwrap();
    assert_eq!(reply.content, "I will read.");
    assert_eq!(
        reply.tool_calls,
        vec![NativeCall {
            id: "c0".into(),
            name: "talos.read_file".into(),
            arguments: r#"{"path":"a.py"}"#.into(),
        }]
    );
    assert_eq!(
        (
            reply.prompt_tokens,
            reply.completion_tokens,
            reply.cached_tokens
        ),
        (Some(30), Some(9), Some(12))
    );
    assert_eq!(reply.finish_reason, "tool_calls");
}
