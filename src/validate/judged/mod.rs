//! Judged runs: how a command whose result decides a verdict (a TDD test run, a PRP gate, a
//! `command` validator) is run so that the agent cannot forge its outcome.
//!
//! Four defences, in the order they act:
//!
//! 1. **Protected files** ([`Protection`]): before every judged run the tests and test-runner
//!    configuration the task shipped are put back as they were when the agent started, and
//!    every agent change to them is reported as [`Tampering`] (the runner decides what
//!    tampering means for the outcome).
//! 2. **Hidden checks** ([`Hidden`]): files the task keeps out of the workspace (`hidden:`, a
//!    folder next to the spec) are copied in only for the judged run and taken out after it.
//!    The agent's commands never see them — the strongest defence, since nothing the agent
//!    wrote can have been shaped against them.
//! 3. **The runner from the toolchain** ([`RunnerShims`]): Python processes of a judged run
//!    import unittest/pytest from the toolchain before any workspace directory is on the import
//!    path (`PYTHONSAFEPATH=1`, a `sitecustomize` shim on `PYTHONPATH`; the workspace goes to the
//!    end of `sys.path`), and npm scripts find the toolchain's `node` before
//!    `node_modules/.bin` (`npm_config_script_shell`). The workspace is never on `PATH`.
//! 4. **Results from the runner, not from its output** ([`RunnerEvidence`]): the shims record
//!    every test's outcome by id into a report folder outside the workspace (writable by the
//!    judged command only, through the sandbox's `write_paths`); a runner that started and never
//!    finished its report is not a pass, whatever it printed, and a run must report every test
//!    the baseline run reported (TDD loops: iteration 0).
//!
//! What this cannot do: the code under test runs inside the runner's process, so code written
//! to defeat these shims specifically can still lie from within. Hidden checks and a task's own
//! outside check (a value the agent could not know) are the answer to that; the README's
//! security section says so.

mod protect;
mod report;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub use protect::{BadGlob, Protection, Tampering};
pub use report::{RunnerEvidence, TestCase};

use crate::sandbox::{self, Beneath, CommandOutcome, SandboxConfig, SandboxError};

const SITECUSTOMIZE: &str = include_str!("shims/sitecustomize.py");
const PYTEST_PLUGIN: &str = include_str!("shims/medin_pytest_report.py");
const NPM_SHELL: &str = include_str!("shims/npm-script-shell");

/// The runner shims of one attempt, installed in its run folder (outside the workspace), and
/// the folder where each judged run's report goes.
#[derive(Debug, Clone)]
pub struct RunnerShims {
    dir: PathBuf,
    reports: PathBuf,
    counter: Arc<AtomicU32>,
}

/// One judged command's outcome and what its runners reported.
#[derive(Debug, Clone)]
pub struct JudgedRun {
    pub outcome: CommandOutcome,
    pub evidence: RunnerEvidence,
    /// Where the runners' reports of this run are kept (in the run folder).
    pub report_dir: PathBuf,
}

impl RunnerShims {
    /// Writes the shims into `<run_dir>/judge/runner/` and prepares `<run_dir>/judge/reports/`.
    pub fn install(run_dir: &Path) -> std::io::Result<RunnerShims> {
        use std::os::unix::fs::PermissionsExt;
        let dir = run_dir.join("judge").join("runner");
        let reports = run_dir.join("judge").join("reports");
        std::fs::create_dir_all(&dir)?;
        std::fs::create_dir_all(&reports)?;
        std::fs::write(dir.join("sitecustomize.py"), SITECUSTOMIZE)?;
        std::fs::write(dir.join("medin_pytest_report.py"), PYTEST_PLUGIN)?;
        let shell = dir.join("npm-script-shell");
        std::fs::write(&shell, NPM_SHELL)?;
        std::fs::set_permissions(&shell, std::fs::Permissions::from_mode(0o755))?;
        Ok(RunnerShims {
            dir: dir.canonicalize()?,
            reports: reports.canonicalize()?,
            counter: Arc::new(AtomicU32::new(0)),
        })
    }

    /// The sandbox configuration of one judged run: `base` plus the shims' environment, the
    /// shim folder readable and a fresh report folder writable.
    fn config(&self, base: &SandboxConfig, report_dir: &Path) -> SandboxConfig {
        let mut cfg = base.clone();
        let toolchain_path = cfg
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| sandbox::SANDBOX_PATH.to_string());
        let python_path = std::iter::once(self.dir.display().to_string())
            .chain(
                cfg.env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == "PYTHONPATH")
                    .map(|(_, v)| v.clone()),
            )
            .collect::<Vec<_>>()
            .join(":");
        cfg.env.extend([
            ("PYTHONSAFEPATH".to_string(), "1".to_string()),
            ("PYTHONPATH".to_string(), python_path),
            ("PYTEST_PLUGINS".to_string(), "medin_pytest_report".to_string()),
            ("MEDIN_REPORT_DIR".to_string(), report_dir.display().to_string()),
            ("MEDIN_TOOLCHAIN_PATH".to_string(), toolchain_path),
            (
                "npm_config_script_shell".to_string(),
                self.dir.join("npm-script-shell").display().to_string(),
            ),
        ]);
        cfg.read_paths.push(self.dir.clone());
        cfg.write_paths.push(report_dir.to_path_buf());
        cfg
    }

    /// Runs `command` as a judged run: through the sandbox with the shims, then reads what the
    /// runners reported. `Err` is the sandbox failing, never the command.
    pub fn run(&self, base: &SandboxConfig, command: &str) -> Result<JudgedRun, SandboxError> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        // A fresh folder no earlier command could have seeded: an unguessable name, and
        // `create_dir` fails if it exists.
        let report_dir = self.reports.join(format!("run-{n}-{:016x}", fastrand::u64(..)));
        std::fs::create_dir(&report_dir).map_err(|source| SandboxError::Workspace {
            path: report_dir.clone(),
            source,
        })?;
        let cfg = self.config(base, &report_dir);
        let outcome = sandbox::run_shell(&cfg, command, None)?;
        let evidence = RunnerEvidence::read(&report_dir);
        Ok(JudgedRun {
            outcome,
            evidence,
            report_dir,
        })
    }
}

/// A file's content and permission bits.
type FileCopy = (Vec<u8>, u32);

/// Hidden checks: a folder next to the spec whose files are copied into the workspace only for
/// judged runs.
#[derive(Debug, Clone)]
pub struct Hidden {
    /// Relative path → content and mode.
    files: Vec<(String, Vec<u8>, u32)>,
}

/// Largest hidden check folder, in bytes.
const MAX_HIDDEN_BYTES: u64 = 64 * 1024 * 1024;

/// Files displaced while hidden checks are in the workspace, put back by [`Hidden::remove`].
#[derive(Debug, Default)]
pub struct Displaced {
    files: Vec<(String, Option<FileCopy>)>,
}

impl Hidden {
    /// Reads every regular file below `dir` (links are not followed).
    pub fn load(dir: &Path) -> Result<Hidden, String> {
        let root = Beneath::open(dir).map_err(|e| format!("hidden checks {}: {e}", dir.display()))?;
        let walk = root
            .walk(sandbox::WalkLimits::default(), |_, _| false)
            .map_err(|e| format!("hidden checks {}: {e}", dir.display()))?;
        let mut files = Vec::new();
        let mut total = 0u64;
        for e in walk.entries {
            if e.meta.kind != sandbox::EntryKind::File {
                continue;
            }
            total = total.saturating_add(e.meta.size);
            if total > MAX_HIDDEN_BYTES {
                return Err(format!(
                    "hidden checks {} hold more than {MAX_HIDDEN_BYTES} bytes; keep only the checks there",
                    dir.display()
                ));
            }
            let bytes = root
                .read(&e.rel, MAX_HIDDEN_BYTES)
                .map_err(|err| format!("hidden checks {}: {err}", dir.display()))?;
            files.push((e.rel, bytes, e.meta.mode));
        }
        Ok(Hidden { files })
    }

    /// Copies the hidden files into the workspace, keeping whatever they displace.
    pub fn place(&self, ws: &Beneath) -> Result<Displaced, String> {
        let mut displaced = Displaced::default();
        for (rel, bytes, mode) in &self.files {
            let before = match ws.entry(rel) {
                Ok(Some(m)) if m.kind == sandbox::EntryKind::File => {
                    ws.read(rel, MAX_HIDDEN_BYTES).ok().map(|b| (b, m.mode))
                }
                Ok(Some(_)) => {
                    let _ = ws.remove(rel);
                    None
                }
                _ => None,
            };
            displaced.files.push((rel.clone(), before));
            ws.write(rel, bytes, Some(*mode))
                .map_err(|e| format!("cannot place hidden check {rel}: {e}"))?;
        }
        Ok(displaced)
    }

    /// Takes the hidden files out again and puts back what they displaced.
    pub fn remove(&self, ws: &Beneath, displaced: Displaced) {
        for (rel, before) in displaced.files {
            match before {
                Some((bytes, mode)) => {
                    let _ = ws.write(&rel, &bytes, Some(mode));
                }
                None => {
                    let _ = ws.remove(&rel);
                }
            }
        }
    }

    /// How many files the hidden checks hold.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}
