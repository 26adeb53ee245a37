//! The task's tool policy (allow/deny globs) and what a guard verdict means for the task
//! (allow, warn, deny, or bypass with a logged justification).

use crate::spec::{Policy, ToolPolicy};

use super::verdict::Verdict;

/// A tool policy glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid tool glob `{glob}` in policy: {reason}; use `*`, `?` and `[..]` only")]
pub struct PolicyError {
    pub glob: String,
    pub reason: String,
}

/// Compiled allow/deny globs.
#[derive(Debug, Clone)]
pub struct ToolGate {
    _private: (),
}

/// Why a tool was refused, and what to use instead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDenial {
    pub message: String,
    pub alternative: Option<String>,
}

impl ToolGate {
    pub fn new(policy: &ToolPolicy) -> Result<Self, PolicyError> {
        let _ = policy;
        todo!("guard helper")
    }

    /// Ok when `tool` may be called; otherwise the denial (deny globs win over allow).
    pub fn check(&self, tool: &str) -> Result<(), ToolDenial> {
        let _ = tool;
        todo!("guard helper")
    }
}

/// What a verdict means for this task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Run it, with these warnings in the receipt.
    Warn(Vec<String>),
    /// Do not run it: PERMISSION_DENIED with this message.
    Deny { message: String },
    /// Run it although a rule blocked it: the task's written justification, logged.
    Bypassed { rules: Vec<String>, justification: String },
}

/// Turns `verdict` into a decision under `policy`.
pub fn decide(verdict: &Verdict, policy: &Policy) -> Decision {
    let _ = (verdict, policy);
    todo!("guard helper")
}
