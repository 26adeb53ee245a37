//! One task end to end: prepare the workspace, start the agent, send each of its actions through
//! guard → sandbox (tools) → log, validate the end state, and judge the attempt against the
//! task's expectations.
//!
//! The runner never parses shell text (the guard does), never decides policy (the guard's
//! policy does) and never prints or writes a report: it emits trial events
//! ([`crate::report::events`]) to the reporters in [`RunSettings::events`]. It keeps the
//! agent's failures (a [`TrialVerdict::Failed`]) apart from its own (a
//! [`TrialVerdict::HarnessError`]: broken spec, missing fixture, failing setup, unwritable log).

pub(crate) mod environment;
mod episode;
pub mod expect;
mod judge;
mod prp;
pub mod record;
mod snapshot;
mod task;
pub mod tdd;
pub mod toolchain;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::model::cassette::ModelLink;
use crate::agent::{Action, AgentRegistry, AgentSource, TaskBrief};
use crate::error::{Cause, RunError};
use crate::guard::limits::{LimitTracker, RuntimeLimits};
use crate::guard::policy::{Ask, Rules, ToolGate};
use crate::pipeline::{CommandOptions, CommandPassed, Deadline, Ledger, Origin, Pipeline};
use crate::plan::{ModelTraffic, TrafficMode, TrialPlan};
use crate::report::events::{EventSink, TrialEvents};
use crate::sandbox::BeneathError;
use crate::sandbox::{self, SandboxConfig};
use crate::spec::{self, AgentSpec, Outcome, SpecFile, TaskKind, TaskSpec};
use crate::tools::{self, ActionInput, ErrorCode, Receipt};
use crate::validate::judged::{Displaced, Hidden as HiddenChecks, HiddenError, Protection, RunnerShims, Tampering};
use crate::validate::verify::{self, Verification, VerifyRun};
use crate::validate::{self, ValidateContext};

use judge::Ending;

pub use environment::EnvironmentError;
pub use expect::Mismatch;
pub use record::{ActionRecord, AttemptMetrics, AttemptRecord, ModelMetrics, ToolTally};

/// Longest text of one failed expectation shown in a failure message or an activity log
/// entry, in bytes (the run folder's files keep all of it).
pub const MESSAGE_CLIP: usize = 16 * 1024;

/// What every task of one run shares.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub run_id: String,
    /// `target/medin` (run folders go to `<output>/runs/<run-id>/`).
    pub output: PathBuf,
    /// The agent for tasks that do not pin one.
    pub default_agent: AgentSource,
    /// The agents a task's `agent:` may name (the built-ins, and an embedding crate's).
    pub agents: AgentRegistry,
    /// Where trial events go (the reporters of the run); none by default.
    pub events: EventSink,
    /// What the suite sets for tasks that do not say: isolation (None = the strongest this
    /// machine supports, [`sandbox::default_isolation`]), network, passed host variables.
    pub defaults: crate::plan::SuiteDefaults,
    /// What an unapproved guard warning means for the agent's actions, resolved once per run
    /// (`CI=true` → deny: nobody can be asked).
    pub ask: Ask,
    /// Whether model agents' exchanges go live, are recorded, or are replayed from cassettes.
    pub traffic: TrafficMode,
    /// The suite's PRD, reloaded before each task when its file changed (`prd:` in
    /// medin.yaml); `None` when the suite names none.
    pub prd: Option<Arc<crate::prd::LivePrd>>,
}

impl RunSettings {
    /// Settings for a run writing below `output`, with a fresh run id and no reporters.
    pub fn new(output: PathBuf, default_agent: AgentSource) -> Self {
        RunSettings {
            run_id: crate::log::new_run_id(),
            output,
            default_agent,
            agents: AgentRegistry::builtin(),
            events: EventSink::none(),
            defaults: crate::plan::SuiteDefaults::default(),
            ask: Ask::from_env(),
            traffic: TrafficMode::Live,
            prd: None,
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
    /// The harness could not run the task (its error, rendered): not the agent's failure.
    /// `cause` says whose problem it is; the message says what to fix.
    HarnessError { cause: Cause, message: String },
}

impl TrialVerdict {
    /// The one place where a harness failure crosses into a trial's verdict.
    pub(crate) fn from_run_error(e: &RunError) -> Self {
        TrialVerdict::HarnessError {
            cause: e.cause(),
            message: e.to_string(),
        }
    }
}

/// The result of one attempt of one task.
#[derive(Debug, Clone)]
pub struct TaskResult {
    /// `<category>::<name>`.
    pub trial: String,
    pub category: String,
    pub description: String,
    /// The task's tags (empty when its spec did not load).
    pub tags: Vec<String>,
    pub attempt: u32,
    pub agent: String,
    pub verdict: TrialVerdict,
    pub outcome: Option<Outcome>,
    pub metrics: AttemptMetrics,
    pub run_dir: PathBuf,
    /// The task's `flake_tolerance` (0 when its spec did not load).
    pub flake_tolerance: u32,
    /// The PRD requirements the task names (`requirements:`): it proves them if it passed.
    pub requirements: Vec<String>,
}

impl TaskResult {
    pub fn passed(&self) -> bool {
        self.verdict == TrialVerdict::Passed
    }

    /// The harness could not run this trial (not the agent's failure).
    pub fn is_harness_error(&self) -> bool {
        matches!(self.verdict, TrialVerdict::HarnessError { .. })
    }

    /// Whose problem a harness error is (`None` when the trial ran).
    pub fn cause(&self) -> Option<Cause> {
        match &self.verdict {
            TrialVerdict::HarnessError { cause, .. } => Some(*cause),
            _ => None,
        }
    }

    /// The message a failing trial shows: each expectation that did not hold, and the run folder.
    ///
    /// It is made for a terminal: agent-controlled text in it is made inert (no escape
    /// sequences, control or bidi characters) and each expectation is cut at 16 KiB
    /// (`MESSAGE_CLIP`; the run folder keeps everything).
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
            TrialVerdict::HarnessError { cause, message } => Some(format!(
                "{trial}: harness error, cause {} (not the agent's failure): {}\n  run folder: {run_dir}",
                cause.as_str(),
                show(message)
            )),
        }
    }
}

/// Loads the spec of `file` and runs attempt `attempt` of it. A spec that does not load is a
/// harness error of this trial alone, carrying the `file:line:col` message.
pub fn run_spec_file(file: &SpecFile, settings: &RunSettings, attempt: u32) -> TaskResult {
    let events = settings.events.trial(file.trial_name(), attempt);
    let harness_error = |description: String, error: RunError| {
        let result = TaskResult {
            trial: file.trial_name(),
            category: file.category.clone(),
            description,
            tags: Vec::new(),
            attempt,
            agent: "-".into(),
            verdict: TrialVerdict::from_run_error(&error),
            outcome: Some(Outcome::Error),
            metrics: AttemptMetrics::default(),
            run_dir: run_dir_for(file, settings, attempt),
            flake_tolerance: 0,
            requirements: Vec::new(),
        };
        events.finished(&result, &[]);
        result
    };
    match spec::load_task_with(&file.path, &settings.agents) {
        Ok(mut task) => {
            // The PRD first: reloaded if it changed, then applied to the task.
            let applied = match under_prd(&mut task, file, settings, &events) {
                Ok(applied) => applied,
                Err(e) => {
                    events.started("-");
                    return harness_error(task.description.clone(), e);
                }
            };
            // A bug in medin must cost one trial, not the run: a panic becomes a harness error.
            let run = std::panic::AssertUnwindSafe(|| run_task(&task, file, settings, attempt, applied.as_ref()));
            let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                harness_error(task.description.clone(), RunError::Panic(what))
            });
            // The PRD changed a requirement the task names while it ran: reload it now, and ask.
            if let (Some(live), Some(applied)) = (&settings.prd, &applied) {
                let now = refresh_prd(live, settings).unwrap_or_else(|_| live.current());
                if let Some(decision) = applied.decision_needed(&now) {
                    events.prd_decision(&decision);
                }
            }
            result
        }
        Err(e) => {
            events.started("-");
            harness_error(String::new(), RunError::Spec(e.to_string()))
        }
    }
}

/// Puts `task` under the suite's PRD, if the suite has one: reloads the PRD when its file
/// changed (logging the change), checks the requirements the task names, and applies the PRD
/// ([`crate::prd::apply`]), logging each conflict. A task that names requirements in a suite
/// without a PRD, or ids the PRD does not define, is a spec error located in the task file; a
/// PRD that turned invalid halts every task from now on.
fn under_prd(
    task: &mut TaskSpec,
    file: &SpecFile,
    settings: &RunSettings,
    events: &TrialEvents,
) -> Result<Option<crate::prd::Applied>, RunError> {
    let Some(live) = &settings.prd else {
        crate::prd::check_named(&file.path, task, None).map_err(|e| RunError::Spec(e.to_string()))?;
        return Ok(None);
    };
    let prd = refresh_prd(live, settings).map_err(|e| RunError::Prd(e.to_string()))?;
    crate::prd::check_named(&file.path, task, Some(&prd)).map_err(|e| RunError::Spec(e.to_string()))?;
    let applied = crate::prd::apply(task, &prd);
    for conflict in &applied.conflicts {
        events.prd_conflict(conflict);
    }
    Ok(Some(applied))
}

/// The PRD as its file is now, reloaded (and the reload logged) if it changed.
fn refresh_prd(
    live: &crate::prd::LivePrd,
    settings: &RunSettings,
) -> Result<Arc<crate::prd::Prd>, crate::prd::PrdError> {
    let (prd, reload) = live.before_task();
    if let Some(reload) = reload {
        settings.events.prd(&crate::report::events::PrdNote::Reload {
            path: live.path(),
            reload: &reload,
        });
    }
    prd
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
    spec.label()
}

fn spec_dir(path: &Path) -> PathBuf {
    path.parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// Runs attempt `attempt` of an already loaded task, to which the suite's PRD was applied
/// (`prd`, see `under_prd`).
fn run_task(
    task: &TaskSpec,
    file: &SpecFile,
    settings: &RunSettings,
    attempt: u32,
    prd: Option<&crate::prd::Applied>,
) -> TaskResult {
    let run_dir = run_dir_for(file, settings, attempt);
    let source = agent_for(task, file, settings);
    // Everything the trial runs under, decided once.
    let mut plan = TrialPlan::resolve(task, agent_label(&source.spec), &settings.defaults, settings.ask);
    if source.spec.speaks_model_api() {
        let trial_path = Path::new(&file.category)
            .join(&file.name)
            .join(format!("attempt-{attempt}"));
        let task_cassette = task.cassette.as_ref().map(|c| spec_dir(&file.path).join(c));
        plan.model_traffic = ModelTraffic::resolve(task_cassette, &settings.traffic, &run_dir, &trial_path);
    }
    let events = settings.events.trial(file.trial_name(), attempt);
    events.started(&agent_label(&source.spec));
    let mut result = TaskResult {
        trial: file.trial_name(),
        category: file.category.clone(),
        description: task.description.clone(),
        tags: task.tags.clone(),
        attempt,
        agent: agent_label(&source.spec),
        verdict: TrialVerdict::Passed,
        outcome: None,
        metrics: AttemptMetrics::default(),
        run_dir: run_dir.clone(),
        flake_tolerance: task.flake_tolerance,
        requirements: task.requirements.clone(),
    };
    // The one place a harness failure crosses into the trial: outcome `error`, with its cause.
    let record = match Attempt::prepare(task, file, &run_dir, &source, plan.clone(), settings, events.clone()).and_then(
        |mut a| {
            a.prd = prd;
            a.run()
        },
    ) {
        Ok(record) => record,
        Err(e) => {
            result.verdict = TrialVerdict::from_run_error(&e);
            // What the machine lacks and setup gives (a container engine) leaves the task
            // pending; any other harness failure is an error. Neither is the agent's.
            result.outcome = Some(if e.is_pending() {
                Outcome::Pending
            } else {
                Outcome::Error
            });
            events.finished(&result, &[]);
            return result;
        }
    };
    result.outcome = record.outcome;
    result.metrics = record.metrics.clone();
    let mismatches = expect::check(&task.expect, &task.kind, &record);
    result.verdict = if mismatches.is_empty() {
        TrialVerdict::Passed
    } else {
        TrialVerdict::Failed(mismatches)
    };
    let metrics_json = serde_json::json!({
        "trial": result.trial,
        "attempt": attempt,
        "agent": result.agent,
        "plan": plan,
        "outcome": record.outcome,
        "passed": result.passed(),
        "stop_reason": record.stop_reason,
        "final": record.final_report,
        "metrics": record.metrics,
        "validations": record.validations,
        "verification": record.verification,
        "prp": record.prp,
        "tdd": record.tdd,
        // The PRD as applied: its version, the requirements named and briefed (and why), the
        // checks it added, the conflicts it won.
        "prd": prd,
    });
    if let Err(e) = write_json(&run_dir.join("metrics.json"), &metrics_json) {
        result.verdict = TrialVerdict::from_run_error(&RunError::log(run_dir.join("metrics.json"), e));
    }
    // The reporters see the verification as one more validation.
    let shown: Vec<validate::ValidationResult> = record
        .validations
        .iter()
        .cloned()
        .chain(record.verification.as_ref().map(Verification::as_validation))
        .collect();
    events.finished(&result, &shown);
    result
}

fn write_json(path: &Path, value: &serde_json::Value) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    std::fs::write(path, crate::inert::json(&text).into_owned() + "\n")
}

/// A watch over the files a judged phase rests on (inotify, Linux only).
#[cfg(target_os = "linux")]
type EvidenceWatchHandle = crate::validate::judged::EvidenceWatch;
#[cfg(not(target_os = "linux"))]
type EvidenceWatchHandle = std::convert::Infallible;

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
    /// What this trial runs under, resolved once.
    plan: TrialPlan,
    /// How the agent process itself is confined, for every receipt it is handed.
    agent_isolation: String,
    /// The one path every action of this attempt takes (shared with validator threads).
    pipe: Arc<Pipeline>,
    run_dir: PathBuf,
    /// Where this attempt's events go.
    events: TrialEvents,
    /// The workspace is this process's until the attempt ends; if medin dies first, a later
    /// medin process removes it (`sandbox::claim_workspace`). Best effort.
    _claim: Option<sandbox::WorkspaceClaim>,
    /// The attempt's way to a model API (live, recorded, replayed), shared by every agent it
    /// starts.
    model: ModelLink,
    /// The attempt's namespaces and persistent shell: ended once the verdict's evidence is
    /// taken (validators and verification run while the agent's services still live), and
    /// on every other way out of the attempt ([`Drop`]).
    attempt_sandbox: sandbox::AttemptSandbox,
    /// What the suite's PRD says for this task: the requirements it is briefed with.
    prd: Option<&'a crate::prd::Applied>,
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        self.attempt_sandbox.end();
    }
}

impl<'a> Attempt<'a> {
    fn prepare(
        task: &'a TaskSpec,
        file: &SpecFile,
        run_dir: &Path,
        source: &'a AgentSource,
        plan: TrialPlan,
        settings: &RunSettings,
        events: TrialEvents,
    ) -> Result<Self, RunError> {
        let envs = &settings.output.join("envs");
        if run_dir.exists() {
            sandbox::remove_tree(run_dir)
                .map_err(|e| RunError::harness(format!("cannot clear old run folder {}", run_dir.display()), e))?;
        }
        std::fs::create_dir_all(run_dir)
            .map_err(|e| RunError::harness(format!("cannot create run folder {}", run_dir.display()), e))?;
        // The attempt's folder is the harness's: nobody else on the host walks into it (a
        // command may have left anything in its workspace).
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(run_dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| RunError::harness(format!("cannot make run folder {} private", run_dir.display()), e))?;
        }
        let workspace = run_dir.join("workspace");
        let claim = sandbox::claim_workspace(&workspace).ok();
        let fixture = task.workspace.as_ref().map(|w| spec_dir(&file.path).join(w));
        sandbox::prepare_workspace(fixture.as_deref(), &workspace).map_err(RunError::Fixture)?;
        let workspace = workspace
            .canonicalize()
            .map_err(|e| RunError::harness(format!("cannot resolve workspace {}", workspace.display()), e))?;
        let ws = sandbox::Beneath::open(&workspace).map_err(|e| RunError::harness("cannot open the workspace", e))?;
        // What the task declared it needs, provisioned (or found missing) before anything runs.
        let provisioned = match &task.environment {
            Some(env) => environment::provision(env, envs).map_err(RunError::Environment)?,
            None => environment::Provisioned::default(),
        };
        let layout = match &task.environment {
            Some(env) => environment::layout(env, &spec_dir(&file.path), run_dir).map_err(RunError::Environment)?,
            None => environment::Layout::default(),
        };
        // The host variables the task passes, registered with the mask before anything runs;
        // one that is missing fails the trial as the host's problem, naming it.
        let secrets = crate::secrets::HostSecrets::take(&plan.pass_env)?;
        let mut sandbox = sandbox_config(task, &workspace, &plan, &provisioned, layout, &secrets);
        // A task that names an image runs its commands in a container, started now (its image
        // pulled or built first): setup, the agent's commands, validators and the verifier all
        // reach it through `sandbox::run_shell`. Removed when the last handle drops.
        let container = match &task.environment {
            Some(env) => environment::start_container(
                env,
                &spec_dir(&file.path),
                run_dir,
                &mut sandbox,
                (&settings.run_id, &file.trial_name()),
            )?,
            None => None,
        };
        sandbox::check_config(&sandbox).map_err(RunError::Isolation)?;
        // What outlives one command but not the attempt: under strict, the namespaces every
        // command joins (services live until the attempt ends); the persistent shell.
        let attempt_sandbox = sandbox::AttemptSandbox::start(&sandbox)
            .map_err(|e| RunError::sandbox_start("the attempt's sandbox", e.to_string()))?;
        sandbox.attempt = Some(attempt_sandbox.clone());
        let gate = ToolGate::new(&task.policy.tools).map_err(|e| RunError::Spec(e.to_string()))?;
        let agent_isolation = agent_isolation(source, &sandbox);
        let ledger = Ledger::open(run_dir, agent_isolation.clone(), events.clone())?;
        let deadline = Deadline::start(plan.timeout);
        let rules = Rules::new(&task.policy, plan.ask, plan.prohibits_test_tampering);
        let limits = runtime_limits(&plan);
        let tracker = LimitTracker::new(limits, deadline.started);
        let mut pipe = Pipeline::new(&workspace, sandbox, gate, rules, deadline, tracker, ledger);
        if let Some(c) = &container {
            pipe.note(
                &harness_action("medin.container", serde_json::json!({ "image": c.image.name })),
                Receipt::success(c.receipt_data()),
            )?;
        }
        for cmd in &task.setup {
            let options = CommandOptions {
                timeout: None,
                judged: false,
            };
            match pipe.command(Origin::Setup, "medin.setup", cmd, options)? {
                CommandPassed::Denied { message } => {
                    return Err(RunError::Denied {
                        origin: Origin::Setup,
                        command: cmd.clone(),
                        message,
                    })
                }
                CommandPassed::Ran { outcome, .. } if !outcome.success() => {
                    return Err(RunError::Setup {
                        command: cmd.clone(),
                        detail: format!(
                            "failed ({:?}{}): {}",
                            outcome.exit,
                            if outcome.timed_out { ", timed out" } else { "" },
                            outcome.stderr.text.trim()
                        ),
                    })
                }
                CommandPassed::Ran { .. } => {}
            }
        }
        // The agent's time starts now that setup is done.
        pipe.start_clock(limits);
        // What judged runs rely on, taken now that setup is done and before the agent acts.
        pipe.set_shims(
            RunnerShims::install(run_dir).map_err(|e| {
                RunError::harness(format!("cannot install the runner shims in {}", run_dir.display()), e)
            })?,
        );
        pipe.set_checkpoint_dir(run_dir.join("transactions"));
        let pipe = Arc::new(pipe);
        let plan_traffic = plan.model_traffic.clone();
        // Tests the workspace does not ship judge a `verify:` task: the runner configuration
        // they would read is guarded whatever the workspace holds.
        let protection = match task.verify {
            Some(_) => Protection::capture_for_hidden_tests(&ws, task.protected.as_deref()),
            None => Protection::capture(&ws, task.protected.as_deref()),
        }
        .map_err(|e| RunError::harness("cannot capture the protected files", e))?;
        let verify_files = task
            .verify
            .as_ref()
            .and_then(|v| v.files.as_deref())
            .map(|files| {
                let into = Path::new(files)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| crate::spec::taskdir::TESTS_DIR.to_string());
                HiddenChecks::load_into(&spec_dir(&file.path).join(files), &into)
            })
            .transpose()
            .map_err(|e| RunError::Spec(e.to_string()))?;
        let judging = Judging {
            protection,
            hidden: task
                .hidden
                .as_ref()
                .map(|h| HiddenChecks::load(&spec_dir(&file.path).join(h)))
                .transpose()
                .map_err(|e| RunError::Spec(e.to_string()))?
                .map(Arc::new),
            verify_files: verify_files.map(Arc::new),
        };
        Ok(Attempt {
            task,
            source,
            task_id: file.trial_name(),
            workspace,
            ws,
            judging,
            plan,
            agent_isolation,
            pipe,
            run_dir: run_dir.to_path_buf(),
            events,
            _claim: claim,
            model: ModelLink::new(plan_traffic),
            attempt_sandbox,
            prd: None,
        })
    }

    fn run_dir(&self) -> &Path {
        &self.run_dir
    }

    /// `text` with the workspace's absolute path written relative to the workspace (`ws/a.py`
    /// → `a.py`, `ws` → `.`).
    fn workspace_relative(&self, text: &str) -> String {
        let ws = self.workspace.display().to_string();
        text.replace(&format!("{ws}/"), "").replace(&ws, ".")
    }

    fn log_transcript(&self, direction: &str, event: serde_json::Value) -> Result<(), RunError> {
        self.pipe.transcript(direction, event)
    }

    fn run(mut self) -> Result<AttemptRecord, RunError> {
        let clock = self.pipe.deadline();
        let mut record = AttemptRecord {
            workspace: self.workspace.clone(),
            run_dir: self.run_dir.clone(),
            // What the workspace held when the agent started (after setup), for `unchanged`.
            initial: prp::snapshot(&self.ws),
            places: crate::validate::file::FixedPlaces::of(self.pipe.sandbox()),
            ..Default::default()
        };
        // The one place that dispatches on the kind: each kind's module plays its rounds with
        // its own block; the end state is validated and judged the same way for all of them.
        let task = self.task;
        let mut kind: Box<dyn KindRun> = match &task.kind {
            TaskKind::Task => Box::new(task::OneRound),
            TaskKind::Tdd { tdd, .. } => Box::new(tdd::TddLoop::new(tdd.clone())),
            TaskKind::Prp { prp, .. } => Box::new(prp::PrpGates::new(prp.clone())),
        };
        let ending = kind.play(&mut self, &mut record)?;
        record.validations = self.validate(&mut record)?;
        // Nothing the agent started runs past the evidence.
        self.attempt_sandbox.end();
        let (outcome, reason) = judge::judge(ending, &record);
        record.outcome = Some(outcome);
        if record.stop_reason.is_none() {
            record.stop_reason = reason;
        }
        kind.conclude(&self, &mut record)?;
        // No set-id program outlives the attempt in its workspace.
        match self.ws.clear_setid_bits() {
            Ok(cleared) if !cleared.is_empty() => {
                let receipt = Receipt::success(serde_json::json!({ "cleared_setid_bits": cleared }))
                    .with_warning("set-id bits were cleared on files the agent's commands left in the workspace");
                self.pipe
                    .note(&harness_action("medin.cleanup", serde_json::Value::Null), receipt)?;
            }
            Ok(_) => {}
            // A folder the agent made unreadable (or immutable) hides what is in it from the
            // search: said in a receipt, and the verdict stands (the validations ran on the real
            // state). The agent's doing, not the machine's failure.
            Err(e) if refused_by_workspace(&e) => {
                let receipt = Receipt::error(
                    ErrorCode::PermissionDenied,
                    format!("the workspace could not be searched for set-id programs: {e}"),
                )
                .with_warning("the agent left entries in its workspace that the harness cannot open; set-id bits below them were not cleared");
                self.pipe
                    .note(&harness_action("medin.cleanup", serde_json::Value::Null), receipt)?;
            }
            Err(e) => return Err(RunError::harness("cannot clear set-id bits in the workspace", e)),
        }
        let (actions, metrics, turns) = self.pipe.finish();
        record.actions = actions;
        let tampering = record.metrics.tampering;
        let (reward, test_results) = match &record.verification {
            Some(v) => (v.reward, v.tests.clone()),
            None => (None, Vec::new()),
        };
        record.metrics = AttemptMetrics {
            turns,
            tampering,
            duration_ms: clock.started.elapsed().as_millis() as u64,
            reward,
            test_results,
            ..metrics
        };
        Ok(record)
    }

    /// Validates the real end state, whatever the agent claimed: the final judged phase
    /// (protected files restored, hidden checks in, the command validators and then the
    /// verifier through the runner shims and the pipeline). The agent acts no more after it, so
    /// this is where hidden checks and the verifier's files are placed. The validators run
    /// first: they keep to the attempt's deadline, and the verifier, on its own time limit,
    /// cannot use theirs up.
    fn validate(&mut self, record: &mut AttemptRecord) -> Result<Vec<validate::ValidationResult>, RunError> {
        if self.task.expect.validate.is_empty() && self.task.verify.is_none() {
            // Nothing runs, but tampering is still looked for: the verdict must not rest on it.
            return self.judged(record, "judging", Hidden::Out, |_, _| Ok(Vec::new()))?;
        }
        self.judged(record, "the validators and verification", Hidden::In, |att, record| {
            let vctx = ValidateContext {
                workspace: att.workspace.clone(),
                default_timeout: validate::DEFAULT_TIMEOUT,
                pipeline: att.pipe.clone(),
            };
            let results = validate::run_all_cached(&att.task.expect.validate, &vctx, att.pipe.validation_cache());
            let task = att.task;
            if let Some(spec) = &task.verify {
                record.verification = Some(att.verify(record, spec)?);
            }
            Ok(results)
        })?
    }

    /// Runs the task's verifier (`verify:`) inside the final judged phase: its files placed in
    /// a folder of their own for the run and taken out after it.
    fn verify(&mut self, record: &mut AttemptRecord, spec: &crate::spec::VerifySpec) -> Result<Verification, RunError> {
        let files = self.judging.verify_files.clone();
        let placed = match &files {
            Some(h) => match self.place_hidden(record, h, "the verification")? {
                Some(displaced) => Some(displaced),
                None => {
                    return Ok(Verification::not_run(
                        spec,
                        &self.run_dir,
                        "the verifier's files could not be placed in the workspace (see the tampering noted)",
                    ))
                }
            },
            None => None,
        };
        let placed_files: Vec<(String, Vec<u8>, u32)> = match (&files, &placed) {
            (Some(h), Some(_)) => h
                .placed()
                .map(|(rel, bytes, mode)| (rel, bytes.to_vec(), mode))
                .collect(),
            _ => Vec::new(),
        };
        let watch = self.watch_evidence(&placed_files)?;
        let verification = verify::run(&VerifyRun {
            spec,
            pipeline: &self.pipe,
            ws: &self.ws,
            folder: files.as_ref().and_then(|h| h.folder()),
            run_dir: &self.run_dir,
        });
        let tampered_before = record.tampering.len();
        self.note_changed_evidence(record, watch, "the verification")?;
        // The verification is the last evidence: nothing the agent left running outlives it
        // (and nothing still writing gets in the way of taking the verifier's files out).
        self.attempt_sandbox.end();
        let verification = match verification {
            Ok(v) if record.tampering.len() > tampered_before => {
                Ok(v.voided("the verifier's files were changed while it ran (see the tampering noted)"))
            }
            other => other,
        };
        if let (Some(h), Some(displaced)) = (&files, placed) {
            self.take_out_hidden(record, h, displaced, "the verification")?;
        }
        verification
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
    ) -> Result<T, RunError> {
        // Nothing checked before the phase stands in for a judged verdict.
        self.pipe.validation_cache().invalidate();
        let found = self.judging.protection.restore(&self.ws);
        self.note_tampering(record, found, what, &format!("they were put back before {what}"))?;
        let placed = match (self.judging.hidden.clone(), hidden) {
            (Some(h), Hidden::In) => self.place_hidden(record, &h, what)?.map(|d| (h, d)),
            _ => None,
        };
        // What the agent left running lives on through the phase: the files the verdict rests
        // on are watched while it is taken. The verifier's folder is set aside and filled
        // inside the phase by the harness itself; `verify` watches it once it is placed.
        let aside = self
            .judging
            .verify_files
            .as_ref()
            .and_then(|v| v.folder())
            .map(|f| format!("{f}/"));
        let evidence: Vec<(String, Vec<u8>, u32)> = self
            .judging
            .protection
            .restored()
            .map(|(rel, bytes, mode)| (rel.to_string(), bytes.to_vec(), mode))
            .chain(placed.iter().flat_map(|(h, _)| {
                h.placed()
                    .map(|(rel, bytes, mode)| (rel, bytes.to_vec(), mode))
                    .collect::<Vec<_>>()
            }))
            .filter(|(p, _, _)| aside.as_ref().is_none_or(|a| !p.starts_with(a.as_str())))
            .collect();
        let watch = self.watch_evidence(&evidence)?;
        let out = body(self, record);
        self.note_changed_evidence(record, watch, what)?;
        if matches!(hidden, Hidden::In) {
            // The final phase's evidence is taken: what the agent left running ends before the
            // harness takes its files out again (a leftover still writing there would make
            // that fail).
            self.attempt_sandbox.end();
        }
        if let Some((h, displaced)) = placed {
            self.take_out_hidden(record, &h, displaced, what)?;
        }
        self.judging.protection.observe(&self.ws);
        Ok(out)
    }

    /// Starts watching the workspace files `files` (path, content and mode as the harness put
    /// them there) for the length of a judged phase (see `validate::judged::EvidenceWatch`). Linux only; elsewhere nothing of the agent's runs
    /// during a judged phase.
    fn watch_evidence(&self, files: &[(String, Vec<u8>, u32)]) -> Result<Option<EvidenceWatchHandle>, RunError> {
        if files.is_empty() {
            return Ok(None);
        }
        #[cfg(target_os = "linux")]
        return crate::validate::judged::EvidenceWatch::start(
            &self.ws,
            files
                .iter()
                .map(|(rel, bytes, mode)| crate::validate::judged::Evidence {
                    rel,
                    bytes,
                    mode: *mode,
                }),
        )
        .map(Some)
        .map_err(|e| RunError::harness("cannot watch the files the verdict rests on (inotify)", e));
        #[cfg(not(target_os = "linux"))]
        Ok(None)
    }

    /// Records as tampering what changed among the watched evidence during the judged phase
    /// `what`.
    fn note_changed_evidence(
        &mut self,
        record: &mut AttemptRecord,
        watch: Option<EvidenceWatchHandle>,
        what: &str,
    ) -> Result<(), RunError> {
        #[cfg(target_os = "linux")]
        if let Some(w) = watch {
            let changed = w.finish(&self.ws);
            if !changed.is_empty() {
                return self.note_tampering(
                    record,
                    changed,
                    what,
                    &format!("{what} does not count: what it read was changed while it ran"),
                );
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (record, watch, what);
        Ok(())
    }

    /// Places hidden files `h` for the judged phase `what`. `None` when what the agent left in
    /// the workspace refuses them (a folder it made read-only or immutable): it changed what it
    /// is judged by, so the attempt cannot pass (recorded as tampering); nothing of them stays
    /// behind for the phase to run on.
    fn place_hidden(
        &mut self,
        record: &mut AttemptRecord,
        h: &HiddenChecks,
        what: &str,
    ) -> Result<Option<Displaced>, RunError> {
        match h.place(&self.ws) {
            Ok(displaced) => Ok(Some(displaced)),
            Err(HiddenError::Place { rel, source }) if refused_by_workspace(&source) => {
                let _ = h.remove(&self.ws, Displaced::default());
                let blocked = vec![Tampering {
                    path: rel,
                    change: format!("blocked: the hidden check could not be placed: {source}"),
                }];
                self.note_tampering(record, blocked, what, &format!("{what} ran without the hidden checks"))?;
                Ok(None)
            }
            Err(e) => Err(RunError::harness("cannot place the hidden checks", e)),
        }
    }

    /// Takes hidden files `h` out again after the judged phase `what`, putting back what they
    /// displaced.
    fn take_out_hidden(
        &mut self,
        record: &mut AttemptRecord,
        h: &HiddenChecks,
        displaced: Displaced,
        what: &str,
    ) -> Result<(), RunError> {
        match h.remove(&self.ws, displaced) {
            Ok(()) => Ok(()),
            // The agent's code, run by the phase, locked the checks in.
            Err(HiddenError::Remove { rel, source }) if refused_by_workspace(&source) => {
                let stuck = vec![Tampering {
                    path: rel,
                    change: format!("blocked: the hidden check could not be taken out again: {source}"),
                }];
                self.note_tampering(record, stuck, what, "they stay in the workspace")
            }
            Err(e) => Err(RunError::harness("cannot remove the hidden checks", e)),
        }
    }

    /// Records what the agent changed among the paths it is judged by, found at the judged phase
    /// `phase`, with a `medin.protect` receipt (`done` says what the harness did about it): the
    /// attempt cannot pass.
    fn note_tampering(
        &mut self,
        record: &mut AttemptRecord,
        found: Vec<Tampering>,
        phase: &str,
        done: &str,
    ) -> Result<(), RunError> {
        if found.is_empty() {
            return Ok(());
        }
        let list = found
            .iter()
            .map(|t| format!("{} ({})", t.path, t.change))
            .collect::<Vec<_>>()
            .join(", ");
        let mut receipt = Receipt::error(
            ErrorCode::VerificationFailed,
            format!("the agent changed protected files: {list}; {done}, and the attempt cannot pass"),
        );
        receipt.data = serde_json::json!({ "tampering": found });
        self.pipe.note(
            &harness_action("medin.protect", serde_json::json!({ "before": phase })),
            receipt,
        )?;
        record.metrics.tampering = record.metrics.tampering.saturating_add(found.len() as u32);
        record.tampering.extend(found);
        Ok(())
    }

    /// What the agent is told at the start of an episode: `prompt`, the tools the policy
    /// allows, the plan's limits.
    fn brief(&self, prompt: String) -> TaskBrief {
        // The PRD's relevant requirements close the prompt, for agents that read only text.
        let prompt = match self.prd.filter(|a| !a.relevant.is_empty()) {
            Some(applied) => format!("{prompt}\n\n{}", applied.brief()),
            None => prompt,
        };
        let tools = tools::registry()
            .into_iter()
            .filter(|t| self.pipe.gate().check(t.name).is_ok())
            .map(
                |t| serde_json::json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }),
            )
            .collect();
        let plan = &self.plan;
        TaskBrief {
            task_id: self.task_id.clone(),
            prompt,
            tools,
            limits: serde_json::json!({
                "timeout_ms": u64::try_from(plan.timeout.as_millis()).unwrap_or(u64::MAX),
                "max_turns": plan.max_turns,
                "max_repeats": plan.max_repeats,
                "max_files": plan.max_files,
                "max_changes": plan.max_changes,
            }),
            // Where its tools and commands see the workspace (`/app` with a fixed root).
            workspace: self.pipe.sandbox().workspace_seen().to_path_buf(),
            retry: None,
            requirements: self.prd.map(|a| a.brief_json()).unwrap_or_default(),
        }
    }
}

/// How the agent process itself is confined, for every receipt (`Receipt::agent_isolation`).
fn agent_isolation(source: &AgentSource, sandbox: &SandboxConfig) -> String {
    source.spec.confinement(sandbox).to_string()
}

/// The action of a harness step's record (`medin.protect`, `medin.cleanup`, `medin.backoff` …).
pub(crate) fn harness_action(tool: &str, input: serde_json::Value) -> Action {
    Action {
        id: String::new(),
        tool: tool.into(),
        input: ActionInput::Json(input),
    }
}

/// Whether a harness operation on the workspace failed because of what is there — a mode or an
/// immutable flag the agent's commands set (EACCES, EPERM), or a tree a process of the agent's
/// kept changing while the harness worked on it (a folder refilled as it was removed, a name
/// taken again) — rather than because of the machine. After the agent has acted, such a
/// failure is the agent's doing, never an infrastructure error.
fn refused_by_workspace(e: &BeneathError) -> bool {
    matches!(e, BeneathError::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied)
        || e.changed_meanwhile()
}

/// What an attempt's judged runs rely on (see [`crate::validate::judged`]).
#[derive(Debug)]
struct Judging {
    protection: Protection,
    /// `hidden:` checks, merged into the workspace for the final phase.
    hidden: Option<Arc<HiddenChecks>>,
    /// The verifier's files (`verify.files`), in a folder of their own for its run.
    verify_files: Option<Arc<HiddenChecks>>,
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

/// A task kind's part of an attempt (`task.rs`, `tdd.rs`, `prp.rs`): it plays its rounds with
/// an [`episode::Episode`] and says how they ended; validation and judging are the attempt's.
trait KindRun {
    /// Plays the kind's rounds.
    fn play(&mut self, att: &mut Attempt<'_>, record: &mut AttemptRecord) -> Result<Ending, RunError>;

    /// Once the attempt is judged (`record.outcome` is set): the kind's own records and files.
    fn conclude(self: Box<Self>, att: &Attempt<'_>, record: &mut AttemptRecord) -> Result<(), RunError> {
        let _ = (att, record);
        Ok(())
    }
}

/// The runtime limits the pipeline checks around every action.
fn runtime_limits(plan: &TrialPlan) -> RuntimeLimits {
    RuntimeLimits {
        max_files: plan.max_files,
        max_changes: plan.max_changes,
        timeout: Some(plan.timeout),
        max_turns: Some(plan.max_turns),
        max_repeats: Some(plan.max_repeats),
    }
}

/// The sandbox configuration a task's limits and policy ask for, under its plan.
fn sandbox_config(
    task: &TaskSpec,
    workspace: &Path,
    plan: &TrialPlan,
    provisioned: &environment::Provisioned,
    layout: environment::Layout,
    secrets: &crate::secrets::HostSecrets,
) -> SandboxConfig {
    let mut cfg = SandboxConfig::new(workspace);
    let l = &task.limits;
    cfg.timeout = plan.command_timeout;
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
    cfg.network = plan.network;
    cfg.egress = plan.egress.clone();
    // In a container the image brings the toolchains; the host's are not shown there.
    let in_container = task.environment.as_ref().is_some_and(|e| e.container().is_some());
    if !in_container {
        let tools = toolchain::toolchain_setup(&toolchain::toolchains_for(task), sandbox::SANDBOX_PATH);
        cfg.env.extend(tools.env);
        cfg.read_paths.extend(tools.read_paths);
    }
    // The task's provisioned packages come first on PATH, read-only.
    if !provisioned.path.is_empty() {
        let base = cfg.path();
        let mut path: Vec<String> = provisioned.path.iter().map(|p| p.display().to_string()).collect();
        path.push(base);
        cfg.env.retain(|(k, _)| k != "PATH");
        cfg.env.push(("PATH".into(), path.join(":")));
    }
    cfg.env.extend(provisioned.env.iter().cloned());
    cfg.read_paths.extend(provisioned.read_paths.iter().cloned());
    cfg.env.extend(secrets.env().iter().cloned());
    cfg.passed_env = secrets.names().map(str::to_string).collect();
    cfg.root = layout.root;
    cfg.mounts = layout.mounts;
    cfg.isolation = plan.isolation;
    cfg
}
