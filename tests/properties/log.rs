//! `ACTIVITY_LOG.md` over generated entries: the format round trip (every entry written reads
//! back equal, a torn tail is skipped and the next append starts clean) and the JSON export.
//! The entry generators here are shared with the `medin status` properties ([`super::cli`]).
//!
//! Pure text and small files: 128 cases each.

use chrono::{DateTime, TimeZone, Utc};
use medin::internal::log::activity::{format_entry, END_MARKER};
use medin::internal::log::status::{render, StatusFormat};
use medin::internal::log::{
    export_json, parse_log, ActivityEntry, ActivityLog, Correction, EntryKind, EntryStatus, Finding,
};
use medin::internal::validate::{ValidationResult, ValidationStatus};
use proptest::prelude::*;

/// Text a person reads in the front matter: anything printable, several lines, and lines that
/// look like the format's own structure. (Control and bidi characters are made inert there on
/// purpose, so they cannot come back as written; the data line keeps them, see [`any_text`].)
pub fn shown_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => "[a-zA-Z0-9 _.:/#-]{0,12}",
            2 => "\\PC{0,8}",
            1 => Just("---".to_string()),
            1 => Just(END_MARKER.to_string()),
            1 => Just("<!-- medin:data {} -->".to_string()),
            1 => Just("\n".to_string()),
            1 => Just("key: value".to_string()),
        ],
        0..5,
    )
    .prop_map(|parts| parts.concat())
}

/// Any text at all, control characters, escapes, bidi controls and the format's markers
/// included: what an agent or a command may write into a description, a failure or evidence.
pub fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => any::<String>(),
        2 => shown_text(),
        1 => Just("\x1b]0;title\x07\u{202e}---\r\n<!-- medin:end -->\n".to_string()),
    ]
}

pub fn timestamp() -> impl Strategy<Value = DateTime<Utc>> {
    // 2000-01-01 .. 2100-01-01, to the nanosecond.
    (946_684_800i64..4_102_444_800, 0u32..1_000_000_000)
        .prop_map(|(s, n)| Utc.timestamp_opt(s, n).single().expect("a valid time"))
}

pub fn status() -> impl Strategy<Value = EntryStatus> {
    prop::sample::select(EntryStatus::ALL.to_vec())
}

pub fn kind() -> impl Strategy<Value = EntryKind> {
    prop::sample::select(EntryKind::ALL.to_vec())
}

fn validation() -> impl Strategy<Value = ValidationResult> {
    let status = prop::sample::select(vec![
        ValidationStatus::Passed,
        ValidationStatus::Failed,
        ValidationStatus::Pending,
    ]);
    (
        (any_text(), status, any_text(), 0u8..=100, any::<u64>()),
        (
            prop::option::of(any_text()),
            prop::option::of(any_text()),
            prop::option::of(any_text()),
            prop::option::of(any_text()),
            prop::collection::vec(any_text(), 0..2),
        ),
    )
        .prop_map(
            |((check, status, evidence, confidence, duration_ms), (error, expected, actual, output_tail, warnings))| {
                ValidationResult {
                    check,
                    status,
                    passed: status == ValidationStatus::Passed,
                    evidence,
                    confidence,
                    duration_ms,
                    timestamp: "2026-01-19T15:30:00.123Z".into(),
                    error,
                    expected,
                    actual,
                    output_tail,
                    warnings,
                }
            },
        )
}

/// Any entry the log may hold.
pub fn entry() -> impl Strategy<Value = ActivityEntry> {
    (
        (timestamp(), shown_text(), shown_text(), kind(), status()),
        (
            prop::option::of(shown_text()),
            any::<u64>(),
            any::<u32>(),
            shown_text(),
            shown_text(),
            shown_text(),
        ),
        (
            any_text(),
            prop::collection::vec(validation(), 0..3),
            prop::collection::vec(any_text(), 0..3),
            prop::option::of((any_text(), any_text())),
        ),
    )
        .prop_map(
            |(
                (timestamp, task_id, category, kind, status),
                (outcome, duration_ms, attempt, run_id, run_dir, agent),
                (description, validations, failures, correction),
            )| ActivityEntry {
                timestamp,
                task_id,
                category,
                kind,
                status,
                outcome,
                duration_ms,
                attempt,
                run_id,
                run_dir,
                agent,
                description,
                correction: correction.map(|(entry, reason)| Correction {
                    entry,
                    finding: Finding::FalsePositive,
                    reason,
                }),
                validations,
                failures,
            },
        )
}

proptest! {
    #![proptest_config(crate::cases(128))]

    /// **Property 9: Log Format Consistency.** *For any* activity log entry, it must parse
    /// successfully as markdown with YAML frontmatter, ISO 8601 timestamps, and valid category
    /// tags.
    ///
    /// Any generated entry (hostile text in every field) is written as exactly one front matter
    /// between the only two `---` lines, whose YAML has an ISO 8601 `timestamp` and a `kind`
    /// of reference 000's categories, then one end marker; and it reads back equal to what was
    /// written. Several entries followed by any prefix of one more (a writer that stopped
    /// mid-entry) read back as exactly the complete ones, the torn tail reported, never taken
    /// for data; an append after the torn tail starts on its own line and reads back too.
    /// 128 cases.
    #[test]
    fn p09_log_format_consistency(
        entries in prop::collection::vec(entry(), 1..4),
        torn in entry(),
        after in entry(),
        cut in any::<prop::sample::Index>(),
    ) {
        for e in &entries {
            let text = format_entry(e).expect("an entry formats");
            let lines: Vec<&str> = text.lines().collect();
            let fences: Vec<usize> = (0..lines.len()).filter(|&i| lines[i] == "---").collect();
            prop_assert_eq!(fences.len(), 2, "{}", text);
            prop_assert_eq!(fences[0], 0);
            prop_assert_eq!(lines.iter().filter(|l| **l == END_MARKER).count(), 1);
            let front: serde_yaml_ng::Value =
                serde_yaml_ng::from_str(&lines[1..fences[1]].join("\n")).expect("YAML front matter");
            let stamp = front["timestamp"].as_str().expect("a timestamp string");
            prop_assert!(DateTime::parse_from_rfc3339(stamp).is_ok(), "ISO 8601: {}", stamp);
            let kind = front["kind"].as_str().expect("a kind");
            prop_assert!(EntryKind::parse(kind).is_some(), "a category tag: {}", kind);
            let (back, warnings) = parse_log(&text);
            prop_assert!(warnings.is_empty(), "{:?}", warnings);
            prop_assert_eq!(&back, &vec![e.clone()]);
        }

        let whole: String = entries.iter().map(|e| format_entry(e).expect("formats")).collect();
        let torn_text = format_entry(&torn).expect("formats");
        let prefix = &torn_text.as_bytes()[..cut.index(torn_text.len())];
        let prefix = String::from_utf8_lossy(prefix);
        // A prefix that holds the whole end-marker line is a complete entry (the marker's text
        // inside a description or a failure is not a line of its own).
        let complete = prefix.lines().any(|l| l.trim_end() == END_MARKER);
        let text = format!("{whole}{prefix}");
        let (back, warnings) = parse_log(&text);
        let mut expected = entries.clone();
        if complete {
            expected.push(torn.clone());
        }
        prop_assert_eq!(&back, &expected);
        prop_assert_eq!(
            !warnings.is_empty(),
            !complete && !prefix.trim().is_empty(),
            "warnings {:?} for the prefix {:?}", warnings, prefix
        );

        let dir = tempfile::tempdir().expect("a temp dir");
        let path = dir.path().join("ACTIVITY_LOG.md");
        std::fs::write(&path, &text).expect("write");
        let log = ActivityLog::new(&path);
        log.append(&after).expect("append");
        let (read, _) = log.read().expect("read");
        expected.push(after.clone());
        prop_assert_eq!(read, expected);
    }

    /// **Property 37: Activity Log JSON Export.** *For any* activity log, the JSON export must
    /// be valid JSON and preserve all log entry data.
    ///
    /// Any generated entries: the export (`export_json`) and what `medin status --format json`
    /// prints (the same, with control and bidi characters escaped) are valid JSON arrays of
    /// one object per entry, and read back as the same entries. 128 cases.
    #[test]
    fn p37_activity_log_json_export(entries in prop::collection::vec(entry(), 0..5)) {
        for text in [export_json(&entries), render(&entries, StatusFormat::Json, false)] {
            let value: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            prop_assert_eq!(value.as_array().map(Vec::len), Some(entries.len()));
            let back: Vec<ActivityEntry> = serde_json::from_str(&text).expect("entries");
            prop_assert_eq!(&back, &entries);
        }
    }
}
