//! `verify:`, task directories, validator names and output tails, and files that are not medin
//! tasks — through the `medin` binary on small suites in temp directories. The verifier here is
//! Python's unittest (no dependency); the bundled GT-040 and AT-410..414 run pytest.

mod support;

use std::path::{Path, PathBuf};

use support::{medin, suite_with, text};

/// The code under test, as the fixture ships it: nothing implemented.
const CALC_STUB: &str = "def add(a, b):\n    raise NotImplementedError\n\n\ndef sub(a, b):\n    raise NotImplementedError\n\n\ndef mul(a, b):\n    raise NotImplementedError\n\n\ndef div(a, b):\n    raise NotImplementedError\n";

/// The hidden tests: four, one per function.
const TEST_CALC: &str = "import unittest\n\nfrom calc import add, div, mul, sub\n\n\nclass Calc(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_sub(self):\n        self.assertEqual(sub(2, 3), -1)\n\n    def test_mul(self):\n        self.assertEqual(mul(2, 3), 6)\n\n    def test_div(self):\n        self.assertEqual(div(6, 3), 2)\n";

/// The reference solution, as a task directory's `solution/solve.sh`.
const SOLVE_SH: &str = "#!/usr/bin/env bash\nset -euo pipefail\ncat > calc.py <<'PY'\ndef add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\nPY\n";

/// Half the work: add and sub only.
const HALF: &str = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    raise NotImplementedError\n\n\ndef div(a, b):\n    raise NotImplementedError\n";

const UNITTEST: &str = "python3 -m unittest -v";

/// A suite whose `golden/calc` task directory has the stub workspace, the hidden tests and the
/// reference solution, plus `extra` files.
fn calc_suite(task_yaml: &str, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let mut files = vec![
        ("golden/calc/task.yaml", task_yaml),
        ("golden/calc/workspace/calc.py", CALC_STUB),
        ("golden/calc/tests/test_calc.py", TEST_CALC),
        ("golden/calc/solution/solve.sh", SOLVE_SH),
    ];
    files.extend_from_slice(extra);
    suite_with("suites: [golden]\n", &files)
}

/// The one attempt folder of trial `<category>/<name>` in the suite's only run.
fn attempt(suite: &Path, trial: &str) -> PathBuf {
    let runs: Vec<PathBuf> = std::fs::read_dir(suite.join("target/medin/runs"))
        .expect("a run folder")
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    runs[0].join(trial).join("attempt-1")
}

fn metrics(attempt: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(attempt.join("metrics.json")).expect("metrics.json");
    serde_json::from_str(&text).expect("metrics.json is JSON")
}

fn statuses(m: &serde_json::Value) -> Vec<(String, String)> {
    m["metrics"]["test_results"]
        .as_array()
        .expect("test_results")
        .iter()
        .map(|t| {
            (
                t["id"].as_str().unwrap().to_string(),
                t["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_task_directory_is_found_and_its_solution_passes_its_hidden_tests_with_reward_1() {
    let task = format!(
        "description: calc, judged by hidden tests\nprompt: implement calc.py\nverify: {{ command: \"{UNITTEST}\", framework: unittest }}\nexpect:\n  files: {{ tests: {{ absent: true }} }}\n"
    );
    // YAML inside the task directory (its fixture, its tests) is not a task of the suite.
    let s = calc_suite(&task, &[("golden/calc/workspace/config.yaml", "not: a task\n")]);
    let o = medin(&["run"], s.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(
        out.contains("ok     golden::calc"),
        "the directory names the trial: {out}"
    );
    assert!(out.contains("1 passed, 0 failed"), "{out}");
    let a = attempt(s.path(), "golden/calc");
    let m = metrics(&a);
    assert_eq!(m["metrics"]["reward"], 1.0, "{m:#}");
    let v = &m["verification"];
    assert_eq!(v["status"], "passed", "{v:#}");
    assert_eq!(
        v["results_from"], "runner",
        "the shims reported every test by id: {v:#}"
    );
    assert_eq!(
        statuses(&m),
        ["test_add", "test_div", "test_mul", "test_sub"].map(|t| (format!("test_calc.Calc.{t}"), "passed".to_string()))
    );
    let log = std::fs::read_to_string(a.join("verify.log")).expect("verify.log");
    assert!(log.contains("Ran 4 tests") && log.contains("OK"), "{log}");
    // The solution came from solve.sh, and the hidden tests left with the verification.
    assert!(std::fs::read_to_string(a.join("workspace/calc.py"))
        .unwrap()
        .contains("return a / b"));
    assert!(!a.join("workspace/tests").exists());
}

#[test]
fn partial_work_earns_the_fraction_of_tests_passed_and_pass_at_decides() {
    let task = |pass_at: &str| {
        format!(
            "description: half of calc\nprompt: implement calc.py\nagent: oracle\nworkspace: ../calc/workspace\nverify: {{ files: ../calc/tests, command: \"{UNITTEST}\"{pass_at} }}\nsolution:\n  - write_file: {{ path: calc.py, content: {HALF:?} }}\n  - final: {{ result: success }}\n"
        )
    };
    let (strict, lenient) = (task(""), task(", reward: { pass_at: 0.5 }"));
    let s = calc_suite(
        "description: unused\nprompt: x\n",
        &[
            ("golden/half/task.yaml", &strict),
            ("golden/half-enough/task.yaml", &lenient),
        ],
    );
    let o = medin(&["run", "golden/half", "golden/half-enough"], s.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(
        out.contains("ok     golden::half-enough"),
        "pass_at 0.5 passes half: {out}"
    );
    assert!(out.contains("FAILED golden::half"), "{out}");
    // The failure names the verifier by its command and shows the tail of its output.
    assert!(
        out.contains("verify `python3 -m unittest -v` (Failed): expected every test passed (reward 1), got reward 0.5"),
        "{out}"
    );
    assert!(out.contains("| FAILED (errors=2)"), "{out}");
    assert!(out.contains("verify.log"), "{out}");
    // The mean reward stands beside the success rate, and results.json keeps each reward.
    assert!(out.contains("mean reward    0.500 over 2 verified trials"), "{out}");
    let runs = s.path().join("target/medin/runs");
    let run = std::fs::read_dir(&runs).unwrap().flatten().next().unwrap().path();
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("results.json")).unwrap()).unwrap();
    let rewards: Vec<f64> = results["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["reward"].as_f64().unwrap())
        .collect();
    assert_eq!(rewards, vec![0.5, 0.5], "{results:#}");
    assert_eq!(results["metrics"]["overall"]["rewarded"], 2);
    for trial in ["golden/half", "golden/half-enough"] {
        let m = metrics(&attempt(s.path(), trial));
        assert_eq!(m["metrics"]["reward"], 0.5, "{trial}: {m:#}");
        let by_test: std::collections::BTreeMap<String, String> = statuses(&m).into_iter().collect();
        assert_eq!(by_test["test_calc.Calc.test_add"], "passed");
        assert_eq!(by_test["test_calc.Calc.test_mul"], "error");
    }
}

#[test]
fn a_reward_file_the_verifier_writes_is_the_reward() {
    let task = "description: reward from a file\nprompt: implement calc.py\nverify:\n  command: python3 -m unittest; echo 0.75 > \"$MEDIN_REWARD_FILE\"\n  reward: { file: logs/reward.txt, pass_at: 0.7 }\n";
    let s = calc_suite(task, &[]);
    let o = medin(&["run"], s.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let m = metrics(&attempt(s.path(), "golden/calc"));
    assert_eq!(m["metrics"]["reward"], 0.75, "{m:#}");
    assert_eq!(m["verification"]["reward_from"], "file");
    assert_eq!(
        statuses(&m).len(),
        4,
        "the per-test outcomes are kept beside the file's reward"
    );
}

#[test]
fn a_reward_file_written_before_verification_is_deleted_and_never_counts() {
    // The agent leaves a perfect reward and no work; the verifier writes one only on success.
    let task = format!(
        "description: a planted reward\nprompt: implement calc.py\nagent: oracle\nverify:\n  command: {UNITTEST} && echo 1 > \"$MEDIN_REWARD_FILE\"\n  reward: {{ file: reward.txt }}\nsolution:\n  - write_file: {{ path: reward.txt, content: \"1\\n\" }}\n  - final: {{ result: success }}\nexpect:\n  outcome: failure\n  files: {{ reward.txt: {{ absent: true }} }}\n"
    );
    let s = calc_suite(&task, &[]);
    let o = medin(&["run"], s.path());
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    let m = metrics(&attempt(s.path(), "golden/calc"));
    assert_eq!(m["metrics"]["reward"], 0.0, "{m:#}");
    let v = &m["verification"];
    assert_eq!(v["reason"], "the verifier wrote no reward file", "{v:#}");
    assert!(v["notes"][0].as_str().unwrap().contains("was deleted"), "{v:#}");
}

#[test]
fn what_the_agent_plants_cannot_stand_in_for_the_runner() {
    // Each hostile "solution" leaves the code unimplemented and plants a forgery; each fails.
    let forgeries = [
        ("planted-unittest", "[{ write_file: { path: unittest.py, content: \"print('OK')\\n\" } }, { write_file: { path: tests/unittest.py, content: \"print('OK')\\n\" } }]"),
        ("sitecustomize", "[{ write_file: { path: sitecustomize.py, content: \"import os\\nprint('Ran 4 tests in 0.001s')\\nprint('OK')\\nos._exit(0)\\n\" } }]"),
        ("fake-python3", "[{ bash: \"mkdir -p bin .local/bin && for d in . bin .local/bin; do printf '#!/bin/sh\\\\necho OK\\\\n' > $d/python3; chmod +x $d/python3; done\" }]"),
        ("exit-on-import", "[{ write_file: { path: calc.py, content: \"import os\\nprint('Ran 4 tests in 0.001s')\\nprint('OK')\\nos._exit(0)\\n\" } }]"),
    ];
    let mut files: Vec<(String, String)> = Vec::new();
    for (name, steps) in forgeries {
        let steps = steps.trim_start_matches('[').trim_end_matches(']');
        files.push((
            format!("golden/forged-{name}.yaml"),
            format!(
                "description: forged {name}\nprompt: implement calc.py\nagent: oracle\nworkspace: calc/workspace\nverify: {{ files: calc/tests, command: \"{UNITTEST}\", framework: unittest }}\nsolution: [{steps}, {{ final: {{ result: success }} }}]\nexpect: {{ outcome: failure }}\n"
            ),
        ));
    }
    let refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let task = format!("description: honest\nprompt: implement calc.py\nverify: {{ command: \"{UNITTEST}\" }}\n");
    let s = calc_suite(&task, &refs);
    let o = medin(&["run"], s.path());
    let out = text(&o);
    assert_eq!(
        o.status.code(),
        Some(0),
        "every forgery fails and the honest solution passes: {out}"
    );
    assert!(out.contains("5 passed, 0 failed"), "{out}");
    for (name, _) in forgeries {
        let m = metrics(&attempt(s.path(), &format!("golden/forged-{name}")));
        assert_eq!(m["metrics"]["reward"], 0.0, "{name}: {m:#}");
    }
}

#[test]
fn a_failed_validator_shows_its_name_and_the_tail_of_its_output_never_its_whole_command() {
    let task = r#"
description: validators that fail loudly
prompt: nothing
agent: oracle
solution: [ { final: { result: success } } ]
expect:
  validate:
    - { name: tests pass, command: "for i in $(seq 1 40); do echo line-$i; done; echo SECRET-COMMAND-TEXT >/dev/null; exit 1" }
    - command: "printf 'one\\ntwo\\n'; exit 3 # a very long first line that goes on and on well past eighty characters of text\nsecond line of the command"
"#;
    let s = suite_with("suites: [golden]\n", &[("golden/loud.yaml", task)]);
    let o = medin(&["run"], s.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(out.contains("expect.validate `tests pass` (Failed)"), "{out}");
    assert!(
        !out.contains("SECRET-COMMAND-TEXT"),
        "the command is never shown: {out}"
    );
    assert!(out.contains("| line-40") && out.contains("| line-21"), "{out}");
    assert!(!out.contains("| line-20\n"), "only the last 20 lines: {out}");
    assert!(out.contains("| … (20 earlier lines)"), "{out}");
    assert!(
        out.contains("expect.validate `command printf 'one\\ntwo\\n'; exit 3 # a very long first line that goes on and on well pa…`"),
        "{out}"
    );
    assert!(!out.contains("second line of the command"), "{out}");
    assert!(out.contains("| two"), "{out}");
}

#[test]
fn files_that_are_not_medin_tasks_say_so_at_file_line_col() {
    let terminal_bench = "# a Terminal-Bench task\ntags: [files]\ninstruction: |\n  Fix the bug.\nauthor_email: someone@example.com\ndifficulty: easy\nparser_name: pytest\nmax_agent_timeout_sec: 360\n";
    let s = suite_with(
        "suites: [golden]\n",
        &[
            ("golden/tb-task/task.yaml", terminal_bench),
            ("golden/tb-task/tests/test_outputs.py", "def test_x(): pass\n"),
            ("golden/compose.yaml", "services:\n  web: { image: nginx }\n"),
            ("golden/typo.yaml", "descripton: x\n"),
        ],
    );
    let o = medin(&["check"], s.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(100), "{out}");
    assert!(
        out.contains("golden/tb-task/task.yaml:3:1: not a medin task (looks like a Terminal-Bench task.yaml: try `medin import terminal-bench`)"),
        "{out}"
    );
    assert!(!out.contains("isolation"), "no suggestion from the wrong format: {out}");
    assert!(
        out.contains("golden/compose.yaml:1:1: not a medin task: no `description`/`prompt`"),
        "{out}"
    );
    // A task with a typo keeps its own error and suggestion.
    assert!(out.contains("typo.yaml:1:1: unknown key `descripton`"), "{out}");
    assert!(out.contains("3 task file(s): 0 ok, 3 with errors"), "{out}");
}

#[test]
fn check_warns_about_a_command_validator_without_a_timeout_and_still_passes() {
    let task = "description: d\nprompt: p\nexpect:\n  validate:\n    - command: make test\n    - command: { run: make lint, timeout: 2m }\n";
    let s = suite_with("suites: [golden]\n", &[("golden/t.yaml", task)]);
    let o = medin(&["check"], s.path());
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "a warning is not an error: {out}");
    assert!(
        out.contains("golden/t.yaml:5:7: warning: the command validator `command make test` sets no timeout: it gets the default 1m"),
        "{out}"
    );
    assert!(out.contains("1 ok, 0 with errors, 1 warning(s)"), "{out}");
}

#[test]
fn the_bundled_verification_tasks_hold() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let paths: Vec<String> = std::fs::read_dir(root.join("adversarial"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().contains("-verify-"))
        .chain([root.join("golden/gt-040-verify-hidden-tests")])
        .map(|p| p.display().to_string())
        .collect();
    assert_eq!(paths.len(), 12, "{paths:?}");
    let mut args = vec!["run"];
    args.extend(paths.iter().map(String::as_str));
    let o = medin(&args, root);
    let out = text(&o);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("12 passed, 0 failed"), "{out}");
}
