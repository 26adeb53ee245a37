//! Suite metrics over finished trials (success rate per category and overall, tool error rate
//! per tool, average turns, guard blocks, tokens), the threshold check that makes a run fail as a
//! CI regression gate, and the text rendering. Infrastructure errors are counted apart: the
//! agent's metrics are computed over the trials that were judged.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::record::{TrialRecord, TrialStatus};
use crate::runner::ToolTally;
use crate::spec::ThresholdSet;

/// Trials of one group by how they ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TrialCounts {
    pub passed: u32,
    /// The agent's failures.
    pub failed: u32,
    /// Trials the harness could not run: counted apart, in no rate.
    pub infrastructure: u32,
    /// Trials whose model ran out of context window: counted apart from the agent's failures,
    /// in no rate (their tokens and cost still count).
    #[serde(default)]
    pub context_length_exceeded: u32,
}

impl TrialCounts {
    /// Trials that were judged (passed or failed).
    pub fn judged(&self) -> u32 {
        self.passed.saturating_add(self.failed)
    }

    pub fn total(&self) -> u32 {
        self.judged()
            .saturating_add(self.infrastructure)
            .saturating_add(self.context_length_exceeded)
    }

    /// Passed among the judged trials (1.0 when none was judged).
    pub fn rate(&self) -> f64 {
        if self.judged() == 0 {
            1.0
        } else {
            f64::from(self.passed) / f64::from(self.judged())
        }
    }
}

/// Metrics of one group of trials (a category, or all of them). Everything but
/// `trials.infrastructure` is computed over the judged trials: a trial the harness could not
/// run says nothing about the agent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupMetrics {
    pub trials: TrialCounts,
    pub tool_calls: u32,
    pub tool_errors: u32,
    pub turns: u32,
    pub guard_blocks: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Model agents' exchanges, retries, cached tokens and cost, summed.
    pub model: crate::runner::ModelMetrics,
}

impl GroupMetrics {
    pub fn success_rate(&self) -> f64 {
        self.trials.rate()
    }

    pub fn tool_error_rate(&self) -> f64 {
        if self.tool_calls == 0 {
            0.0
        } else {
            f64::from(self.tool_errors) / f64::from(self.tool_calls)
        }
    }

    pub fn avg_turns(&self) -> f64 {
        if self.trials.judged() == 0 {
            0.0
        } else {
            f64::from(self.turns) / f64::from(self.trials.judged())
        }
    }

    fn add(&mut self, r: &TrialRecord) {
        let m = &r.metrics;
        let count = match r.status {
            TrialStatus::Passed => &mut self.trials.passed,
            TrialStatus::Failed if m.context_length_exceeded => &mut self.trials.context_length_exceeded,
            TrialStatus::Failed => &mut self.trials.failed,
            TrialStatus::Infrastructure => &mut self.trials.infrastructure,
        };
        *count = count.saturating_add(1);
        if r.status == TrialStatus::Infrastructure {
            return;
        }
        // What the model cost is spent whatever the trial's end.
        if let Some(model) = &m.model {
            self.model.merge(model);
        }
        self.input_tokens = self.input_tokens.saturating_add(m.usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(m.usage.output_tokens);
        if m.context_length_exceeded && r.status == TrialStatus::Failed {
            return;
        }
        // Token counts are what agents reported: summed saturating, like every count here.
        let calls = m.by_tool.values().fold(0u32, |n, t| n.saturating_add(t.calls));
        let errors = m.by_tool.values().fold(0u32, |n, t| n.saturating_add(t.errors));
        self.tool_calls = self.tool_calls.saturating_add(calls);
        self.tool_errors = self.tool_errors.saturating_add(errors);
        self.turns = self.turns.saturating_add(m.turns);
        self.guard_blocks = self.guard_blocks.saturating_add(m.guard_blocks);
    }
}

/// Metrics of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SuiteMetrics {
    pub overall: GroupMetrics,
    pub by_category: BTreeMap<String, GroupMetrics>,
    pub by_tool: BTreeMap<String, ToolTally>,
}

/// Computes the suite metrics of `results`.
pub fn compute(results: &[TrialRecord]) -> SuiteMetrics {
    let mut s = SuiteMetrics::default();
    for r in results {
        s.overall.add(r);
        s.by_category.entry(r.category.clone()).or_default().add(r);
        if r.status == TrialStatus::Infrastructure
            || (r.status == TrialStatus::Failed && r.metrics.context_length_exceeded)
        {
            continue;
        }
        for (tool, t) in &r.metrics.by_tool {
            let e = s.by_tool.entry(tool.clone()).or_default();
            e.calls = e.calls.saturating_add(t.calls);
            e.errors = e.errors.saturating_add(t.errors);
        }
    }
    s
}

/// A threshold the run did not meet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Breach {
    /// `overall` or a category.
    pub scope: String,
    pub metric: &'static str,
    pub limit: f64,
    pub actual: f64,
}

impl std::fmt::Display for Breach {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (cmp, pct) = match self.metric {
            "min_success_rate" => ("below the minimum", true),
            super::compare::BASELINE_METRIC => ("a regression from the baseline's", true),
            "max_tool_error_rate" | "max_flaky_rate" => ("above the maximum", true),
            _ => ("above the maximum", false),
        };
        if pct {
            write!(
                f,
                "{}.{}: {:.1}% is {cmp} {:.1}%",
                self.scope,
                self.metric,
                self.actual * 100.0,
                self.limit * 100.0
            )
        } else {
            write!(
                f,
                "{}.{}: {:.2} is {cmp} {:.2}",
                self.scope, self.metric, self.actual, self.limit
            )
        }
    }
}

/// Checks `thresholds` (keys: `overall` or a category) against `metrics`. A category with a
/// threshold but no judged trials is not a breach (a filtered run may not include it; the
/// infrastructure errors of a run fail it on their own).
pub fn check_thresholds(metrics: &SuiteMetrics, thresholds: &BTreeMap<String, ThresholdSet>) -> Vec<Breach> {
    let mut out = Vec::new();
    for (scope, set) in thresholds {
        let group = if scope == "overall" {
            Some(&metrics.overall)
        } else {
            metrics.by_category.get(scope)
        };
        let Some(g) = group else { continue };
        if g.trials.judged() == 0 {
            continue;
        }
        if let Some(min) = set.min_success_rate {
            if g.success_rate() < min {
                out.push(Breach {
                    scope: scope.clone(),
                    metric: "min_success_rate",
                    limit: min,
                    actual: g.success_rate(),
                });
            }
        }
        if let Some(max) = set.max_tool_error_rate {
            if g.tool_error_rate() > max {
                out.push(Breach {
                    scope: scope.clone(),
                    metric: "max_tool_error_rate",
                    limit: max,
                    actual: g.tool_error_rate(),
                });
            }
        }
        if let Some(max) = set.max_avg_turns {
            if g.avg_turns() > max {
                out.push(Breach {
                    scope: scope.clone(),
                    metric: "max_avg_turns",
                    limit: max,
                    actual: g.avg_turns(),
                });
            }
        }
    }
    out
}

/// The metrics block printed after a run.
/// `breaches` is `None` when the thresholds were not checked (a narrowed run).
pub fn render_text(metrics: &SuiteMetrics, breaches: Option<&[Breach]>) -> String {
    let mut s = String::new();
    let o = &metrics.overall;
    // One column width for every name, so the rates line up.
    let width = metrics
        .by_category
        .keys()
        .chain(metrics.by_tool.keys())
        .map(String::len)
        .chain([7])
        .max()
        .unwrap_or(7)
        + 1;
    // Category and tool names come from folder names and from agents: shown inert.
    let row = |s: &mut String, label: &str, name: &str, rate: f64, detail: String| {
        let name = crate::inert::line(name);
        let _ = writeln!(s, "  {label:<14} {name:<width$}{:>6.1}%  ({detail})", rate * 100.0);
    };
    let _ = writeln!(s, "medin metrics");
    let infrastructure = |t: &TrialCounts| {
        let mut apart = match t.infrastructure {
            0 => String::new(),
            1 => ", 1 infrastructure error not counted".to_string(),
            n => format!(", {n} infrastructure errors not counted"),
        };
        match t.context_length_exceeded {
            0 => {}
            1 => apart.push_str(", 1 context length exceeded not counted"),
            n => apart.push_str(&format!(", {n} context lengths exceeded not counted")),
        }
        apart
    };
    row(
        &mut s,
        "success rate",
        "overall",
        o.success_rate(),
        format!(
            "{}/{} trials{}",
            o.trials.passed,
            o.trials.judged(),
            infrastructure(&o.trials)
        ),
    );
    for (cat, g) in &metrics.by_category {
        row(
            &mut s,
            "",
            cat,
            g.success_rate(),
            format!("{}/{}{}", g.trials.passed, g.trials.judged(), infrastructure(&g.trials)),
        );
    }
    row(
        &mut s,
        "tool errors",
        "overall",
        o.tool_error_rate(),
        format!("{}/{} calls", o.tool_errors, o.tool_calls),
    );
    for (tool, t) in &metrics.by_tool {
        let rate = if t.calls == 0 {
            0.0
        } else {
            f64::from(t.errors) / f64::from(t.calls)
        };
        row(&mut s, "", tool, rate, format!("{}/{}", t.errors, t.calls));
    }
    let _ = writeln!(s, "  average turns  {:.2}", o.avg_turns());
    let _ = writeln!(s, "  guard blocks   {}", o.guard_blocks);
    if o.input_tokens > 0 || o.output_tokens > 0 {
        let cached = match o.model.cached_input_tokens {
            0 => String::new(),
            n => format!(" ({n} cached)"),
        };
        let _ = writeln!(
            s,
            "  tokens         {} in{cached}, {} out",
            o.input_tokens, o.output_tokens
        );
    }
    if o.model.calls > 0 {
        let _ = writeln!(s, "  model calls    {} ({} retries)", o.model.calls, o.model.retries);
        let mut cost = format!("${:.4}", o.model.cost_usd);
        if o.model.cost_estimated {
            cost.push_str(" (estimate from list prices)");
        }
        if o.model.unpriced_calls > 0 {
            cost.push_str(&format!(
                ", {} calls without a price not counted; set `price` on the agent",
                o.model.unpriced_calls
            ));
        }
        let _ = writeln!(s, "  cost           {cost}");
    }
    match breaches {
        None => {
            let _ = writeln!(s, "  thresholds     not checked: the run was narrowed by a filter");
        }
        Some([]) => {
            let _ = writeln!(s, "  thresholds     all held");
        }
        Some(breaches) => {
            let _ = writeln!(s, "  thresholds     {} breached:", breaches.len());
            for b in breaches {
                let _ = writeln!(s, "    - {b}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::AttemptMetrics;

    fn with_status(category: &str, status: TrialStatus, calls: u32, errors: u32, turns: u32) -> TrialRecord {
        let mut metrics = AttemptMetrics {
            turns,
            ..Default::default()
        };
        metrics.by_tool.insert("bash".into(), ToolTally { calls, errors });
        TrialRecord {
            metrics,
            ..TrialRecord::for_test(&format!("{category}::t"), 1, status)
        }
    }

    fn result(category: &str, passed: bool, calls: u32, errors: u32, turns: u32) -> TrialRecord {
        let status = if passed {
            TrialStatus::Passed
        } else {
            TrialStatus::Failed
        };
        with_status(category, status, calls, errors, turns)
    }

    #[test]
    fn infrastructure_errors_are_counted_apart_and_in_no_rate() {
        let results = vec![
            result("golden", true, 2, 0, 2),
            with_status("golden", TrialStatus::Infrastructure, 5, 5, 9),
            with_status("regression", TrialStatus::Infrastructure, 1, 1, 1),
        ];
        let m = compute(&results);
        let counts = TrialCounts {
            passed: 1,
            failed: 0,
            infrastructure: 2,
            context_length_exceeded: 0,
        };
        assert_eq!(m.overall.trials, counts);
        assert_eq!(m.overall.trials.total(), 3);
        assert!((m.overall.success_rate() - 1.0).abs() < 1e-9);
        assert_eq!(
            m.overall.tool_calls, 2,
            "the broken trials' calls say nothing about the agent"
        );
        assert!((m.overall.avg_turns() - 2.0).abs() < 1e-9);
        assert_eq!(m.by_tool["bash"], ToolTally { calls: 2, errors: 0 });
        // A category with infrastructure errors only is not judged, so not gated.
        let mut t = BTreeMap::new();
        t.insert(
            "regression".to_string(),
            ThresholdSet {
                min_success_rate: Some(1.0),
                ..Default::default()
            },
        );
        assert!(check_thresholds(&m, &t).is_empty());
        let text = render_text(&m, None);
        assert!(
            text.contains("1/1 trials, 2 infrastructure errors not counted"),
            "{text}"
        );
        assert!(text.contains("0/0, 1 infrastructure error not counted"), "{text}");
    }

    #[test]
    fn rates_are_computed_per_category_and_overall() {
        let results = vec![
            result("golden", true, 2, 0, 2),
            result("golden", false, 2, 1, 4),
            result("regression", true, 4, 1, 3),
        ];
        let m = compute(&results);
        let counts = |passed, failed| TrialCounts {
            passed,
            failed,
            infrastructure: 0,
            context_length_exceeded: 0,
        };
        assert_eq!(m.overall.trials, counts(2, 1));
        assert_eq!(m.by_category["golden"].trials, counts(1, 1));
        assert!((m.overall.tool_error_rate() - 0.25).abs() < 1e-9);
        assert!((m.overall.avg_turns() - 3.0).abs() < 1e-9);
        assert_eq!(m.by_tool["bash"], ToolTally { calls: 8, errors: 2 });
    }

    #[test]
    fn a_threshold_breach_is_reported_and_a_held_one_is_not() {
        let results = vec![result("golden", true, 1, 0, 1), result("golden", false, 1, 1, 1)];
        let m = compute(&results);
        let mut t = BTreeMap::new();
        t.insert(
            "golden".to_string(),
            ThresholdSet {
                min_success_rate: Some(0.9),
                ..Default::default()
            },
        );
        t.insert(
            "overall".to_string(),
            ThresholdSet {
                max_avg_turns: Some(5.0),
                ..Default::default()
            },
        );
        t.insert(
            "adversarial".to_string(),
            ThresholdSet {
                min_success_rate: Some(1.0),
                ..Default::default()
            },
        );
        let breaches = check_thresholds(&m, &t);
        assert_eq!(breaches.len(), 1, "{breaches:?}");
        assert_eq!(breaches[0].scope, "golden");
        assert_eq!(breaches[0].metric, "min_success_rate");
        assert!(breaches[0].to_string().contains("50.0% is below the minimum 90.0%"));
        let text = render_text(&m, Some(&breaches));
        assert!(text.contains("1 breached"), "{text}");
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        let mut a = result("golden", true, u32::MAX, u32::MAX, u32::MAX);
        a.metrics.usage.input_tokens = u64::MAX;
        a.metrics.usage.output_tokens = u64::MAX - 1;
        let m = compute(&[a.clone(), a]);
        assert_eq!(m.overall.input_tokens, u64::MAX);
        assert_eq!(m.overall.output_tokens, u64::MAX);
        assert_eq!(m.overall.turns, u32::MAX);
        assert_eq!(m.by_tool["bash"].calls, u32::MAX);
        assert!(render_text(&m, None).contains(&format!("{} in, {} out", u64::MAX, u64::MAX)));
    }

    #[test]
    fn tool_error_rate_threshold_fires_above_the_maximum() {
        let m = compute(&[result("regression", true, 10, 3, 2)]);
        let mut t = BTreeMap::new();
        t.insert(
            "overall".to_string(),
            ThresholdSet {
                max_tool_error_rate: Some(0.2),
                ..Default::default()
            },
        );
        let b = check_thresholds(&m, &t);
        assert_eq!(b.len(), 1);
        assert!((b[0].actual - 0.3).abs() < 1e-9);
    }
}
