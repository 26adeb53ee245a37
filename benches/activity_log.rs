//! Cost of `medin status --limit 10` on a big `ACTIVITY_LOG.md`: reading from the end
//! ([`query`] with a limit, which parses only the last window of the file) against parsing the
//! whole log and filtering afterwards (what `status` did before), on 10,000 and 100,000 entries
//! of the size the activity-log reporter writes (two validations, a failure on odd entries).
//!
//! Measured on the 2-core development machine (other builds running), criterion medians:
//! 10,000 entries: from the end 1.2 ms, whole parse 129 ms; 100,000 entries: from the end
//! 1.1 ms, whole parse 1.53 s (from the end includes listing the archives and applying
//! corrections). The whole `medin status --limit 10` process (release build,
//! start to exit) takes about 4 ms on either log.
//!
//! Run: `cargo bench --bench activity_log`.

use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, Utc};
use criterion::{criterion_group, criterion_main, Criterion};
use medin::internal::log::activity::format_entry;
use medin::internal::log::query::query;
use medin::internal::log::status::{filter_entries, StatusFilter};
use medin::internal::log::{ActivityEntry, ActivityLog, EntryKind, EntryStatus};
use medin::internal::validate::{ValidationResult, ValidationStatus};

fn validation(check: &str, passed: bool) -> ValidationResult {
    ValidationResult {
        check: check.into(),
        status: if passed {
            ValidationStatus::Passed
        } else {
            ValidationStatus::Failed
        },
        passed,
        evidence: "hello.txt exists (file, 6 bytes)".into(),
        confidence: 100,
        duration_ms: 3,
        timestamp: "2026-01-19T15:30:00.000Z".into(),
        error: None,
        expected: None,
        actual: None,
        output_tail: None,
        warnings: Vec::new(),
    }
}

fn entry(i: u32, base: DateTime<Utc>) -> ActivityEntry {
    ActivityEntry {
        timestamp: base + chrono::Duration::seconds(i64::from(i)),
        task_id: format!("golden::gt-{:03}-create-file", i % 90),
        category: "golden".into(),
        kind: EntryKind::Task,
        status: if i.is_multiple_of(2) {
            EntryStatus::Passed
        } else {
            EntryStatus::Failed
        },
        outcome: Some("success".into()),
        duration_ms: 412,
        attempt: 1,
        run_id: "20260119T153000000Z-4242".into(),
        run_dir: format!(
            "target/medin/runs/20260119T153000000Z-4242/golden/gt-{:03}/attempt-1",
            i % 90
        ),
        agent: "oracle".into(),
        description: "Create a file with content; a receipt is returned".into(),
        validations: vec![
            validation("file_exists hello.txt", true),
            validation("command grep -qx hello hello.txt", i.is_multiple_of(2)),
        ],
        failures: if i % 2 == 1 {
            vec!["expected outcome success, got failure".into()]
        } else {
            vec![]
        },
        correction: None,
    }
}

fn log_of(dir: &std::path::Path, n: u32) -> ActivityLog {
    let base: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().expect("a time");
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format_entry(&entry(i, base)).expect("an entry"));
    }
    let path = dir.join(format!("ACTIVITY_LOG-{n}.md"));
    std::fs::write(&path, text).expect("written");
    ActivityLog::new(path)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let limited = StatusFilter {
        limit: Some(10),
        ..StatusFilter::default()
    };
    for n in [10_000u32, 100_000] {
        let log = log_of(dir.path(), n);
        let mut group = c.benchmark_group(format!("status_limit_10/{n}_entries"));
        group.sample_size(10).measurement_time(Duration::from_secs(5));
        group.bench_function("from_the_end", |b| {
            b.iter(|| black_box(query(&log, &limited).expect("read")))
        });
        group.bench_function("whole_parse", |b| {
            b.iter(|| {
                let (all, _) = log.read().expect("read");
                black_box(filter_entries(all, &limited))
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
