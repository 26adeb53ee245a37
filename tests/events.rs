//! The trial event stream as the runner emits it: started first, one action event per receipt
//! (in `receipts.jsonl` order), one round event per agent round of a TDD or PRP loop, finished
//! last with the verdict — for the bundled tasks that exercise each kind.

use std::path::Path;
use std::sync::{Arc, Mutex};

use medin::internal::agent::AgentSource;
use medin::internal::guard::policy::Origin;
use medin::internal::report::events::{Event, ReportError, Reporter, RoundEndReason};
use medin::internal::report::EventSink;
use medin::internal::runner::{self, RunSettings, TaskResult};
use medin::internal::spec::{AgentSpec, FinalResult, SpecFile};

/// What a reporter saw, one entry per event.
#[derive(Debug, Clone, PartialEq)]
enum Seen {
    Started { trial: String, attempt: u32, agent: String },
    Action { seq: u32, tool: String, origin: Origin },
    Round { round: u32, end: RoundEndReason },
    Finished { trial: String, passed: bool },
}

#[derive(Default)]
struct Tape(Mutex<Vec<Seen>>);

impl Reporter for Tape {
    fn report(&self, event: &Event<'_>) -> Result<(), ReportError> {
        let seen = match event {
            Event::TrialStarted(s) => Seen::Started {
                trial: s.trial.into(),
                attempt: s.attempt,
                agent: s.agent.into(),
            },
            Event::ActionRecorded(a) => Seen::Action {
                seq: a.seq,
                tool: a.tool.into(),
                origin: a.origin,
            },
            Event::RoundEnded(r) => Seen::Round {
                round: r.round,
                end: r.end.clone(),
            },
            Event::TrialFinished(f) => Seen::Finished {
                trial: f.result.trial.clone(),
                passed: f.result.passed(),
            },
            Event::RunFinished(_) | Event::Prd(_) => return Ok(()),
        };
        self.0.lock().unwrap().push(seen);
        Ok(())
    }
}

/// Runs the bundled task `regression/<name>.yaml` with a tape on the event stream.
fn run_bundled(name: &str) -> (TaskResult, Vec<Seen>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let tape = Arc::new(Tape::default());
    let mut settings = RunSettings::new(
        out.path().to_path_buf(),
        AgentSource {
            spec: AgentSpec::oracle(),
            base_dir: root.to_path_buf(),
        },
    );
    settings.events = EventSink::new(vec![tape.clone()]);
    let file = SpecFile {
        category: "regression".into(),
        name: name.into(),
        path: root.join(format!("regression/{name}.yaml")),
    };
    let result = runner::run_spec_file(&file, &settings, 1);
    assert!(result.passed(), "{:?}", result.failure_message());
    let seen = tape.0.lock().unwrap().clone();
    (result, seen)
}

/// Started first, finished last (once each), actions numbered 1..=n in order.
fn check_frame(seen: &[Seen], trial: &str) {
    assert_eq!(
        seen.first(),
        Some(&Seen::Started {
            trial: trial.into(),
            attempt: 1,
            agent: "oracle".into()
        }),
        "{seen:?}"
    );
    assert_eq!(
        seen.last(),
        Some(&Seen::Finished {
            trial: trial.into(),
            passed: true
        }),
        "{seen:?}"
    );
    let seqs: Vec<u32> = seen
        .iter()
        .filter_map(|s| match s {
            Seen::Action { seq, .. } => Some(*seq),
            _ => None,
        })
        .collect();
    assert!(!seqs.is_empty(), "{seen:?}");
    assert_eq!(seqs, (1..=seqs.len() as u32).collect::<Vec<_>>(), "{seen:?}");
}

fn rounds(seen: &[Seen]) -> Vec<(u32, RoundEndReason)> {
    seen.iter()
        .filter_map(|s| match s {
            Seen::Round { round, end } => Some((*round, end.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn a_prp_task_emits_one_round_event_per_coder_round_and_marks_harness_steps() {
    let (result, seen) = run_bundled("rt-102-prp-fix-attempts-exhausted");
    check_frame(&seen, &result.trial);
    let reported = RoundEndReason::Reported(FinalResult::Success);
    assert_eq!(
        rounds(&seen),
        vec![(1, reported.clone()), (2, reported.clone()), (3, reported)],
        "the coder's round, then two fix rounds"
    );
    // The backoff before each fix round is the harness's step, not the agent's.
    assert!(
        seen.iter().any(|s| matches!(s,
            Seen::Action { tool, origin: Origin::Harness, .. } if tool == "medin.backoff")),
        "{seen:?}"
    );
    assert!(
        seen.iter().any(|s| matches!(s,
            Seen::Action { tool, origin: Origin::Agent, .. } if tool == "write_file")),
        "{seen:?}"
    );
}

#[test]
fn a_tdd_task_emits_one_round_event_per_fix_round() {
    let (result, seen) = run_bundled("rt-203-tdd-max-iterations");
    check_frame(&seen, &result.trial);
    let reported = RoundEndReason::Reported(FinalResult::Success);
    assert_eq!(rounds(&seen), vec![(1, reported.clone()), (2, reported)]);
}

#[test]
fn a_plain_task_has_its_one_round_event_and_a_broken_spec_still_starts_and_finishes() {
    // Every kind plays its rounds through the same episode: a plain task has one round.
    let (result, seen) = run_bundled("rt-002-empty-file-write");
    check_frame(&seen, &result.trial);
    assert!(
        matches!(rounds(&seen).as_slice(), [(1, RoundEndReason::Reported(_))]),
        "{seen:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("golden/broken.yaml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "description: x\npromt: y\n").unwrap();
    let tape = Arc::new(Tape::default());
    let mut settings = RunSettings::new(
        dir.path().join("out"),
        AgentSource {
            spec: AgentSpec::oracle(),
            base_dir: dir.path().to_path_buf(),
        },
    );
    settings.events = EventSink::new(vec![tape.clone()]);
    let file = SpecFile {
        category: "golden".into(),
        name: "broken".into(),
        path,
    };
    let result = runner::run_spec_file(&file, &settings, 1);
    assert!(result.is_harness_error());
    let seen = tape.0.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(
        matches!(&seen[0], Seen::Started { agent, .. } if agent == "-"),
        "{seen:?}"
    );
    assert_eq!(
        seen[1],
        Seen::Finished {
            trial: "golden::broken".into(),
            passed: false
        }
    );
}
