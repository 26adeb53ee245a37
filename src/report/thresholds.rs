//! The threshold check of a concluded run: every bound of `medin.yaml`'s `thresholds`, at both
//! levels, against the suite metrics ([`super::metrics`]) and the repeat statistics
//! ([`super::repeats`]). A **critical** breach fails the gate (exit 100); a **warning** is
//! printed and reported and fails nothing. What a bound means is decided here and only here.
//!
//! A scope (`overall` or a category) with no judged trials is not checked — a filtered run may
//! leave a category out, and its infrastructure errors fail the run on their own — except for
//! `max_missing_receipts`, which counts every trial's log. `max_missing_receipts` is 0 at level
//! critical in `overall` unless the suite sets it at either level: every tool call has a
//! receipt, and a run whose log lost one cannot be trusted. `max_false_positive_rate` is
//! 0.001 (0.1%) at level warning in `overall` unless the suite sets it at either level
//! ([`DEFAULT_FALSE_POSITIVE_WARNING`]); it is checked whenever the run read the activity
//! log's rate, judged trials or not.

use std::collections::BTreeMap;

use serde::Serialize;

use super::metrics::{GroupMetrics, SuiteMetrics};
use super::repeats::RepeatStats;
use crate::spec::{Bound, ThresholdSet};

/// `max_false_positive_rate` in `overall` when the suite sets it at neither level: 0.1%, at
/// level warning (reference 000: the false-positive rate stays below 0.1%).
pub const DEFAULT_FALSE_POSITIVE_WARNING: f64 = crate::log::correct::DEFAULT_FALSE_POSITIVE_ALERT;

/// How much a breached bound weighs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Printed and reported; the gate holds.
    Warning,
    /// Fails the gate.
    Critical,
}

/// A bound the run did not meet (or a regression from a baseline, which is always critical).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Breach {
    /// `overall`, a category, or (against a baseline) a task.
    pub scope: String,
    pub metric: &'static str,
    pub limit: f64,
    pub actual: f64,
    pub level: Level,
}

impl Breach {
    pub fn is_critical(&self) -> bool {
        self.level == Level::Critical
    }
}

/// The metric of a breach for a critical PRD requirement that no passing trial proves (its
/// scope is the requirement's id).
pub const CRITICAL_REQUIREMENT: &str = "critical_requirement";

impl std::fmt::Display for Breach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.metric == CRITICAL_REQUIREMENT {
            return write!(
                f,
                "{}: a critical requirement of the PRD that no passing task proves (name it in a task's `requirements:` and make that task pass)",
                self.scope
            );
        }
        let cmp = match self.metric {
            "min_success_rate" => "below the minimum",
            super::compare::BASELINE_METRIC => "a regression from the baseline's",
            _ => "above the maximum",
        };
        let (scope, metric) = (&self.scope, self.metric);
        match self.metric {
            // Rates this small need two decimals: 0.12% above 0.10%.
            "max_false_positive_rate" => write!(
                f,
                "{scope}.{metric}: {:.2}% is {cmp} {:.2}%",
                self.actual * 100.0,
                self.limit * 100.0
            )?,
            "min_success_rate" | "max_tool_error_rate" | "max_flaky_rate" | super::compare::BASELINE_METRIC => write!(
                f,
                "{scope}.{metric}: {:.1}% is {cmp} {:.1}%",
                self.actual * 100.0,
                self.limit * 100.0
            )?,
            "max_flaky" | "max_false_success" | "max_verification_failures" | "max_missing_receipts" => {
                write!(f, "{scope}.{metric}: {} is {cmp} {}", self.actual, self.limit)?
            }
            _ => write!(f, "{scope}.{metric}: {:.2} is {cmp} {:.2}", self.actual, self.limit)?,
        }
        if self.level == Level::Warning {
            f.write_str(" (warning)")?;
        }
        Ok(())
    }
}

/// Checks `thresholds` (keys: `overall` or a category) against a run's metrics and repeat
/// statistics; the breaches come per scope, in the order of [`Bound::ALL`], critical first.
pub fn check(
    metrics: &SuiteMetrics,
    repeats: &RepeatStats,
    thresholds: &BTreeMap<String, ThresholdSet>,
) -> Vec<Breach> {
    let mut sets = thresholds.clone();
    let overall = sets.entry("overall".to_string()).or_default();
    if overall.critical(Bound::MaxMissingReceipts).is_none() && overall.warning(Bound::MaxMissingReceipts).is_none() {
        overall.max_missing_receipts = Some(0.0);
    }
    if overall.critical(Bound::MaxFalsePositiveRate).is_none() && overall.warning(Bound::MaxFalsePositiveRate).is_none()
    {
        overall
            .warning
            .get_or_insert_with(Default::default)
            .max_false_positive_rate = Some(DEFAULT_FALSE_POSITIVE_WARNING);
    }
    let mut out = Vec::new();
    for (scope, set) in &sets {
        let group = if scope == "overall" {
            Some(&metrics.overall)
        } else {
            metrics.by_category.get(scope)
        };
        let Some(group) = group else { continue };
        for &bound in Bound::ALL {
            for (level, limit) in [
                (Level::Critical, set.critical(bound)),
                (Level::Warning, set.warning(bound)),
            ] {
                let Some(limit) = limit else { continue };
                if let Some((metric, actual, limit)) = breached(bound, limit, scope, group, repeats) {
                    out.push(Breach {
                        scope: scope.clone(),
                        metric,
                        limit,
                        actual,
                        level,
                    });
                }
            }
        }
    }
    out
}

/// `Some((metric, actual, limit))` when `group` (the scope `scope`) breaks `bound` at `limit`.
fn breached(
    bound: Bound,
    limit: f64,
    scope: &str,
    group: &GroupMetrics,
    repeats: &RepeatStats,
) -> Option<(&'static str, f64, f64)> {
    let judged = group.trials.judged() > 0;
    let above = |actual: f64| (judged && actual > limit).then_some((bound.key(), actual, limit));
    match bound {
        Bound::MinSuccessRate => {
            (judged && group.success_rate() < limit).then_some((bound.key(), group.success_rate(), limit))
        }
        Bound::MaxToolErrorRate => above(group.tool_error_rate()),
        Bound::MaxAvgTurns => above(group.avg_turns()),
        Bound::MaxTokensPerSuccess => group.tokens_per_success.and_then(above),
        Bound::MaxFalseSuccess => above(f64::from(group.false_success)),
        Bound::MaxVerificationFailures => above(f64::from(group.verification_failures)),
        Bound::MaxFalsePositiveRate => group
            .false_positive_rate()
            .and_then(|actual| (actual > limit).then_some((bound.key(), actual, limit))),
        Bound::MaxMissingReceipts => {
            let actual = f64::from(group.missing_receipts);
            (group.trials.total() > 0 && actual > limit).then_some((bound.key(), actual, limit))
        }
        Bound::MaxFlaky => {
            let tasks: Vec<_> = repeats
                .tasks
                .iter()
                .filter(|t| scope == "overall" || t.category == scope)
                .collect();
            if tasks.is_empty() {
                return None;
            }
            let flaky = tasks.iter().filter(|t| t.flaky).count() as f64;
            // Below 1: a fraction of the scope's tasks; 1 or more: a count.
            let (metric, actual) = if limit < 1.0 {
                ("max_flaky_rate", flaky / tasks.len() as f64)
            } else {
                ("max_flaky", flaky)
            };
            (actual > limit).then_some((metric, actual, limit))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::record::{TrialRecord, TrialStatus};
    use crate::spec::suite::WarningThresholds;

    fn attempt(trial: &str, attempt: u32, status: TrialStatus) -> TrialRecord {
        TrialRecord::for_test(trial, attempt, status)
    }

    fn checked(trials: &[TrialRecord], thresholds: &[(&str, ThresholdSet)]) -> Vec<Breach> {
        let metrics = super::super::metrics::compute(trials);
        let repeats = super::super::repeats::compute(trials);
        let t = thresholds.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        check(&metrics, &repeats, &t)
    }

    #[test]
    fn a_breach_is_reported_at_its_level_and_a_held_bound_is_not() {
        use TrialStatus::*;
        let trials = [attempt("golden::a", 1, Passed), attempt("golden::b", 1, Failed)];
        let golden = ThresholdSet {
            min_success_rate: Some(0.4),
            warning: Some(WarningThresholds {
                min_success_rate: Some(0.9),
                ..Default::default()
            }),
            ..Default::default()
        };
        let overall = ThresholdSet {
            max_avg_turns: Some(5.0),
            ..Default::default()
        };
        let adversarial = ThresholdSet {
            min_success_rate: Some(1.0),
            ..Default::default()
        };
        let b = checked(
            &trials,
            &[
                ("golden", golden.clone()),
                ("overall", overall),
                ("adversarial", adversarial),
            ],
        );
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            (b[0].scope.as_str(), b[0].metric, b[0].level),
            ("golden", "min_success_rate", Level::Warning)
        );
        assert_eq!(
            b[0].to_string(),
            "golden.min_success_rate: 50.0% is below the minimum 90.0% (warning)"
        );
        let strict = ThresholdSet {
            min_success_rate: Some(0.9),
            ..golden
        };
        let b = checked(&trials, &[("golden", strict)]);
        let levels: Vec<Level> = b.iter().map(|b| b.level).collect();
        assert_eq!(levels, [Level::Critical, Level::Warning], "critical first: {b:?}");
    }

    #[test]
    fn the_quality_bounds_count_and_missing_receipts_default_to_zero() {
        use TrialStatus::*;
        let mut lost = attempt("golden::a", 1, Passed);
        lost.quality.missing_receipts = 2;
        let mut liar = attempt("golden::b", 1, Failed);
        liar.quality.claimed_success = true;
        liar.quality.verification_failures = 3;
        let trials = [lost, liar];
        let b = checked(&trials, &[]);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            b[0].to_string(),
            "overall.max_missing_receipts: 2 is above the maximum 0"
        );
        assert!(b[0].is_critical());
        // Set at level warning, it is a warning only.
        let warn_only = ThresholdSet {
            max_false_success: Some(0.0),
            max_verification_failures: Some(3.0),
            warning: Some(WarningThresholds {
                max_missing_receipts: Some(0.0),
                ..Default::default()
            }),
            ..Default::default()
        };
        let b = checked(&trials, &[("overall", warn_only)]);
        let names: Vec<(&str, Level)> = b.iter().map(|b| (b.metric, b.level)).collect();
        assert_eq!(
            names,
            [
                ("max_false_success", Level::Critical),
                ("max_missing_receipts", Level::Warning)
            ],
            "{b:?}"
        );
    }

    #[test]
    fn the_false_positive_rate_warns_above_a_tenth_of_a_percent_unless_the_suite_says_otherwise() {
        use crate::log::correct::FalsePositiveRate;
        let trials = [attempt("golden::a", 1, TrialStatus::Passed)];
        let mut metrics = super::super::metrics::compute(&trials);
        let repeats = super::super::repeats::compute(&trials);
        let check_with = |m: &SuiteMetrics, t: &[(&str, ThresholdSet)]| {
            check(
                m,
                &repeats,
                &t.iter().map(|(k, v)| (k.to_string(), v.clone())).collect(),
            )
        };
        // Not read (an ungated run), or nothing corrected: nothing to say.
        assert!(check_with(&metrics, &[]).is_empty());
        metrics.overall.false_positives = Some(FalsePositiveRate {
            false_positives: 1,
            passed: 2000,
        });
        assert!(check_with(&metrics, &[]).is_empty(), "0.05% holds");
        let two = FalsePositiveRate {
            false_positives: 2,
            passed: 1000,
        };
        metrics.overall.false_positives = Some(two);
        metrics.by_category.get_mut("golden").unwrap().false_positives = Some(two);
        let b = check_with(&metrics, &[]);
        assert_eq!(b.len(), 1, "{b:?}");
        assert_eq!(
            b[0].to_string(),
            "overall.max_false_positive_rate: 0.20% is above the maximum 0.10% (warning)"
        );
        assert!(!b[0].is_critical(), "a warning by default");
        // The suite's own bound replaces the default, at its level; categories have theirs.
        let lenient = ThresholdSet {
            max_false_positive_rate: Some(0.01),
            ..Default::default()
        };
        assert!(check_with(&metrics, &[("overall", lenient)]).is_empty());
        let strict = ThresholdSet {
            max_false_positive_rate: Some(0.001),
            ..Default::default()
        };
        let b = check_with(&metrics, &[("golden", strict)]);
        let found: Vec<(&str, Level)> = b.iter().map(|b| (b.scope.as_str(), b.level)).collect();
        assert_eq!(
            found,
            [("golden", Level::Critical), ("overall", Level::Warning)],
            "{b:?}"
        );
    }

    #[test]
    fn max_flaky_is_a_count_or_a_fraction_of_the_scopes_tasks() {
        use TrialStatus::*;
        let trials = [
            attempt("golden::a", 1, Passed),
            attempt("golden::a", 2, Failed),
            attempt("golden::b", 1, Passed),
            attempt("golden::b", 2, Passed),
        ];
        let limit = |max: f64| {
            [(
                "golden",
                ThresholdSet {
                    max_flaky: Some(max),
                    ..Default::default()
                },
            )]
        };
        assert!(checked(&trials, &limit(1.0)).is_empty(), "1 flaky of at most 1");
        let b = checked(&trials, &limit(0.25));
        assert_eq!(b.len(), 1, "half the tasks are flaky: {b:?}");
        assert_eq!(b[0].metric, "max_flaky_rate");
        assert_eq!(b[0].actual, 0.5);
        assert!(checked(&trials, &limit(0.5)).is_empty());
    }
}
