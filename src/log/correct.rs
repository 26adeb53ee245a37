//! `medin log correct`: a retroactive correction of an entry already in the activity log.
//!
//! The log is append-only, so a correction never edits the entry it corrects: it appends an
//! entry of kind `correction` naming the corrected entry by its [`ActivityEntry::id`], what was
//! found and why. Whoever reads the log ([`super::query`]) applies it: the corrected entry
//! shows the corrected status and carries the correction.

use super::activity::{ActivityEntry, ActivityLog, Correction, EntryKind, EntryStatus, Finding};
use super::query;
use super::status::StatusFilter;

/// Why a correction was not recorded.
#[derive(Debug, thiserror::Error)]
pub enum CorrectError {
    #[error("no activity entry has the id `{0}`; `medin status` shows each entry's id in its first column")]
    NotFound(String),
    #[error("`{id}` names {count} entries; give more of the id (`medin status` shows it in full)")]
    Ambiguous { id: String, count: usize },
    #[error("entry `{id}` is {status}, not passed: only a passed entry can be a false positive")]
    NotPassed { id: String, status: &'static str },
    #[error("entry `{0}` is already corrected as a false positive")]
    AlreadyCorrected(String),
    #[error("a correction needs a reason: say what showed the entry was wrong (--reason TEXT)")]
    NoReason,
    #[error("the activity log {path}: {source}")]
    Log { path: String, source: std::io::Error },
}

impl CorrectError {
    /// Whether the request itself was at fault (an id or reason to fix), not the log's file.
    pub fn is_usage(&self) -> bool {
        !matches!(self, CorrectError::Log { .. })
    }
}

/// Records that the entry `id` (its full id or a unique prefix of at least 4 digits) was a
/// false positive, and returns the correction entry appended. The entry may be in the live log
/// or in an archive; the correction goes to the live log.
pub fn correct_false_positive(log: &ActivityLog, id: &str, reason: &str) -> Result<ActivityEntry, CorrectError> {
    let io_error = |source| CorrectError::Log {
        path: log.path().display().to_string(),
        source,
    };
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(CorrectError::NoReason);
    }
    let id = id.trim().to_ascii_lowercase();
    // Every entry but corrections, with the corrections applied.
    let (entries, _) = query::query(log, &StatusFilter::default()).map_err(io_error)?;
    let wanted: Vec<&ActivityEntry> = if id.len() >= 4 {
        entries.iter().filter(|e| e.id().starts_with(&id)).collect()
    } else {
        Vec::new()
    };
    let target = match wanted.as_slice() {
        [] => return Err(CorrectError::NotFound(id)),
        [one] => *one,
        many => return Err(CorrectError::Ambiguous { id, count: many.len() }),
    };
    let full_id = target.id();
    if target.correction.is_some() {
        return Err(CorrectError::AlreadyCorrected(full_id));
    }
    if target.status != EntryStatus::Passed {
        return Err(CorrectError::NotPassed {
            id: full_id,
            status: target.status.as_str(),
        });
    }
    let correction = ActivityEntry {
        timestamp: chrono::Utc::now(),
        task_id: target.task_id.clone(),
        category: target.category.clone(),
        kind: EntryKind::Correction,
        status: EntryStatus::Failed,
        outcome: target.outcome.clone(),
        duration_ms: 0,
        attempt: target.attempt,
        run_id: target.run_id.clone(),
        run_dir: target.run_dir.clone(),
        agent: target.agent.clone(),
        description: format!("False positive: entry {full_id} said passed. {reason}"),
        validations: Vec::new(),
        failures: vec![format!("false positive: {reason}")],
        correction: Some(Correction {
            entry: full_id,
            finding: Finding::FalsePositive,
            reason: reason.to_string(),
        }),
    };
    log.append(&correction).map_err(io_error)?;
    Ok(correction)
}

/// The false-positive rate of `entries` as [`query::query`] returns them (corrections
/// applied): corrected false positives among the task entries that said passed. `None` when
/// no task entry said passed.
pub fn false_positive_rate(entries: &[ActivityEntry]) -> Option<FalsePositiveRate> {
    false_positive_rate_of(entries.iter())
}

/// [`false_positive_rate`] of the whole log and its archives, and of each category's entries:
/// what a run's metrics show. `None` when the log cannot be read or no task entry said passed.
pub fn false_positive_rates(
    log: &ActivityLog,
) -> Option<(FalsePositiveRate, std::collections::BTreeMap<String, FalsePositiveRate>)> {
    let (entries, _) = query::query(log, &StatusFilter::default()).ok()?;
    let overall = false_positive_rate(&entries)?;
    let mut categories: Vec<&str> = entries.iter().map(|e| e.category.as_str()).collect();
    categories.sort_unstable();
    categories.dedup();
    let by_category = categories
        .into_iter()
        .filter_map(|c| {
            let rate = false_positive_rate_of(entries.iter().filter(|e| e.category == c))?;
            Some((c.to_string(), rate))
        })
        .collect();
    Some((overall, by_category))
}

fn false_positive_rate_of<'a>(entries: impl Iterator<Item = &'a ActivityEntry>) -> Option<FalsePositiveRate> {
    let tasks = entries.filter(|e| e.kind == EntryKind::Task);
    let (mut judged, mut false_positives) = (0u64, 0u64);
    for e in tasks {
        if e.correction.is_some() {
            false_positives += 1;
            judged += 1;
        } else if e.status == EntryStatus::Passed {
            judged += 1;
        }
    }
    (judged > 0).then_some(FalsePositiveRate {
        false_positives,
        passed: judged,
    })
}

/// False positives found among the entries that said passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct FalsePositiveRate {
    /// Entries corrected as false positives (`medin log correct ID --false-positive`).
    pub false_positives: u64,
    /// Entries that said passed (corrected ones included).
    pub passed: u64,
}

impl FalsePositiveRate {
    pub fn rate(&self) -> f64 {
        self.false_positives as f64 / self.passed as f64
    }
}

/// The default alert threshold: 0.1% (reference 000, property 30).
pub const DEFAULT_FALSE_POSITIVE_ALERT: f64 = 0.001;
