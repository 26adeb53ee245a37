//! `ACTIVITY_LOG.md`: one entry per task outcome, YAML front matter (timestamp, taskId,
//! category, status, duration, attempt, ...) and a markdown body (description, validation results
//! with evidence, failures). Appended under an exclusive lock as one write, flushed; read back
//! with torn entries skipped and reported.

use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::validate::ValidationResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// Every expectation held.
    Passed,
    /// An expectation did not hold (the agent's failure).
    Failed,
    /// The harness could not run the task (broken spec, setup failure, missing tool).
    Error,
}

/// One task outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActivityEntry {
    pub timestamp: DateTime<Utc>,
    #[serde(rename = "taskId")]
    pub task_id: String,
    pub category: String,
    pub status: EntryStatus,
    /// The harness's judgement of the attempt (success, failure, stopped, ...), when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    pub duration_ms: u64,
    pub attempt: u32,
    pub run_id: String,
    pub run_dir: String,
    pub agent: String,
    pub description: String,
    #[serde(default)]
    pub validations: Vec<ValidationResult>,
    /// Why the trial failed, one line per expectation that did not hold.
    #[serde(default)]
    pub failures: Vec<String>,
}

/// The activity log file.
#[derive(Debug, Clone)]
pub struct ActivityLog {
    path: PathBuf,
}

impl ActivityLog {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ActivityLog { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `entry` as one locked write and flushes it.
    pub fn append(&self, entry: &ActivityEntry) -> std::io::Result<()> {
        let _ = entry;
        todo!("log helper")
    }

    /// Every complete entry, oldest first, and one warning per torn or unreadable entry.
    pub fn read(&self) -> std::io::Result<(Vec<ActivityEntry>, Vec<String>)> {
        todo!("log helper")
    }
}
