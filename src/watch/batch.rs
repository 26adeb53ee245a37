//! One re-run of `medin watch`: a set of task files run as a run of their own (its own run id
//! and run folder), through the same [`Driver`] as `medin run` — so each trial goes through the
//! one runner, writes its entry to `ACTIVITY_LOG.md` and its result part, and the run is
//! finished (summary, results.json) as a narrowed `medin run` is: metrics, no threshold gate.
//!
//! The trials run on worker threads that ask the [`Gate`] before starting each one: while the
//! watch holds it closed (a PRD change being reloaded, a PRD that does not load), no trial
//! starts and the ones running finish. What happens is sent to the watch loop as
//! [`BatchEvent`]s; this module prints nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use crate::harness::{Driver, Plan};
use crate::report::{Gate as ThresholdGate, RunId};
use crate::runner::TaskResult;

/// Whether trials may start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GateState {
    Open,
    Closed,
    /// The watch is ending: no trial starts again.
    Stopping,
}

/// The watch's say over when trials start, shared with every batch's workers.
#[derive(Debug)]
pub struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Default for Gate {
    fn default() -> Self {
        Gate {
            state: Mutex::new(GateState::Open),
            changed: Condvar::new(),
        }
    }
}

impl Gate {
    fn set(&self, to: GateState) {
        if let Ok(mut state) = self.state.lock() {
            if *state != GateState::Stopping {
                *state = to;
            }
        }
        self.changed.notify_all();
    }

    /// Trials may start again.
    pub fn open(&self) {
        self.set(GateState::Open);
    }

    /// No trial starts until [`Gate::open`]; the running ones go on.
    pub fn close(&self) {
        self.set(GateState::Closed);
    }

    /// No trial starts again, ever.
    pub fn stop(&self) {
        if let Ok(mut state) = self.state.lock() {
            *state = GateState::Stopping;
        }
        self.changed.notify_all();
    }

    pub fn is_open(&self) -> bool {
        self.state.lock().is_ok_and(|s| *s == GateState::Open)
    }

    /// Waits until trials may start: true, or false once the watch is stopping.
    fn wait_open(&self) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        loop {
            match *state {
                GateState::Open => return true,
                GateState::Stopping => return false,
                GateState::Closed => match self.changed.wait(state) {
                    Ok(s) => state = s,
                    Err(_) => return false,
                },
            }
        }
    }
}

/// What a batch tells the watch loop.
#[derive(Debug)]
pub enum BatchEvent {
    /// A trial started.
    Started { trial: String },
    /// A trial finished.
    Finished(Box<TaskResult>),
    /// Every trial that was going to run has run, and the run is finished.
    Done(BatchSummary),
}

/// How a batch ended.
#[derive(Debug, Clone)]
pub struct BatchSummary {
    pub run_id: RunId,
    /// The run folder.
    pub folder: std::path::PathBuf,
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    /// Trials that did not start because the watch was stopping.
    pub not_started: usize,
}

/// A batch running on its own thread.
#[derive(Debug)]
pub struct Batch {
    pub run_id: RunId,
    pub trials: usize,
    handle: JoinHandle<()>,
}

impl Batch {
    /// Starts running every trial of `plan` (which keeps its own run id) on `jobs` worker
    /// threads; events go to `events`, wrapped by `wrap`.
    pub fn start<S: Send + 'static>(
        plan: Plan,
        jobs: usize,
        gate: Arc<Gate>,
        events: Sender<S>,
        wrap: fn(BatchEvent) -> S,
    ) -> Batch {
        let run_id = plan.run_id.clone();
        let driver = Driver::new(plan, Vec::new());
        let trials = driver.trials();
        let count = trials.len();
        let handle = std::thread::spawn(move || {
            let next = AtomicUsize::new(0);
            let results: Mutex<Vec<TaskResult>> = Mutex::new(Vec::new());
            std::thread::scope(|s| {
                for _ in 0..jobs.max(1).min(trials.len()) {
                    s.spawn(|| loop {
                        if !gate.wait_open() {
                            break;
                        }
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(trial) = trials.get(i) else { break };
                        let _ = events.send(wrap(BatchEvent::Started {
                            trial: trial.name.clone(),
                        }));
                        let result = driver.run_trial(trial);
                        let _ = events.send(wrap(BatchEvent::Finished(Box::new(result.clone()))));
                        if let Ok(mut all) = results.lock() {
                            all.push(result);
                        }
                    });
                }
            });
            let results = results.into_inner().unwrap_or_default();
            // The run's record (summary, results.json) is written as for a narrowed `medin run`;
            // what its reporters failed to do is printed there, and the watch goes on.
            let _ = driver.finish(&results, ThresholdGate::NotChecked);
            let count_where = |f: fn(&TaskResult) -> bool| results.iter().filter(|r| f(r)).count();
            let summary = BatchSummary {
                run_id: driver.plan().run_id.clone(),
                folder: driver.folder().path().to_path_buf(),
                passed: count_where(TaskResult::passed),
                failed: count_where(|r| !r.passed() && !r.is_harness_error()),
                errors: count_where(TaskResult::is_harness_error),
                not_started: trials.len() - results.len(),
            };
            let _ = events.send(wrap(BatchEvent::Done(summary)));
        });
        Batch {
            run_id,
            trials: count,
            handle,
        }
    }

    /// Waits for the batch's thread (after its [`BatchEvent::Done`]).
    pub fn join(self) {
        let _ = self.handle.join();
    }
}
