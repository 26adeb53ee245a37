//! `medin watch`: a session that keeps a suite's results up to date while people edit it.
//!
//! It runs the suite once, then watches what the results rest on — the task files, the fixtures
//! and other folders the tasks name ([`inputs`]), `medin.yaml` and the PRD — through the
//! `notify` crate with a short debounce ([`WatchOptions::DEFAULT_DEBOUNCE`], so a save is acted
//! on well within a second), and re-runs what a change affects:
//!
//! | change | what happens |
//! |---|---|
//! | a task file | that task runs again |
//! | a new task file | it runs |
//! | a deleted task file | it is said, and forgotten |
//! | a file below a folder a task names (`workspace:`, `hidden:`, `verify.files`, a task directory, ...) | every task resting on it runs again |
//! | `medin.yaml` | the suite is reloaded and every task runs again |
//! | the PRD | new tasks wait while it is reloaded; the reload is logged with its diff ([`crate::prd::watch`]) |
//!
//! A task file that does not load prints its error (`file:line:col`) and waits for the next
//! save; a `medin.yaml` or a PRD that does not load holds every task back until it does. The
//! session never exits over an edit: it ends when killed, or on `quit` read from stdin.
//!
//! Each re-run is a run of its own ([`batch`]): a fresh run id and run folder, the trials run by
//! the same [`crate::harness::Driver`] as `medin run`, each writing its `ACTIVITY_LOG.md`
//! entry. One re-run runs at a time; changes seen meanwhile are queued and run together when it
//! ends. The watch prints one line per thing that happens (a change seen, a re-run started,
//! each result, each run's totals, a PRD reload, an error), so a person or a program driving
//! it reads its progress from stdout.
//!
//! Stdin takes commands, one per line: `freeze` (PRD changes are ignored from now on, as with
//! `--freeze`), `unfreeze` (they are looked at again, and a change made while frozen is
//! reloaded now) and `quit` (no new task starts; the running ones finish; exit 0). Creating the
//! file `.medin-unfreeze` beside `medin.yaml` unfreezes too (medin removes it), for a watch
//! whose stdin nobody holds.
//!
//! Killing the watch kills what it started: every command and agent runs under medin's
//! guardian, which sweeps its tree when medin dies, by any signal (see the README).

mod batch;
pub mod inputs;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode};
use notify::{EventKind, RecommendedWatcher, RecursiveMode};
use notify_debouncer_full::{new_debouncer, DebounceEventResult, Debouncer, RecommendedCache};

use crate::exit::ExitStatus;
use crate::harness::{self, PlanError};
use crate::log::ActivityLog;
use crate::prd::watch::{PrdEvent, PrdWatch};
use crate::report::events::PrdNote;
use crate::report::reporters::ActivityLogReporter;
use crate::report::RunId;
use crate::runner::{TaskResult, TrialVerdict};
use crate::spec::{self, SpecFile, Suite};
use batch::{Batch, BatchEvent, BatchSummary, Gate};
use inputs::{task_inputs, touches, WatchSet};

/// How a watch session runs its tasks.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// `--agent` (as `medin run --agent`).
    pub agent: Option<String>,
    /// Trials run at once (default: the number of CPUs).
    pub jobs: Option<usize>,
    /// Attempts per task (default: `medin.yaml`'s `repeat`).
    pub repeat: Option<u32>,
    /// Start with PRD changes ignored (`--freeze`).
    pub freeze: bool,
    /// How long the file watcher waits for a burst of writes to settle.
    pub debounce: Duration,
}

impl WatchOptions {
    /// Short enough that a change is acted on within a second (the debouncer reports a burst at
    /// most twice this after its first event), long enough that an editor's save (write,
    /// rename, chmod) is one change.
    pub const DEFAULT_DEBOUNCE: Duration = Duration::from_millis(200);
}

impl Default for WatchOptions {
    fn default() -> Self {
        WatchOptions {
            agent: None,
            jobs: None,
            repeat: None,
            freeze: false,
            debounce: Self::DEFAULT_DEBOUNCE,
        }
    }
}

/// Why a watch could not start (once started, nothing ends it but `quit` or a signal).
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    #[error("{0}")]
    Plan(#[from] PlanError),
    #[error("cannot watch the suite's files: {0} (on Linux, raise fs.inotify.max_user_watches or max_user_instances)")]
    Notify(#[from] notify::Error),
}

impl WatchError {
    pub fn exit_status(&self) -> ExitStatus {
        match self {
            WatchError::Plan(e) => e.exit_status(),
            WatchError::Notify(_) => ExitStatus::Infrastructure,
        }
    }
}

/// The file whose creation unfreezes a frozen watch.
pub const UNFREEZE_FILE: &str = ".medin-unfreeze";

/// What wakes the watch loop.
enum Signal {
    Files(DebounceEventResult),
    Batch(BatchEvent),
    Line(String),
}

/// What the watch knows of one task file.
#[derive(Debug)]
enum Known {
    /// It loads; these are the paths its outcome rests on besides itself.
    Ready { file: SpecFile, inputs: Vec<PathBuf> },
    /// It does not load (the error was printed).
    Broken { file: SpecFile },
}

impl Known {
    fn file(&self) -> &SpecFile {
        match self {
            Known::Ready { file, .. } | Known::Broken { file } => file,
        }
    }
}

/// Watches the suite at `root` until `quit` is read on stdin (or the process is killed),
/// printing what happens to `out`.
pub fn watch(root: &Path, options: WatchOptions, out: &mut dyn Write) -> Result<ExitStatus, WatchError> {
    let root = root
        .canonicalize()
        .map_err(|_| PlanError::MissingPath(root.to_path_buf()))?;
    // What the command line got wrong ends the watch before it starts; a suite that does not
    // load is waited for like any later edit.
    match harness::plan(&root, options.agent.as_deref(), &[], options.repeat) {
        Err(
            e @ (PlanError::Agent { .. } | PlanError::RunId(_) | PlanError::Traffic(_) | PlanError::MissingPath(_)),
        ) => return Err(e.into()),
        Ok(_) | Err(PlanError::Spec(_) | PlanError::Prd(_)) => {}
    }
    let (tx, rx) = mpsc::channel();
    let files_tx = tx.clone();
    let debouncer = new_debouncer(options.debounce, None, move |res: DebounceEventResult| {
        let _ = files_tx.send(Signal::Files(res));
    })?;
    spawn_stdin_reader(tx.clone());
    let mut session = Session::new(root, options, out, debouncer, tx);
    session.start();
    Ok(session.run(rx))
}

/// Reads command lines from stdin for as long as it is open.
fn spawn_stdin_reader(tx: Sender<Signal>) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(Signal::Line(line)).is_err() {
                break;
            }
        }
    });
}

struct Session<'o> {
    root: PathBuf,
    options: WatchOptions,
    out: &'o mut dyn Write,
    debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
    tx: Sender<Signal>,
    /// `None` while `medin.yaml` does not load.
    suite: Option<Suite>,
    /// Where run folders and the activity log go (kept while `medin.yaml` is broken).
    output: PathBuf,
    log: ActivityLog,
    tasks: BTreeMap<PathBuf, Known>,
    queue: BTreeSet<PathBuf>,
    batch: Option<Batch>,
    /// Trials of the running batch that have started and not finished.
    running: BTreeSet<String>,
    gate: Arc<Gate>,
    prd: Option<PrdWatch>,
    /// Whether PRD changes are ignored (kept across a PRD that comes and goes with medin.yaml).
    frozen: bool,
    watched: BTreeMap<PathBuf, RecursiveMode>,
    /// The session's id: the `run_id` of the PRD entries it logs itself.
    session: String,
    /// Runs started so far (the first is "running", later ones "re-running").
    runs: usize,
    quitting: bool,
}

impl<'o> Session<'o> {
    fn new(
        root: PathBuf,
        options: WatchOptions,
        out: &'o mut dyn Write,
        debouncer: Debouncer<RecommendedWatcher, RecommendedCache>,
        tx: Sender<Signal>,
    ) -> Self {
        let output = root.join("target/medin");
        Session {
            log: ActivityLog::new(output.join("ACTIVITY_LOG.md")),
            output,
            frozen: options.freeze,
            root,
            options,
            out,
            debouncer,
            tx,
            suite: None,
            tasks: BTreeMap::new(),
            queue: BTreeSet::new(),
            batch: None,
            running: BTreeSet::new(),
            gate: Arc::new(Gate::default()),
            prd: None,
            watched: BTreeMap::new(),
            session: RunId::fresh().to_string(),
            runs: 0,
            quitting: false,
        }
    }

    fn say(&mut self, line: impl AsRef<str>) {
        let _ = writeln!(self.out, "{}", crate::inert::text(line.as_ref()));
        let _ = self.out.flush();
    }

    /// A path as people read it: relative to the suite root when below it.
    fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).display().to_string()
    }

    fn start(&mut self) {
        self.reload_suite();
        let count = self.tasks.len();
        let prd = match &self.prd {
            Some(p) => format!(
                "PRD {}{}{}",
                self.shown(p.path()),
                p.version().map(|v| format!(" {v}")).unwrap_or_default(),
                if p.is_frozen() { ", frozen" } else { "" }
            ),
            None => "no PRD".into(),
        };
        let root = self.root.display().to_string();
        self.say(format!(
            "medin watch: watching {root} ({count} task files, {prd}); stdin takes freeze, unfreeze, quit"
        ));
        self.pump();
    }

    /// Handles signals until `quit` has let the running tasks finish.
    fn run(mut self, rx: Receiver<Signal>) -> ExitStatus {
        while let Ok(signal) = rx.recv() {
            match signal {
                Signal::Files(Ok(events)) => {
                    let paths: BTreeSet<PathBuf> = events
                        .into_iter()
                        .filter(|e| changes_content(&e.kind))
                        .flat_map(|e| e.event.paths)
                        .collect();
                    self.on_files(paths);
                }
                Signal::Files(Err(errors)) => {
                    for e in errors {
                        self.say(format!("warning: file watcher: {e}"));
                    }
                }
                Signal::Batch(event) => self.on_batch(event),
                Signal::Line(line) => self.on_line(line.trim()),
            }
            if self.quitting && self.batch.is_none() {
                self.say("medin watch: stopped");
                return ExitStatus::Success;
            }
            self.pump();
        }
        ExitStatus::Success
    }

    // ------------------------------------------------------------ suite and tasks

    /// (Re)loads `medin.yaml`, finds every task, queues them all, and watches what they rest on.
    fn reload_suite(&mut self) {
        match spec::load_suite(&self.root) {
            Ok(suite) => {
                self.output = self.root.join(suite.config.output.as_deref().unwrap_or("target/medin"));
                let max_size = suite
                    .config
                    .activity_log
                    .as_ref()
                    .and_then(|a| a.max_size)
                    .map_or(crate::log::activity::DEFAULT_MAX_SIZE, |s| s.0);
                self.log = ActivityLog::new(self.output.join("ACTIVITY_LOG.md")).with_max_size(max_size);
                if let Err(e) = harness::write_schemas(&self.output) {
                    self.say(format!(
                        "warning: cannot write the JSON Schemas to {}: {e}",
                        self.output.display()
                    ));
                }
                self.suite = Some(suite);
                self.tasks.clear();
                self.queue.clear();
                self.open_prd();
                let Some(found) = self.discover() else {
                    self.rewatch();
                    return;
                };
                for file in found {
                    self.load_task(file);
                }
                self.queue.extend(
                    self.tasks
                        .iter()
                        .filter(|(_, k)| matches!(k, Known::Ready { .. }))
                        .map(|(p, _)| p.clone()),
                );
            }
            Err(e) => {
                self.suite = None;
                self.say(format!("error: {e}"));
                self.say("medin watch: no task starts until medin.yaml loads");
            }
        }
        self.sync_gate();
        self.rewatch();
    }

    /// The suite's task files, or `None` (the error printed) when discovery fails.
    fn discover(&mut self) -> Option<Vec<SpecFile>> {
        let suite = self.suite.as_ref()?;
        match spec::discover(suite) {
            Ok(found) => Some(found),
            Err(e) => {
                self.say(format!("error: {e}"));
                None
            }
        }
    }

    /// Loads one task file: ready (queued by the caller) or broken (its error printed).
    fn load_task(&mut self, file: SpecFile) -> bool {
        let Some(suite) = &self.suite else { return false };
        let known = match spec::load_task_with(&file.path, &suite.agents) {
            Ok(task) => Known::Ready {
                inputs: task_inputs(&task, &file.path),
                file,
            },
            Err(e) => {
                let trial = file.trial_name();
                self.say(format!(
                    "error: {trial} does not load, it runs again once it does:\n{e}"
                ));
                Known::Broken { file }
            }
        };
        let ready = matches!(known, Known::Ready { .. });
        self.tasks.insert(known.file().path.clone(), known);
        ready
    }

    /// Files changed: works out what they touch.
    fn on_files(&mut self, paths: BTreeSet<PathBuf>) {
        let paths: BTreeSet<PathBuf> = paths
            .into_iter()
            .filter(|p| !p.starts_with(&self.output) && !is_editor_scratch(p))
            .collect();
        if paths.is_empty() {
            return;
        }
        let suite_file = self.root.join(spec::suite::SUITE_FILE);
        let unfreeze_file = self.root.join(UNFREEZE_FILE);
        let prd_path = self.prd.as_ref().map(|p| p.path().to_path_buf());
        let mut others = BTreeSet::new();
        let (mut suite_changed, mut prd_changed, mut unfreeze) = (false, false, false);
        for p in paths {
            if p == suite_file {
                suite_changed = true;
            } else if Some(&p) == prd_path.as_ref() {
                prd_changed = true;
            } else if p == unfreeze_file {
                unfreeze |= p.exists();
            } else {
                others.insert(p);
            }
        }
        // The PRD first: no task of this change starts against the PRD it replaces.
        if prd_changed {
            self.on_prd_changed();
        }
        if unfreeze {
            if let Err(e) = std::fs::remove_file(&unfreeze_file) {
                self.say(format!("warning: cannot remove {UNFREEZE_FILE}: {e}"));
            }
            self.unfreeze();
        }
        if suite_changed {
            self.say(format!("changed: {}", spec::suite::SUITE_FILE));
            self.reload_suite();
        } else if !others.is_empty() {
            self.on_inputs_changed(&others);
        }
    }

    /// Task files or files tasks rest on changed.
    fn on_inputs_changed(&mut self, changed: &BTreeSet<PathBuf>) {
        // What no task rests on (a README beside medin.yaml) is no event.
        let changed: BTreeSet<PathBuf> = changed.iter().filter(|p| self.may_affect_tasks(p)).cloned().collect();
        if changed.is_empty() {
            return;
        }
        let changed = &changed;
        let shown: Vec<String> = changed.iter().map(|p| self.shown(p)).collect();
        let listed = match shown.len() {
            n if n <= 3 => shown.join(", "),
            n => format!("{} and {} more", shown[..3].join(", "), n - 3),
        };
        self.say(format!("changed: {listed}"));
        if self.suite.is_none() {
            return;
        }
        let Some(found) = self.discover() else { return };
        let found: BTreeMap<PathBuf, SpecFile> = found.into_iter().map(|f| (f.path.clone(), f)).collect();
        let gone: Vec<PathBuf> = self.tasks.keys().filter(|p| !found.contains_key(*p)).cloned().collect();
        for path in gone {
            if let Some(known) = self.tasks.remove(&path) {
                let line = format!("deleted: {} ({})", known.file().trial_name(), self.shown(&path));
                self.say(line);
            }
            self.queue.remove(&path);
        }
        let mut touched = Vec::new();
        for (path, file) in found {
            let affected = match self.tasks.get(&path) {
                None => {
                    self.say(format!("new task: {}", file.trial_name()));
                    true
                }
                Some(Known::Ready { inputs, .. }) => {
                    changed.contains(&path) || changed.iter().any(|c| inputs.iter().any(|i| touches(c, i)))
                }
                Some(Known::Broken { .. }) => changed.contains(&path),
            };
            if affected {
                touched.push(file);
            }
        }
        for file in touched {
            let path = file.path.clone();
            if self.load_task(file) {
                self.queue.insert(path);
            } else {
                self.queue.remove(&path);
            }
        }
        self.rewatch();
    }

    /// Whether `path` is in a suite folder or below something a task rests on.
    fn may_affect_tasks(&self, path: &Path) -> bool {
        let Some(suite) = &self.suite else { return true };
        suite.config.suites.iter().any(|f| path.starts_with(self.root.join(f)))
            || self.tasks.values().any(|k| match k {
                Known::Ready { inputs, .. } => inputs.iter().any(|i| touches(path, i)),
                Known::Broken { .. } => false,
            })
    }

    /// Makes the file watcher watch exactly what the session rests on now.
    fn rewatch(&mut self) {
        let mut set = WatchSet::default();
        set.entry(&self.root.join(spec::suite::SUITE_FILE));
        if let Some(suite) = &self.suite {
            for folder in &suite.config.suites {
                set.tree(&self.root.join(folder));
            }
        }
        for known in self.tasks.values() {
            if let Known::Ready { inputs, .. } = known {
                for input in inputs {
                    set.input(input);
                }
            }
        }
        if let Some(prd) = &self.prd {
            set.entry(prd.path());
        }
        let want = set.reduced();
        let stale: Vec<PathBuf> = self
            .watched
            .iter()
            .filter(|(p, m)| want.get(*p) != Some(*m))
            .map(|(p, _)| p.clone())
            .collect();
        for path in stale {
            let _ = self.debouncer.unwatch(&path);
            self.watched.remove(&path);
        }
        for (path, mode) in want {
            if self.watched.contains_key(&path) {
                continue;
            }
            match self.debouncer.watch(&path, mode) {
                Ok(()) => {
                    self.watched.insert(path, mode);
                }
                Err(e) => self.say(format!("warning: cannot watch {}: {e}", path.display())),
            }
        }
    }

    // ------------------------------------------------------------ runs

    /// Starts the queued tasks as a run of their own when nothing holds them back.
    fn pump(&mut self) {
        if self.batch.is_some()
            || self.queue.is_empty()
            || self.quitting
            || self.suite.is_none()
            || !self.gate.is_open()
        {
            return;
        }
        let files: Vec<PathBuf> = std::mem::take(&mut self.queue)
            .into_iter()
            .filter(|p| p.is_file())
            .collect();
        if files.is_empty() {
            return;
        }
        // One PRD for the whole session (or its frozen copy), not one per run: a run never
        // reads the PRD file itself, so a frozen watch runs whatever the file now says.
        let planned = match self.prd.as_ref().and_then(|prd| prd.for_runs()) {
            Some(prd) => harness::plan_under(
                &self.root,
                self.options.agent.as_deref(),
                &files,
                self.options.repeat,
                prd,
            ),
            None => harness::plan(&self.root, self.options.agent.as_deref(), &files, self.options.repeat),
        };
        let mut plan = match planned {
            Ok(plan) => plan,
            Err(e) => {
                // Kept for the next change, which may fix what stopped the plan.
                self.say(format!("error: {e}"));
                self.say("medin watch: the tasks wait for the next change");
                self.queue.extend(files);
                return;
            }
        };
        plan.set_run_id(RunId::fresh());
        let jobs = self
            .options
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2));
        let batch = Batch::start(plan, jobs, self.gate.clone(), self.tx.clone(), Signal::Batch);
        let verb = if self.runs == 0 { "running" } else { "re-running" };
        let n = batch.trials;
        self.say(format!(
            "{verb} {n} task{} (run {})",
            if n == 1 { "" } else { "s" },
            batch.run_id
        ));
        self.runs += 1;
        self.batch = Some(batch);
    }

    fn on_batch(&mut self, event: BatchEvent) {
        match event {
            BatchEvent::Started { trial } => {
                self.running.insert(trial);
            }
            BatchEvent::Finished(result) => self.on_result(&result),
            BatchEvent::Done(summary) => {
                self.say(summary_line(&summary, &self.root));
                if let Some(batch) = self.batch.take() {
                    batch.join();
                }
            }
        }
    }

    fn on_result(&mut self, result: &TaskResult) {
        let label = crate::report::reporters::trial_label(&result.trial, result.attempt, self.plan_repeat());
        self.running.remove(&label);
        self.say(result_line(&label, result));
    }

    /// The repeats trials run with (their labels carry `#n` when above 1).
    fn plan_repeat(&self) -> u32 {
        self.options
            .repeat
            .or_else(|| self.suite.as_ref().and_then(|s| s.config.repeat))
            .unwrap_or(1)
            .max(1)
    }

    // ------------------------------------------------------------ the PRD

    /// Opens the PRD the suite names (again, when `medin.yaml` changed which).
    fn open_prd(&mut self) {
        let path = self
            .suite
            .as_ref()
            .and_then(|s| s.prd_path())
            .map(|p| inputs::absolute(&p));
        if self.prd.as_ref().map(|p| p.path()) == path.as_deref() {
            return;
        }
        self.prd = None;
        let Some(path) = path else { return };
        let snapshot = self.output.join("watch").join(&self.session).join("PRD.frozen.md");
        let (prd, event) = PrdWatch::open(path, snapshot, self.frozen);
        self.prd = Some(prd);
        self.on_prd_event(event);
    }

    fn on_prd_changed(&mut self) {
        let Some(prd) = &mut self.prd else { return };
        let shown = prd
            .path()
            .strip_prefix(&self.root)
            .unwrap_or(prd.path())
            .display()
            .to_string();
        if prd.is_frozen() {
            let event = prd.changed();
            self.say(format!(
                "changed: {shown}: {} — `unfreeze` on stdin (or create {UNFREEZE_FILE}) to take it in",
                event.describe()
            ));
            return;
        }
        // No new task starts from the change until the PRD is reloaded.
        self.gate.close();
        let event = prd.changed();
        self.say(format!("changed: {shown}: new tasks wait while it is reloaded"));
        self.on_prd_event(event);
    }

    fn on_prd_event(&mut self, event: PrdEvent) {
        let Some(prd) = &self.prd else { return };
        let path = prd.path().to_path_buf();
        // The first load is no reload: said, not logged (as `medin run` does).
        if let PrdEvent::Reloaded(diff) = &event {
            if diff.from_version.is_empty() {
                let n = diff.added.len();
                self.say(format!("PRD loaded: version {}, {n} requirements", diff.to_version));
                self.sync_gate();
                return;
            }
        }
        // Logged before it is said (whoever reads the line finds the entry), in the entry the
        // runs write for a reload.
        if let Some(reload) = event.as_reload() {
            let log = ActivityLogReporter::new(self.log.clone(), self.session.clone());
            let entry = log.prd_entry(&PrdNote::Reload {
                path: &path,
                reload: &reload,
            });
            self.append(&entry);
        }
        match &event {
            PrdEvent::Ignored => return,
            PrdEvent::Unchanged => self.say(format!("PRD: {}", event.describe())),
            PrdEvent::Reloaded(_) => self.say(format!("PRD reloaded: {}", event.describe())),
            PrdEvent::Invalid(error) => {
                self.say(format!("error: the PRD does not load: {error}"));
                self.say("medin watch: no new task starts until the PRD loads");
            }
        }
        if event.unsettles_running_tasks() && !self.running.is_empty() {
            let running: Vec<String> = self.running.iter().cloned().collect();
            self.say(format!(
                "{} running task{} started under the earlier PRD ({}): each finishes, and one that names a changed requirement asks for a decision in the log (pending)",
                running.len(),
                if running.len() == 1 { "" } else { "s" },
                running.join(", ")
            ));
        }
        self.sync_gate();
    }

    fn freeze(&mut self) {
        self.frozen = true;
        let frozen = self.prd.as_mut().map(PrdWatch::freeze);
        match frozen {
            Some(Ok(())) => self.say("PRD frozen: its changes are ignored until `unfreeze`"),
            Some(Err(e)) => self.say(format!("error: cannot freeze the PRD: {e}")),
            None => self.say("PRD frozen (the suite names no PRD)"),
        }
    }

    fn unfreeze(&mut self) {
        self.frozen = false;
        let Some(prd) = &mut self.prd else {
            self.say("PRD unfrozen (the suite names no PRD)");
            return;
        };
        let pending = prd.unfreeze();
        self.say("PRD unfrozen: its changes are looked at again");
        if let Some(event) = pending {
            self.gate.close();
            self.on_prd_event(event);
        }
    }

    /// Opens the gate unless the PRD holds tasks back.
    fn sync_gate(&mut self) {
        if self.prd.as_ref().is_some_and(PrdWatch::holds_tasks) {
            self.gate.close();
        } else {
            self.gate.open();
        }
    }

    fn append(&mut self, entry: &crate::log::ActivityEntry) {
        if let Err(e) = self.log.append(entry) {
            let path = self.log.path().display().to_string();
            self.say(format!("warning: cannot write {path}: {e}"));
        }
    }

    // ------------------------------------------------------------ stdin

    fn on_line(&mut self, line: &str) {
        match line {
            "" => {}
            "freeze" => self.freeze(),
            "unfreeze" => self.unfreeze(),
            "quit" | "q" => {
                self.quitting = true;
                self.gate.stop();
                if let Some(batch) = &self.batch {
                    let n = self.running.len();
                    let id = batch.run_id.to_string();
                    self.say(format!(
                        "medin watch: quitting after the {n} running task(s) of run {id}"
                    ));
                }
            }
            other => self.say(format!("unknown command `{other}`: freeze, unfreeze or quit")),
        }
    }
}

/// Whether an event may have changed what a file says: not a read (medin reads the suite's
/// files on every run; a file closed after writing counts as a write).
fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// Files editors write beside the one being saved, never a task's input.
fn is_editor_scratch(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.ends_with('~') || name.ends_with(".swp") || name.ends_with(".swx") || name == "4913"
}

/// `golden::t1 ... ok (0.4s)`, `... FAILED (..): first line`, `... error: first line`.
fn result_line(label: &str, result: &TaskResult) -> String {
    let secs = result.metrics.duration_ms as f64 / 1000.0;
    let first_line = |text: &str| {
        text.lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string()
    };
    match &result.verdict {
        TrialVerdict::Passed => format!("  {label} ... ok ({secs:.1}s)"),
        TrialVerdict::Failed(mismatches) => {
            let first = mismatches
                .first()
                .map(|m| first_line(&m.to_string()))
                .unwrap_or_default();
            let more = match mismatches.len() {
                0 | 1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            };
            format!("  {label} ... FAILED ({secs:.1}s): {first}{more}")
        }
        TrialVerdict::HarnessError { message, .. } => format!("  {label} ... error: {}", first_line(message)),
    }
}

fn summary_line(summary: &BatchSummary, root: &Path) -> String {
    let folder = summary
        .folder
        .strip_prefix(root)
        .unwrap_or(&summary.folder)
        .display()
        .to_string();
    let mut line = format!(
        "run {}: {} passed, {} failed, {} errors ({folder})",
        summary.run_id, summary.passed, summary.failed, summary.errors
    );
    if summary.not_started > 0 {
        line.push_str(&format!("; {} not started", summary.not_started));
    }
    line
}
