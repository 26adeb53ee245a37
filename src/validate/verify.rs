//! The verifier (`verify:`): one judged run, after the agent's last action, turned into
//! per-test outcomes, a reward in [0, 1] and a verdict.
//!
//! The runner places the verifier's files (read-only, in a folder of their own) and restores
//! the protected files first — the judged phase of [`super::judged`]; this module runs the
//! command there through the pipeline, with medin's runner shims, and reads what came of it:
//!
//! - **before**: a reward file already at `verify.reward.file` is deleted — only the verifier
//!   writes the reward (one that cannot be deleted fails the verification) — and its folder is
//!   made if missing;
//! - **the run**: `sh -c COMMAND` in the verifier's folder (the workspace root when it has no
//!   files), on its own time limit (not the agent's deadline), with `MEDIN_WORKSPACE`,
//!   `MEDIN_REWARD_FILE` and the workspace importable by Python only after the runner and
//!   everything installed (`MEDIN_IMPORT_AFTER_RUNNER`, read by the shim);
//! - **per-test outcomes**: from the runner shims' own records where a runner reported (pytest,
//!   unittest: every test by id), else parsed from the output with `testparse` (the
//!   `framework` given, or detected: the failures by name, the counts);
//! - **the reward**: the number in the reward file, or else the fraction of tests that passed
//!   (a skip is not a pass — code under test can raise `SkipTest`; a declared expected failure,
//!   `xfail`, is);
//! - **the verdict**: passed when the reward reaches `pass_at` (default 1); failed when it does
//!   not, when the verifier ran past its time, when a runner started and never finished its
//!   report (the code under test exited it), when the run could not be judged (no test ran,
//!   unreadable output) or the reward file is missing or not a number from 0 to 1 (reward 0);
//!   pending, with no reward, when nothing was judged: the guard refused the command, the
//!   sandbox could not start it, or its program is not installed (exit 127, nothing reported).
//! - **the log**: the whole captured output (up to the sandbox's cap per stream, a cut one
//!   says so with its SHA-256) in `verify.log` in the attempt's run folder, made inert.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::judged::RunnerEvidence;
use super::{first_chars, human, output_tail, short_command, ValidationResult, ValidationStatus};
use crate::error::RunError;
use crate::pipeline::{CommandOptions, CommandPassed, Origin, Pipeline, RunIn};
use crate::sandbox::{Beneath, CommandOutcome, ExitKind};
use crate::spec::VerifySpec;
use crate::testparse::{self, Framework, Status};

/// The log file of the verifier, in the attempt's run folder.
pub const LOG_FILE: &str = "verify.log";
/// Most per-test outcomes kept (the counts keep every test).
pub const MAX_TESTS: usize = 10_000;
/// Characters kept of one test's failure message.
const MAX_MESSAGE_CHARS: usize = 1000;
/// Largest reward file read, in bytes.
const MAX_REWARD_BYTES: u64 = 4096;

/// How one test ended, as the verifier's runner reported it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestStatus {
    Passed,
    Failed,
    /// It could not run: an exception outside its assertions, a module that failed to import,
    /// a set-up that failed.
    Error,
    /// It did not run.
    Skipped,
    /// It failed, as the test itself declares it expects to.
    Xfail,
}

impl TestStatus {
    /// Whether it counts as passed towards the reward.
    pub fn counts_as_passed(self) -> bool {
        matches!(self, TestStatus::Passed | TestStatus::Xfail)
    }
}

/// One test's outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestOutcome {
    /// The runner's id (`tests/test_x.py::test_add`, `test_calc.T.test_add`).
    pub id: String,
    pub status: TestStatus,
    /// The failure message, cut to 1000 characters.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// Where the reward came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewardSource {
    /// The fraction of tests that passed.
    Tests,
    /// The reward file the verifier wrote.
    File,
}

/// Where the per-test outcomes came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultsSource {
    /// medin's runner shims: every test by id, from the runner itself.
    Runner,
    /// The output, parsed (`testparse`): failures by name, and the counts.
    Output,
    /// Nothing ran.
    None,
}

/// The result of one verification, written to `metrics.json` (`verification`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The verifier's command, by its first line.
    pub command: String,
    pub status: ValidationStatus,
    /// The reward in [0, 1]; `None` when nothing was judged (pending).
    pub reward: Option<f64>,
    pub reward_from: RewardSource,
    /// The least reward that passes.
    pub pass_at: f64,
    /// The runner the outcomes came from (`pytest`, `unittest`, …; `unknown`).
    pub framework: String,
    pub results_from: ResultsSource,
    pub passed: u64,
    /// Tests that failed or errored.
    pub failed: u64,
    pub skipped: u64,
    /// Per-test outcomes, sorted by id (from the output: the failures only), at most
    /// [`MAX_TESTS`].
    pub tests: Vec<TestOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ExitKind>,
    pub timed_out: bool,
    pub duration_ms: u64,
    /// RFC 3339, when the verifier started.
    pub timestamp: String,
    /// Why it did not pass (`None` when it passed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the harness did or saw on the way (a reward file deleted before the run, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The last lines of the verifier's output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// The verifier's whole log (`verify.log` in the attempt's run folder).
    pub log: PathBuf,
}

impl Verification {
    pub fn passed(&self) -> bool {
        self.status == ValidationStatus::Passed
    }

    /// The verification as one more validation, for the reporters (activity log, events).
    pub fn as_validation(&self) -> ValidationResult {
        let (expected, actual) = (self.expected(), self.actual());
        ValidationResult {
            check: format!("verify {}", self.command),
            status: self.status,
            passed: self.passed(),
            evidence: self.summary(),
            confidence: 95,
            duration_ms: self.duration_ms,
            timestamp: self.timestamp.clone(),
            error: self.reason.clone(),
            expected: Some(expected),
            actual: Some(actual),
            output_tail: self.output_tail.clone(),
            warnings: Vec::new(),
        }
    }

    /// What a pass needs, in words.
    pub fn expected(&self) -> String {
        match (self.reward_from, self.pass_at >= 1.0) {
            (RewardSource::Tests, true) => "every test passed (reward 1)".into(),
            (RewardSource::Tests, false) => format!("a reward of at least {} (tests passed)", self.pass_at),
            (RewardSource::File, _) => format!("a reward of at least {} in the reward file", self.pass_at),
        }
    }

    /// What came of it, in words.
    pub fn actual(&self) -> String {
        let reward = self
            .reward
            .map(|r| format!("reward {}", round(r)))
            .unwrap_or_else(|| "no reward".into());
        match &self.reason {
            Some(why) => format!("{reward}: {why}"),
            None => format!("{reward}: {}", self.counts()),
        }
    }

    /// `3 of 4 tests passed` (with failed and skipped, when any).
    pub fn counts(&self) -> String {
        let total = self.passed + self.failed + self.skipped;
        let mut s = format!("{} of {total} tests passed", self.passed);
        if self.failed > 0 {
            s.push_str(&format!(", {} failed", self.failed));
        }
        if self.skipped > 0 {
            s.push_str(&format!(", {} skipped", self.skipped));
        }
        s
    }

    /// One line: the counts, the reward, the failing tests (a few), the log.
    pub fn summary(&self) -> String {
        let failing: Vec<&str> = self
            .tests
            .iter()
            .filter(|t| !t.status.counts_as_passed() && t.status != TestStatus::Skipped)
            .map(|t| t.id.as_str())
            .take(5)
            .collect();
        let mut s = format!("`{}`: {} ({})", self.command, self.counts(), self.actual());
        if !failing.is_empty() {
            s.push_str(&format!("; failing: {}", failing.join(", ")));
        }
        s.push_str(&format!("; log: {}", self.log.display()));
        s
    }
}

impl Verification {
    /// A verification that could not run because of what the agent left (its files could not
    /// be placed): failed, reward 0.
    pub fn not_run(spec: &VerifySpec, run_dir: &Path, why: &str) -> Verification {
        fail(Verification::pending(spec, run_dir), why.to_string())
    }

    /// This verification, voided: what it read was changed while it ran (by a process of the
    /// agent's), so it failed with reward 0, whatever the tests said.
    pub fn voided(mut self, why: &str) -> Verification {
        self.notes.push(format!(
            "the reward the run computed ({}) does not count",
            self.reward.map_or_else(|| "none".to_string(), |r| format!("{r:.3}"))
        ));
        fail(self, why.to_string())
    }

    /// A verification of `spec` about to start: pending, no reward yet.
    fn pending(spec: &VerifySpec, run_dir: &Path) -> Verification {
        Verification {
            command: short_command(&spec.command),
            status: ValidationStatus::Pending,
            reward: None,
            reward_from: if spec.reward_file().is_some() {
                RewardSource::File
            } else {
                RewardSource::Tests
            },
            pass_at: spec.pass_at(),
            framework: "unknown".into(),
            results_from: ResultsSource::None,
            passed: 0,
            failed: 0,
            skipped: 0,
            tests: Vec::new(),
            exit: None,
            timed_out: false,
            duration_ms: 0,
            timestamp: super::now_rfc3339(),
            reason: None,
            notes: Vec::new(),
            output_tail: None,
            log: run_dir.join(LOG_FILE),
        }
    }
}

/// Where and how to run one verification.
#[derive(Debug)]
pub struct VerifyRun<'a> {
    pub spec: &'a VerifySpec,
    pub pipeline: &'a Pipeline,
    /// The workspace, opened once (no link followed).
    pub ws: &'a Beneath,
    /// The workspace folder the verifier's files were placed in (its working directory);
    /// `None`: the workspace root.
    pub folder: Option<&'a str>,
    /// The attempt's run folder (`verify.log` goes there).
    pub run_dir: &'a Path,
}

/// Runs the verifier and judges what came of it. `Err` is the harness failing (its log cannot
/// be written); whatever the verifier or the agent did is in the [`Verification`].
pub fn run(r: &VerifyRun<'_>) -> Result<Verification, RunError> {
    let log = r.run_dir.join(LOG_FILE);
    let mut v = Verification::pending(r.spec, r.run_dir);
    let mut private: Option<PrivateReward> = None;
    if let Some(file) = r.spec.reward_file() {
        let ready =
            clear_reward_file(r.ws, file, &mut v.notes).and_then(|()| PrivateReward::prepare(r.ws, file, r.run_dir));
        match ready {
            Ok(p) => private = Some(p),
            Err(why) => {
                write_log(&log, r, None, "the verifier did not run")?;
                return Ok(fail(v, why));
            }
        }
    }
    // The workspace as the verifier sees it: its fixed root (`/app`) when the task has one.
    let seen = r.pipeline.sandbox().workspace_seen().to_path_buf();
    let workspace = seen.display().to_string();
    let mut env = vec![
        ("MEDIN_WORKSPACE".to_string(), workspace.clone()),
        ("MEDIN_IMPORT_AFTER_RUNNER".to_string(), workspace.clone()),
    ];
    if let Some(file) = r.spec.reward_file() {
        env.push(("MEDIN_REWARD_FILE".into(), seen.join(file).display().to_string()));
    }
    let place = RunIn {
        cwd: r.folder.map(PathBuf::from),
        env,
        own_time: true,
        write_paths: private.iter().map(|p| p.folder.clone()).collect(),
    };
    let options = CommandOptions {
        timeout: Some(r.spec.time_limit()),
        judged: true,
    };
    let ran = r
        .pipeline
        .command_in(Origin::Validator, "medin.verify", &r.spec.command, options, &place);
    let (outcome, evidence) = match ran {
        Ok(CommandPassed::Ran { outcome, evidence }) => (*outcome, evidence),
        Ok(CommandPassed::Denied { message }) => {
            if let (Some(p), Some(file)) = (&private, r.spec.reward_file()) {
                p.read_and_put_back(r.ws, file);
            }
            write_log(&log, r, None, &format!("the guard denied the verifier: {message}"))?;
            v.reason = Some(format!(
                "the guard denied the verifier: {message}; add a justified bypass to the task's policy if it is intended"
            ));
            return Ok(v);
        }
        Err(e) => {
            if let (Some(p), Some(file)) = (&private, r.spec.reward_file()) {
                p.read_and_put_back(r.ws, file);
            }
            write_log(&log, r, None, &format!("the verifier did not run: {e}"))?;
            v.reason = Some(format!("the verifier did not run: {e}"));
            return Ok(v);
        }
    };
    write_log(&log, r, Some(&outcome), "")?;
    v.exit = Some(outcome.exit);
    v.timed_out = outcome.timed_out;
    v.duration_ms = outcome.duration_ms;
    v.output_tail = output_tail(&outcome.stdout.text, &outcome.stderr.text);
    let framework = r.spec.framework.as_deref().and_then(|f| f.parse::<Framework>().ok());
    let report = results(&mut v, &outcome, evidence.as_ref(), framework);
    let reward_file = match (&private, r.spec.reward_file()) {
        (Some(p), Some(file)) => Some(p.read_and_put_back(r.ws, file)),
        _ => None,
    };
    Ok(judge(
        v,
        &outcome,
        evidence.as_ref(),
        &report,
        reward_file,
        r.spec.time_limit(),
    ))
}

/// Fills the per-test outcomes and counts of `v`; returns the run's report.
fn results(
    v: &mut Verification,
    outcome: &CommandOutcome,
    evidence: Option<&RunnerEvidence>,
    framework: Option<Framework>,
) -> testparse::TestReport {
    if let Some(ev) = evidence.filter(|ev| ev.recognised()) {
        v.results_from = ResultsSource::Runner;
        v.tests = ev
            .tests
            .values()
            .map(|t| TestOutcome {
                id: t.id.clone(),
                status: match (t.kind.as_str(), t.outcome.as_str()) {
                    ("test", "passed") => TestStatus::Passed,
                    ("test", "failed") => TestStatus::Failed,
                    ("test", "skipped") => TestStatus::Skipped,
                    ("test", "xfail") => TestStatus::Xfail,
                    _ => TestStatus::Error,
                },
                message: first_chars(t.message.trim(), MAX_MESSAGE_CHARS),
            })
            .collect();
        for t in &v.tests {
            match t.status {
                s if s.counts_as_passed() => v.passed += 1,
                TestStatus::Skipped => v.skipped += 1,
                _ => v.failed += 1,
            }
        }
        v.tests.truncate(MAX_TESTS);
        let report = ev.to_report(None);
        v.framework = report.framework.clone();
        return report;
    }
    let code = match outcome.exit {
        ExitKind::Code(c) => Some(c),
        ExitKind::Signal(_) => None,
    };
    let text = format!("{}\n{}", outcome.stdout.text, outcome.stderr.text);
    let report = testparse::parse(&text, code, framework);
    v.results_from = ResultsSource::Output;
    v.framework = report.framework.clone();
    v.passed = report.passed;
    v.failed = report.failed;
    v.skipped = report.skipped;
    v.tests = report
        .failures
        .iter()
        .take(MAX_TESTS)
        .map(|f| TestOutcome {
            id: f.name.clone(),
            status: TestStatus::Failed,
            message: first_chars(f.message.trim(), MAX_MESSAGE_CHARS),
        })
        .collect();
    report
}

/// Readies the reward file `file` (workspace-relative) for the verifier: one already there is
/// deleted (and `notes` says so), its folder is made if missing. `Err`: why no reward written
/// there could be trusted.
fn clear_reward_file(ws: &Beneath, file: &str, notes: &mut Vec<String>) -> Result<(), String> {
    let untrusted = |e: crate::sandbox::BeneathError| {
        format!("the reward file `{file}` cannot be cleared before verification ({e}): no reward written there could be trusted")
    };
    if ws.entry(file).map_err(untrusted)?.is_some() {
        ws.remove(file).map_err(untrusted)?;
        notes.push(format!(
            "a reward file was already at `{file}` before verification (left by the agent?); it was deleted: only the verifier writes the reward"
        ));
    }
    make_parent(ws, file).map_err(untrusted)
}

/// Makes the folders of `file` (workspace-relative), as Harbor's `/logs/verifier/` is there
/// before its verifier runs. (The workspace handle makes folders only on the way to a file:
/// one is written and removed.)
fn make_parent(ws: &Beneath, file: &str) -> Result<(), crate::sandbox::BeneathError> {
    let Some((parent, _)) = file.rsplit_once('/') else {
        return Ok(());
    };
    if ws.entry(parent)?.is_some() {
        return Ok(());
    }
    let marker = format!("{parent}/.medin-{:016x}", fastrand::u64(..));
    ws.write(&marker, b"", None)?;
    ws.remove(&marker).map(|_| ())
}

/// Where the verifier's reward really lands: a folder of the run folder that only the
/// verifier may write (under `strict` it is bound into the verifier's own view and nowhere
/// else), reached from the task's reward path in the workspace through a link the harness
/// puts there for the run. A process the agent left running (services live until the attempt
/// ends) sees the workspace, not this folder: it can replace the link — the verifier then
/// writes elsewhere and the reward is missing, a failure — but never write the reward. The
/// harness reads the reward from this folder only, then puts a plain copy back at the task's
/// path. So the verifier must write the reward in place (`echo 1 > reward.txt`), not replace
/// the file by a rename.
struct PrivateReward {
    folder: PathBuf,
}

/// Name of the reward file in [`PrivateReward::folder`].
const PRIVATE_REWARD: &str = "reward";

impl PrivateReward {
    fn prepare(ws: &Beneath, file: &str, run_dir: &Path) -> Result<PrivateReward, String> {
        // Beside the judged runs' report folders: where a container task's commands can
        // reach it too (its judge folders are mounted at their host paths).
        let folder = crate::validate::judged::RunnerShims::folders(run_dir)
            .1
            .join(format!("reward-{:016x}", fastrand::u64(..)));
        std::fs::create_dir_all(&folder)
            .and_then(|()| folder.canonicalize())
            .map_err(|e| format!("cannot make the verifier's reward folder {}: {e}", folder.display()))
            .and_then(|folder| {
                ws.symlink(file, &folder.join(PRIVATE_REWARD))
                    .map_err(|e| format!("cannot place the reward file `{file}` for the verifier: {e}"))?;
                Ok(PrivateReward { folder })
            })
    }

    /// The reward the verifier wrote, read from the private folder; the link at `file` is
    /// replaced by a plain copy of it (or removed when there is none).
    fn read_and_put_back(&self, ws: &Beneath, file: &str) -> RewardRead {
        let read = match Beneath::open(&self.folder) {
            Ok(own) => read_reward(&own, PRIVATE_REWARD),
            Err(e) => RewardRead::Invalid(format!("its folder cannot be opened: {e}")),
        };
        let _ = ws.remove(file);
        if let Ok(own) = Beneath::open(&self.folder) {
            if let Ok(bytes) = own.read(PRIVATE_REWARD, MAX_REWARD_BYTES) {
                let _ = ws.write(file, &bytes, None);
            }
        }
        read
    }
}

/// What the reward file said.
#[derive(Debug, Clone, PartialEq)]
enum RewardRead {
    Value(f64),
    Missing,
    Invalid(String),
}

fn read_reward(ws: &Beneath, file: &str) -> RewardRead {
    match ws.entry(file) {
        Ok(None) => return RewardRead::Missing,
        Err(e) if e.is_not_found() => return RewardRead::Missing,
        Err(e) => return RewardRead::Invalid(format!("it cannot be read: {e}")),
        Ok(Some(_)) => {}
    }
    let bytes = match ws.read(file, MAX_REWARD_BYTES) {
        Ok(b) => b,
        Err(e) => return RewardRead::Invalid(format!("it cannot be read: {e}")),
    };
    let text = String::from_utf8_lossy(&bytes);
    match text.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && (0.0..=1.0).contains(&r) => RewardRead::Value(r),
        _ => RewardRead::Invalid(format!(
            "it holds `{}`, not a number from 0 to 1",
            first_chars(text.trim(), 40)
        )),
    }
}

/// The verdict, by the rules of the module documentation.
fn judge(
    mut v: Verification,
    outcome: &CommandOutcome,
    evidence: Option<&RunnerEvidence>,
    report: &testparse::TestReport,
    reward_file: Option<RewardRead>,
    limit: Duration,
) -> Verification {
    if outcome.timed_out {
        return fail(
            v,
            format!(
                "the verifier ran past its time limit of {} and was killed",
                human(limit)
            ),
        );
    }
    if let Some(ev) = evidence.filter(|ev| !ev.unfinished.is_empty()) {
        return fail(
            v,
            format!(
                "a test runner did not finish its report ({}): the code under test ended it early, or the report was tampered with",
                ev.unfinished.join("; ")
            ),
        );
    }
    let nothing_reported = v.results_from == ResultsSource::Output && report.status == Status::Error;
    let wrote_reward = matches!(reward_file, Some(RewardRead::Value(_)));
    if outcome.exit == ExitKind::Code(127) && nothing_reported && !wrote_reward {
        v.reason = Some("command not found (exit 127): the verifier's program is not installed or not on PATH".into());
        return v;
    }
    let reward = match reward_file {
        Some(RewardRead::Value(r)) => r,
        Some(RewardRead::Missing) => return fail(v, "the verifier wrote no reward file".into()),
        Some(RewardRead::Invalid(why)) => return fail(v, format!("the reward file is not usable: {why}")),
        None => {
            let total = v.passed + v.failed + v.skipped;
            let fraction = if total == 0 {
                0.0
            } else {
                v.passed as f64 / total as f64
            };
            match report.status {
                _ if total == 0 => return fail(v, "no test ran".into()),
                Status::Error | Status::NoTests => {
                    let first = report
                        .failures
                        .first()
                        .map(|f| format!(": {}: {}", f.name, first_chars(f.message.trim(), 200)))
                        .unwrap_or_default();
                    v.reward = Some(fraction);
                    v.status = ValidationStatus::Failed;
                    v.reason = Some(format!("the test run could not be judged ({:?}){first}", report.status));
                    return v;
                }
                Status::Passed | Status::Failed => fraction,
            }
        }
    };
    v.reward = Some(reward);
    if reward + 1e-9 >= v.pass_at {
        v.status = ValidationStatus::Passed;
    } else {
        v.status = ValidationStatus::Failed;
        v.reason = Some(match v.reward_from {
            RewardSource::Tests => format!("{}, below the pass mark {}", v.counts(), v.pass_at),
            RewardSource::File => format!(
                "the reward file says {}, below the pass mark {}",
                round(reward),
                v.pass_at
            ),
        });
    }
    v
}

/// `v`, failed with reward 0 because of `why`.
fn fail(mut v: Verification, why: String) -> Verification {
    v.status = ValidationStatus::Failed;
    v.reward = Some(0.0);
    v.reason = Some(why);
    v
}

/// A reward as people read it: at most 4 decimals.
fn round(r: f64) -> f64 {
    (r * 10_000.0).round() / 10_000.0
}

/// Writes `verify.log`: what ran, where, how it ended, and everything it printed (as the
/// sandbox captured it), made inert; `note` when it did not run.
fn write_log(log: &Path, r: &VerifyRun<'_>, outcome: Option<&CommandOutcome>, note: &str) -> Result<(), RunError> {
    let mut text =
        String::from("# medin verify.log: the verifier's output as captured (control characters made inert)\n");
    text.push_str(&format!("command: {}\n", r.spec.command));
    text.push_str(&format!(
        "working directory: {}\n",
        r.folder
            .map(|f| r.ws.path().join(f))
            .unwrap_or_else(|| r.ws.path().to_path_buf())
            .display()
    ));
    match outcome {
        None => text.push_str(&format!("{note}\n")),
        Some(o) => {
            text.push_str(&format!(
                "exit: {:?}; timed out: {}; duration: {} ms; isolation: {:?}\n",
                o.exit, o.timed_out, o.duration_ms, o.isolation
            ));
            for (name, stream) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
                let cut = if stream.truncated {
                    format!(
                        " (cut: {} bytes written, the first kept; whole stream {})",
                        stream.total_bytes, stream.sha256
                    )
                } else {
                    String::new()
                };
                text.push_str(&format!("--- {name}{cut} ---\n"));
                text.push_str(&crate::inert::text(&stream.text));
                if !stream.text.ends_with('\n') && !stream.text.is_empty() {
                    text.push('\n');
                }
            }
        }
    }
    std::fs::write(log, text).map_err(|e| RunError::log(log, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::CapturedOutput;

    fn outcome(code: i32, stdout: &str) -> CommandOutcome {
        let out = |t: &str| CapturedOutput {
            text: t.into(),
            total_bytes: t.len() as u64,
            truncated: false,
            sha256: String::new(),
        };
        CommandOutcome {
            exit: ExitKind::Code(code),
            stdout: out(stdout),
            stderr: out(""),
            duration_ms: 1,
            timed_out: false,
            limit: None,
            isolation: Default::default(),
            usage: Default::default(),
        }
    }

    fn blank(reward_from: RewardSource, pass_at: f64) -> Verification {
        Verification {
            command: "pytest".into(),
            status: ValidationStatus::Pending,
            reward: None,
            reward_from,
            pass_at,
            framework: "unknown".into(),
            results_from: ResultsSource::None,
            passed: 0,
            failed: 0,
            skipped: 0,
            tests: Vec::new(),
            exit: None,
            timed_out: false,
            duration_ms: 0,
            timestamp: String::new(),
            reason: None,
            notes: Vec::new(),
            output_tail: None,
            log: PathBuf::from("verify.log"),
        }
    }

    const PYTEST_3_OF_4: &str = "tests/test_x.py ...F\n=== FAILURES ===\n___ test_d ___\nE assert 1 == 2\n=== short test summary info ===\nFAILED tests/test_x.py::test_d - assert 1 == 2\n=== 1 failed, 3 passed in 0.01s ===\n";

    fn judged(out: &CommandOutcome, reward_from: RewardSource, pass_at: f64, file: Option<RewardRead>) -> Verification {
        let mut v = blank(reward_from, pass_at);
        let report = results(&mut v, out, None, Some(Framework::Pytest));
        judge(v, out, None, &report, file, Duration::from_secs(1))
    }

    #[test]
    fn the_reward_is_the_fraction_of_tests_passed_and_pass_at_decides() {
        let out = outcome(1, PYTEST_3_OF_4);
        let v = judged(&out, RewardSource::Tests, 1.0, None);
        assert_eq!((v.status, v.reward), (ValidationStatus::Failed, Some(0.75)), "{v:?}");
        assert_eq!(v.tests.len(), 1, "the failures, by name: {v:?}");
        assert_eq!(v.tests[0].status, TestStatus::Failed);
        assert!(v.reason.as_deref().unwrap().contains("3 of 4 tests passed"), "{v:?}");
        let v = judged(&out, RewardSource::Tests, 0.7, None);
        assert_eq!((v.status, v.reward), (ValidationStatus::Passed, Some(0.75)), "{v:?}");
    }

    #[test]
    fn a_reward_file_decides_and_a_missing_or_bad_one_fails() {
        let out = outcome(1, PYTEST_3_OF_4);
        let v = judged(&out, RewardSource::File, 0.5, Some(RewardRead::Value(0.5)));
        assert_eq!((v.status, v.reward), (ValidationStatus::Passed, Some(0.5)));
        let v = judged(&out, RewardSource::File, 0.5, Some(RewardRead::Missing));
        assert_eq!((v.status, v.reward), (ValidationStatus::Failed, Some(0.0)));
        let v = judged(&out, RewardSource::File, 0.5, Some(RewardRead::Invalid("x".into())));
        assert_eq!(v.status, ValidationStatus::Failed);
    }

    #[test]
    fn nothing_run_fails_and_nothing_installed_is_pending() {
        let v = judged(&outcome(0, "hello\n"), RewardSource::Tests, 1.0, None);
        assert_eq!(v.status, ValidationStatus::Failed, "{v:?}");
        let v = judged(
            &outcome(127, "sh: 1: pytest: not found\n"),
            RewardSource::Tests,
            1.0,
            None,
        );
        assert_eq!((v.status, v.reward), (ValidationStatus::Pending, None), "{v:?}");
        let mut late = outcome(0, PYTEST_3_OF_4);
        late.timed_out = true;
        let v = judged(&late, RewardSource::Tests, 0.1, None);
        assert_eq!((v.status, v.reward), (ValidationStatus::Failed, Some(0.0)), "{v:?}");
    }

    #[test]
    fn the_shims_records_give_every_test_and_an_unfinished_runner_fails() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("start-1.json"), r#"{"runner":"pytest"}"#).unwrap();
        std::fs::write(
            dir.path().join("result-1.json"),
            r#"{"runner":"pytest","complete":true,"tests":[{"id":"t.py::a","outcome":"passed"},{"id":"t.py::b","outcome":"xfail"},{"id":"t.py::c","outcome":"skipped"}]}"#,
        )
        .unwrap();
        let ev = RunnerEvidence::read(dir.path());
        let out = outcome(0, "");
        let mut v = blank(RewardSource::Tests, 0.6);
        let report = results(&mut v, &out, Some(&ev), None);
        let v = judge(v, &out, Some(&ev), &report, None, Duration::from_secs(1));
        assert_eq!(v.results_from, ResultsSource::Runner);
        assert_eq!(v.tests.len(), 3);
        assert_eq!((v.passed, v.skipped), (2, 1), "xfail counts as passed, a skip does not");
        assert_eq!(
            (v.status, v.reward.map(round)),
            (ValidationStatus::Passed, Some(0.6667))
        );
        std::fs::write(dir.path().join("start-2.json"), r#"{"runner":"pytest"}"#).unwrap();
        let ev = RunnerEvidence::read(dir.path());
        let mut v = blank(RewardSource::Tests, 0.1);
        let report = results(&mut v, &out, Some(&ev), None);
        let v = judge(v, &out, Some(&ev), &report, None, Duration::from_secs(1));
        assert_eq!((v.status, v.reward), (ValidationStatus::Failed, Some(0.0)), "{v:?}");
    }

    #[test]
    fn a_reward_file_must_hold_a_number_from_0_to_1() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Beneath::open(dir.path()).unwrap();
        assert_eq!(read_reward(&ws, "r.txt"), RewardRead::Missing);
        for (text, want) in [
            ("0.25\n", Some(0.25)),
            ("1", Some(1.0)),
            ("1.5", None),
            ("nan", None),
            ("x", None),
        ] {
            std::fs::write(dir.path().join("r.txt"), text).unwrap();
            match (read_reward(&ws, "r.txt"), want) {
                (RewardRead::Value(r), Some(w)) => assert_eq!(r, w),
                (RewardRead::Invalid(_), None) => {}
                (got, _) => panic!("{text:?}: {got:?}"),
            }
        }
    }
}
