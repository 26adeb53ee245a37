//! What one attempt produced, as data: every action with its guard verdict, decision and
//! receipt, the agent's final report, the validations, and the attempt's metrics. The runner
//! fills it; expectations, the log and the report read it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::agent::Usage;
use crate::guard::Verdict;
use crate::spec::{FinalReport, Outcome};
use crate::tools::Receipt;
use crate::validate::ValidationResult;

/// One action, as written to `receipts.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ActionRecord {
    /// 1-based position in the attempt.
    pub seq: u32,
    /// The agent's call id (empty for malformed output).
    pub action_id: String,
    pub tool: String,
    /// The input as JSON, or `{"raw": text}` when it was not JSON.
    pub input: serde_json::Value,
    /// The guard's verdict, when the action reached the guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Verdict>,
    /// allow | warn | deny | bypassed | not_checked
    pub decision: String,
    /// The written justification of a bypass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub justification: Option<String>,
    /// A runtime limit this action broke.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<String>,
    pub receipt: Receipt,
    pub timestamp: String,
    /// The tool was invoked (not refused by policy, guard or a limit), whatever its result.
    #[serde(default)]
    pub ran: bool,
    /// A step of the harness itself (PRP gate, backoff delay, retry), not an agent's call.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub harness: bool,
}

impl ActionRecord {
    /// An agent's tool call (not the harness's own step, not a receipt about the agent).
    pub fn is_agent_call(&self) -> bool {
        !self.harness && !self.tool.is_empty()
    }
}

/// Calls and errors of one tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolTally {
    pub calls: u32,
    pub errors: u32,
}

/// Numbers of one attempt, written to `metrics.json`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AttemptMetrics {
    /// Tool calls the agent made (malformed lines count too).
    pub turns: u32,
    /// Receipts with status error.
    pub tool_errors: u32,
    pub by_tool: BTreeMap<String, ToolTally>,
    /// Actions the guard blocked (and policy denied).
    pub guard_blocks: u32,
    pub guard_warnings: u32,
    pub malformed: u32,
    /// Changes the agent made to protected files (each found before a judged run).
    #[serde(default)]
    pub tampering: u32,
    pub duration_ms: u64,
    pub usage: Usage,
}

/// Everything one attempt produced.
#[derive(Debug, Clone, Default)]
pub struct AttemptRecord {
    pub actions: Vec<ActionRecord>,
    pub final_report: Option<FinalReport>,
    /// Why the harness stopped the task (limit, invariant), or why the agent broke.
    pub stop_reason: Option<String>,
    pub outcome: Option<Outcome>,
    pub validations: Vec<ValidationResult>,
    pub metrics: AttemptMetrics,
    pub workspace: PathBuf,
    /// The attempt's run folder (the harness's own files: loop state, PRP artifacts).
    pub run_dir: PathBuf,
    /// The fixture the workspace was copied from.
    pub fixture: Option<PathBuf>,
    /// Path → `sha256:<hex>` of every workspace file when the agent started (after setup).
    pub initial: std::collections::BTreeMap<String, String>,
    /// Changes the agent made to protected files, as found before each judged run.
    pub tampering: Vec<crate::validate::judged::Tampering>,
    /// PRP tasks: gate runs, fix attempts, retries, artifacts.
    pub prp: Option<PrpRecord>,
    /// TDD tasks: exit tag, iterations, stop reason, fix levels.
    pub tdd: Option<super::tdd::TddRecord>,
}

/// The result of one gate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub level: u8,
    pub description: String,
    pub command: Option<String>,
    pub outcome: crate::spec::GateOutcome,
    /// `outcome` is passed or skipped.
    pub success: bool,
    pub skipped: bool,
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub duration_ms: u64,
}

/// One file the run created, modified or deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifact {
    pub path: String,
    /// `sha256:<hex>` of the content now (of the original content for a deleted file).
    pub hash: String,
    /// `receipt` when a file tool's receipt names the file, `command` when only a command can
    /// have changed it.
    pub source: String,
}

/// Files the run changed, by kind.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Artifacts {
    pub created: Vec<Artifact>,
    pub modified: Vec<Artifact>,
    pub deleted: Vec<Artifact>,
}

/// What a PRP run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PrpRecord {
    pub task_id: String,
    pub success: bool,
    /// Fix rounds that ran.
    pub fix_attempts: u32,
    /// Every gate run, in order: run 0 after the first round, run n after fix round n.
    pub runs: Vec<Vec<GateResult>>,
    /// Agent-round retries after transient failures.
    pub retries: u32,
    /// Delays slept, in milliseconds, with what they were for.
    pub delays: Vec<(String, u64)>,
    /// The coder's reports, one per round.
    pub replies: Vec<crate::spec::FinalReport>,
    pub error: Option<String>,
    pub artifacts: Artifacts,
}
