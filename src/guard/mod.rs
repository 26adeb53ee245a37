//! May it act? The guard judges every action before it runs: the constitutional pre-check of
//! commands (rules by category), the task's tool policy, and its runtime limits.
//!
//! The guard never runs anything and never touches the file system beyond resolving paths: it
//! reads the action and answers with a [`Verdict`]. What a warn or block means for a task is
//! [`policy`]'s call.

pub mod limits;
pub mod policy;
pub mod rules;
pub mod verdict;

use std::path::Path;

pub use verdict::{Category, Recommendation, Risk, Verdict, Violation};

/// What the guard knows about where the action would run.
#[derive(Debug, Clone, Copy)]
pub struct GuardContext<'a> {
    pub workspace: &'a Path,
}

/// The verdict on one shell command line.
pub fn check_command(command: &str, ctx: &GuardContext<'_>) -> Verdict {
    let _ = (command, ctx);
    todo!("guard helper")
}

/// The verdict on one tool call: the commands inside it (bash, verify command_succeeds) and,
/// for file tools, the paths they touch.
pub fn check_action(tool: &str, input: &serde_json::Value, ctx: &GuardContext<'_>) -> Verdict {
    let _ = (tool, input, ctx);
    todo!("guard helper")
}
