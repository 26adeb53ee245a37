//! Attacks on the harness's own file operations: an agent that plants symlinks, FIFOs and links
//! to devices in its workspace must not make the harness read, write or print anything outside
//! it, nor hang it. Each test runs a whole task through the library with the oracle playing the
//! attack, then looks at the world outside the workspace.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use medin::internal::runner::{self, TrialVerdict};

mod support;
use support::write;

/// Runs `spec` (written as `<dir>/adversarial/task.yaml`, fixtures relative to it) with the oracle.
fn run(dir: &Path, spec: &str) -> runner::TaskResult {
    support::run_task(dir, "adversarial", spec)
}

/// Every file below `root` (following nothing), with its content.
fn files_below(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).follow_links(false).into_iter().flatten() {
        if e.file_type().is_file() {
            out.push((e.path().to_path_buf(), std::fs::read(e.path()).unwrap_or_default()));
        }
    }
    out
}

/// A tree outside every workspace: a secret and a victim file.
fn outside(dir: &Path) -> (PathBuf, PathBuf) {
    let o = dir.join("outside");
    write(&o.join("secret.key"), "PRIVATE-KEY-DO-NOT-LEAK\n");
    write(&o.join("victim.txt"), "original\n");
    (o.join("secret.key"), o.join("victim.txt"))
}

const FIXTURE_CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n";
const FIXTURE_TEST: &str = "import unittest\nfrom calc import add, mul\n\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n";

fn tdd_fixture(dir: &Path) {
    write(&dir.join("fixtures/calc/calc.py"), FIXTURE_CALC);
    write(&dir.join("fixtures/calc/test_calc.py"), FIXTURE_TEST);
}

#[test]
fn an_l3_revert_never_writes_through_the_agents_links() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    tdd_fixture(&dir);
    let (_, victim) = outside(&dir);
    // Round 1: replace calc.py by links to the run folder's receipts and to a file outside, and
    // make the round's change big enough (L3) to be reverted.
    let big: String = (0..40)
        .map(|i| format!("    def m{i}(self):\n        return {i}\n"))
        .collect();
    let spec = format!(
        r#"
description: an L3 revert through the agent's links
kind: tdd
workspace: ../fixtures/calc
toolchains: [python]
prompt: Make every test pass.
tdd: {{ test: python3 -m unittest, framework: unittest, max_iterations: 2 }}
solution:
  - - bash: "ln -sf ../receipts.jsonl calc.py && ln -s {victim} test_link.py"
    - write_file: {{ path: engine.py, content: "class Engine:\n{big}" }}
    - write_file: {{ path: registry.py, content: "from engine import Engine\n" }}
    - write_file: {{ path: more.py, content: "from engine import Engine\n" }}
    - final: {{ result: success }}
  - - write_file: {{ path: calc.py, content: "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n" }}
    - final: {{ result: success }}
expect: {{ outcome: success }}
"#,
        victim = victim.display(),
        big = big.replace('\n', "\\n"),
    );
    let result = run(&dir, &spec);
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    let log = std::fs::read_to_string(result.run_dir.join("tdd-state/work-log.md")).unwrap();
    assert!(log.contains("L3: not applied (reverted)"), "{log}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original\n");
    let receipts = std::fs::read_to_string(result.run_dir.join("receipts.jsonl")).unwrap();
    assert!(receipts.lines().count() >= 5, "receipts were overwritten:\n{receipts}");
    for line in receipts.lines() {
        serde_json::from_str::<serde_json::Value>(line).expect("every receipt line is whole JSON");
    }
    // The revert put a real file back where the agent had a link.
    let calc = result.run_dir.join("workspace/calc.py");
    assert!(!calc.symlink_metadata().unwrap().file_type().is_symlink());
}

#[test]
fn loop_state_is_the_harnesss_own_and_the_agents_copy_is_never_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    tdd_fixture(&dir);
    let (secret, _) = outside(&dir);
    let sink = dir.join("sink");
    std::fs::create_dir(&sink).unwrap();
    let spec = format!(
        r##"
description: loop state through the agent's links
kind: tdd
workspace: ../fixtures/calc
toolchains: [python]
prompt: Make every test pass.
tdd: {{ test: python3 -m unittest, framework: unittest, max_iterations: 3 }}
solution:
  - - bash: "rm -f tdd-state/work-log.md && ln -s {secret} tdd-state/work-log.md && echo forged > tdd-state/error-history.json"
    - final: {{ result: success }}
  - - bash: "rm -rf tdd-state && ln -s {sink} tdd-state"
    - final: {{ result: success }}
  - - write_file: {{ path: calc.py, content: "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n" }}
    - final: {{ result: success }}
expect:
  outcome: success
  tdd:
    exit: TDD_RALPH_COMPLETE
    iterations: 3
    state: {{ work-log.md: {{ contains: "Iteration 3" }} }}
"##,
        secret = secret.display(),
        sink = sink.display(),
    );
    let result = run(&dir, &spec);
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    // Nothing was written through the link to the outside folder.
    assert!(
        files_below(&sink).is_empty(),
        "the harness wrote into {}",
        sink.display()
    );
    // The secret reached no file of the run (the state, the transcript the agent is shown).
    for (path, bytes) in files_below(&result.run_dir) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("PRIVATE-KEY"),
            "the secret leaked into {}",
            path.display()
        );
    }
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "PRIVATE-KEY-DO-NOT-LEAK\n");
}

#[test]
fn expected_files_are_read_without_following_links_or_opening_fifos_and_devices() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let (secret, _) = outside(&dir);
    let spec = format!(
        r#"
description: expected files through links, fifos, devices
solution:
  - bash: "ln -s {secret} key.txt && mkfifo pipe.txt && ln -s /dev/zero zero.txt"
  - final: {{ result: success }}
expect:
  outcome: success
  files:
    key.txt: {{ contains: "nothing like this" }}
    pipe.txt: {{ contains: "x" }}
    zero.txt: {{ contains: "x" }}
"#,
        secret = secret.display(),
    );
    let started = Instant::now();
    let result = run(&dir, &spec);
    assert!(started.elapsed() < Duration::from_secs(20), "the harness hung");
    let msg = result.failure_message().expect("the expectations cannot hold");
    assert!(msg.contains("symlink"), "{msg}");
    assert!(msg.contains("fifo"), "{msg}");
    assert!(
        !msg.contains("PRIVATE-KEY"),
        "the secret reached the failure message:\n{msg}"
    );
    for (path, bytes) in files_below(&dir.join("out")) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("PRIVATE-KEY"),
            "the secret leaked into {}",
            path.display()
        );
    }
}

#[test]
fn no_set_id_program_outlives_the_attempt_and_its_folder_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    let spec = r#"
description: a command leaves a setuid copy of the shell in its workspace
solution:
  # Through a program in a file (the guard blocks a plain `chmod 4755` and reads `python3 -c`).
  - write_file: { path: mk.py, content: "import os, shutil\nshutil.copy('/bin/sh', 'rsh')\nos.chmod('rsh', 0o6755)\n" }
  - bash: "python3 mk.py && ls -l rsh"
  - final: { result: success }
expect:
  outcome: pending
  receipts: [ { tool: medin.cleanup } ]
"#;
    let result = run(&dir, spec);
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(result.run_dir.join("workspace/rsh"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o6000, 0, "the set-id bits survived: {mode:o}");
    let folder = std::fs::metadata(&result.run_dir).unwrap().permissions().mode();
    assert_eq!(folder & 0o077, 0, "the attempt folder is open to others: {folder:o}");
}

#[test]
fn hidden_checks_never_reach_a_loop_agent_that_acts_again() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    tdd_fixture(&dir);
    write(
        &dir.join("fixtures/hidden/test_secret_check.py"),
        "import unittest\nfrom calc import add\n\n\nclass SecretCheck(unittest.TestCase):\n    def test_negative(self):\n        self.assertEqual(add(-7, 3), -4)\n",
    );
    let spec = r#"
description: hidden checks stay out of the loop's rounds
kind: tdd
workspace: ../fixtures/calc
hidden: ../fixtures/hidden
toolchains: [python]
prompt: Make every test pass.
tdd: { test: python3 -m unittest, framework: unittest, max_iterations: 3 }
solution:
  - - bash: "! grep -rl -e SecretCheck -e secret_check . && ! ls test_secret_check.py"
    - final: { result: success }
  - - write_file: { path: calc.py, content: "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n" }
    - final: { result: success }
expect:
  outcome: success
  metrics: { tool_errors: { max: 0 } }
  files: { test_secret_check.py: { absent: true } }
  validate: [ { command: python3 -m unittest test_secret_check } ]
"#;
    let result = run(&dir, spec);
    assert_eq!(result.verdict, TrialVerdict::Passed, "{:?}", result.failure_message());
    // Nothing the agent was shown names the hidden test (the solution's own grep names its
    // class; the method name appears nowhere but in the hidden file).
    let transcript = std::fs::read_to_string(result.run_dir.join("transcript.jsonl")).unwrap();
    assert!(
        !transcript.contains("test_negative"),
        "the hidden check reached the agent"
    );
    let state = std::fs::read_to_string(result.run_dir.join("tdd-state/test-results.json")).unwrap();
    assert!(
        !state.contains("test_negative"),
        "the hidden check reached the loop's state"
    );
}
