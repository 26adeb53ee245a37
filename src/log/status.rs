//! `medin status`: filter activity entries and render them as a table, JSON or markdown, with
//! green / red / yellow by status when colour is wanted.
//!
//! This module only shapes entries already read by [`super::ActivityLog::read`]; it never
//! touches the log file. Every rendering is inert: table and markdown cells through
//! [`crate::inert::line`], JSON with control and bidi characters escaped.

use chrono::{DateTime, Duration as ChronoDuration, NaiveDate, NaiveDateTime, Utc};

use super::activity::{export_json, ActivityEntry, EntryKind, EntryStatus};

/// How `medin status` renders the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusFormat {
    Table,
    Json,
    Markdown,
}

/// `--category`: an entry kind (reference 000's categories, and `correction`) or a suite
/// category (the suite folder).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CategoryFilter {
    Kind(EntryKind),
    Suite(String),
}

impl CategoryFilter {
    /// `task`, `error`, `validation`, `self-healing`, `correction` and `prd` name kinds; anything else
    /// is a suite category, compared without case.
    pub fn parse(text: &str) -> CategoryFilter {
        match EntryKind::parse(text) {
            Some(k) => CategoryFilter::Kind(k),
            None => CategoryFilter::Suite(text.trim().to_string()),
        }
    }
}

/// Which entries to show.
#[derive(Debug, Clone, Default)]
pub struct StatusFilter {
    /// Substring of the task id (case-insensitive).
    pub task: Option<String>,
    /// Only failed or errored entries.
    pub failed: bool,
    /// Only entries of this kind or suite category. Without it, correction entries are not
    /// shown (their effect is: the entries they correct show the corrected status).
    pub category: Option<CategoryFilter>,
    /// Only entries with this status (after corrections).
    pub status: Option<EntryStatus>,
    /// Only entries at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only entries at or before this time.
    pub until: Option<DateTime<Utc>>,
    /// The newest N (after filtering).
    pub limit: Option<usize>,
}

/// Parses `--since`: an RFC 3339 time, a date `2026-01-19` (midnight UTC), or an age like `30m`,
/// `2h`, `7d` (s, m, h, d, w) counted back from `now`.
pub fn parse_since(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    parse_time("--since", text, now)
}

/// Parses `--until` as [`parse_since`] does (`--until 2h`: up to two hours ago).
pub fn parse_until(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    parse_time("--until", text, now)
}

fn parse_time(flag: &str, text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let t = text.trim();
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Ok(dt.with_timezone(&Utc));
    }
    if let Ok(naive) = NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S") {
        return Ok(naive.and_utc());
    }
    if let Ok(date) = NaiveDate::parse_from_str(t, "%Y-%m-%d") {
        if let Some(midnight) = date.and_hms_opt(0, 0, 0) {
            return Ok(midnight.and_utc());
        }
    }
    let invalid = || {
        format!(
            "invalid {flag} `{t}`: give an RFC 3339 time (2026-01-19T15:30:00Z), a date (2026-01-19, \
             midnight UTC) or an age before now (30m, 2h, 7d; units s, m, h, d, w)"
        )
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(invalid)?;
    let (num, unit) = t.split_at(split);
    let n: i64 = num.parse().map_err(|_| invalid())?;
    let age = match unit.trim() {
        "s" => ChronoDuration::try_seconds(n),
        "m" => ChronoDuration::try_minutes(n),
        "h" => ChronoDuration::try_hours(n),
        "d" => ChronoDuration::try_days(n),
        "w" => ChronoDuration::try_weeks(n),
        _ => None,
    }
    .ok_or_else(invalid)?;
    now.checked_sub_signed(age)
        .ok_or_else(|| format!("{flag} `{t}` reaches before the earliest representable time"))
}

impl StatusFilter {
    /// Whether `entry` passes every condition but the limit.
    pub fn matches(&self, e: &ActivityEntry) -> bool {
        self.task
            .as_ref()
            .is_none_or(|t| e.task_id.to_lowercase().contains(&t.to_lowercase()))
            && (!self.failed || matches!(e.status, EntryStatus::Failed | EntryStatus::Error))
            && match &self.category {
                None => e.kind != EntryKind::Correction,
                Some(CategoryFilter::Kind(k)) => e.kind == *k,
                Some(CategoryFilter::Suite(c)) => e.kind != EntryKind::Correction && e.category.eq_ignore_ascii_case(c),
            }
            && self.status.is_none_or(|s| e.status == s)
            && self.since.is_none_or(|s| e.timestamp >= s)
            && self.until.is_none_or(|u| e.timestamp <= u)
    }
}

/// Applies `filter`, keeping the order oldest → newest (stable by timestamp).
pub fn filter_entries(mut entries: Vec<ActivityEntry>, filter: &StatusFilter) -> Vec<ActivityEntry> {
    entries.sort_by_key(|e| e.timestamp);
    entries.retain(|e| filter.matches(e));
    if let Some(n) = filter.limit {
        let drop = entries.len().saturating_sub(n);
        entries.drain(..drop);
    }
    entries
}

/// Renders entries; `color` adds ANSI colours to the table status column.
pub fn render(entries: &[ActivityEntry], format: StatusFormat, color: bool) -> String {
    match format {
        StatusFormat::Table => render_table(entries, color),
        StatusFormat::Json => {
            let mut s = crate::inert::json(&export_json(entries)).into_owned();
            s.push('\n');
            s
        }
        StatusFormat::Markdown => render_markdown(entries),
    }
}

const HEADERS: [&str; 8] = [
    "Id",
    "Timestamp",
    "Task",
    "Kind",
    "Status",
    "Outcome",
    "Duration",
    "Attempt",
];
/// The column of the status, coloured in the table.
const STATUS_COLUMN: usize = 4;

fn cells(e: &ActivityEntry) -> [String; 8] {
    [
        e.id(),
        e.timestamp.format("%Y-%m-%d %H:%M:%S").to_string(),
        one_line(&e.task_id),
        e.kind.as_str().to_string(),
        status_text(e, e.status.as_str()),
        e.outcome.as_deref().map(one_line).unwrap_or_else(|| "-".into()),
        format_duration_ms(e.duration_ms),
        e.attempt.to_string(),
    ]
}

/// The status, and `(false positive)` when a correction set it.
fn status_text(e: &ActivityEntry, status: &str) -> String {
    match (&e.correction, e.kind) {
        (Some(_), k) if k != EntryKind::Correction => format!("{status} (false positive)"),
        _ => status.to_string(),
    }
}

/// Made inert ([`crate::inert`]) on one line: the log may hold anything an agent wrote.
fn one_line(s: &str) -> String {
    crate::inert::line(s).into_owned()
}

fn render_table(entries: &[ActivityEntry], color: bool) -> String {
    if entries.is_empty() {
        return "No activity entries match.\n".into();
    }
    let rows: Vec<[String; 8]> = entries.iter().map(cells).collect();
    let mut widths = HEADERS.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [String; 8], status: Option<EntryStatus>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let last = i == cells.len() - 1;
            let pad = if last { 0 } else { widths[i] - cell.chars().count() };
            match status.filter(|_| color && i == STATUS_COLUMN) {
                Some(st) => s.push_str(&format!("{}{cell}\x1b[0m", ansi(st))),
                None => s.push_str(cell),
            }
            if !last {
                s.push_str(&" ".repeat(pad + 2));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(HEADERS.map(String::from), None);
    out.push_str(&line(widths.map(|w| "-".repeat(w)), None));
    for (row, e) in rows.into_iter().zip(entries) {
        out.push_str(&line(row, Some(e.status)));
    }
    out
}

fn ansi(status: EntryStatus) -> &'static str {
    match status {
        EntryStatus::Passed => "\x1b[32m",
        EntryStatus::Failed => "\x1b[31m",
        EntryStatus::Error => "\x1b[33m",
        EntryStatus::Pending => "\x1b[36m",
        EntryStatus::Skipped => "\x1b[2m",
    }
}

fn render_markdown(entries: &[ActivityEntry]) -> String {
    let mut out = format!("| {} |\n|{}\n", HEADERS.join(" | "), " --- |".repeat(HEADERS.len()));
    for e in entries {
        let mut c = cells(e);
        c[1] = e.timestamp.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let status = match e.status {
            EntryStatus::Passed => "✅ passed",
            EntryStatus::Failed => "❌ failed",
            EntryStatus::Error => "⚠️ error",
            EntryStatus::Pending => "⏳ pending",
            EntryStatus::Skipped => "⏭️ skipped",
        };
        c[STATUS_COLUMN] = status_text(e, status);
        let escaped: Vec<String> = c.iter().map(|s| s.replace('|', "\\|")).collect();
        out.push_str(&format!("| {} |\n", escaped.join(" | ")));
    }
    out
}

/// `850ms`, `1.5s`, `2m 05s`, `1h 02m`.
pub fn format_duration_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else if ms < 3_600_000 {
        format!("{}m {:02}s", ms / 60_000, (ms / 1000) % 60)
    } else {
        format!("{}h {:02}m", ms / 3_600_000, (ms / 60_000) % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-01-20T12:00:00Z".parse().unwrap()
    }

    #[test]
    fn since_accepts_times_dates_and_ages() {
        assert_eq!(
            parse_since("2026-01-19T15:30:00+01:00", now()).unwrap().to_rfc3339(),
            "2026-01-19T14:30:00+00:00"
        );
        assert_eq!(
            parse_since("2026-01-19", now()).unwrap().to_rfc3339(),
            "2026-01-19T00:00:00+00:00"
        );
        assert_eq!(
            parse_since("2026-01-19T10:00:00", now()).unwrap().to_rfc3339(),
            "2026-01-19T10:00:00+00:00"
        );
        assert_eq!(
            parse_since("30m", now()).unwrap().to_rfc3339(),
            "2026-01-20T11:30:00+00:00"
        );
        assert_eq!(
            parse_since(" 2h ", now()).unwrap().to_rfc3339(),
            "2026-01-20T10:00:00+00:00"
        );
        assert_eq!(
            parse_since("7d", now()).unwrap().to_rfc3339(),
            "2026-01-13T12:00:00+00:00"
        );
        assert_eq!(
            parse_since("1w", now()).unwrap().to_rfc3339(),
            "2026-01-13T12:00:00+00:00"
        );
        assert_eq!(
            parse_since("45s", now()).unwrap().to_rfc3339(),
            "2026-01-20T11:59:15+00:00"
        );
        for bad in [
            "",
            "yesterday",
            "2h30",
            "10y",
            "m",
            "2026-13-01",
            "99999999999999999999d",
            "-2h",
        ] {
            let err = parse_since(bad, now()).unwrap_err();
            assert!(err.contains("--since"), "{bad}: {err}");
        }
    }

    #[test]
    fn durations_read_well() {
        assert_eq!(format_duration_ms(0), "0ms");
        assert_eq!(format_duration_ms(850), "850ms");
        assert_eq!(format_duration_ms(1500), "1.5s");
        assert_eq!(format_duration_ms(125_000), "2m 05s");
        assert_eq!(format_duration_ms(3_720_000), "1h 02m");
    }
}
