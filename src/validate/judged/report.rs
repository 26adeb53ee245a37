//! What the runner shims wrote about a judged run, read from the report folder outside the
//! workspace: which runners started, which finished, and every test's outcome by id.
//!
//! A runner process writes `start-<pid>.json` when it starts (Python processes whose command
//! line runs unittest or pytest) and `result-<pid>.json` when its run completes. A start without
//! a result means the process ended before its runner finished — the code under test exited it,
//! or it crashed — which is never a pass, whatever it printed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::testparse::{Failure, Status, TestReport};

/// Largest report file read.
const MAX_REPORT: u64 = 16 * 1024 * 1024;
/// Most report files read from one run.
const MAX_FILES: usize = 256;

/// One test's outcome, as the runner reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCase {
    /// The runner's id (`test_calc.T.test_add`, `tests/test_a.py::test_x`).
    pub id: String,
    /// `passed`, `failed`, `error` or `skipped`.
    pub outcome: String,
    #[serde(default)]
    pub message: String,
}

impl TestCase {
    fn failed(&self) -> bool {
        matches!(self.outcome.as_str(), "failed" | "error")
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

/// What the runners of one judged run reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunnerEvidence {
    /// Runners that started (`unittest`, `pytest`), one per process.
    pub started: Vec<String>,
    /// Runners that started and did not write their results.
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
        let Ok(ws) = crate::sandbox::Beneath::open(dir) else {
            return ev;
        };
        let Ok(walk) = ws.walk(
            crate::sandbox::WalkLimits {
                max_entries: MAX_FILES,
                max_depth: 0,
            },
            |_, _| false,
        ) else {
            return ev;
        };
        let mut starts: BTreeMap<String, String> = BTreeMap::new();
        let mut results: BTreeMap<String, ResultFile> = BTreeMap::new();
        for e in walk.entries {
            let Some(pid) = e
                .rel
                .strip_prefix("start-")
                .or_else(|| e.rel.strip_prefix("result-"))
                .and_then(|r| r.strip_suffix(".json"))
            else {
                continue;
            };
            let Ok(bytes) = ws.read(&e.rel, MAX_REPORT) else {
                continue;
            };
            if e.rel.starts_with("start-") {
                if let Ok(s) = serde_json::from_slice::<StartFile>(&bytes) {
                    starts.insert(pid.to_string(), s.runner);
                }
            } else if let Ok(r) = serde_json::from_slice::<ResultFile>(&bytes) {
                results.insert(pid.to_string(), r);
            }
        }
        for (pid, runner) in starts {
            ev.started.push(runner.clone());
            match results.remove(&pid) {
                Some(r) if r.complete && r.runner == runner => {
                    ev.runner.get_or_insert(r.runner);
                    for t in r.tests {
                        let worse = ev.tests.get(&t.id).is_none_or(|old| rank(&t) > rank(old));
                        if worse {
                            ev.tests.insert(t.id.clone(), t);
                        }
                    }
                }
                _ => ev.unfinished.push(runner),
            }
        }
        ev
    }

    /// Whether a runner started at all (otherwise the command's output is all there is).
    pub fn recognised(&self) -> bool {
        !self.started.is_empty()
    }

    /// Ids of every test that ran (was not skipped): what later runs must report again.
    pub fn ran_ids(&self) -> BTreeSet<String> {
        self.tests
            .values()
            .filter(|t| t.outcome != "skipped")
            .map(|t| t.id.clone())
            .collect()
    }

    /// The evidence as a [`TestReport`]: counts and failures from the runner's own records. An
    /// unfinished runner is `error`; ids of `baseline` that were not reported are failures.
    pub fn to_report(&self, baseline: Option<&BTreeSet<String>>) -> TestReport {
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
        for t in self.tests.values() {
            let ran_in_baseline = baseline.is_some_and(|b| b.contains(&t.id));
            match t.outcome.as_str() {
                "passed" => r.passed += 1,
                "skipped" if !ran_in_baseline => r.skipped += 1,
                "skipped" => {
                    r.failed += 1;
                    r.failures.push(Failure {
                        name: t.id.clone(),
                        file: None,
                        line: None,
                        message: format!("skipped now, but it ran in the baseline run: {}", t.message),
                        stack: None,
                    });
                }
                _ => {
                    r.failed += 1;
                    r.failures.push(Failure {
                        name: t.id.clone(),
                        file: None,
                        line: None,
                        message: t.message.clone(),
                        stack: None,
                    });
                }
            }
        }
        if let Some(base) = baseline {
            let missing: Vec<&String> = base.iter().filter(|id| !self.tests.contains_key(*id)).collect();
            for id in &missing {
                r.failed += 1;
                r.failures.push(Failure {
                    name: (*id).clone(),
                    file: None,
                    line: None,
                    message:
                        "reported by the baseline run but not by this one (deselected, removed, or the run ended early)"
                            .into(),
                    stack: None,
                });
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
                        "the {} runner started but never finished its report: the process ended before its tests did (the code under test exited it, or it crashed)",
                        self.unfinished.join(", ")
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

    /// Whether every test passed (or was skipped), at least one passed, every runner finished,
    /// and every `baseline` id was reported.
    pub fn all_passed(&self, baseline: Option<&BTreeSet<String>>) -> bool {
        self.to_report(baseline).status == Status::Passed && !self.tests.values().any(TestCase::failed)
    }
}

fn rank(t: &TestCase) -> u8 {
    match t.outcome.as_str() {
        "passed" => 0,
        "skipped" => 1,
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
        assert_eq!(ev.unfinished, ["unittest"]);
        assert_eq!(ev.to_report(None).status, Status::Error);
        assert!(!ev.all_passed(None));
    }

    #[test]
    fn results_become_counts_and_missing_baseline_ids_fail() {
        let t = dir_with(&[
            ("start-10.json", r#"{"runner":"pytest"}"#),
            (
                "result-10.json",
                r#"{"runner":"pytest","complete":true,"tests":[{"id":"t.py::a","outcome":"passed"},{"id":"t.py::b","outcome":"skipped"}]}"#,
            ),
            // A result without a start (a stray or forged file) is ignored.
            (
                "result-11.json",
                r#"{"runner":"pytest","complete":true,"tests":[{"id":"t.py::c","outcome":"passed"}]}"#,
            ),
        ]);
        let ev = RunnerEvidence::read(t.path());
        assert_eq!(ev.tests.keys().collect::<Vec<_>>(), ["t.py::a", "t.py::b"]);
        assert_eq!(ev.ran_ids().into_iter().collect::<Vec<_>>(), ["t.py::a"]);
        let r = ev.to_report(None);
        assert_eq!((r.status, r.passed, r.skipped), (Status::Passed, 1, 1));
        let base: BTreeSet<String> = ["t.py::a", "t.py::b", "t.py::gone"].map(String::from).into();
        let r = ev.to_report(Some(&base));
        assert_eq!(r.status, Status::Failed);
        let names: Vec<&str> = r.failures.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["t.py::b", "t.py::gone"], "skipped now and missing both fail");
        assert!(!ev.all_passed(Some(&base)));
    }

    #[test]
    fn no_start_means_no_runner_was_recognised() {
        let t = dir_with(&[]);
        assert!(!RunnerEvidence::read(t.path()).recognised());
    }
}
