//! The one action path. Every action of an attempt, whatever its [`Origin`] — the agent's tool
//! call, a `setup:` command, a TDD test or build command, a PRP gate, a `command:` validator —
//! passes [`Pipeline::pass`] or [`Pipeline::command`], which run the same steps in the same
//! order:
//!
//! 1. **tool policy** (the task's allow/deny globs; agent calls only);
//! 2. **guard verdict** on the input exactly as the tool will read it (unknown tools are
//!    blocked: what the guard cannot judge does not run);
//! 3. **policy decision** ([`Rules::decide`]: the one place that says what a verdict means for
//!    this task and this origin, with the ask mode resolved once per run);
//! 4. **runtime limits** before (files, changes, time, turns);
//! 5. **the tool or the sandbox**, under the task's deadline: no command runs past it (but the
//!    verifier, which runs once the agent has stopped, on its own time: [`RunIn::own_time`]);
//! 6. **runtime limits** after — counting, for an agent's command, the files it changed in the
//!    workspace, seen by a snapshot before and after ([`changes`]; the one before is the
//!    previous command's after, when nothing passed in between) — and the attempt's
//!    invariant (its workspace exists, and its root stays enterable and writable by the
//!    harness: a mode taken away is put back);
//! 7. **the receipt**, with its origin, guard verdict and decision, appended and flushed to
//!    `receipts.jsonl` before anything else happens ([`ledger`]).
//!
//! Nothing else in medin calls the tools or runs a command for an attempt: the runner, the
//! loops and the validators hand their commands to the pipeline. A harness failure on the way
//! (a log that cannot be written, a sandbox that cannot start a command) is a [`RunError`],
//! never a receipt blamed on the agent.
//!
//! The pipeline is `Sync`: validators run in parallel and pass their commands through the same
//! pipeline; the ledger and the limit tracker sit behind one lock each.

pub mod changes;
pub mod checkpoint;
mod ledger;
mod transaction;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::agent::Action;
use crate::error::RunError;
use crate::guard::limits::{CallKey, LimitTracker, LimitViolation};
use crate::guard::policy::{Decision, Rules, ToolGate};
use crate::guard::{self, GuardContext, Verdict};
use crate::runner::record::{ActionRecord, AttemptMetrics};
use crate::sandbox::{CommandOutcome, SandboxConfig};
use crate::spec::Outcome;
use crate::tools::{self, ActionInput, ErrorCode, Receipt, ReceiptStatus, ToolContext};
use crate::validate::judged::{RunnerEvidence, RunnerShims};
use crate::validate::ValidationCache;

pub use crate::guard::policy::Origin;
pub(crate) use ledger::{input_json, Ledger};

/// When an attempt must be over: the task's `limits.timeout` from its start. Every command,
/// gate, validator and agent reply is bounded by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    pub started: Instant,
    pub timeout: Duration,
}

impl Deadline {
    pub fn start(timeout: Duration) -> Self {
        Deadline {
            started: Instant::now(),
            timeout,
        }
    }

    /// The instant the attempt's time is up.
    pub fn at(&self) -> Instant {
        self.started + self.timeout
    }

    pub fn remaining(&self) -> Duration {
        self.timeout.saturating_sub(self.started.elapsed())
    }

    pub fn passed(&self) -> bool {
        self.started.elapsed() > self.timeout
    }

    /// `limit`, cut to what is left before the deadline (at least 1 ms, so a command that
    /// must not run still gets a well-formed timeout and is killed at once).
    pub fn clip(&self, limit: Duration) -> Duration {
        limit.min(self.remaining().max(Duration::from_millis(1)))
    }
}

/// Why the attempt must stop after an action, and as what outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stop {
    pub outcome: Outcome,
    pub reason: String,
}

/// What became of a tool call.
#[derive(Debug, Clone)]
pub struct Passed {
    /// What the agent is answered (also in `receipts.jsonl`).
    pub receipt: Receipt,
    /// Set when the attempt must stop after this action.
    pub stop: Option<Stop>,
}

/// What became of a command handed to the pipeline.
#[derive(Debug)]
pub enum CommandPassed {
    /// It ran (whatever its exit status).
    Ran {
        outcome: Box<CommandOutcome>,
        /// What the test runners in it reported (judged runs only).
        evidence: Option<RunnerEvidence>,
    },
    /// The policy denied it; nothing ran.
    Denied { message: String },
}

/// How a command is run.
#[derive(Debug, Clone, Copy)]
pub struct CommandOptions {
    /// Its own time limit (else the task's command timeout); cut to the deadline either way.
    pub timeout: Option<Duration>,
    /// Through the runner shims, so that what the test runners report is read from a place
    /// the command cannot write (see [`crate::validate::judged`]).
    pub judged: bool,
}

/// Where an author's command runs, when not simply in the workspace root with the sandbox's
/// environment under the attempt's deadline (the verifier: [`Pipeline::command_in`]).
#[derive(Debug, Clone, Default)]
pub struct RunIn {
    /// Workspace-relative working directory (default: the workspace root).
    pub cwd: Option<PathBuf>,
    /// Environment on top of the sandbox's.
    pub env: Vec<(String, String)>,
    /// The command's own timeout holds, not cut to the attempt's deadline: for a command that
    /// runs once the agent has stopped and has a time limit of its own.
    pub own_time: bool,
    /// Harness folders outside the workspace that this command alone may write (under
    /// `strict`, bound into its own view): a verifier's private reward folder.
    pub write_paths: Vec<PathBuf>,
}

/// An action the tool policy, the guard, the decision and the limits cleared. Only the
/// pipeline makes one, so a tool can only be called on an action that took the whole path.
#[derive(Debug)]
pub struct Cleared<'a> {
    tool: &'a str,
    input: &'a ActionInput,
}

impl<'a> Cleared<'a> {
    pub fn tool(&self) -> &'a str {
        self.tool
    }

    pub fn input(&self) -> &'a ActionInput {
        self.input
    }

    /// A call cleared for a unit test of the tools' own defences (below the guard).
    #[cfg(test)]
    pub(crate) fn for_test(tool: &'a str, input: &'a ActionInput) -> Self {
        Cleared { tool, input }
    }
}

/// Everything an attempt's actions pass through. Built once per attempt by the runner.
#[derive(Debug)]
pub struct Pipeline {
    workspace: PathBuf,
    sandbox: SandboxConfig,
    gate: ToolGate,
    rules: Rules,
    deadline: Deadline,
    shims: Option<RunnerShims>,
    tracker: Mutex<LimitTracker>,
    ledger: Mutex<Ledger>,
    /// The attempt's validation cache, invalidated by every action that could change a result.
    checks: Arc<ValidationCache>,
    /// Where transactions keep their checkpoints (`<run folder>/transactions`); none outside
    /// an attempt: a private temporary folder then.
    checkpoints: Option<PathBuf>,
    checkpoint_limits: checkpoint::CheckpointLimits,
    /// Transactions begun so far (their ids: `txn-1`, `txn-2` …).
    transactions: std::sync::atomic::AtomicU32,
    /// The workspace as the agent's last command left it (kept while the cache's epoch says
    /// nothing else passed): the next command's starting snapshot.
    baseline: changes::Baseline,
}

/// How an action fared on its way, for its record.
#[derive(Debug, Default)]
struct Passage {
    guard: Option<Verdict>,
    decision: Option<&'static str>,
    justification: Option<String>,
    limit: Option<String>,
    ran: bool,
    /// When the pipeline took the action up: its record carries how long the passage took.
    started: Option<Instant>,
}

/// Where an action stands after steps 1-4 ([`Pipeline::clear`]).
enum Clearing {
    /// Stopped on the way (denied, or a limit): answered and recorded already.
    Answered(Passed),
    /// Cleared: what the rest of its path needs.
    Cleared(Clearance),
}

/// An action that cleared the tool policy, the guard, the decision and the limits before.
struct Clearance {
    /// The input as the tool reads it (canonical where it validates).
    input: ActionInput,
    verdict: Verdict,
    decision: Decision,
    warnings: Vec<String>,
    justification: Option<String>,
    /// What it would touch, as the limit tracker counts it.
    affected: Vec<tools::WouldAffect>,
    started: Option<Instant>,
}

/// A delegated call that was allowed: the workspace as it was when it was cleared, so what the
/// agent's own tool then changed can be counted when it reports the call done
/// ([`Pipeline::delegated_done`]).
#[derive(Debug)]
pub struct DelegatedWatch {
    before: Result<(changes::Snapshot, changes::Since), changes::SnapshotError>,
}

impl Pipeline {
    pub(crate) fn new(
        workspace: &Path,
        sandbox: SandboxConfig,
        gate: ToolGate,
        rules: Rules,
        deadline: Deadline,
        tracker: LimitTracker,
        ledger: Ledger,
    ) -> Self {
        Pipeline {
            workspace: workspace.to_path_buf(),
            sandbox,
            gate,
            rules,
            deadline,
            shims: None,
            tracker: Mutex::new(tracker),
            ledger: Mutex::new(ledger),
            checks: Arc::new(ValidationCache::default()),
            checkpoints: None,
            checkpoint_limits: checkpoint::CheckpointLimits::default(),
            transactions: std::sync::atomic::AtomicU32::new(0),
            baseline: changes::Baseline::default(),
        }
    }

    /// Transactions keep their checkpoints below `dir` (the attempt's run folder).
    pub fn set_checkpoint_dir(&mut self, dir: PathBuf) {
        self.checkpoints = Some(dir);
    }

    /// The bounds of a transaction's checkpoint (default: [`checkpoint::CheckpointLimits`]).
    pub fn set_checkpoint_limits(&mut self, limits: checkpoint::CheckpointLimits) {
        self.checkpoint_limits = limits;
    }

    /// A pipeline outside any attempt, for checking a workspace on its own (`medin`'s
    /// validators run standalone, as in tests): the default policy with warnings run, no
    /// runtime limits, an hour's deadline, no runner shims, records kept in memory.
    pub fn standalone(workspace: &Path) -> Self {
        let deadline = Deadline::start(Duration::from_secs(3600));
        let limits = crate::guard::limits::RuntimeLimits::default();
        let gate = ToolGate::allow_all();
        let rules = Rules::new(&crate::spec::Policy::default(), crate::guard::policy::Ask::Warn, false);
        Pipeline::new(
            workspace,
            SandboxConfig::new(workspace),
            gate,
            rules,
            deadline,
            LimitTracker::new(limits, deadline.started),
            Ledger::in_memory(),
        )
    }

    /// The agent's time starts now (after setup): the deadline and the time limit restart.
    pub(crate) fn start_clock(&mut self, limits: crate::guard::limits::RuntimeLimits) {
        self.deadline = Deadline::start(self.deadline.timeout);
        self.tracker = Mutex::new(LimitTracker::new(limits, self.deadline.started));
    }

    /// Judged commands go through these shims from now on.
    pub(crate) fn set_shims(&mut self, shims: RunnerShims) {
        self.shims = Some(shims);
    }

    pub fn deadline(&self) -> Deadline {
        self.deadline
    }

    pub fn sandbox(&self) -> &SandboxConfig {
        &self.sandbox
    }

    /// The attempt's validation cache (see [`crate::validate::cache`]).
    pub fn validation_cache(&self) -> &Arc<ValidationCache> {
        &self.checks
    }

    /// The workspace as the guard judges an input: a command by the paths it will see (the
    /// fixed root, `/app`, when the task has one, so `rm -r /app/build` is work in the
    /// workspace), a file tool's workspace-relative paths against the host path, where the
    /// guard reads a test file's current content.
    fn guard_workspace(&self, runs_commands: bool) -> &Path {
        if runs_commands {
            self.sandbox.workspace_seen()
        } else {
            &self.workspace
        }
    }

    pub fn gate(&self) -> &ToolGate {
        &self.gate
    }

    fn ledger(&self) -> MutexGuard<'_, Ledger> {
        // A panic while the lock was held left the ledger as it was after its last whole
        // append: still consistent, so keep using it.
        self.ledger.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn tracker(&self) -> MutexGuard<'_, LimitTracker> {
        self.tracker.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The agent starts a turn (a tool call or a malformed line): counted against `max_turns`.
    pub fn begin_turn(&self, call: CallKey) -> Result<(), LimitViolation> {
        self.tracker().begin_turn(call)
    }

    /// A turn taken inside the agent's call (a transaction's step): counted against
    /// `max_turns`, not as a call of its own for `max_repeats`.
    fn begin_inner_turn(&self) -> Result<(), LimitViolation> {
        self.tracker().begin_inner_turn()
    }

    pub fn turns(&self) -> u32 {
        self.tracker().turns()
    }

    /// One tool call of `origin` through the whole path (a `transaction` through the
    /// transaction's flow, each of its steps a pass of its own: [`transaction`]).
    pub fn pass(&self, origin: Origin, action: &Action) -> Result<Passed, RunError> {
        if action.tool == tools::transaction::NAME && origin == Origin::Agent {
            return self.transaction(action);
        }
        self.pass_linked(origin, action, None)
    }

    /// A tool call that the agent's own program will carry out (a CLI agent's Bash, Write or
    /// Edit, reported by its pre-tool hook): the same steps 1-4 as [`Pipeline::pass`] and the
    /// receipt (step 7), with step 5 left to the agent — medin only says whether it may. An
    /// allowed call's receipt says `data.delegated: true` and who runs it (`executed_by`); a
    /// denied one is the same receipt [`Pipeline::pass`] gives. The watch, for an allowed
    /// call, lets [`Pipeline::delegated_done`] count what it changed.
    pub fn judge(
        &self,
        origin: Origin,
        action: &Action,
        executed_by: &str,
    ) -> Result<(Passed, Option<DelegatedWatch>), RunError> {
        let tctx = self.tool_context();
        let cleared = match self.clear(origin, action, None, &tctx)? {
            Clearing::Answered(passed) => return Ok((passed, None)),
            Clearing::Cleared(c) => c,
        };
        // The agent's tool will do the work, so medin's own tool checks the call without doing
        // it (a dry run: the input's schema, the workspace boundary, links): a call medin's
        // tool would refuse is refused.
        if !tools::runs_commands(&action.tool, canonical_of(&cleared.input)) {
            let mut dry = tctx.clone();
            dry.dry_run = true;
            let probe = tools::call(
                &dry,
                &Cleared {
                    tool: &action.tool,
                    input: &cleared.input,
                },
            );
            if probe.status == ReceiptStatus::Error {
                let passage = Passage {
                    started: cleared.started,
                    guard: Some(cleared.verdict),
                    decision: Some("deny"),
                    justification: cleared.justification,
                    limit: None,
                    ran: false,
                };
                self.record(origin, action, passage, probe.clone())?;
                return Ok((
                    Passed {
                        receipt: probe,
                        stop: None,
                    },
                    None,
                ));
            }
        }
        let watch = DelegatedWatch {
            before: self
                .baseline
                .start(&self.workspace, changes::SnapshotLimits::default(), self.checks.epoch()),
        };
        let mut receipt = Receipt::success(serde_json::json!({
            "delegated": true,
            "executed_by": executed_by,
            "input": input_json(&cleared.input),
        }));
        receipt.warnings.extend(cleared.warnings);
        self.tracker().record(&cleared.affected);
        let passage = Passage {
            started: cleared.started,
            guard: Some(cleared.verdict),
            decision: Some(cleared.decision.name()),
            justification: cleared.justification,
            limit: None,
            ran: false,
        };
        self.record(origin, action, passage, receipt.clone())?;
        Ok((Passed { receipt, stop: None }, Some(watch)))
    }

    /// A delegated call ([`Pipeline::judge`]) that the agent reports done: what it changed in
    /// the workspace is counted against the runtime limits (step 6); a broken limit or a
    /// removed workspace stops the attempt with a receipt saying so. Returns what changed
    /// (`data.changed` of a command's receipt) and the stop, if any.
    pub fn delegated_done(
        &self,
        action: &Action,
        watch: DelegatedWatch,
    ) -> Result<(serde_json::Value, Option<Stop>), RunError> {
        let mut probe = Receipt::success(serde_json::json!({}));
        let (observed, _) = self.observe_changes(watch.before, &mut probe);
        self.tracker().record(&observed);
        let changed = probe.data.get("changed").cloned().unwrap_or(serde_json::Value::Null);
        let violation = self.tracker().check_after().err();
        let stop = match violation {
            Some(v) => {
                let receipt = limit_receipt(&v);
                self.note_agent(action, receipt, Some(v.to_string()))?;
                Some(limit_stop(&v))
            }
            None if !self.workspace.is_dir() => {
                let message = format!(
                    "the workspace {} no longer exists after this action; the task is stopped",
                    self.workspace.display()
                );
                self.note_agent(
                    action,
                    Receipt::error(ErrorCode::InvariantBroken, message.clone()),
                    None,
                )?;
                Some(Stop {
                    outcome: Outcome::Stopped,
                    reason: format!("INVARIANT_BROKEN: {message}"),
                })
            }
            None => None,
        };
        Ok((changed, stop))
    }

    /// What the tools act with for this attempt: its workspace, its sandbox with the command
    /// timeout cut to the deadline, its validation cache.
    fn tool_context(&self) -> ToolContext {
        ToolContext {
            workspace: self.workspace.clone(),
            sandbox: {
                let mut s = self.sandbox.clone();
                s.timeout = self.deadline.clip(s.timeout);
                s
            },
            dry_run: false,
            deadline: Some(self.deadline.at()),
            checks: Some(Arc::clone(&self.checks)),
        }
    }

    /// Steps 1-4 of an agent's or author's action: the tool policy, the guard, the decision and
    /// the runtime limits before. An action stopped on the way is answered (and recorded) here;
    /// one that cleared them all comes back with what the rest of its path needs.
    fn clear(
        &self,
        origin: Origin,
        action: &Action,
        link: Option<&serde_json::Value>,
        tctx: &ToolContext,
    ) -> Result<Clearing, RunError> {
        let started = Some(Instant::now());
        // 1. Tool policy: the tool, and `bash` too when the call runs a command. Paths below
        //    the task's fixed root (`/app/x`) are workspace paths from here on.
        let canonical = tools::canonical_input(&action.tool, &action.input)
            .map(|v| tools::rebase_paths(&action.tool, v, self.sandbox.root.as_ref()));
        if let Err(denial) = self
            .gate
            .check_call(&action.tool, tools::runs_commands(&action.tool, canonical.as_ref()))
        {
            let mut receipt = Receipt::error(ErrorCode::PermissionDenied, denial.message.clone());
            // Always a way forward: a similar allowed tool, or else asking for permission.
            let alt = denial.alternative.clone().unwrap_or_else(|| {
                format!(
                    "no allowed tool does this: end the round with a `final` of result `issue` asking for `{}` to be allowed",
                    action.tool
                )
            });
            receipt.data = serde_json::json!({ "alternative": alt });
            receipt.next_actions.push(alt);
            let passage = Passage {
                started,
                decision: Some("deny"),
                ..Default::default()
            };
            transaction::link(&mut receipt, link);
            self.record(origin, action, passage, receipt.clone())?;
            return Ok(Clearing::Answered(Passed { receipt, stop: None }));
        }
        // 2. The guard, on the input exactly as the tool will read it. Input that does not
        //    validate is judged as the agent wrote it and reaches no tool: the tool's own
        //    answer below only says why.
        let judged_input = match (&canonical, &action.input) {
            (Some(v), _) => v.clone(),
            (None, ActionInput::Json(v)) => v.clone(),
            (None, ActionInput::Raw(s)) => serde_json::json!({ "raw": s }),
        };
        let verdict = guard::check_action(
            &action.tool,
            &judged_input,
            &GuardContext {
                workspace: self.guard_workspace(tools::runs_commands(&action.tool, canonical.as_ref())),
            },
        );
        // 3. The decision.
        let decision = self.rules.decide(&verdict, origin);
        let mut warnings = Vec::new();
        let mut justification = None;
        match &decision {
            Decision::Allow => {}
            Decision::Warn(w) => warnings = w.clone(),
            Decision::Bypassed {
                rules,
                justification: j,
            } => {
                warnings.push(format!(
                    "guard rule(s) {} bypassed by task policy: {j}",
                    rules.join(", ")
                ));
                justification = Some(j.clone());
            }
            Decision::Deny { message } => {
                let mut receipt = if tools::is_known(&action.tool) {
                    Receipt::error(ErrorCode::PermissionDenied, message.clone())
                } else {
                    tools::unknown_tool_receipt(&action.tool)
                };
                receipt.errors[0].context = serde_json::to_value(&verdict).unwrap_or_default();
                if let Some(alt) = &verdict.alternative {
                    receipt.next_actions.push(alt.clone());
                }
                let passage = Passage {
                    started,
                    guard: Some(verdict),
                    decision: Some("deny"),
                    ..Default::default()
                };
                transaction::link(&mut receipt, link);
                self.record(origin, action, passage, receipt.clone())?;
                return Ok(Clearing::Answered(Passed { receipt, stop: None }));
            }
        }
        let input = canonical.map(ActionInput::Json).unwrap_or_else(|| action.input.clone());
        // 4. Runtime limits, before.
        let affected = tools::would_affect(tctx, &action.tool, &input);
        if let Err(v) = self.tracker().check_before(&affected) {
            let mut receipt = limit_receipt(&v);
            let passage = Passage {
                started,
                guard: Some(verdict),
                decision: Some(decision.name()),
                justification,
                limit: Some(v.to_string()),
                ran: false,
            };
            transaction::link(&mut receipt, link);
            self.record(origin, action, passage, receipt.clone())?;
            return Ok(Clearing::Answered(Passed {
                receipt,
                stop: Some(limit_stop(&v)),
            }));
        }
        Ok(Clearing::Cleared(Clearance {
            input,
            verdict,
            decision,
            warnings,
            justification,
            affected,
            started,
        }))
    }

    /// [`Pipeline::pass`], with `link` (a transaction's id and the step's place in it) written
    /// into the receipt's `data.transaction`.
    fn pass_linked(
        &self,
        origin: Origin,
        action: &Action,
        link: Option<&serde_json::Value>,
    ) -> Result<Passed, RunError> {
        let tctx = self.tool_context();
        let cleared = match self.clear(origin, action, link, &tctx)? {
            Clearing::Answered(passed) => return Ok(passed),
            Clearing::Cleared(c) => c,
        };
        let Clearance {
            input,
            verdict,
            decision,
            warnings,
            justification,
            affected,
            started,
        } = cleared;
        // 5. Run it (the sandbox confines it; the deadline bounds it). What an agent's command
        //    changes in the workspace is seen from outside it, by a snapshot before and after
        //    (before: the one after the previous command, when nothing passed in between).
        let observe = origin == Origin::Agent && tools::runs_commands(&action.tool, canonical_of(&input));
        let before = observe.then(|| {
            self.baseline
                .start(&self.workspace, changes::SnapshotLimits::default(), self.checks.epoch())
        });
        let cleared = Cleared {
            tool: &action.tool,
            input: &input,
        };
        let mut receipt = tools::call(&tctx, &cleared);
        receipt.warnings.extend(warnings);
        // A dry run changed nothing: it counts toward no limit.
        if !matches!(receipt.status, ReceiptStatus::Error | ReceiptStatus::DryRun) {
            self.tracker().record(&affected);
        }
        // The root's mode is put back first, so the snapshot after can enter it.
        if let Some(w) = self.keep_workspace_open() {
            receipt.warnings.push(w);
        }
        // A command that failed may still have changed files: they count all the same.
        let (observed, after) = match before {
            Some(before) if receipt.status != ReceiptStatus::DryRun => self.observe_changes(before, &mut receipt),
            _ => (Vec::new(), None),
        };
        self.tracker().record(&observed);
        // 6. Runtime limits, after; the invariant.
        let mut stop = None;
        let mut limit = None;
        if let Err(v) = self.tracker().check_after() {
            let by_command =
                !observed.is_empty() && matches!(v, LimitViolation::Files { .. } | LimitViolation::Changes { .. });
            if by_command {
                // The command's own changes broke the limit: the answer is the limit's error,
                // as a file tool's would be (with what the command did kept in `data`).
                let stopped = limit_receipt(&v);
                receipt.status = ReceiptStatus::Error;
                receipt.errors.splice(0..0, stopped.errors);
            } else {
                receipt.warnings.push(format!("{v}; the task is stopped"));
            }
            limit = Some(v.to_string());
            stop = Some(limit_stop(&v));
        }
        // The one invariant every task has: its workspace exists. An action that removed it
        // breaks every later step and every validation, so the task stops here.
        if !self.workspace.is_dir() {
            receipt.status = ReceiptStatus::Error;
            receipt.errors.insert(
                0,
                tools::receipt::ToolError {
                    code: ErrorCode::InvariantBroken,
                    message: format!(
                        "the workspace {} no longer exists after this action; the task is stopped",
                        self.workspace.display()
                    ),
                    context: serde_json::Value::Null,
                },
            );
        }
        if let Some(e) = receipt.errors.iter().find(|e| e.code == ErrorCode::InvariantBroken) {
            stop = Some(Stop {
                outcome: Outcome::Stopped,
                reason: format!("INVARIANT_BROKEN: {}", e.message),
            });
        }
        // 7. The receipt.
        let passage = Passage {
            started,
            guard: Some(verdict),
            decision: Some(decision.name()),
            justification,
            limit,
            ran: true,
        };
        transaction::link(&mut receipt, link);
        self.record(origin, action, passage, receipt.clone())?;
        // The snapshot after the command is the next one's baseline when the only move of the
        // epoch since it was taken is this command's own record (anything else, even from
        // another thread, makes the next command walk afresh).
        if let Some((after, epoch)) = after {
            let now = self.checks.epoch();
            if now == epoch + 1 {
                self.baseline.keep(after, now);
            }
        }
        Ok(Passed { receipt, stop })
    }

    /// Compares the workspace with `before` (the command's starting snapshot), puts what
    /// changed in the receipt's `data.changed` (and a warning when the comparison was
    /// partial), and returns the changes as the limit tracker counts them, with the snapshot
    /// after and the epoch read just before it was taken.
    fn observe_changes(
        &self,
        before: Result<(changes::Snapshot, changes::Since), changes::SnapshotError>,
        receipt: &mut Receipt,
    ) -> (Vec<tools::WouldAffect>, Option<(changes::Snapshot, u64)>) {
        let epoch = self.checks.epoch();
        let after = before
            .and_then(|b| changes::Snapshot::take(&self.workspace, changes::SnapshotLimits::default()).map(|a| (b, a)));
        let ((before, since), after) = match after {
            Ok(pair) => pair,
            Err(e) => {
                receipt.warnings.push(e.to_string());
                return (Vec::new(), None);
            }
        };
        let mut found = before.diff(&after);
        found.since = since;
        if let Some(data) = receipt.data.as_object_mut() {
            data.insert("changed".into(), found.to_json());
        }
        receipt.warnings.extend(found.warning());
        (found.affected(), Some((after, epoch)))
    }

    /// A command of the task's author (`origin` is setup, test, build, gate or validator)
    /// through guard → decision → sandbox (under the deadline) → receipt. `tool` names it in
    /// the receipt (`medin.setup`, `medin.test`, `medin.validate` …).
    pub fn command(
        &self,
        origin: Origin,
        tool: &str,
        command: &str,
        options: CommandOptions,
    ) -> Result<CommandPassed, RunError> {
        let action = Action {
            id: String::new(),
            tool: tool.to_string(),
            input: ActionInput::Json(serde_json::json!({ "command": command })),
        };
        self.command_with(origin, &action, command, options, command_receipt)
    }

    /// [`Pipeline::command`], run where and how `place` says (its working directory, extra
    /// environment, its own time).
    pub fn command_in(
        &self,
        origin: Origin,
        tool: &str,
        command: &str,
        options: CommandOptions,
        place: &RunIn,
    ) -> Result<CommandPassed, RunError> {
        let mut input = serde_json::json!({ "command": command });
        if let Some(cwd) = &place.cwd {
            input["cwd"] = cwd.display().to_string().into();
        }
        let action = Action {
            id: String::new(),
            tool: tool.to_string(),
            input: ActionInput::Json(input),
        };
        self.command_placed(origin, &action, command, options, place, command_receipt)
    }

    /// [`Pipeline::command`] for a caller that describes the action itself and words the
    /// receipt of a command that ran (a PRP gate: its level, its verdict).
    pub fn command_with(
        &self,
        origin: Origin,
        action: &Action,
        command: &str,
        options: CommandOptions,
        receipt_for: impl FnOnce(&CommandOutcome, Option<&RunnerEvidence>) -> Receipt,
    ) -> Result<CommandPassed, RunError> {
        self.command_placed(origin, action, command, options, &RunIn::default(), receipt_for)
    }

    fn command_placed(
        &self,
        origin: Origin,
        action: &Action,
        command: &str,
        options: CommandOptions,
        place: &RunIn,
        receipt_for: impl FnOnce(&CommandOutcome, Option<&RunnerEvidence>) -> Receipt,
    ) -> Result<CommandPassed, RunError> {
        let started = Some(Instant::now());
        let verdict = guard::check_command(
            command,
            &GuardContext {
                workspace: self.guard_workspace(true),
            },
        );
        let decision = self.rules.decide(&verdict, origin);
        let justification = match &decision {
            Decision::Deny { message } => {
                let mut receipt = Receipt::error(ErrorCode::PermissionDenied, message.clone());
                receipt.errors[0].context = serde_json::to_value(&verdict).unwrap_or_default();
                let passage = Passage {
                    started,
                    guard: Some(verdict),
                    decision: Some("deny"),
                    ..Default::default()
                };
                self.record(origin, action, passage, receipt)?;
                return Ok(CommandPassed::Denied {
                    message: message.clone(),
                });
            }
            Decision::Warn(_) => None,
            Decision::Bypassed { justification, .. } => Some(justification.clone()),
            Decision::Allow => None,
        };
        let mut cfg = self.sandbox.clone();
        let timeout = options.timeout.unwrap_or(cfg.timeout);
        cfg.timeout = if place.own_time {
            timeout
        } else {
            self.deadline.clip(timeout)
        };
        cfg.env.extend(place.env.iter().cloned());
        cfg.write_paths.extend(place.write_paths.iter().cloned());
        let cwd = place.cwd.as_deref();
        let ran = match (&self.shims, options.judged) {
            (Some(shims), true) => shims
                .run_in(&cfg, command, cwd)
                .map(|j| (j.outcome, Some(j.evidence)))
                .map_err(|e| e.to_string()),
            _ => crate::sandbox::run_shell(&cfg, command, cwd)
                .map(|o| (o, None))
                .map_err(|e| e.to_string()),
        };
        let (outcome, evidence) = match ran {
            Ok(r) => r,
            Err(detail) => {
                let receipt = Receipt::error(
                    ErrorCode::DependencyFail,
                    format!("the sandbox could not start it: {detail}"),
                );
                let passage = Passage {
                    started,
                    guard: Some(verdict),
                    decision: Some(decision.name()),
                    justification,
                    ..Default::default()
                };
                self.record(origin, action, passage, receipt)?;
                return Err(RunError::sandbox_start(
                    format!("the {} command `{command}`", origin.as_str()),
                    detail,
                ));
            }
        };
        let mut receipt = receipt_for(&outcome, evidence.as_ref());
        if let Decision::Warn(w) = &decision {
            receipt.warnings.extend(w.iter().cloned());
        }
        // Author commands run the agent's code (tests, gates, validators): it may take the
        // workspace from the harness as much as the agent's own commands.
        if let Some(w) = self.keep_workspace_open() {
            receipt.warnings.push(w);
        }
        let passage = Passage {
            started,
            guard: Some(verdict),
            decision: Some(decision.name()),
            justification,
            limit: None,
            ran: true,
        };
        self.record(origin, action, passage, receipt)?;
        Ok(CommandPassed::Ran {
            outcome: Box::new(outcome),
            evidence,
        })
    }

    /// The workspace root stays the harness's to enter, list and write, whatever an action did
    /// to its mode (`chmod 000 .`): the owner's permissions it took away are put back, so that
    /// no later command, judged phase or cleanup fails on it — a harness that cannot get into
    /// the workspace would report the agent's doing as its own failure. The rest of the mode,
    /// and everything below the root, stays as the action left it. Returns the warning for the
    /// action's receipt when something was put back (or could not be).
    fn keep_workspace_open(&self) -> Option<String> {
        use std::os::unix::fs::PermissionsExt;
        // Not through a link: only the directory the harness made is its to change.
        let meta = std::fs::symlink_metadata(&self.workspace).ok()?;
        let mode = meta.permissions().mode();
        if !meta.is_dir() || mode & 0o700 == 0o700 {
            return None;
        }
        let fixed = mode | 0o700;
        Some(
            match std::fs::set_permissions(&self.workspace, std::fs::Permissions::from_mode(fixed)) {
                Ok(()) => format!(
                    "the workspace root's mode was {:o}: its owner's permissions were put back ({:o}), the harness keeps entering, listing and writing it",
                    mode & 0o7777,
                    fixed & 0o7777
                ),
                Err(e) => format!(
                    "the workspace root's mode is {:o} and could not be put back: {e}",
                    mode & 0o7777
                ),
            },
        )
    }

    /// Records a step of the harness itself (`medin.*`: protected files put back, a backoff
    /// delay, cleanup): it ran no command and no tool.
    pub fn note(&self, action: &Action, receipt: Receipt) -> Result<(), RunError> {
        self.record(Origin::Harness, action, Passage::default(), receipt)
    }

    /// Records a receipt about the agent itself (malformed output, a crash, a hang, a reply
    /// that does not parse), with the turn limit it broke, if any.
    pub fn note_agent(&self, action: &Action, receipt: Receipt, limit: Option<String>) -> Result<(), RunError> {
        let passage = Passage {
            limit,
            ..Default::default()
        };
        self.record(Origin::Agent, action, passage, receipt)
    }

    /// Appends one event to `transcript.jsonl`.
    pub fn transcript(&self, direction: &str, event: serde_json::Value) -> Result<(), RunError> {
        self.ledger().transcript(direction, event)
    }

    /// Updates the attempt's metrics (usage, malformed lines, tampering).
    pub fn metrics<T>(&self, f: impl FnOnce(&mut AttemptMetrics) -> T) -> T {
        f(&mut self.ledger().metrics)
    }

    /// How many actions are recorded so far.
    pub fn action_count(&self) -> usize {
        self.ledger().actions.len()
    }

    /// The records from position `from` on (as kept in memory: see [`ActionRecord::retained`]).
    pub fn actions_since(&self, from: usize) -> Vec<ActionRecord> {
        self.ledger().actions.get(from..).map(<[_]>::to_vec).unwrap_or_default()
    }

    /// Hands over every action record, the metrics and the turns counted so far (a validator
    /// thread the watchdog gave up on may still hold the pipeline, so it is not consumed).
    pub(crate) fn finish(&self) -> (Vec<ActionRecord>, AttemptMetrics, u32) {
        let turns = self.turns();
        let mut ledger = self.ledger();
        (
            std::mem::take(&mut ledger.actions),
            std::mem::take(&mut ledger.metrics),
            turns,
        )
    }

    fn record(&self, origin: Origin, action: &Action, passage: Passage, receipt: Receipt) -> Result<(), RunError> {
        // Every action that could change a check's result (all but the reading tools) makes
        // the cached results stale.
        if !tools::leaves_state_alone(&action.tool, &action.input) {
            self.checks.invalidate();
        }
        self.ledger().record(origin, action, passage.into_parts(), receipt)
    }
}

impl Passage {
    fn into_parts(self) -> ledger::Parts {
        ledger::Parts {
            guard: self.guard,
            decision: self.decision.unwrap_or("not_checked"),
            justification: self.justification,
            limit: self.limit,
            ran: self.ran,
            duration_ms: self
                .started
                .map(|t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// The JSON object of a validated input (a raw input runs no command).
fn canonical_of(input: &ActionInput) -> Option<&serde_json::Value> {
    match input {
        ActionInput::Json(v) => Some(v),
        ActionInput::Raw(_) => None,
    }
}

/// A broken time limit is a timeout; any other limit stops the task.
fn limit_stop(v: &LimitViolation) -> Stop {
    Stop {
        outcome: match v {
            LimitViolation::Time { .. } => Outcome::Timeout,
            _ => Outcome::Stopped,
        },
        reason: v.to_string(),
    }
}

fn limit_receipt(v: &LimitViolation) -> Receipt {
    let kind = match v {
        LimitViolation::Files { .. } => "files",
        LimitViolation::Changes { .. } => "changes",
        LimitViolation::Time { .. } => "time",
        LimitViolation::Turns { .. } => "turns",
        LimitViolation::Repeats { .. } => "repeats",
    };
    Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"))
        .with_context(serde_json::json!({ "limit": kind }))
}

/// The receipt of an author's command that ran: its exit, timing, isolation and output tails;
/// an error receipt when it did not succeed.
fn command_receipt(outcome: &CommandOutcome, _evidence: Option<&RunnerEvidence>) -> Receipt {
    let mut receipt = Receipt::success(serde_json::json!({
        "exit": outcome.exit,
        "timed_out": outcome.timed_out,
        "duration_ms": outcome.duration_ms,
        "isolation": outcome.isolation,
        "stdout_tail": crate::inert::tail(&outcome.stdout.text, 2000),
        "stderr_tail": crate::inert::tail(&outcome.stderr.text, 2000),
    }));
    if !outcome.success() {
        receipt.status = ReceiptStatus::Error;
    }
    receipt
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(tool: &str, input: serde_json::Value) -> Action {
        Action {
            id: "1".into(),
            tool: tool.into(),
            input: ActionInput::Json(input),
        }
    }

    #[test]
    fn an_unknown_tool_is_denied_by_the_guard_and_never_reaches_a_tool() {
        let ws = tempfile::tempdir().unwrap();
        let pipe = Pipeline::standalone(ws.path());
        let passed = pipe
            .pass(
                Origin::Agent,
                &call("shell_exec", serde_json::json!({ "command": "id" })),
            )
            .unwrap();
        assert_eq!(
            passed.receipt.error_code(),
            Some(ErrorCode::ToolNotFound),
            "{:?}",
            passed.receipt
        );
        let (actions, metrics, _) = pipe.finish();
        assert_eq!(actions[0].decision, "deny");
        assert!(!actions[0].ran);
        assert_eq!(actions[0].guard.as_ref().unwrap().violations[0].rule, "tool.unknown");
        assert_eq!(metrics.guard_blocks, 1);
    }

    #[test]
    fn every_record_carries_its_origin_and_the_guard_verdict() {
        let ws = tempfile::tempdir().unwrap();
        let pipe = Pipeline::standalone(ws.path());
        pipe.pass(
            Origin::Agent,
            &call("bash", serde_json::json!({ "command": "echo hi" })),
        )
        .unwrap();
        let options = CommandOptions {
            timeout: None,
            judged: false,
        };
        let ran = pipe
            .command(Origin::Validator, "medin.validate", "true", options)
            .unwrap();
        assert!(matches!(ran, CommandPassed::Ran { .. }));
        let denied = pipe.command(Origin::Setup, "medin.setup", "rm -rf /", options).unwrap();
        assert!(matches!(denied, CommandPassed::Denied { .. }), "{denied:?}");
        let (actions, _, _) = pipe.finish();
        let seen: Vec<_> = actions
            .iter()
            .map(|a| (a.origin, a.decision.as_str(), a.guard.is_some()))
            .collect();
        assert_eq!(
            seen,
            [
                (Origin::Agent, "allow", true),
                (Origin::Validator, "allow", true),
                (Origin::Setup, "deny", true)
            ]
        );
        // Every passage is timed, a denied one too (the agent waited for its answer as well).
        assert!(actions.iter().all(|a| a.duration_ms.is_some()), "{actions:?}");
        pipe.note(
            &call("medin.cleanup", serde_json::json!({})),
            Receipt::success(serde_json::Value::Null),
        )
        .unwrap();
        let (notes, _, _) = pipe.finish();
        assert_eq!(notes[0].duration_ms, None, "a note of the harness took no passage");
    }

    #[test]
    fn a_command_the_sandbox_cannot_start_is_a_harness_error_with_a_receipt() {
        let ws = tempfile::tempdir().unwrap();
        let gone = ws.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let pipe = Pipeline::standalone(&gone);
        std::fs::remove_dir(&gone).unwrap();
        let options = CommandOptions {
            timeout: None,
            judged: false,
        };
        let err = pipe
            .command(Origin::Gate, "medin.gate", "true", options)
            .expect_err("no command can start in a workspace that is not there");
        assert!(matches!(err, RunError::SandboxStart { .. }), "{err:?}");
        assert_eq!(err.cause(), crate::error::Cause::Infrastructure);
        assert!(err.to_string().contains("medin doctor"), "says what to do: {err}");
        let (actions, _, _) = pipe.finish();
        assert_eq!(actions.len(), 1, "the attempt is still logged");
        assert_eq!(actions[0].origin, Origin::Gate);
        assert_eq!(actions[0].receipt.error_code(), Some(ErrorCode::DependencyFail));
    }

    #[test]
    fn a_deadline_cuts_every_limit_to_what_is_left() {
        let d = Deadline::start(Duration::from_millis(200));
        assert!(d.clip(Duration::from_secs(30)) <= Duration::from_millis(200));
        std::thread::sleep(Duration::from_millis(250));
        assert!(d.passed());
        assert_eq!(d.clip(Duration::from_secs(30)), Duration::from_millis(1));
    }
}
