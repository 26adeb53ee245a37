//! Did it work? Validators check the real end state: files, commands (through the sandbox),
//! listening ports, HTTP endpoints. They run in parallel, each with a timeout (60 s default).
//! A validator is shown by its `name:`, else by a short label (a command's first line, cut to
//! 80 characters), never by its whole command; a failed one carries the tail of its output
//! (the last 20 lines, bounded).
//! A validator that cannot run at all (service or tool unavailable) is `pending`, never a pass:
//! nothing is complete without a validation that ran and passed.
//!
//! This module owns the checks and their evidence; it never decides policy (the guard does) and
//! never spawns a workspace command itself (commands go through the pipeline,
//! [`crate::pipeline`]). The one process it starts is the container engine's CLI (`docker`),
//! with fixed arguments and no shell: an observation of the host, like a TCP connect.
//!
//! Each validator lives in its own file: [`mod@file`] (`file_exists`, `file_contains`), [`command`]
//! (a shell command through the sandbox), [`net`] (`port_listening`, `http`), [`custom`] (a
//! script through the sandbox that prints a one-line JSON verdict), [`docker`] (a container's
//! state from the installed engine). [`cache`] keeps results for a few seconds (5 s by
//! default), keyed by the validator and the workspace state it depends on, so a duplicate
//! request does not run again, and no stale result is ever reused. [`verify`] runs a task's
//! verifier (`verify:`) and turns it into per-test outcomes and a reward.
//!
//! A check that takes longer than [`SLOW_CHECK`] (100 ms) carries a warning naming it and its
//! time ([`ValidationResult::warnings`]).
//!
//! Confidence (0-100, how sure the check is of its answer):
//! - 100: a direct observation by medin itself: a file exists / contains the pattern, a TCP
//!   connection was accepted or refused, an HTTP status code with no body check;
//! - 95: a command's exit code and output, a custom script's verdict (the command is the one
//!   judging; it may be flaky), a container's state as its engine reports it;
//! - 90: an HTTP body substring check (a substring can match unrelated text, e.g. an error page
//!   that quotes the expected word);
//! - 0: pending, nothing was observed.

pub mod cache;
pub mod command;
pub mod custom;
pub mod docker;
pub mod file;
pub mod judged;
pub mod net;
pub mod verify;

pub use cache::{run_all_cached, ValidationCache};

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::spec::{Validator, ValidatorSpec};

/// Whether a validation ran and held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValidationStatus {
    Passed,
    Failed,
    /// Could not run (unavailable tool or service, timeout before an answer); not a pass.
    Pending,
}

/// The result of one validation, with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ValidationResult {
    /// Short label, e.g. `file_exists hello.txt`.
    pub check: String,
    pub status: ValidationStatus,
    /// `status == Passed`.
    pub passed: bool,
    /// What was observed.
    pub evidence: String,
    /// 0-100: how sure the check is of its answer.
    pub confidence: u8,
    pub duration_ms: u64,
    /// RFC 3339.
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actual: Option<String>,
    /// The last lines of what a command printed (stdout, then stderr; see [`output_tail`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tail: Option<String>,
    /// What the run should know beside the verdict: a check slower than [`SLOW_CHECK`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Where validators look, and the pipeline their commands pass through.
#[derive(Debug, Clone)]
pub struct ValidateContext {
    pub workspace: PathBuf,
    /// Per-validator timeout when the spec gives none ([`DEFAULT_TIMEOUT`]).
    pub default_timeout: Duration,
    /// `command` validators are actions like any other: guard, decision, sandbox (judged
    /// through the runner shims when the pipeline has them), receipt.
    pub pipeline: std::sync::Arc<crate::pipeline::Pipeline>,
}

impl ValidateContext {
    /// A context for `workspace` on its own: a standalone pipeline there
    /// ([`crate::pipeline::Pipeline::standalone`]) and the default timeout ([`DEFAULT_TIMEOUT`]).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        let workspace = workspace.into();
        ValidateContext {
            pipeline: std::sync::Arc::new(crate::pipeline::Pipeline::standalone(&workspace)),
            workspace,
            default_timeout: DEFAULT_TIMEOUT,
        }
    }
}

/// The timeout of a validator whose spec gives none: long enough for a real test suite
/// (`medin check` warns about a command validator that relies on it).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Lines of a command's output a failed check shows ([`output_tail`]).
pub const TAIL_LINES: usize = 20;
/// Characters kept of one line of an output tail.
const TAIL_LINE_CHARS: usize = 300;
/// Characters a command's label keeps of its first line.
pub const LABEL_CHARS: usize = 80;

/// How long [`ValidationCache::default`] keeps a result.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(5);

/// A validator that takes longer than this carries a warning (the latency target of a check).
pub const SLOW_CHECK: Duration = Duration::from_millis(100);

/// The warning of a check that took `took`, longer than [`SLOW_CHECK`]: names it and its time.
pub fn slow_warning(check: &str, took: Duration) -> String {
    format!(
        "slow validator `{check}`: took {} ms (over {} ms); a check this slow holds up every verdict",
        millis(took),
        millis(SLOW_CHECK)
    )
}

/// What a validator observed, before timing and timestamp are added.
#[derive(Debug, Clone)]
pub(crate) struct Observation {
    pub status: ValidationStatus,
    pub evidence: String,
    pub confidence: u8,
    pub error: Option<String>,
    pub expected: Option<String>,
    pub actual: Option<String>,
    /// Boxed: an observation travels in `Result`s, and stays small.
    pub output_tail: Option<Box<str>>,
}

impl Observation {
    pub(crate) fn passed(evidence: impl Into<String>, confidence: u8) -> Self {
        Observation {
            status: ValidationStatus::Passed,
            evidence: evidence.into(),
            confidence,
            error: None,
            expected: None,
            actual: None,
            output_tail: None,
        }
    }

    pub(crate) fn failed(
        evidence: impl Into<String>,
        confidence: u8,
        error: impl Into<String>,
        expected: impl Into<String>,
        actual: impl Into<String>,
    ) -> Self {
        Observation {
            status: ValidationStatus::Failed,
            evidence: evidence.into(),
            confidence,
            error: Some(error.into()),
            expected: Some(expected.into()),
            actual: Some(actual.into()),
            output_tail: None,
        }
    }

    /// Nothing was observed: the check could not run.
    pub(crate) fn pending(evidence: impl Into<String>, error: impl Into<String>) -> Self {
        Observation {
            status: ValidationStatus::Pending,
            evidence: evidence.into(),
            confidence: 0,
            error: Some(error.into()),
            expected: None,
            actual: None,
            output_tail: None,
        }
    }

    /// The same observation, carrying the tail of what the command printed.
    pub(crate) fn with_output(mut self, stdout: &str, stderr: &str) -> Self {
        self.output_tail = output_tail(stdout, stderr).map(String::into_boxed_str);
        self
    }

    fn into_result(self, check: String, started: Instant, timestamp: String) -> ValidationResult {
        let took = started.elapsed();
        let warnings = if took > SLOW_CHECK {
            vec![slow_warning(&check, took)]
        } else {
            Vec::new()
        };
        ValidationResult {
            warnings,
            check,
            passed: self.status == ValidationStatus::Passed,
            status: self.status,
            evidence: self.evidence,
            confidence: self.confidence,
            duration_ms: millis(took),
            timestamp,
            error: self.error,
            expected: self.expected,
            actual: self.actual,
            output_tail: self.output_tail.map(String::from),
        }
    }
}

pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A duration as people write it in specs: `5s`, `300ms`.
pub(crate) fn human(d: Duration) -> String {
    humantime::format_duration(Duration::from_millis(millis(d))).to_string()
}

/// The first `n` characters of `text`, with `…` when cut.
pub(crate) fn first_chars(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}

/// Compiles a validator pattern in multi-line mode, as `grep` reads text: `^` and `$` match at
/// every line start and end, so `^v\d+$` matches the output `v42\n`. Within the limits of
/// [`crate::spec::pattern`].
pub fn compile_pattern(pattern: &str) -> Result<regex::Regex, crate::spec::pattern::PatternError> {
    crate::spec::pattern::compile(pattern)
}

/// The first line of `command`, cut to [`LABEL_CHARS`] characters (`…` marks a cut, or more
/// lines): how a command is named in labels and evidence, never by its whole text.
pub fn short_command(command: &str) -> String {
    let mut lines = command.trim().lines();
    let first = lines.next().unwrap_or_default().trim_end();
    let shown = first_chars(first, LABEL_CHARS);
    if lines.next().is_some() && !shown.ends_with('…') {
        format!("{shown} …")
    } else {
        shown
    }
}

/// The last [`TAIL_LINES`] lines of what a command printed (stdout, then stderr), each cut to
/// 300 characters; `None` when it printed nothing. Agent-controlled text: made inert where
/// it is shown.
pub fn output_tail(stdout: &str, stderr: &str) -> Option<String> {
    let text = [stdout.trim_end(), stderr.trim_end()]
        .into_iter()
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let skipped = lines.len().saturating_sub(TAIL_LINES);
    let mut out: Vec<String> = Vec::with_capacity(TAIL_LINES + 1);
    if skipped > 0 {
        out.push(format!("… ({skipped} earlier lines)"));
    }
    out.extend(lines[skipped..].iter().map(|l| first_chars(l, TAIL_LINE_CHARS)));
    Some(out.join("\n"))
}

/// The label a validator is shown by: its `name:`, else its check's short label.
pub fn check_label(v: &Validator) -> String {
    match &v.name {
        Some(name) => first_chars(name.trim(), LABEL_CHARS),
        None => spec_label(&v.check),
    }
}

/// The short label of a check, e.g. `file_exists hello.txt`, `command pytest -q`.
pub fn spec_label(spec: &ValidatorSpec) -> String {
    let label = match spec {
        ValidatorSpec::FileExists(path) => format!("file_exists {path}"),
        ValidatorSpec::FileContains(c) => format!("file_contains {} /{}/", c.path, c.pattern),
        ValidatorSpec::Command(c) => return format!("command {}", short_command(&c.run)),
        ValidatorSpec::PortListening(p) => {
            format!("port_listening {}", net::host_port(net::port_host(p), p.port))
        }
        ValidatorSpec::Http(h) => format!("http GET {}", h.url),
        ValidatorSpec::Custom(c) => return format!("custom {}", short_command(&c.command)),
        ValidatorSpec::Docker(d) => format!("docker {}", d.container),
    };
    first_chars(&label, LABEL_CHARS * 2)
}

/// The timeout that applies to `spec`: its own, or `ctx.default_timeout`.
pub fn timeout_for(spec: &ValidatorSpec, ctx: &ValidateContext) -> Duration {
    let own = match spec {
        ValidatorSpec::Command(c) => c.timeout.as_ref().map(|t| t.0),
        ValidatorSpec::Http(h) => h.timeout.as_ref().map(|t| t.0),
        ValidatorSpec::Custom(c) => c.timeout.as_ref().map(|t| t.0),
        _ => None,
    };
    own.unwrap_or(ctx.default_timeout)
}

/// Runs `check` inside the attempt's network namespace when it has one, else right here.
fn in_attempt_network<T: Send>(ctx: &ValidateContext, check: impl FnOnce() -> T + Send) -> T {
    match &ctx.pipeline.sandbox().attempt {
        Some(attempt) => attempt.in_network(check),
        None => check(),
    }
}

/// Runs one validator on the calling thread (its own timeout applies inside).
pub fn run_one(v: &Validator, ctx: &ValidateContext) -> ValidationResult {
    let started = Instant::now();
    let timestamp = now_rfc3339();
    let timeout = timeout_for(&v.check, ctx);
    let obs = match &v.check {
        ValidatorSpec::FileExists(path) => file::file_exists(&places(ctx), &ctx.workspace, path),
        ValidatorSpec::FileContains(c) => file::file_contains(&places(ctx), &ctx.workspace, &c.path, &c.pattern),
        ValidatorSpec::Command(c) => command::run(&ctx.pipeline, c, timeout),
        // The attempt's services answer in the attempt's network namespace, where these look.
        ValidatorSpec::PortListening(p) => in_attempt_network(ctx, || net::port_listening(p, timeout)),
        ValidatorSpec::Http(h) => in_attempt_network(ctx, || net::http(h, timeout)),
        ValidatorSpec::Custom(c) => custom::run(&ctx.pipeline, c, timeout),
        ValidatorSpec::Docker(d) => docker::check(&docker::Engine::from_env(), d, timeout),
    };
    obs.into_result(check_label(v), started, timestamp)
}

/// The fixed paths file checks may name: those of the pipeline's sandbox.
fn places(ctx: &ValidateContext) -> file::FixedPlaces {
    file::FixedPlaces::of(ctx.pipeline.sandbox())
}

pub(crate) fn now_rfc3339() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// How much longer than its own timeout a validator may take before the watchdog gives up on
/// it. Commands get the sandbox's grace period on top, so the sandbox can kill the tree itself.
fn watchdog(spec: &ValidatorSpec, ctx: &ValidateContext, timeout: Duration) -> Duration {
    let slack = Duration::from_secs(1);
    match spec {
        ValidatorSpec::Command(_) | ValidatorSpec::Custom(_) => timeout + ctx.pipeline.sandbox().grace + slack + slack,
        _ => timeout + slack,
    }
}

/// Runs every validator in parallel; results come back in the order of `specs`.
///
/// Each validator runs on its own thread and enforces its own timeout; a watchdog additionally
/// turns a validator that has not answered shortly after its timeout into `pending`
/// ("timed out after ..."), so one stuck check can never hold up the others or the run.
pub fn run_all(specs: &[Validator], ctx: &ValidateContext) -> Vec<ValidationResult> {
    let started = Instant::now();
    let mut waiting = Vec::with_capacity(specs.len());
    for spec in specs {
        let (tx, rx) = mpsc::channel();
        let (spec_owned, ctx_owned) = (spec.clone(), ctx.clone());
        let spawned = std::thread::Builder::new()
            .name("medin-validate".into())
            .spawn(move || {
                // The receiver may have given up (watchdog); nothing to do then.
                let _ = tx.send(run_one(&spec_owned, &ctx_owned));
            });
        waiting.push((spec, spawned.map(|_| rx)));
    }
    waiting
        .into_iter()
        .map(|(spec, rx)| {
            let timeout = timeout_for(&spec.check, ctx);
            let timestamp = now_rfc3339();
            let rx = match rx {
                Ok(rx) => rx,
                Err(e) => {
                    return Observation::pending(
                        "the validator could not start",
                        format!("cannot start a validator thread: {e}; the machine is out of threads or memory"),
                    )
                    .into_result(check_label(spec), Instant::now(), timestamp)
                }
            };
            let deadline = started + watchdog(&spec.check, ctx, timeout);
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(result) => result,
                Err(mpsc::RecvTimeoutError::Disconnected) => Observation::pending(
                    "the validator stopped without a result",
                    "the validator crashed (an internal error in medin); please report it with this task",
                )
                .into_result(check_label(spec), started, timestamp),
                Err(mpsc::RecvTimeoutError::Timeout) => Observation::pending(
                    format!("no answer within {}", human(timeout)),
                    format!("timed out after {}", human(timeout)),
                )
                .into_result(check_label(spec), started, timestamp),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_chars_cuts_on_char_boundaries() {
        assert_eq!(first_chars("héllo", 2), "hé…");
        assert_eq!(first_chars("abc", 3), "abc");
        assert_eq!(first_chars("", 0), "");
    }

    fn validator(json: &str) -> Validator {
        serde_json::from_str::<ValidatorSpec>(json).unwrap().into()
    }

    #[test]
    fn labels_name_the_check() {
        assert_eq!(
            check_label(&validator(r#"{"file_exists": "hello.txt"}"#)),
            "file_exists hello.txt"
        );
        assert_eq!(
            check_label(&validator(r#"{"command": "grep -q x f"}"#)),
            "command grep -q x f"
        );
        assert_eq!(
            check_label(&validator(r#"{"port_listening": {"port": 8080}}"#)),
            "port_listening 127.0.0.1:8080"
        );
        assert_eq!(
            check_label(&validator(r#"{"http": {"url": "http://x/"}}"#)),
            "http GET http://x/"
        );
        let named = Validator {
            name: Some("tests pass".into()),
            ..validator(r#"{"command": "pytest -q"}"#)
        };
        assert_eq!(check_label(&named), "tests pass");
    }

    #[test]
    fn a_command_is_labelled_by_its_first_line_cut_short() {
        let long = format!("{} \\\n  --flag\nsecond line", "x".repeat(200));
        let label = check_label(&validator(&serde_json::json!({ "command": long }).to_string()));
        assert_eq!(label.chars().count(), "command ".len() + LABEL_CHARS + 1, "{label}");
        assert!(label.ends_with('…') && !label.contains("second"), "{label}");
        assert_eq!(short_command("make test\nmake lint"), "make test …");
    }

    #[test]
    fn the_output_tail_keeps_the_last_lines_of_both_streams() {
        let out: String = (1..=30).map(|i| format!("out {i}\n")).collect();
        let tail = output_tail(&out, "err 1\n").unwrap();
        let lines: Vec<&str> = tail.lines().collect();
        assert_eq!(lines.len(), TAIL_LINES + 1, "{tail}");
        assert_eq!(lines[0], "… (11 earlier lines)");
        assert_eq!(lines[1], "out 12");
        assert_eq!(lines[TAIL_LINES], "err 1");
        assert!(output_tail("", "  \n").is_none());
        assert!(output_tail(&"y".repeat(10_000), "").unwrap().chars().count() <= TAIL_LINE_CHARS + 1);
    }

    #[test]
    fn timeouts_come_from_the_spec_or_the_context() {
        let mut ctx = ValidateContext::new("/tmp");
        ctx.default_timeout = Duration::from_millis(1234);
        let spec: ValidatorSpec = serde_json::from_str(r#"{"command": {"run": "true", "timeout": "2s"}}"#).unwrap();
        assert_eq!(timeout_for(&spec, &ctx), Duration::from_secs(2));
        let spec: ValidatorSpec = serde_json::from_str(r#"{"file_exists": "a"}"#).unwrap();
        assert_eq!(timeout_for(&spec, &ctx), Duration::from_millis(1234));
    }
}
