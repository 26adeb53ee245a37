//! One task end to end through the library: limits stop a task and are logged, a crashing agent
//! leaves every completed log entry intact, harness errors stay apart from agent failures.

use std::path::{Path, PathBuf};

use medin::internal::runner::{self, TrialVerdict};
use medin::internal::spec::Outcome;

mod support;
use support::write;

fn run(dir: &Path, spec: &str) -> (runner::TaskResult, PathBuf) {
    let result = support::run_task(dir, "golden", spec);
    let run_dir = result.run_dir.clone();
    (result, run_dir)
}

fn receipts(run_dir: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(run_dir.join("receipts.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("every receipt line is whole JSON"))
        .collect()
}

#[test]
fn the_file_limit_stops_the_task_before_the_second_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: two files with max_files 1
limits: { max_files: 1 }
solution:
  - write_file: { path: a.txt, content: a }
  - write_file: { path: b.txt, content: b }
  - final: { result: success }
expect:
  outcome: stopped
  receipts: [ { message: "File limit exceeded: 2 > 1" } ]
  files: { b.txt: { absent: true }, a.txt: { equals: a } }
"#,
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    assert_eq!(result.outcome, Some(Outcome::Stopped));
    let lines = receipts(&run_dir);
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["limit"], "File limit exceeded: 2 > 1");
}

#[test]
fn files_are_reported_before_changes_when_both_limits_break() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: both limits at once
limits: { max_files: 1, max_changes: 1 }
solution:
  - write_file: { path: a.txt, content: a }
  - write_file: { path: b.txt, content: b }
  - final: { result: success }
expect: { outcome: stopped }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert_eq!(receipts(&run_dir)[1]["limit"], "File limit exceeded: 2 > 1");
}

#[test]
fn a_crashing_agent_leaves_every_completed_entry_intact() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("golden/agent.py"),
        r#"import json, sys
sys.stdin.readline()
for i in range(2):
    print(json.dumps({"type": "tool_call", "id": str(i), "tool": "write_file", "input": {"path": f"f{i}.txt", "content": "x"}}), flush=True)
    sys.stdin.readline()
sys.stderr.write("boom: simulated crash\n")
sys.exit(7)
"#,
    );
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: the agent dies after two calls
agent: { process: { command: python3 agent.py } }
expect: { outcome: error }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let lines = receipts(&run_dir);
    assert_eq!(lines.len(), 3, "both completed actions and the crash are logged");
    assert_eq!(lines[0]["receipt"]["status"], "success");
    assert_eq!(lines[1]["receipt"]["status"], "success");
    assert_eq!(lines[2]["receipt"]["errors"][0]["code"], "MALFORMED_OUTPUT");
    assert!(lines[2]["receipt"]["errors"][0]["message"]
        .as_str()
        .unwrap()
        .contains("boom"));
    assert!(run_dir.join("workspace/f1.txt").exists());
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("metrics.json")).unwrap()).unwrap();
    assert!(metrics["stop_reason"].as_str().unwrap().contains("boom"), "{metrics}");
    let log = std::fs::read_to_string(dir.path().join("out/ACTIVITY_LOG.md")).unwrap();
    assert!(log.contains("golden::task"));
}

#[test]
fn a_failing_setup_is_a_harness_error_not_an_agent_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: setup fails
setup: [ "exit 3" ]
solution: [ { final: { result: success } } ]
"#,
    );
    match &result.verdict {
        TrialVerdict::HarnessError { message: m, .. } => assert!(m.contains("setup command `exit 3` failed"), "{m}"),
        other => panic!("expected a harness error, got {other:?}"),
    }
}

#[test]
fn a_success_claim_without_validation_is_pending_not_success() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        "description: claims only\nsolution: [ { final: { result: success } } ]\n",
    );
    assert_eq!(result.outcome, Some(Outcome::Pending));
    let msg = result.failure_message().unwrap();
    assert!(msg.contains("nothing is complete without one"), "{msg}");
}

#[test]
fn a_validation_that_fails_overrides_the_agents_claim() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: claims success, the check says no
solution: [ { final: { result: success } } ]
expect:
  outcome: failure
  validate: [ { file_exists: never.txt } ]
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert_eq!(result.outcome, Some(Outcome::Failure));
}

#[test]
fn a_bypass_with_justification_runs_the_blocked_command_and_logs_why() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: bypass
policy:
  bypass: [ { rule: deletion.recursive_force, justification: "the test removes its own scratch folder it never created" } ]
solution:
  - bash: rm -rf /opt/medin-bypass-test-does-not-exist
  - final: { result: success }
expect:
  outcome: pending
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let line = &receipts(&run_dir)[0];
    assert_eq!(line["decision"], "bypassed", "{line}");
    assert!(line["justification"].as_str().unwrap().contains("scratch folder"));
}

#[test]
fn the_task_deadline_cuts_a_long_command_and_the_outcome_is_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (result, _) = run(
        dir.path(),
        r#"
description: a command longer than the task
limits: { timeout: 1s, command_timeout: 30s }
solution:
  - bash: sleep 5
  - final: { result: success }
expect: { outcome: timeout }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "the command outlived the task: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_dry_run_counts_toward_no_limit() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: preview, then write
limits: { max_changes: 1, max_files: 1 }
solution:
  - write_file: { path: a.txt, content: a, dry_run: true }
  - write_file: { path: a.txt, content: a }
  - final: { result: success }
expect:
  outcome: success
  validate: [ { file_exists: a.txt } ]
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
}

#[test]
fn unchanged_compares_with_the_workspace_after_setup() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: setup writes a file the agent must leave alone
setup: [ "echo from-setup > keep.txt" ]
solution:
  - write_file: { path: other.txt, content: x }
  - final: { result: success }
expect:
  files: { keep.txt: { unchanged: true } }
  validate: [ { file_exists: other.txt } ]
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let (changed, _) = run(
        dir.path(),
        r#"
description: the agent changes it
setup: [ "echo from-setup > keep.txt" ]
solution:
  - write_file: { path: keep.txt, content: changed }
  - final: { result: success }
expect:
  files: { keep.txt: { unchanged: true } }
  validate: [ { file_exists: keep.txt } ]
"#,
    );
    let msg = changed.failure_message().expect("a changed file is not unchanged");
    assert!(msg.contains("expect.files.keep.txt.unchanged"), "{msg}");
}

#[test]
fn every_receipt_says_how_the_agent_process_itself_is_confined() {
    let dir = tempfile::tempdir().unwrap();
    // A process agent: one bash call, one malformed line, then its final report.
    let agent = dir.path().join("agent.sh");
    write(
        &agent,
        "read task\n\
         echo '{\"type\":\"tool_call\",\"id\":\"1\",\"tool\":\"bash\",\"input\":{\"command\":\"echo hi\"}}'\n\
         read result\n\
         echo 'not json'\n\
         read result\n\
         echo '{\"type\":\"final\",\"result\":\"success\",\"message\":\"done\"}'\n\
         read rest\n",
    );
    let (result, run_dir) = run(
        dir.path(),
        &format!(
            "description: a process agent\nagent: {{ process: {{ command: \"sh {}\" }} }}\nprompt: say hi\nexpect: {{ outcome: pending }}\n",
            agent.display()
        ),
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    let lines = receipts(&run_dir);
    assert_eq!(lines.len(), 2, "{lines:?}");
    // The agent runs at the task's level, like its commands; under strict its process keeps
    // the network the commands do not have (it must reach its model), and says so.
    let level = lines[0]["receipt"]["data"]["isolation"].as_str().unwrap().to_string();
    let expected = if level == "strict" {
        "strict+network".to_string()
    } else {
        level
    };
    for line in &lines {
        assert_eq!(line["receipt"]["agent_isolation"], expected.as_str(), "{line}");
    }
    // What the agent was sent carries it too.
    let transcript = std::fs::read_to_string(run_dir.join("transcript.jsonl")).unwrap();
    assert!(transcript.contains(&format!("\"agent_isolation\":\"{expected}\"")));

    // Unconfined on request, for developing an agent: every receipt says so.
    let (result, run_dir) = run(
        dir.path(),
        &format!(
            "description: a process agent\nagent: {{ process: {{ command: \"sh {}\", agent_isolation: none }} }}\nprompt: say hi\nexpect: {{ outcome: pending }}\n",
            agent.display()
        ),
    );
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    let lines = receipts(&run_dir);
    assert_eq!(lines.len(), 2, "{lines:?}");
    for line in &lines {
        assert_eq!(line["receipt"]["agent_isolation"], "none", "{line}");
    }
    // The bash receipt also says how the command itself was confined.
    assert!(lines[0]["receipt"]["data"]["isolation"].is_string(), "{}", lines[0]);

    // The oracle is medin itself: no agent process.
    let (_, run_dir) = run(
        dir.path(),
        "description: oracle\nsolution:\n  - bash: echo hi\n  - final: { result: success }\nexpect: { outcome: pending }\n",
    );
    for line in receipts(&run_dir) {
        assert_eq!(line["receipt"]["agent_isolation"], "builtin", "{line}");
    }
}

/// The failure message of a trial that must have ended as an infrastructure error naming
/// `what` (the missing runner).
fn missing_runner_message(result: &runner::TaskResult, what: &str) -> String {
    assert_eq!(
        result.cause(),
        Some(medin::internal::error::Cause::Infrastructure),
        "{:?}",
        result.verdict
    );
    let message = result.failure_message().unwrap();
    assert!(message.contains(what), "{message}");
    message
}

#[test]
fn a_missing_test_runner_is_an_infrastructure_error_that_names_it_and_costs_no_iteration() {
    let dir = tempfile::tempdir().unwrap();
    // What a fresh machine without pytest answers to `python3 -m pytest`, with a module that
    // exists nowhere standing in for pytest.
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: the TDD runner is not installed
kind: tdd
prompt: Make every test pass.
tdd: { test: python3 -m pytest_not_installed_here -q, max_iterations: 3 }
solution:
  - - final: { result: success, message: never asked }
expect: { outcome: success }
"#,
    );
    let message = missing_runner_message(&result, "pytest_not_installed_here is not installed for python3");
    assert!(message.contains("scripts/setup.sh"), "{message}");
    assert!(message.contains("not the agent's failure"), "{message}");
    // The agent was never started: no fix round, no iteration, no breaker signature.
    let transcript = std::fs::read_to_string(run_dir.join("transcript.jsonl")).unwrap_or_default();
    assert!(
        !transcript.contains("\"type\":\"task\""),
        "the agent was started: {transcript}"
    );
    let lines = receipts(&run_dir);
    assert!(lines.iter().all(|l| l["origin"] != "agent"), "{lines:?}");
    assert!(
        lines.iter().any(|l| l["origin"] == "test"),
        "the test command has its receipt: {lines:?}"
    );
}

#[test]
fn a_test_runner_the_shell_cannot_find_is_infrastructure_too() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: TDD — a test runner that is not there is an infrastructure error, never a signature or a pass
kind: tdd
prompt: Make every test pass.
tdd: { test: medin-no-such-test-runner --all, max_iterations: 3 }
solution:
  - - final: { result: success, message: never asked }
expect: { outcome: error }
"#,
    );
    missing_runner_message(&result, "medin-no-such-test-runner is not installed");
}

#[test]
fn every_command_of_the_author_passes_the_guard_and_leaves_a_receipt_with_its_origin() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: setup and validators are actions too
setup: [ "echo seeded > seed.txt" ]
solution:
  - bash: cat seed.txt
  - final: { result: success }
expect:
  outcome: success
  validate: [ { command: "grep -q seeded seed.txt" } ]
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let lines = receipts(&run_dir);
    let origin_of = |tool: &str| {
        lines
            .iter()
            .find(|l| l["tool"] == tool)
            .map(|l| (l["origin"].clone(), l["decision"].clone(), l["guard"].is_object()))
    };
    assert_eq!(
        origin_of("medin.setup"),
        Some(("setup".into(), "allow".into(), true)),
        "{lines:?}"
    );
    assert_eq!(
        origin_of("bash"),
        Some(("agent".into(), "allow".into(), true)),
        "{lines:?}"
    );
    assert_eq!(
        origin_of("medin.validate"),
        Some(("validator".into(), "allow".into(), true)),
        "{lines:?}"
    );
}

#[test]
fn a_destructive_setup_command_is_denied_like_any_other_action() {
    let dir = tempfile::tempdir().unwrap();
    let (result, _) = run(
        dir.path(),
        r#"
description: the author's commands are guarded too
setup: [ "rm -rf /" ]
solution: [ { final: { result: success } } ]
"#,
    );
    match &result.verdict {
        TrialVerdict::HarnessError { message, .. } => assert!(message.contains("was denied"), "{message}"),
        other => panic!("expected the setup to be denied, got {other:?}"),
    }
}

#[test]
fn an_agent_that_stops_answering_ends_as_timeout_at_the_task_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let hang = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/agent/hang.py");
    let started = std::time::Instant::now();
    let (result, _) = run(
        dir.path(),
        &format!(
            r#"
description: an agent that never answers, under a 2 s task limit (its own reply timeout is 30 s)
agent: {{ process: {{ command: "python3 {}" }} }}
limits: {{ timeout: 2s }}
expect: {{ outcome: timeout }}
"#,
            hang.display()
        ),
    );
    let took = started.elapsed();
    assert!(result.passed(), "{:?}", result.failure_message());
    assert!(
        took < std::time::Duration::from_secs(2 + 2 + 2),
        "the task held on for {took:?}, past its 2 s deadline and the 2 s grace"
    );
}

#[test]
fn a_command_asking_for_more_time_than_the_task_has_is_cut_at_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let started = std::time::Instant::now();
    let (result, _) = run(
        dir.path(),
        r#"
description: timeout_ms does not outlive the task
limits: { timeout: 1s, command_timeout: 30s }
solution:
  - bash: { command: "sleep 20", timeout_ms: 60000 }
  - final: { result: success }
expect: { outcome: timeout }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "the command outlived the task: {:?}",
        started.elapsed()
    );
}

#[test]
fn tests_the_agent_broke_after_a_fix_are_its_failure_not_infrastructure() {
    // A hostile fix that makes the runner exit 127 ("not found") or hang is charged to the
    // agent: only the baseline run, before the agent acted, can be the machine's problem.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/tdd-python");
    for (what, code) in [
        ("exits like a missing runner", "import os\nos._exit(127)\n"),
        (
            "prints a missing runner",
            "import sys\nsys.stderr.write('/usr/bin/python3: No module named pytest\\n')\nsys.exit(1)\n",
        ),
        ("hangs the runner", "import time\ntime.sleep(60)\n"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (result, _) = run(
            dir.path(),
            &format!(
                r#"
description: the fix breaks the runner ({what})
kind: tdd
workspace: {}
prompt: Make every test pass.
limits: {{ command_timeout: 3s }}
tdd: {{ test: PYTHONDONTWRITEBYTECODE=1 python3 -m unittest, framework: unittest, max_iterations: 1 }}
solution:
  - - write_file: {{ path: calc.py, content: {} }}
expect: {{ outcome: failure }}
"#,
                fixture.display(),
                serde_json::to_string(code).unwrap()
            ),
        );
        assert!(!result.is_harness_error(), "{what}: {:?}", result.verdict);
        assert!(result.passed(), "{what}: {:?}", result.failure_message());
    }
}

/// A process agent that crashes on its first start and does the work (`done.txt`) on the next.
fn flaky_agent() -> String {
    format!(
        "agent: {{ process: {{ command: \"python3 {}/tests/data/agent/flaky_coder.py\" }} }}",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn a_plain_task_retries_a_crashed_agent_through_the_shared_episode() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        &format!(
            "description: the agent crashes once, then does the work\n{}\nretry: {{ attempts: 2, base: 10ms }}\nexpect:\n  outcome: success\n  validate: [ {{ file_exists: done.txt }} ]\n",
            flaky_agent()
        ),
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let lines = receipts(&run_dir);
    let tools: Vec<&str> = lines.iter().map(|l| l["tool"].as_str().unwrap_or("")).collect();
    assert!(tools.contains(&"medin.retry"), "the retry has its receipt: {tools:?}");
    let transcript = std::fs::read_to_string(run_dir.join("transcript.jsonl")).unwrap();
    assert!(
        transcript.contains(r#""retry":2"#),
        "the restarted agent's brief is logged as a retry: {transcript}"
    );

    // Without `retry:`, a plain task does not retry: the crash is the agent's error.
    let again = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        again.path(),
        &format!(
            "description: no retry asked for\n{}\nexpect: {{ outcome: error }}\n",
            flaky_agent()
        ),
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert!(receipts(&run_dir).iter().all(|l| l["tool"] != "medin.retry"));
}

#[test]
fn a_tdd_round_is_retried_after_a_crash_with_its_feedback() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &dir.path().join("golden/fx/test_done.py"),
        "import os, unittest\n\nclass Done(unittest.TestCase):\n    def test_done(self):\n        self.assertTrue(os.path.exists('done.txt'))\n",
    );
    let (result, run_dir) = run(
        dir.path(),
        &format!(
            "description: a TDD loop whose agent crashes once\nkind: tdd\nworkspace: fx\n{}\nretry: {{ attempts: 2, base: 10ms }}\ntdd: {{ test: \"python3 -m unittest -v\", max_iterations: 2 }}\nexpect: {{ outcome: success }}\n",
            flaky_agent()
        ),
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    assert!(receipts(&run_dir).iter().any(|l| l["tool"] == "medin.retry"));
}

#[test]
fn the_trials_plan_is_resolved_once_and_recorded_in_metrics_json() {
    let dir = tempfile::tempdir().unwrap();
    let (result, run_dir) = run(
        dir.path(),
        r#"
description: the plan says what the trial ran under
isolation: none
limits: { timeout: 7s, command_timeout: 3s, max_turns: 4 }
solution:
  - final: { result: success }
expect: { outcome: pending }
"#,
    );
    assert!(result.passed(), "{:?}", result.failure_message());
    let metrics: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("metrics.json")).unwrap()).unwrap();
    let plan = &metrics["plan"];
    assert_eq!(plan["agent"], "oracle", "{plan}");
    assert_eq!(plan["isolation"], "none", "{plan}");
    assert_eq!(plan["timeout_ms"], 7000, "{plan}");
    assert_eq!(plan["command_timeout_ms"], 3000, "{plan}");
    assert_eq!(plan["max_turns"], 4, "{plan}");
    assert_eq!(plan["retry"]["attempts"], 1, "{plan}");
    assert!(plan["ask"] == "warn" || plan["ask"] == "deny", "{plan}");
}
