//! `medin status` and `medin log correct` over generated activity logs: filters, colours,
//! the false-positive rate and its alert, retroactive corrections. The filters are checked
//! against a model written here, not against `StatusFilter::matches`.

use std::path::Path;

use chrono::{DateTime, Duration, Utc};
use medin::internal::log::activity::format_entry;
use medin::internal::log::correct::{correct_false_positive, false_positive_rate, CorrectError};
use medin::internal::log::query::query;
use medin::internal::log::status::{render, CategoryFilter, StatusFilter, StatusFormat};
use medin::internal::log::{ActivityEntry, ActivityLog, EntryKind, EntryStatus};
use proptest::prelude::*;

use super::log::{entry, status};
use crate::support;

const TASKS: &[&str] = &[
    "golden::gt-001-read",
    "golden::GT-010-process",
    "adversarial::at-001-rm",
    "regression::r-7",
];
const CATEGORIES: &[&str] = &["golden", "adversarial", "Regression"];

/// A few instants close together, so that filters fall on entries' times and ties happen.
fn instant(i: u8) -> DateTime<Utc> {
    "2026-01-19T15:30:00Z".parse::<DateTime<Utc>>().expect("a time") + Duration::minutes(i64::from(i % 6))
}

/// Entries a `status` query can tell apart: known task ids, categories and times, no
/// corrections (those are property 31's).
fn plain_entry() -> impl Strategy<Value = ActivityEntry> {
    (
        entry(),
        prop::sample::select(TASKS),
        prop::sample::select(CATEGORIES),
        any::<u8>(),
        prop::sample::select(vec![
            EntryKind::Task,
            EntryKind::Error,
            EntryKind::Validation,
            EntryKind::SelfHealing,
        ]),
    )
        .prop_map(|(mut e, task, category, at, kind)| {
            e.task_id = task.into();
            e.category = category.into();
            e.timestamp = instant(at);
            e.kind = kind;
            e.correction = None;
            e
        })
}

#[derive(Debug, Clone)]
struct Filter {
    task: Option<&'static str>,
    failed: bool,
    category: Option<&'static str>,
    status: Option<EntryStatus>,
    since: Option<u8>,
    until: Option<u8>,
    limit: Option<usize>,
}

fn filter() -> impl Strategy<Value = Filter> {
    (
        prop::option::of(prop::sample::select(vec![
            "gt-0",
            "GOLDEN::",
            "rm",
            "-",
            "nothing-like-it",
        ])),
        any::<bool>(),
        prop::option::of(prop::sample::select(vec![
            "golden",
            "ADVERSARIAL",
            "regression",
            "task",
            "error",
            "validation",
            "self-healing",
            "nightly",
        ])),
        prop::option::of(status()),
        prop::option::of(any::<u8>()),
        prop::option::of(any::<u8>()),
        prop::option::of(0usize..6),
    )
        .prop_map(|(task, failed, category, status, since, until, limit)| Filter {
            task,
            failed,
            category,
            status,
            since,
            until,
            limit,
        })
}

impl Filter {
    fn status_filter(&self) -> StatusFilter {
        StatusFilter {
            task: self.task.map(String::from),
            failed: self.failed,
            category: self.category.map(CategoryFilter::parse),
            status: self.status,
            since: self.since.map(instant),
            until: self.until.map(instant),
            limit: self.limit,
        }
    }

    /// The model: every criterion given holds, oldest first (file order among equal times),
    /// the newest `limit`.
    fn expected(&self, entries: &[ActivityEntry]) -> Vec<ActivityEntry> {
        let kinds = ["task", "error", "validation", "self-healing", "correction"];
        let mut out: Vec<ActivityEntry> = entries
            .iter()
            .filter(|e| {
                self.task
                    .is_none_or(|t| e.task_id.to_lowercase().contains(&t.to_lowercase()))
                    && (!self.failed || e.status == EntryStatus::Failed || e.status == EntryStatus::Error)
                    && self.category.is_none_or(|c| {
                        if kinds.contains(&c) {
                            e.kind.as_str() == c
                        } else {
                            e.category.to_lowercase() == c.to_lowercase()
                        }
                    })
                    && self.status.is_none_or(|s| e.status == s)
                    && self.since.is_none_or(|s| e.timestamp >= instant(s))
                    && self.until.is_none_or(|u| e.timestamp <= instant(u))
            })
            .cloned()
            .collect();
        out.sort_by_key(|e| e.timestamp);
        if let Some(n) = self.limit {
            out.drain(..out.len().saturating_sub(n));
        }
        out
    }

    fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut flag = |name: &str, value: Option<String>| {
            if let Some(v) = value {
                args.push(format!("--{name}"));
                args.push(v);
            }
        };
        flag("task", self.task.map(String::from));
        flag("category", self.category.map(String::from));
        flag("status", self.status.map(|s| s.as_str().to_string()));
        flag("since", self.since.map(|i| instant(i).to_rfc3339()));
        flag("until", self.until.map(|i| instant(i).to_rfc3339()));
        flag("limit", self.limit.map(|n| n.to_string()));
        if self.failed {
            args.push("--failed".into());
        }
        args
    }
}

/// Writes `entries` as an activity log at `path` (one write: the properties make many logs).
fn write_log(path: &Path, entries: &[ActivityEntry]) -> ActivityLog {
    let text: String = entries.iter().map(|e| format_entry(e).expect("formats")).collect();
    std::fs::write(path, text).expect("write the log");
    ActivityLog::new(path)
}

/// Distinct ids: every entry its own run.
fn distinct(mut entries: Vec<ActivityEntry>) -> Vec<ActivityEntry> {
    for (i, e) in entries.iter_mut().enumerate() {
        e.run_id = format!("run-{i}");
    }
    entries
}

proptest! {
    #![proptest_config(crate::cases(128))]

    /// **Property 27: CLI Filter Correctness.** *For any* CLI status query with filters (task
    /// ID, status, date range), the returned entries must match all specified filter criteria.
    ///
    /// Over generated logs and every combination of `medin status`'s filters (task substring,
    /// `--failed`, `--category` as an entry kind or a suite category, `--status`, `--since`,
    /// `--until`, `--limit`), the query returns exactly the entries the model here selects —
    /// none that fail a criterion, none that meet them all left out — oldest first, the newest
    /// `limit`. 128 cases through the library's query (reading the file, from its end when
    /// limited).
    #[test]
    fn p27_cli_filter_correctness(entries in prop::collection::vec(plain_entry(), 0..12), f in filter()) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let log = write_log(&dir.path().join("ACTIVITY_LOG.md"), &entries);
        let (shown, warnings) = query(&log, &f.status_filter()).expect("the log reads");
        prop_assert!(warnings.is_empty(), "{:?}", warnings);
        prop_assert_eq!(shown, f.expected(&entries));
    }

    /// **Property 28: CLI Color Coding.** *For any* CLI status output, success entries must be
    /// green, failure entries must be red, and warning entries must be yellow.
    ///
    /// medin's statuses: `passed` green, `failed` red, `error` (the harness could not judge:
    /// reference 000's warning) yellow, `pending` cyan, `skipped` dim. Any generated entries
    /// (hostile text included) render as a table whose every row has exactly one colour, its
    /// status's, around the status cell and nothing else; without colour (not a terminal, or
    /// `NO_COLOR`: decided in `medin status`) there is no escape sequence at all. 128 cases.
    #[test]
    fn p28_cli_color_coding(entries in prop::collection::vec(entry(), 1..6)) {
        let table = render(&entries, StatusFormat::Table, true);
        let rows: Vec<&str> = table.lines().skip(2).collect();
        prop_assert_eq!(rows.len(), entries.len());
        for (row, e) in rows.iter().zip(&entries) {
            let colour = match e.status {
                EntryStatus::Passed => "\x1b[32m",
                EntryStatus::Failed => "\x1b[31m",
                EntryStatus::Error => "\x1b[33m",
                EntryStatus::Pending => "\x1b[36m",
                EntryStatus::Skipped => "\x1b[2m",
            };
            prop_assert_eq!(row.matches('\x1b').count(), 2, "one colour and its reset: {:?}", row);
            let at = row.find(colour).expect("the status's colour");
            let cell = &row[at + colour.len()..];
            prop_assert!(cell.starts_with(e.status.as_str()), "{:?}", row);
            prop_assert!(cell.contains("\x1b[0m"), "{:?}", row);
        }
        prop_assert!(!render(&entries, StatusFormat::Table, false).contains('\x1b'));
    }

    /// **Property 31: Retroactive False Positive Correction.** *For any* retroactively
    /// detected false positive, the task status must be updated and logged to ACTIVITY_LOG.md.
    ///
    /// medin's log is append-only: `medin log correct ID --false-positive --reason ..` appends
    /// a `correction` entry. Over generated logs and any passed entry, the old log is a prefix
    /// of the new one, the corrected entry reads back `failed` with the correction and its
    /// reason, every other entry reads back as before, and the entry cannot be corrected again;
    /// a blank reason or an entry that did not pass is refused. 128 cases.
    #[test]
    fn p31_retroactive_false_positive_correction(
        entries in prop::collection::vec(plain_entry(), 1..8),
        pick in any::<prop::sample::Index>(),
        reason in "[a-zA-Z][a-zA-Z .]{0,30}",
    ) {
        let entries = distinct(entries);
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ACTIVITY_LOG.md");
        let log = write_log(&path, &entries);
        let before = std::fs::read(&path).expect("read");
        let target = &entries[pick.index(entries.len())];
        let id = target.id();
        prop_assert!(matches!(correct_false_positive(&log, &id, "  "), Err(CorrectError::NoReason)));
        let result = correct_false_positive(&log, &id, &reason);
        if target.status != EntryStatus::Passed {
            prop_assert!(matches!(result, Err(CorrectError::NotPassed { .. })), "{:?}", result);
            prop_assert_eq!(std::fs::read(&path).expect("read"), before);
            return Ok(());
        }
        let correction = result.expect("a passed entry is corrected");
        prop_assert_eq!(correction.kind, EntryKind::Correction);
        let after = std::fs::read(&path).expect("read");
        prop_assert!(after.starts_with(&before), "append-only");
        let (shown, _) = query(&log, &StatusFilter::default()).expect("reads");
        let mut expected = entries.clone();
        expected.sort_by_key(|e| e.timestamp);
        prop_assert_eq!(shown.len(), expected.len());
        for (got, was) in shown.iter().zip(&expected) {
            if got.id() == id {
                prop_assert_eq!(got.status, EntryStatus::Failed);
                let c = got.correction.as_ref().expect("the correction is on the entry");
                prop_assert_eq!(c.reason.as_str(), reason.trim());
            } else {
                prop_assert_eq!(got, was);
            }
        }
        prop_assert!(matches!(correct_false_positive(&log, &id, &reason), Err(CorrectError::AlreadyCorrected(_))));
    }

    /// **Property 30: False Positive Rate Monitoring.** *For any* execution period, if false
    /// positive rate exceeds 0.1%, an alert must be triggered.
    ///
    /// medin: the rate is corrected false positives among the task entries that said passed
    /// (`false_positive_rate`); `medin status` prints an alert above 0.1% of the entries shown
    /// (the execution period is the `--since`/`--until` window), and a run's
    /// `max_false_positive_rate` threshold warns at 0.1% by default. Over generated counts of
    /// passed entries (up to 3,000) and corrections, the rate is exactly the count's, and it is
    /// above the alert level exactly when more than one in a thousand was false. 128 cases in
    /// memory; `p30_the_status_alert_follows_the_rate` runs the binary.
    #[test]
    fn p30_false_positive_rate_monitoring(passed in 0usize..3000, false_positives in 0usize..6, others in 0usize..4) {
        let false_positives = false_positives.min(passed);
        let template = ActivityEntry {
            kind: EntryKind::Task,
            status: EntryStatus::Passed,
            correction: None,
            ..plain_sample()
        };
        let mut entries = vec![template.clone(); passed];
        for e in entries.iter_mut().take(false_positives) {
            e.status = EntryStatus::Failed;
            e.correction = Some(medin::internal::log::Correction {
                entry: "x".into(),
                finding: medin::internal::log::Finding::FalsePositive,
                reason: "wrong".into(),
            });
        }
        entries.extend((0..others).map(|_| ActivityEntry { status: EntryStatus::Failed, ..template.clone() }));
        let rate = false_positive_rate(&entries);
        if passed == 0 {
            prop_assert!(rate.is_none());
            return Ok(());
        }
        let rate = rate.expect("a rate");
        prop_assert_eq!((rate.false_positives, rate.passed), (false_positives as u64, passed as u64));
        let alert = rate.rate() > medin::internal::log::correct::DEFAULT_FALSE_POSITIVE_ALERT;
        prop_assert_eq!(alert, false_positives * 1000 > passed);
    }
}

/// One plain entry to copy.
fn plain_sample() -> ActivityEntry {
    ActivityEntry {
        timestamp: instant(0),
        task_id: "golden::t".into(),
        category: "golden".into(),
        kind: EntryKind::Task,
        status: EntryStatus::Passed,
        outcome: Some("success".into()),
        duration_ms: 1,
        attempt: 1,
        run_id: "r".into(),
        run_dir: "d".into(),
        agent: "oracle".into(),
        description: String::new(),
        correction: None,
        validations: Vec::new(),
        failures: Vec::new(),
    }
}

proptest! {
    #![proptest_config(crate::cases(8))]

    /// Property 27 through the `medin status` binary: its flags reach the filters. Over
    /// generated logs and filters, `medin status --log PATH --format json FLAGS` prints
    /// exactly the entries the model selects. 8 cases: each runs the binary.
    #[test]
    fn p27_the_status_command_filters_the_same(entries in prop::collection::vec(plain_entry(), 0..10), f in filter()) {
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ACTIVITY_LOG.md");
        write_log(&path, &entries);
        let mut args = vec!["status".to_string(), "--format".into(), "json".into(), "--log".into()];
        args.push(path.display().to_string());
        args.extend(f.args());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = support::medin(&args, dir.path());
        prop_assert!(out.status.success(), "{}", support::text(&out));
        let shown: Vec<ActivityEntry> = serde_json::from_slice(&out.stdout).expect("JSON entries");
        prop_assert_eq!(shown, f.expected(&entries));
    }

    /// Property 30 through the binary: `medin status` alerts exactly when the corrected false
    /// positives among the passed entries it shows are above 0.1%. Over generated logs of up
    /// to 1,500 passed entries and 0–2 corrections. 8 cases: each writes a log and runs the
    /// binary twice.
    #[test]
    fn p30_the_status_alert_follows_the_rate(passed in 1usize..1500, corrected in 0usize..3) {
        let corrected = corrected.min(passed);
        let entries: Vec<ActivityEntry> = distinct(vec![plain_sample(); passed]);
        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ACTIVITY_LOG.md");
        let log = write_log(&path, &entries);
        for e in entries.iter().take(corrected) {
            correct_false_positive(&log, &e.id(), "the feature did not work").expect("corrected");
        }
        let args = ["status", "--format", "json", "--log", path.to_str().expect("a UTF-8 path")];
        let out = support::medin(&args, dir.path());
        prop_assert!(out.status.success(), "{}", support::text(&out));
        let alerted = String::from_utf8_lossy(&out.stderr).contains("alert:");
        prop_assert_eq!(alerted, corrected * 1000 > passed, "{}", String::from_utf8_lossy(&out.stderr));
    }
}
