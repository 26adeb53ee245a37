//! aider (`aider-chat`, pip): `aider --message PROMPT`, Chat Completions at
//! `--openai-api-base`, edits parsed from the model's text (`--edit-format whole`). aider has
//! no hooks and no machine output: medin cannot judge its edits before they happen, only what
//! they changed (the workspace diff, the final validations) and the requests its egress saw;
//! its receipts say so (`hooks: none`). Its history files go to its home, not the workspace.

use std::path::Path;

use serde_json::{json, Value};

use super::adapter::{medin_action, Adapter, HookedCall, Hooks, Launch, LaunchInput, Seen};
use super::hook::HookAnswer;
use super::install::{Ecosystem, Pin};

pub const PIN: Pin = Pin {
    name: "aider",
    ecosystem: Ecosystem::Pip,
    package: "aider-chat",
    version: "0.86.2",
    program: "aider",
};

/// The model when none is named.
pub const DEFAULT_MODEL: &str = "gpt-4.1-mini";

#[derive(Debug)]
pub struct Aider;

impl Adapter for Aider {
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
        Hooks::None
    }

    fn launch(&self, input: &LaunchInput<'_>) -> Launch {
        let model = input.model.unwrap_or(DEFAULT_MODEL);
        let model = if model.contains('/') {
            model.to_string()
        } else {
            format!("openai/{model}")
        };
        let mut args: Vec<String> = vec![
            "--model".into(),
            model,
            "--openai-api-base".into(),
            input.base_url.into(),
        ];
        args.extend(
            [
                "--no-git",
                "--no-check-update",
                "--no-analytics",
                "--no-show-model-warnings",
                "--no-pretty",
                "--no-stream",
                "--yes-always",
                "--edit-format",
                "whole",
            ]
            .map(String::from),
        );
        args.extend(input.extra_args.iter().cloned());
        args.extend(["--message".into(), input.prompt.into()]);
        Launch {
            args,
            env: vec![("LITELLM_LOCAL_MODEL_COST_MAP".into(), "True".into())],
            home_files: Vec::new(),
            seed_files: Vec::new(),
            home_vars: vec![
                ("AIDER_CHAT_HISTORY_FILE", ".aider.chat.history.md"),
                ("AIDER_INPUT_HISTORY_FILE", ".aider.input.history"),
            ],
        }
    }

    fn read_line(&self, line: &str) -> Vec<Seen> {
        vec![Seen::Note(json!({ "type": "cli_output", "text": line }))]
    }

    fn hook_call(&self, payload: &Value, workspace: &Path) -> HookedCall {
        // aider has no hooks: nothing calls this but a forged call, judged like any other.
        HookedCall {
            key: String::new(),
            id: None,
            action: medin_action("", "", payload, workspace),
        }
    }

    fn hook_answer(&self, _allow: bool, reason: &str) -> HookAnswer {
        HookAnswer::refuse(reason)
    }
}
