//! Planning and driving a run — one driver for `medin run` and for the `cargo test`
//! integration — and the `cargo test` integration itself.
//!
//! - [`plan`] resolves a run once: the suite, the task files, the agent, the run id
//!   (`MEDIN_RUN_ID` when set), the repeats;
//! - [`Driver`] runs one trial of the plan ([`Driver::run_trial`], emitting trial events to the
//!   run's reporters) and finishes the run ([`Driver::finish`]: results merged from the run
//!   folder, metrics, thresholds, `summary.json`, the exit status of [`crate::exit`]).
//!   `medin run` schedules trials on its own threads, libtest-mimic schedules them under
//!   `cargo test`; both go through these two functions;
//! - [`report_run`] finishes a run whose trials ran elsewhere (`medin report`): every process
//!   that shared its `MEDIN_RUN_ID` left its trials' results in the one run folder.
//!
//! Under `cargo test`, a suite of YAML tasks becomes libtest trials (via libtest-mimic), named
//! `<category>::<path-without-extension>` and sorted, so `--list`, `--exact`, `--ignored`, name
//! filters and `cargo nextest` (listing, one process per test, `--partition hash:m/n`) all
//! work. After the trials, the suite metrics are printed and the thresholds of `medin.yaml`
//! checked; a breach fails the run. The process exits by the table of [`crate::exit`].
//!
//! Any crate can run its own suite, with its own agents, through the [`Harness`] builder in a
//! test target like the `eval` one (`harness = false`):
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     medin::Harness::new(env!("CARGO_MANIFEST_DIR")).run()
//! }
//! ```
//!
//! Everything printed is inert ([`crate::inert`]): trial names (a task file may be named with
//! escape sequences) and failure messages ([`TaskResult::failure_message`]).
//!
//! Thresholds apply to whole runs only: when a filter, `--exact` or `--skip` narrows the trials
//! (as nextest does, one trial per process), the metrics are still printed but not gated, since
//! a rate over a hand-picked subset says nothing about the suite. To gate a run made of many
//! processes, give them one `MEDIN_RUN_ID` and run `medin report --run ID` after them.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};

use crate::agent::{Agent, AgentContext, AgentRefError, AgentRegistry, AgentSource, AgentSpec, RegistryError};
use crate::exit::ExitStatus;
use crate::log::ActivityLog;
use crate::plan::TrafficMode;
use crate::report::reporters::{trial_label, ActivityLogReporter, MetricsText, Output, ResultParts, SummaryFile};
use crate::report::{self, Event, EventSink, Gate, Reporter, RunFolder, RunId, RunIdError};
use crate::runner::{self, RunSettings, TaskResult};
use crate::spec::{self, SpecFile, Suite};

/// Everything a run needs: the suite, the task files, where output goes, who acts, how often.
#[derive(Debug, Clone)]
pub struct Plan {
    pub suite: Suite,
    pub files: Vec<SpecFile>,
    pub settings: RunSettings,
    pub repeat: u32,
    /// The run's id (`MEDIN_RUN_ID`, or fresh); `settings.run_id` is its text.
    pub run_id: RunId,
}

/// Why a run could not be planned.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Spec(#[from] spec::SpecError),
    #[error("invalid agent `{text}` (from {origin}): {source}{}", source.help().map(|h| format!("\n  help: {h}")).unwrap_or_default())]
    Agent {
        text: String,
        origin: &'static str,
        source: AgentRefError,
    },
    #[error("{0} does not exist; give a task file or a folder of task files")]
    MissingPath(PathBuf),
    #[error("{0}")]
    RunId(#[from] RunIdError),
    /// `--record` / `--replay` (or `MEDIN_RECORD` / `MEDIN_REPLAY`) cannot be honoured.
    #[error("{0}")]
    Traffic(String),
    /// The suite's PRD is missing or invalid: no task may start.
    #[error("{0}")]
    Prd(#[from] crate::prd::PrdError),
}

impl PlanError {
    /// A value given on the command line or in the environment is a usage error; an
    /// unreadable suite or a missing path means medin cannot do the run.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            PlanError::Agent { .. } | PlanError::RunId(_) | PlanError::Traffic(_) => ExitStatus::Usage,
            PlanError::Spec(_) | PlanError::MissingPath(_) | PlanError::Prd(_) => ExitStatus::Infrastructure,
        }
    }
}

/// Plans a run of the suite at `root` with the built-in agents (see `plan_with`).
pub fn plan(root: &Path, agent_arg: Option<&str>, paths: &[PathBuf], repeat: Option<u32>) -> Result<Plan, PlanError> {
    plan_with(
        root,
        &AgentRegistry::builtin(),
        agent_arg.map(|a| (a, "--agent")),
        paths,
        repeat,
    )
}

/// Plans a run of the suite at `root`, whose agents are named from `agents`. `agent_arg`
/// (`--agent`, or the builder's default agent: its text and where it came from, for
/// messages) wins over `MEDIN_AGENT`, which wins over `medin.yaml`; tasks that pin an agent
/// keep theirs. `paths` narrows the run to those files or folders (default: every suite
/// folder). The run id is `MEDIN_RUN_ID` when it is set (checked: a safe folder name), else a
/// fresh one.
pub fn plan_with(
    root: &Path,
    agents: &AgentRegistry,
    agent_arg: Option<(&str, &'static str)>,
    paths: &[PathBuf],
    repeat: Option<u32>,
) -> Result<Plan, PlanError> {
    plan_inner(root, agents, agent_arg, paths, repeat, None)
}

/// Plans a run (as [`plan`]) under a PRD already loaded, instead of the file `medin.yaml`
/// names: `medin watch` gives every run its session's PRD (or the copy frozen with
/// `--freeze`), so a run never reads the file itself.
pub fn plan_under(
    root: &Path,
    agent_arg: Option<&str>,
    paths: &[PathBuf],
    repeat: Option<u32>,
    prd: Arc<crate::prd::LivePrd>,
) -> Result<Plan, PlanError> {
    plan_inner(
        root,
        &AgentRegistry::builtin(),
        agent_arg.map(|a| (a, "--agent")),
        paths,
        repeat,
        Some(prd),
    )
}

fn plan_inner(
    root: &Path,
    agents: &AgentRegistry,
    agent_arg: Option<(&str, &'static str)>,
    paths: &[PathBuf],
    repeat: Option<u32>,
    given_prd: Option<Arc<crate::prd::LivePrd>>,
) -> Result<Plan, PlanError> {
    // Absolute paths everywhere: run folders are logged and found again from any directory.
    let root = root
        .canonicalize()
        .map_err(|_| PlanError::MissingPath(root.to_path_buf()))?;
    let run_id = RunId::from_env()?;
    let suite = spec::load_suite_with(&root, agents)?;
    // The PRD is read first: a missing or invalid one halts the run before any task starts.
    let prd = match given_prd {
        Some(prd) => Some(prd),
        None => suite
            .prd_path()
            .map(|p| crate::prd::LivePrd::open(&p).map(Arc::new))
            .transpose()?,
    };
    // The suite's named model agents are names like the registered ones.
    let agents = &suite.agents;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env_agent = std::env::var("MEDIN_AGENT").ok().filter(|s| !s.trim().is_empty());
    let named = |text: &str, origin: &'static str| {
        agents.parse(text).map_err(|source| PlanError::Agent {
            text: text.into(),
            origin,
            source,
        })
    };
    let default_agent = if let Some((text, origin)) = agent_arg {
        AgentSource {
            spec: named(text, origin)?,
            base_dir: cwd,
        }
    } else if let Some(text) = env_agent {
        AgentSource {
            spec: named(&text, "MEDIN_AGENT")?,
            base_dir: cwd,
        }
    } else {
        AgentSource {
            spec: suite.agent.clone().unwrap_or_else(AgentSpec::oracle),
            base_dir: suite.root.clone(),
        }
    };
    let files = if paths.is_empty() {
        spec::discover(&suite)?
    } else {
        files_at(&suite, paths)?
    };
    let output = suite
        .root
        .join(suite.config.output.as_deref().unwrap_or("target/medin"));
    let traffic = TrafficMode::from_env().map_err(PlanError::Traffic)?;
    let traffic = resolve_traffic(traffic, &output)?;
    let mut settings = RunSettings::new(output, default_agent);
    settings.traffic = traffic;
    settings.agents = agents.clone();
    settings.defaults = crate::plan::SuiteDefaults {
        isolation: suite.config.isolation,
        network: suite.config.network,
        pass_env: suite.config.pass_env.clone(),
    };
    settings.run_id = run_id.to_string();
    settings.prd = prd;
    let repeat = repeat.or(suite.config.repeat).unwrap_or(1).max(1);
    Ok(Plan {
        suite,
        files,
        settings,
        repeat,
        run_id,
    })
}

impl Plan {
    /// Gives the run `id` instead of the one it was planned with (`medin watch` makes each
    /// re-run a run of its own, whatever `MEDIN_RUN_ID` says).
    pub fn set_run_id(&mut self, id: RunId) {
        self.settings.run_id = id.to_string();
        self.run_id = id;
    }

    /// Records or replays the run's model exchanges (`medin run --record`, `--replay DIR`),
    /// instead of what `MEDIN_RECORD` / `MEDIN_REPLAY` asked.
    pub fn set_traffic(&mut self, mode: TrafficMode) -> Result<(), PlanError> {
        self.settings.traffic = resolve_traffic(mode, &self.settings.output)?;
        Ok(())
    }
}

/// A replay's source made absolute: a run folder's path, or a run id below `output`.
fn resolve_traffic(mode: TrafficMode, output: &Path) -> Result<TrafficMode, PlanError> {
    let TrafficMode::Replay { from } = mode else {
        return Ok(mode);
    };
    let by_id = from
        .to_str()
        .and_then(|text| RunId::parse(text, "a run to replay").ok())
        .map(|id| output.join("runs").join(id.to_string()));
    let folder = if from.is_dir() {
        from.clone()
    } else {
        match by_id {
            Some(folder) if folder.is_dir() => folder,
            _ => {
                return Err(PlanError::Traffic(format!(
                    "--replay {}: no such run folder (nor run id below {}); give the folder of a run made with `medin run --record`",
                    from.display(),
                    output.join("runs").display()
                )))
            }
        }
    };
    let from = folder.canonicalize().unwrap_or(folder);
    Ok(TrafficMode::Replay { from })
}

/// Task files named on the command line, with their category: the suite folder they are in,
/// else their parent folder's name.
fn files_at(suite: &Suite, paths: &[PathBuf]) -> Result<Vec<SpecFile>, PlanError> {
    let mut out = Vec::new();
    for p in paths {
        if !p.exists() {
            return Err(PlanError::MissingPath(p.clone()));
        }
        let abs = p.canonicalize().map_err(|_| PlanError::MissingPath(p.clone()))?;
        let yaml_files: Vec<PathBuf> = if abs.is_dir() {
            // Task directories stand for their task.yaml alone, as in discovery.
            spec::suite::yaml_files(&abs)?
        } else {
            vec![abs]
        };
        for f in yaml_files {
            out.push(spec_file_for(suite, &f));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn spec_file_for(suite: &Suite, file: &Path) -> SpecFile {
    let root = suite.root.canonicalize().unwrap_or_else(|_| suite.root.clone());
    for folder in &suite.config.suites {
        let base = root.join(folder);
        if let Ok(rel) = file.strip_prefix(&base) {
            return SpecFile {
                category: folder.clone(),
                name: name_of(rel),
                path: file.to_path_buf(),
            };
        }
    }
    // Outside the suite folders: named by the file (a task directory by itself), in the
    // category of the folder it is in.
    let task_dir = spec::taskdir::task_dir_of(file);
    let named = task_dir.unwrap_or(file);
    let category = named
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    let name = match task_dir {
        Some(dir) => dir.file_name(),
        None => file.file_stem(),
    }
    .map(|n| n.to_string_lossy().into_owned())
    .unwrap_or_default();
    SpecFile {
        category,
        name,
        path: file.to_path_buf(),
    }
}

fn name_of(rel: &Path) -> String {
    spec::suite::task_name(rel)
}

/// Writes the JSON Schemas of task files and `medin.yaml` into the output folder, so the
/// yaml-language-server modelines of the bundled suite resolve after the first run. Atomic:
/// the processes of one run all write them.
pub fn write_schemas(output: &Path) -> std::io::Result<()> {
    use crate::report::run::atomic_write;
    atomic_write(
        &output.join("medin-task.schema.json"),
        spec::schema::task_schema_json().as_bytes(),
    )?;
    atomic_write(
        &output.join("medin-suite.schema.json"),
        spec::schema::suite_schema_json().as_bytes(),
    )
}

/// The names of the trials a plan makes, sorted.
pub fn trial_names(plan: &Plan) -> Vec<String> {
    let mut names: Vec<String> = plan
        .files
        .iter()
        .flat_map(|f| (1..=plan.repeat).map(move |a| trial_name(f, a, plan.repeat)))
        .collect();
    names.sort();
    names
}

/// The trial name of attempt `attempt` of `file` (`#n` suffix only when repeating).
pub fn trial_name(file: &SpecFile, attempt: u32, repeat: u32) -> String {
    if repeat > 1 {
        format!("{}#{attempt}", file.trial_name())
    } else {
        file.trial_name()
    }
}

/// One trial of a plan: attempt `attempt` of `file`.
#[derive(Debug, Clone)]
pub struct PlannedTrial {
    /// The name shown and filtered on (`<category>::<name>`, `#n` when repeating), inert.
    pub name: String,
    pub file: SpecFile,
    pub attempt: u32,
}

/// Drives a planned run: runs its trials (whoever schedules them) and finishes it. The record
/// of the run — `ACTIVITY_LOG.md`, the result part of each trial, `summary.json` — is always
/// kept; how the run is shown is up to the reporters the caller adds.
#[derive(Debug)]
pub struct Driver {
    plan: Plan,
    folder: RunFolder,
}

impl Driver {
    /// A driver for `plan` that reports to the run's record and then to `reporters`, in order.
    pub fn new(mut plan: Plan, reporters: Vec<Arc<dyn Reporter>>) -> Self {
        let output = &plan.settings.output;
        let folder = RunFolder::new(output, plan.run_id.clone());
        let max_size = plan
            .suite
            .config
            .activity_log
            .as_ref()
            .and_then(|a| a.max_size)
            .map_or(crate::log::activity::DEFAULT_MAX_SIZE, |s| s.0);
        let mut all: Vec<Arc<dyn Reporter>> = vec![
            Arc::new(ActivityLogReporter::new(
                ActivityLog::new(output.join("ACTIVITY_LOG.md")).with_max_size(max_size),
                plan.run_id.to_string(),
            )),
            Arc::new(ResultParts::new(folder.clone())),
            Arc::new(SummaryFile),
            Arc::new(crate::report::results::ResultsFile::new(whole_suite_hash(&plan.suite))),
        ];
        all.extend(reporters);
        plan.settings.events = EventSink::new(all);
        Driver { plan, folder }
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The run folder every trial of this run writes into.
    pub fn folder(&self) -> &RunFolder {
        &self.folder
    }

    /// The trials of the plan, sorted by name.
    pub fn trials(&self) -> Vec<PlannedTrial> {
        let repeat = self.plan.repeat;
        let mut trials: Vec<PlannedTrial> = self
            .plan
            .files
            .iter()
            .flat_map(|f| {
                (1..=repeat).map(move |attempt| PlannedTrial {
                    name: trial_label(&f.trial_name(), attempt, repeat),
                    file: f.clone(),
                    attempt,
                })
            })
            .collect();
        trials.sort_by(|a, b| a.name.cmp(&b.name));
        trials
    }

    /// Runs one trial, emitting its events to the run's reporters.
    pub fn run_trial(&self, trial: &PlannedTrial) -> TaskResult {
        runner::run_spec_file(&trial.file, &self.plan.settings, trial.attempt)
    }

    /// Runs `trials` on `jobs` threads (at least one), each taking the next trial not yet
    /// started; the results come back in the order the trials finished.
    pub fn run_trials(&self, trials: &[PlannedTrial], jobs: usize) -> Vec<TaskResult> {
        let next = std::sync::atomic::AtomicUsize::new(0);
        let results: Mutex<Vec<TaskResult>> = Mutex::new(Vec::new());
        std::thread::scope(|s| {
            for _ in 0..jobs.max(1).min(trials.len()) {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(trial) = trials.get(i) else { break };
                    let result = self.run_trial(trial);
                    if let Ok(mut all) = results.lock() {
                        all.push(result);
                    }
                });
            }
        });
        results.into_inner().unwrap_or_default()
    }

    /// Finishes the run after this process ran the trials of `own`: merges every result of the
    /// run folder (other processes' too, under a shared `MEDIN_RUN_ID`), computes the metrics,
    /// checks the thresholds when `gate` says so, and reports the conclusion. The exit status
    /// judges this process's own trials and the gate, so one process of a shared run is not
    /// failed for another's trial; what the reporters failed to do is printed on stderr and
    /// makes the run an infrastructure error.
    pub fn finish(&self, own: &[TaskResult], gate: Gate) -> ExitStatus {
        let own_status = report::trials_status(
            own.iter()
                .map(|r| (r.trial.as_str(), report::TrialStatus::of(r), r.flake_tolerance)),
        );
        let sink = &self.plan.settings.events;
        let gate_status = conclude_against(sink, &self.folder, &self.plan.suite, Conclusion::gated(gate))
            .map(|run| run.gate_status())
            .unwrap_or(ExitStatus::Infrastructure);
        own_status.and(gate_status).and(report_errors(sink))
    }

    /// Finishes the run gated against `baseline` (a run id or run-folder path) instead of the
    /// thresholds: only regressions from it fail the run (`medin run --baseline`).
    pub fn finish_against(&self, baseline: &str) -> ExitStatus {
        let sink = &self.plan.settings.events;
        let base = match read_run(&self.plan.settings.output, baseline) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("medin: {}", crate::inert::text(&e));
                return ExitStatus::Infrastructure;
            }
        };
        let how = Conclusion {
            baseline: Some(&base),
            ..Conclusion::gated(Gate::Thresholds)
        };
        conclude_against(sink, &self.folder, &self.plan.suite, how)
            .map(|run| run.run_status())
            .unwrap_or(ExitStatus::Infrastructure)
            .and(report_errors(sink))
    }
}

/// How a run is concluded: gated by the thresholds or not, or against a baseline's trials;
/// and what could not be read outside its folder (the inputs `medin report` merged).
struct Conclusion<'a> {
    gate: Gate,
    baseline: Option<&'a [crate::report::record::TrialRecord]>,
    unreadable_elsewhere: Vec<String>,
}

impl Conclusion<'_> {
    fn gated(gate: Gate) -> Self {
        Conclusion {
            gate,
            baseline: None,
            unreadable_elsewhere: Vec::new(),
        }
    }
}

/// Concludes the run in `folder` and emits it; an error is printed (the run cannot be judged).
/// With a baseline (its trials), the run is gated on regressions from it instead of on the
/// thresholds ([`crate::report::compare`]).
fn conclude_against(
    sink: &EventSink,
    folder: &RunFolder,
    suite: &Suite,
    how: Conclusion<'_>,
) -> Option<report::RunConclusion> {
    let output = suite
        .root
        .join(suite.config.output.as_deref().unwrap_or("target/medin"));
    let log = ActivityLog::new(output.join("ACTIVITY_LOG.md"));
    let concluded = match how.baseline {
        None => report::conclude(folder, &suite.config.thresholds, how.gate, Some(&log)),
        Some(base) => report::conclude(folder, &suite.config.thresholds, Gate::NotChecked, None).map(|mut run| {
            let comparison = crate::report::compare::compare(base, &run.trials);
            run.breaches = Some(comparison.breaches(&run.trials));
            run.against_baseline = true;
            run
        }),
    };
    match concluded {
        Ok(mut run) => {
            run.unreadable.extend(how.unreadable_elsewhere);
            // Coverage is judged by the PRD as it is now: the truth the run ended under.
            if let Some(path) = suite.prd_path() {
                match crate::prd::load(&path) {
                    Ok(prd) => run.add_coverage(&prd),
                    Err(e) => {
                        eprintln!("medin: {}", crate::inert::text(&e.to_string()));
                        run.unreadable.push(format!("{}: {}", path.display(), e));
                    }
                }
            }
            sink.emit(&Event::RunFinished(&run));
            Some(run)
        }
        Err(e) => {
            eprintln!("medin: {}", crate::inert::text(&e.to_string()));
            None
        }
    }
}

/// Prints what the reporters of `sink` failed to do; infrastructure if anything.
fn report_errors(sink: &EventSink) -> ExitStatus {
    let errors = sink.take_errors();
    for e in &errors {
        eprintln!("medin: error: {}", crate::inert::text(&e.to_string()));
    }
    if errors.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Infrastructure
    }
}

/// Finishes a run whose trials ran elsewhere (`medin report`). Without `inputs`, run `run`
/// (default: the run whose trial results were written last) below the suite's output is
/// merged; with `inputs` (run folders, `results.json` files, folders of them: the parts of
/// several shards or machines, see `report::gather`), their trials are written as the
/// parts of run `run` (default: the run id they carry) below the suite's output, joining any
/// parts it has, and that run is concluded. Either way it is gated by the thresholds of the
/// suite's `medin.yaml` (or against `baseline`), its `summary.json` and `results.json` written
/// and the conclusion given to `reporters`. The status judges every trial of the run and the
/// gate.
pub fn report_run(
    root: &Path,
    inputs: &[PathBuf],
    run: Option<&str>,
    baseline: Option<&str>,
    reporters: Vec<Arc<dyn Reporter>>,
) -> ExitStatus {
    // Absolute, so the run folder it names is found again from anywhere.
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let suite = match spec::load_suite(&root) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("medin: {}", crate::inert::text(&e.to_string()));
            return ExitStatus::Infrastructure;
        }
    };
    let output = suite
        .root
        .join(suite.config.output.as_deref().unwrap_or("target/medin"));
    let run = match run.map(|text| RunId::parse(text, "--run")).transpose() {
        Ok(run) => run,
        Err(e) => {
            eprintln!("medin: {e}");
            return ExitStatus::Usage;
        }
    };
    let mut unreadable_inputs = Vec::new();
    let folder = if inputs.is_empty() {
        match run {
            Some(id) => RunFolder::existing(&output, id),
            None => RunFolder::newest(&output),
        }
    } else {
        match merge_inputs(&output, inputs, run) {
            Ok((folder, unreadable)) => {
                unreadable_inputs = unreadable;
                Ok(folder)
            }
            Err(status) => return status,
        }
    };
    let folder = match folder {
        Ok(f) => f,
        Err(e) => {
            eprintln!("medin: {}", crate::inert::text(&e.to_string()));
            return ExitStatus::Infrastructure;
        }
    };
    let base = match baseline.map(|b| read_run(&output, b)).transpose() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("medin: {}", crate::inert::text(&e));
            return ExitStatus::Infrastructure;
        }
    };
    let mut all: Vec<Arc<dyn Reporter>> = vec![
        Arc::new(SummaryFile),
        Arc::new(crate::report::results::ResultsFile::new(whole_suite_hash(&suite))),
    ];
    all.extend(reporters);
    let sink = EventSink::new(all);
    let concluded = Conclusion {
        gate: Gate::Thresholds,
        baseline: base.as_deref(),
        unreadable_elsewhere: unreadable_inputs,
    };
    let status = conclude_against(&sink, &folder, &suite, concluded)
        .map(|run| run.run_status())
        .unwrap_or(ExitStatus::Infrastructure);
    status.and(report_errors(&sink))
}

/// Gathers the trial results at `inputs` and writes them as the parts of run `run` (default:
/// the run id they carry) below `output`. Returns the run folder and what could not be read;
/// an error is printed and answered with its exit status.
fn merge_inputs(output: &Path, inputs: &[PathBuf], run: Option<RunId>) -> Result<(RunFolder, Vec<String>), ExitStatus> {
    let gathered = crate::report::gather::gather(inputs).map_err(|e| {
        eprintln!("medin: {}", crate::inert::text(&e.to_string()));
        ExitStatus::Infrastructure
    })?;
    for d in &gathered.duplicates {
        eprintln!("medin: warning: {}", crate::inert::line(d));
    }
    let id = match (run, gathered.run_ids.as_slice()) {
        (Some(id), _) => id,
        (None, [id]) => id.clone(),
        (None, []) => RunId::fresh(),
        (None, ids) => {
            let ids: Vec<&str> = ids.iter().map(RunId::as_str).collect();
            eprintln!(
                "medin: the results given come from different runs ({}); name the merged run with --run ID",
                crate::inert::line(&ids.join(", "))
            );
            return Err(ExitStatus::Usage);
        }
    };
    let folder = RunFolder::new(output, id);
    for record in &gathered.records {
        if let Err(e) = folder.write_part(record) {
            eprintln!(
                "medin: cannot write the result of {} to {}: {e}",
                crate::inert::line(&record.trial),
                folder.parts_dir().display()
            );
            return Err(ExitStatus::Infrastructure);
        }
    }
    eprintln!(
        "medin: merged {} trial result{} into run {} ({})",
        gathered.records.len(),
        if gathered.records.len() == 1 { "" } else { "s" },
        folder.id(),
        folder.path().display()
    );
    Ok((folder, gathered.unreadable))
}

/// The hash of every task file of `suite` (not only the ones a filter kept), for
/// `results.json`; `None` when the suite's folders cannot be read.
fn whole_suite_hash(suite: &Suite) -> Option<String> {
    let files = spec::discover(suite).ok()?;
    let paths: Vec<PathBuf> = files.into_iter().map(|f| f.path).collect();
    Some(crate::report::results::suite_hash(&suite.root, &paths))
}

/// The trials of a run named by its id (below `output`), or by a path: its run folder, its
/// `results.json`, or a folder holding one (a CI artifact). Everything must be readable, since
/// a comparison with trials missing would be a lie.
fn read_run(output: &Path, which: &str) -> Result<Vec<crate::report::record::TrialRecord>, String> {
    let path = Path::new(which);
    let is_results =
        path.is_file() || path.join(crate::report::run::PARTS_DIR).is_dir() || path.join("results.json").is_file();
    if is_results {
        let gathered = crate::report::gather::gather(&[path.to_path_buf()]).map_err(|e| e.to_string())?;
        if !gathered.unreadable.is_empty() {
            return Err(format!(
                "{which} has unreadable trial results: {}",
                gathered.unreadable.join("; ")
            ));
        }
        return Ok(gathered.records);
    }
    let id = RunId::parse(which, "a run to compare with").map_err(|e| e.to_string())?;
    let folder = RunFolder::existing(output, id).map_err(|e| e.to_string())?;
    let parts = folder.read_parts().map_err(|e| e.to_string())?;
    if !parts.unreadable.is_empty() {
        return Err(format!(
            "run {} has unreadable trial results: {}",
            folder.id(),
            parts.unreadable.join("; ")
        ));
    }
    Ok(parts.records)
}

/// `medin compare BASE HEAD`: each a run id below the suite's output, or the path of a run
/// folder or of a `results.json`. Exit 100 on a regression, 0 otherwise, 2 when a run cannot
/// be read.
pub fn compare_runs(root: &Path, base: &str, head: &str, json: bool) -> ExitStatus {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let output = match spec::load_suite(&root) {
        Ok(suite) => suite
            .root
            .join(suite.config.output.as_deref().unwrap_or("target/medin")),
        Err(_) => root.join("target/medin"),
    };
    let (b, h) = match (read_run(&output, base), read_run(&output, head)) {
        (Ok(b), Ok(h)) => (b, h),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("medin: {}", crate::inert::text(&e));
            return ExitStatus::Infrastructure;
        }
    };
    let comparison = crate::report::compare::compare(&b, &h);
    if json {
        let text = serde_json::to_string_pretty(&comparison).unwrap_or_default();
        println!("{}", crate::inert::json(&text));
    } else {
        print!("{}", crate::report::compare::render_text(&comparison, base, head));
    }
    if comparison.regressions.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failed
    }
}

/// A harness for a suite of YAML tasks and the agents its tasks can name: how an embedding
/// crate runs medin (re-exported as `medin::Harness`).
///
/// ```no_run
/// use medin::{Action, Agent, AgentContext, AgentEvent, FinalReport, FinalResult, Harness, Receipt};
///
/// /// Gives up at once: every task it is given fails, which is what a first agent should see.
/// struct GivesUp;
///
/// impl Agent for GivesUp {
///     fn name(&self) -> String {
///         "gives-up".into()
///     }
///     fn next(&mut self, _: Option<(&Action, &Receipt)>, _: std::time::Instant) -> AgentEvent {
///         AgentEvent::Final(FinalReport { result: FinalResult::Issue, message: "not yet".into(), code: None })
///     }
///     fn finish(&mut self) {}
/// }
///
/// fn main() -> std::process::ExitCode {
///     Harness::new(env!("CARGO_MANIFEST_DIR"))
///         .agent("mine", |_: &AgentContext<'_>| GivesUp)
///         .run()
/// }
/// ```
pub struct Harness {
    root: PathBuf,
    agents: AgentRegistry,
    /// The agent for tasks that do not pin one, as `--agent` names it.
    default_agent: Option<String>,
    /// The first agent that could not be registered: the harness runs nothing with it missing.
    refused: Option<RegistryError>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("root", &self.root)
            .field("agents", &self.agents)
            .field("default_agent", &self.default_agent)
            .finish_non_exhaustive()
    }
}

/// Why a [`Harness`] could not run.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// An agent could not be registered (an invalid or a taken name).
    #[error("cannot register the agent: {0}")]
    Register(#[from] RegistryError),
    /// The run could not be planned: `medin.yaml`, a path, the agent named, `MEDIN_RUN_ID`.
    #[error("{message}")]
    Plan { message: String, status: ExitStatus },
}

impl HarnessError {
    /// The exit status this error ends a run with.
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            HarnessError::Register(_) => ExitStatus::Usage,
            HarnessError::Plan { status, .. } => *status,
        }
    }
}

impl From<PlanError> for HarnessError {
    fn from(e: PlanError) -> Self {
        HarnessError::Plan {
            message: e.to_string(),
            status: e.exit_status(),
        }
    }
}

impl Harness {
    /// A harness for the suite at `root` (the folder of its `medin.yaml`), knowing the built-in
    /// agents: `oracle`, `process:CMD`, `exec:CMD`.
    pub fn new(root: impl AsRef<Path>) -> Self {
        Harness {
            root: root.as_ref().to_path_buf(),
            agents: AgentRegistry::builtin(),
            default_agent: None,
            refused: None,
        }
    }

    /// Registers an agent written in Rust under `name`. `medin.yaml`'s `agent:`, a task's
    /// `agent:`, `MEDIN_AGENT` and [`Harness::default_agent`] can then name it as `name`, or
    /// `name:ARG` ([`AgentContext::arg`] gives `ARG`). `factory` makes one agent per attempt
    /// (any [`Agent`], a `Box<dyn Agent>` too); it runs in the harness process and every
    /// action it takes goes through the guard and the sandbox like any other agent's.
    ///
    /// A name must start with a lowercase letter and hold only lowercase letters, digits, `-`
    /// and `_`, and be free (`oracle`, `process` and `exec` are taken): otherwise the harness
    /// refuses to run and says why.
    pub fn agent<F, A>(mut self, name: &str, factory: F) -> Self
    where
        F: Fn(&AgentContext<'_>) -> A + Send + Sync + 'static,
        A: Agent + 'static,
    {
        let factory = move |context: &AgentContext<'_>| Box::new(factory(context)) as Box<dyn Agent>;
        if let Err(e) = self.agents.register_factory(name, Arc::new(factory)) {
            self.refused.get_or_insert(e);
        }
        self
    }

    /// The agent for tasks that do not pin one, written as `--agent` takes it (`mine`,
    /// `process:python3 agent.py`). Like `--agent`, it wins over `MEDIN_AGENT` and over
    /// `medin.yaml`'s `agent:`; without it, those decide (the oracle when neither is set).
    pub fn default_agent(mut self, agent: &str) -> Self {
        self.default_agent = Some(agent.to_string());
        self
    }

    /// Runs the suite as a libtest harness (the `main` of a `harness = false` test target):
    /// one trial per task, libtest's flags read from the command line (`--list`, `--exact`,
    /// `--ignored`, filters; so `cargo nextest` works), the suite metrics printed and the
    /// thresholds checked on a whole run. The exit code follows [`ExitStatus`].
    pub fn run(self) -> ExitCode {
        match <Arguments as clap::Parser>::try_parse() {
            Ok(args) => self.run_libtest(args),
            Err(e) => {
                let _ = e.print();
                if e.use_stderr() {
                    ExitStatus::Usage.into()
                } else {
                    ExitStatus::Success.into()
                }
            }
        }
    }

    /// Runs the task files (or folders of them) at `paths`, relative to the suite root when
    /// they are relative, and returns their results, sorted by trial, without exiting: for a
    /// Rust test. The run
    /// is recorded like any other (run folder, `ACTIVITY_LOG.md`, `summary.json`); thresholds
    /// are not checked (a hand-picked set of tasks says nothing about the suite).
    pub fn run_tasks<P: AsRef<Path>>(&self, paths: &[P]) -> Result<Vec<TaskResult>, HarnessError> {
        let paths: Vec<PathBuf> = paths.iter().map(|p| self.root.join(p.as_ref())).collect();
        if paths.is_empty() {
            return Ok(Vec::new());
        }
        self.run_selected(&paths, |_| true)
    }

    /// Runs the trials of the suite whose name contains `filter` (as `cargo test FILTER`
    /// selects them: `golden::gt-002`) and returns their results without exiting. Recorded,
    /// and not gated, as [`Harness::run_tasks`].
    pub fn run_filtered(&self, filter: &str) -> Result<Vec<TaskResult>, HarnessError> {
        self.run_selected(&[], |trial| trial.name.contains(filter))
    }

    fn plan(&self, paths: &[PathBuf]) -> Result<Plan, HarnessError> {
        if let Some(e) = &self.refused {
            return Err(HarnessError::Register(e.clone()));
        }
        let default_agent = self.default_agent.as_deref().map(|a| (a, "Harness::default_agent"));
        Ok(plan_with(&self.root, &self.agents, default_agent, paths, None)?)
    }

    fn run_selected(
        &self,
        paths: &[PathBuf],
        keep: impl Fn(&PlannedTrial) -> bool,
    ) -> Result<Vec<TaskResult>, HarnessError> {
        let driver = Driver::new(self.plan(paths)?, Vec::new());
        let trials: Vec<PlannedTrial> = driver.trials().into_iter().filter(|t| keep(t)).collect();
        let jobs = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        let mut results = driver.run_trials(&trials, jobs);
        results.sort_by(|a, b| (&a.trial, a.attempt).cmp(&(&b.trial, b.attempt)));
        if !results.is_empty() {
            // The run's record (summary.json); the verdicts are in the results.
            driver.finish(&results, Gate::NotChecked);
        }
        Ok(results)
    }

    /// The libtest harness with the given arguments.
    fn run_libtest(self, args: Arguments) -> ExitCode {
        let plan = match self.plan(&[]) {
            Ok(p) => p,
            Err(e) => {
                // One failing trial carries the message, so `cargo test` shows it in place.
                let msg = crate::inert::text(&e.to_string()).into_owned();
                let trial = Trial::test("suite::medin.yaml", move || Err(Failed::from(msg)));
                let listed = libtest_mimic::run(&args, vec![trial]);
                return if args.list {
                    listed.exit_code()
                } else {
                    e.exit_status().into()
                };
            }
        };
        if let Err(e) = write_schemas(&plan.settings.output) {
            eprintln!(
                "medin: warning: cannot write the JSON Schemas to {}: {e}",
                plan.settings.output.display()
            );
        }
        // libtest prints the trial lines and the tally itself; the metrics are medin's.
        let driver = Arc::new(Driver::new(plan, vec![Arc::new(MetricsText::new(Output::stdout()))]));
        let results: Arc<Mutex<Vec<TaskResult>>> = Arc::new(Mutex::new(Vec::new()));
        let trials: Vec<Trial> = driver
            .trials()
            .into_iter()
            .map(|planned| {
                let (driver, results) = (Arc::clone(&driver), Arc::clone(&results));
                Trial::test(planned.name.clone(), move || {
                    let result = driver.run_trial(&planned);
                    let message = result.failure_message();
                    if let Ok(mut all) = results.lock() {
                        all.push(result);
                    }
                    match message {
                        None => Ok(()),
                        Some(m) => Err(Failed::from(m)),
                    }
                })
            })
            .collect();
        let whole_run = args.filter.is_none() && args.skip.is_empty() && !args.exact && !args.list && !args.ignored;
        let conclusion = libtest_mimic::run(&args, trials);
        if args.list {
            return conclusion.exit_code();
        }
        let results = results.lock().map(|r| r.clone()).unwrap_or_default();
        // A trial that libtest saw fail outside the runner (it cannot, but libtest would say
        // so). The runner's own failures are judged by `finish`, which knows the tasks'
        // `flake_tolerance`: a tolerated failing attempt shows as FAILED in libtest's list and
        // does not fail the run.
        let runner_failures = results.iter().filter(|r| !r.passed()).count() as u64;
        let libtest_status = if conclusion.num_failed > runner_failures {
            ExitStatus::Failed
        } else {
            ExitStatus::Success
        };
        if results.is_empty() {
            return libtest_status.into();
        }
        let gate = if whole_run { Gate::Thresholds } else { Gate::NotChecked };
        driver.finish(&results, gate).and(libtest_status).into()
    }
}

/// Runs the suite at `root`, with the built-in agents, as a libtest harness with the given
/// arguments; exits by the exit-code table (`crate::exit`).
pub fn run_suite(root: &Path, args: Arguments) -> ExitCode {
    Harness::new(root).run_libtest(args)
}
