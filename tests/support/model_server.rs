//! A scripted model server for tests: loopback only, speaking both wire formats (Chat
//! Completions at `/chat/completions`, Messages at `/v1/messages`), playing a [`Scenario`].
//! Every request is recorded (path, key headers, body) so tests can count tries and check
//! what was sent. Each request is answered on a thread of its own, so a hanging answer blocks
//! nothing else; dropping the server stops it.
#![allow(dead_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// One step of a scripted model: a tool call, or the final text.
#[derive(Debug, Clone)]
pub enum Step {
    Call(&'static str, Value),
    /// A tool call whose arguments are this text (not necessarily JSON).
    Raw(&'static str, &'static str),
    Say(String),
}

/// What the server plays.
#[derive(Debug, Clone)]
pub enum Scenario {
    /// Plays the script whose needle the task's prompt contains; step n answers the request
    /// holding n assistant turns.
    Solve(Vec<(&'static str, Vec<Step>)>),
    /// The first `count` requests get 429 (with `Retry-After` when given), then `then`.
    RateLimited {
        count: usize,
        retry_after: Option<u32>,
        then: Box<Scenario>,
    },
    /// Every request gets this status.
    Status(u16),
    /// Every request gets the provider's context-length error.
    ContextLength,
    /// The first request gets a 200 whose body is not JSON, then `then`.
    NotJson(Box<Scenario>),
    /// No request is ever answered (until the server stops).
    Hang,
    /// 401, echoing the key it was given (as some servers do).
    Unauthorized,
}

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub path: String,
    /// `authorization` or `x-api-key`, as sent.
    pub key_header: Option<String>,
    pub body: Value,
}

pub struct ModelServer {
    pub url: String,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    server: Arc<tiny_http::Server>,
}

impl ModelServer {
    pub fn start(scenario: Scenario) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind loopback"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (srv, log, halt) = (Arc::clone(&server), Arc::clone(&seen), Arc::clone(&stop));
        std::thread::spawn(move || {
            for mut request in srv.incoming_requests() {
                let mut text = String::new();
                let _ = request.as_reader().read_to_string(&mut text);
                let key_header = request
                    .headers()
                    .iter()
                    .find(|h| h.field.equiv("authorization") || h.field.equiv("x-api-key"))
                    .map(|h| h.value.as_str().to_string());
                let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
                let index = {
                    let mut log = log.lock().unwrap();
                    log.push(Seen {
                        path: request.url().to_string(),
                        key_header: key_header.clone(),
                        body: body.clone(),
                    });
                    log.len() - 1
                };
                let scenario = scenario.clone();
                let halt = Arc::clone(&halt);
                std::thread::spawn(move || {
                    let anthropic = request.url().ends_with("/v1/messages");
                    let (status, body, retry_after) = answer(&scenario, index, anthropic, &body, key_header);
                    if status == 0 {
                        while !halt.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        return;
                    }
                    let mut response = tiny_http::Response::from_string(body).with_status_code(status);
                    if let Some(secs) = retry_after {
                        response.add_header(
                            tiny_http::Header::from_bytes(&b"Retry-After"[..], secs.to_string().as_bytes()).unwrap(),
                        );
                    }
                    let _ = request.respond(response);
                });
            }
        });
        ModelServer {
            url: format!("http://127.0.0.1:{port}"),
            seen,
            stop,
            server,
        }
    }

    /// Requests seen so far.
    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.server.unblock();
    }
}

/// `(status, body, retry-after)`; status 0 means: never answer.
fn answer(
    scenario: &Scenario,
    index: usize,
    anthropic: bool,
    body: &Value,
    key: Option<String>,
) -> (u16, String, Option<u32>) {
    match scenario {
        Scenario::Solve(scripts) => {
            let prompt = first_user_text(body);
            let Some((_, steps)) = scripts.iter().find(|(needle, _)| prompt.contains(needle)) else {
                return (200, say(anthropic, r#"{"result": "issue", "message": "no script for this prompt"}"#), None);
            };
            let turn = body["messages"]
                .as_array()
                .map(|m| m.iter().filter(|m| m["role"] == "assistant").count())
                .unwrap_or(0);
            match steps.get(turn) {
                Some(Step::Call(tool, input)) => (200, call(anthropic, turn, tool, input), None),
                Some(Step::Raw(tool, args)) => (200, raw_call(turn, tool, args), None),
                Some(Step::Say(text)) => (200, say(anthropic, text), None),
                None => (200, say(anthropic, r#"{"result": "error", "message": "script ran out"}"#), None),
            }
        }
        Scenario::RateLimited {
            count,
            retry_after,
            then,
        } => {
            if index < *count {
                (429, r#"{"error": {"message": "rate limited", "type": "rate_limit"}}"#.into(), *retry_after)
            } else {
                answer(then, index - count, anthropic, body, key)
            }
        }
        Scenario::Status(status) => (*status, r#"{"error": {"message": "overloaded"}}"#.into(), None),
        Scenario::ContextLength if anthropic => (
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}).to_string(),
            None,
        ),
        Scenario::ContextLength => (
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}).to_string(),
            None,
        ),
        Scenario::NotJson(then) => {
            if index == 0 {
                (200, "<html>502 Bad Gateway</html>".into(), None)
            } else {
                answer(then, index - 1, anthropic, body, key)
            }
        }
        Scenario::Hang => (0, String::new(), None),
        Scenario::Unauthorized => (
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {}", key.unwrap_or_default())}}).to_string(),
            None,
        ),
    }
}

fn first_user_text(body: &Value) -> String {
    let Some(first) = body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
    else {
        return String::new();
    };
    match &first["content"] {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|b| b["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// Tokens every answer reports: 100 in (40 of them cached), 20 out.
fn usage(anthropic: bool) -> Value {
    if anthropic {
        json!({"input_tokens": 60, "output_tokens": 20, "cache_read_input_tokens": 40})
    } else {
        json!({"prompt_tokens": 100, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 40}})
    }
}

fn call(anthropic: bool, turn: usize, tool: &str, input: &Value) -> String {
    if anthropic {
        json!({"id": "msg", "type": "message", "role": "assistant", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "working"}, {"type": "tool_use", "id": format!("toolu_{turn}"), "name": tool, "input": input}],
            "usage": usage(true)})
        .to_string()
    } else {
        json!({"id": "chat", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
            "message": {"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{turn}"), "type": "function",
                "function": {"name": tool, "arguments": input.to_string()}}]}}],
            "usage": usage(false)})
        .to_string()
    }
}

/// A Chat Completions tool call with `args` as its arguments text.
fn raw_call(turn: usize, tool: &str, args: &str) -> String {
    json!({"id": "chat", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "tool_calls",
        "message": {"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{turn}"), "type": "function",
            "function": {"name": tool, "arguments": args}}]}}],
        "usage": usage(false)})
    .to_string()
}

fn say(anthropic: bool, text: &str) -> String {
    if anthropic {
        json!({"id": "msg", "type": "message", "role": "assistant", "stop_reason": "end_turn",
            "content": [{"type": "text", "text": text}], "usage": usage(true)})
        .to_string()
    } else {
        json!({"id": "chat", "object": "chat.completion", "choices": [{"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": text}}], "usage": usage(false)})
        .to_string()
    }
}

/// The scripts that solve the bundled GT-002 and GT-003.
pub fn golden_scripts() -> Vec<(&'static str, Vec<Step>)> {
    vec![
        (
            "Create hello.txt",
            vec![
                Step::Call("write_file", json!({"path": "hello.txt", "content": "hello\n"})),
                Step::Call("bash", json!({"command": "cat hello.txt"})),
                Step::Say("Done.\n```json\n{\"result\": \"success\", \"message\": \"created hello.txt\"}\n```".into()),
            ],
        ),
        (
            "Rename the function `hello` to `greet`",
            vec![
                Step::Call(
                    "edit_file",
                    json!({"path": "greeter.py", "old_string": "def hello(name):", "new_string": "def greet(name):"}),
                ),
                Step::Call(
                    "edit_file",
                    json!({"path": "cli.py", "old_string": "hello", "new_string": "greet", "replace_all": true}),
                ),
                Step::Call(
                    "edit_file",
                    json!({"path": "test_greeter.py", "old_string": "hello", "new_string": "greet", "replace_all": true}),
                ),
                Step::Call(
                    "bash",
                    json!({"command": "PYTHONDONTWRITEBYTECODE=1 python3 -m unittest -q test_greeter"}),
                ),
                Step::Say(
                    r#"{"result": "success", "message": "renamed hello to greet in 3 files; tests pass"}"#.into(),
                ),
            ],
        ),
    ]
}
