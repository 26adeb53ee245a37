//! What an agent can do: bash, read_file, write_file, edit_file, list_dir, delete_file,
//! move_file and verify. Each tool validates its JSON input, stays inside the workspace
//! (`..`, absolute paths and symlinks that lead out are PERMISSION_DENIED), supports a dry run
//! that reports `would_affect` and changes nothing, and answers with a [`Receipt`].
//!
//! Tools never bypass the guard: the runner calls [`call`] only after the guard allowed it.
//! Commands run through the sandbox.

pub mod receipt;

use std::path::PathBuf;

use crate::sandbox::SandboxConfig;
pub use receipt::{ErrorCode, Evidence, EvidenceKind, Receipt, ReceiptStatus, WouldAffect};

/// The input of one action as the agent sent it.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionInput {
    /// Parsed JSON.
    Json(serde_json::Value),
    /// Text that should have been JSON but could not be parsed (sent verbatim).
    Raw(String),
}

/// Where and how tools act.
#[derive(Debug, Clone)]
pub struct ToolContext {
    pub workspace: PathBuf,
    pub sandbox: SandboxConfig,
    /// Report `would_affect` and change nothing.
    pub dry_run: bool,
}

/// What the registry knows about one tool.
#[derive(Debug, Clone)]
pub struct ToolInfo {
    pub name: &'static str,
    pub description: &'static str,
    /// JSON Schema of the input object.
    pub input_schema: serde_json::Value,
    /// Changes the workspace (counts toward `max_changes`).
    pub mutating: bool,
    /// The input key a bare YAML string stands for (`bash: ls` → `{command: ls}`).
    pub shorthand: Option<&'static str>,
}

/// Every registered tool, in a stable order. Every input also accepts `dry_run: true`.
pub fn registry() -> Vec<ToolInfo> {
    use serde_json::json;
    let dry = json!({ "type": "boolean", "description": "Report what would change; change nothing." });
    let path = |d: &str| json!({ "type": "string", "description": d });
    vec![
        ToolInfo {
            name: "bash",
            description: "Run a shell command in the workspace (sandboxed). Returns exit code, stdout, stderr.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["command"], "properties": {
                "command": { "type": "string" },
                "timeout_ms": { "type": "integer", "minimum": 1, "description": "Overrides the task's command timeout." },
                "cwd": path("Workspace-relative working directory."),
                "dry_run": dry } }),
            mutating: false,
            shorthand: Some("command"),
        },
        ToolInfo {
            name: "read_file",
            description: "Read a text file in the workspace.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["path"], "properties": {
                "path": path("Workspace-relative path."),
                "offset": { "type": "integer", "minimum": 0, "description": "First line (0-based)." },
                "limit": { "type": "integer", "minimum": 1, "description": "Number of lines." },
                "dry_run": dry } }),
            mutating: false,
            shorthand: Some("path"),
        },
        ToolInfo {
            name: "write_file",
            description: "Create or overwrite a file with the given content; reads it back and checks the hash.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["path", "content"], "properties": {
                "path": path("Workspace-relative path; parent directories are created."),
                "content": { "type": "string" },
                "dry_run": dry } }),
            mutating: true,
            shorthand: None,
        },
        ToolInfo {
            name: "edit_file",
            description: "Replace exact text in a file. Fails with NOT_FOUND if the text is absent and CONFLICT if it is ambiguous.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["path", "old_string", "new_string"], "properties": {
                "path": path("Workspace-relative path."),
                "old_string": { "type": "string", "minLength": 1 },
                "new_string": { "type": "string" },
                "replace_all": { "type": "boolean", "description": "Replace every occurrence (default: exactly one must exist)." },
                "dry_run": dry } }),
            mutating: true,
            shorthand: None,
        },
        ToolInfo {
            name: "list_dir",
            description: "List a directory in the workspace.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "properties": {
                "path": path("Workspace-relative directory (default `.`)."),
                "recursive": { "type": "boolean" },
                "dry_run": dry } }),
            mutating: false,
            shorthand: Some("path"),
        },
        ToolInfo {
            name: "delete_file",
            description: "Delete a file (or, with recursive, a directory) in the workspace.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["path"], "properties": {
                "path": path("Workspace-relative path."),
                "recursive": { "type": "boolean" },
                "dry_run": dry } }),
            mutating: true,
            shorthand: Some("path"),
        },
        ToolInfo {
            name: "move_file",
            description: "Move or rename a file inside the workspace.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["from", "to"], "properties": {
                "from": path("Workspace-relative source."),
                "to": path("Workspace-relative destination."),
                "overwrite": { "type": "boolean" },
                "dry_run": dry } }),
            mutating: true,
            shorthand: None,
        },
        ToolInfo {
            name: "verify",
            description: "Check an expected outcome: file_exists, file_contains (regex), command_succeeds, git_status (expected porcelain output, empty = clean).",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["type", "target"], "properties": {
                "type": { "enum": ["file_exists", "file_contains", "command_succeeds", "git_status"] },
                "target": { "type": "string", "description": "Path, command, or repository directory." },
                "expected": { "type": "string" },
                "timeout_ms": { "type": "integer", "minimum": 1 },
                "dry_run": dry } }),
            mutating: false,
            shorthand: None,
        },
    ]
}

/// Whether `name` is a registered tool.
pub fn is_known(name: &str) -> bool {
    registry().iter().any(|t| t.name == name)
}

/// Runs one tool call and returns its receipt. Never panics on any input.
pub fn call(ctx: &ToolContext, tool: &str, input: &ActionInput) -> Receipt {
    let _ = (ctx, tool, input);
    todo!("tools helper")
}

/// What `tool` would touch with `input` (the dry-run targets), for the runtime-limit pre-check.
pub fn would_affect(ctx: &ToolContext, tool: &str, input: &serde_json::Value) -> Vec<WouldAffect> {
    let _ = (ctx, tool, input);
    todo!("tools helper")
}
