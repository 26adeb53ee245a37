//! Snapshot tests (insta) of the reporters' output formats — the printed metrics, the JUnit
//! XML, the GitHub step summary, `medin compare` — on one fixed run built by hand: fixed
//! trials, durations, tokens, latencies and times, so nothing needs redacting. A change to a
//! format shows as a diff of its `.snap` file under `src/report/snapshots/`; accept it with
//! `INSTA_UPDATE=always cargo test --lib report::snapshots` (or `cargo insta review`) when it
//! is meant.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::events::{Event, Reporter};
use super::finish::RunConclusion;
use super::record::{TrialRecord, TrialStatus};
use super::reporters::{MetricsText, Output};
use super::results::FailedExpectation;
use super::run::RunId;
use crate::runner::ToolTally;
use crate::spec::suite::WarningThresholds;
use crate::spec::ThresholdSet;

/// Attempt `attempt` of `trial` that ended so, with fixed figures.
fn attempt(trial: &str, attempt: u32, status: TrialStatus, ms: u64) -> TrialRecord {
    let mut r = TrialRecord::for_test(trial, attempt, status);
    r.finished_at = chrono::DateTime::from_timestamp(1_768_816_800 + i64::from(attempt), 0).unwrap();
    let name = trial.replace("::", "/");
    r.run_dir = PathBuf::from(format!("/runs/ci-1234/{name}/attempt-{attempt}"));
    r.metrics.duration_ms = ms;
    r.metrics.turns = 3;
    r.metrics.usage.input_tokens = 400;
    r.metrics.usage.output_tokens = 100;
    r.metrics
        .by_tool
        .insert("bash".into(), ToolTally { calls: 2, errors: 0 });
    r.metrics
        .by_tool
        .insert("write_file".into(), ToolTally { calls: 1, errors: 0 });
    r.quality.tool_latency_ms.insert("bash".into(), vec![ms / 4, ms / 2]);
    r.quality.tool_latency_ms.insert("write_file".into(), vec![2]);
    r.quality.time_to_first_correct_ms = (status == TrialStatus::Passed).then_some(ms.saturating_sub(10));
    r.quality.claimed_success = true;
    let folder = r.run_dir.display().to_string();
    r.failure = (status != TrialStatus::Passed).then(|| {
        format!(
            "{trial} failed (agent oracle): 1 expectation did not hold\n  - expect.validate[0] (file_contains ok.txt): expected `ok`, found `nope`\n  run folder: {folder}"
        )
    });
    if status == TrialStatus::Failed {
        r.metrics
            .by_tool
            .insert("bash".into(), ToolTally { calls: 2, errors: 1 });
        r.quality.verification_failures = 1;
        r.quality.errors_by_code.insert("VERIFICATION_FAILED".into(), 1);
        r.expectations = vec![FailedExpectation {
            expectation: "expect.validate[0]".into(),
            expected: "ok".into(),
            actual: "nope".into(),
        }];
    }
    if status == TrialStatus::Infrastructure {
        r.failure = Some(format!(
            "{trial}: harness error, cause infrastructure (not the agent's failure): the sandbox could not start\n  run folder: {folder}"
        ));
        r.quality = Default::default();
    }
    r
}

/// The fixed run: a steady golden task, a golden task flaky on its first attempt, a regression
/// task that fails both attempts, an adversarial task the harness could not run.
fn trials() -> Vec<TrialRecord> {
    use TrialStatus::*;
    vec![
        attempt("adversarial::broken", 1, Infrastructure, 5),
        attempt("adversarial::broken", 2, Infrastructure, 5),
        attempt("golden::steady", 1, Passed, 120),
        attempt("golden::steady", 2, Passed, 140),
        attempt("golden::wobbly", 1, Failed, 300),
        attempt("golden::wobbly", 2, Passed, 260),
        attempt("regression::stuck", 1, Failed, 900),
        attempt("regression::stuck", 2, Failed, 1100),
    ]
}

fn thresholds() -> BTreeMap<String, ThresholdSet> {
    BTreeMap::from([
        (
            "overall".to_string(),
            ThresholdSet {
                min_success_rate: Some(0.5),
                warning: Some(WarningThresholds {
                    max_tokens_per_success: Some(500.0),
                    ..Default::default()
                }),
                ..Default::default()
            },
        ),
        (
            "golden".to_string(),
            ThresholdSet {
                max_flaky: Some(0.0),
                ..Default::default()
            },
        ),
    ])
}

fn run() -> RunConclusion {
    let trials = trials();
    let metrics = super::metrics::compute(&trials);
    let repeats = super::repeats::compute(&trials);
    let breaches = super::thresholds::check(&metrics, &repeats, &thresholds());
    RunConclusion {
        run_id: RunId::parse("ci-1234", "test").unwrap(),
        folder: PathBuf::from("/runs/ci-1234"),
        trials,
        metrics,
        repeats,
        breaches: Some(breaches),
        unreadable: Vec::new(),
        against_baseline: false,
        coverage: None,
    }
}

/// A writer whose bytes the test reads back.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
fn the_printed_metrics() {
    let out = Captured::default();
    let run = run();
    MetricsText::new(Output::to(out.clone()))
        .report(&Event::RunFinished(&run))
        .unwrap();
    let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
    insta::assert_snapshot!("metrics_text", text);
}

#[test]
fn the_junit_xml() {
    insta::assert_snapshot!("junit_xml", super::junit::render(&run()).unwrap());
}

#[test]
fn the_github_step_summary() {
    insta::assert_snapshot!("github_step_summary", super::github::markdown(&run()));
}

#[test]
fn the_compare_text() {
    use TrialStatus::*;
    let base = vec![
        attempt("golden::steady", 1, Passed, 100),
        attempt("golden::wobbly", 1, Passed, 100),
        attempt("golden::gone", 1, Passed, 100),
        attempt("regression::stuck", 1, Failed, 100),
    ];
    let mut head = trials();
    head.push(attempt("golden::fresh", 1, Passed, 100));
    let comparison = super::compare::compare(&base, &head);
    insta::assert_snapshot!(
        "compare_text",
        super::compare::render_text(&comparison, "main-99", "ci-1234")
    );
}
