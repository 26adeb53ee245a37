//! The Anthropic Messages wire format (`POST {base}/v1/messages` with `tools`, `tool_use` and
//! `tool_result` blocks), as serde types, and the conversation kept in it. Only what medin
//! sends and reads is modelled; block types medin does not use (thinking, ...) are dropped.

use serde::{Deserialize, Serialize};

use super::transport::{HeaderValue, Secret};
use super::{Dialect, ModelSettings, TokenCounts, ToolCall, Turn};

/// The default base URL (`ANTHROPIC_BASE_URL` overrides it; without `/v1`).
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version medin speaks.
const API_VERSION: &str = "2023-06-01";
/// `max_tokens` is required by the API: this when the agent sets none.
const DEFAULT_MAX_TOKENS: u32 = 4096;

#[derive(Debug, Serialize)]
struct MessagesRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    system: &'a str,
    messages: &'a [Message],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [Tool],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Message {
    role: String,
    content: Vec<Block>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: serde_json::Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
    /// A block medin does not use; dropped from the conversation.
    #[serde(other)]
    Other,
}

#[derive(Debug, Serialize)]
struct Tool {
    name: String,
    description: String,
    input_schema: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct MessagesResponse {
    content: Vec<Block>,
    #[serde(default)]
    usage: Option<MessagesUsage>,
}

#[derive(Debug, Default, Deserialize)]
struct MessagesUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// A Messages conversation.
#[derive(Debug)]
pub(crate) struct AnthropicMessages {
    model: String,
    max_tokens: u32,
    temperature: Option<f64>,
    system: String,
    messages: Vec<Message>,
    tools: Vec<Tool>,
}

impl AnthropicMessages {
    pub fn new(settings: &ModelSettings, system: String, prompt: String, tools: &[serde_json::Value]) -> Self {
        AnthropicMessages {
            model: settings.model.clone(),
            max_tokens: settings.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            temperature: settings.temperature,
            system,
            messages: vec![Message {
                role: "user".into(),
                content: vec![Block::Text { text: prompt }],
            }],
            tools: tools
                .iter()
                .map(|t| Tool {
                    name: super::field(t, "name"),
                    description: super::field(t, "description"),
                    input_schema: t
                        .get("input_schema")
                        .cloned()
                        .unwrap_or(serde_json::json!({"type": "object"})),
                })
                .collect(),
        }
    }

    /// Adds `block` to the last user message, or starts one (the API wants every tool result
    /// of one assistant turn in the user message that follows it).
    fn push_user(&mut self, block: Block) {
        match self.messages.last_mut() {
            Some(m) if m.role == "user" => m.content.push(block),
            _ => self.messages.push(Message {
                role: "user".into(),
                content: vec![block],
            }),
        }
    }
}

impl Dialect for AnthropicMessages {
    fn endpoint(&self, base: &str) -> String {
        format!("{}/v1/messages", base.trim_end_matches('/'))
    }

    fn auth(&self, key: Option<&Secret>) -> Vec<(String, HeaderValue)> {
        let mut headers = vec![("anthropic-version".to_string(), HeaderValue::Plain(API_VERSION.into()))];
        if let Some(key) = key {
            headers.push((
                "x-api-key".to_string(),
                HeaderValue::Secret {
                    prefix: "",
                    key: key.clone(),
                },
            ));
        }
        headers
    }

    fn request(&mut self) -> serde_json::Value {
        serde_json::to_value(MessagesRequest {
            model: &self.model,
            max_tokens: self.max_tokens,
            system: &self.system,
            messages: &self.messages,
            tools: &self.tools,
            temperature: self.temperature,
        })
        .unwrap_or_default()
    }

    fn read(&mut self, body: serde_json::Value) -> Result<Turn, String> {
        let response: MessagesResponse =
            serde_json::from_value(body).map_err(|e| format!("not a Messages response: {e}"))?;
        let content: Vec<Block> = response.content.into_iter().filter(|b| *b != Block::Other).collect();
        let mut text = String::new();
        let mut calls = Vec::new();
        for block in &content {
            match block {
                Block::Text { text: t } => text.push_str(t),
                Block::ToolUse { id, name, input } => calls.push(ToolCall {
                    id: id.clone(),
                    name: name.clone(),
                    input: Ok(if input.is_null() {
                        serde_json::json!({})
                    } else {
                        input.clone()
                    }),
                }),
                Block::ToolResult { .. } | Block::Other => {}
            }
        }
        if content.is_empty() {
            // The API rejects an empty assistant turn: keep the turn with an empty text.
            self.messages.push(Message {
                role: "assistant".into(),
                content: vec![Block::Text { text: String::new() }],
            });
        } else {
            self.messages.push(Message {
                role: "assistant".into(),
                content,
            });
        }
        let usage = response.usage.unwrap_or_default();
        let cached = usage.cache_read_input_tokens.unwrap_or(0);
        Ok(Turn {
            text,
            calls,
            usage: TokenCounts {
                // Anthropic counts cache reads and writes apart from `input_tokens`: medin's input
                // count is all of them, of which `cached_input` were read from the cache.
                input: usage
                    .input_tokens
                    .saturating_add(cached)
                    .saturating_add(usage.cache_creation_input_tokens.unwrap_or(0)),
                output: usage.output_tokens,
                cached_input: cached,
            },
        })
    }

    fn tool_result(&mut self, id: &str, content: String, is_error: bool) {
        self.push_user(Block::ToolResult {
            tool_use_id: id.to_string(),
            content,
            is_error,
        });
    }

    fn user(&mut self, text: String) {
        self.push_user(Block::Text { text });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_use_becomes_calls_and_results_share_one_user_turn() {
        let settings = ModelSettings::for_test("claude-x");
        let tools = [json!({"name": "bash", "description": "run", "input_schema": {"type": "object"}})];
        let mut conv = AnthropicMessages::new(&settings, "sys".into(), "do it".into(), &tools);
        let req = conv.request();
        assert_eq!(req["max_tokens"], 4096);
        assert_eq!(req["tools"][0]["input_schema"]["type"], "object");
        let turn = conv
            .read(json!({
                "content": [
                    {"type": "thinking", "thinking": "hm"},
                    {"type": "text", "text": "running"},
                    {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
                    {"type": "tool_use", "id": "t2", "name": "read_file", "input": {"path": "a"}}
                ],
                "usage": {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 7}
            }))
            .unwrap();
        assert_eq!(turn.calls.len(), 2);
        assert_eq!((turn.usage.input, turn.usage.cached_input), (12, 7));
        conv.tool_result("t1", "ok".into(), false);
        conv.tool_result("t2", "no".into(), true);
        let req = conv.request();
        let last = &req["messages"][2];
        assert_eq!(last["role"], "user");
        assert_eq!(last["content"][1]["tool_use_id"], "t2");
        assert_eq!(last["content"][1]["is_error"], true);
        assert_eq!(req["messages"][1]["content"].as_array().unwrap().len(), 3);
    }
}
