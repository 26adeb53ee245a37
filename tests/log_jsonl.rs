//! JSON-lines files: written whole by `JsonlLog`, read back by `read_jsonl` with torn lines skipped.

use std::io::Write;

use medin::internal::log::{read_jsonl, JsonlLog};
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Rec {
    n: u32,
    text: String,
}

fn rec(n: u32) -> Rec {
    Rec {
        n,
        text: format!("line {n}\nwith a newline ✓"),
    }
}

#[test]
fn written_lines_read_back_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("receipts.jsonl");
    let mut log = JsonlLog::open(&path).unwrap();
    for n in 0..5 {
        log.append(&rec(n)).unwrap();
    }
    let (values, warnings) = read_jsonl::<Rec>(&path);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(values, (0..5).map(rec).collect::<Vec<_>>());
}

#[test]
fn a_torn_last_line_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("receipts.jsonl");
    let mut log = JsonlLog::open(&path).unwrap();
    log.append(&rec(0)).unwrap();
    log.append(&rec(1)).unwrap();
    drop(log);
    let full = std::fs::read(&path).unwrap();
    let first_len = full.iter().position(|&b| b == b'\n').unwrap() + 1;
    for cut in first_len..full.len() {
        std::fs::write(&path, &full[..cut]).unwrap();
        let (values, warnings) = read_jsonl::<Rec>(&path);
        if cut == full.len() - 1 {
            // The whole record is there, only its newline is missing.
            assert_eq!(values, vec![rec(0), rec(1)], "cut {cut}");
            assert!(warnings.is_empty());
            continue;
        }
        assert_eq!(values, vec![rec(0)], "cut {cut}");
        if cut == first_len {
            assert!(warnings.is_empty());
        } else {
            assert_eq!(warnings.len(), 1, "cut {cut}: {warnings:?}");
            assert!(warnings[0].contains(":2: torn last line"), "{warnings:?}");
        }
    }
}

#[test]
fn a_bad_middle_line_is_skipped_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "{}", serde_json::to_string(&rec(0)).unwrap()).unwrap();
    writeln!(f, "{{not json").unwrap();
    writeln!(f).unwrap();
    writeln!(f, "{}", serde_json::to_string(&rec(2)).unwrap()).unwrap();
    drop(f);
    let (values, warnings) = read_jsonl::<Rec>(&path);
    assert_eq!(values, vec![rec(0), rec(2)]);
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].contains(":2: line skipped"), "{warnings:?}");
}

#[test]
fn a_missing_file_is_empty() {
    let dir = tempfile::tempdir().unwrap();
    let (values, warnings) = read_jsonl::<Rec>(&dir.path().join("none.jsonl"));
    assert!(values.is_empty() && warnings.is_empty());
}
