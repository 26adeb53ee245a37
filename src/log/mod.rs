//! What happened: the run folder of each task attempt (workspace, `receipts.jsonl`,
//! `transcript.jsonl`, `metrics.json`), and `ACTIVITY_LOG.md`, one entry per task outcome.
//! Every write is append-only and flushed before the next action runs, so a crash of the agent,
//! a command or the harness leaves every completed entry intact. A torn last entry is skipped
//! with a warning when read, never taken for data.

pub mod activity;
pub mod status;

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub use activity::{ActivityEntry, ActivityLog, EntryStatus};

/// An append-only JSON-lines file; each line is written whole and flushed.
#[derive(Debug)]
pub struct JsonlLog {
    path: PathBuf,
    file: File,
}

impl JsonlLog {
    /// Opens (creating) `path` for appending.
    pub fn open(path: &Path) -> std::io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(JsonlLog { path: path.to_path_buf(), file })
    }

    /// Appends one value as a line and flushes it to the OS.
    pub fn append<T: serde::Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.file.flush()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A new run id: UTC time to the millisecond plus the process id, sortable.
pub fn new_run_id() -> String {
    format!("{}-{}", chrono::Utc::now().format("%Y%m%dT%H%M%S%3fZ"), std::process::id())
}
