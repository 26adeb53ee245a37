//! The trial event stream: what the runner tells reporters while a run goes on (the model is
//! cargo-nextest's runner → events → reporters split).
//!
//! The runner emits, through a [`TrialEvents`] handle it gets from [`EventSink::trial`]:
//! [`Event::TrialStarted`] once the agent of an attempt is known, [`Event::ActionRecorded`] for
//! every action written to `receipts.jsonl`, [`Event::RoundEnded`] when a round of a
//! multi-round kind (TDD, PRP) ends, and [`Event::TrialFinished`] with the verdict. The driver
//! ([`crate::harness::Driver`]) emits [`Event::RunFinished`] once the run is concluded.
//!
//! Reporters ([`Reporter`]) turn the stream into the activity log, result parts, the libtest
//! line, the progress bar, the suite metrics and `summary.json` (see
//! [`crate::report::reporters`]). An [`EventSink`] fans every event out to its reporters, in
//! order, and keeps what they fail to do for the driver to report: emitting never fails and
//! never prints, so the runner stays free of reporting.

use std::fmt;
use std::sync::{Arc, Mutex};

use crate::guard::policy::Origin;
use crate::report::RunConclusion;
use crate::runner::{ActionRecord, TaskResult};
use crate::spec::{FinalResult, Outcome};
use crate::tools::ReceiptStatus;
use crate::validate::ValidationResult;

/// One event of a run.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    TrialStarted(TrialStarted<'a>),
    ActionRecorded(ActionRecorded<'a>),
    RoundEnded(RoundEnded<'a>),
    TrialFinished(TrialFinished<'a>),
    /// The run is concluded: results merged, metrics computed, thresholds checked.
    RunFinished(&'a RunConclusion),
    /// Something about the suite's PRD: reloaded, invalid, or in conflict with a task.
    Prd(PrdNote<'a>),
}

/// What happened to the suite's PRD.
#[derive(Debug, Clone, Copy)]
pub enum PrdNote<'a> {
    /// Its file changed before a task started: reloaded, or found invalid (the run halts).
    Reload {
        path: &'a std::path::Path,
        reload: &'a crate::prd::Reload,
    },
    /// A task's expectation contradicts a requirement it names; the requirement won.
    Conflict {
        trial: &'a str,
        attempt: u32,
        conflict: &'a crate::prd::Conflict,
    },
    /// A task finished after the PRD changed a requirement it names: a person must decide.
    Decision {
        trial: &'a str,
        attempt: u32,
        decision: &'a crate::prd::DecisionNeeded,
    },
}

/// An attempt started: its agent is known and its workspace is about to be prepared.
#[derive(Debug, Clone, Copy)]
pub struct TrialStarted<'a> {
    /// `<category>::<name>` (without the `#n` of repeated runs: see `attempt`).
    pub trial: &'a str,
    pub attempt: u32,
    /// The agent's display name (`oracle`, `process:CMD`, ...).
    pub agent: &'a str,
}

/// An action was recorded (appended to `receipts.jsonl`).
#[derive(Debug, Clone, Copy)]
pub struct ActionRecorded<'a> {
    pub trial: &'a str,
    pub attempt: u32,
    /// 1-based position in the attempt, as in `receipts.jsonl`.
    pub seq: u32,
    /// The tool (empty for a receipt about the agent itself).
    pub tool: &'a str,
    /// Who asked for it: the agent, or the task's author (setup, test, build, gate, validator),
    /// or the harness itself (`medin.*` steps).
    pub origin: Origin,
    /// The policy decision: allow | warn | deny | bypassed | not_checked.
    pub decision: &'a str,
    pub status: ReceiptStatus,
}

/// Why a round of a multi-round kind ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoundEndReason {
    /// The agent ended the round with a report.
    Reported(FinalResult),
    /// The agent broke: crashed, hung, could not start, ended without a report.
    AgentFailed(String),
    /// The harness stopped the task (a limit, an invariant, the task's time).
    Stopped { outcome: Outcome, reason: String },
}

/// A round of a TDD or PRP loop ended.
#[derive(Debug, Clone, Copy)]
pub struct RoundEnded<'a> {
    pub trial: &'a str,
    pub attempt: u32,
    /// The agent's round, 1-based (TDD: the fix round; PRP: 1 is the coder's first round,
    /// n + 1 the n-th fix round; a retried round keeps its number).
    pub round: u32,
    pub end: &'a RoundEndReason,
}

/// An attempt ended with a verdict.
#[derive(Debug, Clone, Copy)]
pub struct TrialFinished<'a> {
    pub result: &'a TaskResult,
    /// The validations of the end state (empty when the attempt did not get that far).
    pub validations: &'a [ValidationResult],
}

/// What a reporter could not do (write a file, append to the log).
#[derive(Debug, thiserror::Error)]
#[error("{reporter}: {message}")]
pub struct ReportError {
    /// The reporter that failed (`activity log`, `result parts`, `summary.json`, ...).
    pub reporter: &'static str,
    /// What failed and where, and what to do about it.
    pub message: String,
}

impl ReportError {
    pub fn new(reporter: &'static str, message: impl Into<String>) -> Self {
        ReportError {
            reporter,
            message: message.into(),
        }
    }
}

/// Something that turns events into a report. Reporters are shared by the threads of a run:
/// a reporter with state keeps it behind a lock.
pub trait Reporter: Send + Sync {
    /// Handles one event. An error is kept by the [`EventSink`] and makes the run end as an
    /// infrastructure error; it never stops the other reporters or the run.
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError>;
}

/// The reporters of a run, fanned out in order. Cloning shares them.
#[derive(Clone, Default)]
pub struct EventSink {
    reporters: Arc<[Arc<dyn Reporter>]>,
    errors: Arc<Mutex<Vec<ReportError>>>,
}

impl fmt::Debug for EventSink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EventSink({} reporters)", self.reporters.len())
    }
}

impl EventSink {
    /// A sink that fans out to `reporters`, in this order.
    pub fn new(reporters: Vec<Arc<dyn Reporter>>) -> Self {
        EventSink {
            reporters: reporters.into(),
            errors: Arc::default(),
        }
    }

    /// A sink with no reporters: events go nowhere.
    pub fn none() -> Self {
        EventSink::default()
    }

    /// Sends `event` to every reporter; what they fail to do is kept ([`Self::take_errors`]).
    pub fn emit(&self, event: &Event<'_>) {
        for r in self.reporters.iter() {
            if let Err(e) = r.report(event) {
                if let Ok(mut errors) = self.errors.lock() {
                    errors.push(e);
                }
            }
        }
    }

    /// What the reporters failed to do since the last call.
    pub fn take_errors(&self) -> Vec<ReportError> {
        self.errors
            .lock()
            .map(|mut e| std::mem::take(&mut *e))
            .unwrap_or_default()
    }

    /// Reports something about the suite's PRD.
    pub fn prd(&self, note: &PrdNote<'_>) {
        self.emit(&Event::Prd(*note));
    }

    /// The handle through which the runner reports attempt `attempt` of `trial`.
    pub fn trial(&self, trial: impl Into<String>, attempt: u32) -> TrialEvents {
        TrialEvents {
            sink: self.clone(),
            trial: trial.into(),
            attempt,
        }
    }
}

/// The runner's handle on the stream for one attempt: one method per event it emits.
#[derive(Debug, Clone)]
pub struct TrialEvents {
    sink: EventSink,
    trial: String,
    attempt: u32,
}

impl TrialEvents {
    pub fn started(&self, agent: &str) {
        self.sink.emit(&Event::TrialStarted(TrialStarted {
            trial: &self.trial,
            attempt: self.attempt,
            agent,
        }));
    }

    pub fn action(&self, record: &ActionRecord) {
        self.sink.emit(&Event::ActionRecorded(ActionRecorded {
            trial: &self.trial,
            attempt: self.attempt,
            seq: record.seq,
            tool: &record.tool,
            origin: record.origin,
            decision: &record.decision,
            status: record.receipt.status,
        }));
    }

    pub fn round_ended(&self, round: u32, end: RoundEndReason) {
        self.sink.emit(&Event::RoundEnded(RoundEnded {
            trial: &self.trial,
            attempt: self.attempt,
            round,
            end: &end,
        }));
    }

    /// A task expectation was set aside for the PRD requirement it contradicts.
    pub fn prd_conflict(&self, conflict: &crate::prd::Conflict) {
        self.sink.prd(&PrdNote::Conflict {
            trial: &self.trial,
            attempt: self.attempt,
            conflict,
        });
    }

    /// The PRD changed a requirement this task names while it ran.
    pub fn prd_decision(&self, decision: &crate::prd::DecisionNeeded) {
        self.sink.prd(&PrdNote::Decision {
            trial: &self.trial,
            attempt: self.attempt,
            decision,
        });
    }

    pub fn finished(&self, result: &TaskResult, validations: &[ValidationResult]) {
        self.sink
            .emit(&Event::TrialFinished(TrialFinished { result, validations }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keeps a line per event it sees.
    #[derive(Default)]
    struct Tape(Mutex<Vec<String>>);

    impl Reporter for Tape {
        fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
            let line = match event {
                Event::TrialStarted(s) => format!("started {}#{} {}", s.trial, s.attempt, s.agent),
                Event::ActionRecorded(a) => format!("action {} {} {:?}", a.seq, a.tool, a.origin),
                Event::RoundEnded(r) => format!("round {} {:?}", r.round, r.end),
                Event::TrialFinished(f) => format!("finished {}", f.result.trial),
                Event::RunFinished(_) => "run".into(),
                Event::Prd(_) => "prd".into(),
            };
            self.0.lock().unwrap().push(line);
            Ok(())
        }
    }

    struct Broken;

    impl Reporter for Broken {
        fn report(&self, _: &Event<'_>) -> Result<(), ReportError> {
            Err(ReportError::new("broken", "disk full"))
        }
    }

    #[test]
    fn every_reporter_sees_every_event_and_failures_are_kept_not_fatal() {
        let tape = Arc::new(Tape::default());
        let after = Arc::new(Tape::default());
        let sink = EventSink::new(vec![tape.clone(), Arc::new(Broken), after.clone()]);
        let events = sink.trial("golden::t", 2);
        events.started("oracle");
        events.round_ended(1, RoundEndReason::Reported(FinalResult::Success));
        assert_eq!(
            *tape.0.lock().unwrap(),
            vec!["started golden::t#2 oracle", "round 1 Reported(Success)"]
        );
        assert_eq!(
            *after.0.lock().unwrap(),
            *tape.0.lock().unwrap(),
            "a failing reporter stops nobody"
        );
        let errors = sink.take_errors();
        assert_eq!(errors.len(), 2);
        assert_eq!(errors[0].to_string(), "broken: disk full");
        assert!(sink.take_errors().is_empty(), "taken once");
    }
}
