//! What differs between CLI agents, in one trait: how each is launched (arguments, variables,
//! the files its fresh home starts with, where its hooks go), how its machine output reads,
//! and how a hook call maps to a medin action and back. Everything else — installing,
//! confining, the hook channel, the event loop — is the same for all ([`super::run`]).

use std::path::Path;

use serde_json::{json, Value};

use super::hook::HookAnswer;
use super::install::Pin;
use crate::agent::{Action, ModelCall};
use crate::tools::ActionInput;

/// Which hooks a CLI honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hooks {
    /// None (aider): judged by its requests and the workspace diff.
    None,
    /// Before each tool call only.
    Pre,
    /// Before and after each tool call.
    PreAndPost,
}

/// What a launch needs to know.
#[derive(Debug)]
pub struct LaunchInput<'a> {
    pub prompt: &'a str,
    pub model: Option<&'a str>,
    /// The model endpoint the CLI is pointed at.
    pub base_url: &'a str,
    /// The workspace as the CLI sees it.
    pub workspace: &'a Path,
    /// medin's read-only folder for this attempt (the relays, files of [`Launch::seed_files`]).
    pub seed: &'a Path,
    /// The relay scripts, as the CLI sees them (none for a CLI without hooks).
    pub pre_hook: Option<&'a Path>,
    pub post_hook: Option<&'a Path>,
    /// Extra arguments from the agent's settings.
    pub extra_args: &'a [String],
    /// `tools: medin`: the CLI's own tools off, medin's offered through its MCP server.
    pub mcp: Option<McpLaunch<'a>>,
}

/// How a CLI reaches medin's MCP server (`tools: medin`).
#[derive(Debug, Clone, Copy)]
pub struct McpLaunch<'a> {
    /// The relay the CLI starts as its stdio MCP server.
    pub relay: &'a Path,
    /// The tools medin offers (`bash`, `write_file`, …).
    pub tools: &'a [String],
}

/// How a CLI is launched.
#[derive(Debug, Default)]
pub struct Launch {
    pub args: Vec<String>,
    /// Variables (the API key is added by the caller under [`Adapter::key_var`]).
    pub env: Vec<(String, String)>,
    /// Files its home starts with, relative to `$HOME` (the CLI may change them).
    pub home_files: Vec<(String, String)>,
    /// Files medin keeps read-only for the CLI, relative to [`LaunchInput::seed`] (settings
    /// the model must not be able to rewrite).
    pub seed_files: Vec<(String, String)>,
    /// Variables naming places under `$HOME` (`CODEX_HOME` → `.codex`).
    pub home_vars: Vec<(&'static str, &'static str)>,
}

/// What one line of a CLI's output says.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// Only for the transcript.
    Note(Value),
    /// Tokens and cost of the session so far (or of one exchange).
    ModelCall(ModelCall),
    /// The model asked for a tool call (it may still be refused): `key` names it in the CLI's
    /// output, `hook_key` is what the hook call for it carries ([`HookedCall::key`]).
    ToolUse {
        key: String,
        hook_key: String,
        tool: String,
        input: Value,
    },
    /// A tool call's result came back: it ran, unless medin refused it.
    ToolRan { key: String },
    /// The CLI's final answer.
    Done { ok: bool, text: String },
    /// The model provider failed (an API error the CLI gave up on): infrastructure.
    ProviderFailed(String),
}

/// A hook call as medin judges it.
#[derive(Debug, Clone, PartialEq)]
pub struct HookedCall {
    /// Matches the CLI's report of the call (the `key` of [`Seen::ToolUse`] and [`Seen::ToolRan`]).
    pub key: String,
    /// The call id, if the CLI gives one (else medin numbers the calls).
    pub id: Option<String>,
    pub action: Action,
}

/// One kind of CLI agent.
pub trait Adapter: std::fmt::Debug + Send + Sync {
    fn pin(&self) -> &'static Pin;
    /// The variable the CLI reads its API key from.
    fn key_var(&self) -> &'static str;
    /// The variable naming the endpoint in medin's environment, and the provider's default.
    fn base_url_default(&self) -> (&'static str, &'static str);
    fn hooks(&self) -> Hooks;
    /// Whether the CLI can be restricted to medin's tools (`tools: medin`).
    fn takes_medin_tools(&self) -> bool {
        false
    }
    fn launch(&self, input: &LaunchInput<'_>) -> Launch;
    /// Reads one line of the CLI's standard output.
    fn read_line(&self, line: &str) -> Vec<Seen>;
    /// Maps a pre-tool hook payload to the action medin judges.
    fn hook_call(&self, payload: &Value, workspace: &Path) -> HookedCall;
    /// The hook's answer: allow, or deny with `reason`.
    fn hook_answer(&self, allow: bool, reason: &str) -> HookAnswer;
}

/// Claude Code's and Codex's shared `PreToolUse` answer.
pub fn permission_answer(allow: bool, reason: &str) -> HookAnswer {
    let decision = if allow { "allow" } else { "deny" };
    HookAnswer {
        exit: 0,
        stdout: json!({
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": decision,
                "permissionDecisionReason": reason,
            }
        })
        .to_string(),
    }
}

/// A path the CLI named, as medin's file tools take it: relative to the workspace when it
/// lies in it, else as written (the tool's dry run then refuses it).
pub fn workspace_path(path: &str, workspace: &Path) -> String {
    let p = Path::new(path);
    match p.strip_prefix(workspace) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".into(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.to_string(),
    }
}

/// The medin action of a CLI tool call, for the guard: shell commands are `bash`, file writes
/// and edits `write_file`/`edit_file`, reads `read_file`/`list_dir`; any other tool keeps its
/// own name, which medin does not know: the guard refuses what it cannot judge.
pub fn medin_action(id: &str, tool: &str, input: &Value, workspace: &Path) -> Action {
    let s = |k: &str| input.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let path = |keys: &[&str]| {
        let raw = keys
            .iter()
            .find_map(|k| input.get(*k).and_then(Value::as_str))
            .unwrap_or_default();
        workspace_path(raw, workspace)
    };
    let (name, mapped) = match tool {
        "Bash" | "run_shell_command" | "exec_command" | "shell" => {
            let command = match input.get("command").or_else(|| input.get("cmd")) {
                Some(Value::String(c)) => c.clone(),
                Some(Value::Array(words)) => words
                    .iter()
                    .filter_map(Value::as_str)
                    .map(crate::agent::exec::shell_quote)
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            ("bash", json!({ "command": command }))
        }
        "Write" | "write_file" => (
            "write_file",
            json!({ "path": path(&["file_path", "path", "absolute_path"]), "content": s("content") }),
        ),
        "Edit" | "replace" => (
            "edit_file",
            json!({ "path": path(&["file_path", "path"]), "old_string": s("old_string"), "new_string": s("new_string") }),
        ),
        "MultiEdit" | "NotebookEdit" => (
            // Several edits at once: judged as a write of the file (the guard's file rules
            // and the workspace boundary), what it changes counted afterwards.
            "write_file",
            json!({ "path": path(&["file_path", "notebook_path", "path"]), "content": "" }),
        ),
        "Read" | "read_file" => (
            "read_file",
            json!({ "path": path(&["file_path", "absolute_path", "path"]) }),
        ),
        "Glob" | "Grep" | "LS" | "glob" | "list_directory" | "search_file_content" => {
            let p = path(&["path", "dir_path"]);
            (
                "list_dir",
                json!({ "path": if p.is_empty() { ".".to_string() } else { p } }),
            )
        }
        other => (other, input.clone()),
    };
    Action {
        id: id.to_string(),
        tool: name.to_string(),
        input: ActionInput::Json(mapped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_tools_map_to_medin_tools_with_workspace_paths() {
        let ws = Path::new("/ws");
        let a = medin_action("1", "Write", &json!({"file_path": "/ws/a/b.txt", "content": "x"}), ws);
        assert_eq!(
            (a.tool.as_str(), a.input),
            (
                "write_file",
                ActionInput::Json(json!({"path": "a/b.txt", "content": "x"}))
            )
        );
        // Outside the workspace the path stays absolute: medin's tool refuses it.
        let a = medin_action("1", "Read", &json!({"file_path": "/root/.ssh/id_rsa"}), ws);
        assert_eq!(a.input, ActionInput::Json(json!({"path": "/root/.ssh/id_rsa"})));
        let a = medin_action("1", "exec_command", &json!({"cmd": ["rm", "-rf", "/"]}), ws);
        assert_eq!(
            (a.tool.as_str(), a.input),
            ("bash", ActionInput::Json(json!({"command": "'rm' '-rf' '/'"})))
        );
        let a = medin_action("1", "WebFetch", &json!({"url": "http://x"}), ws);
        assert_eq!(a.tool, "WebFetch", "unknown to medin: the guard refuses it");
    }
}
