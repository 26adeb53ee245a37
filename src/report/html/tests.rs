//! The renderer on a fixed, hand-built run: snapshots of its table and of one trial section
//! (insta, `src/report/html/snapshots/`), and the page's promises checked on the text —
//! self-contained, escaped, one section per attempt.

use std::path::PathBuf;

use super::*;
use crate::report::metrics::compute;
use crate::report::record::TrialStatus;
use crate::report::results::FailedExpectation;
use crate::report::run::RunId;

const AT: &str = "2026-01-19T15:30:00Z";

fn record(trial: &str, status: TrialStatus, duration_ms: u64, tokens: (u64, u64)) -> TrialRecord {
    let mut r = TrialRecord::for_test(trial, 1, status);
    r.finished_at = AT.parse().unwrap();
    r.run_dir = PathBuf::from(format!("/runs/fixed/{}/attempt-1", trial.replace("::", "/")));
    r.outcome = Some(if status == TrialStatus::Passed {
        crate::spec::Outcome::Success
    } else {
        crate::spec::Outcome::Failure
    });
    r.metrics.duration_ms = duration_ms;
    r.metrics.turns = 2;
    r.metrics.usage.input_tokens = tokens.0;
    r.metrics.usage.output_tokens = tokens.1;
    r
}

fn run_of(trials: Vec<TrialRecord>) -> RunConclusion {
    RunConclusion {
        run_id: RunId::parse("fixed", "test").unwrap(),
        folder: PathBuf::from("/runs/fixed"),
        metrics: compute(&trials),
        repeats: crate::report::repeats::compute(&trials),
        trials,
        breaches: Some(Vec::new()),
        unreadable: Vec::new(),
        against_baseline: false,
        coverage: None,
    }
}

/// A run of two tasks: `golden::good` passed, `golden::wrong` failed an expectation.
fn fixed_run() -> RunConclusion {
    let good = record("golden::good", TrialStatus::Passed, 53, (1200, 340));
    let mut wrong = record("golden::wrong", TrialStatus::Failed, 1500, (800, 90));
    wrong.metrics.guard_blocks = 1;
    wrong.tags = vec!["files".into()];
    wrong.expectations = vec![FailedExpectation {
        expectation: "expect.files.ok.txt.equals".into(),
        expected: "ok\nline2\n".into(),
        actual: "nope\n".into(),
    }];
    run_of(vec![good, wrong])
}

fn jsonl(lines: &[serde_json::Value]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

/// The attempt of `golden::wrong`: a write, a blocked command, a final report, a validation.
fn wrong_details() -> AttemptDetails {
    let receipts = jsonl(&[
        serde_json::json!({"seq": 1, "action_id": "call-1", "tool": "write_file", "input": {"path": "ok.txt", "content": "nope\n"},
            "origin": "agent", "guard": {"recommendation": "allow", "risk": "low", "violations": []}, "decision": "allow",
            "receipt": {"status": "success", "data": {"bytes": 5, "created": true, "path": "ok.txt"}}, "timestamp": "2026-01-19T15:29:59.100Z", "ran": true}),
        serde_json::json!({"seq": 2, "action_id": "call-2", "tool": "bash", "input": {"command": "rm -rf /"},
            "origin": "agent", "guard": {"recommendation": "block", "risk": "critical", "violations": [{"category": "deletion",
            "rule": "deletion.recursive_force", "severity": "critical", "matched": "rm -rf /", "description": "recursive forced deletion of the root",
            "recommendation": "block"}], "alternative": "delete the specific paths inside the workspace"}, "decision": "deny",
            "receipt": {"status": "error", "errors": [{"code": "PERMISSION_DENIED", "message": "blocked by the guard"}]},
            "timestamp": "2026-01-19T15:29:59.200Z", "ran": false}),
        serde_json::json!({"seq": 3, "action_id": "", "tool": "medin.validate", "input": {"command": "grep -qx ok ok.txt"},
            "origin": "validator", "decision": "allow", "receipt": {"status": "error", "data": {"exit": {"code": 1}, "stdout_tail": ""}},
            "timestamp": "2026-01-19T15:29:59.400Z", "ran": true}),
    ]);
    let transcript = jsonl(&[
        serde_json::json!({"direction": "to_agent", "timestamp": "2026-01-19T15:29:59.000Z",
            "event": {"type": "task", "brief": {"prompt": "write ok.txt", "tools": [{"name": "bash"}, {"name": "write_file"}], "limits": {"max_turns": 10}}}}),
        serde_json::json!({"direction": "from_agent", "timestamp": "2026-01-19T15:29:59.050Z",
            "event": {"type": "tool_call", "id": "call-1", "tool": "write_file", "input": {"path": "ok.txt", "content": "nope\n"}}}),
        serde_json::json!({"direction": "to_agent", "timestamp": "2026-01-19T15:29:59.100Z", "event": {"type": "tool_result", "id": "call-1", "receipt": {}}}),
        serde_json::json!({"direction": "from_agent", "timestamp": "2026-01-19T15:29:59.150Z",
            "event": {"type": "tool_call", "id": "call-2", "tool": "bash", "input": {"command": "rm -rf /"}}}),
        serde_json::json!({"direction": "to_agent", "timestamp": "2026-01-19T15:29:59.200Z", "event": {"type": "tool_result", "id": "call-2", "receipt": {}}}),
        serde_json::json!({"direction": "from_agent", "timestamp": "2026-01-19T15:29:59.300Z",
            "event": {"type": "final", "report": {"result": "success", "message": "done"}}}),
    ]);
    let metrics = serde_json::json!({"validations": [{"check": "file_contains ok.txt /^ok$/", "status": "failed", "passed": false,
        "evidence": "no line of ok.txt matches", "confidence": 100, "duration_ms": 0, "timestamp": AT,
        "expected": "^ok$", "actual": "nope\n"}]})
    .to_string();
    AttemptDetails::from_lines(&receipts, &transcript, Some(&metrics))
}

fn fixed_page() -> String {
    render(&fixed_run(), &mut |r| {
        if r.trial == "golden::wrong" {
            wrong_details()
        } else {
            AttemptDetails::default()
        }
    })
}

/// The text from the first `start` to the end of the first `end` after it.
fn between<'a>(page: &'a str, start: &str, end: &str) -> &'a str {
    let from = page.find(start).unwrap_or_else(|| panic!("{start} not in the page"));
    let to = page[from..]
        .find(end)
        .unwrap_or_else(|| panic!("{end} not after {start}"))
        + from
        + end.len();
    &page[from..to]
}

#[test]
fn the_table_of_trials_is_pinned() {
    let page = fixed_page();
    insta::assert_snapshot!("table", between(&page, "<section id=\"table\">", "</section>"));
}

#[test]
fn a_failed_trial_section_is_pinned() {
    let page = fixed_page();
    insta::assert_snapshot!(
        "failed_trial",
        between(&page, "<details class=\"trial failed\"", "</details>")
    );
}

#[test]
fn the_charts_are_pinned() {
    let page = fixed_page();
    insta::assert_snapshot!("charts", between(&page, "<section id=\"charts\">", "</section>"));
}

#[test]
fn the_page_is_self_contained() {
    let page = fixed_page();
    for outside in ["http://", "https://", "//cdn", "src=", "<link", "@import", "url("] {
        assert!(!page.contains(outside), "{outside} in the page");
    }
    assert!(page.starts_with("<!DOCTYPE html>"));
    let csp = page.find("Content-Security-Policy").unwrap();
    assert!(csp < page.find("<style>").unwrap() && csp < page.find("<script").unwrap());
    assert_eq!(page.matches("<details class=\"trial").count(), 2);
    assert_eq!(page.matches("<tr data-row=").count(), 2);
}

#[test]
fn what_agents_and_authors_wrote_cannot_become_markup() {
    let hostile = "</script><script>document.title='pwned'</script><img src=x onerror=alert(1)>";
    let mut wrong = record(&format!("golden::{hostile}"), TrialStatus::Failed, 1, (0, 0));
    wrong.agent = format!("process:{hostile}");
    wrong.tags = vec![hostile.into()];
    wrong.expectations = vec![FailedExpectation {
        expectation: hostile.into(),
        expected: "[click](javascript:alert(1))".into(),
        actual: hostile.into(),
    }];
    let mut run = run_of(vec![wrong]);
    run.breaches = Some(Vec::new());
    let receipts = jsonl(&[
        serde_json::json!({"seq": 1, "action_id": hostile, "tool": hostile, "input": {hostile: hostile},
        "origin": "agent", "decision": "allow", "receipt": {"status": "success", "data": {"stdout": hostile}},
        "timestamp": AT, "ran": true}),
    ]);
    let transcript = jsonl(&[serde_json::json!({"direction": "from_agent", "timestamp": AT,
        "event": {"type": "final", "report": {"result": "success", "message": hostile}}})]);
    let page = render(&run, &mut |_| AttemptDetails::from_lines(&receipts, &transcript, None));
    // The data for the script holds the text, with no `<` to end its element.
    let data = between(
        &page,
        "<script type=\"application/json\" id=\"medin-trials\">",
        "</script>",
    );
    let data = &data[data.find('>').unwrap() + 1..data.len() - "</script>".len()];
    assert!(!data.contains('<') && data.contains("\\u003c/script\\u003e"), "{data}");
    let markup = page.replace(data, "");
    assert!(!markup.contains("<img"), "an element from text");
    assert!(!markup.contains("document.title='pwned'"), "a script from text");
    assert!(!markup.contains("href=\"javascript:"), "a link from text");
    // The only scripts are the page's own two.
    assert_eq!(page.matches("<script").count(), 2);
    assert_eq!(page.matches("</script>").count(), 2);
    assert!(markup.contains("&lt;/script&gt;&lt;script&gt;document.title=&#39;pwned&#39;"));
}

#[test]
fn an_attempt_folder_is_found_below_a_moved_run_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut run = fixed_run();
    run.folder = dir.path().join("fixed");
    let moved = run.folder.join("golden/good/attempt-1");
    std::fs::create_dir_all(&moved).unwrap();
    assert_eq!(attempt_dir(&run, &run.trials[0]), moved);
    let mut here = run.trials[0].clone();
    here.run_dir = moved.clone();
    assert_eq!(
        attempt_dir(&run, &here),
        moved,
        "a folder that is there is taken as it is"
    );
}

#[test]
fn the_reporter_writes_the_page_into_the_run_folder_and_says_where() {
    #[derive(Clone, Default)]
    struct Shared(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);
    impl std::io::Write for Shared {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut run = fixed_run();
    run.folder = dir.path().to_path_buf();
    let printed = Shared::default();
    HtmlFile::new(None, Output::to(printed.clone()))
        .report(&Event::RunFinished(&run))
        .unwrap();
    let path = dir.path().join(DEFAULT_FILE);
    let page = std::fs::read_to_string(&path).unwrap();
    assert!(page.contains("data-trial=\"golden::wrong\""));
    let said = String::from_utf8(printed.0.lock().unwrap().clone()).unwrap();
    assert_eq!(said, format!("  html report    {}\n", path.display()));

    let blocked = dir.path().join("file");
    std::fs::write(&blocked, "").unwrap();
    let e = HtmlFile::new(Some(blocked.join("report.html")), Output::to(std::io::sink()))
        .report(&Event::RunFinished(&run))
        .unwrap_err();
    assert!(e.to_string().contains("cannot write the HTML report"), "{e}");
}
