//! The one rule that turns how an attempt ended into its outcome, for every task kind.
//!
//! The kinds say how their episode ended ([`Ending`]) and what their own real checks found
//! ([`KindCheck`]: the TDD tests converged, the PRP gates passed); the judge weighs that with
//! what every attempt has — the tampering found in judged phases and the task's validations,
//! run on the real end state after the agent stopped — in one order:
//!
//! 1. the harness stopped the task (limit, invariant, deadline, a prohibited action): that
//!    outcome (`stopped`, `timeout`);
//! 2. the agent broke (crashed, hung, ended without a report, retries spent): `error`;
//! 3. the agent changed what it is judged by (protected files): `failure`;
//! 4. the kind's own checks failed (tests still failing, gates failing after the last fix), or
//!    the agent itself reported `error` or `issue`: `failure`;
//! 5. the verification (`verify:`) or a validation failed: `failure`; one could not decide:
//!    `pending`;
//! 6. otherwise `success` — only if a real check ran and passed (a validation, the verifier,
//!    or the kind's own); an agent's word alone is `pending`. Nothing is complete on a claim.

use crate::spec::{FinalResult, Outcome};
use crate::validate::ValidationStatus;

use super::record::AttemptRecord;

/// How a kind's episode ended.
#[derive(Debug)]
pub(super) enum Ending {
    /// The harness stopped the task.
    Stopped(Outcome, String),
    /// The agent broke.
    AgentBroke(String),
    /// The agent's work is done: `claim` is what it reported last (`None` where the kind does
    /// not take the agent's word at all, as a TDD loop), `check` what the kind's checks found.
    Finished {
        claim: Option<FinalResult>,
        check: KindCheck,
    },
}

/// What a kind's own checks found.
#[derive(Debug)]
pub(super) enum KindCheck {
    /// The kind has no checks of its own, or none ran.
    NoneRan,
    /// Its checks ran and passed (tests converged, gates passed with one that really ran).
    Passed,
    /// Its checks failed: why.
    Failed(String),
}

/// The outcome, and the reason it is not a success where there is one to give.
pub(super) fn judge(ending: Ending, record: &AttemptRecord) -> (Outcome, Option<String>) {
    let (claim, check) = match ending {
        Ending::Stopped(outcome, reason) => return (outcome, Some(reason)),
        Ending::AgentBroke(reason) => return (Outcome::Error, Some(reason)),
        Ending::Finished { claim, check } => (claim, check),
    };
    // A verdict reached after the agent changed what it is judged by is not trusted.
    if !record.tampering.is_empty() {
        return (Outcome::Failure, Some(super::tampering_summary(&record.tampering)));
    }
    if let KindCheck::Failed(why) = check {
        return (Outcome::Failure, Some(why));
    }
    if matches!(claim, Some(FinalResult::Error | FinalResult::Issue)) {
        return (Outcome::Failure, None);
    }
    // The verifier is one more validation of the end state, and says why it failed.
    let verification = record.verification.as_ref();
    if let Some(v) = verification.filter(|v| v.status == ValidationStatus::Failed) {
        return (Outcome::Failure, Some(format!("verification failed: {}", v.actual())));
    }
    let validations = &record.validations;
    if validations.iter().any(|v| v.status == ValidationStatus::Failed) {
        return (Outcome::Failure, None);
    }
    let statuses = || {
        validations
            .iter()
            .map(|v| v.status)
            .chain(verification.map(|v| v.status))
    };
    if statuses().any(|s| s == ValidationStatus::Pending) {
        return (Outcome::Pending, verification.and_then(|v| v.reason.clone()));
    }
    let a_check_ran = matches!(check, KindCheck::Passed) || statuses().next().is_some();
    if a_check_ran {
        (Outcome::Success, None)
    } else {
        (Outcome::Pending, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::ValidationResult;

    fn validation(status: ValidationStatus) -> ValidationResult {
        ValidationResult {
            check: "a check".into(),
            passed: status == ValidationStatus::Passed,
            status,
            evidence: String::new(),
            confidence: 100,
            duration_ms: 0,
            timestamp: String::new(),
            error: None,
            expected: None,
            actual: None,
            output_tail: None,
            warnings: Vec::new(),
        }
    }

    fn record(validations: Vec<ValidationResult>) -> AttemptRecord {
        AttemptRecord {
            validations,
            ..AttemptRecord::default()
        }
    }

    fn finished(claim: Option<FinalResult>, check: KindCheck) -> Ending {
        Ending::Finished { claim, check }
    }

    #[test]
    fn a_claim_alone_is_pending_and_a_passing_check_makes_it_a_success() {
        let success = Some(FinalResult::Success);
        assert_eq!(
            judge(finished(success, KindCheck::NoneRan), &record(vec![])).0,
            Outcome::Pending
        );
        let passed = record(vec![validation(ValidationStatus::Passed)]);
        assert_eq!(
            judge(finished(success, KindCheck::NoneRan), &passed).0,
            Outcome::Success
        );
        assert_eq!(
            judge(finished(None, KindCheck::Passed), &record(vec![])).0,
            Outcome::Success
        );
    }

    #[test]
    fn failures_win_over_passes_in_the_documented_order() {
        let passed = record(vec![validation(ValidationStatus::Passed)]);
        let (o, why) = judge(finished(None, KindCheck::Failed("tests still fail".into())), &passed);
        assert_eq!((o, why.as_deref()), (Outcome::Failure, Some("tests still fail")));
        assert_eq!(
            judge(finished(Some(FinalResult::Issue), KindCheck::Passed), &passed).0,
            Outcome::Failure
        );
        let failed = record(vec![
            validation(ValidationStatus::Passed),
            validation(ValidationStatus::Failed),
        ]);
        assert_eq!(judge(finished(None, KindCheck::Passed), &failed).0, Outcome::Failure);
        let pending = record(vec![validation(ValidationStatus::Pending)]);
        assert_eq!(judge(finished(None, KindCheck::Passed), &pending).0, Outcome::Pending);
    }

    #[test]
    fn the_harness_stopping_and_the_agent_breaking_are_not_judged_on_the_work() {
        let passed = record(vec![validation(ValidationStatus::Passed)]);
        let (o, why) = judge(Ending::Stopped(Outcome::Timeout, "deadline".into()), &passed);
        assert_eq!((o, why.as_deref()), (Outcome::Timeout, Some("deadline")));
        assert_eq!(judge(Ending::AgentBroke("crashed".into()), &passed).0, Outcome::Error);
    }

    #[test]
    fn tampering_fails_whatever_the_checks_said() {
        let mut r = record(vec![validation(ValidationStatus::Passed)]);
        r.tampering.push(crate::validate::judged::Tampering {
            path: "tests/test_x.py".into(),
            change: "modified".into(),
        });
        let (o, why) = judge(finished(Some(FinalResult::Success), KindCheck::Passed), &r);
        assert_eq!(o, Outcome::Failure);
        assert!(why.is_some_and(|w| w.contains("tests/test_x.py")), "names the file");
    }
}
