//! The reporters medin ships, each one view of the event stream ([`super::events`]):
//!
//! | reporter | on | writes |
//! |---|---|---|
//! | [`ActivityLogReporter`] | trial finished | an entry of `ACTIVITY_LOG.md` |
//! | [`ResultParts`] | trial finished | the trial's part file in the run folder |
//! | [`SummaryFile`] | run finished | `<run>/summary.json` |
//! | [`LibtestLine`] | trial finished, run finished | `ok     NAME` / `FAILED NAME` + message; the tally |
//! | [`Progress`] | trial started, finished, run finished | the progress bar of `medin run` |
//! | [`MetricsText`] | run finished | the suite metrics block and the run folder |
//! | [`FailureDigest`] | run finished | each trial of the run that did not pass, with its message |
//! | [`SummaryJson`] | run finished | the run summary as JSON on stdout (`medin report --json`) |
//!
//! The first three keep the record of a run and are always installed by the driver
//! ([`crate::harness::Driver`]); the others are chosen by the binary and the harness. What
//! reaches a terminal is inert ([`crate::inert`]).

use std::io::Write;
use std::sync::Mutex;

use super::events::{Event, PrdNote, ReportError, Reporter};
use super::finish::RunConclusion;
use super::metrics::{render_text, TrialCounts};
use super::record::{TrialRecord, TrialStatus};
use super::run::{atomic_write, RunFolder};
use crate::log::{ActivityEntry, ActivityLog, EntryKind, EntryStatus};
use crate::prd::Reload;
use crate::runner::{expect, TaskResult, TrialVerdict, MESSAGE_CLIP};

/// Where a text reporter prints: stdout, or any writer (tests, a file).
pub struct Output(Mutex<Box<dyn Write + Send>>);

impl Output {
    pub fn stdout() -> Self {
        Output(Mutex::new(Box::new(std::io::stdout())))
    }

    pub fn to(writer: impl Write + Send + 'static) -> Self {
        Output(Mutex::new(Box::new(writer)))
    }

    /// Prints `text` as it is; a closed stdout is not worth failing a run over.
    pub(crate) fn print(&self, text: &str) {
        if let Ok(mut w) = self.0.lock() {
            let _ = w.write_all(text.as_bytes()).and_then(|_| w.flush());
        }
    }
}

/// The display name of attempt `attempt` of `trial` in a run of `repeat` attempts per task:
/// `#n` only when repeating. Inert: a task file's name is anyone's text.
pub fn trial_label(trial: &str, attempt: u32, repeat: u32) -> String {
    let name = if repeat > 1 {
        format!("{trial}#{attempt}")
    } else {
        trial.to_string()
    };
    crate::inert::line(&name).into_owned()
}

/// Appends one entry per finished trial to `ACTIVITY_LOG.md` (under its lock: any number of
/// processes may share the log).
#[derive(Debug)]
pub struct ActivityLogReporter {
    log: ActivityLog,
    run_id: String,
}

impl ActivityLogReporter {
    pub fn new(log: ActivityLog, run_id: impl Into<String>) -> Self {
        ActivityLogReporter {
            log,
            run_id: run_id.into(),
        }
    }

    /// The entry of a finished trial.
    pub fn entry(&self, result: &TaskResult, validations: &[crate::validate::ValidationResult]) -> ActivityEntry {
        let clip = |text: &str| crate::inert::clip(text, MESSAGE_CLIP).into_owned();
        let (kind, status, failures) = match &result.verdict {
            TrialVerdict::Passed => (EntryKind::Task, EntryStatus::Passed, Vec::new()),
            TrialVerdict::Failed(ms) => (
                EntryKind::Task,
                EntryStatus::Failed,
                ms.iter().map(|m| clip(&m.to_string())).collect(),
            ),
            // A trial waiting for what the machine lacks (a container engine) is pending.
            TrialVerdict::HarnessError { message, .. } if result.outcome == Some(crate::spec::Outcome::Pending) => {
                (EntryKind::Error, EntryStatus::Pending, vec![clip(message)])
            }
            TrialVerdict::HarnessError { message, .. } => (EntryKind::Error, EntryStatus::Error, vec![clip(message)]),
        };
        ActivityEntry {
            timestamp: chrono::Utc::now(),
            task_id: result.trial.clone(),
            category: result.category.clone(),
            kind,
            status,
            outcome: result.outcome.map(|o| expect::outcome_name(o).to_string()),
            duration_ms: result.metrics.duration_ms,
            attempt: result.attempt,
            run_id: self.run_id.clone(),
            run_dir: result.run_dir.display().to_string(),
            agent: result.agent.clone(),
            description: result.description.clone(),
            validations: validations.to_vec(),
            failures,
            correction: None,
        }
    }
}

/// Retries of a failed append to the activity log, after the first try.
const APPEND_RETRIES: u32 = 3;
/// The wait before the first retry; it doubles for each one after.
const APPEND_BACKOFF: std::time::Duration = std::time::Duration::from_millis(50);
/// Where an entry that could not be appended is kept, in the attempt's run folder.
pub const KEPT_ENTRY_FILE: &str = "activity-entry.md";

impl ActivityLogReporter {
    /// Appends `entry`, retrying [`APPEND_RETRIES`] times with a doubling wait; when every try
    /// failed, keeps the entry as `<run_dir>/activity-entry.md` (same format, so it can be
    /// appended by hand) and returns the last error and where the entry went.
    /// Appends `entry`, retrying [`APPEND_RETRIES`] times with a doubling wait; the last error.
    fn append_retrying(&self, entry: &ActivityEntry) -> Result<(), String> {
        let mut wait = APPEND_BACKOFF;
        let mut last = None;
        for retry in 0..=APPEND_RETRIES {
            if retry > 0 {
                std::thread::sleep(wait);
                wait *= 2;
            }
            match self.log.append(entry) {
                Ok(()) => return Ok(()),
                Err(e) => last = Some(e),
            }
        }
        Err(last.map(|e| e.to_string()).unwrap_or_default())
    }

    fn append_or_keep(&self, entry: &ActivityEntry, run_dir: &std::path::Path) -> Result<(), String> {
        let Err(error) = self.append_retrying(entry) else {
            return Ok(());
        };
        let kept = run_dir.join(KEPT_ENTRY_FILE);
        let keep = || -> std::io::Result<()> {
            std::fs::create_dir_all(run_dir)?;
            std::fs::write(&kept, crate::log::activity::format_entry(entry)?)
        };
        Err(match keep() {
            Ok(()) => format!(
                "{error} ({} tries); the entry is kept in {}",
                APPEND_RETRIES + 1,
                kept.display()
            ),
            Err(k) => format!(
                "{error} ({} tries); keeping the entry in {} failed too: {k}",
                APPEND_RETRIES + 1,
                kept.display()
            ),
        })
    }
}

impl ActivityLogReporter {
    /// The entry of something that happened to the suite's PRD ([`EntryKind::Prd`]).
    pub fn prd_entry(&self, note: &PrdNote<'_>) -> ActivityEntry {
        let (task_id, category, attempt, status, description, failures) = match note {
            PrdNote::Reload {
                path,
                reload: Reload::Reloaded(diff),
            } => (
                "prd".to_string(),
                "prd".to_string(),
                0,
                EntryStatus::Passed,
                format!("PRD reloaded ({}): {}", path.display(), diff.summary()),
                Vec::new(),
            ),
            PrdNote::Reload {
                path,
                reload: Reload::Invalid(e),
            } => (
                "prd".to_string(),
                "prd".to_string(),
                0,
                EntryStatus::Error,
                format!(
                    "PRD changed and is invalid ({}): no task starts until it is fixed",
                    path.display()
                ),
                vec![e.to_string()],
            ),
            PrdNote::Conflict {
                trial,
                attempt,
                conflict,
            } => (
                trial.to_string(),
                trial.split("::").next().unwrap_or("prd").to_string(),
                *attempt,
                EntryStatus::Skipped,
                format!("PRD conflict with {}: {conflict}", conflict.requirement),
                Vec::new(),
            ),
            PrdNote::Decision {
                trial,
                attempt,
                decision,
            } => (
                trial.to_string(),
                trial.split("::").next().unwrap_or("prd").to_string(),
                *attempt,
                EntryStatus::Pending,
                decision.to_string(),
                Vec::new(),
            ),
        };
        ActivityEntry {
            timestamp: chrono::Utc::now(),
            task_id,
            category,
            kind: EntryKind::Prd,
            status,
            outcome: None,
            duration_ms: 0,
            attempt,
            run_id: self.run_id.clone(),
            run_dir: String::new(),
            agent: "-".into(),
            description,
            validations: Vec::new(),
            failures,
            correction: None,
        }
    }
}

impl Reporter for ActivityLogReporter {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        if let Event::Prd(note) = event {
            let entry = self.prd_entry(note);
            return self.append_retrying(&entry).map_err(|why| {
                ReportError::new(
                    "activity log",
                    format!("cannot append a PRD entry to {}: {why}", self.log.path().display()),
                )
            });
        }
        let Event::TrialFinished(f) = event else {
            return Ok(());
        };
        let entry = self.entry(f.result, f.validations);
        self.append_or_keep(&entry, &f.result.run_dir).map_err(|why| {
            ReportError::new(
                "activity log",
                format!(
                    "cannot append the entry of {} to {}: {why}",
                    crate::inert::line(&f.result.trial),
                    self.log.path().display()
                ),
            )
        })
    }
}

/// Writes each finished trial's result as its own part file in the run folder, atomically, for
/// the end of the run and for `medin report` to merge.
#[derive(Debug)]
pub struct ResultParts {
    folder: RunFolder,
}

impl ResultParts {
    pub fn new(folder: RunFolder) -> Self {
        ResultParts { folder }
    }
}

impl Reporter for ResultParts {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::TrialFinished(f) = event else {
            return Ok(());
        };
        let record = TrialRecord::of(f.result, f.validations);
        self.folder.write_part(&record).map(|_| ()).map_err(|e| {
            ReportError::new(
                "result parts",
                format!(
                    "cannot write the result of {} to {}: {e}; `medin report` will not see this trial",
                    crate::inert::line(&record.trial),
                    self.folder.parts_dir().display()
                ),
            )
        })
    }
}

/// Writes `summary.json` into the run folder when the run is concluded (atomically: several
/// processes of one run may conclude it).
#[derive(Debug, Default)]
pub struct SummaryFile;

impl Reporter for SummaryFile {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let path = run.folder.join("summary.json");
        let text = serde_json::to_string_pretty(&run.summary_json()).unwrap_or_default();
        atomic_write(&path, (crate::inert::json(&text).into_owned() + "\n").as_bytes())
            .map_err(|e| ReportError::new("summary.json", format!("cannot write {}: {e}", path.display())))
    }
}

/// The libtest-style line per trial (`ok     NAME`, or `FAILED NAME` and the failure message)
/// and, when the run is concluded, the tally of the trials this process ran. Printed through
/// the progress bar when there is one, so the bar never tears a line.
pub struct LibtestLine {
    repeat: u32,
    bar: Option<indicatif::ProgressBar>,
    out: Output,
    tally: Mutex<TrialCounts>,
}

impl LibtestLine {
    /// Lines of a run with `repeat` attempts per task, on stdout.
    pub fn new(repeat: u32) -> Self {
        LibtestLine {
            repeat,
            bar: None,
            out: Output::stdout(),
            tally: Mutex::default(),
        }
    }

    /// Prints through `bar` (suspending it for each line).
    pub fn through(mut self, bar: indicatif::ProgressBar) -> Self {
        self.bar = Some(bar);
        self
    }

    pub fn to(mut self, out: Output) -> Self {
        self.out = out;
        self
    }

    fn print(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| self.out.print(text)),
            None => self.out.print(text),
        }
    }
}

impl Reporter for LibtestLine {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        match event {
            Event::TrialFinished(f) => {
                let r = f.result;
                let name = trial_label(&r.trial, r.attempt, self.repeat);
                if let Ok(mut t) = self.tally.lock() {
                    let count = match TrialStatus::of(r) {
                        TrialStatus::Passed => &mut t.passed,
                        TrialStatus::Failed => &mut t.failed,
                        TrialStatus::Infrastructure => &mut t.infrastructure,
                    };
                    *count = count.saturating_add(1);
                }
                // The failure message is inert already.
                match r.failure_message() {
                    None => self.print(&format!("ok     {name}\n")),
                    Some(m) => self.print(&format!("FAILED {name}\n{m}\n")),
                }
            }
            Event::RunFinished(_) => {
                let t = self.tally.lock().map(|t| *t).unwrap_or_default();
                let infrastructure = match t.infrastructure {
                    0 => String::new(),
                    1 => ", 1 infrastructure error".into(),
                    n => format!(", {n} infrastructure errors"),
                };
                self.print(&format!("\n{} passed, {} failed{infrastructure}\n", t.passed, t.failed));
            }
            _ => {}
        }
        Ok(())
    }
}

/// The progress bar of `medin run`: the trial that started last, and how many are done.
pub struct Progress {
    bar: indicatif::ProgressBar,
}

impl Progress {
    /// A bar for `total` trials (hidden when stderr is not a terminal, as indicatif does).
    pub fn new(total: u64) -> Self {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Progress { bar }
    }

    /// The bar, for reporters that print around it ([`LibtestLine::through`]).
    pub fn bar(&self) -> indicatif::ProgressBar {
        self.bar.clone()
    }
}

impl Reporter for Progress {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        match event {
            Event::TrialStarted(s) => self.bar.set_message(crate::inert::line(s.trial).into_owned()),
            Event::TrialFinished(_) => self.bar.inc(1),
            Event::RunFinished(_) => self.bar.finish_and_clear(),
            _ => {}
        }
        Ok(())
    }
}

/// The suite metrics block, the threshold verdict and the run folder, when the run is concluded.
pub struct MetricsText {
    out: Output,
}

impl MetricsText {
    pub fn new(out: Output) -> Self {
        MetricsText { out }
    }
}

impl Reporter for MetricsText {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        if let Event::TrialFinished(f) = event {
            // A slow validator is said as the trial ends, beside libtest's line for it.
            let text = slow_check_lines(&f.result.trial, f.validations);
            if !text.is_empty() {
                self.out.print(&text);
            }
            return Ok(());
        }
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let mut text = format!("\n{}", render_text(&run.metrics, run.breaches.as_deref()));
        text.push_str(&super::repeats::render_text(&run.repeats));
        if let Some(c) = &run.coverage {
            let proven = c.requirements.iter().filter(|r| r.proven).count();
            text.push_str(&format!(
                "  requirements   {proven}/{} proven (PRD {})\n",
                c.requirements.len(),
                crate::inert::line(&c.prd_version)
            ));
            for r in c.requirements.iter().filter(|r| !r.proven) {
                text.push_str(&format!(
                    "    not proven   {} ({}): {} task(s) name it, none passed\n",
                    crate::inert::line(&r.id),
                    r.priority.as_str(),
                    r.trials.len()
                ));
            }
        }
        for part in &run.unreadable {
            text.push_str(&format!("  unreadable     {} (skipped)\n", crate::inert::line(part)));
        }
        text.push_str(&format!(
            "  run folder     {}\n",
            crate::inert::line(&run.folder.to_string_lossy())
        ));
        self.out.print(&text);
        Ok(())
    }
}

/// One `medin: warning:` line per warning the validations of `trial` carry (a validator slower
/// than [`crate::validate::SLOW_CHECK`]), inert.
pub fn slow_check_lines(trial: &str, validations: &[crate::validate::ValidationResult]) -> String {
    validations
        .iter()
        .flat_map(|v| &v.warnings)
        .map(|w| {
            format!(
                "medin: warning: {}: {}\n",
                crate::inert::line(trial),
                crate::inert::line(w)
            )
        })
        .collect()
}

/// Every trial of the concluded run that did not pass, with its failure message: what
/// `medin report` shows of a run whose trials ran elsewhere.
pub struct FailureDigest {
    out: Output,
}

impl FailureDigest {
    pub fn new(out: Output) -> Self {
        FailureDigest { out }
    }
}

impl Reporter for FailureDigest {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let text = digest(run);
        self.out.print(&text);
        Ok(())
    }
}

fn digest(run: &RunConclusion) -> String {
    let mut text = String::new();
    let repeat = if run.trials.iter().any(|t| t.attempt > 1) { 2 } else { 1 };
    for t in &run.trials {
        let name = trial_label(&t.trial, t.attempt, repeat);
        match (t.status, &t.failure) {
            (TrialStatus::Passed, _) => text.push_str(&format!("ok     {name}\n")),
            (_, Some(message)) => text.push_str(&format!("FAILED {name}\n{}\n", crate::inert::text(message))),
            (_, None) => text.push_str(&format!("FAILED {name}\n")),
        }
    }
    let count = |s: TrialStatus| run.trials.iter().filter(|t| t.status == s).count();
    text.push_str(&format!(
        "\n{} passed, {} failed, {} infrastructure error{} (run {})\n",
        count(TrialStatus::Passed),
        count(TrialStatus::Failed),
        count(TrialStatus::Infrastructure),
        if count(TrialStatus::Infrastructure) == 1 {
            ""
        } else {
            "s"
        },
        crate::inert::line(run.run_id.as_str())
    ));
    text
}

/// The run summary as pretty JSON (what `summary.json` holds), when the run is concluded.
pub struct SummaryJson {
    out: Output,
}

impl SummaryJson {
    pub fn new(out: Output) -> Self {
        SummaryJson { out }
    }
}

impl Reporter for SummaryJson {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let Event::RunFinished(run) = event else {
            return Ok(());
        };
        let text = serde_json::to_string_pretty(&run.summary_json()).unwrap_or_default();
        self.out.print(&(crate::inert::json(&text).into_owned() + "\n"));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::events::EventSink;
    use crate::runner::{AttemptMetrics, Mismatch};
    use std::path::PathBuf;
    use std::sync::Arc;

    /// A writer whose bytes the test reads back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Shared {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn result(name: &str, verdict: TrialVerdict) -> TaskResult {
        TaskResult {
            trial: format!("golden::{name}"),
            category: "golden".into(),
            description: "d".into(),
            tags: Vec::new(),
            attempt: 1,
            agent: "oracle".into(),
            verdict,
            outcome: None,
            metrics: AttemptMetrics::default(),
            run_dir: PathBuf::from("/tmp/run"),
            flake_tolerance: 0,
            requirements: Vec::new(),
        }
    }

    fn failed() -> TrialVerdict {
        TrialVerdict::Failed(vec![Mismatch {
            what: "expect.outcome".into(),
            expected: "success".into(),
            actual: "failure".into(),
            diff: None,
        }])
    }

    #[test]
    fn the_libtest_line_names_each_trial_and_tallies_the_kinds_apart() {
        let out = Shared::default();
        let sink = EventSink::new(vec![Arc::new(LibtestLine::new(1).to(Output::to(out.clone())))]);
        for (name, verdict) in [
            ("a", TrialVerdict::Passed),
            ("b\u{1b}]0;x\u{7}", failed()),
            (
                "c",
                TrialVerdict::HarnessError {
                    cause: crate::error::Cause::Infrastructure,
                    message: "sandbox could not start".into(),
                },
            ),
        ] {
            let r = result(name, verdict);
            sink.trial(&r.trial, 1).finished(&r, &[]);
        }
        let dir = tempfile::tempdir().unwrap();
        let folder = RunFolder::new(dir.path(), crate::report::RunId::parse("x", "t").unwrap());
        folder
            .write_part(&TrialRecord::of(&result("a", TrialVerdict::Passed), &[]))
            .unwrap();
        let run = crate::report::conclude(&folder, &Default::default(), crate::report::Gate::NotChecked, None).unwrap();
        sink.emit(&Event::RunFinished(&run));
        let text = out.text();
        assert!(text.contains("ok     golden::a\n"), "{text}");
        assert!(text.contains("FAILED golden::b"), "{text}");
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(
            text.contains("harness error, cause infrastructure (not the agent's failure)"),
            "{text}"
        );
        assert!(text.ends_with("1 passed, 1 failed, 1 infrastructure error\n"), "{text}");
    }

    #[test]
    fn the_activity_entry_keeps_the_kinds_apart() {
        // The log's folder is a file: no append can succeed, whoever runs the test.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("file"), "").unwrap();
        let log = ActivityLogReporter::new(ActivityLog::new(dir.path().join("file/ACTIVITY_LOG.md")), "r1");
        let e = log.entry(
            &result(
                "a",
                TrialVerdict::HarnessError {
                    cause: crate::error::Cause::Infrastructure,
                    message: "no pytest".into(),
                },
            ),
            &[],
        );
        assert_eq!(e.status, EntryStatus::Error);
        assert_eq!(e.failures, vec!["no pytest".to_string()]);
        assert_eq!(e.run_id, "r1");
        assert_eq!(e.kind, crate::log::EntryKind::Error);
        assert_eq!(log.entry(&result("a", failed()), &[]).status, EntryStatus::Failed);
        assert_eq!(log.entry(&result("a", failed()), &[]).kind, crate::log::EntryKind::Task);
        // An unwritable log is retried, then the reporter's error, kept by the sink; the entry
        // is kept in the run folder.
        let sink = EventSink::new(vec![Arc::new(log)]);
        let mut r = result("a", TrialVerdict::Passed);
        r.run_dir = dir.path().join("run/golden/a/attempt-1");
        let started = std::time::Instant::now();
        sink.trial(&r.trial, 1).finished(&r, &[]);
        assert!(
            started.elapsed() >= APPEND_BACKOFF * 7,
            "three retries, waiting 50+100+200 ms"
        );
        let errors = sink.take_errors();
        assert_eq!(errors.len(), 1);
        let message = errors[0].to_string();
        assert!(
            message.contains("cannot append") && message.contains("4 tries"),
            "{message}"
        );
        let kept = r.run_dir.join(KEPT_ENTRY_FILE);
        assert!(message.contains(&kept.display().to_string()), "{message}");
        let (entries, warnings) = crate::log::parse_log(&std::fs::read_to_string(&kept).unwrap());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].task_id, r.trial);
        assert_eq!(entries[0].status, EntryStatus::Passed);
    }
}
