//! One task end to end: prepare the workspace, start the agent, send each of its actions through
//! guard → sandbox (tools) → log, validate the end state, and judge the attempt against the
//! task's expectations.
//!
//! The runner never parses shell text (the guard does) and never decides policy (the guard's
//! policy does). It keeps the agent's failures (a [`TrialVerdict::Failed`]) apart from its own
//! (a [`TrialVerdict::HarnessError`]: broken spec, missing fixture, failing setup, unwritable
//! log).

pub mod expect;
pub mod record;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::agent::{self, Action, AgentEvent, AgentFailure, AgentSource, TaskBrief};
use crate::guard::limits::{LimitTracker, LimitViolation, RuntimeLimits};
use crate::guard::policy::{self, Decision, ToolGate};
use crate::guard::{self, GuardContext, Recommendation};
use crate::log::{ActivityEntry, ActivityLog, EntryStatus, JsonlLog};
use crate::sandbox::{self, SandboxConfig};
use crate::spec::{self, AgentSpec, FinalResult, Outcome, SpecFile, TaskKind, TaskSpec};
use crate::tools::{self, ActionInput, ErrorCode, Receipt, ToolContext};
use crate::validate::{self, ValidateContext, ValidationStatus};

pub use expect::Mismatch;
pub use record::{ActionRecord, AttemptMetrics, AttemptRecord, ToolTally};

/// Defaults that apply when a task's `limits` say nothing.
pub const DEFAULT_TASK_TIMEOUT: Duration = Duration::from_secs(60);
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_MAX_TURNS: u32 = 50;

/// What every task of one run shares.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub run_id: String,
    /// `target/medin` (run folders go to `<output>/runs/<run-id>/`).
    pub output: PathBuf,
    /// The agent for tasks that do not pin one.
    pub default_agent: AgentSource,
    pub activity_log: ActivityLog,
    /// Isolation for tasks that do not set one (the suite's `isolation`); None = `process`.
    pub isolation: Option<crate::sandbox::Isolation>,
}

impl RunSettings {
    /// Settings for a run writing below `output`, with a fresh run id.
    pub fn new(output: PathBuf, default_agent: AgentSource) -> Self {
        let activity_log = ActivityLog::new(output.join("ACTIVITY_LOG.md"));
        RunSettings {
            run_id: crate::log::new_run_id(),
            output,
            default_agent,
            activity_log,
            isolation: None,
        }
    }
}

/// How a trial ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrialVerdict {
    /// Every expectation held.
    Passed,
    /// These expectations did not hold: the agent's (or the task's) failure.
    Failed(Vec<Mismatch>),
    /// The harness could not run the task; the message says what to fix.
    HarnessError(String),
}

/// The result of one attempt of one task.
#[derive(Debug, Clone)]
pub struct TaskResult {
    /// `<category>::<name>`.
    pub trial: String,
    pub category: String,
    pub description: String,
    pub attempt: u32,
    pub agent: String,
    pub verdict: TrialVerdict,
    pub outcome: Option<Outcome>,
    pub metrics: AttemptMetrics,
    pub run_dir: PathBuf,
}

impl TaskResult {
    pub fn passed(&self) -> bool {
        self.verdict == TrialVerdict::Passed
    }

    /// The message a failing trial shows: each expectation that did not hold, and the run folder.
    pub fn failure_message(&self) -> Option<String> {
        match &self.verdict {
            TrialVerdict::Passed => None,
            TrialVerdict::Failed(ms) => {
                let mut s = format!(
                    "{} failed (agent {}): {} expectation{} did not hold\n",
                    self.trial,
                    self.agent,
                    ms.len(),
                    if ms.len() == 1 { "" } else { "s" }
                );
                for m in ms {
                    s.push_str(&format!("  - {}\n", m.to_string().trim_end()));
                }
                s.push_str(&format!("  run folder: {}", self.run_dir.display()));
                Some(s)
            }
            TrialVerdict::HarnessError(e) => Some(format!(
                "{}: harness error (not the agent's failure): {}\n  run folder: {}",
                self.trial,
                e,
                self.run_dir.display()
            )),
        }
    }
}

/// Loads the spec of `file` and runs attempt `attempt` of it. A spec that does not load is a
/// harness error of this trial alone, carrying the `file:line:col` message.
pub fn run_spec_file(file: &SpecFile, settings: &RunSettings, attempt: u32) -> TaskResult {
    match spec::load_task(&file.path) {
        Ok(task) => run_task(&task, file, settings, attempt),
        Err(e) => {
            let result = TaskResult {
                trial: file.trial_name(),
                category: file.category.clone(),
                description: String::new(),
                attempt,
                agent: "-".into(),
                verdict: TrialVerdict::HarnessError(format!("invalid task spec:\n{e}")),
                outcome: None,
                metrics: AttemptMetrics::default(),
                run_dir: run_dir_for(file, settings, attempt),
            };
            log_activity(&result, settings, &[]);
            result
        }
    }
}

/// Where attempt `attempt` of `file` keeps its files.
pub fn run_dir_for(file: &SpecFile, settings: &RunSettings, attempt: u32) -> PathBuf {
    settings
        .output
        .join("runs")
        .join(&settings.run_id)
        .join(&file.category)
        .join(&file.name)
        .join(format!("attempt-{attempt}"))
}

/// Picks the agent for `task`: its pin, else the run's default.
pub fn agent_for(task: &TaskSpec, file: &SpecFile, settings: &RunSettings) -> AgentSource {
    match &task.agent {
        Some(spec) => AgentSource {
            spec: spec.clone(),
            base_dir: spec_dir(&file.path),
        },
        None => settings.default_agent.clone(),
    }
}

/// A short display name of an agent.
pub fn agent_label(spec: &AgentSpec) -> String {
    match spec {
        AgentSpec::Oracle => "oracle".into(),
        AgentSpec::Process(p) => format!("process:{}", p.command),
        AgentSpec::Exec(e) => format!("exec:{}", e.command),
    }
}

fn spec_dir(path: &Path) -> PathBuf {
    path.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs attempt `attempt` of an already loaded task.
pub fn run_task(task: &TaskSpec, file: &SpecFile, settings: &RunSettings, attempt: u32) -> TaskResult {
    let run_dir = run_dir_for(file, settings, attempt);
    let source = agent_for(task, file, settings);
    // The suite's isolation applies to tasks that do not set their own.
    let with_suite_isolation;
    let task = match (task.isolation, settings.isolation) {
        (None, Some(level)) => {
            with_suite_isolation = TaskSpec {
                isolation: Some(level),
                ..task.clone()
            };
            &with_suite_isolation
        }
        _ => task,
    };
    let mut result = TaskResult {
        trial: file.trial_name(),
        category: file.category.clone(),
        description: task.description.clone(),
        attempt,
        agent: agent_label(&source.spec),
        verdict: TrialVerdict::Passed,
        outcome: None,
        metrics: AttemptMetrics::default(),
        run_dir: run_dir.clone(),
    };
    let record = match Attempt::prepare(task, file, &run_dir, &source).and_then(|a| a.run()) {
        Ok(record) => record,
        Err(e) => {
            result.verdict = TrialVerdict::HarnessError(e);
            log_activity(&result, settings, &[]);
            return result;
        }
    };
    result.outcome = record.outcome;
    result.metrics = record.metrics.clone();
    let mismatches = expect::check(&task.expect, &record);
    result.verdict = if mismatches.is_empty() {
        TrialVerdict::Passed
    } else {
        TrialVerdict::Failed(mismatches)
    };
    let metrics_json = serde_json::json!({
        "trial": result.trial,
        "attempt": attempt,
        "agent": result.agent,
        "outcome": record.outcome,
        "passed": result.passed(),
        "stop_reason": record.stop_reason,
        "final": record.final_report,
        "metrics": record.metrics,
        "validations": record.validations,
    });
    if let Err(e) = write_json(&run_dir.join("metrics.json"), &metrics_json) {
        result.verdict = TrialVerdict::HarnessError(format!("cannot write metrics.json: {e}"));
    }
    log_activity(&result, settings, &record.validations);
    result
}

fn write_json(path: &Path, value: &serde_json::Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    std::fs::write(path, text + "\n")
}

fn log_activity(result: &TaskResult, settings: &RunSettings, validations: &[validate::ValidationResult]) {
    let (status, failures) = match &result.verdict {
        TrialVerdict::Passed => (EntryStatus::Passed, Vec::new()),
        TrialVerdict::Failed(ms) => (EntryStatus::Failed, ms.iter().map(|m| m.to_string()).collect()),
        TrialVerdict::HarnessError(e) => (EntryStatus::Error, vec![e.clone()]),
    };
    let entry = ActivityEntry {
        timestamp: chrono::Utc::now(),
        task_id: result.trial.clone(),
        category: result.category.clone(),
        status,
        outcome: result.outcome.map(|o| expect::outcome_name(o).to_string()),
        duration_ms: result.metrics.duration_ms,
        attempt: result.attempt,
        run_id: settings.run_id.clone(),
        run_dir: result.run_dir.display().to_string(),
        agent: result.agent.clone(),
        description: result.description.clone(),
        validations: validations.to_vec(),
        failures,
    };
    if let Err(e) = settings.activity_log.append(&entry) {
        eprintln!(
            "medin: warning: cannot append to {}: {e}",
            settings.activity_log.path().display()
        );
    }
}

/// One attempt in progress.
struct Attempt<'a> {
    task: &'a TaskSpec,
    source: &'a AgentSource,
    task_id: String,
    workspace: PathBuf,
    fixture: Option<PathBuf>,
    sandbox: SandboxConfig,
    receipts: JsonlLog,
    transcript: JsonlLog,
    gate: ToolGate,
}

impl<'a> Attempt<'a> {
    fn prepare(task: &'a TaskSpec, file: &SpecFile, run_dir: &Path, source: &'a AgentSource) -> Result<Self, String> {
        if task.kind != TaskKind::Task {
            return Err(format!(
                "`kind: {:?}` tasks are not supported by this version of medin; use `kind: task`",
                task.kind
            )
            .to_lowercase());
        }
        if run_dir.exists() {
            std::fs::remove_dir_all(run_dir)
                .map_err(|e| format!("cannot clear old run folder {}: {e}", run_dir.display()))?;
        }
        std::fs::create_dir_all(run_dir).map_err(|e| format!("cannot create run folder {}: {e}", run_dir.display()))?;
        let workspace = run_dir.join("workspace");
        let fixture = task.workspace.as_ref().map(|w| spec_dir(&file.path).join(w));
        sandbox::prepare_workspace(fixture.as_deref(), &workspace).map_err(|e| e.to_string())?;
        let workspace = workspace
            .canonicalize()
            .map_err(|e| format!("cannot resolve workspace {}: {e}", workspace.display()))?;
        let sandbox = sandbox_config(task, &workspace);
        sandbox::check_isolation(sandbox.isolation).map_err(|e| e.to_string())?;
        let gate = ToolGate::new(&task.policy.tools).map_err(|e| e.to_string())?;
        let receipts =
            JsonlLog::open(&run_dir.join("receipts.jsonl")).map_err(|e| format!("cannot open receipts.jsonl: {e}"))?;
        let transcript = JsonlLog::open(&run_dir.join("transcript.jsonl"))
            .map_err(|e| format!("cannot open transcript.jsonl: {e}"))?;
        for cmd in &task.setup {
            let out = sandbox::run_shell(&sandbox, cmd, None)
                .map_err(|e| format!("setup command `{cmd}` could not run: {e}"))?;
            if !out.success() {
                return Err(format!(
                    "setup command `{cmd}` failed ({:?}{}): {}",
                    out.exit,
                    if out.timed_out { ", timed out" } else { "" },
                    out.stderr.text.trim()
                ));
            }
        }
        Ok(Attempt {
            task,
            source,
            task_id: file.trial_name(),
            workspace,
            fixture,
            sandbox,
            receipts,
            transcript,
            gate,
        })
    }

    fn log_transcript(&mut self, direction: &str, event: serde_json::Value) -> Result<(), String> {
        let line =
            serde_json::json!({ "timestamp": chrono::Utc::now().to_rfc3339(), "direction": direction, "event": event });
        self.transcript
            .append(&line)
            .map_err(|e| format!("cannot write transcript.jsonl: {e}"))
    }

    fn run(mut self) -> Result<AttemptRecord, String> {
        let started = Instant::now();
        let limits = &self.task.limits;
        let task_timeout = limits.timeout.map(|d| d.0).unwrap_or(DEFAULT_TASK_TIMEOUT);
        let runtime = RuntimeLimits {
            max_files: limits.max_files,
            max_changes: limits.max_changes,
            timeout: Some(task_timeout),
            max_turns: Some(limits.max_turns.unwrap_or(DEFAULT_MAX_TURNS)),
        };
        let mut tracker = LimitTracker::new(runtime, started);
        let brief = self.brief(task_timeout);
        self.log_transcript("to_agent", serde_json::json!({ "type": "task", "brief": brief }))?;
        let mut agent = agent::start(self.source, &brief, &self.task.solution, &self.sandbox);
        let mut record = AttemptRecord {
            workspace: self.workspace.clone(),
            fixture: self.fixture.clone(),
            ..Default::default()
        };
        let mut last: Option<(Action, Receipt)> = None;
        let outcome: Option<Outcome> = loop {
            if started.elapsed() > task_timeout {
                record.stop_reason = Some(format!(
                    "task timeout of {} reached",
                    humantime::format_duration(task_timeout)
                ));
                break Some(Outcome::Timeout);
            }
            let event = agent.next(last.as_ref().map(|(a, r)| (a, r)));
            last = None;
            match event {
                AgentEvent::Usage(u) => {
                    record.metrics.usage.input_tokens += u.input_tokens;
                    record.metrics.usage.output_tokens += u.output_tokens;
                    self.log_transcript("from_agent", serde_json::json!({ "type": "usage", "input_tokens": u.input_tokens, "output_tokens": u.output_tokens }))?;
                }
                AgentEvent::Final(f) => {
                    self.log_transcript("from_agent", serde_json::json!({ "type": "final", "report": f }))?;
                    record.final_report = Some(f);
                    break None;
                }
                AgentEvent::Failed(failure) => {
                    self.log_transcript(
                        "from_agent",
                        serde_json::json!({ "type": "failed", "error": failure.to_string() }),
                    )?;
                    // The agent's own failure gets a receipt too, so the log says what happened.
                    let code = match &failure {
                        AgentFailure::TimedOut { .. } => ErrorCode::Timeout,
                        AgentFailure::Spawn { .. } => ErrorCode::DependencyFail,
                        AgentFailure::Exited { .. } | AgentFailure::NoFinal => ErrorCode::MalformedOutput,
                    };
                    let receipt = Receipt::error(code, failure.to_string());
                    let action = Action {
                        id: String::new(),
                        tool: String::new(),
                        input: ActionInput::Json(serde_json::Value::Null),
                    };
                    self.push_record(&mut record, &action, None, "not_checked", None, None, receipt)?;
                    record.stop_reason = Some(failure.to_string());
                    break Some(Outcome::Error);
                }
                AgentEvent::Malformed { line, reason } => {
                    self.log_transcript(
                        "from_agent",
                        serde_json::json!({ "type": "malformed", "line": line, "reason": reason }),
                    )?;
                    record.metrics.malformed += 1;
                    let receipt = Receipt::error(
                        ErrorCode::MalformedOutput,
                        format!("agent output is not a protocol message ({reason}); send one JSON object per line: tool_call, final or usage"),
                    )
                    .with_context(serde_json::json!({ "line": line }));
                    let action = Action {
                        id: String::new(),
                        tool: String::new(),
                        input: ActionInput::Raw(line),
                    };
                    let stop = tracker.begin_turn().err();
                    self.push_record(
                        &mut record,
                        &action,
                        None,
                        "not_checked",
                        None,
                        stop.as_ref().map(|v| v.to_string()),
                        receipt.clone(),
                    )?;
                    if let Some(v) = stop {
                        record.stop_reason = Some(v.to_string());
                        break Some(Outcome::Stopped);
                    }
                    last = Some((action, receipt));
                }
                AgentEvent::Call(action) => {
                    self.log_transcript("from_agent", serde_json::json!({ "type": "tool_call", "id": action.id, "tool": action.tool, "input": input_json(&action.input) }))?;
                    if let Err(v) = tracker.begin_turn() {
                        let receipt = Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"));
                        self.push_record(
                            &mut record,
                            &action,
                            None,
                            "not_checked",
                            None,
                            Some(v.to_string()),
                            receipt,
                        )?;
                        record.stop_reason = Some(v.to_string());
                        break Some(Outcome::Stopped);
                    }
                    let (receipt, stop) = self.act(&action, &mut tracker, &mut record)?;
                    if let Some(reason) = stop {
                        record.stop_reason = Some(reason);
                        break Some(Outcome::Stopped);
                    }
                    last = Some((action, receipt));
                }
            }
        };
        agent.finish();
        record.metrics.turns = tracker.turns();
        record.metrics.duration_ms = started.elapsed().as_millis() as u64;
        // Validate the real end state, whatever the agent claimed.
        let vctx = ValidateContext {
            workspace: self.workspace.clone(),
            sandbox: self.sandbox.clone(),
            default_timeout: Duration::from_secs(5),
        };
        record.validations = validate::run_all(&self.task.expect.validate, &vctx);
        record.outcome = Some(match outcome {
            Some(o) => o,
            None => judge(&record),
        });
        Ok(record)
    }

    fn brief(&self, task_timeout: Duration) -> TaskBrief {
        let tools = tools::registry()
            .into_iter()
            .filter(|t| self.gate.check(t.name).is_ok())
            .map(
                |t| serde_json::json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }),
            )
            .collect();
        let l = &self.task.limits;
        TaskBrief {
            task_id: self.task_id.clone(),
            prompt: self.task.prompt.clone(),
            tools,
            limits: serde_json::json!({
                "timeout_ms": task_timeout.as_millis() as u64,
                "max_turns": l.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
                "max_files": l.max_files,
                "max_changes": l.max_changes,
            }),
            workspace: self.workspace.clone(),
        }
    }

    /// guard → limits → tool (sandbox) → limits → log, for one call. Returns the receipt and,
    /// when the task must stop, why.
    fn act(
        &mut self,
        action: &Action,
        tracker: &mut LimitTracker,
        record: &mut AttemptRecord,
    ) -> Result<(Receipt, Option<String>), String> {
        let tctx = ToolContext {
            workspace: self.workspace.clone(),
            sandbox: self.sandbox.clone(),
            dry_run: false,
        };
        // 1. Tool policy.
        if let Err(denial) = self.gate.check(&action.tool) {
            record.metrics.guard_blocks += 1;
            let mut receipt = Receipt::error(ErrorCode::PermissionDenied, denial.message.clone());
            if let Some(alt) = &denial.alternative {
                receipt.data = serde_json::json!({ "alternative": alt });
                receipt.next_actions.push(alt.clone());
            }
            self.push_record(record, action, None, "deny", None, None, receipt.clone())?;
            return Ok((receipt, None));
        }
        // 2. The constitutional pre-check, on the input exactly as the tool will read it. Input
        //    that does not validate reaches no tool: the call below only reports why.
        let canonical = tools::canonical_input(&action.tool, &action.input);
        let (verdict, decision) = match &canonical {
            Some(input) => {
                let verdict = guard::check_action(
                    &action.tool,
                    input,
                    &GuardContext {
                        workspace: &self.workspace,
                    },
                );
                let decision = policy::decide(&verdict, &self.task.policy);
                (Some(verdict), Some(decision))
            }
            None => (None, None),
        };
        let input = canonical.map(ActionInput::Json).unwrap_or_else(|| action.input.clone());
        let mut warnings = Vec::new();
        let mut justification = None;
        let decision_name = match decision {
            None => "not_checked",
            Some(Decision::Allow) => "allow",
            Some(Decision::Warn(w)) => {
                record.metrics.guard_warnings += 1;
                warnings = w;
                "warn"
            }
            Some(Decision::Bypassed {
                rules,
                justification: j,
            }) => {
                warnings.push(format!(
                    "guard rule(s) {} bypassed by task policy: {j}",
                    rules.join(", ")
                ));
                justification = Some(j);
                "bypassed"
            }
            Some(Decision::Deny { message }) => {
                record.metrics.guard_blocks += 1;
                let mut receipt = Receipt::error(ErrorCode::PermissionDenied, message);
                if let Some(v) = &verdict {
                    receipt.errors[0].context = serde_json::to_value(v).unwrap_or_default();
                    if let Some(alt) = &v.alternative {
                        receipt.next_actions.push(alt.clone());
                    }
                }
                self.push_record(record, action, verdict, "deny", None, None, receipt.clone())?;
                return Ok((receipt, None));
            }
        };
        // 3. Runtime limits, before.
        let affected = tools::would_affect(&tctx, &action.tool, &input);
        if let Err(v) = tracker.check_before(&affected) {
            let receipt = limit_receipt(&v);
            self.push_record(
                record,
                action,
                verdict,
                decision_name,
                justification,
                Some(v.to_string()),
                receipt.clone(),
            )?;
            return Ok((receipt, Some(v.to_string())));
        }
        // 4. Run it (the sandbox confines it).
        let mut receipt = tools::call(&tctx, &action.tool, &input);
        receipt.warnings.extend(warnings);
        if receipt.status != crate::tools::ReceiptStatus::Error {
            tracker.record(&affected);
        }
        // 5. Runtime limits, after; invariants.
        let mut stop = None;
        let mut limit = None;
        if let Err(v) = tracker.check_after() {
            receipt.warnings.push(format!("{v}; the task is stopped"));
            limit = Some(v.to_string());
            stop = Some(v.to_string());
        }
        // The one invariant every task has: its workspace exists. An action that removed it
        // breaks every later step and every validation, so the task stops here.
        if !self.workspace.is_dir() {
            receipt.status = crate::tools::ReceiptStatus::Error;
            receipt.errors.insert(
                0,
                crate::tools::receipt::ToolError {
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
            stop = Some(format!("INVARIANT_BROKEN: {}", e.message));
        }
        self.push_record(
            record,
            action,
            verdict,
            decision_name,
            justification,
            limit,
            receipt.clone(),
        )?;
        Ok((receipt, stop))
    }

    #[allow(clippy::too_many_arguments)]
    fn push_record(
        &mut self,
        record: &mut AttemptRecord,
        action: &Action,
        guard: Option<crate::guard::Verdict>,
        decision: &str,
        justification: Option<String>,
        limit: Option<String>,
        receipt: Receipt,
    ) -> Result<(), String> {
        // Tool metrics count tool calls only; agent-level receipts (malformed output, a crash,
        // a hang) are logged but are not a tool's error.
        let m = &mut record.metrics;
        if !action.tool.is_empty() {
            let tally = m.by_tool.entry(action.tool.clone()).or_default();
            tally.calls += 1;
            if receipt.is_error() {
                tally.errors += 1;
                m.tool_errors += 1;
            }
        }
        let rec = ActionRecord {
            seq: record.actions.len() as u32 + 1,
            action_id: action.id.clone(),
            tool: action.tool.clone(),
            input: input_json(&action.input),
            guard,
            decision: decision.to_string(),
            justification,
            limit,
            receipt,
            timestamp: chrono::Utc::now().to_rfc3339(),
        };
        self.receipts
            .append(&rec)
            .map_err(|e| format!("cannot write receipts.jsonl: {e}"))?;
        self.log_transcript(
            "to_agent",
            serde_json::json!({ "type": "tool_result", "id": rec.action_id, "receipt": rec.receipt }),
        )?;
        record.actions.push(rec);
        Ok(())
    }
}

/// The outcome of an attempt whose agent sent a final report: nothing is complete without a
/// validation that ran and passed.
fn judge(record: &AttemptRecord) -> Outcome {
    match record.final_report.as_ref().map(|f| f.result) {
        Some(FinalResult::Success) => {
            if record.validations.iter().any(|v| v.status == ValidationStatus::Failed) {
                Outcome::Failure
            } else if record.validations.is_empty()
                || record.validations.iter().any(|v| v.status == ValidationStatus::Pending)
            {
                Outcome::Pending
            } else {
                Outcome::Success
            }
        }
        Some(FinalResult::Error | FinalResult::Issue) => Outcome::Failure,
        None => Outcome::Error,
    }
}

fn limit_receipt(v: &LimitViolation) -> Receipt {
    let kind = match v {
        LimitViolation::Files { .. } => "files",
        LimitViolation::Changes { .. } => "changes",
        LimitViolation::Time { .. } => "time",
        LimitViolation::Turns { .. } => "turns",
    };
    Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"))
        .with_context(serde_json::json!({ "limit": kind }))
}

fn input_json(input: &ActionInput) -> serde_json::Value {
    match input {
        ActionInput::Json(v) => v.clone(),
        ActionInput::Raw(s) => serde_json::json!({ "raw": s }),
    }
}

/// The sandbox configuration a task's limits and policy ask for.
pub fn sandbox_config(task: &TaskSpec, workspace: &Path) -> SandboxConfig {
    let mut cfg = SandboxConfig::new(workspace);
    let l = &task.limits;
    cfg.timeout = l.command_timeout.map(|d| d.0).unwrap_or(DEFAULT_COMMAND_TIMEOUT);
    if let Some(m) = l.memory {
        cfg.limits.memory = Some(m.0);
    }
    if let Some(c) = l.cpu {
        cfg.limits.cpu_secs = Some(c.0.as_secs().max(1));
    }
    if let Some(f) = l.file_size {
        cfg.limits.file_size = Some(f.0);
    }
    if let Some(o) = l.output {
        cfg.output_cap = usize::try_from(o.0).unwrap_or(usize::MAX);
    }
    cfg.network = task.policy.network;
    cfg.isolation = task.isolation.unwrap_or_default();
    cfg
}

/// Whether a verdict is a block (used by reports).
pub fn is_block(v: &crate::guard::Verdict) -> bool {
    v.recommendation == Recommendation::Block
}
