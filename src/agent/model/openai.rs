//! The OpenAI Chat Completions wire format (`POST {base}/chat/completions` with `tools` and
//! `tool_calls`), as serde types, and the conversation kept in it. Every OpenAI-compatible
//! server (vLLM, llama.cpp's server, Ollama, LiteLLM, OpenRouter) speaks it. Only what medin
//! sends and reads is modelled; unknown response fields are ignored.

use serde::{Deserialize, Serialize};

use super::transport::{HeaderValue, Secret};
use super::{Dialect, ModelSettings, TokenCounts, ToolCall, Turn};

/// The default base URL (`OPENAI_BASE_URL` overrides it; it includes `/v1`).
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

#[derive(Debug, Clone, Serialize)]
struct ChatRequest<'a> {
    model: &'a str,
    messages: &'a [ChatMessage],
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    tools: &'a [ChatTool],
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    seed: Option<i64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ChatMessage {
    role: String,
    #[serde(default)]
    content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ChatToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
}

impl ChatMessage {
    fn text(role: &str, content: String) -> Self {
        ChatMessage {
            role: role.into(),
            content: Some(content),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ChatToolCall {
    id: String,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: ChatFunctionCall,
}

fn function_type() -> String {
    "function".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct ChatFunctionCall {
    name: String,
    /// A JSON text by the API's word; some servers send an object instead, which is taken too.
    #[serde(default)]
    arguments: serde_json::Value,
}

#[derive(Debug, Clone, Serialize)]
struct ChatTool {
    #[serde(rename = "type")]
    kind: &'static str,
    function: ChatFunction,
}

#[derive(Debug, Clone, Serialize)]
struct ChatFunction {
    name: String,
    description: String,
    parameters: serde_json::Value,
}

#[derive(Debug, Deserialize)]
struct ChatResponse {
    choices: Vec<ChatChoice>,
    #[serde(default)]
    usage: Option<ChatUsage>,
}

#[derive(Debug, Deserialize)]
struct ChatChoice {
    message: ChatMessage,
}

#[derive(Debug, Default, Deserialize)]
struct ChatUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Debug, Default, Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

/// A Chat Completions conversation.
#[derive(Debug)]
pub(crate) struct OpenAiChat {
    model: String,
    temperature: Option<f64>,
    max_tokens: Option<u32>,
    seed: Option<i64>,
    messages: Vec<ChatMessage>,
    tools: Vec<ChatTool>,
}

impl OpenAiChat {
    pub fn new(settings: &ModelSettings, system: String, prompt: String, tools: &[serde_json::Value]) -> Self {
        OpenAiChat {
            model: settings.model.clone(),
            temperature: settings.temperature,
            max_tokens: settings.max_tokens,
            seed: settings.seed,
            messages: vec![ChatMessage::text("system", system), ChatMessage::text("user", prompt)],
            tools: tools
                .iter()
                .map(|t| ChatTool {
                    kind: "function",
                    function: ChatFunction {
                        name: super::field(t, "name"),
                        description: super::field(t, "description"),
                        parameters: t
                            .get("input_schema")
                            .cloned()
                            .unwrap_or(serde_json::json!({"type": "object"})),
                    },
                })
                .collect(),
        }
    }
}

impl Dialect for OpenAiChat {
    fn endpoint(&self, base: &str) -> String {
        format!("{}/chat/completions", base.trim_end_matches('/'))
    }

    fn auth(&self, key: Option<&Secret>) -> Vec<(String, HeaderValue)> {
        key.map(|key| {
            vec![(
                "authorization".to_string(),
                HeaderValue::Secret {
                    prefix: "Bearer ",
                    key: key.clone(),
                },
            )]
        })
        .unwrap_or_default()
    }

    fn request(&mut self) -> serde_json::Value {
        serde_json::to_value(ChatRequest {
            model: &self.model,
            messages: &self.messages,
            tools: &self.tools,
            temperature: self.temperature,
            max_tokens: self.max_tokens,
            seed: self.seed,
        })
        .unwrap_or_default()
    }

    fn read(&mut self, body: serde_json::Value) -> Result<Turn, String> {
        let response: ChatResponse =
            serde_json::from_value(body).map_err(|e| format!("not a Chat Completions response: {e}"))?;
        let Some(choice) = response.choices.into_iter().next() else {
            return Err("the response has no `choices`".into());
        };
        let mut message = choice.message;
        message.role = "assistant".into();
        let calls = message
            .tool_calls
            .iter()
            .map(|c| ToolCall {
                id: c.id.clone(),
                name: c.function.name.clone(),
                input: match &c.function.arguments {
                    serde_json::Value::String(text) if text.trim().is_empty() => Ok(serde_json::json!({})),
                    serde_json::Value::String(text) => {
                        serde_json::from_str::<serde_json::Value>(text).map_err(|_| text.clone())
                    }
                    serde_json::Value::Null => Ok(serde_json::json!({})),
                    other => Ok(other.clone()),
                },
            })
            .collect();
        let text = message.content.clone().unwrap_or_default();
        self.messages.push(message);
        let usage = response.usage.unwrap_or_default();
        Ok(Turn {
            text,
            calls,
            usage: TokenCounts {
                input: usage.prompt_tokens,
                output: usage.completion_tokens,
                cached_input: usage.prompt_tokens_details.map(|d| d.cached_tokens).unwrap_or(0),
            },
        })
    }

    fn tool_result(&mut self, id: &str, content: String, _is_error: bool) {
        self.messages.push(ChatMessage {
            role: "tool".into(),
            content: Some(content),
            tool_calls: Vec::new(),
            tool_call_id: Some(id.to_string()),
        });
    }

    fn user(&mut self, text: String) {
        self.messages.push(ChatMessage::text("user", text));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tools_are_functions_and_tool_calls_come_back_as_calls_with_results() {
        let settings = ModelSettings::for_test("gpt-x");
        let tools = [json!({"name": "bash", "description": "run", "input_schema": {"type": "object"}})];
        let mut chat = OpenAiChat::new(&settings, "sys".into(), "do it".into(), &tools);
        let req = chat.request();
        assert_eq!(req["tools"][0]["function"]["name"], "bash");
        assert_eq!(req["messages"][1]["content"], "do it");
        let turn = chat
            .read(json!({
                "choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\":\"ls\"}"}},
                    {"id": "c2", "type": "function", "function": {"name": "bash", "arguments": "{not json"}}
                ]}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 4}}
            }))
            .unwrap();
        assert_eq!(turn.calls[0].input, Ok(json!({"command": "ls"})));
        assert_eq!(turn.calls[1].input, Err("{not json".into()));
        assert_eq!(turn.usage.cached_input, 4);
        chat.tool_result("c1", "ok".into(), false);
        let req = chat.request();
        assert_eq!(req["messages"][3]["role"], "tool");
        assert_eq!(req["messages"][3]["tool_call_id"], "c1");
        assert!(chat.read(json!({"choices": []})).is_err());
    }
}
