//! The page: one self-contained HTML document for one concluded run — a header with the
//! verdict, the metrics as cards, the charts ([`super::charts`]), the sortable table of
//! trials, and per trial a `<details>` section (facts, the expectation diffs, the validations,
//! the timeline of actions and messages). Inline CSS and script only; every text of the run
//! goes through [`super::escape`].
//!
//! Stable hooks for tests and tools: `#trials` (the table; `th[data-key]`, `tr[data-row]
//! [data-trial][data-attempt][data-status][data-outcome]`), `#medin-trials` (the rows as JSON),
//! `details.trial#trial-N` with the same data attributes, `.diff[data-expectation]`,
//! `ol.timeline > li.action[data-seq][data-tool]`, `table.validations`, and the charts
//! `#chart-success`, `#chart-tokens`, `#chart-duration`.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use super::charts::{self, Bar, Chart, Segment};
use super::escape::{html, html_clipped, script_json};
use super::load::{AttemptDetails, Direction, Entry, Message};
use crate::exit::ExitStatus;
use crate::report::record::{TrialRecord, TrialStatus};
use crate::report::RunConclusion;
use crate::runner::ActionRecord;

/// The page's stylesheet and script, inlined.
const STYLE: &str = include_str!("report.css");
const SCRIPT: &str = include_str!("report.js");

/// Bytes of one text block (output, file content, a message) shown before it is cut.
const TEXT_BLOCK: usize = 2000;
/// Bytes of a short value shown inline.
const INLINE: usize = 160;
/// Bars of a per-task chart (the largest).
const TASK_BARS: usize = 25;

/// The whole page for `run`; `details` gives what is shown of each trial attempt (read from
/// its folder, or made by hand in tests), one at a time.
pub(super) fn render(run: &RunConclusion, details: &mut dyn FnMut(&TrialRecord) -> AttemptDetails) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = format!("medin report · {}", run.run_id);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"medin {}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<main>\n",
        content_security_policy(),
        env!("CARGO_PKG_VERSION"),
        html(&title)
    );
    out.push_str(&header(run));
    out.push_str(&charts_section(run));
    out.push_str(&table(run));
    out.push_str("<section id=\"details\">\n<h2>Trials in detail</h2>\n");
    for (i, record) in run.trials.iter().enumerate() {
        out.push_str(&trial_section(i, record, &details(record)));
    }
    out.push_str("</section>\n</main>\n");
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"medin-trials\">{}</script>\n<script>\n{SCRIPT}</script>\n</body>\n</html>\n",
        script_json(&rows_json(run))
    );
    out
}

/// What the page may load and run: nothing from anywhere, its own inline style, and only its
/// own script (by its hash), so even text that slipped through as markup could run nothing.
pub(super) fn content_security_policy() -> String {
    use sha2::{Digest, Sha256};
    let hash = crate::tools::base64(&Sha256::digest(format!("\n{SCRIPT}").as_bytes()));
    format!(
        "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-{hash}'; img-src data:; \
         base-uri 'none'; form-action 'none'"
    )
}

/// A serde enum's name (`snake_case` as written in the files).
fn name_of(value: &impl Serialize) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "?".into(),
    }
}

pub(super) fn duration(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{}m {:02}s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn short_count(n: f64) -> String {
    match n {
        n if n >= 1e6 => format!("{:.1}M", n / 1e6),
        n if n >= 1e4 => format!("{:.0}k", n / 1e3),
        n if n >= 1e3 => format!("{:.1}k", n / 1e3),
        n => format!("{n:.0}"),
    }
}

fn cost(usd: Option<f64>) -> String {
    match usd {
        Some(c) if c >= 1.0 => format!("${c:.2}"),
        Some(c) => format!("${c:.4}"),
        None => "—".into(),
    }
}

fn percent(rate: f64) -> String {
    format!("{:.1}%", rate * 100.0)
}

fn tokens(r: &TrialRecord) -> u64 {
    r.metrics
        .usage
        .input_tokens
        .saturating_add(r.metrics.usage.output_tokens)
}

fn outcome(r: &TrialRecord) -> String {
    r.outcome.map(|o| name_of(&o)).unwrap_or_else(|| "none".into())
}

fn badge(class: &str, text: &str) -> String {
    format!("<span class=\"badge {}\">{}</span>", html(class), html(text))
}

fn header(run: &RunConclusion) -> String {
    let status = run.run_status();
    let (class, verdict) = match status {
        ExitStatus::Success => ("passed", "passed"),
        ExitStatus::Failed => ("failed", "failed"),
        ExitStatus::Infrastructure => ("infrastructure", "infrastructure error"),
        _ => ("infrastructure", "not judged"),
    };
    let finished = run.trials.iter().map(|t| t.finished_at).max();
    let mut out = String::from("<header>\n<h1>medin report</h1>\n");
    let _ = writeln!(
        out,
        "<p class=\"sub\">run <code>{}</code> · {} trial attempt{}{} · run folder <code>{}</code></p>",
        html(run.run_id.as_str()),
        run.trials.len(),
        if run.trials.len() == 1 { "" } else { "s" },
        finished
            .map(|t| format!(" · last finished {}", t.format("%Y-%m-%d %H:%M:%S UTC")))
            .unwrap_or_default(),
        html(&run.folder.display().to_string()),
    );
    let _ = writeln!(
        out,
        "<p class=\"verdict {class}\" id=\"verdict\" data-exit-code=\"{}\">run {verdict} (exit code {})</p>",
        status.code(),
        status.code()
    );
    out.push_str(&cards(run));
    if let Some(breaches) = &run.breaches {
        if !breaches.is_empty() {
            out.push_str("<h3>Thresholds breached</h3>\n<ul class=\"breaches\">\n");
            for b in breaches {
                let _ = writeln!(out, "<li>{}</li>", html(&b.to_string()));
            }
            out.push_str("</ul>\n");
        }
    }
    if !run.unreadable.is_empty() {
        out.push_str("<h3>Trial results that could not be read</h3>\n<ul class=\"breaches\">\n");
        for u in &run.unreadable {
            let _ = writeln!(out, "<li>{}</li>", html(u));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</header>\n");
    out
}

fn cards(run: &RunConclusion) -> String {
    let m = &run.metrics.overall;
    let judged = m.trials.judged();
    let total_ms: u64 = run.trials.iter().map(|t| t.metrics.duration_ms).sum();
    let costs: Vec<f64> = run
        .trials
        .iter()
        .filter_map(|t| t.metrics.model.map(|m| m.cost_usd))
        .collect();
    let thresholds = match &run.breaches {
        None => ("not checked".to_string(), "a narrowed run is not gated".to_string()),
        Some(b) if b.is_empty() => ("all held".to_string(), String::new()),
        Some(b) => (format!("{} breached", b.len()), "see below".to_string()),
    };
    let cards: [(&str, String, String); 8] = [
        (
            "success rate",
            percent(m.success_rate()),
            format!("{} of {judged} judged", m.trials.passed),
        ),
        (
            "trials",
            format!("{}", m.trials.total()),
            match m.trials.infrastructure {
                0 => format!("{} passed · {} failed", m.trials.passed, m.trials.failed),
                n => format!("{} passed · {} failed · {n} infra", m.trials.passed, m.trials.failed),
            },
        ),
        ("time", duration(total_ms), "summed over attempts".into()),
        (
            "tokens",
            short_count((m.input_tokens.saturating_add(m.output_tokens)) as f64),
            format!("{} in · {} out", count(m.input_tokens), count(m.output_tokens)),
        ),
        (
            "cost",
            cost((!costs.is_empty()).then(|| costs.iter().sum())),
            if costs.is_empty() {
                "no model agent".into()
            } else {
                "model agents".into()
            },
        ),
        (
            "tool errors",
            format!("{}", m.tool_errors),
            format!("of {} calls ({})", m.tool_calls, percent(m.tool_error_rate())),
        ),
        ("guard blocks", format!("{}", m.guard_blocks), "actions refused".into()),
        ("thresholds", thresholds.0, thresholds.1),
    ];
    let mut out = String::from("<section id=\"summary\" class=\"cards\">\n");
    for (k, v, d) in cards {
        let _ = writeln!(
            out,
            "<div class=\"card\" data-metric=\"{}\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">{}</div></div>",
            html(&k.replace(' ', "_")),
            html(k),
            html(&v),
            html(&d)
        );
    }
    out.push_str("</section>\n");
    out
}

/// Mean of `f` over each task's attempts, by task id.
fn per_task(run: &RunConclusion, f: impl Fn(&TrialRecord) -> (f64, f64)) -> Vec<(&str, f64, f64)> {
    let mut by_task: BTreeMap<&str, (f64, f64, u32)> = BTreeMap::new();
    for t in &run.trials {
        let (a, b) = f(t);
        let e = by_task.entry(t.trial.as_str()).or_default();
        e.0 += a;
        e.1 += b;
        e.2 += 1;
    }
    by_task
        .into_iter()
        .map(|(task, (a, b, n))| (task, a / f64::from(n), b / f64::from(n)))
        .collect()
}

/// The largest `TASK_BARS` of `tasks` by their sum (tasks with none left out), and a note
/// when some were left out.
fn largest<'a>(tasks: Vec<(&'a str, f64, f64)>, what: &str) -> (Vec<(&'a str, f64, f64)>, Option<String>) {
    let all = tasks.len();
    let mut tasks: Vec<_> = tasks.into_iter().filter(|t| t.1 + t.2 > 0.0).collect();
    tasks.sort_by(|x, y| (y.1 + y.2).total_cmp(&(x.1 + x.2)).then(x.0.cmp(y.0)));
    let some = tasks.len();
    tasks.truncate(TASK_BARS);
    let note = match (some > TASK_BARS, some < all && some > 0) {
        (true, _) => Some(format!("the {TASK_BARS} tasks with the most {what} of {all}")),
        (false, true) => Some(format!("{} of {all} tasks had none", all - some)),
        (false, false) => None,
    };
    (tasks, note)
}

fn charts_section(run: &RunConclusion) -> String {
    let repeated = run.trials.iter().any(|t| t.attempt > 1);
    let per = if repeated { " (mean per attempt)" } else { "" };
    let success: Vec<Bar> = run
        .metrics
        .by_category
        .iter()
        .map(|(category, g)| {
            let rate = g.success_rate();
            let class = match rate {
                r if r >= 0.9 => "good",
                r if r >= 0.5 => "warn",
                _ => "bad",
            };
            let judged = g.trials.judged();
            let infra = match g.trials.infrastructure {
                0 => String::new(),
                n => format!(" +{n} infra"),
            };
            Bar {
                label: category.clone(),
                // A bar of none judged is drawn empty, not full.
                segments: vec![Segment {
                    value: if judged == 0 { 0.0 } else { rate.max(0.004) },
                    class,
                }],
                shown: format!("{} ({}/{judged}){infra}", percent(rate), g.trials.passed),
            }
        })
        .collect();
    let (token_tasks, token_note) = largest(
        per_task(run, |t| {
            (
                t.metrics.usage.input_tokens as f64,
                t.metrics.usage.output_tokens as f64,
            )
        }),
        "tokens",
    );
    let token_bars: Vec<Bar> = token_tasks
        .iter()
        .map(|(task, input, output)| Bar {
            label: task.to_string(),
            segments: vec![
                Segment {
                    value: *input,
                    class: "input",
                },
                Segment {
                    value: *output,
                    class: "output",
                },
            ],
            shown: short_count(input + output),
        })
        .collect();
    let (time_tasks, time_note) = largest(per_task(run, |t| (t.metrics.duration_ms as f64, 0.0)), "time");
    let time_bars: Vec<Bar> = time_tasks
        .iter()
        .map(|(task, ms, _)| Bar {
            label: task.to_string(),
            segments: vec![Segment {
                value: *ms,
                class: "neutral",
            }],
            shown: duration(ms.round() as u64),
        })
        .collect();
    let mut out = String::from("<section id=\"charts\">\n<h2>Metrics</h2>\n<div class=\"charts\">\n");
    out.push_str(&charts::render(&Chart {
        id: "chart-success",
        title: "Success rate by category",
        bars: &success,
        full: Some(1.0),
        legend: &[],
        when_empty: "no trials",
        note: None,
    }));
    out.push_str(&charts::render(&Chart {
        id: "chart-duration",
        title: &format!("Duration per task{per}"),
        bars: &time_bars,
        full: None,
        legend: &[],
        when_empty: "every attempt took under a millisecond",
        note: time_note,
    }));
    out.push_str(&charts::render(&Chart {
        id: "chart-tokens",
        title: &format!("Tokens per task{per}"),
        bars: &token_bars,
        full: None,
        legend: &[("input", "input"), ("output", "output")],
        when_empty:
            "no tokens reported (the oracle and exec agents, and process agents that send no usage, report none)",
        note: token_note,
    }));
    out.push_str("</div>\n</section>\n");
    out
}

/// The table's columns: key (in the rows' JSON), header, numeric.
const COLUMNS: [(&str, &str, bool); 11] = [
    ("task", "Task", false),
    ("category", "Category", false),
    ("agent", "Agent", false),
    ("attempt", "Attempt", true),
    ("outcome", "Outcome", false),
    ("passed", "Passed", false),
    ("duration_ms", "Duration", true),
    ("turns", "Turns", true),
    ("tokens", "Tokens", true),
    ("cost_usd", "Cost", true),
    ("guard_blocks", "Guard blocks", true),
];

/// The rows of the table as data for the script (its sort keys).
fn rows_json(run: &RunConclusion) -> serde_json::Value {
    serde_json::Value::Array(
        run.trials
            .iter()
            .map(|t| {
                serde_json::json!({
                    "task": t.trial,
                    "category": t.category,
                    "agent": t.agent,
                    "attempt": t.attempt,
                    "outcome": outcome(t),
                    "passed": t.status.as_str(),
                    "duration_ms": t.metrics.duration_ms,
                    "turns": t.metrics.turns,
                    "tokens": tokens(t),
                    "cost_usd": t.metrics.model.map(|m| m.cost_usd),
                    "guard_blocks": t.metrics.guard_blocks,
                })
            })
            .collect(),
    )
}

/// The attributes that name a trial attempt, on its table row and its section.
fn trial_attributes(t: &TrialRecord) -> String {
    format!(
        "data-trial=\"{}\" data-attempt=\"{}\" data-status=\"{}\" data-outcome=\"{}\"",
        html(&t.trial),
        t.attempt,
        t.status.as_str(),
        html(&outcome(t))
    )
}

fn table(run: &RunConclusion) -> String {
    let mut out = String::from(
        "<section id=\"table\">\n<h2>Trials</h2>\n<table id=\"trials\" data-sorted-by=\"task\">\n<thead><tr>",
    );
    for (key, head, numeric) in COLUMNS {
        let sort = if key == "task" { "ascending" } else { "none" };
        let _ = write!(
            out,
            "<th data-key=\"{key}\" aria-sort=\"{sort}\"{}><button type=\"button\">{head}</button></th>",
            if numeric { " class=\"num\"" } else { "" }
        );
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (i, t) in run.trials.iter().enumerate() {
        let _ = writeln!(
            out,
            "<tr data-row=\"{i}\" {}><td class=\"task\"><a href=\"#trial-{}\">{}</a></td><td>{}</td><td class=\"agent\">{}</td>\
             <td class=\"num\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            trial_attributes(t),
            i + 1,
            html(&t.trial),
            html(&t.category),
            html_clipped(&t.agent, INLINE),
            t.attempt,
            badge(&outcome(t), &outcome(t)),
            badge(t.status.as_str(), t.status.as_str()),
            duration(t.metrics.duration_ms),
            t.metrics.turns,
            count(tokens(t)),
            cost(t.metrics.model.map(|m| m.cost_usd)),
            t.metrics.guard_blocks,
        );
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

fn trial_section(index: usize, t: &TrialRecord, details: &AttemptDetails) -> String {
    let mut out = String::new();
    let open = if t.status == TrialStatus::Passed { "" } else { " open" };
    let _ = writeln!(
        out,
        "<details class=\"trial {}\" id=\"trial-{}\" {}{open}>",
        t.status.as_str(),
        index + 1,
        trial_attributes(t)
    );
    let _ = writeln!(
        out,
        "<summary>{}<span class=\"name\">{}</span><span class=\"meta\">attempt {} · {} · outcome {} · {}</span></summary>\n<div class=\"body\">",
        badge(t.status.as_str(), t.status.as_str()),
        html(&t.trial),
        t.attempt,
        html_clipped(&t.agent, INLINE),
        html(&outcome(t)),
        duration(t.metrics.duration_ms),
    );
    out.push_str(&facts(t));
    if !t.expectations.is_empty() {
        out.push_str("<h3>Expectations that did not hold</h3>\n");
        for e in &t.expectations {
            out.push_str(&diff(&e.expectation, &e.expected, &e.actual));
        }
    } else if let Some(failure) = &t.failure {
        // A harness error, or a failure without expectations as data: its message.
        out.push_str("<h3>Why it did not pass</h3>\n");
        let _ = writeln!(
            out,
            "<pre class=\"failure\">{}</pre>",
            html_clipped(failure, 4 * TEXT_BLOCK)
        );
    }
    out.push_str(&validations(details));
    out.push_str(&timeline(details));
    if !details.notes.is_empty() {
        out.push_str("<h3>Not shown</h3>\n<ul class=\"notes\">\n");
        for n in &details.notes {
            let _ = writeln!(out, "<li>{}</li>", html_clipped(n, TEXT_BLOCK));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</div>\n</details>\n");
    out
}

fn facts(t: &TrialRecord) -> String {
    let m = &t.metrics;
    let mut rows: Vec<(&str, String)> = vec![
        ("category", html(&t.category)),
        ("agent", html_clipped(&t.agent, 4 * INLINE)),
        ("finished", html(&t.finished_at.format("%Y-%m-%d %H:%M:%S UTC").to_string())),
        (
            "numbers",
            html(&format!(
                "turns {} · tool errors {} · guard blocks {} · guard warnings {} · malformed lines {} · tokens {} in, {} out",
                m.turns,
                m.tool_errors,
                m.guard_blocks,
                m.guard_warnings,
                m.malformed,
                count(m.usage.input_tokens),
                count(m.usage.output_tokens)
            )),
        ),
    ];
    if let Some(model) = &m.model {
        rows.push((
            "model",
            html(&format!(
                "{} calls · {} retries · {} cached input tokens · {}{}",
                model.calls,
                model.retries,
                count(model.cached_input_tokens),
                cost(Some(model.cost_usd)),
                if model.cost_estimated { " (estimated)" } else { "" }
            )),
        ));
    }
    if !t.tags.is_empty() {
        let tags: Vec<String> = t.tags.iter().map(|tag| badge("plain", tag)).collect();
        rows.push(("tags", tags.join(" ")));
    }
    if let Some(cause) = t.cause {
        rows.push(("cause", html(cause.as_str())));
    }
    rows.push((
        "attempt folder",
        format!("<code>{}</code>", html(&t.run_dir.display().to_string())),
    ));
    let mut out = String::from("<dl class=\"facts\">\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{k}</dt><dd>{v}</dd>");
    }
    out.push_str("</dl>\n");
    out
}

/// An expectation that did not hold: expected against actual, line by line.
fn diff(what: &str, expected: &str, actual: &str) -> String {
    let mut out = format!(
        "<div class=\"diff\" data-expectation=\"{}\">\n<p class=\"what\">{}</p>\n<pre>",
        html(what),
        html(what)
    );
    let (expected, actual) = (
        crate::inert::clip(expected, 4 * TEXT_BLOCK),
        crate::inert::clip(actual, 4 * TEXT_BLOCK),
    );
    let diff = similar::TextDiff::from_lines(expected.as_ref(), actual.as_ref());
    for change in diff.iter_all_changes() {
        let (class, sign) = match change.tag() {
            similar::ChangeTag::Delete => ("del", "- "),
            similar::ChangeTag::Insert => ("ins", "+ "),
            similar::ChangeTag::Equal => ("same", "  "),
        };
        let line = change.value();
        let line = line.strip_suffix('\n').unwrap_or(line);
        let _ = write!(out, "<span class=\"{class}\">{sign}{}</span>", html(line));
    }
    out.push_str("</pre>\n<p class=\"legend\">- expected · + actual</p>\n</div>\n");
    out
}

fn validations(d: &AttemptDetails) -> String {
    if d.validations.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "<h3>Validations</h3>\n<table class=\"validations\">\n<thead><tr><th>Check</th><th>Status</th><th>Evidence</th><th class=\"num\">Confidence</th><th class=\"num\">Time</th></tr></thead>\n<tbody>\n",
    );
    for v in &d.validations {
        let status = name_of(&v.status);
        let mut evidence = html_clipped(&v.evidence, TEXT_BLOCK);
        for (label, text) in [("error", &v.error), ("expected", &v.expected), ("actual", &v.actual)] {
            if let Some(text) = text {
                let _ = write!(
                    evidence,
                    "<br><span class=\"k\">{label}</span> <code>{}</code>",
                    html_clipped(text, TEXT_BLOCK)
                );
            }
        }
        let _ = writeln!(
            out,
            "<tr data-status=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"evidence\">{evidence}</td><td class=\"num\">{}%</td><td class=\"num\">{}</td></tr>",
            html(&status),
            html_clipped(&v.check, 4 * INLINE),
            badge(&status, &status),
            v.confidence,
            duration(v.duration_ms)
        );
    }
    out.push_str("</tbody>\n</table>\n");
    out
}

fn timeline(d: &AttemptDetails) -> String {
    if d.entries.is_empty() {
        return String::new();
    }
    let mut out = String::from("<h3>Transcript</h3>\n<ol class=\"timeline\">\n");
    for entry in &d.entries {
        match entry {
            Entry::Action(a) => out.push_str(&action(a)),
            Entry::Message(m) => out.push_str(&message(m)),
        }
    }
    if d.entries_not_shown > 0 {
        let _ = writeln!(
            out,
            "<li class=\"more\">… {} more entries not shown: see receipts.jsonl and transcript.jsonl in the attempt folder</li>",
            d.entries_not_shown
        );
    }
    out.push_str("</ol>\n");
    out
}

fn action(a: &ActionRecord) -> String {
    let status = name_of(&a.receipt.status);
    let origin = name_of(&a.origin);
    let tool = if a.tool.is_empty() {
        "(agent output)"
    } else {
        a.tool.as_str()
    };
    let mut out = format!(
        "<li class=\"action origin-{} decision-{} receipt-{}\" data-seq=\"{}\" data-tool=\"{}\">\n<div class=\"entry-head\"><span class=\"seq\">#{}</span><span class=\"tool\">{}</span><span class=\"who\">by {}</span>",
        html(&origin),
        html(&a.decision),
        html(&status),
        a.seq,
        html(&a.tool),
        a.seq,
        html_clipped(tool, INLINE),
        html(&origin),
    );
    if let Some(g) = &a.guard {
        let _ = write!(
            out,
            "<span class=\"who\">guard</span>{}<span class=\"who\">risk {}</span>",
            badge(&name_of(&g.recommendation), &name_of(&g.recommendation)),
            html(&name_of(&g.risk))
        );
    }
    let _ = writeln!(
        out,
        "<span class=\"who\">decision</span>{}<span class=\"who\">receipt</span>{}</div>",
        badge(&a.decision, &a.decision),
        badge(&status, &status)
    );
    out.push_str(&fields("input", &a.input));
    if let Some(g) = &a.guard {
        if !g.violations.is_empty() {
            out.push_str("<ul class=\"violations\">");
            for v in &g.violations {
                let _ = write!(
                    out,
                    "<li><code>{}</code> ({}, {}): {} — matched <code>{}</code></li>",
                    html(&v.rule),
                    html(&name_of(&v.severity)),
                    html(&name_of(&v.recommendation)),
                    html_clipped(&v.description, TEXT_BLOCK),
                    html_clipped(&v.matched, TEXT_BLOCK)
                );
            }
            out.push_str("</ul>\n");
        }
        if let Some(alt) = &g.alternative {
            let _ = writeln!(
                out,
                "<p class=\"alternative\">safer: {}</p>",
                html_clipped(alt, TEXT_BLOCK)
            );
        }
    }
    for (label, text) in [("justification", &a.justification), ("limit", &a.limit)] {
        if let Some(text) = text {
            let _ = writeln!(
                out,
                "<p class=\"alternative\">{label}: {}</p>",
                html_clipped(text, TEXT_BLOCK)
            );
        }
    }
    let r = &a.receipt;
    if !r.errors.is_empty() {
        out.push_str("<ul class=\"receipt-errors\">");
        for e in &r.errors {
            let context = if e.context.is_null() {
                String::new()
            } else {
                format!(" <code>{}</code>", html_clipped(&e.context.to_string(), 4 * INLINE))
            };
            let _ = write!(
                out,
                "<li><code>{}</code> {}{context}</li>",
                html(e.code.as_str()),
                html_clipped(&e.message, TEXT_BLOCK)
            );
        }
        out.push_str("</ul>\n");
    }
    for w in &r.warnings {
        let _ = writeln!(
            out,
            "<p class=\"alternative\">warning: {}</p>",
            html_clipped(w, TEXT_BLOCK)
        );
    }
    out.push_str(&fields("receipt", &r.data));
    out.push_str("</li>\n");
    out
}

/// A JSON value as labelled fields: short scalars inline, text with several lines or long
/// text as a block, anything nested as compact JSON; nulls and empty strings left out.
fn fields(label: &str, value: &serde_json::Value) -> String {
    use serde_json::Value;
    let mut inline = String::new();
    let mut blocks = String::new();
    let mut one = |key: &str, v: &Value| match v {
        Value::Null => {}
        Value::String(s) if s.is_empty() => {}
        Value::String(s) if s.contains('\n') || s.len() > INLINE => {
            let _ = write!(
                blocks,
                "<div class=\"block\"><span class=\"k\">{}</span><pre>{}</pre></div>",
                html(key),
                html_clipped(s, TEXT_BLOCK)
            );
        }
        Value::String(s) => {
            let _ = write!(
                inline,
                "<span class=\"kv\"><span class=\"k\">{}</span><code>{}</code></span>",
                html(key),
                html(s)
            );
        }
        Value::Array(_) | Value::Object(_) => {
            let text = v.to_string();
            if text.len() > INLINE {
                let _ = write!(
                    blocks,
                    "<div class=\"block\"><span class=\"k\">{}</span><pre>{}</pre></div>",
                    html(key),
                    html_clipped(&serde_json::to_string_pretty(v).unwrap_or(text), TEXT_BLOCK)
                );
            } else {
                let _ = write!(
                    inline,
                    "<span class=\"kv\"><span class=\"k\">{}</span><code>{}</code></span>",
                    html(key),
                    html(&text)
                );
            }
        }
        other => {
            let _ = write!(
                inline,
                "<span class=\"kv\"><span class=\"k\">{}</span><code>{}</code></span>",
                html(key),
                html(&other.to_string())
            );
        }
    };
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                one(k, v);
            }
        }
        other => one(label, other),
    }
    if inline.is_empty() && blocks.is_empty() {
        return String::new();
    }
    format!(
        "<div class=\"fields {}\"><span class=\"k\">{}:</span>{inline}{blocks}</div>\n",
        html(label),
        html(label)
    )
}

fn message(m: &Message) -> String {
    let (class, who) = match m.direction {
        Direction::ToAgent => ("to-agent", "to the agent"),
        Direction::FromAgent => ("from-agent", "from the agent"),
        Direction::Unknown => ("unknown", "transcript"),
    };
    let e = &m.event;
    let s = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or_default();
    let n = |k: &str| e.get(k).and_then(|v| v.as_u64()).unwrap_or_default();
    let mut out = format!(
        "<li class=\"message {class} kind-{}\">\n<div class=\"entry-head\"><span class=\"tool\">{}</span><span class=\"who\">{who}</span>",
        html(&m.kind),
        html(if m.kind.is_empty() { "message" } else { &m.kind })
    );
    let body = match m.kind.as_str() {
        "task" => {
            let brief = e.get("brief").cloned().unwrap_or_default();
            let prompt = brief.get("prompt").and_then(|p| p.as_str()).unwrap_or_default();
            let tools: Vec<&str> = brief
                .get("tools")
                .and_then(|t| t.as_array())
                .map(|t| {
                    t.iter()
                        .filter_map(|x| x.get("name").and_then(|n| n.as_str()))
                        .collect()
                })
                .unwrap_or_default();
            let limits = brief.get("limits").cloned().unwrap_or_default();
            format!(
                "</div>\n<pre class=\"prompt\">{}</pre>{}{}",
                html_clipped(prompt, 2 * TEXT_BLOCK),
                if tools.is_empty() {
                    String::new()
                } else {
                    format!(
                        "<div class=\"fields\"><span class=\"k\">tools:</span>{}</div>",
                        html_clipped(&tools.join(", "), 4 * INLINE)
                    )
                },
                fields("limits", &limits)
            )
        }
        "final" => {
            let report = e.get("report").cloned().unwrap_or_default();
            let result = report.get("result").and_then(|r| r.as_str()).unwrap_or_default();
            let message = report.get("message").and_then(|r| r.as_str()).unwrap_or_default();
            let code = report.get("code").and_then(|r| r.as_str());
            format!(
                "{}{}</div>\n{}",
                badge(result, result),
                code.map(|c| format!("<code>{}</code>", html(c))).unwrap_or_default(),
                if message.is_empty() {
                    String::new()
                } else {
                    format!("<pre>{}</pre>", html_clipped(message, TEXT_BLOCK))
                }
            )
        }
        "reply" => format!("</div>\n<pre>{}</pre>", html_clipped(s("text"), TEXT_BLOCK)),
        "failed" => format!("</div>\n<pre>{}</pre>", html_clipped(s("error"), TEXT_BLOCK)),
        "malformed" => format!(
            "</div>\n<p class=\"alternative\">{}</p><pre>{}</pre>",
            html_clipped(s("reason"), TEXT_BLOCK),
            html_clipped(s("line"), TEXT_BLOCK)
        ),
        "usage" => format!(
            "<span class=\"who\">{} input · {} output tokens</span></div>\n",
            count(n("input_tokens")),
            count(n("output_tokens"))
        ),
        "model_call" => format!(
            "<span class=\"who\">{} input ({} cached) · {} output tokens · {} retries{}</span></div>\n",
            count(n("input_tokens")),
            count(n("cached_input_tokens")),
            count(n("output_tokens")),
            n("retries"),
            e.get("cost")
                .and_then(|c| c.as_f64())
                .map(|c| format!(" · {}", cost(Some(c))))
                .unwrap_or_default()
        ),
        "feedback" => format!(
            "</div>\n{}",
            fields("feedback", e.get("feedback").unwrap_or(&serde_json::Value::Null))
        ),
        _ => {
            let mut rest = e.clone();
            if let Some(map) = rest.as_object_mut() {
                map.remove("type");
            }
            format!("</div>\n{}", fields("event", &rest))
        }
    };
    out.push_str(&body);
    out.push_str("</li>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(duration(53), "53 ms");
        assert_eq!(duration(1500), "1.5 s");
        assert_eq!(duration(125_000), "2m 05s");
        assert_eq!(count(1234567), "1,234,567");
        assert_eq!(count(12), "12");
        assert_eq!(short_count(1234.0), "1.2k");
        assert_eq!(short_count(45_000.0), "45k");
        assert_eq!(cost(Some(0.01234)), "$0.0123");
        assert_eq!(cost(None), "—");
    }

    #[test]
    fn the_policy_names_the_hash_of_the_script_it_allows() {
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none';"), "{csp}");
        assert!(
            csp.contains("script-src 'sha256-") && !csp.contains("unsafe-eval"),
            "{csp}"
        );
        assert!(!csp.contains("script-src 'unsafe-inline'"), "{csp}");
    }

    #[test]
    fn a_diff_shows_expected_against_actual_by_line() {
        let d = diff("expect.files.ok.txt.equals", "ok\nline2\n", "nope\n");
        assert!(
            d.contains(
                "<span class=\"del\">- ok</span><span class=\"del\">- line2</span><span class=\"ins\">+ nope</span>"
            ),
            "{d}"
        );
        let one = diff("expect.outcome", "success", "<b>failure</b>");
        assert!(
            one.contains("<span class=\"del\">- success</span><span class=\"ins\">+ &lt;b&gt;failure&lt;/b&gt;</span>"),
            "{one}"
        );
    }
}
