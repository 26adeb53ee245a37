//! Claude Code (`@anthropic-ai/claude-code`): `claude -p PROMPT --output-format stream-json`,
//! the Anthropic Messages API at `ANTHROPIC_BASE_URL`, `PreToolUse`/`PostToolUse` command
//! hooks given on the command line (`--settings`, which outranks every settings file the
//! agent could write), tool calls matched to hook calls by their `tool_use_id`.

use std::path::Path;

use serde_json::{json, Value};

use super::adapter::{medin_action, permission_answer, Adapter, HookedCall, Hooks, Launch, LaunchInput, Seen};
use super::hook::HookAnswer;
use super::install::{Ecosystem, Pin};
use super::mcp::SERVER_NAME;
use crate::agent::{Cost, ModelCall, Usage};

pub const PIN: Pin = Pin {
    name: "claude-code",
    ecosystem: Ecosystem::Npm,
    package: "@anthropic-ai/claude-code",
    version: "2.1.330",
    program: "claude",
};

#[derive(Debug)]
pub struct ClaudeCode;

fn hook_entry(script: &Path) -> Value {
    json!([{ "matcher": "*", "hooks": [{ "type": "command", "command": format!("bash {}", script.display()) }] }])
}

impl Adapter for ClaudeCode {
    fn pin(&self) -> &'static Pin {
        &PIN
    }

    fn key_var(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn base_url_default(&self) -> (&'static str, &'static str) {
        ("ANTHROPIC_BASE_URL", "https://api.anthropic.com")
    }

    fn hooks(&self) -> Hooks {
        Hooks::PreAndPost
    }

    fn takes_medin_tools(&self) -> bool {
        true
    }

    fn launch(&self, input: &LaunchInput<'_>) -> Launch {
        let mut hooks = serde_json::Map::new();
        if let Some(pre) = input.pre_hook {
            hooks.insert("PreToolUse".into(), hook_entry(pre));
        }
        if let Some(post) = input.post_hook {
            hooks.insert("PostToolUse".into(), hook_entry(post));
        }
        let settings = json!({ "hooks": hooks, "disableAllHooks": false });
        let mut args: Vec<String> = vec![
            "-p".into(),
            input.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--settings".into(),
            settings.to_string(),
        ];
        match input.mcp {
            // Its own tools off; medin's, through medin's MCP server only, allowed by name.
            Some(mcp) => {
                let servers = json!({ "mcpServers": { SERVER_NAME: {
                    "command": "bash", "args": [mcp.relay.display().to_string()] } } });
                let allowed: Vec<String> = mcp.tools.iter().map(|t| format!("mcp__{SERVER_NAME}__{t}")).collect();
                args.extend([
                    "--tools".into(),
                    String::new(),
                    "--strict-mcp-config".into(),
                    "--mcp-config".into(),
                    servers.to_string(),
                    "--permission-mode".into(),
                    "dontAsk".into(),
                    "--allowedTools".into(),
                    allowed.join(","),
                ]);
            }
            None => args.push("--dangerously-skip-permissions".into()),
        }
        if let Some(model) = input.model {
            args.extend(["--model".into(), model.into()]);
        }
        args.extend(input.extra_args.iter().cloned());
        let env = [
            ("ANTHROPIC_BASE_URL", input.base_url),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            // Root may skip permissions only with exactly `1` (see shared/notes).
            ("IS_SANDBOX", "1"),
            // One retry: a failing provider ends the run instead of backing off for minutes.
            ("CLAUDE_CODE_MAX_RETRIES", "1"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .to_vec();
        Launch {
            args,
            env,
            ..Launch::default()
        }
    }

    fn read_line(&self, line: &str) -> Vec<Seen> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return vec![Seen::Note(json!({ "type": "cli_output", "text": line }))];
        };
        let mut seen = vec![Seen::Note(json!({ "type": "cli_event", "event": v }))];
        match v.get("type").and_then(Value::as_str) {
            Some("assistant") => {
                for block in content(&v) {
                    if block.get("type").and_then(Value::as_str) == Some("tool_use") {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
                        seen.push(Seen::ToolUse {
                            key: id.clone(),
                            hook_key: id,
                            tool: block
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or_default()
                                .to_string(),
                            input: block.get("input").cloned().unwrap_or(Value::Null),
                        });
                    }
                }
            }
            Some("user") => {
                // A tool result came back: the tool ran, or was refused.
                for block in content(&v) {
                    if block.get("type").and_then(Value::as_str) == Some("tool_result") {
                        let id = block.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                        seen.push(Seen::ToolRan { key: id.to_string() });
                    }
                }
            }
            Some("result") => {
                let usage = v.get("usage").cloned().unwrap_or(Value::Null);
                let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
                let cached = n("cache_read_input_tokens");
                let call = ModelCall {
                    usage: Usage {
                        input_tokens: n("input_tokens") + cached + n("cache_creation_input_tokens"),
                        output_tokens: n("output_tokens"),
                    },
                    cached_input_tokens: cached,
                    cost: v
                        .get("total_cost_usd")
                        .and_then(Value::as_f64)
                        .map(|usd| Cost { usd, estimated: true }),
                    retries: 0,
                };
                seen.push(Seen::ModelCall(call));
                let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
                let text = v.get("result").and_then(Value::as_str).unwrap_or_default().to_string();
                if is_error && v.get("api_error_status").is_some_and(|s| !s.is_null()) {
                    seen.push(Seen::ProviderFailed(format!(
                        "the model API answered {}: {text}",
                        v["api_error_status"]
                    )));
                } else {
                    seen.push(Seen::Done { ok: !is_error, text });
                }
            }
            _ => {}
        }
        seen
    }

    fn hook_call(&self, payload: &Value, workspace: &Path) -> HookedCall {
        let id = payload.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
        let tool = payload.get("tool_name").and_then(Value::as_str).unwrap_or_default();
        let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
        HookedCall {
            key: id.to_string(),
            id: (!id.is_empty()).then(|| id.to_string()),
            action: medin_action(id, tool, &input, workspace),
        }
    }

    fn hook_answer(&self, allow: bool, reason: &str) -> HookAnswer {
        permission_answer(allow, reason)
    }
}

/// The content blocks of a stream-json `assistant` or `user` line.
fn content(v: &Value) -> Vec<Value> {
    v.pointer("/message/content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}
