//! The `custom` validator: any script, run like a `command` validator (guard, decision,
//! sandbox, judged run, receipt), that states its own verdict on the last line of its stdout.
//!
//! The contract (also in the README):
//!
//! - the last non-empty line of stdout is one JSON object, and nothing else on that line:
//!   `{"status": "passed" | "failed" | "pending", "message": "...", "evidence": {...}}`;
//! - `status` is required; `message` (a string) and `evidence` (an object) are optional; any
//!   other key is an error (a misspelt key must not pass silently);
//! - the line is at most [`MAX_VERDICT_LINE`] bytes; earlier lines are free (logs, progress);
//! - a script that says `passed` must exit 0; the exit code of `failed` and `pending` is free;
//! - `pending` means the script could not judge (a service it needs is down): never a pass.
//!
//! Anything else is a failed check that says what was wrong: no output, a last line that is
//! not JSON or not an object, an unknown status, a stdout cut short by the sandbox's cap (the
//! last line was lost), a test runner whose own report contradicts the `passed`. A timeout,
//! a command that did not run, or "command not found" (exit 127 with no verdict) is pending,
//! as for `command`.
//!
//! The script is agent-reachable (it runs in the agent's workspace), so everything it prints is
//! made inert and bounded before it is shown: the message is cut to [`MESSAGE_CHARS`]
//! characters, the evidence to [`EVIDENCE_CHARS`], escape sequences and control characters are
//! removed.

use std::time::Duration;

use serde_json::Value;

use super::command::{runner_contradicts, through_pipeline, CONFIDENCE};
use super::{first_chars, human, short_command, Observation, ValidationStatus};
use crate::pipeline::Pipeline;
use crate::sandbox::{CommandOutcome, ExitKind};
use crate::spec::CustomCheck;

/// Longest verdict line read, in bytes.
pub const MAX_VERDICT_LINE: usize = 64 * 1024;
/// Characters of the script's `message` kept.
pub const MESSAGE_CHARS: usize = 500;
/// Characters of the script's `evidence` (as compact JSON) kept.
pub const EVIDENCE_CHARS: usize = 2000;

/// The keys a verdict line may hold.
const VERDICT_KEYS: &[&str] = &["status", "message", "evidence"];

/// A script's verdict, as read from its last line.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub status: ValidationStatus,
    /// Inert, at most [`MESSAGE_CHARS`] characters.
    pub message: Option<String>,
    /// Compact JSON, inert, at most [`EVIDENCE_CHARS`] characters.
    pub evidence: Option<String>,
}

/// Why a script's output is not a verdict (shown as the check's error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    #[error(
        "the script printed nothing on stdout; its last line must be a JSON verdict such as {{\"status\": \"passed\"}}"
    )]
    Empty,
    #[error("stdout was cut at {kept} of {total} bytes by the sandbox, so its last line (the verdict) was lost; print less before the verdict")]
    Truncated { kept: usize, total: u64 },
    #[error("the last line of stdout is {0} bytes, over the {MAX_VERDICT_LINE} a verdict may take; keep the verdict line short")]
    TooLong(usize),
    #[error("the last line of stdout is not JSON ({error}): {line}; print one JSON object such as {{\"status\": \"failed\", \"message\": \"...\"}} as the last line")]
    NotJson { error: String, line: String },
    #[error("the last line of stdout is JSON but not an object: {0}; print {{\"status\": ...}}")]
    NotAnObject(String),
    #[error("the verdict has no `status`; add \"status\": \"passed\", \"failed\" or \"pending\"")]
    NoStatus,
    #[error("the verdict's status {0} is not \"passed\", \"failed\" or \"pending\"")]
    BadStatus(String),
    #[error("the verdict's `{key}` must be {wanted}, not {got}")]
    WrongType {
        key: &'static str,
        wanted: &'static str,
        got: String,
    },
    #[error("the verdict holds unknown key{} {}; it may hold only status, message and evidence", if .0.len() == 1 { "" } else { "s" }, .0.join(", "))]
    UnknownKeys(Vec<String>),
}

/// Reads the verdict from a script's captured stdout (`truncated`: the sandbox kept less than
/// the script wrote; `total` bytes were written).
pub fn parse_verdict(stdout: &str, truncated: bool, total: u64) -> Result<Verdict, VerdictError> {
    if truncated {
        return Err(VerdictError::Truncated {
            kept: stdout.len(),
            total,
        });
    }
    let line = stdout
        .lines()
        .map(|l| l.trim())
        .rfind(|l| !l.is_empty())
        .ok_or(VerdictError::Empty)?;
    if line.len() > MAX_VERDICT_LINE {
        return Err(VerdictError::TooLong(line.len()));
    }
    let shown = |text: &str| crate::inert::line(&first_chars(text, 200)).into_owned();
    let value: Value = serde_json::from_str(line).map_err(|e| VerdictError::NotJson {
        error: e.to_string(),
        line: shown(line),
    })?;
    let Value::Object(map) = value else {
        return Err(VerdictError::NotAnObject(shown(line)));
    };
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !VERDICT_KEYS.contains(&k.as_str()))
        .map(|k| format!("`{}`", shown(k)))
        .collect();
    if !unknown.is_empty() {
        return Err(VerdictError::UnknownKeys(unknown));
    }
    let status = match map.get("status") {
        None => return Err(VerdictError::NoStatus),
        Some(Value::String(s)) => match s.as_str() {
            "passed" => ValidationStatus::Passed,
            "failed" => ValidationStatus::Failed,
            "pending" => ValidationStatus::Pending,
            other => return Err(VerdictError::BadStatus(format!("{:?}", shown(other)))),
        },
        Some(other) => return Err(VerdictError::BadStatus(shown(&other.to_string()))),
    };
    let message = match map.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(crate::inert::line(&first_chars(m, MESSAGE_CHARS)).into_owned()),
        Some(other) => {
            return Err(VerdictError::WrongType {
                key: "message",
                wanted: "a string",
                got: shown(&other.to_string()),
            })
        }
    };
    let evidence = match map.get("evidence") {
        None | Some(Value::Null) => None,
        Some(e @ Value::Object(_)) => {
            Some(crate::inert::line(&first_chars(&e.to_string(), EVIDENCE_CHARS)).into_owned())
        }
        Some(other) => {
            return Err(VerdictError::WrongType {
                key: "evidence",
                wanted: "an object",
                got: shown(&other.to_string()),
            })
        }
    };
    Ok(Verdict {
        status,
        message,
        evidence,
    })
}

/// Runs `check` through the pipeline with `timeout` and reads its verdict.
pub(crate) fn run(pipeline: &Pipeline, check: &CustomCheck, timeout: Duration) -> Observation {
    let shown = short_command(&check.command);
    let (outcome, evidence) = match through_pipeline(pipeline, &check.command, timeout) {
        Ok(ran) => ran,
        Err(not_run) => return not_run,
    };
    let obs = judge(&shown, &outcome, timeout);
    // A test runner inside the script that reported a failure cannot back a `passed`.
    if obs.status == ValidationStatus::Passed {
        if let Some(broken) = runner_contradicts(evidence.as_ref(), &outcome, true, &shown) {
            return broken;
        }
        return obs;
    }
    obs.with_output(&outcome.stdout.text, &outcome.stderr.text)
}

/// The observation of a script that ran: its verdict, checked against how it ended.
fn judge(shown: &str, outcome: &CommandOutcome, timeout: Duration) -> Observation {
    if outcome.timed_out {
        return Observation::pending(
            format!("`{shown}` was still running after {} and was killed", human(timeout)),
            format!("timed out after {}", human(timeout)),
        );
    }
    let code = match outcome.exit {
        ExitKind::Signal(sig) => {
            return Observation::failed(
                format!("`{shown}` was killed by signal {sig}"),
                CONFIDENCE,
                format!("the script was killed by signal {sig} before it gave a verdict"),
                "a JSON verdict and exit 0",
                format!("signal {sig}"),
            )
        }
        ExitKind::Code(code) => code,
    };
    let out = &outcome.stdout;
    let verdict = match parse_verdict(&out.text, out.truncated, out.total_bytes) {
        Ok(v) => v,
        Err(_) if code == 127 => {
            return Observation::pending(
                format!("`{shown}` exited 127 with no verdict"),
                "command not found (exit 127): the script or the tool it needs is not installed or not on PATH",
            )
        }
        Err(e) => {
            return Observation::failed(
                format!("`{shown}` exited {code} without a valid verdict"),
                100,
                e.to_string(),
                "a last line {\"status\": \"passed\"|\"failed\"|\"pending\", ...}",
                format!("exit {code}"),
            )
        }
    };
    let said = match &verdict.message {
        Some(m) => format!("{}: {m}", status_word(verdict.status)),
        None => status_word(verdict.status).to_string(),
    };
    let evidence = match &verdict.evidence {
        Some(e) => format!("`{shown}` exited {code}, verdict {said}; evidence {e}"),
        None => format!("`{shown}` exited {code}, verdict {said}"),
    };
    match verdict.status {
        ValidationStatus::Passed if code != 0 => Observation::failed(
            evidence,
            CONFIDENCE,
            format!("the script said passed but exited {code}; a passing script must exit 0"),
            "passed and exit 0",
            format!("passed and exit {code}"),
        ),
        ValidationStatus::Passed => Observation::passed(evidence, CONFIDENCE),
        ValidationStatus::Failed => Observation::failed(
            evidence,
            CONFIDENCE,
            format!("the script reported {said}"),
            "passed",
            said.clone(),
        ),
        ValidationStatus::Pending => Observation::pending(
            evidence,
            format!(
                "the script could not judge: {}",
                verdict.message.as_deref().unwrap_or("(no message)")
            ),
        ),
    }
}

fn status_word(status: ValidationStatus) -> &'static str {
    match status {
        ValidationStatus::Passed => "passed",
        ValidationStatus::Failed => "failed",
        ValidationStatus::Pending => "pending",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Verdict, VerdictError> {
        parse_verdict(text, false, text.len() as u64)
    }

    #[test]
    fn the_last_non_empty_line_is_the_verdict() {
        let v = parse("log 1\n{\"status\": \"failed\"}\n{\"status\": \"passed\", \"message\": \"ok\", \"evidence\": {\"n\": 3}}\n\n")
            .unwrap();
        assert_eq!(v.status, ValidationStatus::Passed);
        assert_eq!(v.message.as_deref(), Some("ok"));
        assert_eq!(v.evidence.as_deref(), Some("{\"n\":3}"));
        assert_eq!(
            parse("{\"status\":\"pending\"}").unwrap().status,
            ValidationStatus::Pending
        );
    }

    #[test]
    fn anything_else_says_what_was_wrong() {
        assert_eq!(parse(""), Err(VerdictError::Empty));
        assert_eq!(parse("  \n\n"), Err(VerdictError::Empty));
        assert!(matches!(parse("passed"), Err(VerdictError::NotJson { .. })));
        assert!(matches!(parse("[1]"), Err(VerdictError::NotAnObject(_))));
        assert_eq!(parse("{\"message\": \"x\"}"), Err(VerdictError::NoStatus));
        assert!(matches!(parse("{\"status\": \"ok\"}"), Err(VerdictError::BadStatus(_))));
        assert!(matches!(parse("{\"status\": true}"), Err(VerdictError::BadStatus(_))));
        assert!(matches!(
            parse("{\"status\": \"passed\", \"message\": 3}"),
            Err(VerdictError::WrongType { key: "message", .. })
        ));
        assert!(matches!(
            parse("{\"status\": \"passed\", \"evidence\": \"x\"}"),
            Err(VerdictError::WrongType { key: "evidence", .. })
        ));
        let unknown = parse("{\"status\": \"passed\", \"pased\": true}").unwrap_err();
        assert_eq!(unknown, VerdictError::UnknownKeys(vec!["`pased`".into()]));
        assert!(
            unknown.to_string().contains("only status, message and evidence"),
            "{unknown}"
        );
        assert!(matches!(
            parse_verdict("{\"status\": \"passed\"}", true, 10_000_000),
            Err(VerdictError::Truncated { .. })
        ));
    }

    #[test]
    fn hostile_output_is_bounded_and_inert() {
        let huge = format!(
            "{{\"status\": \"passed\", \"message\": \"{}\"}}",
            "x".repeat(MAX_VERDICT_LINE)
        );
        assert!(matches!(parse(&huge), Err(VerdictError::TooLong(_))));
        let escapes = "{\"status\": \"failed\", \"message\": \"\\u001b[2J\\u001b]0;pwned\\u0007red\\u202e\", \"evidence\": {\"k\": \"\\u001b[31m\"}}";
        let v = parse(escapes).unwrap();
        let (m, e) = (v.message.unwrap(), v.evidence.unwrap());
        assert!(crate::inert::is_inert(&m) && crate::inert::is_inert(&e), "{m:?} {e:?}");
        assert!(!m.contains('\u{1b}') && !m.contains('\u{202e}'), "{m:?}");
        let long = format!("{{\"status\": \"failed\", \"message\": \"{}\"}}", "y".repeat(5000));
        assert!(parse(&long).unwrap().message.unwrap().chars().count() <= MESSAGE_CHARS + 1);
        let many: String = (0..100_000).map(|i| format!("line {i}\n")).collect::<String>() + "{\"status\":\"passed\"}";
        assert_eq!(parse(&many).unwrap().status, ValidationStatus::Passed);
        // An error quoting the bad line shows it inert and short.
        let bad = format!("\u{1b}[2J{}", "z".repeat(1000));
        let err = parse(&bad).unwrap_err().to_string();
        assert!(crate::inert::is_inert(&err) && err.len() < 600, "{err:?}");
    }
}
