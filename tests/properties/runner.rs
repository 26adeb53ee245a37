//! Whole tasks through the runner (oracle agent, guard → sandbox → validate → log): the outcome
//! rule (`src/runner/judge.rs`) and the activity-log entry of every outcome, over generated
//! tasks — which files the solution writes, which validators the task lists (passing, failing,
//! or unable to run), and what the agent claims at the end.
//!
//! Each case runs a real task (a run folder, the pipeline, validators through the sandbox), so
//! these properties run 16 cases each.

use std::path::Path;

use medin::internal::log::{ActivityEntry, ActivityLog, EntryKind, EntryStatus};
use medin::internal::spec::Outcome;
use medin::internal::validate::ValidationStatus;
use proptest::prelude::*;
use serde_json::json;

use crate::support;

/// Files the solution may write (`f0.txt` ...).
const FILES: usize = 3;

/// One validator of a generated task, and what it must find.
#[derive(Debug, Clone)]
enum Check {
    /// `file_exists f<i>.txt`.
    Exists(usize),
    /// `file_contains f<i>.txt /^alpha$/`.
    ContainsAlpha(usize),
    /// `command: true` or `command: false`.
    Command(bool),
    /// A command whose tool is missing (exit 127): the check cannot run, so it is pending.
    Unavailable,
}

/// A generated task: what the oracle writes (`None`: not written; `Some(true)`: `alpha`,
/// `Some(false)`: `beta`), the validators, and the claim the oracle ends with.
#[derive(Debug, Clone)]
struct GeneratedTask {
    files: Vec<Option<bool>>,
    checks: Vec<Check>,
    claim: &'static str,
}

fn check() -> impl Strategy<Value = Check> {
    prop_oneof![
        3 => (0..FILES).prop_map(Check::Exists),
        3 => (0..FILES).prop_map(Check::ContainsAlpha),
        2 => any::<bool>().prop_map(Check::Command),
        1 => Just(Check::Unavailable),
    ]
}

fn task() -> impl Strategy<Value = GeneratedTask> {
    (
        prop::collection::vec(prop::option::of(any::<bool>()), FILES),
        prop::collection::vec(check(), 0..5),
        prop_oneof![6 => Just("success"), 1 => Just("error"), 1 => Just("issue")],
    )
        .prop_map(|(files, checks, claim)| GeneratedTask { files, checks, claim })
}

impl GeneratedTask {
    fn spec(&self) -> String {
        let mut solution: Vec<serde_json::Value> = self
            .files
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                f.map(|alpha| {
                    let content = if alpha { "alpha\n" } else { "beta\n" };
                    json!({ "write_file": { "path": format!("f{i}.txt"), "content": content } })
                })
            })
            .collect();
        solution.push(json!({ "final": { "result": self.claim, "message": "done" } }));
        let validate: Vec<serde_json::Value> = self
            .checks
            .iter()
            .map(|c| match c {
                Check::Exists(i) => json!({ "file_exists": format!("f{i}.txt") }),
                Check::ContainsAlpha(i) => {
                    json!({ "file_contains": { "path": format!("f{i}.txt"), "pattern": "^alpha$" } })
                }
                Check::Command(true) => json!({ "command": "true" }),
                Check::Command(false) => json!({ "command": "false" }),
                Check::Unavailable => json!({ "command": "medin-no-such-tool-for-properties" }),
            })
            .collect();
        // JSON is YAML: the spec loader reads it as it reads any task.
        json!({
            "description": "a generated task",
            "prompt": "write the files",
            "solution": solution,
            "expect": { "validate": validate },
        })
        .to_string()
    }

    /// What each validator must find in the end state the solution leaves.
    fn expected_statuses(&self) -> Vec<ValidationStatus> {
        self.checks
            .iter()
            .map(|c| {
                let pass = match c {
                    Check::Exists(i) => self.files[*i].is_some(),
                    Check::ContainsAlpha(i) => self.files[*i] == Some(true),
                    Check::Command(ok) => *ok,
                    Check::Unavailable => return ValidationStatus::Pending,
                };
                if pass {
                    ValidationStatus::Passed
                } else {
                    ValidationStatus::Failed
                }
            })
            .collect()
    }

    /// The same task, cut down to what succeeds: the claim is `success` and only the checks
    /// that pass stay (`command: true` when none would).
    fn succeeding(mut self) -> Self {
        let statuses = self.expected_statuses();
        self.claim = "success";
        self.checks = self
            .checks
            .into_iter()
            .zip(statuses)
            .filter(|(_, s)| *s == ValidationStatus::Passed)
            .map(|(c, _)| c)
            .collect();
        if self.checks.is_empty() {
            self.checks.push(Check::Command(true));
        }
        self
    }

    /// The same task without its failing checks.
    fn without_failures(mut self) -> Self {
        let statuses = self.expected_statuses();
        self.checks = self
            .checks
            .into_iter()
            .zip(statuses)
            .filter(|(_, s)| *s != ValidationStatus::Failed)
            .map(|(c, _)| c)
            .collect();
        self
    }

    /// The outcome rule, written out independently of the runner: the agent's own error or
    /// issue fails; a failed check fails; a check that could not run leaves it pending; a
    /// success needs at least one check that ran, and all of them passed.
    fn expected_outcome(&self) -> Outcome {
        let statuses = self.expected_statuses();
        if self.claim != "success" || statuses.contains(&ValidationStatus::Failed) {
            Outcome::Failure
        } else if statuses.is_empty() || statuses.contains(&ValidationStatus::Pending) {
            Outcome::Pending
        } else {
            Outcome::Success
        }
    }
}

/// Runs `task` in a fresh folder and returns its outcome and its one activity-log entry.
fn run(task: &GeneratedTask) -> (Option<Outcome>, ActivityEntry, std::path::PathBuf) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let result = support::run_task(dir.path(), "golden", &task.spec());
    let (entries, warnings) = ActivityLog::new(dir.path().join("out/ACTIVITY_LOG.md"))
        .read()
        .expect("the activity log reads");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(entries.len(), 1, "one entry per task outcome: {entries:?}");
    let run_dir = result.run_dir.clone();
    assert!(
        Path::new(&entries[0].run_dir) == run_dir,
        "the entry names the run folder"
    );
    // The temp dir goes when this returns; what is asserted on is copied out.
    (result.outcome, entries[0].clone(), run_dir)
}

proptest! {
    #![proptest_config(crate::cases(16))]

    /// **Property 10: Zero Task Completion Without Validation.** *For any* task, it must not
    /// be marked as complete unless validation has executed and passed.
    ///
    /// medin: a task is complete when its outcome is `success`, decided by the one outcome rule
    /// (`src/runner/judge.rs`). Over generated tasks (files written or not, validators that
    /// pass, fail or cannot run, and the agent's claim), the outcome is exactly what the rule
    /// written out here says, and a `success` always has at least one validation, every one of
    /// which ran and passed. 16 cases: each runs a whole task.
    #[test]
    fn p10_zero_task_completion_without_validation(task in task()) {
        let (outcome, entry, _) = run(&task);
        prop_assert_eq!(outcome, Some(task.expected_outcome()), "{}", task.spec());
        let statuses: Vec<ValidationStatus> = entry.validations.iter().map(|v| v.status).collect();
        prop_assert_eq!(&statuses, &task.expected_statuses(), "{:?}", entry.validations);
        if outcome == Some(Outcome::Success) {
            prop_assert!(!entry.validations.is_empty(), "a success with no validation");
            prop_assert!(entry.validations.iter().all(|v| v.passed && v.status == ValidationStatus::Passed));
        }
    }

    /// **Property 6: Success Logging Completeness.** *For any* successfully completed task, the
    /// ACTIVITY_LOG.md entry must contain timestamp, task ID, outcome, and validation results.
    ///
    /// Over generated tasks whose outcome is `success`: the one entry has a timestamp within
    /// the run, the trial's id (`golden::task`), kind `task`, status `passed`, outcome
    /// `success`, and every validation with its evidence. 16 cases (whole tasks), each cut
    /// down to what succeeds; tasks that end otherwise are the next property's.
    #[test]
    fn p06_success_logging_completeness(task in task().prop_map(GeneratedTask::succeeding)) {
        let before = chrono::Utc::now();
        let (outcome, entry, _) = run(&task);
        prop_assert_eq!(outcome, Some(Outcome::Success));
        prop_assert!(entry.timestamp >= before && entry.timestamp <= chrono::Utc::now());
        prop_assert_eq!(entry.task_id.as_str(), "golden::task");
        prop_assert_eq!(entry.kind, EntryKind::Task);
        prop_assert_eq!(entry.status, EntryStatus::Passed);
        prop_assert_eq!(entry.outcome.as_deref(), Some("success"));
        prop_assert_eq!(entry.validations.len(), task.checks.len());
        for v in &entry.validations {
            prop_assert!(v.passed && !v.evidence.is_empty() && !v.check.is_empty(), "{:?}", v);
        }
        prop_assert!(entry.failures.is_empty(), "{:?}", entry.failures);
    }

    /// **Property 7: Failure Logging Completeness.** *For any* failed task, the ACTIVITY_LOG.md
    /// entry must contain error context, attempted corrections, and final state.
    ///
    /// medin: a trial whose outcome is not what the task expects (`success` here) has a
    /// `failed` entry whose `failures` name each expectation that did not hold, expected
    /// against actual (the error context); the final state is the entry's `outcome` and its
    /// validations with evidence; the attempts made are the entry's `attempt` and its run
    /// folder, which keeps every round's transcript and receipts (medin's corrections are
    /// the TDD / PRP loops' rounds and repeats, each its own attempt). 16 cases (whole tasks;
    /// one that would succeed gets a failing check added).
    #[test]
    fn p07_failure_logging_completeness(mut task in task()) {
        if task.expected_outcome() == Outcome::Success {
            task.checks.push(Check::Command(false));
        }
        let (outcome, entry, run_dir) = run(&task);
        prop_assert_ne!(outcome, Some(Outcome::Success));
        prop_assert_eq!(entry.status, EntryStatus::Failed);
        let outcome_name = match outcome {
            Some(Outcome::Failure) => "failure",
            Some(Outcome::Pending) => "pending",
            other => return Err(TestCaseError::fail(format!("unexpected outcome {other:?}"))),
        };
        prop_assert_eq!(entry.outcome.as_deref(), Some(outcome_name));
        prop_assert!(!entry.failures.is_empty(), "a failed entry says why");
        prop_assert!(
            entry.failures.iter().any(|f| f.contains(outcome_name)),
            "the failures name the actual outcome: {:?}", entry.failures
        );
        prop_assert_eq!(entry.attempt, 1);
        prop_assert_eq!(entry.validations.len(), task.checks.len());
        for v in entry.validations.iter().filter(|v| !v.passed) {
            prop_assert!(v.error.is_some(), "a check that did not pass says why: {:?}", v);
        }
        prop_assert!(
            run_dir.to_string_lossy().contains("golden/task/attempt-1"),
            "the run folder of the attempt: {}", run_dir.display()
        );
    }

    /// **Property 29: Validation Unavailable Handling.** *For any* task where validation is
    /// unavailable (network down, service unreachable), the task must be marked as "pending
    /// verification" not "complete".
    ///
    /// Over generated tasks with at least one check that cannot run (its tool is missing) and
    /// none that failed: the outcome is `pending`, never `success`, and the check is `pending`
    /// with confidence 0 and the reason it could not run. 16 cases (whole tasks).
    #[test]
    fn p29_validation_unavailable_handling(task in task().prop_map(GeneratedTask::without_failures)) {
        let mut task = task;
        task.claim = "success";
        task.checks.push(Check::Unavailable);
        let (outcome, entry, _) = run(&task);
        prop_assert_eq!(outcome, Some(Outcome::Pending));
        prop_assert_ne!(entry.status, EntryStatus::Passed);
        let pending: Vec<_> = entry
            .validations
            .iter()
            .filter(|v| v.status == ValidationStatus::Pending)
            .collect();
        prop_assert!(!pending.is_empty());
        for v in pending {
            prop_assert!(!v.passed && v.confidence == 0 && v.error.is_some(), "{:?}", v);
        }
    }
}
