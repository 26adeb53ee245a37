//! Suite metrics over finished trials — success rate per category and overall, tool error rate
//! per tool, average turns, guard blocks, tokens, and the framework's quality metrics: tokens
//! per success, time to first correct, false-success claims, verification failures, missing
//! receipts, errors per error code and per-tool latency — and their text rendering.
//! Infrastructure errors are counted apart: the agent's metrics are computed over the trials
//! that were judged. Each attempt's quality was measured once, when it finished
//! ([`super::quality`]); here they are only added up. The thresholds are checked by
//! [`super::thresholds`].

use std::collections::BTreeMap;
use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::record::{TrialRecord, TrialStatus};
use super::stats::LatencyStats;
pub use super::thresholds::Breach;
use crate::runner::ToolTally;

/// Trials of one group by how they ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
/// `trials.infrastructure` and `missing_receipts` is computed over the judged trials: a trial
/// the harness could not run says nothing about the agent (but its log may still have lost a
/// receipt).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    /// Tokens (input + output, of every trial whose tokens count) per passed trial; `None`
    /// when none passed.
    #[serde(default)]
    pub tokens_per_success: Option<f64>,
    /// Time to first correct over the judged trials that had one (see
    /// [`super::quality::AttemptQuality::time_to_first_correct_ms`]).
    #[serde(default)]
    pub time_to_first_correct: Option<LatencyStats>,
    /// Trials whose agent claimed success and that failed.
    #[serde(default)]
    pub false_success: u32,
    /// Failed `verify` calls and failed validations.
    #[serde(default)]
    pub verification_failures: u32,
    /// Tool calls without a receipt, over every trial (infrastructure errors too).
    #[serde(default)]
    pub missing_receipts: u32,
    /// Error codes of the agent's receipts, counted per code.
    #[serde(default)]
    pub errors_by_code: BTreeMap<String, u32>,
    /// The verifiers' rewards (tasks with `verify:`), summed over the judged trials that have
    /// one, and how many those are: [`GroupMetrics::mean_reward`] beside the success rate.
    #[serde(default)]
    pub reward_sum: f64,
    #[serde(default)]
    pub rewarded: u32,
    /// Activity-log entries corrected as false positives (`medin log correct ID
    /// --false-positive`) among the task entries that said passed: of the whole log and its
    /// archives (for a category, its entries), not of this run alone, since corrections come
    /// after a run. `None` when the run was not gated (a narrowed run does not read the log) or
    /// no entry said passed.
    #[serde(default)]
    pub false_positives: Option<crate::log::correct::FalsePositiveRate>,
}

impl GroupMetrics {
    pub fn success_rate(&self) -> f64 {
        self.trials.rate()
    }

    /// The mean verifier reward over the trials that have one.
    pub fn mean_reward(&self) -> Option<f64> {
        (self.rewarded > 0).then(|| self.reward_sum / f64::from(self.rewarded))
    }

    /// Corrected false positives among the log's passed entries (see
    /// [`GroupMetrics::false_positives`]).
    pub fn false_positive_rate(&self) -> Option<f64> {
        self.false_positives.map(|f| f.rate())
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

    fn add(&mut self, r: &TrialRecord, first_correct: &mut Vec<u64>) {
        let m = &r.metrics;
        let count = match r.status {
            TrialStatus::Passed => &mut self.trials.passed,
            TrialStatus::Failed if m.context_length_exceeded => &mut self.trials.context_length_exceeded,
            TrialStatus::Failed => &mut self.trials.failed,
            TrialStatus::Infrastructure => &mut self.trials.infrastructure,
        };
        *count = count.saturating_add(1);
        // A lost receipt is a fact about the log, whoever's failure the trial was.
        self.missing_receipts = self.missing_receipts.saturating_add(r.quality.missing_receipts);
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
        let q = &r.quality;
        self.false_success = self.false_success.saturating_add(u32::from(r.false_success()));
        self.verification_failures = self.verification_failures.saturating_add(q.verification_failures);
        for (code, n) in &q.errors_by_code {
            let e = self.errors_by_code.entry(code.clone()).or_default();
            *e = e.saturating_add(*n);
        }
        first_correct.extend(q.time_to_first_correct_ms);
        if let Some(reward) = m.reward.filter(|r| r.is_finite()) {
            self.reward_sum += reward.clamp(0.0, 1.0);
            self.rewarded = self.rewarded.saturating_add(1);
        }
    }

    /// The figures that need every trial of the group.
    fn conclude(&mut self, first_correct: &[u64]) {
        self.tokens_per_success = (self.trials.passed > 0)
            .then(|| self.input_tokens.saturating_add(self.output_tokens) as f64 / f64::from(self.trials.passed));
        self.time_to_first_correct = LatencyStats::of(first_correct);
    }
}

/// Metrics of a whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteMetrics {
    pub overall: GroupMetrics,
    pub by_category: BTreeMap<String, GroupMetrics>,
    pub by_tool: BTreeMap<String, ToolTally>,
    /// Per tool: count, p50, p95 and maximum of the agent's call durations (judged trials).
    #[serde(default)]
    pub tool_latency: BTreeMap<String, LatencyStats>,
    /// Per task tag, the metrics of the trials whose task carries it: `files`, and the
    /// metadata tags imported benchmarks carry (`difficulty:hard`,
    /// `category:software-engineering`), which the printed metrics break the success rate
    /// down by ([`SuiteMetrics::by_metadata`]).
    #[serde(default)]
    pub by_tag: BTreeMap<String, GroupMetrics>,
}

impl SuiteMetrics {
    /// The metadata tags (`key:value`), grouped by key: `difficulty` → `hard` → its metrics.
    pub fn by_metadata(&self) -> BTreeMap<&str, BTreeMap<&str, &GroupMetrics>> {
        let mut out: BTreeMap<&str, BTreeMap<&str, &GroupMetrics>> = BTreeMap::new();
        for (tag, g) in &self.by_tag {
            if let Some((key, value)) = tag.split_once(':').filter(|(k, v)| !k.is_empty() && !v.is_empty()) {
                out.entry(key).or_default().insert(value, g);
            }
        }
        out
    }
}

impl SuiteMetrics {
    /// Adds the false-positive rates of the activity log `log` (see
    /// [`GroupMetrics::false_positives`]): overall, and for each category of the run. A log
    /// that cannot be read, or has no passed entry, adds nothing.
    pub fn add_false_positives(&mut self, log: &crate::log::ActivityLog) {
        let Some((overall, by_category)) = crate::log::correct::false_positive_rates(log) else {
            return;
        };
        self.overall.false_positives = Some(overall);
        for (category, g) in &mut self.by_category {
            g.false_positives = by_category.get(category).copied();
        }
    }
}

/// Computes the suite metrics of `results`.
pub fn compute(results: &[TrialRecord]) -> SuiteMetrics {
    let mut s = SuiteMetrics::default();
    let mut first_correct: BTreeMap<Option<&str>, Vec<u64>> = BTreeMap::new();
    let mut tag_first_correct: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    let mut latency: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for r in results {
        s.overall.add(r, first_correct.entry(None).or_default());
        s.by_category
            .entry(r.category.clone())
            .or_default()
            .add(r, first_correct.entry(Some(&r.category)).or_default());
        let mut tags: Vec<&String> = r.tags.iter().collect();
        tags.sort();
        tags.dedup();
        for tag in tags {
            s.by_tag
                .entry(tag.clone())
                .or_default()
                .add(r, tag_first_correct.entry(tag).or_default());
        }
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
        for (tool, samples) in &r.quality.tool_latency_ms {
            latency.entry(tool).or_default().extend(samples);
        }
    }
    let none = Vec::new();
    s.overall.conclude(first_correct.get(&None).unwrap_or(&none));
    for (category, g) in &mut s.by_category {
        g.conclude(first_correct.get(&Some(category.as_str())).unwrap_or(&none));
    }
    for (tag, g) in &mut s.by_tag {
        g.conclude(tag_first_correct.get(tag.as_str()).unwrap_or(&none));
    }
    s.tool_latency = latency
        .into_iter()
        .filter_map(|(tool, samples)| Some((tool.to_string(), LatencyStats::of(&samples)?)))
        .collect();
    s
}

/// The metrics block printed after a run.
/// `breaches` is `None` when the thresholds were not checked (a narrowed run).
pub fn render_text(metrics: &SuiteMetrics, breaches: Option<&[Breach]>) -> String {
    let mut s = String::new();
    let o = &metrics.overall;
    // One column width for every name, so the rates line up.
    let metadata = metrics.by_metadata();
    let width = metrics
        .by_category
        .keys()
        .chain(metrics.by_tool.keys())
        .map(String::len)
        .chain(metadata.values().flat_map(|values| values.keys().map(|v| v.len())))
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
    // Imported benchmarks' metadata (`difficulty:hard`): the success rate per value.
    for (key, values) in &metadata {
        let mut label = format!("by {}", crate::inert::line(key));
        if label.chars().count() > 14 {
            label = label.chars().take(13).collect::<String>() + "…";
        }
        for (value, g) in values {
            row(
                &mut s,
                &label,
                value,
                g.success_rate(),
                format!("{}/{}{}", g.trials.passed, g.trials.judged(), infrastructure(&g.trials)),
            );
            label.clear();
        }
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
    if let Some(mean) = o.mean_reward() {
        let _ = writeln!(
            s,
            "  mean reward    {mean:.3} over {} verified trial{}{}",
            o.rewarded,
            if o.rewarded == 1 { "" } else { "s" },
            per_category(metrics, |g| g.mean_reward().map(|v| format!("{v:.3}")))
        );
    }
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
        if let Some(per) = o.tokens_per_success {
            let _ = writeln!(
                s,
                "  tokens/success {per:.1}{}",
                per_category(metrics, |g| g.tokens_per_success.map(|v| format!("{v:.1}")))
            );
        }
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
    if let Some(t) = &o.time_to_first_correct {
        let _ = writeln!(
            s,
            "  first correct  p50 {} ms, p95 {} ms, max {} ms ({} trial{})",
            t.p50_ms,
            t.p95_ms,
            t.max_ms,
            t.count,
            if t.count == 1 { "" } else { "s" }
        );
    }
    let nonzero = |n: u32| (n > 0).then(|| n.to_string());
    let _ = writeln!(
        s,
        "  false success  {}{}",
        o.false_success,
        per_category(metrics, |g| nonzero(g.false_success))
    );
    let _ = writeln!(
        s,
        "  verify failed  {}{}",
        o.verification_failures,
        per_category(metrics, |g| nonzero(g.verification_failures))
    );
    if let Some(fp) = o.false_positives {
        let _ = writeln!(
            s,
            "  false pos.     {:.2}% ({} of {} passed in the activity log corrected){}",
            fp.rate() * 100.0,
            fp.false_positives,
            fp.passed,
            per_category(metrics, |g| g
                .false_positives
                .filter(|f| f.false_positives > 0)
                .map(|f| format!("{:.2}%", f.rate() * 100.0)))
        );
    }
    let _ = writeln!(
        s,
        "  no receipt     {} tool call{}{}",
        o.missing_receipts,
        if o.missing_receipts == 1 { "" } else { "s" },
        per_category(metrics, |g| nonzero(g.missing_receipts))
    );
    if !o.errors_by_code.is_empty() {
        let codes: Vec<String> = o
            .errors_by_code
            .iter()
            .map(|(code, n)| format!("{} {n}", crate::inert::line(code)))
            .collect();
        let _ = writeln!(s, "  error codes    {}", codes.join(", "));
    }
    let mut label = "latency";
    for (tool, l) in &metrics.tool_latency {
        let _ = writeln!(
            s,
            "  {label:<14} {:<width$}p50 {} ms, p95 {} ms, max {} ms ({} call{})",
            crate::inert::line(tool),
            l.p50_ms,
            l.p95_ms,
            l.max_ms,
            l.count,
            if l.count == 1 { "" } else { "s" }
        );
        label = "";
    }
    let (critical, warnings): (Vec<&Breach>, Vec<&Breach>) =
        breaches.unwrap_or_default().iter().partition(|b| b.is_critical());
    match breaches {
        None => {
            let _ = writeln!(s, "  thresholds     not checked: the run was narrowed by a filter");
        }
        Some(_) if critical.is_empty() && warnings.is_empty() => {
            let _ = writeln!(s, "  thresholds     all held");
        }
        Some(_) if critical.is_empty() => {
            let _ = writeln!(s, "  thresholds     every critical one held");
        }
        Some(_) => {
            let _ = writeln!(s, "  thresholds     {} breached:", critical.len());
            for b in critical {
                let _ = writeln!(s, "    - {b}");
            }
        }
    }
    if !warnings.is_empty() {
        let _ = writeln!(s, "  warnings       {}:", warnings.len());
        for b in warnings {
            let _ = writeln!(s, "    - {b}");
        }
    }
    s
}

/// ` (golden 2, regression 1)`: a figure per category, for the categories that have one.
fn per_category(metrics: &SuiteMetrics, figure: impl Fn(&GroupMetrics) -> Option<String>) -> String {
    let parts: Vec<String> = metrics
        .by_category
        .iter()
        .filter_map(|(cat, g)| Some(format!("{} {}", crate::inert::line(cat), figure(g)?)))
        .collect();
    if parts.is_empty() || metrics.by_category.len() < 2 {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::AttemptMetrics;
    use crate::spec::ThresholdSet;

    fn check_thresholds(m: &SuiteMetrics, t: &BTreeMap<String, ThresholdSet>) -> Vec<Breach> {
        super::super::thresholds::check(m, &super::super::repeats::compute(&[]), t)
    }

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
    fn tags_group_the_trials_and_metadata_tags_break_the_success_rate_down() {
        let tagged = |passed: bool, tags: &[&str]| {
            let mut r = result("imported", passed, 1, 0, 1);
            r.tags = tags.iter().map(|t| t.to_string()).collect();
            r
        };
        let m = compute(&[
            tagged(true, &["difficulty:easy", "files", "files"]),
            tagged(false, &["difficulty:hard", "category:debugging"]),
            tagged(true, &["difficulty:hard", "category:debugging"]),
        ]);
        let counts = |tag: &str| (m.by_tag[tag].trials.passed, m.by_tag[tag].trials.judged());
        assert_eq!(counts("files"), (1, 1), "a tag written twice counts once");
        assert_eq!(counts("difficulty:hard"), (1, 2));
        assert_eq!(counts("category:debugging"), (1, 2));
        let metadata = m.by_metadata();
        assert_eq!(metadata.keys().copied().collect::<Vec<_>>(), ["category", "difficulty"]);
        assert_eq!(
            metadata["difficulty"].keys().copied().collect::<Vec<_>>(),
            ["easy", "hard"]
        );
        let text = render_text(&m, None);
        assert!(
            text.contains("  by difficulty  easy       100.0%  (1/1)\n                 hard        50.0%  (1/2)\n"),
            "{text}"
        );
        assert!(text.contains("  by category    debugging   50.0%  (1/2)\n"), "{text}");
        assert!(!text.contains("files "), "plain tags are in the JSON only: {text}");
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
    fn the_activity_logs_false_positive_rate_is_read_per_category_and_printed() {
        let dir = tempfile::tempdir().unwrap();
        let log = crate::log::ActivityLog::new(dir.path().join("ACTIVITY_LOG.md"));
        let mut m = compute(&[result("golden", true, 1, 0, 1), result("regression", true, 1, 0, 1)]);
        m.add_false_positives(&log);
        assert_eq!(m.overall.false_positives, None, "an empty log has no rate");
        assert!(!render_text(&m, None).contains("false pos."));
        let entry = |task: &str, category: &str| crate::log::ActivityEntry {
            timestamp: chrono::Utc::now(),
            task_id: task.into(),
            category: category.into(),
            kind: crate::log::EntryKind::Task,
            status: crate::log::EntryStatus::Passed,
            outcome: Some("success".into()),
            duration_ms: 1,
            attempt: 1,
            run_id: "r1".into(),
            run_dir: "runs/r1".into(),
            agent: "oracle".into(),
            description: "d".into(),
            validations: Vec::new(),
            failures: Vec::new(),
            correction: None,
        };
        for (task, category) in [
            ("golden::a", "golden"),
            ("golden::b", "golden"),
            ("regression::c", "regression"),
        ] {
            log.append(&entry(task, category)).unwrap();
        }
        let (entries, _) = crate::log::query::query(&log, &Default::default()).unwrap();
        let id = entries.iter().find(|e| e.task_id == "golden::b").unwrap().id();
        crate::log::correct::correct_false_positive(&log, &id, "the file was empty").unwrap();
        m.add_false_positives(&log);
        let fp = |g: &GroupMetrics| g.false_positives.map(|f| (f.false_positives, f.passed));
        assert_eq!(fp(&m.overall), Some((1, 3)));
        assert_eq!(fp(&m.by_category["golden"]), Some((1, 2)));
        assert_eq!(fp(&m.by_category["regression"]), Some((0, 1)));
        let text = render_text(&m, None);
        assert!(
            text.contains("  false pos.     33.33% (1 of 3 passed in the activity log corrected) (golden 50.00%)"),
            "{text}"
        );
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(
            json["overall"]["false_positives"],
            serde_json::json!({ "false_positives": 1, "passed": 3 })
        );
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
