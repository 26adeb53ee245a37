//! The `transaction` tool's flow: **plan → approve → checkpoint → execute → verify → commit or
//! roll back**, every step a receipt.
//!
//! 1. **plan** (dry run): the input is read into a [`Plan`]; each step's tool policy, guard
//!    verdict, policy decision and `would_affect` are taken *before anything runs* and written
//!    in a `medin.transaction` receipt (`phase: plan`). A step whose tool the task's policy
//!    denies, or that the guard blocks, rejects the whole plan: nothing runs, nothing changes.
//! 2. **approve**: the task's policy decides on the plan as a whole (the verdicts of all its
//!    steps and checks together: a warning unapproved where nobody can answer denies it), and
//!    the plan's projected changes are checked against the runtime limits (a plan that would
//!    break `max_files` or `max_changes` is refused and stops the task, as the same calls would).
//! 3. **checkpoint**: the workspace is copied into `<run folder>/transactions/<id>/`
//!    ([`super::checkpoint`]: no link followed, FIFOs recorded, sockets and devices refused,
//!    bounded — past the bound the transaction is refused before any step runs).
//! 4. **execute**: each step is an agent tool call through [`Pipeline::pass`]'s whole path
//!    (tool policy, guard, decision, limits, tool or sandbox, limits after, receipt): no side
//!    door. It counts as a turn, its changes count against the limits, its receipt carries
//!    `data.transaction = {id, step}`. The first step that fails (an error receipt) or stops
//!    the task ends the execution.
//! 5. **verify**: every check runs as a `verify` tool call through the same path
//!    (`data.transaction = {id, check}`); all must pass.
//! 6. **commit**, or **roll back** when a step or a check failed and `rollback_on_failure`
//!    (default true): the checkpoint is put back and the rollback is a `medin.transaction`
//!    receipt (`phase: rollback`). A rollback that cannot complete is `INVARIANT_BROKEN` on the
//!    transaction's receipt and stops the task: never a silent half state.
//!
//! The transaction's own receipt (tool `transaction`, last) summarises the phases: planned,
//! approved, checkpointed, executed, verified, committed or rolled back, and why.
//!
//! Limits: changes a rollback undid still count against `max_files` and `max_changes` — the
//! agent made them. Processes a `bash` step started keep running until the attempt ends
//! (writes they make after the rollback are theirs, seen like any background write).

use std::time::Instant;

use serde_json::{json, Value};

use super::checkpoint::{Checkpoint, CheckpointError, Restored};
use super::{limit_stop, Passage, Passed, Pipeline, Stop};
use crate::agent::Action;
use crate::error::RunError;
use crate::guard::policy::{Decision, Origin};
use crate::guard::{self, GuardContext, Verdict};
use crate::spec::Outcome;
use crate::tools::transaction::{self as plan, Plan, PlannedCall};
use crate::tools::{self, ActionInput, ErrorCode, Receipt, ReceiptStatus};

/// The harness's own records of a transaction (plan, checkpoint, rollback).
const RECORD: &str = "medin.transaction";

/// Writes `link` into `receipt.data.transaction` (an object's key; other data is kept under
/// `value`).
pub(super) fn link(receipt: &mut Receipt, link: Option<&Value>) {
    let Some(link) = link else { return };
    match &mut receipt.data {
        Value::Object(map) => {
            map.insert("transaction".into(), link.clone());
        }
        Value::Null => receipt.data = json!({ "transaction": link }),
        other => {
            let value = other.take();
            receipt.data = json!({ "value": value, "transaction": link });
        }
    }
}

/// How far a transaction got, for its receipt.
#[derive(Debug, Default)]
struct Progress {
    approved: bool,
    checkpointed: bool,
    executed: usize,
    steps: Vec<Value>,
    checks: Vec<Value>,
    /// `None`: not run (a step failed first, or the plan was refused).
    verified: Option<bool>,
    rollback: Option<Value>,
}

/// Why a transaction did not commit: the code and message of its receipt.
#[derive(Debug)]
struct Failure {
    code: ErrorCode,
    why: String,
}

impl Pipeline {
    /// Takes a turn for a step or check (`what`) of a transaction. Past the task's limits it is
    /// not run: its refusal is recorded and the transaction fails and stops (`Some`).
    fn take_inner_turn(
        &self,
        inner: &Action,
        inner_link: &serde_json::Value,
        what: String,
    ) -> Result<Option<(Failure, Stop)>, RunError> {
        let Err(v) = self.begin_inner_turn() else {
            return Ok(None);
        };
        let mut receipt = Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"));
        link(&mut receipt, Some(inner_link));
        self.note_agent(inner, receipt, Some(v.to_string()))?;
        let refused = Failure {
            code: ErrorCode::PermissionDenied,
            why: format!("{what} was not run: {v}"),
        };
        let stopped = Stop {
            outcome: Outcome::Stopped,
            reason: v.to_string(),
        };
        Ok(Some((refused, stopped)))
    }

    /// Runs the agent's `transaction` call (see the module doc).
    pub(super) fn transaction(&self, action: &Action) -> Result<Passed, RunError> {
        let started = Instant::now();
        let seq = self.transactions.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let id = format!("txn-{seq}");
        let mut progress = Progress::default();
        // The tool itself: allowed by the task's policy, and an input that reads as a plan.
        if let Err(denial) = self.gate.check_call(plan::NAME, false) {
            let failure = Failure {
                code: ErrorCode::PermissionDenied,
                why: denial.message,
            };
            return self.conclude(action, &id, "", started, None, "deny", progress, Some(failure), None);
        }
        let plan = match tools::validated_input(plan::NAME, &action.input).and_then(|v| plan::parse(&v)) {
            Ok(p) => p,
            Err(why) => {
                let failure = Failure {
                    code: ErrorCode::InvalidInput,
                    why,
                };
                return self.conclude(
                    action,
                    &id,
                    "",
                    started,
                    None,
                    "not_checked",
                    progress,
                    Some(failure),
                    None,
                );
            }
        };
        // 1. The plan: every step and check judged before anything runs.
        let judged = self.judge_plan(&plan);
        let decision = match &judged.refusal {
            Some(message) => Decision::Deny {
                message: message.clone(),
            },
            None => self.rules.decide(&judged.verdict, Origin::Agent),
        };
        self.note(&record_action(&id, "plan"), {
            let mut r = Receipt::dry_run(judged.affected.clone());
            r.data = json!({
                "transaction": { "id": id, "phase": "plan" },
                "description": plan.description,
                "steps": judged.steps,
                "verify": judged.checks,
                "decision": decision.name(),
                "rollback_on_failure": plan.rollback_on_failure,
            });
            r
        })?;
        // 2. Approval: the policy on the plan as a whole, then the limits it would reach.
        let warnings = match &decision {
            Decision::Deny { message } => {
                let failure = Failure {
                    code: judged.refusal_code.unwrap_or(ErrorCode::PermissionDenied),
                    why: format!("the plan was refused before any step ran: {message}"),
                };
                let verdict = Some(judged.verdict);
                return self.conclude(
                    action,
                    &id,
                    &plan.description,
                    started,
                    verdict,
                    "deny",
                    progress,
                    Some(failure),
                    None,
                );
            }
            Decision::Warn(w) => w.clone(),
            Decision::Bypassed { rules, justification } => vec![format!(
                "guard rule(s) {} bypassed by task policy: {justification}",
                rules.join(", ")
            )],
            Decision::Allow => Vec::new(),
        };
        if plan.dry_run {
            let mut receipt = Receipt::dry_run(judged.affected);
            receipt.data = json!({
                "transaction": { "id": id },
                "description": plan.description,
                "state": "planned",
                "steps": judged.steps,
                "verify": judged.checks,
            });
            receipt.warnings = warnings;
            return self.finish_record(
                action,
                started,
                Some(judged.verdict),
                decision.name(),
                false,
                receipt,
                None,
            );
        }
        if let Err(v) = self.tracker().check_before(&judged.affected) {
            let failure = Failure {
                code: ErrorCode::PermissionDenied,
                why: format!("the plan would break a limit before any step ran: {v}; the task is stopped"),
            };
            let stop = Some(limit_stop(&v));
            let verdict = Some(judged.verdict);
            return self.conclude(
                action,
                &id,
                &plan.description,
                started,
                verdict,
                decision.name(),
                progress,
                Some(failure),
                stop,
            );
        }
        progress.approved = true;
        // 3. The checkpoint.
        let taken = Instant::now();
        let store = self.checkpoint_store(&id);
        let checkpoint = match Checkpoint::take(&self.workspace, &store, self.checkpoint_limits) {
            Ok(c) => c,
            Err(CheckpointError::Refused(refusal)) => {
                let mut r = Receipt::error(ErrorCode::PermissionDenied, refusal.to_string());
                r.data = json!({ "transaction": { "id": id, "phase": "checkpoint" } });
                self.note(&record_action(&id, "checkpoint"), r)?;
                let failure = Failure {
                    code: ErrorCode::PermissionDenied,
                    why: format!("the workspace could not be checkpointed, so no step ran: {refusal}"),
                };
                let verdict = Some(judged.verdict);
                return self.conclude(
                    action,
                    &id,
                    &plan.description,
                    started,
                    verdict,
                    decision.name(),
                    progress,
                    Some(failure),
                    None,
                );
            }
            Err(e @ CheckpointError::Store { .. }) => {
                let _ = crate::sandbox::remove_tree(&store);
                return Err(RunError::harness(
                    format!("transaction {id}: cannot take its checkpoint"),
                    e,
                ));
            }
        };
        progress.checkpointed = true;
        self.note(
            &record_action(&id, "checkpoint"),
            Receipt::success(json!({
                "transaction": { "id": id, "phase": "checkpoint" },
                "checkpoint": checkpoint.summary(),
                "duration_ms": millis(taken),
            })),
        )?;
        // 4. The steps, in order, each through the whole path.
        let mut failure = None;
        let mut stop = None;
        for (i, step) in plan.steps.iter().enumerate() {
            let step_link = json!({ "id": id, "step": i + 1 });
            let step_action = Action {
                id: format!("{}#{}", action.id, i + 1),
                tool: step.tool.clone(),
                input: ActionInput::Json(step.input.clone()),
            };
            // A step is a tool call of the agent's: it takes a turn (inside the transaction's
            // call, which is the one `max_repeats` sees repeated).
            if let Some((refused, stopped)) =
                self.take_inner_turn(&step_action, &step_link, format!("step {} (`{}`)", i + 1, step.label))?
            {
                (failure, stop) = (Some(refused), Some(stopped));
                progress.steps.push(step_row(i, step, "not_run", None));
                break;
            }
            let passed = self.pass_linked(Origin::Agent, &step_action, Some(&step_link))?;
            progress.executed = i + 1;
            progress.steps.push(step_row(
                i,
                step,
                status_name(passed.receipt.status),
                passed.receipt.errors.first().map(|e| &e.message),
            ));
            if passed.receipt.is_error() || passed.stop.is_some() {
                let (code, message) = passed
                    .receipt
                    .errors
                    .first()
                    .map(|e| (e.code, e.message.clone()))
                    .unwrap_or((ErrorCode::ToolExecutionFailed, "the task was stopped".into()));
                failure = Some(Failure {
                    code,
                    why: format!("step {} (`{}`) failed: {message}", i + 1, step.label),
                });
                stop = passed.stop;
                break;
            }
        }
        // 5. The verification, when every step ran.
        if failure.is_none() {
            let mut all = true;
            for (i, check) in plan.checks.iter().enumerate() {
                let check_link = json!({ "id": id, "check": i + 1 });
                let check_action = Action {
                    id: format!("{}#verify{}", action.id, i + 1),
                    tool: check.tool.clone(),
                    input: ActionInput::Json(check.input.clone()),
                };
                // A check is a `verify` call of the agent's (it may run a command): it takes a
                // turn as a step does, so `max_turns` bounds what a transaction runs.
                if let Some((refused, stopped)) = self.take_inner_turn(
                    &check_action,
                    &check_link,
                    format!("check {} (`{}`)", i + 1, check.label),
                )? {
                    all = false;
                    progress.checks.push(
                        json!({ "check": i + 1, "label": check.label, "passed": false, "error": stopped.reason }),
                    );
                    (failure, stop) = (Some(refused), Some(stopped));
                    break;
                }
                let passed = self.pass_linked(Origin::Agent, &check_action, Some(&check_link))?;
                let ok = passed.receipt.status == ReceiptStatus::Success;
                let error = passed.receipt.errors.first().map(|e| e.message.clone());
                progress
                    .checks
                    .push(json!({ "check": i + 1, "label": check.label, "passed": ok, "error": error }));
                if !ok && all {
                    all = false;
                    failure = Some(Failure {
                        code: ErrorCode::VerificationFailed,
                        why: format!(
                            "check {} (`{}`) did not pass: {}",
                            i + 1,
                            check.label,
                            error.unwrap_or_else(|| "no answer".into())
                        ),
                    });
                }
                if let Some(stopped) = passed.stop {
                    // Checks left unrun did not pass: the task's stop never commits them.
                    if i + 1 < plan.checks.len() && all {
                        all = false;
                        failure = Some(Failure {
                            code: ErrorCode::VerificationFailed,
                            why: format!(
                                "check {} and later were not run: the task was stopped after check {} ({})",
                                i + 2,
                                i + 1,
                                stopped.reason
                            ),
                        });
                    }
                    stop = Some(stopped);
                    break;
                }
            }
            progress.verified = Some(all);
        }
        // 6. Commit, or roll back.
        if failure.is_some() && plan.rollback_on_failure {
            let rolled = self.roll_back(&id, &checkpoint)?;
            progress.rollback = Some(rolled.data);
            if let Some(broken) = rolled.broken {
                let why = failure.map(|f| f.why).unwrap_or_default();
                failure = Some(Failure {
                    code: ErrorCode::InvariantBroken,
                    why: format!("{why}; and the rollback could not complete: {broken}; the workspace is in neither state, the task is stopped"),
                });
                stop = Some(Stop {
                    outcome: Outcome::Stopped,
                    reason: format!("INVARIANT_BROKEN: transaction {id}: rollback incomplete: {broken}"),
                });
            }
        }
        drop(checkpoint);
        let verdict = Some(judged.verdict);
        let mut passed = self.conclude(
            action,
            &id,
            &plan.description,
            started,
            verdict,
            decision.name(),
            progress,
            failure,
            stop,
        )?;
        passed.receipt.warnings.extend(warnings);
        Ok(passed)
    }

    /// Where transaction `id` keeps its checkpoint.
    fn checkpoint_store(&self, id: &str) -> std::path::PathBuf {
        match &self.checkpoints {
            Some(dir) => dir.join(id),
            None => std::env::temp_dir().join(format!("medin-{}-{:x}-{id}", std::process::id(), fastrand::u64(..))),
        }
    }

    /// Every step and check judged as its own pass would judge it, before anything runs.
    fn judge_plan(&self, plan: &Plan) -> JudgedPlan {
        let tctx = self.tool_context();
        let root = self.sandbox.root.as_ref();
        let mut out = JudgedPlan::default();
        let mut violations = Vec::new();
        let mut alternative = None;
        let calls = plan
            .steps
            .iter()
            .map(|c| ("step", c))
            .chain(plan.checks.iter().map(|c| ("check", c)));
        let (mut steps_seen, mut checks_seen) = (0usize, 0usize);
        for (kind, call) in calls {
            let n = if kind == "step" {
                steps_seen += 1;
                steps_seen
            } else {
                checks_seen += 1;
                checks_seen
            };
            let input = tools::rebase_paths(&call.tool, call.input.clone(), root);
            let runs = tools::runs_commands(&call.tool, Some(&input));
            let gate = self.gate.check_call(&call.tool, runs);
            let verdict = guard::check_action(
                &call.tool,
                &input,
                &GuardContext {
                    workspace: self.guard_workspace(runs),
                },
            );
            let decision = self.rules.decide(&verdict, Origin::Agent);
            let affected = tools::would_affect(&tctx, &call.tool, &ActionInput::Json(input));
            let refused = match (&gate, &decision) {
                (Err(denial), _) => Some(denial.message.clone()),
                (_, Decision::Deny { message }) => Some(message.clone()),
                _ => None,
            };
            if out.refusal.is_none() {
                if let Some(message) = &refused {
                    out.refusal = Some(format!("{kind} {n} (`{}`): {message}", call.label));
                    out.refusal_code = Some(if tools::is_known(&call.tool) {
                        ErrorCode::PermissionDenied
                    } else {
                        ErrorCode::ToolNotFound
                    });
                }
            }
            let row = json!({
                kind: n,
                "tool": call.tool,
                "label": call.label,
                "would_affect": affected,
                "guard": verdict.recommendation,
                "decision": if gate.is_err() { "deny" } else { decision.name() },
                "refused": refused,
            });
            if kind == "step" {
                out.steps.push(row);
                out.affected.extend(affected);
            } else {
                out.checks.push(row);
            }
            if alternative.is_none() {
                alternative = verdict.alternative.clone();
            }
            violations.extend(verdict.violations);
        }
        out.verdict = Verdict::from_violations(violations, alternative);
        out
    }

    /// Puts the checkpoint back, with its receipt; `broken` says why it could not complete.
    fn roll_back(&self, id: &str, checkpoint: &Checkpoint) -> Result<RolledBack, RunError> {
        let started = Instant::now();
        let restored: Result<Restored, _> = checkpoint.restore(&self.workspace);
        // Whatever happened, the files changed under every cached check.
        self.checks.invalidate();
        let (receipt, data, broken) = match restored {
            Ok(done) => {
                let data = json!({
                    "complete": true,
                    "removed": done.removed.len(),
                    "restored": done.restored.len(),
                    "modes": done.modes.len(),
                    "rounds": done.rounds,
                    "paths": { "removed": first(&done.removed), "restored": first(&done.restored), "modes": first(&done.modes) },
                    "duration_ms": millis(started),
                });
                (Receipt::success(data.clone()), data, None)
            }
            Err(e) => {
                let data = json!({ "complete": false, "error": e.to_string(), "duration_ms": millis(started) });
                let mut r = Receipt::error(
                    ErrorCode::InvariantBroken,
                    format!("the rollback of transaction {id} could not complete: {e}"),
                );
                r.data = data.clone();
                (r, data, Some(e.to_string()))
            }
        };
        let mut receipt = receipt;
        link(&mut receipt, Some(&json!({ "id": id, "phase": "rollback" })));
        self.note(&record_action(id, "rollback"), receipt)?;
        Ok(RolledBack { data, broken })
    }

    /// The transaction's own receipt (the agent's answer), recorded last.
    #[allow(clippy::too_many_arguments)]
    fn conclude(
        &self,
        action: &Action,
        id: &str,
        description: &str,
        started: Instant,
        verdict: Option<Verdict>,
        decision: &'static str,
        progress: Progress,
        failure: Option<Failure>,
        stop: Option<Stop>,
    ) -> Result<Passed, RunError> {
        let rolled_back = progress.rollback.as_ref().is_some_and(|r| r["complete"] == json!(true));
        let state = match (&failure, &progress.rollback) {
            (None, _) => "committed",
            (Some(f), _) if f.code == ErrorCode::InvariantBroken => "rollback_failed",
            (Some(_), Some(_)) => "rolled_back",
            (Some(_), None) if !progress.checkpointed => "rejected",
            (Some(_), None) => "failed",
        };
        let data = json!({
            "transaction": { "id": id },
            "description": description,
            "state": state,
            "planned": decision != "not_checked",
            "approved": progress.approved,
            "checkpointed": progress.checkpointed,
            "executed": progress.executed,
            "verified": progress.verified,
            "committed": failure.is_none(),
            "rolled_back": rolled_back,
            "why": failure.as_ref().map(|f| f.why.clone()),
            "steps": progress.steps,
            "verify": progress.checks,
            "rollback": progress.rollback,
        });
        let receipt = match &failure {
            None => Receipt::success(data),
            Some(f) => {
                let mut r = Receipt::error(f.code, format!("transaction {id} {state}: {}", f.why));
                r.data = data;
                if state == "failed" {
                    r.next_actions
                        .push("the workspace keeps what the steps did (rollback_on_failure was false)".into());
                }
                r
            }
        };
        let ran = progress.checkpointed;
        self.finish_record(action, started, verdict, decision, ran, receipt, stop)
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_record(
        &self,
        action: &Action,
        started: Instant,
        verdict: Option<Verdict>,
        decision: &'static str,
        ran: bool,
        receipt: Receipt,
        stop: Option<Stop>,
    ) -> Result<Passed, RunError> {
        let passage = Passage {
            started: Some(started),
            guard: verdict,
            decision: Some(decision),
            limit: stop.as_ref().map(|s| s.reason.clone()),
            ran,
            ..Default::default()
        };
        self.record(Origin::Agent, action, passage, receipt.clone())?;
        Ok(Passed { receipt, stop })
    }
}

/// The plan as the guard and the policy see it.
#[derive(Debug)]
struct JudgedPlan {
    steps: Vec<Value>,
    checks: Vec<Value>,
    affected: Vec<tools::WouldAffect>,
    /// All steps' and checks' verdicts folded into one.
    verdict: Verdict,
    /// The first step or check refused, and why.
    refusal: Option<String>,
    refusal_code: Option<ErrorCode>,
}

impl Default for JudgedPlan {
    fn default() -> Self {
        JudgedPlan {
            steps: Vec::new(),
            checks: Vec::new(),
            affected: Vec::new(),
            verdict: Verdict::allow(),
            refusal: None,
            refusal_code: None,
        }
    }
}

struct RolledBack {
    data: Value,
    broken: Option<String>,
}

/// The harness's record of one phase of transaction `id`.
fn record_action(id: &str, phase: &str) -> Action {
    Action {
        id: String::new(),
        tool: RECORD.into(),
        input: ActionInput::Json(json!({ "transaction": id, "phase": phase })),
    }
}

fn step_row(i: usize, step: &PlannedCall, status: &str, error: Option<&String>) -> Value {
    json!({ "step": i + 1, "tool": step.tool, "label": step.label, "status": status, "error": error })
}

fn status_name(s: ReceiptStatus) -> &'static str {
    match s {
        ReceiptStatus::Success => "success",
        ReceiptStatus::Error => "error",
        ReceiptStatus::Partial => "partial",
        ReceiptStatus::DryRun => "dry_run",
    }
}

/// The first 50 of `paths`, for a receipt.
fn first(paths: &[String]) -> &[String] {
    &paths[..paths.len().min(50)]
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::limits::RuntimeLimits;
    use crate::guard::policy::Origin;
    use std::time::Duration;

    /// The task's time runs out during a check that passes: the checks after it never run, so
    /// the transaction must not say `committed` and `verified` (red team: a stop in the middle
    /// of the verification was taken for a pass of every check).
    #[test]
    fn a_stop_during_the_verification_never_commits_the_checks_left_unrun() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::write(ws.join("a.txt"), "alpha\n").unwrap();
        let mut pipe = Pipeline::standalone(ws);
        pipe.start_clock(RuntimeLimits {
            timeout: Some(Duration::from_millis(300)),
            ..RuntimeLimits::default()
        });
        let action = Action {
            id: "t".into(),
            tool: plan::NAME.into(),
            input: ActionInput::Json(json!({
                "description": "outlive the time limit in check 1",
                "steps": [ { "tool": "write_file", "input": { "path": "a.txt", "content": "beta\n" } } ],
                "verify": [ { "command": "sleep 0.6" }, { "file_exists": "never-made" } ]
            })),
        };
        let passed = pipe.pass(Origin::Agent, &action).unwrap();
        let r = &passed.receipt;
        assert!(passed.stop.is_some(), "{r:?}");
        assert_eq!(r.data["verify"][0]["passed"], true, "{r:?}");
        assert_ne!(r.data["state"], "committed", "{r:?}");
        assert_ne!(r.data["verified"], true, "{r:?}");
        assert_eq!(r.error_code(), Some(ErrorCode::VerificationFailed), "{r:?}");
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "alpha\n");
    }
}
