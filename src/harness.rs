//! The `cargo test` integration: a suite of YAML tasks becomes libtest trials (via
//! libtest-mimic), named `<category>::<path-without-extension>` and sorted, so `--list`,
//! `--exact`, `--ignored`, name filters and `cargo nextest` (listing, one process per test,
//! `--partition hash:m/n`) all work. After the trials, the suite metrics are printed and the
//! thresholds of `medin.yaml` checked; a breach fails the run.
//!
//! Any crate can run its own suite with a test target like this one (`harness = false`):
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     medin::harness::run_suite_at(env!("CARGO_MANIFEST_DIR"))
//! }
//! ```
//!
//! Everything printed is inert ([`crate::inert`]): trial names (a task file may be named with
//! escape sequences) and failure messages ([`TaskResult::failure_message`]).
//!
//! Thresholds apply to whole runs only: when a filter, `--exact` or `--skip` narrows the trials
//! (as nextest does, one trial per process), the metrics are still printed but not gated, since
//! a rate over a hand-picked subset says nothing about the suite.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use libtest_mimic::{Arguments, Failed, Trial};

use crate::agent::{self, AgentSource};
use crate::report;
use crate::runner::{self, RunSettings, TaskResult};
use crate::spec::{self, AgentSpec, SpecFile, Suite};

/// Everything a run needs: the suite, the task files, where output goes, who acts, how often.
#[derive(Debug, Clone)]
pub struct Plan {
    pub suite: Suite,
    pub files: Vec<SpecFile>,
    pub settings: RunSettings,
    pub repeat: u32,
}

/// Why a run could not be planned (exit code 2 territory).
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    Spec(#[from] spec::SpecError),
    #[error("invalid agent `{text}` (from {origin}): {reason}")]
    Agent {
        text: String,
        origin: &'static str,
        reason: String,
    },
    #[error("{0} does not exist; give a task file or a folder of task files")]
    MissingPath(PathBuf),
}

/// Plans a run of the suite at `root`. `agent_arg` (`--agent`) wins over `MEDIN_AGENT`, which
/// wins over `medin.yaml`; tasks that pin an agent keep theirs. `paths` narrows the run to
/// those files or folders (default: every suite folder).
pub fn plan(root: &Path, agent_arg: Option<&str>, paths: &[PathBuf], repeat: Option<u32>) -> Result<Plan, PlanError> {
    // Absolute paths everywhere: run folders are logged and found again from any directory.
    let root = root
        .canonicalize()
        .map_err(|_| PlanError::MissingPath(root.to_path_buf()))?;
    let suite = spec::load_suite(&root)?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let env_agent = std::env::var("MEDIN_AGENT").ok().filter(|s| !s.trim().is_empty());
    let default_agent = if let Some(text) = agent_arg {
        let spec = agent::parse_agent_arg(text).map_err(|reason| PlanError::Agent {
            text: text.into(),
            origin: "--agent",
            reason,
        })?;
        AgentSource { spec, base_dir: cwd }
    } else if let Some(text) = env_agent {
        let spec = agent::parse_agent_arg(&text).map_err(|reason| PlanError::Agent {
            text: text.clone(),
            origin: "MEDIN_AGENT",
            reason,
        })?;
        AgentSource { spec, base_dir: cwd }
    } else {
        AgentSource {
            spec: suite.config.agent.clone().unwrap_or(AgentSpec::Oracle),
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
    let mut settings = RunSettings::new(output, default_agent);
    settings.isolation = suite.config.isolation;
    let repeat = repeat.or(suite.config.repeat).unwrap_or(1).max(1);
    Ok(Plan {
        suite,
        files,
        settings,
        repeat,
    })
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
            walkdir::WalkDir::new(&abs)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .map(|e| e.into_path())
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect()
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
    let category = file
        .parent()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "tasks".into());
    let name = file
        .file_stem()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    SpecFile {
        category,
        name,
        path: file.to_path_buf(),
    }
}

fn name_of(rel: &Path) -> String {
    let no_ext = rel.with_extension("");
    no_ext
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

/// Writes the JSON Schemas of task files and `medin.yaml` into the output folder, so the
/// yaml-language-server modelines of the bundled suite resolve after the first run.
pub fn write_schemas(output: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(output)?;
    std::fs::write(output.join("medin-task.schema.json"), spec::schema::task_schema_json())?;
    std::fs::write(
        output.join("medin-suite.schema.json"),
        spec::schema::suite_schema_json(),
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

/// Runs the suite at `root` as a libtest harness, reading libtest's flags from the command line.
pub fn run_suite_at(root: impl AsRef<Path>) -> ExitCode {
    run_suite(root.as_ref(), Arguments::from_args())
}

/// Runs the suite at `root` with the given libtest arguments.
pub fn run_suite(root: &Path, args: Arguments) -> ExitCode {
    let plan = match plan(root, None, &[], None) {
        Ok(p) => p,
        Err(e) => {
            // One failing trial carries the message, so `cargo test` shows it in place.
            let msg = crate::inert::text(&e.to_string()).into_owned();
            let trial = Trial::test("suite::medin.yaml", move || Err(Failed::from(msg)));
            return libtest_mimic::run(&args, vec![trial]).exit_code();
        }
    };
    if let Err(e) = write_schemas(&plan.settings.output) {
        eprintln!(
            "medin: warning: cannot write the JSON Schemas to {}: {e}",
            plan.settings.output.display()
        );
    }
    let results: Arc<Mutex<Vec<TaskResult>>> = Arc::new(Mutex::new(Vec::new()));
    let settings = Arc::new(plan.settings.clone());
    let mut trials = Vec::new();
    for file in &plan.files {
        for attempt in 1..=plan.repeat {
            let (file, settings, results) = (file.clone(), Arc::clone(&settings), Arc::clone(&results));
            // libtest prints the name as it is: a file name is anyone's text.
            let name = crate::inert::line(&trial_name(&file, attempt, plan.repeat)).into_owned();
            trials.push(Trial::test(name, move || {
                let result = runner::run_spec_file(&file, &settings, attempt);
                let message = result.failure_message();
                if let Ok(mut all) = results.lock() {
                    all.push(result);
                }
                match message {
                    None => Ok(()),
                    Some(m) => Err(Failed::from(m)),
                }
            }));
        }
    }
    trials.sort_by(|a, b| a.name().cmp(b.name()));
    let whole_run = args.filter.is_none() && args.skip.is_empty() && !args.exact && !args.list && !args.ignored;
    let conclusion = libtest_mimic::run(&args, trials);
    if args.list {
        return conclusion.exit_code();
    }
    let results = results.lock().map(|r| r.clone()).unwrap_or_default();
    if results.is_empty() {
        return conclusion.exit_code();
    }
    let run_folder = settings.output.join("runs").join(&settings.run_id);
    let breaches = match report::conclude(&results, &plan.suite.config.thresholds, whole_run, &run_folder) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("medin: warning: {e}");
            Vec::new()
        }
    };
    if !breaches.is_empty() {
        eprintln!("medin: {} threshold(s) breached; failing the run", breaches.len());
        return ExitCode::from(101);
    }
    conclusion.exit_code()
}
