//! A scripted model server for tests: loopback only, speaking both wire formats (Chat
//! Completions at `/chat/completions`, Messages at `/v1/messages`), playing a [`Scenario`].
//! Every request is recorded (path, key headers, body) so tests can count tries and check
//! what was sent. Each request is answered on a thread of its own, so a hanging answer blocks
//! nothing else; dropping the server stops it.
//!
//! Answers are JSON bodies, or the same turns as event streams ([`Scenario::Streamed`]: the
//! chunks each API streams, text and tool arguments in fragments). A scenario that sends what
//! HTTP itself forbids (a body shorter than its `Content-Length`, [`Scenario::CutShort`]) is
//! played by a raw `TcpListener` server instead of tiny_http.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
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
    /// The 200 answers of `then` sent as event streams: always (`unasked`), or only to a request
    /// that asks (`"stream": true`).
    Streamed { unasked: bool, then: Box<Scenario> },
    /// The first `count` requests get the event stream of `then`'s answer cut before its end
    /// marker (in the middle of an event: a tool call half sent), then `then`.
    TruncatedStream { count: usize, then: Box<Scenario> },
    /// The first `count` requests get `then`'s answer with a `Content-Length` of the whole body
    /// but only its first half sent before the connection closes (raw server), then `then`.
    CutShort { count: usize, then: Box<Scenario> },
    /// The first request gets a 200 whose body is more than 17 MiB, then `then`.
    Huge(Box<Scenario>),
}

impl Scenario {
    /// Whether it needs the raw server (it breaks HTTP on purpose).
    fn needs_raw(&self) -> bool {
        match self {
            Scenario::CutShort { .. } => true,
            Scenario::RateLimited { then, .. }
            | Scenario::NotJson(then)
            | Scenario::Streamed { then, .. }
            | Scenario::TruncatedStream { then, .. }
            | Scenario::Huge(then) => then.needs_raw(),
            _ => false,
        }
    }
}

/// One answer.
#[derive(Debug, Clone)]
struct Reply {
    /// 0: never answer.
    status: u16,
    body: String,
    retry_after: Option<u32>,
    /// Sent as `text/event-stream`.
    event_stream: bool,
    /// Only the first half of the body is sent, under a `Content-Length` of the whole.
    cut_short: bool,
}

impl Reply {
    fn json(status: u16, body: String) -> Self {
        Reply {
            status,
            body,
            retry_after: None,
            event_stream: false,
            cut_short: false,
        }
    }
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
    /// `None` for the raw server.
    server: Option<Arc<tiny_http::Server>>,
}

impl ModelServer {
    pub fn start(scenario: Scenario) -> Self {
        if scenario.needs_raw() {
            return Self::start_raw(scenario);
        }
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
                    // Claude Code asks `/v1/messages?beta=true`.
                    let anthropic = request
                        .url()
                        .split('?')
                        .next()
                        .unwrap_or_default()
                        .ends_with("/v1/messages");
                    let mut reply = answer(&scenario, index, anthropic, &body, key_header);
                    // Only Claude Code asks `?beta=true`.
                    if anthropic && request.url().contains("beta=true") {
                        reply.body = as_claude_code_expects(reply.body);
                    }
                    if reply.status == 0 {
                        while !halt.load(Ordering::Relaxed) {
                            std::thread::sleep(Duration::from_millis(50));
                        }
                        return;
                    }
                    let mut response = tiny_http::Response::from_string(reply.body).with_status_code(reply.status);
                    if let Some(secs) = reply.retry_after {
                        response.add_header(
                            tiny_http::Header::from_bytes(&b"Retry-After"[..], secs.to_string().as_bytes()).unwrap(),
                        );
                    }
                    let content_type = if reply.event_stream {
                        "text/event-stream"
                    } else {
                        "application/json"
                    };
                    response.add_header(tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type).unwrap());
                    let _ = request.respond(response);
                });
            }
        });
        ModelServer {
            url: format!("http://127.0.0.1:{port}"),
            seen,
            stop,
            server: Some(server),
        }
    }

    /// The same server on a bare `TcpListener`: one request per connection, answered by hand
    /// (`Connection: close`), so an answer can break HTTP.
    fn start_raw(scenario: Scenario) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = listener.local_addr().expect("an address").port();
        listener.set_nonblocking(true).expect("a non-blocking listener");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (log, halt) = (Arc::clone(&seen), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !halt.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let (scenario, log) = (scenario.clone(), Arc::clone(&log));
                        std::thread::spawn(move || serve_raw(stream, &scenario, &log));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5))
                    }
                    Err(_) => return,
                }
            }
        });
        ModelServer {
            url: format!("http://127.0.0.1:{port}"),
            seen,
            stop,
            server: None,
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
        if let Some(server) = &self.server {
            server.unblock();
        }
    }
}

/// Reads one request from `stream` by hand and answers it as the scenario says.
fn serve_raw(stream: TcpStream, scenario: &Scenario, log: &Mutex<Vec<Seen>>) {
    let _ = stream.set_nonblocking(false);
    let Ok(read_half) = stream.try_clone() else { return };
    let mut reader = BufReader::new(read_half);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or_default().to_string();
    let (mut length, mut key_header) = (0usize, None);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            let name = name.trim().to_ascii_lowercase();
            if name == "content-length" {
                length = value.trim().parse().unwrap_or(0);
            } else if name == "authorization" || name == "x-api-key" {
                key_header = Some(value.trim().to_string());
            }
        }
    }
    let mut raw = vec![0u8; length];
    if reader.read_exact(&mut raw).is_err() {
        return;
    }
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let index = {
        let mut log = log.lock().unwrap();
        log.push(Seen {
            path: path.clone(),
            key_header: key_header.clone(),
            body: body.clone(),
        });
        log.len() - 1
    };
    let reply = answer(scenario, index, path.ends_with("/v1/messages"), &body, key_header);
    let bytes = reply.body.as_bytes();
    let sent = if reply.cut_short {
        &bytes[..bytes.len() / 2]
    } else {
        bytes
    };
    let content_type = if reply.event_stream {
        "text/event-stream"
    } else {
        "application/json"
    };
    let mut head = format!(
        "HTTP/1.1 {} Scripted\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reply.status,
        bytes.len()
    );
    if let Some(secs) = reply.retry_after {
        head.push_str(&format!("Retry-After: {secs}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = stream;
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(sent);
    let _ = stream.flush();
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// The answer to request `index` (0-based, counted from where this scenario took over).
fn answer(scenario: &Scenario, index: usize, anthropic: bool, body: &Value, key: Option<String>) -> Reply {
    match scenario {
        // A CLI's side call (a title, a summary) offers no tools: a stock answer.
        Scenario::Solve(_) if anthropic && body["tools"].as_array().is_none_or(Vec::is_empty) => {
            Reply::json(200, say(anthropic, "ok"))
        }
        Scenario::Solve(scripts) => {
            let prompt = first_user_text(body);
            let Some((_, steps)) = scripts.iter().find(|(needle, _)| prompt.contains(needle)) else {
                return Reply::json(
                    200,
                    say(anthropic, r#"{"result": "issue", "message": "no script for this prompt"}"#),
                );
            };
            // The step: the number of assistant turns — or, for Claude Code, which splits one
            // turn into several assistant messages, the number of tool results sent back.
            let messages = body["messages"].as_array().cloned().unwrap_or_default();
            let turn = if is_claude_code(body) {
                messages
                    .iter()
                    .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
                    .filter(|b| b["type"] == "tool_result")
                    .count()
            } else {
                messages.iter().filter(|m| m["role"] == "assistant").count()
            };
            Reply::json(
                200,
                match steps.get(turn) {
                    Some(Step::Call(tool, input)) => call(anthropic, turn, tool, input),
                    Some(Step::Raw(tool, args)) => raw_call(turn, tool, args),
                    Some(Step::Say(text)) => say(anthropic, text),
                    None => say(anthropic, r#"{"result": "error", "message": "script ran out"}"#),
                },
            )
        }
        Scenario::RateLimited {
            count,
            retry_after,
            then,
        } => {
            if index < *count {
                Reply {
                    retry_after: *retry_after,
                    ..Reply::json(
                        429,
                        r#"{"error": {"message": "rate limited", "type": "rate_limit"}}"#.into(),
                    )
                }
            } else {
                answer(then, index - count, anthropic, body, key)
            }
        }
        Scenario::Status(status) => Reply::json(*status, r#"{"error": {"message": "overloaded"}}"#.into()),
        Scenario::ContextLength if anthropic => Reply::json(
            400,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}).to_string(),
        ),
        Scenario::ContextLength => Reply::json(
            400,
            json!({"error": {"message": "This model's maximum context length is 8192 tokens.", "type": "invalid_request_error", "code": "context_length_exceeded"}}).to_string(),
        ),
        Scenario::NotJson(then) => {
            if index == 0 {
                Reply::json(200, "<html>502 Bad Gateway</html>".into())
            } else {
                answer(then, index - 1, anthropic, body, key)
            }
        }
        Scenario::Hang => Reply::json(0, String::new()),
        Scenario::Unauthorized => Reply::json(
            401,
            json!({"error": {"message": format!("Incorrect API key provided: {}", key.unwrap_or_default())}}).to_string(),
        ),
        Scenario::Streamed { unasked, then } => {
            let reply = answer(then, index, anthropic, body, key);
            if reply.status == 200 && !reply.event_stream && (*unasked || body["stream"] == true) {
                let turn: Value = serde_json::from_str(&reply.body).expect("a scripted JSON turn");
                Reply {
                    body: if anthropic { anthropic_stream(&turn) } else { openai_stream(&turn) },
                    event_stream: true,
                    ..reply
                }
            } else {
                reply
            }
        }
        Scenario::TruncatedStream { count, then } => {
            let mut reply = answer(then, index.saturating_sub(*count), anthropic, body, key);
            if index < *count && reply.status == 200 {
                if !reply.event_stream {
                    let turn: Value = serde_json::from_str(&reply.body).expect("a scripted JSON turn");
                    reply.body = if anthropic { anthropic_stream(&turn) } else { openai_stream(&turn) };
                    reply.event_stream = true;
                }
                // Cut in the middle of the stream, at a character boundary.
                let mut at = reply.body.len() * 3 / 5;
                while !reply.body.is_char_boundary(at) {
                    at -= 1;
                }
                reply.body.truncate(at);
            }
            reply
        }
        Scenario::CutShort { count, then } => {
            let reply = answer(then, index.saturating_sub(*count), anthropic, body, key);
            Reply {
                cut_short: index < *count,
                ..reply
            }
        }
        Scenario::Huge(then) => {
            if index == 0 {
                Reply::json(200, say(anthropic, &"x".repeat(17 * 1024 * 1024 + 1)))
            } else {
                answer(then, index - 1, anthropic, body, key)
            }
        }
    }
}

/// `text` in pieces of about `n` bytes (at least 8 pieces for a long text, so its fragments
/// are many but not millions).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let size = n.max(text.len() / 8).max(1);
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// A Chat Completions turn as the chunks a streaming server sends: the role, the content in
/// pieces, each tool call's id and name then its arguments in pieces, the finish reason, the
/// usage, `[DONE]`; with a comment first, as OpenRouter sends.
fn openai_stream(turn: &Value) -> String {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "model": "scripted",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let message = &turn["choices"][0]["message"];
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for piece in pieces(message["content"].as_str().unwrap_or_default(), 5) {
        chunks.push(chunk(json!({"content": piece}), Value::Null));
    }
    for (i, call) in message["tool_calls"].as_array().into_iter().flatten().enumerate() {
        chunks.push(chunk(
            json!({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""}}]}),
            Value::Null,
        ));
        for piece in pieces(call["function"]["arguments"].as_str().unwrap_or_default(), 7) {
            chunks.push(chunk(
                json!({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}),
                Value::Null,
            ));
        }
    }
    chunks.push(chunk(json!({}), turn["choices"][0]["finish_reason"].clone()));
    chunks.push(json!({"id": "chatcmpl-s", "object": "chat.completion.chunk", "choices": [], "usage": turn["usage"]}));
    let mut body = String::from(": scripted stream\n\n");
    for c in chunks {
        body.push_str(&format!("data: {c}\n\n"));
    }
    body.push_str("data: [DONE]\n\n");
    body
}

/// A Messages turn as the events a streaming server sends: `message_start` with the input
/// usage, a `ping`, each block started, its text or input JSON in deltas, stopped, then
/// `message_delta` with the stop reason and output usage, `message_stop`.
fn anthropic_stream(turn: &Value) -> String {
    let mut events: Vec<(&str, Value)> = Vec::new();
    let mut start_usage = turn["usage"].clone();
    start_usage["output_tokens"] = json!(1);
    events.push((
        "message_start",
        json!({"type": "message_start", "message": {"id": turn["id"], "type": "message", "role": "assistant",
            "model": "scripted", "content": [], "stop_reason": null, "usage": start_usage}}),
    ));
    events.push(("ping", json!({"type": "ping"})));
    for (i, block) in turn["content"].as_array().into_iter().flatten().enumerate() {
        let (start, deltas): (Value, Vec<Value>) = if block["type"] == "tool_use" {
            let input = block["input"].to_string();
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                pieces(&input, 7)
                    .into_iter()
                    .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                    .collect(),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                pieces(block["text"].as_str().unwrap_or_default(), 5)
                    .into_iter()
                    .map(|p| json!({"type": "text_delta", "text": p}))
                    .collect(),
            )
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": i, "delta": delta}),
            ));
        }
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": i})));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": turn["stop_reason"], "stop_sequence": null},
            "usage": {"output_tokens": turn["usage"]["output_tokens"]}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    events
        .into_iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// Whether a Messages request comes from Claude Code (its own tools, or medin's over MCP).
fn is_claude_code(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|tools| {
        tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .any(|n| n == "Bash" || n.starts_with("mcp__"))
    })
}

/// Claude Code checks a message for the fields the real API always sends.
fn as_claude_code_expects(body: String) -> String {
    match serde_json::from_str::<Value>(&body) {
        Ok(Value::Object(mut m)) if m.get("type") == Some(&json!("message")) => {
            m.insert("id".into(), json!("msg_scripted"));
            m.insert("model".into(), json!("scripted"));
            m.insert("stop_sequence".into(), Value::Null);
            Value::Object(m).to_string()
        }
        _ => body,
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
