//! Tests of the engine against canned HTTP answers: `/props` as server facts, `/tokenize` counts
//! and the memory of a server without it, a context overflow refused up front or reported in
//! the stream, and the `generated` progress count; and servers that misbehave on the wire: an
//! answer, a `/tokenize` body or an event line that never ends (cut at its cap or deadline,
//! never buffered without end), an `http` URL on a TLS port (said in words), and a
//! `model.ca_file` that does not load (no engine, never a client without the CA).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

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

type Answer = fn(TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>>;

/// A loopback server that reads each request's head and hands the connection to `answer`.
async fn server(config: ModelConfig, answer: Answer) -> Engine {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut seen = Vec::new();
                let mut buf = [0u8; 4096];
                while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => seen.extend_from_slice(&buf[..n]),
                    }
                }
                answer(stream).await;
            });
        }
    });
    Engine::new(&config, &url).unwrap()
}

/// A JSON answer of 32 MiB, twice the cap, sent as fast as it is read, then closed (so the
/// test is bounded even where nothing caps it).
fn huge(mut stream: TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"tokens\": [";
        let _ = stream.write_all(head.as_bytes()).await;
        let piece = "0,".repeat(512 * 1024);
        for _ in 0..32 {
            if stream.write_all(piece.as_bytes()).await.is_err() {
                return;
            }
        }
    })
}

/// A JSON answer that never ends: ten bytes every 100 ms.
fn dripping(mut stream: TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"tokens\": [";
        let _ = stream.write_all(head.as_bytes()).await;
        while stream.write_all(b"0,0,0,0,0,").await.is_ok() {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
}

/// An event stream whose first line never ends (32 MiB without a newline, then closed).
fn endless_line(mut stream: TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\ndata: ";
        let _ = stream.write_all(head.as_bytes()).await;
        let piece = "x".repeat(1024 * 1024);
        for _ in 0..32 {
            if stream.write_all(piece.as_bytes()).await.is_err() {
                return;
            }
        }
    })
}

/// What nginx answers a clear-text request on its TLS port.
fn nginx_tls_port(mut stream: TcpStream) -> Pin<Box<dyn Future<Output = ()> + Send>> {
    Box::pin(async move {
        let body = "<html>\r\n<head><title>400 The plain HTTP request was sent to HTTPS port</title></head>\r\n<body>\r\n<center><h1>400 Bad Request</h1></center>\r\n<center>The plain HTTP request was sent to HTTPS port</center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n";
        let answer = format!(
            "HTTP/1.1 400 Bad Request\r\nServer: nginx/1.22.1\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(answer.as_bytes()).await;
    })
}

async fn bounded<T>(what: impl Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), what)
        .await
        .expect("the read ended within 60 s")
}

/// Proves a whole answer larger than its cap ends the request with an error that says so,
/// instead of being buffered to its end.
#[tokio::test]
async fn an_answer_larger_than_its_cap_is_an_error() {
    let engine = server(ModelConfig::default(), huge).await;
    let stream = engine.start_chat(&json!({})).await.unwrap();
    let error = bounded(stream.finish()).await.unwrap_err();
    assert!(
        matches!(error, EngineError::Body(body::BodyError::TooLarge(_))),
        "{error:?}"
    );
    assert!(error.to_string().contains("exceeded"), "{error}");
}

/// Proves an answer that never ends is an error once `model.request_timeout_secs` has passed,
/// although bytes keep coming (no read ever times out).
#[tokio::test]
async fn an_answer_that_never_ends_is_an_error_at_its_deadline() {
    let config = ModelConfig {
        request_timeout_secs: 1,
        ..ModelConfig::default()
    };
    let engine = server(config, dripping).await;
    let stream = engine.start_chat(&json!({})).await.unwrap();
    let error = bounded(stream.finish()).await.unwrap_err();
    assert!(
        matches!(error, EngineError::Body(body::BodyError::TooSlow(1))),
        "{error:?}"
    );
}

/// Proves a `/tokenize` body that never ends is no count (the estimates are used), and
/// an event line without end is refused.
#[tokio::test]
async fn an_endless_tokenize_body_and_an_endless_event_line_are_cut() {
    let config = ModelConfig {
        request_timeout_secs: 1,
        ..ModelConfig::default()
    };
    let engine = server(config, dripping).await;
    let counts = bounded(engine.count_tokens(&["hello".to_string()])).await;
    assert_eq!(counts, None);
    let engine = server(ModelConfig::default(), endless_line).await;
    let stream = engine.start_chat(&json!({})).await.unwrap();
    let error = bounded(stream.finish()).await.unwrap_err();
    assert!(error.to_string().contains("longer than"), "{error}");
}

/// Proves an `http` URL on a TLS port is said in words, not as the server's HTML.
#[tokio::test]
async fn http_to_a_tls_port_says_use_https() {
    let engine = server(ModelConfig::default(), nginx_tls_port).await;
    let error = engine.start_chat(&json!({})).await.unwrap_err();
    let text = error.to_string();
    assert!(
        text.contains("this port speaks TLS; use https://"),
        "{text}"
    );
    assert!(!text.contains("<html>"), "{text}");
    let facts = engine.server_facts().await.unwrap_err().to_string();
    assert!(
        facts.contains("this port speaks TLS; use https://"),
        "{facts}"
    );
}

/// Proves a `model.ca_file` that does not load builds no engine (and so no client without
/// the CA), for each way a file can fail.
#[tokio::test]
// std::fs here: a CA file in a temporary folder, not a workspace file.
#[allow(clippy::disallowed_methods)]
async fn a_ca_file_that_does_not_load_builds_no_engine() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("key.pem");
    std::fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.pem");
    for path in [
        key.display().to_string(),
        missing.display().to_string(),
        "/dev/zero".into(),
    ] {
        let config = ModelConfig {
            url: "https://127.0.0.1:1".into(),
            ca_file: path.clone(),
            ..ModelConfig::default()
        };
        let error = Engine::new(&config, &config.url).unwrap_err();
        assert!(
            matches!(&error, EngineError::NoClient(m) if m.contains("model.ca_file")),
            "{path}: {error:?}"
        );
        let unusable = Engine::unusable(&config, &config.url, &error.to_string());
        let refused = unusable.start_chat(&json!({})).await.unwrap_err();
        assert!(refused.to_string().contains("model.ca_file"), "{refused}");
    }
}
