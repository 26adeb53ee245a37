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

/// Every registered tool.
pub fn registry() -> Vec<ToolInfo> {
    todo!("tools helper")
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
