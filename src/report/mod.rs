//! Suite results: metrics over all trials (success rate per category and overall, tool error
//! rate per tool, average turns, guard blocks, harness errors, tokens), the threshold check that
//! makes a run fail as a CI regression gate, and the text and JSON renderings.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::runner::{TaskResult, ToolTally, TrialVerdict};
use crate::spec::ThresholdSet;

/// Passed and total trials of one group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PassCount {
    pub passed: u32,
    pub total: u32,
}

impl PassCount {
    pub fn rate(&self) -> f64 {
        if self.total == 0 {
            1.0
        } else {
            f64::from(self.passed) / f64::from(self.total)
        }
    }
}

/// Metrics of one group of trials (a category, or all of them).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupMetrics {
    pub trials: PassCount,
    pub harness_errors: u32,
    pub tool_calls: u32,
    pub tool_errors: u32,
    pub turns: u32,
    pub guard_blocks: u32,
    pub input_tokens: u64,
    pub output_tokens: u64,
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
        if self.trials.total == 0 {
            0.0
        } else {
            f64::from(self.turns) / f64::from(self.trials.total)
        }
    }

    fn add(&mut self, r: &TaskResult) {
        self.trials.total += 1;
        if r.passed() {
            self.trials.passed += 1;
        }
        if matches!(r.verdict, TrialVerdict::HarnessError { .. }) {
            self.harness_errors += 1;
        }
        // Token counts are what agents reported: summed saturating, like every count here.
        let m = &r.metrics;
        let calls = m.by_tool.values().fold(0u32, |n, t| n.saturating_add(t.calls));
        let errors = m.by_tool.values().fold(0u32, |n, t| n.saturating_add(t.errors));
        self.tool_calls = self.tool_calls.saturating_add(calls);
        self.tool_errors = self.tool_errors.saturating_add(errors);
        self.turns = self.turns.saturating_add(m.turns);
        self.guard_blocks = self.guard_blocks.saturating_add(m.guard_blocks);
        self.input_tokens = self.input_tokens.saturating_add(m.usage.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(m.usage.output_tokens);
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
pub fn compute(results: &[TaskResult]) -> SuiteMetrics {
    let mut s = SuiteMetrics::default();
    for r in results {
        s.overall.add(r);
        s.by_category.entry(r.category.clone()).or_default().add(r);
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
            "max_tool_error_rate" => ("above the maximum", true),
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
/// threshold but no trials is not a breach (a filtered run may not include it).
pub fn check_thresholds(metrics: &SuiteMetrics, thresholds: &BTreeMap<String, ThresholdSet>) -> Vec<Breach> {
    let mut out = Vec::new();
    for (scope, set) in thresholds {
        let group = if scope == "overall" {
            Some(&metrics.overall)
        } else {
            metrics.by_category.get(scope)
        };
        let Some(g) = group else { continue };
        if g.trials.total == 0 {
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
    let harness = if o.harness_errors > 0 {
        format!(", {} harness errors", o.harness_errors)
    } else {
        String::new()
    };
    row(
        &mut s,
        "success rate",
        "overall",
        o.success_rate(),
        format!("{}/{} trials{harness}", o.trials.passed, o.trials.total),
    );
    for (cat, g) in &metrics.by_category {
        row(
            &mut s,
            "",
            cat,
            g.success_rate(),
            format!("{}/{}", g.trials.passed, g.trials.total),
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
        let _ = writeln!(s, "  tokens         {} in, {} out", o.input_tokens, o.output_tokens);
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

/// Ends a run: computes the metrics of `results`, checks `thresholds` when `gated` (whole
/// runs only), prints the metrics block, writes `<run_folder>/summary.json` and prints where it
/// is. Returns the breaches; the error is a summary that could not be written.
pub fn conclude(
    results: &[TaskResult],
    thresholds: &BTreeMap<String, ThresholdSet>,
    gated: bool,
    run_folder: &std::path::Path,
) -> Result<Vec<Breach>, String> {
    let metrics = compute(results);
    let breaches = if gated {
        check_thresholds(&metrics, thresholds)
    } else {
        Vec::new()
    };
    println!("\n{}", render_text(&metrics, gated.then_some(breaches.as_slice())));
    let summary = summary_json(&metrics, &breaches, results);
    std::fs::create_dir_all(run_folder)
        .and_then(|_| {
            std::fs::write(
                run_folder.join("summary.json"),
                crate::inert::json(&serde_json::to_string_pretty(&summary).unwrap_or_default()).as_ref(),
            )
        })
        .map_err(|e| format!("cannot write the run summary in {}: {e}", run_folder.display()))?;
    println!("  run folder     {}", crate::inert::line(&run_folder.to_string_lossy()));
    Ok(breaches)
}

/// The run summary as JSON (written to `<run>/summary.json`).
pub fn summary_json(metrics: &SuiteMetrics, breaches: &[Breach], results: &[TaskResult]) -> serde_json::Value {
    let trials: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            serde_json::json!({
                "trial": r.trial,
                "attempt": r.attempt,
                "passed": r.passed(),
                "harness_error": matches!(r.verdict, TrialVerdict::HarnessError { .. }),
                "outcome": r.outcome,
                "agent": r.agent,
                "run_dir": r.run_dir,
                "failure": r.failure_message(),
            })
        })
        .collect();
    serde_json::json!({ "metrics": metrics, "breaches": breaches, "trials": trials })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::{AttemptMetrics, Mismatch};
    use std::path::PathBuf;

    fn result(category: &str, passed: bool, calls: u32, errors: u32, turns: u32) -> TaskResult {
        let mut metrics = AttemptMetrics {
            turns,
            ..Default::default()
        };
        metrics.by_tool.insert("bash".into(), ToolTally { calls, errors });
        TaskResult {
            trial: format!("{category}::t"),
            category: category.into(),
            description: String::new(),
            attempt: 1,
            agent: "oracle".into(),
            verdict: if passed {
                TrialVerdict::Passed
            } else {
                TrialVerdict::Failed(vec![Mismatch {
                    what: "expect.outcome".into(),
                    expected: "success".into(),
                    actual: "failure".into(),
                    diff: None,
                }])
            },
            outcome: None,
            metrics,
            run_dir: PathBuf::from("/tmp/x"),
        }
    }

    #[test]
    fn rates_are_computed_per_category_and_overall() {
        let results = vec![
            result("golden", true, 2, 0, 2),
            result("golden", false, 2, 1, 4),
            result("regression", true, 4, 1, 3),
        ];
        let m = compute(&results);
        assert_eq!(m.overall.trials, PassCount { passed: 2, total: 3 });
        assert_eq!(m.by_category["golden"].trials, PassCount { passed: 1, total: 2 });
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
