//! The `command` validator: a shell command run in the workspace through the sandbox (the same
//! confinement as the agent's own commands), judged by its exit code and, optionally, a regex its
//! stdout must match (multi-line mode: `^`/`$` match at line boundaries, as in grep).
//!
//! - exit code as expected (and stdout matching) → passed;
//! - another exit code, a kill by a signal, stdout not matching → failed;
//! - the timeout fired, the sandbox could not start the command, or the shell reported
//!   "command not found" (exit 127, unless 127 was expected) → pending: nothing was judged.
//!
//! Evidence names the command by its first line ([`super::short_command`]), never by its whole
//! text, and a check that did not pass carries the tail of its output
//! ([`super::output_tail`]).

use std::time::Duration;

use super::{compile_pattern, first_chars, human, short_command, Observation};
use crate::pipeline::{CommandOptions, CommandPassed, Origin, Pipeline};
use crate::sandbox::ExitKind;
use crate::spec::CommandCheck;
use crate::validate::judged::RunnerEvidence;

/// Confidence of a command's verdict: the command judges, medin only reads its answer.
pub(crate) const CONFIDENCE: u8 = 95;

/// Runs `check` through the pipeline (guard, decision, sandbox, receipt) with `timeout` as its
/// wall-clock limit, as a judged run when the pipeline has runner shims (see [`super::judged`]): a test runner that started and never finished its
/// report fails the check whatever the exit code, and one that reported a failing test fails a
/// check that expects exit 0.
pub(crate) fn run(pipeline: &Pipeline, check: &CommandCheck, timeout: Duration) -> Observation {
    let stdout_re = match check.stdout.as_deref().map(compile_pattern).transpose() {
        Ok(re) => re,
        Err(e) => {
            let pattern = check.stdout.clone().unwrap_or_default();
            return Observation::failed(
                format!("stdout pattern /{pattern}/ is not a valid regex"),
                100,
                format!("invalid stdout regex /{pattern}/: {e}; fix the pattern in the task"),
                pattern,
                "(not run)",
            );
        }
    };
    let shown = short_command(&check.run);
    let (outcome, evidence) = match through_pipeline(pipeline, &check.run, timeout) {
        Ok(ran) => ran,
        Err(not_run) => return not_run,
    };
    if let Some(broken) = runner_contradicts(evidence.as_ref(), &outcome, check.exit_code == 0, &shown) {
        return broken;
    }
    let out = &outcome.stdout.text;
    let err = &outcome.stderr.text;
    let obs = judge_exit(check, &shown, &outcome, stdout_re.as_ref(), timeout);
    if obs.status == super::ValidationStatus::Passed {
        obs
    } else {
        obs.with_output(out, err)
    }
}

/// Runs `command` through the pipeline as a validator's judged command (guard, decision,
/// sandbox, receipt) under `timeout`: its outcome and the test runner's own evidence, or the
/// pending observation of a command that did not run (denied, or the sandbox failed).
pub(crate) fn through_pipeline(
    pipeline: &Pipeline,
    command: &str,
    timeout: Duration,
) -> Result<(crate::sandbox::CommandOutcome, Option<RunnerEvidence>), Observation> {
    let options = CommandOptions {
        timeout: Some(timeout),
        judged: true,
    };
    let shown = short_command(command);
    match pipeline.command(Origin::Validator, "medin.validate", command, options) {
        Ok(CommandPassed::Ran { outcome, evidence }) => Ok((*outcome, evidence)),
        Ok(CommandPassed::Denied { message }) => Err(Observation::pending(
            format!("`{shown}` did not run"),
            format!("the guard denied the command: {message}; add a justified bypass to the task's policy if it is intended"),
        )),
        Err(e) => Err(Observation::pending(
            format!("`{shown}` did not run"),
            format!("the sandbox could not run the command: {e}"),
        )),
    }
}

/// The failed observation of a judged command whose test runner's own report is not a pass:
/// a runner that started and never finished its report, or (when the check expects a pass,
/// `expects_pass`) one that reported a failing test. `None` when the runner's report agrees
/// or no runner was recognised.
pub(crate) fn runner_contradicts(
    evidence: Option<&RunnerEvidence>,
    outcome: &crate::sandbox::CommandOutcome,
    expects_pass: bool,
    shown: &str,
) -> Option<Observation> {
    let ev = evidence.filter(|ev| ev.recognised() && !outcome.timed_out)?;
    let report = ev.to_report(None);
    let broken = !ev.unfinished.is_empty() || (expects_pass && ev.contradicts_a_pass());
    if !broken {
        return None;
    }
    let first = report
        .failures
        .first()
        .map(|f| format!("{}: {}", f.name, first_chars(&f.message, 300)))
        .unwrap_or_else(|| format!("{:?}", report.status));
    Some(
        Observation::failed(
            format!(
                "`{shown}`: the {} runner reported {} passed, {} failed ({:?}); {first}",
                report.framework, report.passed, report.failed, report.status
            ),
            CONFIDENCE,
            format!("the test runner's own report is not a pass: {first}"),
            "every test reported passed",
            format!(
                "{:?}: {} passed, {} failed",
                report.status, report.passed, report.failed
            ),
        )
        .with_output(&outcome.stdout.text, &outcome.stderr.text),
    )
}

/// The verdict from the command's exit (and stdout, when a pattern is given).
fn judge_exit(
    check: &CommandCheck,
    shown: &str,
    outcome: &crate::sandbox::CommandOutcome,
    stdout_re: Option<&regex::Regex>,
    timeout: Duration,
) -> Observation {
    let out = &outcome.stdout.text;
    let streams = describe_streams(out, &outcome.stderr.text);
    if outcome.timed_out {
        return Observation::pending(
            format!(
                "`{shown}` was still running after {} and was killed{streams}",
                human(timeout)
            ),
            format!("timed out after {}", human(timeout)),
        );
    }
    match outcome.exit {
        ExitKind::Signal(sig) => Observation::failed(
            format!("`{shown}` was killed by signal {sig}{streams}"),
            CONFIDENCE,
            format!("the command was killed by signal {sig}"),
            format!("exit {}", check.exit_code),
            format!("signal {sig}"),
        ),
        ExitKind::Code(127) if check.exit_code != 127 => Observation::pending(
            format!("`{shown}` exited 127{streams}"),
            "command not found (exit 127): the tool the validator needs is not installed or not on PATH",
        ),
        ExitKind::Code(code) if code != check.exit_code => Observation::failed(
            format!("`{shown}` exited {code}{streams}"),
            CONFIDENCE,
            format!("exit code {code}, expected {}", check.exit_code),
            format!("exit {}", check.exit_code),
            format!("exit {code}"),
        ),
        ExitKind::Code(code) => match stdout_re {
            Some(re) if !re.is_match(out) => Observation::failed(
                format!(
                    "`{shown}` exited {code} but stdout does not match /{}/{streams}",
                    re.as_str()
                ),
                CONFIDENCE,
                format!("stdout does not match /{}/", re.as_str()),
                re.as_str(),
                first_chars(out, 200),
            ),
            Some(re) => Observation::passed(
                format!("`{shown}` exited {code}; stdout matches /{}/", re.as_str()),
                CONFIDENCE,
            ),
            None => Observation::passed(format!("`{shown}` exited {code}{streams}"), CONFIDENCE),
        },
    }
}

/// `; stdout: "..."; stderr: "..."` for non-empty streams, each cut to 200 characters.
fn describe_streams(out: &str, err: &str) -> String {
    let mut s = String::new();
    for (name, text) in [("stdout", out.trim_end()), ("stderr", err.trim_end())] {
        if !text.is_empty() {
            s.push_str(&format!("; {name}: {:?}", first_chars(text, 200)));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_described_briefly() {
        assert_eq!(describe_streams("", ""), "");
        assert_eq!(describe_streams("ok\n", ""), "; stdout: \"ok\"");
        assert_eq!(describe_streams("", "bad"), "; stderr: \"bad\"");
    }
}
