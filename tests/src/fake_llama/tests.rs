//! Tests of the fake llama server itself: its tokenizer and prompt count, `/tokenize` on and
//! off, `/props` with a context size, and the refusal of a prompt that does not fit, checked
//! on the wire and through the daemon's engine.

use super::*;

/// One raw HTTP exchange with the fake: (status line and headers, body).
async fn exchange(url: &str, method: &str, path: &str, body: &Value) -> (String, String) {
    let address = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).await.unwrap();
    let body = body.to_string();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.to_string(), body.to_string())
}

fn chat_request(content: &str) -> Value {
    json!({"stream": true, "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": content},
    ]})
}

#[test]
fn the_tokenizer_is_one_token_per_three_bytes_rounded_up() {
    for (text, count) in [
        ("", 0),
        ("a", 1),
        ("abc", 1),
        ("abcd", 2),
        ("é", 1),
        ("ééé", 2),
    ] {
        assert_eq!(tokens(text), count, "{text:?}");
    }
    // 9 bytes (3 tokens) + 4, 5 bytes (2 tokens) + 4, and 15 bytes of tools JSON (5 tokens).
    let request = json!({
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}],
        "tools": [{"a": 1}, "bcd"],
    });
    assert_eq!(json!([{"a": 1}, "bcd"]).to_string().len(), 15);
    assert_eq!(prompt_tokens(&request), 7 + 6 + 5);
    assert_eq!(prompt_tokens(&json!({})), 0);
}

#[tokio::test]
async fn tokenize_counts_as_documented_and_is_404_when_off() {
    let on = FakeLlama::start(true, scripted(vec![Reply::Text("OK".into())])).await;
    let (head, body) = exchange(
        &on.url,
        "POST",
        "/tokenize",
        &json!({"content": "abcdefg", "add_special": false}),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"tokens": [0, 1, 2]})
    );
    let engine =
        talosd::engine::Engine::new(&talosd::config::ModelConfig::default(), &on.url).unwrap();
    let texts = ["abcdefg".to_string(), String::new(), "x".repeat(20_000)];
    assert_eq!(engine.count_tokens(&texts).await, Some(vec![3, 0, 6667]));

    let options = FakeOptions {
        tokenize: false,
        ..FakeOptions::default()
    };
    let off = FakeLlama::start_with(options, scripted(vec![Reply::Text("OK".into())])).await;
    let (head, _) = exchange(&off.url, "POST", "/tokenize", &json!({"content": "abc"})).await;
    assert!(head.starts_with("HTTP/1.1 404"), "{head}");
    let engine =
        talosd::engine::Engine::new(&talosd::config::ModelConfig::default(), &off.url).unwrap();
    assert_eq!(engine.count_tokens(&texts).await, None);
}

#[tokio::test]
async fn props_report_the_context_and_slots_as_llama_server_does() {
    let options = FakeOptions {
        native: false,
        n_ctx: Some(512),
        tokenize: true,
        hide_n_ctx: false,
        openai: false,
        api_key: None,
        endless_tokenize: false,
    };
    let fake = FakeLlama::start_with(options, scripted(vec![Reply::Text("OK".into())])).await;
    let engine =
        talosd::engine::Engine::new(&talosd::config::ModelConfig::default(), &fake.url).unwrap();
    let facts = engine.server_facts().await.unwrap();
    assert_eq!(
        facts,
        talosd::engine::ServerFacts {
            engine: talosd::engine::Kind::LlamaCpp,
            native_tools: false,
            n_ctx: Some(512),
            slots: Some(1),
        }
    );
    let plain = FakeLlama::start(true, scripted(vec![Reply::Text("OK".into())])).await;
    let (_, body) = exchange(&plain.url, "GET", "/props", &Value::Null).await;
    let props: Value = serde_json::from_str(&body).unwrap();
    assert!(
        props.get("default_generation_settings").is_none(),
        "{props}"
    );
}

#[tokio::test]
async fn a_prompt_that_reaches_n_ctx_is_refused_as_llama_server_refuses_it() {
    let options = FakeOptions {
        n_ctx: Some(100),
        ..FakeOptions::default()
    };
    let fake = FakeLlama::start_with(options, scripted(vec![Reply::Text("Short.".into())])).await;
    // "Be brief." is 3 + 4; 267 bytes are 89 + 4: exactly 100.
    let long = chat_request(&"y".repeat(267));
    assert_eq!(prompt_tokens(&long), 100);
    let (head, body) = exchange(&fake.url, "POST", "/v1/chat/completions", &long).await;
    // As llama-server b11434 answered (recorded in `respond_llama_error`).
    assert_eq!(
        head,
        "HTTP/1.1 400 Bad Request\r\nServer: llama.cpp\r\nAccess-Control-Allow-Origin: \r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 191\r\nConnection: close"
    );
    assert_eq!(
        body,
        r#"{"error":{"code":400,"message":"request (100 tokens) exceeds the available context size (100 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":100,"n_ctx":100}}"#
    );

    let short = chat_request(&"y".repeat(264));
    assert_eq!(prompt_tokens(&short), 99);
    let engine =
        talosd::engine::Engine::new(&talosd::config::ModelConfig::default(), &fake.url).unwrap();
    let reply = engine
        .start_chat(&short)
        .await
        .unwrap()
        .finish()
        .await
        .unwrap();
    assert_eq!(reply.content, "Short.");
    let e = engine.start_chat(&long).await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the request (100 tokens) exceeds the model's context (100 tokens)"
    );
    assert_eq!(
        fake.requests(),
        vec![long.clone(), short, long],
        "all recorded"
    );
    assert_eq!(fake.finished_replies(), 3);
}
