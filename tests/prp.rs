//! PRP tasks end to end: gate order and outcomes, fix attempts, delays in the receipts, retries
//! of transient agent failures only, and the three artifacts with their contents.

use std::path::{Path, PathBuf};

use medin::internal::agent::AgentSource;
use medin::internal::runner::{self, RunSettings, TaskResult};
use medin::internal::spec::{AgentSpec, Outcome, SpecFile};

fn run(dir: &Path, spec: &str) -> TaskResult {
    let path = dir.join("regression/task.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, spec).unwrap();
    let settings = RunSettings::new(
        dir.join("out"),
        AgentSource {
            spec: AgentSpec::oracle(),
            base_dir: dir.to_path_buf(),
        },
    );
    runner::run_spec_file(
        &SpecFile {
            category: "regression".into(),
            name: "task".into(),
            path,
        },
        &settings,
        1,
    )
}

fn json(path: PathBuf) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

const FIX_ONCE: &str = r#"
description: fails level 2 once, then passes
kind: prp
prp:
  task_id: PRP-T1
  objective: write ok.txt holding ok
  gates:
    - { level: 2, description: content, command: "grep -qx ok ok.txt" }
    - { level: 1, description: exists, command: "test -f ok.txt" }
    - { level: 3, description: after content, command: "true" }
  backoff: { base: 30ms, factor: 2, cap: 1s, jitter: 0 }
solution:
  - write_file: { path: ok.txt, content: "nope\n" }
  - write_file: { path: scratch.txt, content: "x" }
  - final: { result: success, message: v1 }
  - write_file: { path: ok.txt, content: "ok\n" }
  - delete_file: scratch.txt
  - final: { result: success, message: v2 }
expect:
  outcome: success
"#;

#[test]
fn gates_run_by_level_stop_at_the_first_failure_and_rerun_after_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(dir.path(), FIX_ONCE);
    assert!(result.passed(), "{:?}", result.failure_message());
    let v = json(result.run_dir.join("validation-results.json"));
    assert_eq!(v["task_id"], "PRP-T1");
    assert_eq!(v["success"], true);
    assert_eq!(v["fix_attempts"], 1);
    let levels = |run: usize| -> Vec<(u64, String)> {
        v["runs"][run]["gates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| (g["level"].as_u64().unwrap(), g["outcome"].as_str().unwrap().to_string()))
            .collect()
    };
    assert_eq!(
        levels(0),
        [(1, "passed".to_string()), (2, "failed".to_string())],
        "level 3 never ran"
    );
    assert_eq!(
        levels(1),
        [(1, "passed".into()), (2, "passed".into()), (3, "passed".into())]
    );
    assert_eq!(v["runs"][0]["gates"][1]["exit_code"], 1);
    // The delay is recorded: 30 ms with no jitter.
    assert_eq!(v["delays"][0]["for"], "medin.backoff");
    assert_eq!(v["delays"][0]["delay_ms"], 30);
}

#[test]
fn artifacts_list_files_created_modified_and_deleted_with_hashes() {
    let dir = tempfile::tempdir().unwrap();
    let spec = FIX_ONCE
        .replace(
            "kind: prp",
            "kind: prp\nsetup: [ \"echo old > keep.txt && echo gone > gone.txt\" ]",
        )
        .replace(
            "  - delete_file: scratch.txt",
            "  - delete_file: scratch.txt\n  - bash: rm gone.txt && echo new > keep.txt",
        );
    let result = run(dir.path(), &spec);
    assert!(result.passed(), "{:?}", result.failure_message());
    let a = json(result.run_dir.join("artifacts-list.json"));
    let paths = |k: &str| {
        a[k].as_array()
            .unwrap()
            .iter()
            .map(|x| x["path"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        paths("created"),
        ["ok.txt"],
        "scratch.txt was created and deleted again: not an artifact"
    );
    assert_eq!(paths("modified"), ["keep.txt"]);
    assert_eq!(paths("deleted"), ["gone.txt"]);
    assert_eq!(a["created"][0]["source"], "receipt");
    assert_eq!(a["modified"][0]["source"], "command");
    assert_eq!(a["created"][0]["hash"], sha256_hex(b"ok\n"));
    let summary = std::fs::read_to_string(result.run_dir.join("execution-summary.md")).unwrap();
    for needle in [
        "# PRP PRP-T1",
        "**Fix attempts:** 1",
        "## Gate run 1 (after implementation)",
        "## Gate run 2 (after fix attempt 1)",
        "| 2 | content | `grep -qx ok ok.txt` | Failed | 1 |",
        "- created `ok.txt`",
        "- deleted `gone.txt`",
    ] {
        assert!(summary.contains(needle), "{needle:?} missing from\n{summary}");
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(bytes)?;
            c.wait_with_output()
        })
        .unwrap();
    format!(
        "sha256:{}",
        String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap()
    )
}

#[test]
fn a_permanent_agent_failure_is_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    // The oracle runs out of steps without a report: a protocol failure, not a transient one.
    let result = run(
        dir.path(),
        r#"
description: no report
kind: prp
prp:
  objective: x
  gates: [ { level: 1, description: d, command: "true" } ]
  retry: { attempts: 3, base: 10ms }
solution:
  - bash: "true"
expect: { outcome: error }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert_eq!(result.outcome, Some(Outcome::Error));
    let receipts = std::fs::read_to_string(result.run_dir.join("receipts.jsonl")).unwrap();
    assert!(!receipts.contains("medin.retry"), "{receipts}");
    let v = json(result.run_dir.join("validation-results.json"));
    assert_eq!(v["retries"], 0);
    assert_eq!(
        v["runs"].as_array().unwrap().len(),
        0,
        "no gate runs after a broken round"
    );
}

#[test]
fn a_guard_blocked_gate_fails_without_running() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        dir.path(),
        r#"
description: the gate itself is destructive
kind: prp
prp:
  objective: x
  fix_attempts: 0
  gates: [ { level: 1, description: cleans the machine, command: "rm -rf /" } ]
solution:
  - final: { result: success }
expect:
  outcome: failure
  prp: { gates: [[blocked]] }
  blocked: [ { rule: deletion.recursive_force } ]
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
}

#[test]
fn every_gate_skipped_and_no_validation_is_pending_not_success() {
    let dir = tempfile::tempdir().unwrap();
    let result = run(
        dir.path(),
        r#"
description: nothing really checked
kind: prp
prp:
  objective: x
  gates: [ { level: 4, description: manual review, manual: true } ]
solution:
  - final: { result: success }
expect: { outcome: pending, prp: { success: true, gates: [[skipped]] } }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
}

#[test]
fn replies_parse_raw_or_fenced_and_anything_else_is_an_error_quoting_it() {
    use medin::internal::spec::FinalResult;
    let ok = medin::internal::agent::parse_reply(r#"{"result": "success", "message": "done"}"#).unwrap();
    assert_eq!((ok.result, ok.message.as_str()), (FinalResult::Success, "done"));
    let fenced = medin::internal::agent::parse_reply(
        "Here you go:\n```json\n{\"result\": \"issue\", \"message\": \"which db?\"}\n```\nbye",
    )
    .unwrap();
    assert_eq!(fenced.result, FinalResult::Issue);
    let bare_fence =
        medin::internal::agent::parse_reply("```\n{\"result\": \"error\", \"message\": \"no\"}\n```").unwrap();
    assert_eq!(bare_fence.result, FinalResult::Error);
    let bad = medin::internal::agent::parse_reply("I think it works").unwrap_err();
    assert_eq!(bad.result, FinalResult::Error);
    assert!(bad.message.contains("I think it works"));
    assert!(
        medin::internal::agent::parse_reply(r#"{"result": "great"}"#).is_err(),
        "unknown result values are not success"
    );
}

#[test]
fn a_transient_error_report_is_retried_and_a_permanent_one_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let transient = run(
        dir.path(),
        r#"
description: rate limited once
kind: prp
prp:
  objective: x
  gates: [ { level: 1, description: d, command: "test -f ok.txt" } ]
  retry: { attempts: 3, base: 10ms }
solution:
  - final: { result: error, code: RATE_LIMIT, message: "429 Too Many Requests" }
  - write_file: { path: ok.txt, content: ok }
  - final: { result: success }
expect: { outcome: success, prp: { retries: 1 }, receipts: [ { tool: medin.retry, data: { attempt: 2 } } ] }
"#,
    );
    assert!(transient.passed(), "{:?}", transient.failure_message());
    let permanent = run(
        dir.path(),
        r#"
description: bad credentials
kind: prp
prp:
  objective: x
  gates: [ { level: 1, description: d, command: "true" } ]
  retry: { attempts: 3, base: 10ms }
solution:
  - final: { result: error, code: AUTH, message: "401 invalid API key" }
  - final: { result: success }
expect: { outcome: failure, prp: { retries: 0, gates: [], error: "401" } }
"#,
    );
    assert!(permanent.passed(), "{:?}", permanent.failure_message());
}
