//! Codex CLI (`@openai/codex`): `codex exec --json PROMPT`, the OpenAI Responses API (SSE) at
//! the `base_url` of a model provider written into `$CODEX_HOME/config.toml`, and a
//! `PreToolUse` command hook in the same file — honoured by `exec` only with
//! `--dangerously-bypass-hook-trust`. Its own sandbox is off: medin's confines it. Codex
//! reports a command as a `command_execution` item without the hook's id, so a call is
//! matched to its hook call by the command text.

use std::path::Path;

use serde_json::{json, Value};

use super::adapter::{medin_action, permission_answer, Adapter, HookedCall, Hooks, Launch, LaunchInput, Seen};
use super::hook::HookAnswer;
use super::install::{Ecosystem, Pin};
use super::mcp::SERVER_NAME;
use crate::agent::{ModelCall, Usage};

pub const PIN: Pin = Pin {
    name: "codex",
    ecosystem: Ecosystem::Npm,
    package: "@openai/codex",
    version: "0.169.0",
    program: "codex",
};

#[derive(Debug)]
pub struct Codex;

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
}

/// The command a `command_execution` item or a hook call names, without the shell Codex wraps
/// it in (`bash -lc '…'`), so the two can be matched.
pub fn command_key(command: &str) -> String {
    let c = command.trim();
    for wrapper in ["/bin/bash -lc ", "bash -lc ", "/bin/sh -c ", "sh -c "] {
        if let Some(rest) = c.strip_prefix(wrapper) {
            let rest = rest.trim();
            let unquoted = rest
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .map(|r| r.replace(r"'\''", "'"))
                .or_else(|| serde_json::from_str::<String>(rest).ok());
            return unquoted.unwrap_or_else(|| rest.to_string()).trim().to_string();
        }
    }
    c.to_string()
}

impl Adapter for Codex {
    fn pin(&self) -> &'static Pin {
        &PIN
    }

    fn key_var(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    fn base_url_default(&self) -> (&'static str, &'static str) {
        ("OPENAI_BASE_URL", "https://api.openai.com/v1")
    }

    fn hooks(&self) -> Hooks {
        Hooks::Pre
    }

    fn takes_medin_tools(&self) -> bool {
        true
    }

    fn launch(&self, input: &LaunchInput<'_>) -> Launch {
        let mut config = String::new();
        if let Some(model) = input.model {
            config.push_str(&format!("model = {}\n", toml_string(model)));
        }
        config.push_str(&format!(
            "model_provider = \"medin\"\n\n[model_providers.medin]\nname = \"medin\"\nbase_url = {}\nenv_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n# One retry: a failing provider ends the run instead of 30 requests.\nrequest_max_retries = 1\nstream_max_retries = 1\n\n[analytics]\nenabled = false\n",
            toml_string(input.base_url)
        ));
        if let Some(pre) = input.pre_hook {
            config.push_str(&format!(
                "\n[[hooks.PreToolUse]]\nmatcher = \"*\"\n\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\ncommand = {}\n",
                toml_string(&format!("bash {}", pre.display()))
            ));
        }
        if let Some(mcp) = input.mcp {
            config.push_str(&format!(
                "\n[mcp_servers.{SERVER_NAME}]\ncommand = \"bash\"\nargs = [{}]\n",
                toml_string(&mcp.relay.display().to_string())
            ));
        }
        let mut args: Vec<String> = [
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            // Plugins resolve github.com and chatgpt.com at start.
            "--disable",
            "plugins",
        ]
        .map(String::from)
        .to_vec();
        if input.mcp.is_some() {
            // Its shell off: commands go through medin's tools only.
            args.extend(["--disable", "shell_tool", "--disable", "unified_exec"].map(String::from));
        }
        args.extend(input.extra_args.iter().cloned());
        args.push(input.prompt.into());
        Launch {
            args,
            env: Vec::new(),
            home_files: vec![(".codex/config.toml".into(), config)],
            seed_files: Vec::new(),
            home_vars: vec![("CODEX_HOME", ".codex")],
        }
    }

    fn read_line(&self, line: &str) -> Vec<Seen> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return vec![Seen::Note(json!({ "type": "cli_output", "text": line }))];
        };
        let mut seen = vec![Seen::Note(json!({ "type": "cli_event", "event": v }))];
        let item = v.get("item").cloned().unwrap_or(Value::Null);
        match (
            v.get("type").and_then(Value::as_str),
            item.get("type").and_then(Value::as_str),
        ) {
            (Some("item.completed"), Some("command_execution")) => {
                let command = item.get("command").and_then(Value::as_str).unwrap_or_default();
                let key = command_key(command);
                seen.push(Seen::ToolUse {
                    key: key.clone(),
                    hook_key: key.clone(),
                    tool: "exec_command".into(),
                    input: json!({ "cmd": key }),
                });
                seen.push(Seen::ToolRan { key });
            }
            (Some("item.completed"), Some("agent_message")) => {
                let text = item.get("text").and_then(Value::as_str).unwrap_or_default().to_string();
                seen.push(Seen::Note(json!({ "type": "agent_message", "text": text })));
            }
            (Some("turn.completed"), _) => {
                let usage = v.get("usage").cloned().unwrap_or(Value::Null);
                let n = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
                seen.push(Seen::ModelCall(ModelCall {
                    usage: Usage {
                        input_tokens: n("input_tokens"),
                        output_tokens: n("output_tokens"),
                    },
                    cached_input_tokens: n("cached_input_tokens"),
                    cost: None,
                    retries: 0,
                }));
                seen.push(Seen::Done {
                    ok: true,
                    text: String::new(),
                });
            }
            (Some("turn.failed"), _) => {
                let message = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("turn failed")
                    .to_string();
                seen.push(Seen::ProviderFailed(format!("the model API failed: {message}")));
            }
            _ => {}
        }
        seen
    }

    fn hook_call(&self, payload: &Value, workspace: &Path) -> HookedCall {
        let tool = payload.get("tool_name").and_then(Value::as_str).unwrap_or_default();
        let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
        let action = medin_action("", tool, &input, workspace);
        let key = match &action.input {
            crate::tools::ActionInput::Json(v) if action.tool == "bash" => {
                command_key(v.get("command").and_then(Value::as_str).unwrap_or_default())
            }
            _ => String::new(),
        };
        let id = payload
            .get("tool_use_id")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string);
        HookedCall { key, id, action }
    }

    fn hook_answer(&self, allow: bool, reason: &str) -> HookAnswer {
        permission_answer(allow, reason)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_match_with_or_without_the_shell_codex_wraps_them_in() {
        assert_eq!(command_key("/bin/bash -lc 'echo hi > a.txt'"), "echo hi > a.txt");
        assert_eq!(command_key(r"bash -lc 'echo '\''q'\'''"), "echo 'q'");
        assert_eq!(command_key("  ls -la "), "ls -la");
    }
}
