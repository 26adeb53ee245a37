//! Did it work? Validators check the real end state: files, commands (through the sandbox),
//! listening ports, HTTP endpoints. They run in parallel, each with a timeout (5 s default).
//! A validator that cannot run at all (service or tool unavailable) is `pending`, never a pass:
//! nothing is complete without a validation that ran and passed.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::sandbox::SandboxConfig;
use crate::spec::ValidatorSpec;

/// Whether a validation ran and held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationStatus {
    Passed,
    Failed,
    /// Could not run (unavailable tool or service, timeout before an answer); not a pass.
    Pending,
}

/// The result of one validation, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationResult {
    /// Short label, e.g. `file_exists hello.txt`.
    pub check: String,
    pub status: ValidationStatus,
    /// `status == Passed`.
    pub passed: bool,
    /// What was observed.
    pub evidence: String,
    /// 0-100: how sure the check is of its answer.
    pub confidence: u8,
    pub duration_ms: u64,
    /// RFC 3339.
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
}

/// Where validators look.
#[derive(Debug, Clone)]
pub struct ValidateContext {
    pub workspace: PathBuf,
    /// Commands run through this sandbox configuration.
    pub sandbox: SandboxConfig,
    /// Per-validator timeout when the spec gives none (5 s).
    pub default_timeout: Duration,
}

/// Runs every validator in parallel; results come back in the order of `specs`.
pub fn run_all(specs: &[ValidatorSpec], ctx: &ValidateContext) -> Vec<ValidationResult> {
    let _ = (specs, ctx);
    todo!("validate helper")
}
