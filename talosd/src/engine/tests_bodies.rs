//! Tests of the engine against servers that misbehave on the wire: an answer, a `/tokenize`
//! body or an event line that never ends (cut at its cap or its deadline, never buffered
//! without end), an `http` URL on a TLS port (said in words), and a `model.ca_file` that does
//! not load (no engine, never a client without the CA).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;

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

fn bounded<T>(what: impl Future<Output = T>) -> impl Future<Output = T> {
    async move {
        tokio::time::timeout(Duration::from_secs(60), what)
            .await
            .expect("the read ended within 60 s")
    }
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
