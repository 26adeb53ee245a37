//! `medin status`: filter activity entries and render them as a table, JSON or markdown, with
//! green / red / yellow by status when colour is wanted.

use chrono::{DateTime, Utc};

use super::activity::ActivityEntry;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFormat {
    Table,
    Json,
    Markdown,
}

/// Which entries to show.
#[derive(Debug, Clone, Default)]
pub struct StatusFilter {
    /// Substring of the task id.
    pub task: Option<String>,
    /// Only failed or errored entries.
    pub failed: bool,
    pub since: Option<DateTime<Utc>>,
    /// The newest N (after filtering).
    pub limit: Option<usize>,
}

/// Parses `--since`: an RFC 3339 time, a date `2026-01-19`, or an age like `2h`.
pub fn parse_since(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let _ = (text, now);
    todo!("log helper")
}

/// Applies `filter`, keeping the order oldest → newest.
pub fn filter_entries(entries: Vec<ActivityEntry>, filter: &StatusFilter) -> Vec<ActivityEntry> {
    let _ = (entries, filter);
    todo!("log helper")
}

/// Renders entries; `color` adds ANSI colours to the table status column.
pub fn render(entries: &[ActivityEntry], format: StatusFormat, color: bool) -> String {
    let _ = (entries, format, color);
    todo!("log helper")
}
