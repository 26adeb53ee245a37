//! The end of a run, the same for `medin run`, the `eval` harness and `medin report`: the part
//! files of the run folder are merged, the suite metrics computed, the thresholds checked (on
//! whole runs), and the verdict put into the exit-code table ([`crate::exit`]). What is shown
//! or written of it (`summary.json`, the metrics block) is up to the reporters, which receive
//! the [`RunConclusion`] as [`super::Event::RunFinished`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::metrics::{compute, Breach, SuiteMetrics};
use super::record::{TrialRecord, TrialStatus};
use super::repeats::RepeatStats;
use super::run::{RunFolder, RunFolderError, RunId};
use crate::exit::ExitStatus;
use crate::spec::ThresholdSet;

/// Whether the thresholds of `medin.yaml` judge this run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// A whole run (or `medin report`): a breached threshold fails it.
    Thresholds,
    /// A run narrowed by a filter or to some paths: the metrics of a hand-picked subset say
    /// nothing about the suite, so they are shown but not gated.
    NotChecked,
}

/// A concluded run: every trial result the run folder holds, merged.
#[derive(Debug, Clone)]
pub struct RunConclusion {
    pub run_id: RunId,
    pub folder: PathBuf,
    /// Every trial of the run folder (of every process that wrote into it), sorted.
    pub trials: Vec<TrialRecord>,
    pub metrics: SuiteMetrics,
    /// What repeated attempts say: intervals, pass@k, pass^k, flaky tasks.
    pub repeats: RepeatStats,
    /// `None` when the thresholds were not checked ([`Gate::NotChecked`]).
    pub breaches: Option<Vec<Breach>>,
    /// Part files that could not be read: `path: why`.
    pub unreadable: Vec<String>,
    /// Gated against a baseline run: what failed there too is no failure of this run.
    pub against_baseline: bool,
    /// Per requirement of the suite's PRD, the trials that prove it ([`Self::add_coverage`]);
    /// `None` when the suite has no PRD.
    pub coverage: Option<crate::prd::Coverage>,
}

/// Merges the parts of `folder` and checks `thresholds` when `gate` says so. A gated run also
/// reads the false-positive rate of `activity_log` (the entries corrected with `medin log
/// correct`) into its metrics, for `max_false_positive_rate`.
pub fn conclude(
    folder: &RunFolder,
    thresholds: &BTreeMap<String, ThresholdSet>,
    gate: Gate,
    activity_log: Option<&crate::log::ActivityLog>,
) -> Result<RunConclusion, RunFolderError> {
    let parts = folder.read_parts()?;
    let mut metrics = compute(&parts.records);
    if let (Gate::Thresholds, Some(log)) = (gate, activity_log) {
        metrics.add_false_positives(log);
    }
    let repeats = super::repeats::compute(&parts.records);
    let breaches = (gate == Gate::Thresholds).then(|| super::thresholds::check(&metrics, &repeats, thresholds));
    Ok(RunConclusion {
        run_id: folder.id().clone(),
        folder: folder.path().to_path_buf(),
        trials: parts.records,
        metrics,
        repeats,
        breaches,
        unreadable: parts.unreadable,
        against_baseline: false,
        coverage: None,
    })
}

/// The exit status of attempts that ended so, each given as (trial, status, the task's
/// `flake_tolerance`): [`ExitStatus::Infrastructure`] if any could not be run, else
/// [`ExitStatus::Failed`] if a task failed, else success. A task fails when one of its attempts
/// failed, unless another passed and no more failed than its tolerance allows (see
/// [`super::repeats`]); only the attempts given are seen, so a process that ran one attempt of
/// a task judges that attempt alone.
pub fn trials_status<'a>(attempts: impl IntoIterator<Item = (&'a str, TrialStatus, u32)>) -> ExitStatus {
    // (passed, failed, tolerance) per task.
    let mut tasks: BTreeMap<&str, (u32, u32, u32)> = BTreeMap::new();
    for (trial, status, tolerance) in attempts {
        let e = tasks.entry(trial).or_default();
        e.2 = e.2.max(tolerance);
        match status {
            TrialStatus::Passed => e.0 += 1,
            TrialStatus::Failed => e.1 += 1,
            TrialStatus::Infrastructure => return ExitStatus::Infrastructure,
        }
    }
    let failed = tasks
        .values()
        .any(|&(passed, failed, tolerance)| failed > 0 && (passed == 0 || failed > tolerance));
    if failed {
        ExitStatus::Failed
    } else {
        ExitStatus::Success
    }
}

impl RunConclusion {
    /// What the gate adds to a run's status: a critical breach fails it (a warning does not); on a gated run, a part file
    /// that could not be read makes it an infrastructure error (the verdict would rest on a
    /// run with trials missing).
    pub fn gate_status(&self) -> ExitStatus {
        let gated = self.breaches.is_some();
        if gated && !self.unreadable.is_empty() {
            ExitStatus::Infrastructure
        } else if self.breaches.iter().flatten().any(Breach::is_critical) {
            ExitStatus::Failed
        } else {
            ExitStatus::Success
        }
    }

    /// The status of the whole merged run: every trial of the folder, and the gate. Against a
    /// baseline only regressions fail it (an infrastructure error still breaks it).
    pub fn run_status(&self) -> ExitStatus {
        let trials = trials_status(
            self.trials
                .iter()
                .map(|t| (t.trial.as_str(), t.status, t.flake_tolerance)),
        );
        let trials = if self.against_baseline && trials == ExitStatus::Failed {
            ExitStatus::Success
        } else {
            trials
        };
        trials.and(self.gate_status())
    }

    /// The run summary (`summary.json`, `medin report --json`).
    /// Adds the requirement coverage of `prd` by this run's trials; a gated run (not against a
    /// baseline) gains a critical breach for each critical requirement no passing trial proves.
    pub fn add_coverage(&mut self, prd: &crate::prd::Prd) {
        let coverage = crate::prd::coverage(
            prd,
            self.trials
                .iter()
                .map(|t| (t.trial.as_str(), t.attempt, t.passed(), t.requirements.as_slice())),
        );
        if let (Some(breaches), false) = (self.breaches.as_mut(), self.against_baseline) {
            breaches.extend(coverage.unproven_critical().into_iter().map(|r| Breach {
                scope: r.id.clone(),
                metric: super::thresholds::CRITICAL_REQUIREMENT,
                limit: 1.0,
                actual: r.trials.iter().filter(|t| t.passed).count() as f64,
                level: super::thresholds::Level::Critical,
            }));
        }
        self.coverage = Some(coverage);
    }

    pub fn summary_json(&self) -> serde_json::Value {
        let trials: Vec<serde_json::Value> = self
            .trials
            .iter()
            .map(|r| {
                serde_json::json!({
                    "trial": r.trial,
                    "category": r.category,
                    "attempt": r.attempt,
                    "status": r.status,
                    "passed": r.passed(),
                    "outcome": r.outcome,
                    "agent": r.agent,
                    "run_dir": r.run_dir,
                    "failure": r.failure,
                    "duration_ms": r.metrics.duration_ms,
                })
            })
            .collect();
        let status = self.run_status();
        serde_json::json!({
            "run_id": self.run_id.as_str(),
            "exit_code": status.code(),
            "gated": self.breaches.is_some(),
            "metrics": self.metrics,
            "repeats": self.repeats,
            "breaches": self.breaches.as_deref().unwrap_or_default(),
            "trials": trials,
            "unreadable_parts": self.unreadable,
            "requirement_coverage": self.coverage,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(trial: &str, attempt: u32, status: TrialStatus) -> TrialRecord {
        TrialRecord::for_test(trial, attempt, status)
    }

    fn thresholds() -> BTreeMap<String, ThresholdSet> {
        let mut t = BTreeMap::new();
        t.insert(
            "overall".to_string(),
            ThresholdSet {
                min_success_rate: Some(0.9),
                ..Default::default()
            },
        );
        t
    }

    #[test]
    fn the_parts_of_several_writers_conclude_into_one_gated_run() {
        let dir = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(dir.path(), RunId::parse("x", "test").unwrap());
        folder.write_part(&record("golden::a", 1, TrialStatus::Passed)).unwrap();
        folder.write_part(&record("golden::b", 1, TrialStatus::Failed)).unwrap();
        // A retry of the same attempt replaces its part.
        folder.write_part(&record("golden::b", 1, TrialStatus::Passed)).unwrap();
        let run = conclude(&folder, &thresholds(), Gate::Thresholds, None).unwrap();
        assert_eq!(run.trials.len(), 2);
        assert_eq!(run.breaches, Some(vec![]));
        assert_eq!(run.run_status(), ExitStatus::Success);

        folder.write_part(&record("golden::c", 1, TrialStatus::Failed)).unwrap();
        let run = conclude(&folder, &thresholds(), Gate::Thresholds, None).unwrap();
        assert_eq!(run.breaches.as_ref().map(Vec::len), Some(1));
        assert_eq!(run.run_status(), ExitStatus::Failed);
        let ungated = conclude(&folder, &thresholds(), Gate::NotChecked, None).unwrap();
        assert_eq!(ungated.gate_status(), ExitStatus::Success);

        folder
            .write_part(&record("golden::d", 1, TrialStatus::Infrastructure))
            .unwrap();
        let run = conclude(&folder, &thresholds(), Gate::Thresholds, None).unwrap();
        assert_eq!(run.run_status(), ExitStatus::Infrastructure);
        let summary = run.summary_json();
        assert_eq!(summary["exit_code"], 2);
        assert_eq!(summary["metrics"]["overall"]["trials"]["infrastructure"], 1);
        assert_eq!(summary["trials"][3]["status"], "infrastructure");
    }

    #[test]
    fn a_damaged_part_is_reported_and_fails_a_gated_run_as_infrastructure() {
        let dir = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(dir.path(), RunId::parse("x", "test").unwrap());
        folder.write_part(&record("golden::a", 1, TrialStatus::Passed)).unwrap();
        std::fs::write(folder.parts_dir().join("golden%3A%3Ab@1.json"), "{ torn").unwrap();
        std::fs::write(
            folder.parts_dir().join(".golden%3A%3Ac@1.json.1.2.tmp"),
            "{ in progress",
        )
        .unwrap();
        let run = conclude(&folder, &thresholds(), Gate::Thresholds, None).unwrap();
        assert_eq!(run.trials.len(), 1);
        assert_eq!(run.unreadable.len(), 1, "a writer's temporary file is not a part");
        assert_eq!(run.run_status(), ExitStatus::Infrastructure);
    }

    #[test]
    fn a_run_without_parts_is_an_error_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(dir.path(), RunId::parse("x", "test").unwrap());
        let e = conclude(&folder, &thresholds(), Gate::Thresholds, None).unwrap_err();
        assert!(e.to_string().contains("no trial results"), "{e}");
    }

    #[test]
    fn the_worst_task_decides_and_a_tolerated_mix_passes() {
        use TrialStatus::*;
        assert_eq!(trials_status([]), ExitStatus::Success);
        assert_eq!(trials_status([("a", Passed, 0), ("b", Failed, 0)]), ExitStatus::Failed);
        assert_eq!(
            trials_status([("a", Infrastructure, 0), ("b", Failed, 0)]),
            ExitStatus::Infrastructure
        );
        let attempts = |tolerance| {
            [
                ("a", Passed, tolerance),
                ("a", Failed, tolerance),
                ("a", Passed, tolerance),
            ]
        };
        assert_eq!(trials_status(attempts(0)), ExitStatus::Failed, "flaky fails by default");
        assert_eq!(
            trials_status(attempts(1)),
            ExitStatus::Success,
            "one failure of three tolerated"
        );
        assert_eq!(
            trials_status([("a", Failed, 5), ("a", Failed, 5)]),
            ExitStatus::Failed,
            "no tolerance makes a task that never passed pass"
        );
    }
}
