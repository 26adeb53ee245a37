//! The `medin` command line: a thin layer over the library. What it prints of a task's,
//! an agent's or a command's text is inert (`medin::internal::inert`).
//!
//! Every command exits by the one table of [`medin::ExitStatus`] (documented in the README,
//! "Exit codes"); a command line clap rejects exits [`ExitStatus::Usage`]. The command-line
//! types (clap) live here and nowhere else: the library takes plain values.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use medin::internal::exit::HELP;
use medin::internal::harness::{self, Driver};
use medin::internal::log::correct::{correct_false_positive, false_positive_rate, DEFAULT_FALSE_POSITIVE_ALERT};
use medin::internal::log::query;
use medin::internal::log::status::{self, CategoryFilter, StatusFilter, StatusFormat};
use medin::internal::log::{ActivityLog, EntryStatus};
use medin::internal::partition::Partition;
use medin::internal::plan::TrafficMode;
use medin::internal::report::github::{Annotations, StepSummary};
use medin::internal::report::html::HtmlFile;
use medin::internal::report::junit::JunitFile;
use medin::internal::report::reporters::{FailureDigest, LibtestLine, MetricsText, Output, Progress, SummaryJson};
use medin::internal::report::{Gate, Reporter};
use medin::internal::sandbox::{ExecArgs, Isolation};
use medin::internal::testparse::ParseTestsError;
use medin::internal::watch::{self, WatchOptions};
use medin::internal::{inert, spec};
use medin::ExitStatus;

#[derive(Parser)]
#[command(
    name = "medin",
    version,
    about = "Evaluate AI coding agents the way cargo test evaluates code",
    after_help = HELP
)]
struct Cli {
    /// The suite directory (holding medin.yaml).
    #[arg(long, global = true, default_value = ".")]
    suite: PathBuf,
    #[command(subcommand)]
    command: Command,
}

/// How the trials of `medin run` and `medin watch` run: the agent, how many at once, how often.
#[derive(Args, Debug)]
struct TrialArgs {
    /// Agent for tasks that do not pin one: oracle | process:CMD | exec:CMD | openai:MODEL | anthropic:MODEL | a named agent of medin.yaml (overrides MEDIN_AGENT).
    #[arg(long)]
    agent: Option<String>,
    /// Trials run at once (default: number of CPUs).
    #[arg(long, short)]
    jobs: Option<usize>,
    /// Attempts per task (overrides medin.yaml `repeat`).
    #[arg(long)]
    repeat: Option<u32>,
}

#[derive(Subcommand)]
enum Command {
    /// Run tasks (default: the whole suite) and print the metrics. The run id is MEDIN_RUN_ID
    /// when set (processes sharing it write into one run folder), else a fresh one.
    #[command(after_help = HELP)]
    Run {
        /// Task files or folders (default: the suite folders of medin.yaml).
        paths: Vec<PathBuf>,
        #[command(flatten)]
        trials: TrialArgs,
        /// Also write the run's results as JUnit XML to this file (one test case per task).
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Gate on regressions from this run (an id or a run-folder path) instead of on the
        /// thresholds (see `medin report --baseline`).
        #[arg(long, value_name = "RUN")]
        baseline: Option<String>,
        /// Keep every model exchange of the run as a cassette in each attempt's folder
        /// (`cassette.jsonl`: request, response, timing; keys stripped), to replay later
        /// (same as MEDIN_RECORD=1).
        #[arg(long, conflicts_with = "replay")]
        record: bool,
        /// Serve model agents from the cassettes of this run (a folder or a run id) instead of
        /// the network: a request that differs from its recording is a harness error naming
        /// the first differing field (same as MEDIN_REPLAY=DIR).
        #[arg(long, value_name = "RUN")]
        replay: Option<PathBuf>,
        /// Also write the run's HTML report, to FILE or to <run folder>/report.html (here a
        /// FILE takes `=`, so a task path after the flag is never taken for it).
        #[arg(long, value_name = "FILE", num_args = 0..=1, require_equals = true)]
        html: Option<Option<PathBuf>>,
        /// Run only shard k of N: `hash:k/N` (by a hash of the task's name) or `count:k/N`
        /// (round-robin over the sorted tasks). A partial run is not gated: run `medin report`
        /// over every shard's results.
        #[arg(long, value_name = "hash:k/N|count:k/N")]
        partition: Option<String>,
    },
    /// Run the suite, then watch its task files, fixtures, medin.yaml and PRD and re-run what
    /// each change affects (each re-run a run of its own), until killed or `quit` on stdin.
    /// Stdin also takes `freeze` and `unfreeze` (PRD changes ignored or looked at again).
    #[command(after_help = HELP)]
    Watch {
        /// The suite directory (default: --suite, else the current directory).
        suite_dir: Option<PathBuf>,
        /// Ignore PRD changes until `unfreeze` is read on stdin (or the file .medin-unfreeze
        /// appears beside medin.yaml); a change made meanwhile is reloaded then.
        #[arg(long)]
        freeze: bool,
        #[command(flatten)]
        trials: TrialArgs,
    },
    /// Merge the trial results of a run (every process that shared its MEDIN_RUN_ID, or the
    /// run folders and results.json files given), print the suite metrics, check the
    /// thresholds of medin.yaml, write the run's summary.json and results.json.
    #[command(after_help = HELP)]
    Report {
        /// Run folders, results.json files, or folders of them (CI artifacts downloaded from
        /// several shards or machines): merged into one run below the suite's output (named by
        /// --run, else by the run id they carry). Default: a run of the suite's output.
        inputs: Vec<PathBuf>,
        /// The run id (default: the run whose trial results were written last; with INPUTS:
        /// their run id).
        #[arg(long)]
        run: Option<String>,
        /// Print the run summary as JSON (what summary.json holds) instead of the metrics.
        #[arg(long)]
        json: bool,
        /// Also write the run's results as JUnit XML to this file (one test case per task).
        #[arg(long, value_name = "FILE")]
        junit: Option<PathBuf>,
        /// Gate on regressions from this run (an id or a run-folder path) instead of on the
        /// thresholds: a golden task that now fails, or a category drop beyond chance.
        #[arg(long, value_name = "RUN")]
        baseline: Option<String>,
        /// Also write the run's HTML report (one self-contained file: metrics, charts, the
        /// trials, each transcript), to FILE or to <run folder>/report.html.
        #[arg(long, value_name = "FILE", num_args = 0..=1)]
        html: Option<Option<PathBuf>>,
    },
    /// Compare two runs (run ids or run-folder paths): per-task flips, per-category success
    /// rates with 95% intervals; exit 100 on a regression (a golden task that now fails, or a
    /// category drop a one-sided Fisher test puts below p = 0.05).
    #[command(after_help = HELP)]
    Compare {
        /// The baseline run (e.g. the last run of main).
        base: String,
        /// The run to judge against it.
        head: String,
        /// Print the comparison as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Lint task files: report every error with file:line:col (exit 100 when any has errors).
    Check {
        /// Task files or folders (default: the suite folders).
        paths: Vec<PathBuf>,
    },
    /// Show the activity log.
    Status {
        /// Only tasks whose id contains this text.
        #[arg(long)]
        task: Option<String>,
        /// Only failed or errored entries.
        #[arg(long)]
        failed: bool,
        /// Only entries of a kind (task, error, validation, self-healing, correction, prd) or of a
        /// suite category (golden, adversarial, ...). Corrections show only when asked for.
        #[arg(long)]
        category: Option<String>,
        /// Only entries with this status: passed, failed, error, pending, skipped (after
        /// corrections).
        #[arg(long, value_parser = parse_entry_status)]
        status: Option<EntryStatus>,
        /// Only entries since an RFC 3339 time, a date (2026-01-19) or an age (2h, 7d).
        #[arg(long)]
        since: Option<String>,
        /// Only entries until an RFC 3339 time, a date or an age, as --since.
        #[arg(long)]
        until: Option<String>,
        /// The newest N entries (default 10 for the table, all for json).
        #[arg(long)]
        limit: Option<usize>,
        #[arg(long, value_enum, default_value = "table")]
        format: FormatArg,
        /// The activity log (default: <suite>/target/medin/ACTIVITY_LOG.md); its archives
        /// beside it are read too.
        #[arg(long)]
        log: Option<PathBuf>,
    },
    /// Work on the activity log.
    Log {
        #[command(subcommand)]
        action: LogAction,
    },
    /// Judge shell commands with the guard (exit 0 allow, 1 warn, 2 block; --hook claude answers a
    /// Claude Code PreToolUse hook).
    Guard {
        /// Print the verdict as JSON.
        #[arg(long)]
        json: bool,
        /// Read one command per line on stdin, print one JSON verdict per line.
        #[arg(long)]
        jsonl: bool,
        /// Answer a hook event read on stdin (`claude`).
        #[arg(long)]
        hook: Option<String>,
        /// The workspace commands run in (default: the current directory).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// The command to judge.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// Show what sandboxing this machine supports and the isolation level tasks will get.
    Doctor {
        /// Print JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Install CLI agents (claude-code, codex, gemini-cli, aider) at their pinned versions into
    /// medin's cache (`target/medin/agents`, or MEDIN_AGENTS_DIR); each line printed is an
    /// installed program. Runs also install a CLI on first use. Exit 0: all installed; 2: one
    /// could not be (the message says what fixes it).
    Agents {
        #[command(subcommand)]
        action: AgentsAction,
    },
    /// Run one command exactly as a task would and print its receipt as JSON:
    /// medin exec [--isolation strict] [--memory 64MiB] ... -- CMD ARGS...
    Exec(ExecCli),
    /// Print the JSON Schema of task files (or of medin.yaml with --suite-file, or of a run's
    /// results.json with --results).
    Schema {
        #[arg(long, conflicts_with = "results")]
        suite_file: bool,
        #[arg(long)]
        results: bool,
    },
    /// Turn benchmark task directories into medin task directories (exit 0: all imported
    /// cleanly; 100: some need hand edits, listed per task; 2: unreadable input).
    #[command(after_help = HELP)]
    Import {
        /// The benchmark's task format.
        #[arg(value_enum)]
        format: FormatName,
        /// One task directory, or a folder of them.
        dir: PathBuf,
        /// The suite folder the medin task directories are written into (default: `imported`).
        #[arg(long, value_name = "SUITE_FOLDER", default_value = "imported")]
        out: PathBuf,
    },
    /// Parse a test runner's output (cargo test, nextest, pytest, unittest, node, jest, go test,
    /// TAP, JUnit XML) and print the report as JSON.
    ParseTests {
        /// The output to parse: a file, or `-` for stdin.
        input: PathBuf,
        /// The runner: libtest|nextest|pytest|unittest|tap|node|jest|go|junit (default: detect).
        #[arg(long)]
        framework: Option<String>,
        /// The runner's exit code, to cross-check the parse.
        #[arg(long, allow_hyphen_values = true)]
        exit_code: Option<i32>,
    },
}

/// `medin log ...`.
#[derive(Subcommand, Debug)]
enum AgentsAction {
    /// Install the named CLI agents (all four with --all); already installed ones are kept.
    Install {
        names: Vec<String>,
        #[arg(long, conflicts_with = "names")]
        all: bool,
    },
    /// List the CLI agents medin knows, their pinned versions and whether they are installed.
    List,
}

#[derive(Subcommand, Debug)]
enum LogAction {
    /// Append a retroactive correction of an entry: `status` and the false-positive rate
    /// honour it (the entry itself is never edited).
    Correct {
        /// The entry's id (first column of `medin status`), or a unique prefix of 4+ digits.
        entry: String,
        /// The entry said passed but the task did not work.
        #[arg(long, required = true)]
        false_positive: bool,
        /// What showed it was wrong.
        #[arg(long)]
        reason: String,
        /// The activity log (default: <suite>/target/medin/ACTIVITY_LOG.md).
        #[arg(long)]
        log: Option<PathBuf>,
    },
}

fn parse_entry_status(text: &str) -> Result<EntryStatus, String> {
    EntryStatus::parse(text).ok_or_else(|| {
        format!(
            "`{text}` is not a status; use one of: {}",
            EntryStatus::ALL.map(|s| s.as_str()).join(", ")
        )
    })
}

/// `medin status --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatArg {
    Table,
    Json,
    Markdown,
}

impl From<FormatArg> for StatusFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Table => StatusFormat::Table,
            FormatArg::Json => StatusFormat::Json,
            FormatArg::Markdown => StatusFormat::Markdown,
        }
    }
}

/// The format of `medin import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum FormatName {
    TerminalBench,
    Harbor,
}

impl From<FormatName> for medin::internal::import::Format {
    fn from(f: FormatName) -> Self {
        match f {
            FormatName::TerminalBench => Self::TerminalBench,
            FormatName::Harbor => Self::Harbor,
        }
    }
}

/// `--isolation` of `medin exec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum IsolationArg {
    None,
    Process,
    Strict,
}

impl From<IsolationArg> for Isolation {
    fn from(i: IsolationArg) -> Self {
        match i {
            IsolationArg::None => Isolation::None,
            IsolationArg::Process => Isolation::Process,
            IsolationArg::Strict => Isolation::Strict,
        }
    }
}

/// Arguments of `medin exec`.
#[derive(Debug, Clone, clap::Args)]
struct ExecCli {
    /// The workspace the command runs in (default: the current directory).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// none | process | strict (default: the strongest this machine supports, as for tasks;
    /// `medin doctor` names it).
    #[arg(long, value_enum)]
    isolation: Option<IsolationArg>,
    /// Allow network access (strict mode otherwise gives the command no network).
    #[arg(long)]
    network: bool,
    /// Memory limit, e.g. 64MiB (default 1GiB of address space per process; setting it puts
    /// the command in a memory cgroup, where the limit holds for the whole tree).
    #[arg(long)]
    memory: Option<String>,
    /// CPU-time limit, e.g. 5s (default none).
    #[arg(long)]
    cpu: Option<String>,
    /// Wall-clock timeout, e.g. 10s (default 30s).
    #[arg(long)]
    timeout: Option<String>,
    /// Largest file the command may write, e.g. 1MiB (default 256MiB).
    #[arg(long)]
    file_size: Option<String>,
    /// Processes alive at once (default 1024; puts the command in its own cgroup, which is
    /// otherwise done only at `strict`).
    #[arg(long)]
    max_procs: Option<u64>,
    /// Put the command in its own cgroup (pids + memory) even at `process`.
    #[arg(long)]
    cgroup: bool,
    /// Bytes of output kept per stream (default 1MiB).
    #[arg(long)]
    output: Option<String>,
    /// The command and its arguments (after `--`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<String>,
}

impl From<ExecCli> for ExecArgs {
    fn from(a: ExecCli) -> Self {
        ExecArgs {
            workspace: a.workspace,
            isolation: a.isolation.map(Isolation::from),
            network: a.network,
            memory: a.memory,
            cpu: a.cpu,
            timeout: a.timeout,
            file_size: a.file_size,
            max_procs: a.max_procs,
            cgroup: a.cgroup,
            output: a.output,
            command: a.command,
        }
    }
}

/// `medin guard --hook claude`, exactly as a Claude Code hook setting spells it: the hook runs
/// once per tool call, so it is answered without building clap's command tree (every
/// subcommand's arguments, which `medin --version` pays too). Any other spelling goes through
/// clap and gets the same answer.
fn claude_hook_fast_path() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let words = [args.next()?, args.next()?, args.next()?];
    if args.next().is_some() || words != ["guard", "--hook", "claude"] {
        return None;
    }
    let hook = medin::internal::guard::cli::GuardArgs {
        json: false,
        jsonl: false,
        hook: Some("claude".into()),
        workspace: None,
        command: Vec::new(),
    };
    Some(ExitCode::from(medin::internal::guard::cli::run(
        &hook,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )))
}

fn main() -> ExitCode {
    if let Some(code) = claude_hook_fast_path() {
        return code;
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version are answers; anything else is a wrong command line.
            let _ = e.print();
            return if e.use_stderr() {
                ExitStatus::Usage
            } else {
                ExitStatus::Success
            }
            .into();
        }
    };
    match cli.command {
        Command::Run {
            paths,
            trials: TrialArgs { agent, jobs, repeat },
            junit,
            baseline,
            record,
            replay,
            html,
            partition,
        } => {
            let traffic = match (record, replay) {
                (_, Some(from)) => Some(TrafficMode::Replay { from }),
                (true, None) => Some(TrafficMode::Record),
                (false, None) => None,
            };
            let args = RunArgs {
                paths,
                agent,
                jobs,
                repeat,
                outputs: Outputs { junit, html },
                baseline,
                partition,
                traffic,
            };
            cmd_run(&cli.suite, args).into()
        }
        Command::Watch {
            suite_dir,
            freeze,
            trials: TrialArgs { agent, jobs, repeat },
        } => {
            let options = WatchOptions {
                agent,
                jobs,
                repeat,
                freeze,
                ..WatchOptions::default()
            };
            let root = suite_dir.unwrap_or(cli.suite);
            match watch::watch(&root, options, &mut std::io::stdout()) {
                Ok(status) => status.into(),
                Err(e) => {
                    eprintln!("medin: {}", inert::text(&e.to_string()));
                    e.exit_status().into()
                }
            }
        }
        Command::Report {
            inputs,
            run,
            json,
            junit,
            baseline,
            html,
        } => {
            let mut reporters: Vec<Arc<dyn Reporter>> = if json {
                vec![Arc::new(SummaryJson::new(Output::stdout()))]
            } else {
                vec![
                    Arc::new(FailureDigest::new(Output::stdout())),
                    Arc::new(MetricsText::new(Output::stdout())),
                ]
            };
            // Where the report went is said on stderr when stdout carries the JSON.
            let said = if json {
                Output::to(std::io::stderr())
            } else {
                Output::stdout()
            };
            reporters.extend(html.map(|path| Arc::new(HtmlFile::new(path, said)) as Arc<dyn Reporter>));
            reporters.extend(ci_reporters(&cli.suite, junit));
            harness::report_run(&cli.suite, &inputs, run.as_deref(), baseline.as_deref(), reporters).into()
        }
        Command::Compare { base, head, json } => harness::compare_runs(&cli.suite, &base, &head, json).into(),
        Command::Check { paths } => cmd_check(&cli.suite, &paths).into(),
        Command::Status {
            task,
            failed,
            category,
            status,
            since,
            until,
            limit,
            format,
            log,
        } => {
            let query = StatusQuery {
                task,
                failed,
                category,
                status,
                since,
                until,
                limit,
            };
            cmd_status(&cli.suite, query, format.into(), log).into()
        }
        Command::Log {
            action:
                LogAction::Correct {
                    entry,
                    false_positive: _,
                    reason,
                    log,
                },
        } => cmd_log_correct(&cli.suite, &entry, &reason, log).into(),
        Command::Guard {
            json,
            jsonl,
            hook,
            workspace,
            command,
        } => ExitCode::from(medin::internal::guard::cli::run(
            &medin::internal::guard::cli::GuardArgs {
                json,
                jsonl,
                hook,
                workspace,
                command,
            },
            &mut std::io::stdin().lock(),
            &mut std::io::stdout().lock(),
            &mut std::io::stderr().lock(),
        )),
        Command::Doctor { json } => ExitCode::from(medin::internal::sandbox::doctor_main(json)),
        Command::Exec(args) => ExitCode::from(medin::internal::sandbox::exec_main(&args.into())),
        Command::Agents { action } => cmd_agents(action),
        Command::Schema { suite_file, results } => {
            println!(
                "{}",
                if results {
                    medin::internal::report::results_schema_json()
                } else if suite_file {
                    spec::schema::suite_schema_json()
                } else {
                    spec::schema::task_schema_json()
                }
            );
            ExitStatus::Success.into()
        }
        Command::Import { format, dir, out } => cmd_import(format.into(), &dir, &out).into(),
        Command::ParseTests {
            input,
            framework,
            exit_code,
        } => match medin::internal::testparse::parse_tests_command(&input, framework.as_deref(), exit_code) {
            Ok(json) => {
                println!("{}", inert::json(&json));
                ExitStatus::Success.into()
            }
            Err(e) => {
                eprintln!("medin: {}", inert::text(&e.to_string()));
                match e {
                    ParseTestsError::Framework(_) => ExitStatus::Usage,
                    _ => ExitStatus::Infrastructure,
                }
                .into()
            }
        },
    }
}

/// The reporters for CI of a finished run: JUnit XML when asked for, and inside GitHub Actions
/// the job summary and an error annotation per failed trial.
fn ci_reporters(root: &std::path::Path, junit: Option<PathBuf>) -> Vec<Arc<dyn Reporter>> {
    let mut out: Vec<Arc<dyn Reporter>> = Vec::new();
    if let Some(path) = junit {
        out.push(Arc::new(JunitFile::new(path)));
    }
    if let Some(summary) = StepSummary::from_env() {
        out.push(Arc::new(summary));
    }
    if let Some(annotations) = Annotations::from_env(Output::stdout(), root) {
        out.push(Arc::new(annotations));
    }
    out
}

/// The report files `medin run` writes besides the run folder's own.
struct Outputs {
    /// `--junit FILE`.
    junit: Option<PathBuf>,
    /// `--html[=FILE]`: `Some(None)` for the run folder's `report.html`.
    html: Option<Option<PathBuf>>,
}

/// What `medin run` was given.
struct RunArgs {
    paths: Vec<PathBuf>,
    agent: Option<String>,
    jobs: Option<usize>,
    repeat: Option<u32>,
    outputs: Outputs,
    baseline: Option<String>,
    partition: Option<String>,
    /// `--record` / `--replay`: None leaves MEDIN_RECORD / MEDIN_REPLAY in charge.
    traffic: Option<TrafficMode>,
}

fn cmd_run(root: &std::path::Path, args: RunArgs) -> ExitStatus {
    let RunArgs {
        paths,
        agent,
        jobs,
        repeat,
        outputs,
        baseline,
        partition,
        traffic,
    } = args;
    let partition = match partition.map(|p| p.parse::<Partition>()).transpose() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("medin: {e}");
            return ExitStatus::Usage;
        }
    };
    if partition.is_some() && baseline.is_some() {
        eprintln!(
            "medin: --baseline judges a whole run and --partition runs one shard of it: run the shards, then `medin report PARTS... --baseline RUN`"
        );
        return ExitStatus::Usage;
    }
    let planned = harness::plan(root, agent.as_deref(), &paths, repeat).and_then(|mut plan| {
        if let Some(mode) = traffic {
            plan.set_traffic(mode)?;
        }
        Ok(plan)
    });
    let mut plan = match planned {
        Ok(p) => p,
        Err(e) => {
            eprintln!("medin: {}", inert::text(&e.to_string()));
            return e.exit_status();
        }
    };
    let all_tasks = plan.files.len();
    if let Some(p) = &partition {
        plan.files = p.select(std::mem::take(&mut plan.files));
        if plan.files.is_empty() && all_tasks > 0 {
            // An empty shard is no error: N may exceed the tasks of a small suite.
            println!(
                "medin: shard {}/{} holds none of the {all_tasks} tasks; nothing to run",
                p.shard, p.total
            );
            return ExitStatus::Success;
        }
    }
    if plan.files.is_empty() {
        eprintln!(
            "medin: no task files found in {} (folders: {})",
            plan.suite.root.display(),
            plan.suite.config.suites.join(", ")
        );
        return ExitStatus::Infrastructure;
    }
    if let Err(e) = harness::write_schemas(&plan.settings.output) {
        eprintln!(
            "medin: warning: cannot write the JSON Schemas to {}: {e}",
            plan.settings.output.display()
        );
    }
    let total = plan.files.len() as u64 * u64::from(plan.repeat);
    let progress = Progress::new(total);
    let lines = LibtestLine::new(plan.repeat).through(progress.bar());
    let mut reporters: Vec<Arc<dyn Reporter>> = vec![Arc::new(progress), Arc::new(MetricsText::new(Output::stdout()))];
    if let Some(path) = outputs.html {
        reporters.push(Arc::new(HtmlFile::new(path, Output::stdout())));
    }
    reporters.push(Arc::new(lines));
    reporters.extend(ci_reporters(root, outputs.junit));
    let driver = Driver::new(plan, reporters);
    let jobs = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
    let results = driver.run_trials(&driver.trials(), jobs);
    // Thresholds judge whole suites: a run narrowed to some paths or to a shard prints
    // metrics, ungated.
    let gate = if paths.is_empty() && partition.is_none() {
        Gate::Thresholds
    } else {
        Gate::NotChecked
    };
    match baseline {
        Some(base) => driver.finish_against(&base),
        None => driver.finish(&results, gate),
    }
}

fn cmd_import(format: medin::internal::import::Format, dir: &std::path::Path, out: &std::path::Path) -> ExitStatus {
    match medin::internal::import::import(format, dir, out) {
        Ok(report) => {
            print!("{}", inert::text(&report.render()));
            report.exit_status()
        }
        Err(e) => {
            eprintln!("medin: {}", inert::text(&e.to_string()));
            ExitStatus::Infrastructure
        }
    }
}

fn cmd_check(root: &std::path::Path, paths: &[PathBuf]) -> ExitStatus {
    let targets: Vec<PathBuf> = if paths.is_empty() {
        match spec::load_suite(root) {
            Ok(suite) => suite
                .config
                .suites
                .iter()
                .map(|f| suite.root.join(f))
                .filter(|p| p.exists())
                .collect(),
            Err(e) => {
                eprintln!("{}", inert::text(&e.to_string()));
                return ExitStatus::Infrastructure;
            }
        }
    } else {
        if let Some(missing) = paths.iter().find(|p| !p.exists()) {
            eprintln!(
                "medin: {} does not exist; give task files or folders of task files",
                missing.display()
            );
            return ExitStatus::Infrastructure;
        }
        paths.to_vec()
    };
    let results = spec::check_paths(&targets);
    if results.is_empty() {
        eprintln!(
            "medin: no task files found in {}; give task files or folders, or a --suite whose medin.yaml names existing folders",
            root.display()
        );
        return ExitStatus::Infrastructure;
    }
    let (mut errors, mut warnings) = (0, 0);
    for (path, r) in &results {
        match r {
            Err(e) => {
                errors += 1;
                eprintln!("{}\n", inert::text(&e.to_string()));
            }
            // Warnings say what works but is probably not meant; they do not fail the check.
            Ok(task) => {
                for w in spec::warnings(path, task) {
                    warnings += 1;
                    eprintln!("{}\n", inert::text(&w.to_string()));
                }
            }
        }
    }
    println!(
        "checked {} task file(s): {} ok, {} with errors, {} warning(s)",
        results.len(),
        results.len() - errors,
        errors,
        warnings
    );
    if errors > 0 {
        ExitStatus::Failed
    } else {
        ExitStatus::Success
    }
}

/// `medin status`'s filters as given on the command line.
struct StatusQuery {
    task: Option<String>,
    failed: bool,
    category: Option<String>,
    status: Option<EntryStatus>,
    since: Option<String>,
    until: Option<String>,
    limit: Option<usize>,
}

/// The activity log of the suite at `root` (its `output` folder), unless `--log` names one.
fn activity_log_path(root: &std::path::Path, log: Option<PathBuf>) -> PathBuf {
    log.unwrap_or_else(|| {
        let output = spec::load_suite(root)
            .ok()
            .and_then(|s| s.config.output)
            .unwrap_or_else(|| "target/medin".into());
        root.join(output).join("ACTIVITY_LOG.md")
    })
}

fn cmd_status(root: &std::path::Path, q: StatusQuery, format: StatusFormat, log: Option<PathBuf>) -> ExitStatus {
    let path = activity_log_path(root, log);
    let now = chrono::Utc::now();
    let since = match q.since.map(|s| status::parse_since(&s, now)).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("medin: --since: {e}");
            return ExitStatus::Usage;
        }
    };
    let until = match q.until.map(|s| status::parse_until(&s, now)).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("medin: --until: {e}");
            return ExitStatus::Usage;
        }
    };
    let limit = q.limit.or(if format == StatusFormat::Table { Some(10) } else { None });
    let filter = StatusFilter {
        task: q.task,
        failed: q.failed,
        category: q.category.as_deref().map(CategoryFilter::parse),
        status: q.status,
        since,
        until,
        limit,
    };
    let (shown, warnings) = match query::query(&ActivityLog::new(&path), &filter) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("medin: cannot read {}: {e}", path.display());
            return ExitStatus::Infrastructure;
        }
    };
    for w in &warnings {
        eprintln!("medin: warning: {}", inert::line(w));
    }
    let color = format == StatusFormat::Table
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    print!("{}", status::render(&shown, format, color));
    if let Some(rate) = false_positive_rate(&shown).filter(|r| r.rate() > DEFAULT_FALSE_POSITIVE_ALERT) {
        eprintln!(
            "medin: alert: {} of the {} entries shown that said passed are corrected false positives ({:.2}%), above the {:.1}% alert threshold",
            rate.false_positives,
            rate.passed,
            rate.rate() * 100.0,
            DEFAULT_FALSE_POSITIVE_ALERT * 100.0
        );
    }
    ExitStatus::Success
}

fn cmd_log_correct(root: &std::path::Path, entry: &str, reason: &str, log: Option<PathBuf>) -> ExitStatus {
    let path = activity_log_path(root, log);
    match correct_false_positive(&ActivityLog::new(&path), entry, reason) {
        Ok(c) => {
            let target = c.correction.as_ref().map(|c| c.entry.as_str()).unwrap_or_default();
            println!(
                "corrected {target} ({}): false positive; correction entry {} appended to {}",
                inert::line(&c.task_id),
                c.id(),
                path.display()
            );
            ExitStatus::Success
        }
        Err(e) => {
            eprintln!("medin: log correct: {}", inert::line(&e.to_string()));
            if e.is_usage() {
                ExitStatus::Usage
            } else {
                ExitStatus::Infrastructure
            }
        }
    }
}

/// `medin agents install|list`.
fn cmd_agents(action: AgentsAction) -> ExitCode {
    use medin::internal::agent::cli::{adapter, adapters, install};
    let cache = install::cache_dir();
    match action {
        AgentsAction::List => {
            for a in adapters() {
                let pin = a.pin();
                let state = match install::find(pin, &cache) {
                    Some(found) => found.program.display().to_string(),
                    None => "not installed".into(),
                };
                println!("{:<12} {:<28} {state}", pin.name, pin.requirement());
            }
            ExitCode::SUCCESS
        }
        AgentsAction::Install { names, all } => {
            let names: Vec<String> = if all || names.is_empty() {
                adapters().iter().map(|a| a.pin().name.to_string()).collect()
            } else {
                names
            };
            let mut failed = false;
            for name in &names {
                let Some(a) = adapter(name) else {
                    let known: Vec<&str> = adapters().iter().map(|a| a.pin().name).collect();
                    eprintln!("medin: unknown CLI agent `{name}`; known: {}", known.join(", "));
                    failed = true;
                    continue;
                };
                match install::install(a.pin(), &cache) {
                    Ok(found) => println!("{}", found.program.display()),
                    Err(e) => {
                        eprintln!("medin: {e}");
                        failed = true;
                    }
                }
            }
            if failed {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
    }
}
