//! What the runner shims wrote about a judged run, read from the report folder outside the
//! workspace: which runners started, which finished, and every test's outcome by id.
//!
//! A runner process writes `start-<pid>.json` when it starts (Python processes whose command
//! line runs unittest or pytest) and `result-<pid>.json` when its run completes. A start without
//! a result means the process ended before its runner finished — the code under test exited it,
//! or it crashed — which is never a pass, whatever it printed.
//!
//! The folder is read fail-closed: a result without its start (a start deleted, or a result
//! written by something else), more files or bytes than a runner writes, or a file that does
//! not parse make the evidence *unfinished*, never *absent* — absent evidence would send the
//! verdict back to the command's output, which the code under test can print.
//!
//! A test id is only what a runner reports as a test: a module that failed to import
//! (unittest's `_FailedTest`, a pytest collection error) or a class/module fixture that failed
//! is a failure of the run, but not an id a later run must report again — once the module
//! imports, its real tests stand in its place ([`Baseline::modules`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::testparse::{Failure, Status, TestReport};

/// Largest report file read.
const MAX_REPORT: u64 = 16 * 1024 * 1024;
/// Most bytes read from one run's report folder.
const MAX_TOTAL: u64 = 64 * 1024 * 1024;
/// Most files one run's report folder may hold.
const MAX_FILES: usize = 1024;

/// One test's outcome, as the runner reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCase {
    /// The runner's id (`test_calc.T.test_add`, `tests/test_a.py::test_x`).
    pub id: String,
    /// `passed`, `failed`, `error`, `skipped` (the test did not run) or `xfail` (it failed as
    /// the test itself declares it expects to).
    pub outcome: String,
    #[serde(default)]
    pub message: String,
    /// `test`; `collection` (a module that failed to import or collect); `fixture` (a class or
    /// module set-up that failed).
    #[serde(default = "test_kind")]
    pub kind: String,
}

fn test_kind() -> String {
    "test".into()
}

impl TestCase {
    fn failed(&self) -> bool {
        matches!(self.outcome.as_str(), "failed" | "error")
    }

    fn is_test(&self) -> bool {
        self.kind == "test"
    }

    /// For a module that failed to collect: the prefix its tests' ids will have.
    fn module_prefix(&self) -> Option<String> {
        if self.kind != "collection" {
            return None;
        }
        match self.id.strip_prefix("unittest.loader._FailedTest.") {
            Some(module) => Some(format!("{module}.")),
            None if self.id.starts_with('<') => None,
            None => Some(format!("{}::", self.id)),
        }
    }
}

#[derive(Debug, Deserialize)]
struct StartFile {
    runner: String,
}

#[derive(Debug, Deserialize)]
struct ResultFile {
    runner: String,
    #[serde(default)]
    complete: bool,
    #[serde(default)]
    tests: Vec<TestCase>,
}

/// What a TDD loop's baseline run reported: every later run must report these again.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Baseline {
    /// Tests that ran (were not skipped).
    pub ids: BTreeSet<String>,
    /// Id prefixes of modules that failed to collect: some test of each must be reported.
    pub modules: BTreeSet<String>,
}

impl Baseline {
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.modules.is_empty()
    }
}

/// What the runners of one judged run reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunnerEvidence {
    /// Runners that started (`unittest`, `pytest`), one per process.
    pub started: Vec<String>,
    /// Why the evidence cannot be trusted: runners that started and did not write their
    /// results, and anything wrong with the report folder.
    pub unfinished: Vec<String>,
    /// Every test reported by a runner that started, by id (the worst outcome per id).
    pub tests: BTreeMap<String, TestCase>,
    /// The runner the tests came from (the first that finished).
    pub runner: Option<String>,
}

impl RunnerEvidence {
    /// Reads the report folder of one judged run.
    pub fn read(dir: &Path) -> RunnerEvidence {
        let mut ev = RunnerEvidence::default();
        let ws = match crate::sandbox::Beneath::open(dir) {
            Ok(ws) => ws,
            Err(e) => {
                ev.unfinished.push(format!("the report folder cannot be opened: {e}"));
                return ev;
            }
        };
        let walk = match ws.walk(
            crate::sandbox::WalkLimits {
                max_entries: MAX_FILES,
                max_depth: 0,
            },
            |_, _| false,
        ) {
            Ok(w) => w,
            Err(e) => {
                ev.unfinished.push(format!("the report folder cannot be listed: {e}"));
                return ev;
            }
        };
        if walk.truncated {
            ev.unfinished
                .push(format!("the report folder holds more than {MAX_FILES} files"));
        }
        let mut starts: BTreeMap<String, String> = BTreeMap::new();
        let mut results: BTreeSet<String> = BTreeSet::new();
        for e in &walk.entries {
            if let Some(pid) = e.rel.strip_prefix("start-").and_then(|r| r.strip_suffix(".json")) {
                match ws
                    .read(&e.rel, MAX_REPORT)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<StartFile>(&b).ok())
                {
                    Some(s) => {
                        starts.insert(pid.to_string(), s.runner);
                    }
                    None => ev.unfinished.push(format!("{} is not a runner's start record", e.rel)),
                }
            } else if let Some(pid) = e.rel.strip_prefix("result-").and_then(|r| r.strip_suffix(".json")) {
                results.insert(pid.to_string());
            }
        }
        // A result with no start: a start removed, or a result some other process wrote.
        for pid in results.iter().filter(|p| !starts.contains_key(*p)) {
            ev.unfinished
                .push(format!("result-{pid}.json has no start record of its runner"));
        }
        let mut total = 0u64;
        for (pid, runner) in starts {
            ev.started.push(runner.clone());
            let name = format!("result-{pid}.json");
            let parsed = results
                .contains(&pid)
                .then(|| ws.read(&name, MAX_REPORT.min(MAX_TOTAL.saturating_sub(total))).ok())
                .flatten()
                .and_then(|b| {
                    total += b.len() as u64;
                    serde_json::from_slice::<ResultFile>(&b).ok()
                });
            match parsed {
                // A test script (`python3 test_calc.py`) runs whichever runner it calls.
                Some(r) if r.complete && (r.runner == runner || runner == "script") => {
                    ev.runner.get_or_insert(r.runner);
                    for t in r.tests {
                        let worse = ev.tests.get(&t.id).is_none_or(|old| rank(&t) > rank(old));
                        if worse {
                            ev.tests.insert(t.id.clone(), t);
                        }
                    }
                }
                Some(_) => ev
                    .unfinished
                    .push(format!("the {runner} runner's result is incomplete")),
                None if results.contains(&pid) => ev.unfinished.push(format!(
                    "the {runner} runner's result is not readable JSON or too large"
                )),
                None => ev
                    .unfinished
                    .push(format!("the {runner} runner started and never finished its report")),
            }
        }
        ev
    }

    /// Whether a runner started, or anything at all was written: otherwise the command's
    /// output is all there is.
    pub fn recognised(&self) -> bool {
        !self.started.is_empty() || !self.unfinished.is_empty()
    }

    /// What later runs must report again: the tests that ran, and for each module that failed
    /// to collect, some test of it.
    pub fn baseline(&self) -> Baseline {
        Baseline {
            ids: self
                .tests
                .values()
                .filter(|t| t.is_test() && t.outcome != "skipped")
                .map(|t| t.id.clone())
                .collect(),
            modules: self.tests.values().filter_map(TestCase::module_prefix).collect(),
        }
    }

    /// The evidence as a [`TestReport`]: counts and failures from the runner's own records. An
    /// unfinished runner is `error`; what `baseline` asks for and is missing is a failure.
    pub fn to_report(&self, baseline: Option<&Baseline>) -> TestReport {
        let mut r = TestReport {
            framework: self
                .runner
                .clone()
                .unwrap_or_else(|| self.started.first().cloned().unwrap_or_else(|| "unknown".into())),
            status: Status::Passed,
            total: 0,
            passed: 0,
            failed: 0,
            skipped: 0,
            failures: Vec::new(),
        };
        let fail = |r: &mut TestReport, name: &str, message: String| {
            r.failed += 1;
            r.failures.push(Failure {
                name: name.to_string(),
                file: None,
                line: None,
                message,
                stack: None,
            });
        };
        for t in self.tests.values() {
            let ran_in_baseline = baseline.is_some_and(|b| b.ids.contains(&t.id));
            match t.outcome.as_str() {
                "passed" => r.passed += 1,
                "xfail" => r.skipped += 1,
                "skipped" if !ran_in_baseline => r.skipped += 1,
                "skipped" => fail(
                    &mut r,
                    &t.id,
                    format!("skipped now, but it ran in the baseline run: {}", t.message),
                ),
                _ => fail(&mut r, &t.id, t.message.clone()),
            }
        }
        if let Some(base) = baseline {
            for id in base.ids.iter().filter(|id| !self.tests.contains_key(*id)) {
                fail(
                    &mut r,
                    id,
                    "reported by the baseline run but not by this one (deselected, removed, or the run ended early)"
                        .into(),
                );
            }
            for prefix in &base.modules {
                let reported = self
                    .tests
                    .values()
                    .any(|t| t.is_test() && t.id.starts_with(prefix.as_str()));
                if !reported {
                    fail(
                        &mut r,
                        prefix.trim_end_matches(['.', ':']),
                        "this module failed to import in the baseline run and still reports no test".into(),
                    );
                }
            }
        }
        r.total = r.passed + r.failed + r.skipped;
        r.status = if !self.unfinished.is_empty() {
            r.failures.insert(
                0,
                Failure {
                    name: "<runner>".into(),
                    file: None,
                    line: None,
                    message: format!(
                        "{}: the process ended before its tests did (the code under test exited it, or it crashed), or the report folder was tampered with",
                        self.unfinished.join("; ")
                    ),
                    stack: None,
                },
            );
            Status::Error
        } else if r.failed > 0 {
            Status::Failed
        } else if r.passed == 0 {
            Status::NoTests
        } else {
            Status::Passed
        };
        r
    }

    /// Whether the runners' own report stands against a pass of a gate or a validator: a runner
    /// did not finish, a test failed, or a test was skipped — code under test can raise
    /// `SkipTest` for the cases it cannot answer, so a skip is not a pass (a test that declares
    /// its own expected failure, `xfail`, is). Zero tests is not held against it:
    /// `pytest --version` runs none.
    pub fn contradicts_a_pass(&self) -> bool {
        !self.unfinished.is_empty() || self.tests.values().any(|t| t.failed() || t.outcome == "skipped")
    }

    /// Whether every test passed (or was skipped), at least one passed, every runner finished,
    /// and everything `baseline` asks for was reported.
    pub fn all_passed(&self, baseline: Option<&Baseline>) -> bool {
        self.to_report(baseline).status == Status::Passed
    }
}

fn rank(t: &TestCase) -> u8 {
    match t.outcome.as_str() {
        "passed" => 0,
        "skipped" | "xfail" => 1,
        "failed" => 2,
        _ => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(t.path().join(name), text).unwrap();
        }
        t
    }

    #[test]
    fn a_runner_that_started_and_never_finished_is_an_error_whatever_else_it_wrote() {
        let t = dir_with(&[("start-10.json", r#"{"runner":"unittest"}"#)]);
        let ev = RunnerEvidence::read(t.path());
        assert!(ev.recognised());
        assert_eq!(
            ev.unfinished,
            ["the unittest runner started and never finished its report"]
        );
        assert_eq!(ev.to_report(None).status, Status::Error);
        assert!(ev.contradicts_a_pass());
    }

    #[test]
    fn results_become_counts_and_missing_baseline_ids_fail() {
        let t = dir_with(&[
            ("start-10.json", r#"{"runner":"pytest"}"#),
            (
                "result-10.json",
                r#"{"runner":"pytest","complete":true,"tests":[{"id":"t.py::a","outcome":"passed"},{"id":"t.py::b","outcome":"skipped"}]}"#,
            ),
        ]);
        let ev = RunnerEvidence::read(t.path());
        assert_eq!(ev.tests.keys().collect::<Vec<_>>(), ["t.py::a", "t.py::b"]);
        assert_eq!(ev.baseline().ids.into_iter().collect::<Vec<_>>(), ["t.py::a"]);
        let r = ev.to_report(None);
        assert_eq!((r.status, r.passed, r.skipped), (Status::Passed, 1, 1));
        let base = Baseline {
            ids: ["t.py::a", "t.py::b", "t.py::gone"].map(String::from).into(),
            modules: BTreeSet::new(),
        };
        let r = ev.to_report(Some(&base));
        assert_eq!(r.status, Status::Failed);
        let names: Vec<&str> = r.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["t.py::b", "t.py::gone"], "skipped now and missing both fail");
        assert!(!ev.all_passed(Some(&base)));
    }

    #[test]
    fn a_module_that_failed_to_import_is_not_a_test_id_but_must_bring_its_tests_later() {
        let baseline_run = dir_with(&[
            ("start-1.json", r#"{"runner":"unittest"}"#),
            (
                "result-1.json",
                r#"{"runner":"unittest","complete":true,"tests":[{"id":"unittest.loader._FailedTest.test_calc","outcome":"error","kind":"collection"}]}"#,
            ),
        ]);
        let base = RunnerEvidence::read(baseline_run.path()).baseline();
        assert!(base.ids.is_empty());
        assert_eq!(base.modules.iter().collect::<Vec<_>>(), ["test_calc."]);
        let fixed = dir_with(&[
            ("start-2.json", r#"{"runner":"unittest"}"#),
            (
                "result-2.json",
                r#"{"runner":"unittest","complete":true,"tests":[{"id":"test_calc.T.test_add","outcome":"passed"}]}"#,
            ),
        ]);
        assert!(RunnerEvidence::read(fixed.path()).all_passed(Some(&base)));
        let still_none = dir_with(&[
            ("start-3.json", r#"{"runner":"unittest"}"#),
            ("result-3.json", r#"{"runner":"unittest","complete":true,"tests":[]}"#),
        ]);
        assert!(!RunnerEvidence::read(still_none.path()).all_passed(Some(&base)));
    }

    #[test]
    fn a_report_folder_that_was_tampered_with_is_never_taken_as_no_evidence() {
        // A result whose start was removed, and a start that is not JSON.
        for files in [
            &[(
                "result-11.json",
                r#"{"runner":"pytest","complete":true,"tests":[{"id":"t.py::c","outcome":"passed"}]}"#,
            )][..],
            &[("start-12.json", "not json")][..],
        ] {
            let t = dir_with(files);
            let ev = RunnerEvidence::read(t.path());
            assert!(ev.recognised(), "{files:?}");
            assert_eq!(ev.to_report(None).status, Status::Error, "{files:?}");
        }
    }

    #[test]
    fn no_file_means_no_runner_was_recognised() {
        let t = dir_with(&[]);
        assert!(!RunnerEvidence::read(t.path()).recognised());
    }
}
