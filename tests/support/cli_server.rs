//! A scripted model server for real coding-agent CLIs: loopback only, speaking the wire format
//! each CLI insists on, playing CLI-neutral scripts ([`Step`]: run a command, write a file,
//! say something) chosen by a needle in the prompt.
//!
//! - OpenAI Responses, `POST /v1/responses` (Codex): always an event stream. A step is a
//!   `function_call` to Codex's `exec_command {cmd}`; step n answers the request holding n
//!   `function_call_output` items.
//! - Gemini, `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (Gemini CLI): an event
//!   stream of `functionCall` parts (`run_shell_command {command}`, `write_file {file_path,
//!   content}`); step n answers the request holding n model turns with a `functionCall`. Side
//!   calls (`:generateContent`) get JSON, filled to their `responseJsonSchema` when they ask.
//! - Chat Completions, `POST /v1/chat/completions` (aider): text only. A `WriteFile` is the
//!   whole-file edit aider's `--edit-format whole` parses, a `Shell` a sentence naming the
//!   command (aider has no tools and runs no suggested command under `--yes-always`); the steps
//!   up to and including the next `Say` form one answer (aider sends one request per message);
//!   a per-needle counter says which answer is next.
//!
//! A request carrying no tools (titles, summaries, routers) gets a stock short text. Every
//! request is recorded (path, body), and so is every tool output the CLI sent back, once, in
//! order ([`CliServer::tool_results`]). Each request is answered on a thread of its own;
//! after `max_requests` every request gets 500, a body over `max_body` gets 413; dropping the
//! server stops it.
#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

/// One step of a script, in no CLI's terms.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run this shell command.
    Shell(String),
    /// Write `content` to the file at this path (relative to the workspace).
    WriteFile(String, String),
    /// The final answer.
    Say(String),
}

/// Scripts: the first whose needle the prompt contains is played.
pub type Scripts = Vec<(&'static str, Vec<Step>)>;

/// A request as the server saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    /// Path and query, as sent.
    pub path: String,
    /// The body as JSON (`Null` when it was not JSON).
    pub body: Value,
}

/// A tool output the CLI sent back to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub text: String,
    /// The CLI marked it as an error (Gemini's `functionResponse.error`; Codex's
    /// `function_call_output` whose `success` is false or whose command was blocked).
    pub error: bool,
}

/// Tokens every final answer reports: 100 in (40 of them cached), 20 out.
pub const INPUT_TOKENS: u64 = 100;
pub const CACHED_TOKENS: u64 = 40;
pub const OUTPUT_TOKENS: u64 = 20;

/// What a request without tools gets.
pub const STOCK_TEXT: &str = "Scripted side answer.";

/// State shared by the request threads.
#[derive(Default)]
struct State {
    seen: Vec<Seen>,
    results: Vec<ToolResult>,
    /// Tool outputs already recorded, per conversation (wire + needle): each request of
    /// Codex and Gemini carries the whole history.
    recorded: HashMap<String, usize>,
    /// Answers already given, per needle (Chat Completions).
    counters: HashMap<String, usize>,
}

pub struct CliServer {
    pub url: String,
    state: Arc<Mutex<State>>,
    server: Arc<tiny_http::Server>,
}

impl CliServer {
    /// At most 200 requests, bodies of at most 16 MiB.
    pub fn start(scripts: Scripts) -> Self {
        Self::with_limits(scripts, 200, 16 << 20)
    }

    pub fn with_limits(scripts: Scripts, max_requests: usize, max_body: usize) -> Self {
        let server = Arc::new(tiny_http::Server::http("127.0.0.1:0").expect("bind loopback"));
        let port = server.server_addr().to_ip().expect("an IP address").port();
        let state = Arc::new(Mutex::new(State::default()));
        let (srv, shared) = (Arc::clone(&server), Arc::clone(&state));
        let scripts = Arc::new(scripts);
        std::thread::spawn(move || {
            for request in srv.incoming_requests() {
                let (state, scripts) = (Arc::clone(&shared), Arc::clone(&scripts));
                std::thread::spawn(move || serve(request, &state, &scripts, max_requests, max_body));
            }
        });
        CliServer {
            url: format!("http://127.0.0.1:{port}"),
            state,
            server,
        }
    }

    /// Requests seen so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        self.state.lock().unwrap().seen.clone()
    }

    /// The tool outputs the CLIs sent back so far, in order, each once.
    pub fn tool_results(&self) -> Vec<ToolResult> {
        self.state.lock().unwrap().results.clone()
    }
}

impl Drop for CliServer {
    fn drop(&mut self) {
        self.server.unblock();
    }
}

/// Which API a request speaks, from its path.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wire {
    Responses,
    GeminiStream,
    GeminiJson,
    Chat,
}

fn wire(path: &str) -> Option<Wire> {
    let path = path.split('?').next().unwrap_or_default();
    if path.ends_with("/responses") {
        Some(Wire::Responses)
    } else if path.contains("/models/") && path.ends_with(":streamGenerateContent") {
        Some(Wire::GeminiStream)
    } else if path.contains("/models/") && path.ends_with(":generateContent") {
        Some(Wire::GeminiJson)
    } else if path.ends_with("/chat/completions") {
        Some(Wire::Chat)
    } else {
        None
    }
}

fn serve(
    mut request: tiny_http::Request,
    state: &Mutex<State>,
    scripts: &Scripts,
    max_requests: usize,
    max_body: usize,
) {
    let path = request.url().to_string();
    let mut raw = Vec::new();
    let read = request.as_reader().take(max_body as u64 + 1).read_to_end(&mut raw);
    let too_big = raw.len() > max_body;
    let body: Value = if too_big {
        Value::Null
    } else {
        serde_json::from_slice(&raw).unwrap_or(Value::Null)
    };
    let (status, content_type, text) = {
        let mut st = state.lock().unwrap();
        st.seen.push(Seen {
            path: path.clone(),
            body: body.clone(),
        });
        if st.seen.len() > max_requests {
            (
                500,
                "application/json",
                json!({"error": {"message": "too many requests for this scripted server"}}).to_string(),
            )
        } else if too_big {
            (
                413,
                "application/json",
                json!({"error": {"message": "body too large"}}).to_string(),
            )
        } else if read.is_err() {
            (
                400,
                "application/json",
                json!({"error": {"message": "body unreadable"}}).to_string(),
            )
        } else {
            match wire(&path) {
                None => (
                    404,
                    "application/json",
                    json!({"error": {"message": "no such endpoint"}}).to_string(),
                ),
                Some(w) => {
                    record_results(&mut st, w, &body, scripts);
                    let (sse, text) = answer(&mut st, w, &body, scripts);
                    (200, if sse { "text/event-stream" } else { "application/json" }, text)
                }
            }
        }
    };
    let mut response = tiny_http::Response::from_string(text).with_status_code(status);
    response.add_header(tiny_http::Header::from_bytes(&b"Content-Type"[..], content_type).unwrap());
    let _ = request.respond(response);
}

/// The needle of the first script whose needle the user's texts contain.
fn needle_of<'a>(scripts: &'a Scripts, user_text: &str) -> Option<&'a (&'static str, Vec<Step>)> {
    scripts.iter().find(|(needle, _)| user_text.contains(needle))
}

/// Every text the user sent, joined (Responses `input`, Gemini `contents`, Chat `messages`).
fn user_text(w: Wire, body: &Value) -> String {
    let mut out = String::new();
    let mut push = |v: &Value| match v {
        Value::String(s) => out.push_str(s),
        Value::Array(parts) => {
            for p in parts {
                if let Some(t) = p["text"].as_str() {
                    out.push_str(t);
                    out.push('\n');
                }
            }
        }
        _ => {}
    };
    match w {
        Wire::Responses => match &body["input"] {
            Value::String(s) => push(&Value::String(s.clone())),
            Value::Array(items) => items
                .iter()
                .filter(|i| i["role"] == "user")
                .for_each(|i| push(&i["content"])),
            _ => {}
        },
        Wire::GeminiStream | Wire::GeminiJson => body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|c| c["role"] == "user")
            .for_each(|c| push(&c["parts"])),
        Wire::Chat => body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "user")
            .for_each(|m| push(&m["content"])),
    }
    out
}

/// Whether the request offers the model any tool.
fn has_tools(body: &Value) -> bool {
    body["tools"].as_array().is_some_and(|t| !t.is_empty())
}

/// The tool outputs a request carries, in order.
fn outputs_in(w: Wire, body: &Value) -> Vec<ToolResult> {
    match w {
        Wire::Responses => body["input"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|i| i["type"] == "function_call_output" || i["type"] == "custom_tool_call_output")
            .map(|i| codex_output(&i["output"]))
            .collect(),
        Wire::GeminiStream | Wire::GeminiJson => body["contents"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|c| c["parts"].as_array().into_iter().flatten())
            .filter_map(|p| p.get("functionResponse"))
            .map(|f| {
                let r = &f["response"];
                match r.get("error") {
                    Some(e) => ToolResult {
                        text: e.as_str().map(str::to_string).unwrap_or_else(|| e.to_string()),
                        error: true,
                    },
                    None => ToolResult {
                        text: r["output"]
                            .as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| r.to_string()),
                        error: false,
                    },
                }
            })
            .collect(),
        Wire::Chat => body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| ToolResult {
                text: m["content"].as_str().unwrap_or_default().to_string(),
                error: false,
            })
            .collect(),
    }
}

/// A Codex `function_call_output.output`: a text, a list of content items, or
/// `{content, success}`.
fn codex_output(output: &Value) -> ToolResult {
    let (text, success) = match output {
        Value::String(s) => (s.clone(), None),
        Value::Array(items) => (
            items
                .iter()
                .filter_map(|i| i["text"].as_str())
                .collect::<Vec<_>>()
                .join(""),
            None,
        ),
        Value::Object(o) => (
            o.get("content").and_then(Value::as_str).unwrap_or_default().to_string(),
            o.get("success").and_then(Value::as_bool),
        ),
        other => (other.to_string(), None),
    };
    let blocked = text.starts_with("Command blocked");
    ToolResult {
        error: success == Some(false) || blocked,
        text,
    }
}

/// Appends the outputs this request carries beyond those its conversation already recorded.
fn record_results(st: &mut State, w: Wire, body: &Value, scripts: &Scripts) {
    let outputs = outputs_in(w, body);
    if outputs.is_empty() {
        return;
    }
    let needle = needle_of(scripts, &user_text(w, body)).map(|s| s.0).unwrap_or("");
    let key = format!("{w:?}/{needle}");
    let done = st.recorded.get(&key).copied().unwrap_or(0);
    if outputs.len() > done {
        st.results.extend(outputs[done..].iter().cloned());
        st.recorded.insert(key, outputs.len());
    }
}

/// (event stream?, body) answering one request.
fn answer(st: &mut State, w: Wire, body: &Value, scripts: &Scripts) -> (bool, String) {
    let script = needle_of(scripts, &user_text(w, body));
    match w {
        Wire::Responses => {
            let step = match script {
                Some((_, steps)) if has_tools(body) => {
                    let n = outputs_in(w, body).len();
                    Some((n, steps.get(n).cloned().unwrap_or_else(ran_out)))
                }
                _ => None,
            };
            (true, responses_stream(step))
        }
        Wire::GeminiStream | Wire::GeminiJson => {
            let schema = &body["generationConfig"]["responseJsonSchema"];
            let schema = if schema.is_null() {
                &body["generationConfig"]["responseSchema"]
            } else {
                schema
            };
            let turn = if !schema.is_null() {
                text_part(&fill_schema(schema).to_string())
            } else {
                match script {
                    Some((_, steps)) if has_tools(body) => {
                        let n = body["contents"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter(|c| {
                                c["role"] == "model"
                                    && c["parts"]
                                        .as_array()
                                        .is_some_and(|p| p.iter().any(|p| p.get("functionCall").is_some()))
                            })
                            .count();
                        gemini_part(n, &steps.get(n).cloned().unwrap_or_else(ran_out))
                    }
                    _ => text_part(STOCK_TEXT),
                }
            };
            let chunk = json!({"candidates": [{"content": {"role": "model", "parts": [turn]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": INPUT_TOKENS, "cachedContentTokenCount": CACHED_TOKENS,
                    "candidatesTokenCount": OUTPUT_TOKENS, "totalTokenCount": INPUT_TOKENS + OUTPUT_TOKENS},
                "modelVersion": "scripted"});
            if w == Wire::GeminiStream {
                (true, format!("data: {chunk}\r\n\r\n"))
            } else {
                (false, chunk.to_string())
            }
        }
        Wire::Chat => {
            let text = match script {
                Some((needle, steps)) => {
                    let counter = st.counters.entry(needle.to_string()).or_insert(0);
                    let groups = groups(steps);
                    let text = match groups.get(*counter) {
                        Some(group) => group.iter().map(aider_text).collect::<Vec<_>>().join("\n"),
                        None => aider_text(&ran_out()),
                    };
                    *counter += 1;
                    text
                }
                None => STOCK_TEXT.to_string(),
            };
            let streamed = body["stream"] == true;
            (streamed, chat_answer(&text, streamed))
        }
    }
}

fn ran_out() -> Step {
    Step::Say("script ran out".into())
}

/// The steps in groups, each ending at a `Say` (or at the end).
fn groups(steps: &[Step]) -> Vec<Vec<Step>> {
    let mut out = vec![Vec::new()];
    for s in steps {
        out.last_mut().unwrap().push(s.clone());
        if matches!(s, Step::Say(_)) {
            out.push(Vec::new());
        }
    }
    if out.last().is_some_and(Vec::is_empty) {
        out.pop();
    }
    out
}

/// `text` quoted for a POSIX shell.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A step as the command Codex's `exec_command` runs (a file write is a `printf`).
fn codex_command(step: &Step) -> Option<String> {
    match step {
        Step::Shell(cmd) => Some(cmd.clone()),
        Step::WriteFile(path, content) => Some(format!("printf '%s' {} > {}", shell_quote(content), shell_quote(path))),
        Step::Say(_) => None,
    }
}

/// Responses usage, as `response.completed` carries it.
fn responses_usage() -> Value {
    json!({"input_tokens": INPUT_TOKENS, "input_tokens_details": {"cached_tokens": CACHED_TOKENS},
        "output_tokens": OUTPUT_TOKENS, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS})
}

/// One Responses turn as events: created, the item added, text deltas (for a message), the
/// item done, completed with usage. `None`: the stock text.
fn responses_stream(step: Option<(usize, Step)>) -> String {
    let id = format!("resp_{}", step.as_ref().map(|s| s.0).unwrap_or(99));
    let mut events: Vec<Value> = vec![json!({"type": "response.created",
        "response": {"id": id, "object": "response", "status": "in_progress", "output": []}})];
    let (n, step) = step.unwrap_or((99, Step::Say(STOCK_TEXT.into())));
    let item = match codex_command(&step) {
        Some(cmd) => {
            let item = json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
                "name": "exec_command", "arguments": json!({"cmd": cmd}).to_string(), "status": "completed"});
            let mut added = item.clone();
            added["arguments"] = json!("");
            added["status"] = json!("in_progress");
            events.push(json!({"type": "response.output_item.added", "output_index": 0, "item": added}));
            item
        }
        None => {
            let Step::Say(text) = &step else { unreachable!() };
            let mid = format!("msg_{n}");
            events.push(json!({"type": "response.output_item.added", "output_index": 0,
                "item": {"type": "message", "id": mid, "role": "assistant", "status": "in_progress", "content": []}}));
            for piece in pieces(text, 5) {
                events.push(
                    json!({"type": "response.output_text.delta", "item_id": mid, "output_index": 0,
                    "content_index": 0, "delta": piece}),
                );
            }
            json!({"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}]})
        }
    };
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    events.push(json!({"type": "response.completed",
        "response": {"id": id, "object": "response", "status": "completed", "output": [item], "usage": responses_usage()}}));
    events
        .into_iter()
        .map(|e| format!("event: {}\ndata: {e}\n\n", e["type"].as_str().unwrap_or_default()))
        .collect()
}

fn text_part(text: &str) -> Value {
    json!({"text": text})
}

/// A step as a Gemini part (its function call ids carry the step number).
fn gemini_part(n: usize, step: &Step) -> Value {
    match step {
        Step::Shell(cmd) => {
            json!({"functionCall": {"id": format!("call_{n}"), "name": "run_shell_command", "args": {"command": cmd}}})
        }
        Step::WriteFile(path, content) => json!({"functionCall": {"id": format!("call_{n}"), "name": "write_file",
            "args": {"file_path": path, "content": content}}}),
        Step::Say(text) => text_part(text),
    }
}

/// A value matching a JSON schema: the first enum value, the first of `anyOf`, empty
/// arrays, objects with every property filled.
fn fill_schema(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    if let Some(first) = schema["anyOf"].as_array().and_then(|e| e.first()) {
        return fill_schema(first);
    }
    let kind = match &schema["type"] {
        Value::Array(kinds) => kinds.first().and_then(Value::as_str).unwrap_or("string").to_lowercase(),
        Value::String(k) => k.to_lowercase(),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => "string".into(),
    };
    match kind.as_str() {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), fill_schema(v)))
                .collect(),
        ),
        "array" => json!([]),
        "integer" | "number" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!("scripted"),
    }
}

/// A step as aider text: a whole-file edit (file name line, fenced content), a sentence
/// naming the command, or the text itself.
fn aider_text(step: &Step) -> String {
    match step {
        Step::WriteFile(path, content) => {
            let content = if content.ends_with('\n') {
                content.clone()
            } else {
                format!("{content}\n")
            };
            format!("{path}\n```\n{content}```\n")
        }
        // Never fenced: aider's whole format takes a fence without a file name line for the
        // only file in the chat, so a fenced command would overwrite it.
        Step::Shell(cmd) => format!("I would now run `{cmd}`.\n"),
        Step::Say(text) => format!("{text}\n"),
    }
}

/// A Chat Completions answer holding `text`: one JSON body, or its chunks as an event stream.
fn chat_answer(text: &str, streamed: bool) -> String {
    let usage = json!({"prompt_tokens": INPUT_TOKENS, "completion_tokens": OUTPUT_TOKENS,
        "total_tokens": INPUT_TOKENS + OUTPUT_TOKENS, "prompt_tokens_details": {"cached_tokens": CACHED_TOKENS}});
    if !streamed {
        return json!({"id": "chatcmpl-cli", "object": "chat.completion", "created": 0, "model": "mock-model",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
            "usage": usage})
        .to_string();
    }
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chatcmpl-cli", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let mut chunks = vec![chunk(json!({"role": "assistant", "content": ""}), Value::Null)];
    for piece in pieces(text, 16) {
        chunks.push(chunk(json!({"content": piece}), Value::Null));
    }
    chunks.push(chunk(json!({}), json!("stop")));
    chunks.push(
        json!({"id": "chatcmpl-cli", "object": "chat.completion.chunk", "created": 0, "model": "mock-model",
        "choices": [], "usage": usage}),
    );
    let mut out = String::new();
    for c in chunks {
        out.push_str(&format!("data: {c}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// `text` in pieces of about `n` characters (at most about 8 pieces).
fn pieces(text: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let size = n.max(chars.len() / 8).max(1);
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
