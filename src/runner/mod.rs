//! One task end to end: prepare the workspace, start the agent, send each of its actions through
//! guard → sandbox (tools) → log, validate the end state, and judge the attempt against the
//! task's expectations.
//!
//! The runner never parses shell text (the guard does), never decides policy (the guard's
//! policy does) and never prints or writes a report: it emits trial events
//! ([`crate::report::events`]) to the reporters in [`RunSettings::events`]. It keeps the
//! agent's failures (a [`TrialVerdict::Failed`]) apart from its own (a
//! [`TrialVerdict::HarnessError`]: broken spec, missing fixture, failing setup, unwritable log).

pub mod expect;
mod prp;
pub mod record;
mod snapshot;
pub mod tdd;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::agent::{self, Action, Agent, AgentEvent, AgentFailure, AgentSource, TaskBrief};
use crate::guard::limits::{LimitTracker, LimitViolation, RuntimeLimits};
use crate::guard::policy::{self, Decision, ToolGate};
use crate::guard::{self, GuardContext, Recommendation};
use crate::log::JsonlLog;
use crate::report::events::{EventSink, RoundEndReason, TrialEvents};
use crate::sandbox::{self, SandboxConfig};
use crate::spec::{self, AgentSpec, FinalResult, Outcome, SpecFile, TaskKind, TaskSpec};
use crate::tools::{self, ActionInput, ErrorCode, Receipt, ToolContext};
use crate::validate::judged::{Hidden as HiddenChecks, Protection, RunnerShims};
use crate::validate::{self, ValidateContext, ValidationStatus};

pub use expect::Mismatch;
pub use record::{ActionRecord, AttemptMetrics, AttemptRecord, ToolTally};

/// Longest text of one failed expectation shown in a failure message or an activity log
/// entry, in bytes (the run folder's files keep all of it).
pub const MESSAGE_CLIP: usize = 16 * 1024;

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
    /// Where trial events go (the reporters of the run); none by default.
    pub events: EventSink,
    /// Isolation for tasks that do not set one (the suite's `isolation`); None = the strongest
    /// this machine supports ([`sandbox::default_isolation`]).
    pub isolation: Option<crate::sandbox::Isolation>,
}

impl RunSettings {
    /// Settings for a run writing below `output`, with a fresh run id and no reporters.
    pub fn new(output: PathBuf, default_agent: AgentSource) -> Self {
        RunSettings {
            run_id: crate::log::new_run_id(),
            output,
            default_agent,
            events: EventSink::none(),
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

    /// The harness could not run the trial (infrastructure): not the agent's failure.
    pub fn is_harness_error(&self) -> bool {
        matches!(self.verdict, TrialVerdict::HarnessError(_))
    }

    /// The message a failing trial shows: each expectation that did not hold, and the run folder.
    ///
    /// It is made for a terminal: agent-controlled text in it is made inert ([`crate::inert`])
    /// and each expectation is cut at [`MESSAGE_CLIP`] bytes (the run folder keeps everything).
    pub fn failure_message(&self) -> Option<String> {
        let show = |text: &str| crate::inert::text(&crate::inert::clip(text, MESSAGE_CLIP)).into_owned();
        let (trial, agent) = (crate::inert::line(&self.trial), crate::inert::line(&self.agent));
        let run_dir = crate::inert::line(&self.run_dir.to_string_lossy()).into_owned();
        match &self.verdict {
            TrialVerdict::Passed => None,
            TrialVerdict::Failed(ms) => {
                let mut s = format!(
                    "{trial} failed (agent {agent}): {} expectation{} did not hold\n",
                    ms.len(),
                    if ms.len() == 1 { "" } else { "s" }
                );
                for m in ms {
                    s.push_str(&format!("  - {}\n", show(m.to_string().trim_end())));
                }
                s.push_str(&format!("  run folder: {run_dir}"));
                Some(s)
            }
            TrialVerdict::HarnessError(e) => Some(format!(
                "{trial}: harness error (not the agent's failure): {}\n  run folder: {run_dir}",
                show(e)
            )),
        }
    }
}

/// Loads the spec of `file` and runs attempt `attempt` of it. A spec that does not load is a
/// harness error of this trial alone, carrying the `file:line:col` message.
pub fn run_spec_file(file: &SpecFile, settings: &RunSettings, attempt: u32) -> TaskResult {
    let events = settings.events.trial(file.trial_name(), attempt);
    let harness_error = |description: String, message: String| {
        let result = TaskResult {
            trial: file.trial_name(),
            category: file.category.clone(),
            description,
            attempt,
            agent: "-".into(),
            verdict: TrialVerdict::HarnessError(message),
            outcome: None,
            metrics: AttemptMetrics::default(),
            run_dir: run_dir_for(file, settings, attempt),
        };
        events.finished(&result, &[]);
        result
    };
    match spec::load_task(&file.path) {
        Ok(task) => {
            // A bug in medin must cost one trial, not the run: a panic becomes a harness error.
            let run = std::panic::AssertUnwindSafe(|| run_task(&task, file, settings, attempt));
            std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                harness_error(
                    task.description.clone(),
                    format!("medin panicked while running this task ({what}); this is a medin bug, please report it with the spec"),
                )
            })
        }
        Err(e) => {
            events.started("-");
            harness_error(String::new(), format!("invalid task spec:\n{e}"))
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
    let events = settings.events.trial(file.trial_name(), attempt);
    events.started(&agent_label(&source.spec));
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
    let record = match Attempt::prepare(task, file, &run_dir, &source, events.clone()).and_then(|a| a.run()) {
        Ok(record) => record,
        Err(e) => {
            result.verdict = TrialVerdict::HarnessError(e);
            events.finished(&result, &[]);
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
        "prp": record.prp,
        "tdd": record.tdd,
    });
    if let Err(e) = write_json(&run_dir.join("metrics.json"), &metrics_json) {
        result.verdict = TrialVerdict::HarnessError(format!("cannot write metrics.json: {e}"));
    }
    events.finished(&result, &record.validations);
    result
}

fn write_json(path: &Path, value: &serde_json::Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    std::fs::write(path, crate::inert::json(&text).into_owned() + "\n")
}

/// One attempt in progress.
struct Attempt<'a> {
    task: &'a TaskSpec,
    source: &'a AgentSource,
    task_id: String,
    workspace: PathBuf,
    /// The workspace, opened once: the harness's own reads and writes in it go through this
    /// handle and never follow the agent's links.
    ws: sandbox::Beneath,
    judging: Judging,
    fixture: Option<PathBuf>,
    sandbox: SandboxConfig,
    receipts: JsonlLog,
    transcript: JsonlLog,
    gate: ToolGate,
    run_dir: PathBuf,
    /// Where this attempt's events go.
    events: TrialEvents,
    /// The workspace is this process's until the attempt ends; if medin dies first, a later
    /// medin process removes it (`sandbox::claim_workspace`). Best effort.
    _claim: Option<sandbox::WorkspaceClaim>,
}

impl<'a> Attempt<'a> {
    fn prepare(
        task: &'a TaskSpec,
        file: &SpecFile,
        run_dir: &Path,
        source: &'a AgentSource,
        events: TrialEvents,
    ) -> Result<Self, String> {
        if run_dir.exists() {
            sandbox::remove_tree(run_dir)
                .map_err(|e| format!("cannot clear old run folder {}: {e}", run_dir.display()))?;
        }
        std::fs::create_dir_all(run_dir).map_err(|e| format!("cannot create run folder {}: {e}", run_dir.display()))?;
        // The attempt's folder is the harness's: nobody else on the host walks into it (a
        // command may have left anything in its workspace).
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(run_dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("cannot make run folder {} private: {e}", run_dir.display()))?;
        }
        let workspace = run_dir.join("workspace");
        let claim = sandbox::claim_workspace(&workspace).ok();
        let fixture = task.workspace.as_ref().map(|w| spec_dir(&file.path).join(w));
        sandbox::prepare_workspace(fixture.as_deref(), &workspace).map_err(|e| e.to_string())?;
        let workspace = workspace
            .canonicalize()
            .map_err(|e| format!("cannot resolve workspace {}: {e}", workspace.display()))?;
        let ws = sandbox::Beneath::open(&workspace).map_err(|e| format!("cannot open the workspace: {e}"))?;
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
        // What judged runs rely on, taken now that setup is done and before the agent acts.
        let judging = Judging {
            shims: RunnerShims::install(run_dir)
                .map_err(|e| format!("cannot install the runner shims in {}: {e}", run_dir.display()))?,
            protection: Protection::capture(&ws, task.protected.as_deref()).map_err(|e| e.to_string())?,
            hidden: task
                .hidden
                .as_ref()
                .map(|h| HiddenChecks::load(&spec_dir(&file.path).join(h)))
                .transpose()
                .map_err(|e| e.to_string())?,
        };
        Ok(Attempt {
            task,
            source,
            task_id: file.trial_name(),
            workspace,
            ws,
            judging,
            fixture,
            sandbox,
            receipts,
            transcript,
            gate,
            run_dir: run_dir.to_path_buf(),
            events,
            _claim: claim,
        })
    }

    /// How the agent process itself is confined, for every receipt (`Receipt::agent_isolation`).
    fn agent_isolation(&self) -> String {
        match &self.source.spec {
            AgentSpec::Process(_) => "unconfined".into(),
            AgentSpec::Exec(_) => self.sandbox.isolation.to_string(),
            AgentSpec::Oracle => "builtin".into(),
        }
    }

    fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    fn log_transcript(&mut self, direction: &str, event: serde_json::Value) -> Result<(), String> {
        let line =
            serde_json::json!({ "timestamp": chrono::Utc::now().to_rfc3339(), "direction": direction, "event": event });
        self.transcript
            .append(&line)
            .map_err(|e| format!("cannot write transcript.jsonl: {e}"))
    }

    fn run(mut self) -> Result<AttemptRecord, String> {
        let clock = Clock::start(&self.task.limits);
        let mut tracker = LimitTracker::new(clock.runtime_limits(&self.task.limits), clock.started);
        let mut record = AttemptRecord {
            workspace: self.workspace.clone(),
            run_dir: self.run_dir.clone(),
            fixture: self.fixture.clone(),
            // What the workspace held when the agent started (after setup), for `unchanged`.
            initial: prp::snapshot(&self.ws),
            ..Default::default()
        };
        if self.task.kind == TaskKind::Prp {
            prp::run(&mut self, &clock, &mut tracker, &mut record)?;
        } else if self.task.kind == TaskKind::Tdd {
            let tdd = tdd::run(&mut self, &clock, &mut tracker, &mut record)?;
            record.validations = self.validate(&mut record)?;
            record.tdd = Some(tdd);
        } else {
            let brief = self.brief(clock.task_timeout, self.task.prompt.clone());
            self.log_transcript("to_agent", serde_json::json!({ "type": "task", "brief": brief }))?;
            let mut agent = agent::start(self.source, &brief, &self.task.solution, &self.sandbox);
            let end = self.run_round(agent.as_mut(), &clock, &mut tracker, &mut record)?;
            agent.finish();
            record.validations = self.validate(&mut record)?;
            record.outcome = Some(match end {
                RoundEnd::Reported(f) => {
                    record.final_report = Some(f);
                    if !record.tampering.is_empty() {
                        record.stop_reason = Some(tampering_summary(&record.tampering));
                    }
                    judge(&record)
                }
                RoundEnd::AgentFailed(failure) => {
                    record.stop_reason = Some(failure.to_string());
                    Outcome::Error
                }
                RoundEnd::Stopped(outcome, reason) => {
                    record.stop_reason = Some(reason);
                    outcome
                }
            });
        }
        record.metrics.turns = tracker.turns();
        record.metrics.duration_ms = clock.started.elapsed().as_millis() as u64;
        // No set-id program outlives the attempt in its workspace.
        match self.ws.clear_setid_bits() {
            Ok(cleared) if !cleared.is_empty() => {
                let receipt = Receipt::success(serde_json::json!({ "cleared_setid_bits": cleared }))
                    .with_warning("set-id bits were cleared on files the agent's commands left in the workspace");
                let action = Action {
                    id: String::new(),
                    tool: "medin.cleanup".into(),
                    input: ActionInput::Json(serde_json::Value::Null),
                };
                self.push_record(&mut record, &action, Passage::harness(), receipt)?;
            }
            Ok(_) => {}
            Err(e) => return Err(format!("cannot clear set-id bits in the workspace: {e}")),
        }
        Ok(record)
    }

    /// Validates the real end state, whatever the agent claimed: the final judged phase
    /// (protected files restored, hidden checks in, command validators through the runner
    /// shims). The agent acts no more after it, so this is where hidden checks are placed.
    fn validate(&mut self, record: &mut AttemptRecord) -> Result<Vec<validate::ValidationResult>, String> {
        if self.task.expect.validate.is_empty() {
            // Nothing runs, but tampering is still looked for: the verdict must not rest on it.
            return self.judged(record, "judging", Hidden::Out, |_, _| Vec::new());
        }
        self.judged(record, "the validators", Hidden::In, |att, _| {
            let vctx = ValidateContext {
                workspace: att.workspace.clone(),
                sandbox: att.sandbox.clone(),
                default_timeout: Duration::from_secs(5),
                shims: Some(att.judging.shims.clone()),
            };
            validate::run_all(&att.task.expect.validate, &vctx)
        })
    }

    /// Runs `body` as a judged phase: protected files put back first (what the agent changed
    /// in them since the last judged phase recorded as tampering, with a receipt), hidden
    /// checks placed for the phase when `hidden` says so (only the final phase: their names
    /// and failures must not reach an agent that acts again), and the protected files'
    /// state noted after it. `what` names the phase in the receipt.
    fn judged<T>(
        &mut self,
        record: &mut AttemptRecord,
        what: &str,
        hidden: Hidden,
        body: impl FnOnce(&mut Self, &mut AttemptRecord) -> T,
    ) -> Result<T, String> {
        let found = self.judging.protection.restore(&self.ws);
        if !found.is_empty() {
            let list = found
                .iter()
                .map(|t| format!("{} ({})", t.path, t.change))
                .collect::<Vec<_>>()
                .join(", ");
            let mut receipt = Receipt::error(
                ErrorCode::VerificationFailed,
                format!("the agent changed protected files: {list}; they were put back before {what}, and the attempt cannot pass"),
            );
            receipt.data = serde_json::json!({ "tampering": found });
            let action = Action {
                id: String::new(),
                tool: "medin.protect".into(),
                input: ActionInput::Json(serde_json::json!({ "before": what })),
            };
            self.push_record(record, &action, Passage::harness(), receipt)?;
            record.metrics.tampering = record.metrics.tampering.saturating_add(found.len() as u32);
            record.tampering.extend(found);
        }
        let placed = match (&self.judging.hidden, hidden) {
            (Some(h), Hidden::In) => Some(h.place(&self.ws).map_err(|e| e.to_string())?),
            _ => None,
        };
        let out = body(self, record);
        if let (Some(h), Some(d)) = (&self.judging.hidden, placed) {
            h.remove(&self.ws, d).map_err(|e| e.to_string())?;
        }
        self.judging.protection.observe(&self.ws);
        Ok(out)
    }

    /// One round: the agent acts (each call through guard → sandbox → log) until it reports,
    /// breaks, or the harness stops it.
    fn run_round(
        &mut self,
        agent: &mut dyn Agent,
        clock: &Clock,
        tracker: &mut LimitTracker,
        record: &mut AttemptRecord,
    ) -> Result<RoundEnd, String> {
        let mut last: Option<(Action, Receipt)> = None;
        loop {
            if clock.started.elapsed() > clock.task_timeout {
                let reason = format!(
                    "task timeout of {} reached",
                    humantime::format_duration(clock.task_timeout)
                );
                return Ok(RoundEnd::Stopped(Outcome::Timeout, reason));
            }
            if let Some((_, r)) = &mut last {
                r.agent_isolation = Some(self.agent_isolation());
            }
            let event = agent.next(last.as_ref().map(|(a, r)| (a, r)));
            last = None;
            match event {
                AgentEvent::Usage(u) => {
                    // Counts an agent reports are its word: summed saturating, never wrapped.
                    let usage = &mut record.metrics.usage;
                    usage.input_tokens = usage.input_tokens.saturating_add(u.input_tokens);
                    usage.output_tokens = usage.output_tokens.saturating_add(u.output_tokens);
                    self.log_transcript("from_agent", serde_json::json!({ "type": "usage", "input_tokens": u.input_tokens, "output_tokens": u.output_tokens }))?;
                }
                AgentEvent::Final(f) => {
                    self.log_transcript("from_agent", serde_json::json!({ "type": "final", "report": f }))?;
                    return Ok(RoundEnd::Reported(f));
                }
                AgentEvent::Reply(text) => {
                    self.log_transcript("from_agent", serde_json::json!({ "type": "reply", "text": text }))?;
                    let report = match parse_reply(&text) {
                        Ok(report) => report,
                        Err(report) => {
                            let receipt = Receipt::error(ErrorCode::ParseError, report.message.clone());
                            self.push_record(record, &agent_action(), Passage::not_checked(), receipt)?;
                            report
                        }
                    };
                    return Ok(RoundEnd::Reported(report));
                }
                AgentEvent::Failed(failure) => {
                    self.log_transcript(
                        "from_agent",
                        serde_json::json!({ "type": "failed", "error": failure.to_string() }),
                    )?;
                    // The agent's own failure gets a receipt too, so the log says what happened.
                    let receipt = Receipt::error(failure_code(&failure), failure.to_string());
                    self.push_record(record, &agent_action(), Passage::not_checked(), receipt)?;
                    return Ok(RoundEnd::AgentFailed(failure));
                }
                AgentEvent::Malformed { line, reason } => {
                    self.log_transcript(
                        "from_agent",
                        serde_json::json!({ "type": "malformed", "line": line, "reason": reason }),
                    )?;
                    record.metrics.malformed += 1;
                    let receipt = Receipt::error(
                        ErrorCode::MalformedOutput,
                        format!("agent output is not a protocol message ({reason}); send one JSON object per line: tool_call, final, reply or usage"),
                    )
                    .with_context(serde_json::json!({ "line": line }));
                    let action = Action {
                        id: String::new(),
                        tool: String::new(),
                        input: ActionInput::Raw(line),
                    };
                    let stop = tracker.begin_turn().err();
                    let passage = Passage {
                        limit: stop.as_ref().map(|v| v.to_string()),
                        ..Passage::not_checked()
                    };
                    self.push_record(record, &action, passage, receipt.clone())?;
                    if let Some(v) = stop {
                        return Ok(RoundEnd::Stopped(Outcome::Stopped, v.to_string()));
                    }
                    last = Some((action, receipt));
                }
                AgentEvent::Call(action) => {
                    self.log_transcript("from_agent", serde_json::json!({ "type": "tool_call", "id": action.id, "tool": action.tool, "input": input_json(&action.input) }))?;
                    if let Err(v) = tracker.begin_turn() {
                        let receipt = Receipt::error(ErrorCode::PermissionDenied, format!("{v}; the task is stopped"));
                        let passage = Passage {
                            limit: Some(v.to_string()),
                            ..Passage::not_checked()
                        };
                        self.push_record(record, &action, passage, receipt)?;
                        return Ok(RoundEnd::Stopped(Outcome::Stopped, v.to_string()));
                    }
                    let (receipt, stop) = self.act(&action, clock, tracker, record)?;
                    if let Some((outcome, reason)) = stop {
                        return Ok(RoundEnd::Stopped(outcome, reason));
                    }
                    last = Some((action, receipt));
                }
            }
        }
    }

    fn brief(&self, task_timeout: Duration, prompt: String) -> TaskBrief {
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
            prompt,
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
        clock: &Clock,
        tracker: &mut LimitTracker,
        record: &mut AttemptRecord,
    ) -> Result<(Receipt, Option<(Outcome, String)>), String> {
        // A command never runs past the task's own deadline.
        let mut sandbox = self.sandbox.clone();
        sandbox.timeout = sandbox.timeout.min(clock.remaining().max(Duration::from_millis(1)));
        let tctx = ToolContext {
            workspace: self.workspace.clone(),
            sandbox,
            dry_run: false,
        };
        // 1. Tool policy.
        if let Err(denial) = self.gate.check(&action.tool) {
            record.metrics.guard_blocks += 1;
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
            self.push_record(
                record,
                action,
                Passage {
                    decision: "deny",
                    ..Default::default()
                },
                receipt.clone(),
            )?;
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
                let mut decision = policy::decide_with(&verdict, &self.task.policy, policy::Ask::from_env());
                // A TDD loop is judged by its tests: any test tampering is prohibited there.
                if self.task.kind == TaskKind::Tdd && !matches!(decision, Decision::Deny { .. }) {
                    if let Some(v) = verdict
                        .violations
                        .iter()
                        .find(|v| v.category == crate::guard::Category::TestTampering)
                    {
                        decision = Decision::Deny {
                            message: format!(
                                "prohibited in a TDD loop: {} ({}); fix the code, not the tests",
                                v.description, v.rule
                            ),
                        };
                    }
                }
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
                let passage = Passage {
                    guard: verdict,
                    decision: "deny",
                    ..Default::default()
                };
                self.push_record(record, action, passage, receipt.clone())?;
                return Ok((receipt, None));
            }
        };
        // 3. Runtime limits, before.
        let affected = tools::would_affect(&tctx, &action.tool, &input);
        if let Err(v) = tracker.check_before(&affected) {
            let receipt = limit_receipt(&v);
            let passage = Passage {
                guard: verdict,
                decision: decision_name,
                justification,
                limit: Some(v.to_string()),
                ..Default::default()
            };
            self.push_record(record, action, passage, receipt.clone())?;
            return Ok((receipt, Some((limit_outcome(&v), v.to_string()))));
        }
        // 4. Run it (the sandbox confines it).
        let mut receipt = tools::call(&tctx, &action.tool, &input);
        receipt.warnings.extend(warnings);
        // A dry run changed nothing: it counts toward no limit.
        if !matches!(
            receipt.status,
            crate::tools::ReceiptStatus::Error | crate::tools::ReceiptStatus::DryRun
        ) {
            tracker.record(&affected);
        }
        // 5. Runtime limits, after; invariants.
        let mut stop = None;
        let mut limit = None;
        if let Err(v) = tracker.check_after() {
            receipt.warnings.push(format!("{v}; the task is stopped"));
            limit = Some(v.to_string());
            stop = Some((limit_outcome(&v), v.to_string()));
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
            stop = Some((Outcome::Stopped, format!("INVARIANT_BROKEN: {}", e.message)));
        }
        let passage = Passage {
            guard: verdict,
            decision: decision_name,
            justification,
            limit,
            ran: true,
            harness: false,
        };
        self.push_record(record, action, passage, receipt.clone())?;
        Ok((receipt, stop))
    }

    /// Logs one action with its receipt: appended and flushed to `receipts.jsonl` (and the
    /// transcript) before the next action runs.
    fn push_record(
        &mut self,
        record: &mut AttemptRecord,
        action: &Action,
        passage: Passage,
        mut receipt: Receipt,
    ) -> Result<(), String> {
        receipt.agent_isolation = Some(self.agent_isolation());
        // Tool metrics count tool calls only; agent-level receipts (malformed output, a crash,
        // a hang) are logged but are not a tool's error.
        let m = &mut record.metrics;
        if !action.tool.is_empty() && !passage.harness {
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
            guard: passage.guard,
            decision: if passage.decision.is_empty() {
                "not_checked"
            } else {
                passage.decision
            }
            .to_string(),
            justification: passage.justification,
            limit: passage.limit,
            receipt,
            timestamp: chrono::Utc::now().to_rfc3339(),
            ran: passage.ran,
            harness: passage.harness,
        };
        self.receipts
            .append(&rec)
            .map_err(|e| format!("cannot write receipts.jsonl: {e}"))?;
        self.events.action(&rec);
        self.log_transcript(
            "to_agent",
            serde_json::json!({ "type": "tool_result", "id": rec.action_id, "receipt": rec.receipt }),
        )?;
        // The files have it all; memory keeps a bounded copy.
        record.actions.push(rec.retained());
        Ok(())
    }
}

/// The outcome of an attempt whose agent sent a final report: nothing is complete without a
/// validation that ran and passed.
fn judge(record: &AttemptRecord) -> Outcome {
    // A verdict reached after the agent changed what it is judged by is not trusted.
    if !record.tampering.is_empty() {
        return Outcome::Failure;
    }
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

/// What an attempt's judged runs rely on (see [`crate::validate::judged`]).
#[derive(Debug)]
struct Judging {
    shims: RunnerShims,
    protection: Protection,
    hidden: Option<HiddenChecks>,
}

/// Whether a judged phase runs with the hidden checks in the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hidden {
    In,
    Out,
}

/// One line naming what the agent changed among the protected files.
pub(crate) fn tampering_summary(t: &[crate::validate::judged::Tampering]) -> String {
    let mut seen: Vec<String> = t.iter().map(|t| format!("{} ({})", t.path, t.change)).collect();
    seen.dedup();
    format!("the agent changed protected files: {}", seen.join(", "))
}

/// How an action fared on its way through policy, guard, limits and tool.
#[derive(Debug, Default)]
struct Passage {
    guard: Option<crate::guard::Verdict>,
    /// allow | warn | deny | bypassed | not_checked
    decision: &'static str,
    justification: Option<String>,
    limit: Option<String>,
    /// The tool was invoked.
    ran: bool,
    /// A step of the harness itself (named `medin.*`), not an agent's call.
    harness: bool,
}

impl Passage {
    fn not_checked() -> Self {
        Passage {
            decision: "not_checked",
            ..Default::default()
        }
    }

    fn harness() -> Self {
        Passage {
            decision: "not_checked",
            harness: true,
            ..Default::default()
        }
    }
}

/// A broken time limit is a timeout; any other limit stops the task.
fn limit_outcome(v: &LimitViolation) -> Outcome {
    match v {
        LimitViolation::Time { .. } => Outcome::Timeout,
        _ => Outcome::Stopped,
    }
}

/// How a round ended.
#[derive(Debug)]
enum RoundEnd {
    /// The agent reported (a final report, or a reply parsed into one).
    Reported(crate::spec::FinalReport),
    /// The agent broke: crashed, hung, could not start, ended without a report.
    AgentFailed(AgentFailure),
    /// The harness stopped the task (limit, invariant, task timeout).
    Stopped(Outcome, String),
}

impl RoundEnd {
    /// How the round ended, as a round event says it.
    fn reason(&self) -> RoundEndReason {
        match self {
            RoundEnd::Reported(f) => RoundEndReason::Reported(f.result),
            RoundEnd::AgentFailed(failure) => RoundEndReason::AgentFailed(failure.to_string()),
            RoundEnd::Stopped(outcome, reason) => RoundEndReason::Stopped {
                outcome: *outcome,
                reason: reason.clone(),
            },
        }
    }
}

/// The task's clock and time limit.
#[derive(Debug, Clone, Copy)]
struct Clock {
    started: Instant,
    task_timeout: Duration,
}

impl Clock {
    fn start(limits: &crate::spec::Limits) -> Self {
        Clock {
            started: Instant::now(),
            task_timeout: limits.timeout.map(|d| d.0).unwrap_or(DEFAULT_TASK_TIMEOUT),
        }
    }

    /// Time left before the task's deadline.
    fn remaining(&self) -> Duration {
        self.task_timeout.saturating_sub(self.started.elapsed())
    }

    fn runtime_limits(&self, limits: &crate::spec::Limits) -> RuntimeLimits {
        RuntimeLimits {
            max_files: limits.max_files,
            max_changes: limits.max_changes,
            timeout: Some(self.task_timeout),
            max_turns: Some(limits.max_turns.unwrap_or(DEFAULT_MAX_TURNS)),
        }
    }
}

/// The receipt code of an agent's own failure.
fn failure_code(failure: &AgentFailure) -> ErrorCode {
    match failure {
        AgentFailure::TimedOut { .. } => ErrorCode::Timeout,
        AgentFailure::Spawn { .. } => ErrorCode::DependencyFail,
        AgentFailure::Exited { .. } | AgentFailure::NoFinal | AgentFailure::NotReading { .. } => {
            ErrorCode::MalformedOutput
        }
    }
}

/// The placeholder action of a receipt about the agent itself (not a tool call).
fn agent_action() -> Action {
    Action {
        id: String::new(),
        tool: String::new(),
        input: ActionInput::Json(serde_json::Value::Null),
    }
}

/// Reads a free-text reply as `{"result": "success|error|issue", "message": ..}`, raw or inside
/// a fenced markdown block (```json ... ``` or ``` ... ```). Anything else is an `error` report
/// that quotes the raw reply (the `Err` side, so the caller can log a PARSE_ERROR).
pub fn parse_reply(text: &str) -> Result<crate::spec::FinalReport, crate::spec::FinalReport> {
    use crate::spec::{FinalReport, FinalResult};
    let fenced = fenced_block(text);
    let candidate = fenced.unwrap_or(text).trim();
    let parsed = serde_json::from_str::<serde_json::Value>(candidate).ok().and_then(|v| {
        let result = match v.get("result")?.as_str()? {
            "success" => FinalResult::Success,
            "error" => FinalResult::Error,
            "issue" => FinalResult::Issue,
            _ => return None,
        };
        let message = match v.get("message") {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let code = v.get("code").and_then(|c| serde_json::from_value(c.clone()).ok());
        Some(FinalReport { code, result, message })
    });
    parsed.ok_or_else(|| {
        let quoted: String = text.chars().take(2000).collect();
        FinalReport { code: None,
            result: FinalResult::Error,
            message: format!("could not parse the agent's reply as {{\"result\": \"success|error|issue\", \"message\": ..}} (raw or in a ```json fence); the reply was: {quoted}"),
        }
    })
}

/// The body of the first fenced code block in `text`, if any.
fn fenced_block(text: &str) -> Option<&str> {
    let start = text.find("```")?;
    let after = &text[start + 3..];
    let body_start = after.find('\n').map(|i| i + 1)?;
    let body = &after[body_start..];
    let end = body.find("```")?;
    Some(&body[..end])
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
        // An explicit memory limit gets the cgroup, which limits what the tree really uses and
        // names a hit for certain (see sandbox::SandboxConfig::cgroup).
        cfg.limits.memory = Some(m.0);
        cfg.cgroup = Some(true);
    }
    if let Some(c) = l.cpu {
        cfg.limits.cpu_secs = Some(c.0.as_secs().max(1));
    }
    if let Some(f) = l.file_size {
        cfg.limits.file_size = Some(f.0);
    }
    if let Some(n) = l.processes {
        cfg.limits.processes = Some(u64::from(n));
        cfg.cgroup = Some(true);
    }
    if let Some(o) = l.output {
        cfg.output_cap = usize::try_from(o.0).unwrap_or(usize::MAX);
    }
    cfg.network = task.policy.network;
    let tools = toolchain::toolchain_setup(&toolchain::toolchains_for(task), sandbox::SANDBOX_PATH);
    cfg.env.extend(tools.env);
    cfg.read_paths.extend(tools.read_paths);
    cfg.isolation = task.isolation.unwrap_or_else(sandbox::default_isolation);
    cfg
}

/// Whether a verdict is a block (used by reports).
pub fn is_block(v: &crate::guard::Verdict) -> bool {
    v.recommendation == Recommendation::Block
}
