//! A JUnit XML reporter, for CI systems that read test results (GitLab, Jenkins, Buildkite,
//! GitHub test-report actions): one `<testsuite>` per category and one `<testcase>` per task,
//! written when the run finishes, from every trial of the run folder (all shards' parts).
//!
//! The attempts of one task are one test case: all passed → passed; some passed → passed with
//! the failed attempts as flaky runs; none passed → a failure (or an error, for an
//! infrastructure error) carrying the failure message (each expectation that did not hold, and
//! the run folder), with the earlier attempts as reruns. The XML model is quick-junit's (what
//! cargo-nextest writes); text is made inert before it goes in.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestRerun, TestSuite};

use super::events::{Event, ReportError, Reporter};
use super::finish::RunConclusion;
use super::record::{TrialRecord, TrialStatus};

/// Writes the run's JUnit XML to a file when the run finishes.
pub struct JunitFile {
    path: PathBuf,
}

impl JunitFile {
    pub fn new(path: PathBuf) -> Self {
        JunitFile { path }
    }
}

impl Reporter for JunitFile {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let fail = |what: String| ReportError::new("JUnit", format!("{what}; check the --junit path"));
        let xml = render(run).map_err(|e| fail(format!("cannot render the JUnit XML: {e}")))?;
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(format!("cannot create {}: {e}", dir.display())))?;
        }
        std::fs::write(&self.path, xml).map_err(|e| fail(format!("cannot write {}: {e}", self.path.display())))
    }
}

/// The JUnit XML of a finished run.
pub fn render(run: &RunConclusion) -> Result<String, quick_junit::SerializeError> {
    let mut report = Report::new(format!("medin {}", run.run_id));
    // category → trial → its attempts, in attempt order.
    let mut by_category: BTreeMap<&str, BTreeMap<&str, Vec<&TrialRecord>>> = BTreeMap::new();
    for t in &run.trials {
        by_category
            .entry(&t.category)
            .or_default()
            .entry(&t.trial)
            .or_default()
            .push(t);
    }
    let mut total = Duration::ZERO;
    for (category, trials) in by_category {
        let mut suite = TestSuite::new(crate::inert::line(category).into_owned());
        for (trial, mut attempts) in trials {
            attempts.sort_by_key(|a| a.attempt);
            let case = test_case(trial, category, &attempts);
            total += attempts.iter().map(|a| duration(a)).sum::<Duration>();
            suite.add_test_case(case);
        }
        report.add_test_suite(suite);
    }
    report.set_time(total);
    report.to_string()
}

fn duration(t: &TrialRecord) -> Duration {
    Duration::from_millis(t.metrics.duration_ms)
}

/// The failure text of an attempt (already inert and clipped), or its status.
fn message(t: &TrialRecord) -> String {
    t.failure.clone().unwrap_or_else(|| t.status.as_str().to_string())
}

fn kind(t: &TrialRecord) -> NonSuccessKind {
    match t.status {
        TrialStatus::Infrastructure => NonSuccessKind::Error,
        TrialStatus::Passed | TrialStatus::Failed => NonSuccessKind::Failure,
    }
}

fn rerun(t: &TrialRecord) -> TestRerun {
    let mut r = TestRerun::new(kind(t));
    r.set_time(duration(t))
        .set_message(first_line(&message(t)))
        .set_type(t.status.as_str())
        .set_description(message(t));
    r
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

fn test_case(trial: &str, category: &str, attempts: &[&TrialRecord]) -> TestCase {
    let failed: Vec<&TrialRecord> = attempts
        .iter()
        .copied()
        .filter(|a| a.status != TrialStatus::Passed)
        .collect();
    let status = if failed.is_empty() {
        TestCaseStatus::success()
    } else if failed.len() < attempts.len() {
        // Mixed: passed, but flaky — every failed attempt is a flaky run.
        let mut s = TestCaseStatus::success();
        s.add_reruns(failed.iter().map(|a| rerun(a)));
        s
    } else {
        let (last, earlier) = failed.split_last().expect("at least one failed attempt");
        let mut s = TestCaseStatus::non_success(kind(last));
        s.set_message(first_line(&message(last)))
            .set_type(last.status.as_str())
            .set_description(message(last));
        s.add_reruns(earlier.iter().map(|a| rerun(a)));
        s
    };
    let mut case = TestCase::new(crate::inert::line(trial).into_owned(), status);
    case.set_classname(crate::inert::line(category).into_owned())
        .set_time(attempts.iter().map(|a| duration(a)).sum::<Duration>());
    case
}
