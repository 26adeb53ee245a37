//! What an agent can do: bash, read_file, write_file, edit_file, list_dir, delete_file,
//! move_file and verify. Each tool validates its JSON input, stays inside the workspace
//! (`..`, absolute paths and symlinks that lead out are PERMISSION_DENIED), supports a dry run
//! that reports `would_affect` and changes nothing, and answers with a [`Receipt`].
//!
//! Input handling: [`ActionInput::Raw`] (text that is not JSON) is `INVALID_INPUT` with a hint;
//! JSON is checked against the tool's schema from [`registry`] (required keys, types, enums,
//! minimums, unknown keys with the nearest valid key suggested). A bare JSON string is accepted
//! for tools with a shorthand key (`"ls"` for bash means `{"command": "ls"}`).
//!
//! `read_file` on content that is not UTF-8 answers with `encoding: "base64"` and the whole file
//! base64-encoded (offset/limit do not apply; a warning says so). Text answers have
//! `encoding: "utf-8"`.
//!
//! Tools never bypass the guard: [`call`] takes only a [`Cleared`] action, which only the
//! pipeline ([`crate::pipeline`]) makes. Commands run through the sandbox.

// Internal helpers return the finished error receipt as `Err`; it is built once per call, so
// its size does not matter and boxing it would only add noise.
#![allow(clippy::result_large_err)]

pub mod receipt;

mod args;
mod bash;
mod files;
pub mod path;
pub(crate) mod transaction;

/// Standard base64 (the HTML report's script hash uses it too).
pub(crate) use files::base64;
mod verify;

pub(crate) use verify::Check as VerifiedCheck;

use std::path::PathBuf;

use crate::pipeline::Cleared;
use crate::sandbox::{FixedPath, SandboxConfig};
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
    /// The task's deadline: no command runs past it, whatever `timeout_ms` a call asks for.
    pub deadline: Option<std::time::Instant>,
    /// The attempt's validation cache: `verify`'s file checks repeat from it while nothing
    /// changed (see [`crate::validate::cache`]). None: every check runs.
    pub checks: Option<std::sync::Arc<crate::validate::ValidationCache>>,
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
                "session": { "type": "boolean", "description": "Run in the attempt's persistent shell, where cd, export, variables and functions persist between calls (a call that times out ends the shell and its state)." },
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
        ToolInfo {
            name: transaction::NAME,
            description: "Plan, check and run several tool calls as one: medin shows what the steps would affect, applies the task's policy to the whole plan, checkpoints the workspace, runs the steps in order (stopping at the first that fails), runs the verification, and on any failure rolls the workspace back to the checkpoint (unless rollback_on_failure is false). Every step and check is a receipt of its own; the answer says committed or rolled_back, and why.",
            input_schema: json!({ "type": "object", "additionalProperties": false, "required": ["description", "steps", "verify"], "properties": {
                "description": { "type": "string", "description": "What the transaction does, for the log." },
                "steps": { "type": "array", "minItems": 1, "maxItems": transaction::MAX_STEPS,
                    "description": "Tool calls run in order; any tool but `transaction`.",
                    "items": { "type": "object", "additionalProperties": false, "required": ["tool", "input"], "properties": {
                        "tool": { "type": "string" },
                        "input": { "type": "object", "description": "The tool's input, as for a direct call." } } } },
                "verify": { "type": "array", "minItems": 1, "maxItems": transaction::MAX_CHECKS,
                    "description": "Checks run after the steps; all must pass to commit. Each is a `verify` tool input ({\"type\": \"file_contains\", \"target\": \"a.txt\", \"expected\": \"x\"}) or a validator ({\"file_exists\": \"a.txt\"}, {\"file_contains\": {\"path\": \"a.txt\", \"pattern\": \"x\"}}, {\"command\": \"make test\"}).",
                    "items": { "type": "object" } },
                "rollback_on_failure": { "type": "boolean", "description": "Put the workspace back as it was when a step or a check fails (default true)." },
                "dry_run": dry } }),
            mutating: true,
            shorthand: None,
        },
    ]
}

/// Whether `name` is a registered tool.
pub fn is_known(name: &str) -> bool {
    registry().iter().any(|t| t.name == name)
}

/// Runs one cleared tool call and returns its receipt. Never panics on any input.
///
/// Only the pipeline makes a [`Cleared`] action (tool policy, guard, decision and limits
/// passed), so no caller can reach a tool around the guard.
pub fn call(ctx: &ToolContext, action: &Cleared<'_>) -> Receipt {
    let (tool, input) = (action.tool(), action.input());
    let run = std::panic::AssertUnwindSafe(|| call_inner(ctx, tool, input));
    match std::panic::catch_unwind(run) {
        Ok(r) => r,
        Err(_) => Receipt::error(
            ErrorCode::ToolExecutionFailed,
            format!("tool `{tool}` failed with an internal error (a medin bug); the workspace may be partly changed, check it with list_dir"),
        ),
    }
}

/// The answer to a call of a tool that does not exist: TOOL_NOT_FOUND with the nearest name.
pub fn unknown_tool_receipt(tool: &str) -> Receipt {
    let reg = registry();
    let names: Vec<&str> = reg.iter().map(|t| t.name).collect();
    let nearest = args::nearest(tool, &names);
    let hint = nearest.map(|n| format!(" did you mean `{n}`?")).unwrap_or_default();
    Receipt::error(
        ErrorCode::ToolNotFound,
        format!("no tool named `{tool}`;{hint} available tools: {}", names.join(", ")),
    )
    .with_context(serde_json::json!({ "tool": tool, "nearest": nearest, "available": names }))
}

/// What a call would touch (its dry-run targets), without running it. Used by the runtime-limit
/// pre-check. Input that does not validate yields an empty list (the call itself will fail);
/// paths that cannot be resolved are reported in their lexical form.
pub fn would_affect(ctx: &ToolContext, tool: &str, input: &ActionInput) -> Vec<WouldAffect> {
    let Some(info) = registry().into_iter().find(|t| t.name == tool) else {
        return Vec::new();
    };
    let Ok(a) = args::parse(&info, input) else {
        return Vec::new();
    };
    match plan(ctx, tool, &a) {
        Ok(v) => v,
        Err(_) => lexical_plan(tool, &a),
    }
}

/// The input object as the tool will read it ([`canonical_input`]), or the message that says
/// why it is not valid (what the tool itself would answer).
pub(crate) fn validated_input(tool: &str, input: &ActionInput) -> Result<serde_json::Value, String> {
    let Some(info) = registry().into_iter().find(|t| t.name == tool) else {
        let names: Vec<&str> = registry().iter().map(|t| t.name).collect();
        return Err(format!("no tool named `{tool}`; available tools: {}", names.join(", ")));
    };
    args::parse(&info, input).map(args::Args::into_value)
}

/// The input object exactly as the tool will read it (JSON text parsed, a bare string expanded to
/// the tool's shorthand key, validated against the schema), or `None` when the tool is unknown or
/// the input invalid (the call then fails with the reason). The guard judges this form, so no
/// spelling of an input reaches a tool without being judged.
pub fn canonical_input(tool: &str, input: &ActionInput) -> Option<serde_json::Value> {
    let info = registry().into_iter().find(|t| t.name == tool)?;
    args::parse(&info, input).ok().map(args::Args::into_value)
}

/// `input` (a tool's validated input) with each path it names below `root` — the fixed root
/// the task's commands see the workspace at (`/app`) — written workspace-relative
/// (`/app/tests/a.py` → `tests/a.py`, `/app` → `.`). The pipeline applies it before the guard,
/// so the guard judges `/app/tests/a.py` exactly as `tests/a.py`. Any other path is left as
/// written: an absolute one outside the root, or one that climbs (`/app/../etc`), is refused
/// by the tools' confinement, which names it as the agent wrote it.
pub(crate) fn rebase_paths(tool: &str, mut input: serde_json::Value, root: Option<&FixedPath>) -> serde_json::Value {
    let Some(root) = root else { return input };
    let keys: &[&str] = match tool {
        "read_file" | "write_file" | "edit_file" | "list_dir" | "delete_file" => &["path"],
        "move_file" => &["from", "to"],
        "bash" => &["cwd"],
        "verify" => match input.get("type").and_then(|t| t.as_str()) {
            Some("file_exists" | "file_contains" | "git_status") => &["target"],
            _ => &[],
        },
        _ => &[],
    };
    for key in keys {
        let Some(slot) = input.get_mut(*key) else { continue };
        let relative = slot.as_str().and_then(|text| root.relative(text));
        if let Some(relative) = relative.filter(|r| !r.split('/').any(|part| part == "..")) {
            *slot = serde_json::Value::String(relative);
        }
    }
    input
}

/// Whether a call runs a command: `bash`, and the `verify` checks that start a program
/// (`command_succeeds` runs a shell command; `git_status` runs git, which obeys the workspace's
/// own `.git/config`, hooks and fsmonitor included). The tool policy treats every such call as
/// a use of `bash` ([`crate::guard::policy::ToolGate::check_call`]).
/// Whether a call of `tool` with `input` leaves everything a check observes as it was: the
/// reading tools, and `verify` when it runs no command. Anything else (a mutating tool, a
/// command, an unknown tool) may change a check's result.
pub(crate) fn leaves_state_alone(tool: &str, input: &ActionInput) -> bool {
    match tool {
        "read_file" | "list_dir" => true,
        "verify" => canonical_input(tool, input).is_some_and(|c| !runs_commands(tool, Some(&c))),
        _ => false,
    }
}

pub(crate) fn runs_commands(tool: &str, canonical: Option<&serde_json::Value>) -> bool {
    match tool {
        "bash" => true,
        "verify" => canonical
            .and_then(|v| v.get("type"))
            .and_then(|t| t.as_str())
            .is_some_and(|t| matches!(t, "command_succeeds" | "git_status")),
        _ => false,
    }
}

fn call_inner(ctx: &ToolContext, tool: &str, input: &ActionInput) -> Receipt {
    let reg = registry();
    let Some(info) = reg.iter().find(|t| t.name == tool) else {
        return unknown_tool_receipt(tool);
    };
    let a = match args::parse(info, input) {
        Ok(a) => a,
        Err(msg) => {
            return Receipt::error(ErrorCode::InvalidInput, msg)
                .with_context(serde_json::json!({ "tool": tool, "schema": info.input_schema }))
        }
    };
    if ctx.dry_run || a.bool("dry_run") {
        return match plan(ctx, tool, &a) {
            Ok(targets) => {
                let mut r = Receipt::dry_run(targets);
                r.data = serde_json::json!({ "tool": tool, "dry_run": true });
                r
            }
            Err(r) => r,
        };
    }
    match tool {
        "bash" => bash::run(ctx, &a),
        "read_file" => files::read_file(ctx, &a),
        "write_file" => files::write_file(ctx, &a),
        "edit_file" => files::edit_file(ctx, &a),
        "list_dir" => files::list_dir(ctx, &a),
        "delete_file" => files::delete_file(ctx, &a),
        "move_file" => files::move_file(ctx, &a),
        "verify" => verify::run(ctx, &a),
        // Each step is a pass of its own: only the pipeline runs a transaction.
        transaction::NAME => Receipt::error(
            ErrorCode::ToolExecutionFailed,
            "a transaction runs only through the pipeline, never as a tool call of its own (a medin bug)",
        ),
        other => Receipt::error(
            ErrorCode::ToolNotFound,
            format!("tool `{other}` is registered but has no implementation (a medin bug)"),
        ),
    }
}

fn affect(kind: &str, target: impl Into<String>, action: &str) -> WouldAffect {
    WouldAffect {
        kind: kind.to_string(),
        target: target.into(),
        action: action.to_string(),
    }
}

/// The dry-run targets of a validated call; paths are resolved (and confinement enforced).
fn plan(ctx: &ToolContext, tool: &str, a: &args::Args) -> Result<Vec<WouldAffect>, Receipt> {
    let conf = files::confine(ctx)?;
    let res = |key: &str, follow: bool| -> Result<path::Resolved, Receipt> {
        let p = a.str(key).unwrap_or(".");
        conf.resolve(p, follow).map_err(files::path_error)
    };
    let exists = |r: &path::Resolved| std::fs::symlink_metadata(&r.abs).is_ok();
    Ok(match tool {
        "bash" => {
            if a.str("cwd").is_some() {
                res("cwd", true)?;
            }
            let command = a.str("command").unwrap_or_default();
            let kind = if bash::is_git_command(command) {
                "git"
            } else {
                "command"
            };
            vec![affect(kind, command, "execute")]
        }
        "read_file" | "list_dir" => vec![affect("file", res("path", true)?.rel, "read")],
        "write_file" => {
            let r = res("path", true)?;
            let action = if exists(&r) { "modify" } else { "create" };
            vec![affect("file", r.rel, action)]
        }
        "edit_file" => vec![affect("file", res("path", true)?.rel, "modify")],
        "delete_file" => vec![affect("file", res("path", false)?.rel, "delete")],
        "move_file" => {
            let from = res("from", false)?;
            let to = res("to", false)?;
            let action = if exists(&to) { "modify" } else { "create" };
            vec![affect("file", from.rel, "delete"), affect("file", to.rel, action)]
        }
        "verify" => match a.str("type").unwrap_or_default() {
            "command_succeeds" => {
                let t = a.str("target").unwrap_or_default();
                let kind = if bash::is_git_command(t) { "git" } else { "command" };
                vec![affect(kind, t, "execute")]
            }
            "git_status" => vec![affect("git", res("target", true)?.rel, "read")],
            _ => vec![affect("file", res("target", true)?.rel, "read")],
        },
        transaction::NAME => transaction::would_affect(ctx, &a.clone().into_value()),
        _ => Vec::new(),
    })
}

/// Dry-run targets without touching the file system (when resolution failed).
fn lexical_plan(tool: &str, a: &args::Args) -> Vec<WouldAffect> {
    let lex = |key: &str| path::Confined::lexical(a.str(key).unwrap_or("."));
    match tool {
        "bash" => vec![affect("command", a.str("command").unwrap_or_default(), "execute")],
        "read_file" | "list_dir" => vec![affect("file", lex("path"), "read")],
        "write_file" => vec![affect("file", lex("path"), "create")],
        "edit_file" => vec![affect("file", lex("path"), "modify")],
        "delete_file" => vec![affect("file", lex("path"), "delete")],
        "move_file" => vec![
            affect("file", lex("from"), "delete"),
            affect("file", lex("to"), "create"),
        ],
        "verify" => match a.str("type").unwrap_or_default() {
            "command_succeeds" => vec![affect("command", a.str("target").unwrap_or_default(), "execute")],
            "git_status" => vec![affect("git", lex("target"), "read")],
            _ => vec![affect("file", lex("target"), "read")],
        },
        _ => Vec::new(),
    }
}

// The tools' own defences (confinement, input checks, dry runs), tested below the guard: the
// calls are cleared for the test, as only the pipeline clears them otherwise.
#[cfg(test)]
mod tests {
    mod bash;
    mod files;
    mod input;

    use std::path::Path;
    use std::time::Duration;

    use super::{ActionInput, Receipt, ToolContext};
    use crate::pipeline::Cleared;
    use crate::sandbox::SandboxConfig;

    /// A context in `dir` whose commands get `timeout` and a short grace.
    fn context(dir: &Path, timeout: Duration) -> ToolContext {
        let mut sandbox = SandboxConfig::new(dir);
        sandbox.timeout = timeout;
        sandbox.grace = Duration::from_millis(200);
        ToolContext {
            workspace: dir.to_path_buf(),
            sandbox,
            dry_run: false,
            deadline: None,
            checks: None,
        }
    }

    /// One call of `tool`, cleared for the test.
    fn call(ctx: &ToolContext, tool: &str, input: serde_json::Value) -> Receipt {
        super::call(ctx, &Cleared::for_test(tool, &ActionInput::Json(input)))
    }
}
