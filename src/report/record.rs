//! The result of one trial attempt as reports read it: what a part file of the run folder holds
//! and what the suite metrics, the thresholds and `summary.json` are computed from. It is made
//! from a [`TaskResult`] once, when the trial finishes, so a run merged from the parts of many
//! processes is concluded exactly like a run kept in memory.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::quality::AttemptQuality;
use crate::runner::{AttemptMetrics, TaskResult};
use crate::spec::Outcome;
use crate::validate::ValidationResult;

/// How a trial ended, for counting: the agent's failures apart from the harness's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialStatus {
    /// Every expectation held.
    Passed,
    /// An expectation did not hold: the agent's (or the task's) failure.
    Failed,
    /// The harness could not run the trial: not the agent's failure.
    Infrastructure,
}

impl TrialStatus {
    pub fn of(result: &TaskResult) -> Self {
        if result.is_harness_error() {
            TrialStatus::Infrastructure
        } else if result.passed() {
            TrialStatus::Passed
        } else {
            TrialStatus::Failed
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TrialStatus::Passed => "passed",
            TrialStatus::Failed => "failed",
            TrialStatus::Infrastructure => "infrastructure",
        }
    }
}

/// One finished trial attempt (a part file: `trial-results/<trial>@<attempt>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// `<category>::<name>`.
    pub trial: String,
    pub category: String,
    pub attempt: u32,
    pub agent: String,
    pub status: TrialStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The failure message (inert, each expectation clipped), when the trial did not pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default)]
    pub metrics: AttemptMetrics,
    pub run_dir: PathBuf,
    /// When the trial finished.
    pub finished_at: chrono::DateTime<chrono::Utc>,
    /// The task's tags.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Whose problem a harness error is (`None` unless the status is infrastructure).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<crate::error::Cause>,
    /// Each expectation that did not hold, as data.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<super::results::FailedExpectation>,
    /// What the attempt's receipts, transcript and validations say (measured when it finished).
    #[serde(default)]
    pub quality: AttemptQuality,
    /// The task's `flake_tolerance`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flake_tolerance: u32,
    /// The PRD requirements the task names (it proves them if it passed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requirements: Vec<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl TrialRecord {
    /// The record of a finished attempt, its quality measured from its run folder and the
    /// `validations` of its end state ([`super::quality::measure`]).
    pub fn of(result: &TaskResult, validations: &[ValidationResult]) -> Self {
        TrialRecord {
            trial: result.trial.clone(),
            category: result.category.clone(),
            attempt: result.attempt,
            agent: result.agent.clone(),
            status: TrialStatus::of(result),
            outcome: result.outcome,
            failure: result.failure_message(),
            metrics: result.metrics.clone(),
            run_dir: result.run_dir.clone(),
            finished_at: chrono::Utc::now(),
            tags: result.tags.clone(),
            cause: result.cause(),
            expectations: match &result.verdict {
                crate::runner::TrialVerdict::Failed(ms) => ms
                    .iter()
                    .map(|m| super::results::FailedExpectation {
                        expectation: m.what.clone(),
                        expected: m.expected.clone(),
                        actual: m.actual.clone(),
                    })
                    .collect(),
                _ => Vec::new(),
            },
            quality: super::quality::measure(&result.run_dir, validations),
            flake_tolerance: result.flake_tolerance,
            requirements: result.requirements.clone(),
        }
    }

    pub fn passed(&self) -> bool {
        self.status == TrialStatus::Passed
    }

    /// The agent claimed success and the trial failed: a false-success claim.
    pub fn false_success(&self) -> bool {
        self.quality.claimed_success && self.status == TrialStatus::Failed
    }

    /// A record for tests: attempt `attempt` of `trial` (`<category>::<name>`) by the oracle.
    #[cfg(test)]
    pub fn for_test(trial: &str, attempt: u32, status: TrialStatus) -> Self {
        TrialRecord {
            trial: trial.into(),
            category: trial.split("::").next().unwrap_or_default().into(),
            attempt,
            agent: "oracle".into(),
            status,
            outcome: None,
            failure: (status != TrialStatus::Passed).then(|| format!("{trial} {}", status.as_str())),
            metrics: AttemptMetrics::default(),
            run_dir: PathBuf::from("/tmp/x"),
            finished_at: chrono::Utc::now(),
            tags: Vec::new(),
            cause: None,
            expectations: Vec::new(),
            quality: AttemptQuality::default(),
            flake_tolerance: 0,
            requirements: Vec::new(),
        }
    }
}
