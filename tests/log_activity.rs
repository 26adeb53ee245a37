//! ACTIVITY_LOG.md on real files: format, round trip, torn entries, concurrent appends, archive.

use std::sync::Arc;
use std::thread;

use chrono::{DateTime, Duration, Utc};
use medin::internal::log::activity::{format_entry, END_MARKER};
use medin::internal::log::{export_json, parse_log, ActivityEntry, ActivityLog, EntryKind, EntryStatus};
use medin::internal::validate::{ValidationResult, ValidationStatus};

fn validation(check: &str, status: ValidationStatus, evidence: &str) -> ValidationResult {
    ValidationResult {
        check: check.into(),
        status,
        passed: status == ValidationStatus::Passed,
        evidence: evidence.into(),
        confidence: 100,
        duration_ms: 3,
        timestamp: "2026-01-19T15:30:00.000Z".into(),
        error: (status != ValidationStatus::Passed).then(|| "it did not hold".into()),
        expected: (status == ValidationStatus::Failed).then(|| "x".into()),
        actual: (status == ValidationStatus::Failed).then(|| "y\n---\n<!-- medin:end -->".into()),
        output_tail: None,
        warnings: Vec::new(),
    }
}

fn entry(i: u32, ts: &str) -> ActivityEntry {
    ActivityEntry {
        timestamp: ts.parse().unwrap(),
        task_id: format!("golden::gt-{i:03}"),
        category: "golden".into(),
        kind: EntryKind::Task,
        status: if i.is_multiple_of(2) {
            EntryStatus::Passed
        } else {
            EntryStatus::Failed
        },
        outcome: (!i.is_multiple_of(3)).then(|| "success".into()),
        duration_ms: 1000 + u64::from(i),
        attempt: 1 + i % 2,
        run_id: format!("run-{i}"),
        run_dir: format!("target/medin/runs/run-{i}/gt-{i:03}"),
        agent: "oracle".into(),
        description: format!("Task {i}: créer un fichier ✓\n---\n## fake heading\n<!-- medin:end -->"),
        validations: vec![
            validation(
                "file_exists hello.txt",
                ValidationStatus::Passed,
                "hello.txt exists (file, 6 bytes)",
            ),
            validation(
                "command grep -q `x` f",
                ValidationStatus::Failed,
                "exited 1\nstderr: nope",
            ),
            validation("http GET https://x/", ValidationStatus::Pending, "not requested"),
        ],
        failures: if i % 2 == 1 {
            vec![
                "expected outcome success, got failure".into(),
                "hello.txt differs:\n-hello\n+hullo\n---\n".into(),
            ]
        } else {
            vec![]
        },
        correction: None,
    }
}

#[test]
fn an_entry_has_front_matter_a_markdown_body_and_an_end_marker() {
    let dir = tempfile::tempdir().unwrap();
    let log = ActivityLog::new(dir.path().join("deep/er/ACTIVITY_LOG.md"));
    let e = entry(1, "2026-01-19T15:30:00Z");
    log.append(&e).unwrap();
    let text = std::fs::read_to_string(log.path()).unwrap();
    let expected_head = "---
timestamp: 2026-01-19T15:30:00Z
taskId: golden::gt-001
category: golden
kind: task
status: failed
outcome: success
duration_ms: 1001
attempt: 2
run_id: run-1
run_dir: target/medin/runs/run-1/gt-001
agent: oracle
---
## golden::gt-001

Task 1: créer un fichier ✓
\\---
\\## fake heading
\\<!-- medin:end -->

### Validation
- ✅ `file_exists hello.txt` — hello.txt exists (file, 6 bytes)
- ❌ `command grep -q 'x' f` — exited 1 stderr: nope
- ⏳ `http GET https://x/` — not requested

### Failures
- expected outcome success, got failure
- hello.txt differs:
  -hello
  +hullo
  ---

<!-- medin:data ";
    assert!(text.starts_with(expected_head), "{text}");
    assert!(text.ends_with("\n<!-- medin:end -->\n\n"), "{text}");
    assert_eq!(text.lines().filter(|l| *l == END_MARKER).count(), 1);

    let (entries, warnings) = log.read().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(entries, vec![e]);
}

#[test]
fn a_missing_log_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (entries, warnings) = ActivityLog::new(dir.path().join("nope.md")).read().unwrap();
    assert!(entries.is_empty() && warnings.is_empty());
}

#[test]
fn entries_come_back_in_order_and_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md"));
    let all: Vec<ActivityEntry> = (0..5).map(|i| entry(i, &format!("2026-01-1{i}T08:00:00Z"))).collect();
    for e in &all {
        log.append(e).unwrap();
    }
    let (entries, warnings) = log.read().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(entries, all);
    let json: Vec<ActivityEntry> = serde_json::from_str(&export_json(&entries)).unwrap();
    assert_eq!(json, all);
}

#[test]
fn a_torn_entry_is_skipped_with_its_line_and_the_next_append_starts_clean() {
    let dir = tempfile::tempdir().unwrap();
    let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md"));
    log.append(&entry(0, "2026-01-19T10:00:00Z")).unwrap();
    let first_len = std::fs::metadata(log.path()).unwrap().len();
    let first_lines = std::fs::read_to_string(log.path()).unwrap().lines().count();
    log.append(&entry(1, "2026-01-19T11:00:00Z")).unwrap();
    // The harness crashed while writing the second entry: keep only part of it, mid-line.
    let f = std::fs::OpenOptions::new().write(true).open(log.path()).unwrap();
    f.set_len(first_len + 150).unwrap();
    drop(f);

    let (entries, warnings) = log.read().unwrap();
    assert_eq!(entries, vec![entry(0, "2026-01-19T10:00:00Z")]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let torn_line = first_lines + 1;
    assert!(
        warnings[0].contains(&format!(":line {torn_line}:")),
        "{warnings:?} (expected line {torn_line})"
    );
    assert!(warnings[0].contains("torn"));

    log.append(&entry(2, "2026-01-19T12:00:00Z")).unwrap();
    let (entries, warnings) = log.read().unwrap();
    assert_eq!(
        entries,
        vec![entry(0, "2026-01-19T10:00:00Z"), entry(2, "2026-01-19T12:00:00Z")]
    );
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains(&format!(":line {torn_line}:")), "{warnings:?}");
}

#[test]
fn truncation_at_every_byte_never_panics_and_never_yields_a_partial_entry() {
    let all: Vec<ActivityEntry> = (0..3).map(|i| entry(i, &format!("2026-01-1{i}T08:00:00Z"))).collect();
    let text: String = all.iter().map(|e| format_entry(e).unwrap()).collect();
    let bytes = text.as_bytes();
    for cut in 0..=bytes.len() {
        let prefix = String::from_utf8_lossy(&bytes[..cut]);
        let complete = prefix.lines().filter(|l| *l == END_MARKER).count();
        let (entries, warnings) = parse_log(&prefix);
        assert_eq!(entries, all[..complete], "cut at byte {cut}");
        let tail = match prefix.rfind(&format!("\n{END_MARKER}")) {
            Some(i) => &prefix[i + 1 + END_MARKER.len()..],
            None => &prefix[..],
        };
        assert_eq!(
            warnings.len(),
            usize::from(!tail.trim().is_empty()),
            "cut at {cut}: {warnings:?}"
        );
    }
}

#[test]
fn a_torn_entry_followed_by_complete_ones_at_every_byte() {
    // A crash mid-entry, then later appends: the writer adds a newline when the tail is torn.
    let all: Vec<ActivityEntry> = (0..2).map(|i| entry(i, &format!("2026-01-1{i}T08:00:00Z"))).collect();
    let torn = format_entry(&entry(9, "2026-01-19T09:00:00Z")).unwrap();
    let rest: String = all.iter().map(|e| format_entry(e).unwrap()).collect();
    for cut in (0..torn.len()).filter(|&c| torn.is_char_boundary(c)) {
        let mut text = torn[..cut].to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&rest);
        let (entries, warnings) = parse_log(&text);
        let finished = torn[..cut].lines().any(|l| l == END_MARKER);
        let mut expected = if finished {
            vec![entry(9, "2026-01-19T09:00:00Z")]
        } else {
            vec![]
        };
        expected.extend(all.iter().cloned());
        assert_eq!(entries, expected, "torn at {cut}");
        let torn_text = !finished && !torn[..cut].trim().is_empty();
        assert_eq!(warnings.len(), usize::from(torn_text), "torn at {cut}: {warnings:?}");
    }
}

#[test]
fn garbage_never_panics() {
    let pieces = [
        "---\n",
        "<!-- medin:end -->\n",
        "<!-- medin:data {\"description\":1} -->\n",
        "timestamp: x\n",
        "taskId: t\n",
        "## h\n",
        "\u{0}\u{ffff}é",
        "\r\n",
        "---",
        "- ",
        "### Failures\n",
        "  x\n",
        "\n",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..2000 {
        let mut text = String::new();
        for _ in 0..(seed % 30) {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        let (entries, _) = parse_log(&text);
        assert!(entries.is_empty());
    }
}

#[test]
fn unparseable_front_matter_is_skipped_with_its_line() {
    let good = format_entry(&entry(0, "2026-01-19T08:00:00Z")).unwrap();
    let bad = good.replace("timestamp: 2026-01-19T08:00:00Z", "timestamp: [not a time");
    let text = format!("{good}{bad}{good}");
    let (entries, warnings) = parse_log(&text);
    assert_eq!(entries.len(), 2);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let bad_start = good.lines().count() + 1;
    assert!(
        warnings[0].starts_with(&format!("line {}:", bad_start + 1)),
        "{warnings:?}"
    );
    assert!(warnings[0].contains("front matter"));

    let broken_data = good.replace("<!-- medin:data {", "<!-- medin:data {{");
    let (entries, warnings) = parse_log(&broken_data);
    assert!(entries.is_empty());
    assert!(warnings[0].contains("medin:data"), "{warnings:?}");
}

#[test]
fn concurrent_appends_never_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let path = Arc::new(dir.path().join("ACTIVITY_LOG.md"));
    let handles: Vec<_> = (0..4)
        .map(|t| {
            let path = Arc::clone(&path);
            thread::spawn(move || {
                let log = ActivityLog::new(path.as_path());
                for i in 0..25 {
                    log.append(&entry(t * 100 + i, "2026-01-19T08:00:00Z")).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let (entries, warnings) = ActivityLog::new(path.as_path()).read().unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(entries.len(), 100);
    let mut ids: Vec<String> = entries.iter().map(|e| e.task_id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 100);
}

#[test]
fn old_entries_move_to_a_dated_archive() {
    let dir = tempfile::tempdir().unwrap();
    let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md"));
    let base: DateTime<Utc> = "2026-01-17T12:00:00Z".parse().unwrap();
    let all: Vec<ActivityEntry> = (0..4)
        .map(|i| entry(i, &(base + Duration::days(i64::from(i))).to_rfc3339()))
        .collect();
    for e in &all {
        log.append(e).unwrap();
    }
    let before: DateTime<Utc> = "2026-01-19T00:00:00Z".parse().unwrap();
    assert_eq!(log.archive_before(before).unwrap(), 2);

    let archive = ActivityLog::new(dir.path().join("ACTIVITY_LOG.2026-01-19.md"));
    assert_eq!(log.archive_path(before), archive.path());
    let (archived, w1) = archive.read().unwrap();
    let (kept, w2) = log.read().unwrap();
    assert!(w1.is_empty() && w2.is_empty(), "{w1:?} {w2:?}");
    assert_eq!(archived, all[..2]);
    assert_eq!(kept, all[2..]);

    assert_eq!(log.archive_before(before).unwrap(), 0);
    log.append(&entry(7, "2026-01-10T00:00:00Z")).unwrap();
    assert_eq!(log.archive_before(before).unwrap(), 1);
    let (archived, _) = archive.read().unwrap();
    assert_eq!(archived.len(), 3);
    let (kept, _) = log.read().unwrap();
    assert_eq!(kept, all[2..]);

    assert_eq!(
        ActivityLog::new(dir.path().join("missing.md"))
            .archive_before(before)
            .unwrap(),
        0
    );
}

/// A log of `n` entries (one per minute from `base`), written in one go, with a torn tail.
fn big_log(dir: &std::path::Path, n: u32) -> ActivityLog {
    let base: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let mut text = String::new();
    for i in 0..n {
        let ts = (base + Duration::minutes(i64::from(i))).to_rfc3339();
        text.push_str(&format_entry(&entry(i, &ts)).unwrap());
    }
    text.push_str("---\ntimestamp: 2026-02-01T00:00:00Z\ntaskId: torn");
    let path = dir.join("ACTIVITY_LOG.md");
    std::fs::write(&path, text).unwrap();
    ActivityLog::new(path)
}

#[test]
fn reading_from_the_end_gives_what_a_whole_parse_gives() {
    use medin::internal::log::query::query;
    use medin::internal::log::status::{filter_entries, StatusFilter};
    let dir = tempfile::tempdir().unwrap();
    let log = big_log(dir.path(), 1500);
    let (all, _) = log.read().unwrap();
    assert_eq!(all.len(), 1500);
    let filters = [
        StatusFilter::default(),
        StatusFilter {
            failed: true,
            ..StatusFilter::default()
        },
        StatusFilter {
            task: Some("GT-01".into()),
            ..StatusFilter::default()
        },
        StatusFilter {
            task: Some("no such task".into()),
            ..StatusFilter::default()
        },
    ];
    for base in filters {
        for limit in [0, 1, 10, 37, 700, 5000] {
            let filter = StatusFilter {
                limit: Some(limit),
                ..base.clone()
            };
            let (tail, warnings) = query(&log, &filter).unwrap();
            assert_eq!(tail, filter_entries(all.clone(), &filter), "{filter:?}");
            assert_eq!(warnings.len(), 1, "the torn tail is reported: {warnings:?}");
            assert!(warnings[0].contains("torn entry"), "{warnings:?}");
        }
    }
}

#[test]
fn reading_from_the_end_reads_only_the_end() {
    use medin::internal::log::tail::read_from_end;
    let dir = tempfile::tempdir().unwrap();
    let log = big_log(dir.path(), 1500);
    let read = read_from_end(log.path(), 10, &|w| w.len()).unwrap();
    assert!(!read.complete);
    assert!(
        read.entries.len() >= 10 && read.entries.len() < 200,
        "{}",
        read.entries.len()
    );
    assert_eq!(read.entries.last().unwrap().task_id, "golden::gt-1499");
    // No entry matches: the whole file is read, and says so.
    let read = read_from_end(log.path(), 1, &|_| 0).unwrap();
    assert!(read.complete);
    assert_eq!(read.entries.len(), 1500);
    let missing = read_from_end(&dir.path().join("none.md"), 10, &|w| w.len()).unwrap();
    assert!(missing.complete && missing.entries.is_empty());
}

#[test]
fn a_log_pushed_past_its_size_archives_itself_and_status_reads_across_archives() {
    use medin::internal::log::query::query;
    use medin::internal::log::status::StatusFilter;
    let dir = tempfile::tempdir().unwrap();
    let one = format_entry(&entry(0, "2026-01-01T00:00:00Z")).unwrap().len() as u64;
    let max = one * 5 + one / 2;
    let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md")).with_max_size(max);
    let base: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let all: Vec<ActivityEntry> = (0..23)
        .map(|i| entry(i, &(base + Duration::minutes(i64::from(i))).to_rfc3339()))
        .collect();
    for e in &all {
        log.append(e).unwrap();
        let size = std::fs::metadata(log.path()).unwrap().len();
        assert!(size <= max + 256, "the live log stays near its size: {size} > {max}");
    }
    let archives = log.archives();
    assert_eq!(archives.len(), 4, "{archives:?}");
    for a in &archives {
        let (kept, w) = ActivityLog::new(a).read().unwrap();
        assert!(w.is_empty(), "{w:?}");
        assert!(!kept.is_empty() && kept.len() <= 5, "{a:?}: {}", kept.len());
    }

    let (every, w) = query(&log, &StatusFilter::default()).unwrap();
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(every, all, "no entry is lost or duplicated by archiving");
    for limit in [3, 10, 22, 23, 40] {
        let filter = StatusFilter {
            limit: Some(limit),
            ..StatusFilter::default()
        };
        let (newest, _) = query(&log, &filter).unwrap();
        assert_eq!(newest, all[23usize.saturating_sub(limit)..], "limit {limit}");
    }
    let failed = StatusFilter {
        failed: true,
        limit: Some(8),
        ..StatusFilter::default()
    };
    let (newest_failed, _) = query(&log, &failed).unwrap();
    let expected: Vec<ActivityEntry> = all
        .iter()
        .filter(|e| e.status == EntryStatus::Failed)
        .cloned()
        .collect();
    assert_eq!(newest_failed, expected[expected.len() - 8..]);
}

#[test]
fn concurrent_appends_across_archiving_lose_nothing() {
    use medin::internal::log::query::query;
    use medin::internal::log::status::StatusFilter;
    let dir = tempfile::tempdir().unwrap();
    let one = format_entry(&entry(0, "2026-01-01T00:00:00Z")).unwrap().len() as u64;
    let log = Arc::new(ActivityLog::new(dir.path().join("ACTIVITY_LOG.md")).with_max_size(one * 3));
    let handles: Vec<_> = (0..4u32)
        .map(|t| {
            let log = Arc::clone(&log);
            thread::spawn(move || {
                for i in 0..15u32 {
                    log.append(&entry(t * 100 + i, "2026-01-19T15:30:00Z")).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let (every, w) = query(&log, &StatusFilter::default()).unwrap();
    assert!(w.is_empty(), "{w:?}");
    let mut ids: Vec<String> = every.iter().map(|e| e.task_id.clone()).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 60, "every entry once");
    assert_eq!(every.len(), 60);
}

#[test]
fn a_false_positive_correction_is_honoured_by_status_and_the_rate() {
    use medin::internal::log::correct::{correct_false_positive, false_positive_rate, CorrectError};
    use medin::internal::log::query::query;
    use medin::internal::log::status::{CategoryFilter, StatusFilter};
    let dir = tempfile::tempdir().unwrap();
    let one = format_entry(&entry(0, "2026-01-01T00:00:00Z")).unwrap().len() as u64;
    // Small enough that the corrected entry ends up in an archive.
    let log = ActivityLog::new(dir.path().join("ACTIVITY_LOG.md")).with_max_size(one * 4);
    let base: DateTime<Utc> = "2026-01-01T00:00:00Z".parse().unwrap();
    let all: Vec<ActivityEntry> = (0..12)
        .map(|i| entry(i, &(base + Duration::minutes(i64::from(i))).to_rfc3339()))
        .collect();
    for e in &all {
        log.append(e).unwrap();
    }
    let target = &all[2];
    assert_eq!(target.status, EntryStatus::Passed);
    assert!(!log.archives().is_empty());

    let before = false_positive_rate(&query(&log, &StatusFilter::default()).unwrap().0).unwrap();
    assert_eq!((before.false_positives, before.passed), (0, 6));

    let c = correct_false_positive(&log, &target.id()[..6], "the file was empty").unwrap();
    assert_eq!(c.kind, EntryKind::Correction);
    assert_eq!(c.correction.as_ref().unwrap().entry, target.id());

    let (shown, _) = query(&log, &StatusFilter::default()).unwrap();
    assert_eq!(shown.len(), 12, "the correction entry itself is not shown by default");
    let corrected = shown.iter().find(|e| e.id() == target.id()).unwrap();
    assert_eq!(corrected.status, EntryStatus::Failed);
    assert_eq!(corrected.correction.as_ref().unwrap().reason, "the file was empty");
    let rate = false_positive_rate(&shown).unwrap();
    assert_eq!((rate.false_positives, rate.passed), (1, 6));
    assert!(rate.rate() > 0.001);

    // --failed and --status failed see it, with a limit too (read from the end).
    let failed = StatusFilter {
        failed: true,
        limit: Some(7),
        ..StatusFilter::default()
    };
    let (newest_failed, _) = query(&log, &failed).unwrap();
    assert_eq!(newest_failed.len(), 7);
    // Failed: entries 1, 3, 5, 7, 9, 11, and 2 corrected.
    assert_eq!(newest_failed[1].id(), target.id());
    assert_eq!(newest_failed[0].task_id, all[1].task_id);
    let corrections = StatusFilter {
        category: Some(CategoryFilter::parse("correction")),
        ..StatusFilter::default()
    };
    assert_eq!(query(&log, &corrections).unwrap().0.len(), 1);

    let id = target.id();
    assert!(matches!(
        correct_false_positive(&log, &id, "again"),
        Err(CorrectError::AlreadyCorrected(_))
    ));
    assert!(matches!(
        correct_false_positive(&log, &all[1].id(), "x"),
        Err(CorrectError::NotPassed { .. })
    ));
    assert!(matches!(
        correct_false_positive(&log, "ffffffffffff", "x"),
        Err(CorrectError::NotFound(_))
    ));
    assert!(matches!(
        correct_false_positive(&log, "abc", "x"),
        Err(CorrectError::NotFound(_))
    ));
    assert!(matches!(
        correct_false_positive(&log, &all[4].id(), "  "),
        Err(CorrectError::NoReason)
    ));
}
