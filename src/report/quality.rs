//! What an attempt's own record says beyond its counts: the evaluation framework's quality
//! metrics (time to first correct, the agent's claim, verification failures, missing receipts,
//! errors per code, per-tool latency), measured **once per attempt**, when it finishes, from
//! its run folder — `receipts.jsonl` and `transcript.jsonl`, the files the agent's work left —
//! and from its validations. The result is kept in the trial's result part
//! ([`super::record::TrialRecord::quality`]), so a run merged from many machines is measured
//! exactly like one kept in memory; the suite metrics ([`super::metrics`]) only add these up
//! and the reporters only show them. Nothing else reads the attempt's files for them.
//!
//! Only reading happens here: a line that does not parse is no receipt (so the tool call it
//! answered counts as missing), a missing file is an empty one.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::{DateTime, FixedOffset};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::guard::policy::Origin;
use crate::tools::ReceiptStatus;
use crate::validate::{ValidationResult, ValidationStatus};

/// Longest tool name kept as a key (an agent may call tools by any name).
const TOOL_NAME_BYTES: usize = 200;

/// The quality metrics of one attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct AttemptQuality {
    /// Milliseconds from the moment the task was sent to the agent (the first `task` line of
    /// `transcript.jsonl`) to the first check that passed, whichever came first of:
    /// the receipt of an agent `verify` call that passed; the receipt of a check the task's
    /// author runs (a TDD test run, a PRP gate, a `command` validator — origins `test`, `gate`,
    /// `validator`) that succeeded; a validation of the end state that passed (its
    /// timestamp). Receipt times are when the receipt was written, i.e. when the check had
    /// its answer. `None` when no check passed, or the agent was never started.
    pub time_to_first_correct_ms: Option<u64>,
    /// The agent's last report (a `final`, or a model's reply read as one) claimed success.
    /// Whether the claim was false is decided with the trial's verdict
    /// (`TrialRecord::false_success`).
    pub claimed_success: bool,
    /// Agent `verify` calls that answered `VERIFICATION_FAILED`, plus validations of the end
    /// state that failed (pending ones, which could not run, are not counted).
    pub verification_failures: u32,
    /// Tool calls the agent made (`tool_call` lines of `transcript.jsonl`) that no receipt of
    /// the agent in `receipts.jsonl` answers, matched by call id. Every call gets a receipt,
    /// a refused one too: anything above 0 means the log lost or never wrote one.
    pub missing_receipts: u32,
    /// Error codes of the receipts of the agent's actions (tool calls and receipts about the
    /// agent itself), counted per code (`INVALID_INPUT`: 2).
    pub errors_by_code: BTreeMap<String, u32>,
    /// Per tool, the duration of each of the agent's calls in milliseconds, in call order
    /// (`duration_ms` of the receipt lines: policy, guard, limits and the tool).
    pub tool_latency_ms: BTreeMap<String, Vec<u64>>,
}

/// The part of a `receipts.jsonl` line read here.
#[derive(Debug, Deserialize)]
struct ReceiptLine {
    #[serde(default)]
    action_id: String,
    #[serde(default)]
    tool: String,
    #[serde(default)]
    origin: Origin,
    receipt: ReceiptPart,
    #[serde(default)]
    timestamp: String,
    #[serde(default)]
    duration_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct ReceiptPart {
    status: ReceiptStatus,
    #[serde(default)]
    errors: Vec<ErrorPart>,
}

#[derive(Debug, Deserialize)]
struct ErrorPart {
    code: String,
}

/// The part of a `transcript.jsonl` line read here.
#[derive(Debug, Deserialize)]
struct TranscriptLine {
    #[serde(default)]
    timestamp: String,
    #[serde(default)]
    direction: String,
    event: TranscriptEvent,
}

#[derive(Debug, Deserialize)]
struct TranscriptEvent {
    #[serde(rename = "type", default)]
    kind: String,
    /// A tool call's id.
    #[serde(default)]
    id: Option<serde_json::Value>,
    /// A `final` event's report.
    #[serde(default)]
    report: Option<ReportPart>,
    /// A `reply` event's text.
    #[serde(default)]
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ReportPart {
    #[serde(default)]
    result: String,
}

fn time(text: &str) -> Option<DateTime<FixedOffset>> {
    DateTime::parse_from_rfc3339(text).ok()
}

/// A call id as the transcript and the receipts both spell it.
fn call_id(id: &Option<serde_json::Value>) -> String {
    match id {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn tool_key(tool: &str) -> String {
    crate::inert::clip(tool, TOOL_NAME_BYTES).into_owned()
}

/// Measures the attempt whose folder is `attempt_dir`, with the validations of its end state.
pub fn measure(attempt_dir: &Path, validations: &[ValidationResult]) -> AttemptQuality {
    let (receipts, _) = crate::log::read_jsonl::<ReceiptLine>(&attempt_dir.join("receipts.jsonl"));
    let (transcript, _) = crate::log::read_jsonl::<TranscriptLine>(&attempt_dir.join("transcript.jsonl"));
    let mut q = AttemptQuality::default();

    // The agent's calls against the agent's receipts, by id (an id may be reused: counted).
    let mut unanswered: BTreeMap<String, u32> = BTreeMap::new();
    let mut started = None;
    for line in &transcript {
        match (line.direction.as_str(), line.event.kind.as_str()) {
            ("to_agent", "task") if started.is_none() => started = time(&line.timestamp),
            ("from_agent", "tool_call") => *unanswered.entry(call_id(&line.event.id)).or_default() += 1,
            ("from_agent", "final") => {
                q.claimed_success = line.event.report.as_ref().is_some_and(|r| r.result == "success");
            }
            ("from_agent", "reply") => {
                let report = crate::agent::parse_reply(line.event.text.as_deref().unwrap_or_default());
                q.claimed_success = report.is_ok_and(|r| r.result == crate::spec::FinalResult::Success);
            }
            _ => {}
        }
    }

    let mut first_correct: Option<DateTime<FixedOffset>> = None;
    let mut passed_at = |at: Option<DateTime<FixedOffset>>| {
        if let Some(at) = at {
            first_correct = Some(first_correct.map_or(at, |f| f.min(at)));
        }
    };
    for r in &receipts {
        let agent_call = r.origin == Origin::Agent && !r.tool.is_empty();
        if agent_call {
            if let Some(n) = unanswered.get_mut(&r.action_id).filter(|n| **n > 0) {
                *n -= 1;
            }
            if let Some(ms) = r.duration_ms {
                q.tool_latency_ms.entry(tool_key(&r.tool)).or_default().push(ms);
            }
        }
        if r.origin == Origin::Agent {
            for e in &r.receipt.errors {
                let count = q.errors_by_code.entry(tool_key(&e.code)).or_default();
                *count = count.saturating_add(1);
            }
        }
        let success = r.receipt.status == ReceiptStatus::Success;
        let check_passed = match r.origin {
            Origin::Agent => agent_call && r.tool == "verify" && success,
            Origin::Test | Origin::Gate | Origin::Validator => success,
            Origin::Setup | Origin::Build | Origin::Harness => false,
        };
        if check_passed {
            passed_at(time(&r.timestamp));
        }
        if agent_call && r.tool == "verify" && r.receipt.errors.iter().any(|e| e.code == "VERIFICATION_FAILED") {
            q.verification_failures = q.verification_failures.saturating_add(1);
        }
    }
    for v in validations {
        match v.status {
            ValidationStatus::Passed => passed_at(time(&v.timestamp)),
            ValidationStatus::Failed => q.verification_failures = q.verification_failures.saturating_add(1),
            ValidationStatus::Pending => {}
        }
    }
    q.missing_receipts = unanswered.values().fold(0u32, |n, m| n.saturating_add(*m));
    q.time_to_first_correct_ms = match (started, first_correct) {
        (Some(start), Some(correct)) => Some(u64::try_from((correct - start).num_milliseconds()).unwrap_or(0)),
        _ => None,
    };
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn receipt(id: &str, tool: &str, origin: &str, status: &str, code: Option<&str>, at: &str, ms: u64) -> String {
        let errors = code.map_or_else(|| "[]".to_string(), |c| format!(r#"[{{"code":"{c}","message":"m"}}]"#));
        format!(
            r#"{{"seq":1,"action_id":"{id}","tool":"{tool}","input":{{}},"origin":"{origin}","decision":"allow","receipt":{{"status":"{status}","errors":{errors},"warnings":[],"receipts":[],"data":{{"stdout":"x"}}}},"timestamp":"{at}","ran":true,"duration_ms":{ms}}}"#
        )
    }

    fn transcript(lines: &[(&str, &str, &str)]) -> String {
        lines
            .iter()
            .map(|(at, dir, event)| format!(r#"{{"timestamp":"{at}","direction":"{dir}","event":{event}}}"#) + "\n")
            .collect()
    }

    const T0: &str = "2026-01-19T10:00:00+00:00";

    /// An attempt folder: the task sent at T0, three calls, a failed and a passed verify.
    fn attempt() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let t = transcript(&[
            (T0, "to_agent", r#"{"type":"task","brief":{}}"#),
            (
                T0,
                "from_agent",
                r#"{"type":"tool_call","id":"c1","tool":"bash","input":{}}"#,
            ),
            (
                T0,
                "from_agent",
                r#"{"type":"tool_call","id":"c2","tool":"verify","input":{}}"#,
            ),
            (
                T0,
                "from_agent",
                r#"{"type":"tool_call","id":"c3","tool":"verify","input":{}}"#,
            ),
            (
                T0,
                "from_agent",
                r#"{"type":"final","report":{"result":"success","message":"done"}}"#,
            ),
        ]);
        std::fs::write(dir.path().join("transcript.jsonl"), t).unwrap();
        let r = [
            receipt(
                "",
                "medin.setup",
                "setup",
                "success",
                None,
                "2026-01-19T09:59:59+00:00",
                5,
            ),
            receipt(
                "c1",
                "bash",
                "agent",
                "error",
                Some("TOOL_EXECUTION_FAILED"),
                "2026-01-19T10:00:01+00:00",
                40,
            ),
            receipt(
                "c2",
                "verify",
                "agent",
                "error",
                Some("VERIFICATION_FAILED"),
                "2026-01-19T10:00:02+00:00",
                10,
            ),
            receipt(
                "c3",
                "verify",
                "agent",
                "success",
                None,
                "2026-01-19T10:00:03.250+00:00",
                20,
            ),
        ]
        .join("\n")
            + "\n";
        std::fs::write(dir.path().join("receipts.jsonl"), r).unwrap();
        dir
    }

    #[test]
    fn every_metric_is_read_from_the_attempts_files() {
        let dir = attempt();
        let q = measure(dir.path(), &[]);
        assert_eq!(q.time_to_first_correct_ms, Some(3250), "to the passing verify: {q:?}");
        assert!(q.claimed_success);
        assert_eq!(q.verification_failures, 1);
        assert_eq!(q.missing_receipts, 0);
        assert_eq!(
            q.errors_by_code,
            BTreeMap::from([
                ("TOOL_EXECUTION_FAILED".to_string(), 1),
                ("VERIFICATION_FAILED".to_string(), 1)
            ]),
            "the setup command is the author's, not the agent's"
        );
        assert_eq!(q.tool_latency_ms["bash"], vec![40]);
        assert_eq!(q.tool_latency_ms["verify"], vec![10, 20]);
        assert!(!q.tool_latency_ms.contains_key("medin.setup"));
    }

    #[test]
    fn a_deleted_receipt_line_is_a_missing_receipt() {
        let dir = attempt();
        let path = dir.path().join("receipts.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<&str> = text.lines().filter(|l| !l.contains(r#""action_id":"c2""#)).collect();
        std::fs::write(&path, kept.join("\n") + "\n").unwrap();
        assert_eq!(measure(dir.path(), &[]).missing_receipts, 1);
        // A line torn by a dying writer is no receipt either.
        std::fs::write(&path, kept.join("\n").trim_end_matches('}')).unwrap();
        assert_eq!(measure(dir.path(), &[]).missing_receipts, 2);
    }

    #[test]
    fn validations_count_their_failures_and_may_be_the_first_correct_check() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("transcript.jsonl"),
            transcript(&[
                (T0, "to_agent", r#"{"type":"task","brief":{}}"#),
                (
                    T0,
                    "from_agent",
                    r#"{"type":"reply","text":"{\"result\": \"error\", \"message\": \"no\"}"}"#,
                ),
            ]),
        )
        .unwrap();
        let validation = |status: ValidationStatus, at: &str| ValidationResult {
            check: "c".into(),
            status,
            passed: status == ValidationStatus::Passed,
            evidence: String::new(),
            confidence: 100,
            duration_ms: 0,
            timestamp: at.into(),
            error: None,
            expected: None,
            actual: None,
            output_tail: None,
            warnings: Vec::new(),
        };
        let q = measure(
            dir.path(),
            &[
                validation(ValidationStatus::Failed, "2026-01-19T10:00:05.000Z"),
                validation(ValidationStatus::Pending, "2026-01-19T10:00:05.000Z"),
                validation(ValidationStatus::Passed, "2026-01-19T10:00:06.500Z"),
            ],
        );
        assert!(!q.claimed_success, "a reply read as an error report claims nothing");
        assert_eq!(q.verification_failures, 1, "pending is not a failure");
        assert_eq!(q.time_to_first_correct_ms, Some(6500));
        // No transcript: the agent never started; nothing to measure from.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(measure(empty.path(), &[]), AttemptQuality::default());
    }
}
