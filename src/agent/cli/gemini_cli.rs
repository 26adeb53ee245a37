//! Gemini CLI (`@google/gemini-cli`): `gemini -p PROMPT --output-format stream-json --yolo`,
//! Gemini's own API (SSE) at `GOOGLE_GEMINI_BASE_URL`, and `BeforeTool`/`AfterTool` command
//! hooks in `~/.gemini/settings.json`. Its hook calls carry no id that its output repeats, so
//! calls are matched by tool name and counted.

use std::path::Path;

use serde_json::{json, Value};

use super::adapter::{medin_action, Adapter, HookedCall, Hooks, Launch, LaunchInput, Seen};
use super::hook::HookAnswer;
use super::install::{Ecosystem, Pin};
use crate::agent::{ModelCall, Usage};

pub const PIN: Pin = Pin {
    name: "gemini-cli",
    ecosystem: Ecosystem::Npm,
    package: "@google/gemini-cli",
    version: "0.61.0",
    program: "gemini",
};

/// The model when none is named (naming one skips Gemini CLI's router call).
pub const DEFAULT_MODEL: &str = "gemini-2.5-flash";

/// Its system settings file, in medin's read-only folder (one level down: Gemini CLI ignores
/// a settings file whose folder others may write, and the seed itself lies in /tmp).
const SYSTEM_SETTINGS: &str = "gemini/system-settings.json";

#[derive(Debug)]
pub struct GeminiCli;

fn hook_entry(script: &Path) -> Value {
    json!([{ "matcher": "*", "hooks": [{ "type": "command", "command": format!("bash {}", script.display()) }] }])
}

impl Adapter for GeminiCli {
    fn pin(&self) -> &'static Pin {
        &PIN
    }

    fn key_var(&self) -> &'static str {
        "GEMINI_API_KEY"
    }

    fn base_url_default(&self) -> (&'static str, &'static str) {
        ("GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com")
    }

    fn hooks(&self) -> Hooks {
        Hooks::PreAndPost
    }

    fn launch(&self, input: &LaunchInput<'_>) -> Launch {
        let mut hooks = serde_json::Map::new();
        if let Some(pre) = input.pre_hook {
            hooks.insert("BeforeTool".into(), hook_entry(pre));
        }
        if let Some(post) = input.post_hook {
            hooks.insert("AfterTool".into(), hook_entry(post));
        }
        let settings = json!({
            "security": { "auth": { "selectedType": "gemini-api-key" } },
            "privacy": { "usageStatisticsEnabled": false },
            "telemetry": { "enabled": false },
            "general": { "disableAutoUpdate": true },
            "hooksConfig": { "enabled": true },
            "hooks": hooks,
        });
        // System settings: merged last, so they outrank the user's and the workspace's files
        // the model can write; kept in medin's read-only folder.
        let system = input.seed.join(SYSTEM_SETTINGS);
        let mut args: Vec<String> = vec![
            "-p".into(),
            input.prompt.into(),
            "--output-format".into(),
            "stream-json".into(),
            "--yolo".into(),
            "--skip-trust".into(),
            "-m".into(),
            input.model.unwrap_or(DEFAULT_MODEL).into(),
        ];
        args.extend(input.extra_args.iter().cloned());
        Launch {
            args,
            env: vec![
                ("GOOGLE_GEMINI_BASE_URL".into(), input.base_url.into()),
                ("GEMINI_CLI_SYSTEM_SETTINGS_PATH".into(), system.display().to_string()),
            ],
            home_files: Vec::new(),
            seed_files: vec![(SYSTEM_SETTINGS.into(), settings.to_string())],
            home_vars: Vec::new(),
        }
    }

    fn read_line(&self, line: &str) -> Vec<Seen> {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return vec![Seen::Note(json!({ "type": "cli_output", "text": line }))];
        };
        let mut seen = vec![Seen::Note(json!({ "type": "cli_event", "event": v }))];
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        match v.get("type").and_then(Value::as_str) {
            Some("tool_use") => seen.push(Seen::ToolUse {
                key: s("tool_id"),
                hook_key: s("tool_name"),
                tool: s("tool_name"),
                input: v.get("parameters").cloned().unwrap_or(Value::Null),
            }),
            Some("tool_result") => {
                // A refused call comes back as an error of type `policy_violation`: it never ran.
                let refused = v.pointer("/error/type").and_then(Value::as_str) == Some("policy_violation");
                if !refused {
                    seen.push(Seen::ToolRan { key: s("tool_id") });
                }
            }
            Some("result") => {
                let stats = v.get("stats").cloned().unwrap_or(Value::Null);
                let n = |k: &str| stats.get(k).and_then(Value::as_u64).unwrap_or(0);
                seen.push(Seen::ModelCall(ModelCall {
                    usage: Usage {
                        input_tokens: n("input_tokens"),
                        output_tokens: n("output_tokens"),
                    },
                    cached_input_tokens: n("cached"),
                    cost: None,
                    retries: 0,
                }));
                let ok = s("status") == "success";
                if ok {
                    seen.push(Seen::Done {
                        ok,
                        text: String::new(),
                    });
                } else {
                    let detail = v.get("error").map(Value::to_string).unwrap_or_else(|| s("status"));
                    seen.push(Seen::ProviderFailed(format!("Gemini CLI ended with {detail}")));
                }
            }
            _ => {}
        }
        seen
    }

    fn hook_call(&self, payload: &Value, workspace: &Path) -> HookedCall {
        let tool = payload.get("tool_name").and_then(Value::as_str).unwrap_or_default();
        let input = payload.get("tool_input").cloned().unwrap_or(Value::Null);
        HookedCall {
            key: tool.to_string(),
            id: None,
            action: medin_action("", tool, &input, workspace),
        }
    }

    fn hook_answer(&self, allow: bool, reason: &str) -> HookAnswer {
        let answer = if allow {
            json!({ "decision": "allow" })
        } else {
            json!({ "decision": "deny", "reason": reason })
        };
        HookAnswer {
            exit: 0,
            stdout: answer.to_string(),
        }
    }
}
