//! Judged runs: how a command whose result decides a verdict (a TDD test run, a PRP gate, a
//! `command` validator) is run so that the agent cannot forge its outcome.
//!
//! Four defences, in the order they act:
//!
//! 1. **Protected files** ([`Protection`]): before every judged run the tests and test-runner
//!    configuration the task shipped are put back as they were when the agent started, and
//!    what the agent changed in them since the previous judged run is reported as
//!    [`Tampering`] (the runner decides what tampering means for the outcome).
//! 2. **Hidden checks** ([`Hidden`]): files the task keeps out of the workspace (`hidden:`, a
//!    folder next to the spec, and the verifier's `verify.files`, placed in a folder of their
//!    own that nothing of the agent's shares), copied in read-only only for the final judged
//!    phase — the verifier and the validators, after the agent's last action — and taken out
//!    after it. The agent never sees them, nor their names or failures (TDD and PRP rounds
//!    run without them) — the strongest defence, since nothing the agent wrote can have been
//!    shaped against them.
//! 3. **The runner from the toolchain** ([`RunnerShims`]): Python processes of a judged run
//!    import unittest/pytest, the modules they load lazily and what the shim writes with from
//!    the toolchain before any workspace directory is on the import path (`PYTHONSAFEPATH=1`,
//!    a `sitecustomize` shim on `PYTHONPATH`), then get Python's usual path order back; npm
//!    scripts find the toolchain's `node` before `node_modules/.bin`
//!    (`npm_config_script_shell`). The workspace is never on `PATH`.
//! 4. **Results from the runner, not from its output** ([`RunnerEvidence`]): the shims record
//!    every test's outcome by id into a report folder outside the workspace (writable by the
//!    judged command only, through the sandbox's `write_paths`); a runner that started and never
//!    finished its report is not a pass, whatever it printed; a report folder that was tampered
//!    with is never taken as "no report"; and a run must report every test the baseline run
//!    reported ([`Baseline`], TDD loops: iteration 0).
//!
//! What this cannot do: the code under test runs inside the runner's process, so code written
//! to defeat these shims specifically can still lie from within. Hidden checks and a task's own
//! outside check (a value the agent could not know) are the answer to that; the README's
//! security section says so.

mod protect;
mod report;
#[cfg(target_os = "linux")]
mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

pub use protect::{Protection, Tampering, NOT_SOURCE_DIRS};
pub use report::{Baseline, RunnerEvidence};
#[cfg(target_os = "linux")]
pub use watch::{Evidence, EvidenceWatch};

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

/// Why a judged run could not be made (the harness's failure, never the command's).
#[derive(Debug, thiserror::Error)]
pub enum JudgedError {
    #[error("cannot create the report folder {path} of a judged run: {source}; check that the run folder is writable")]
    ReportFolder {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
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
    /// The folders of an attempt's shims and of its judged runs' reports: `<run_dir>/judge/runner`
    /// and `<run_dir>/judge/reports` (a container mounts them before the shims are installed).
    pub fn folders(run_dir: &Path) -> (PathBuf, PathBuf) {
        let judge = run_dir.join("judge");
        (judge.join("runner"), judge.join("reports"))
    }

    /// Writes the shims into `<run_dir>/judge/runner/` and prepares `<run_dir>/judge/reports/`.
    pub fn install(run_dir: &Path) -> std::io::Result<RunnerShims> {
        use std::os::unix::fs::PermissionsExt;
        let (dir, reports) = Self::folders(run_dir);
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
        let toolchain_path = cfg.path();
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
            // No start-up code from the agent's HOME (the workspace): user site-packages and
            // their `.pth` files run before any shim could look.
            ("PYTHONNOUSERSITE".to_string(), "1".to_string()),
            // Bytecode only from a fresh folder of this run: a `__pycache__` the agent planted
            // (an unchecked-hash .pyc, or one stamped with a test's mtime) is never loaded.
            (
                "PYTHONPYCACHEPREFIX".to_string(),
                report_dir.join("pycache").display().to_string(),
            ),
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
    pub fn run(&self, base: &SandboxConfig, command: &str) -> Result<JudgedRun, JudgedError> {
        self.run_in(base, command, None)
    }

    /// [`RunnerShims::run`] in `cwd`, a workspace-relative folder (the verifier's).
    pub fn run_in(&self, base: &SandboxConfig, command: &str, cwd: Option<&Path>) -> Result<JudgedRun, JudgedError> {
        let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
        // A fresh folder no earlier command could have seeded: an unguessable name, and
        // `create_dir` fails if it exists.
        let report_dir = self.reports.join(format!("run-{n}-{:016x}", fastrand::u64(..)));
        std::fs::create_dir(&report_dir).map_err(|source| JudgedError::ReportFolder {
            path: report_dir.clone(),
            source,
        })?;
        let cfg = self.config(base, &report_dir);
        let outcome = sandbox::run_shell(&cfg, command, cwd)?;
        let mut evidence = RunnerEvidence::read(&report_dir);
        // A command that plainly runs a runner the shims report for, with no report at all:
        // the report was removed, or the runner never got going — either way, not a pass.
        if !evidence.recognised() && !outcome.timed_out {
            if let Some(runner) = expected_runner(command) {
                evidence
                    .unfinished
                    .push(format!("the command runs {runner}, but no runner reported anything"));
            }
        }
        Ok(JudgedRun {
            outcome,
            evidence,
            report_dir,
        })
    }
}

/// The runner a command plainly runs and the shims report for: `python3 -m unittest`,
/// `python -m pytest`, `pytest`, a script named like a test (`python3 test_calc.py`), read with
/// the guard's shell parser (wrappers such as `env` and `timeout` unwrapped).
fn expected_runner(command: &str) -> Option<&'static str> {
    let parsed = crate::guard::parse_shell(command, None);
    for cmd in parsed.pipelines.iter().flatten() {
        let name = cmd.name();
        if matches!(name, "pytest" | "py.test") {
            return Some("pytest");
        }
        let python = name == "python" || name.starts_with("python3") || name.starts_with("python2");
        if !python {
            continue;
        }
        let args = &cmd.argv[1..];
        if let Some(i) = args.iter().position(|a| a == "-m") {
            match args.get(i + 1).map(String::as_str) {
                Some("unittest") => return Some("unittest"),
                Some("pytest") | Some("py.test") => return Some("pytest"),
                _ => {}
            }
        }
        let script = args.iter().find(|a| !a.starts_with('-'));
        if let Some(script) = script {
            let base = script.rsplit('/').next().unwrap_or(script);
            if base.ends_with(".py") && (base.starts_with("test") || base.ends_with("_test.py")) {
                return Some("a test script");
            }
        }
    }
    None
}

/// Hidden checks: a folder next to the spec whose files are copied into the workspace only for
/// the final judged phase (the verifier and the validators), after the agent's last action.
///
/// Two ways in: `hidden:` checks are merged into the workspace root, displacing only what
/// stands where one of them goes ([`Hidden::load`]); the verifier's files (`verify.files`) get a
/// folder of their own, emptied of whatever the agent left there and read-only
/// ([`Hidden::load_into`]), so the verifier runs from a clean directory.
#[derive(Debug, Clone)]
pub struct Hidden {
    /// Path (below `into`, when set) → content and mode.
    files: Vec<(String, Vec<u8>, u32)>,
    /// The workspace folder the files go into, set aside and emptied first; `None`: the root.
    into: Option<String>,
}

/// Largest hidden check folder, in bytes.
const MAX_HIDDEN_BYTES: u64 = 64 * 1024 * 1024;

/// Why hidden checks could not be read, placed or taken out.
#[derive(Debug, thiserror::Error)]
pub enum HiddenError {
    #[error("cannot read the hidden checks in {dir}: {source}")]
    Load {
        dir: PathBuf,
        #[source]
        source: sandbox::BeneathError,
    },
    #[error("the hidden checks in {dir} hold more than {MAX_HIDDEN_BYTES} bytes; keep only the checks there")]
    TooLarge { dir: PathBuf },
    #[error("cannot place hidden check {rel} in the workspace: {source}")]
    Place {
        rel: String,
        #[source]
        source: sandbox::BeneathError,
    },
    #[error("cannot take hidden check {rel} out of the workspace again: {source}")]
    Remove {
        rel: String,
        #[source]
        source: sandbox::BeneathError,
    },
}

/// What placing the hidden checks changed in the workspace, undone by [`Hidden::remove`].
#[derive(Debug, Default)]
pub struct Displaced {
    /// Agent files that stood where a hidden check (or one of its folders) goes: put back.
    files: Vec<(String, Vec<u8>, u32)>,
    /// Where what the agent left in the folder of [`Hidden::load_into`] waits, renamed whole
    /// (links, modes and all), to be renamed back.
    aside: Option<String>,
}

impl Hidden {
    /// Reads every regular file below `dir` (links are not followed), to be placed read-only
    /// (their write bits cleared): a process of the agent's still running while they are
    /// judged by cannot open one for writing — which it could then do through a shared memory
    /// map, where no watch sees it — without changing its mode first, which the evidence
    /// watch does see.
    pub fn load(dir: &Path) -> Result<Hidden, HiddenError> {
        let load = |source| HiddenError::Load {
            dir: dir.to_path_buf(),
            source,
        };
        let root = Beneath::open(dir).map_err(load)?;
        let walk = root.walk(sandbox::WalkLimits::default(), |_, _| false).map_err(load)?;
        let mut files = Vec::new();
        let mut total = 0u64;
        for e in walk.entries {
            if e.meta.kind != sandbox::EntryKind::File {
                continue;
            }
            total = total.saturating_add(e.meta.size);
            if total > MAX_HIDDEN_BYTES {
                return Err(HiddenError::TooLarge { dir: dir.to_path_buf() });
            }
            let bytes = root.read(&e.rel, MAX_HIDDEN_BYTES).map_err(load)?;
            files.push((e.rel, bytes, e.meta.mode & 0o555));
        }
        Ok(Hidden { files, into: None })
    }

    /// Reads the verifier's files below `dir` (as [`Hidden::load`]), to be placed, read-only,
    /// into the workspace folder `into` (a plain name, e.g. `tests`) after it is set aside.
    pub fn load_into(dir: &Path, into: &str) -> Result<Hidden, HiddenError> {
        let mut hidden = Hidden::load(dir)?;
        hidden.into = Some(into.to_string());
        Ok(hidden)
    }

    /// The files as they are placed: workspace path, content and mode (what a judged phase's
    /// evidence watch compares them with).
    pub fn placed(&self) -> impl Iterator<Item = (String, &[u8], u32)> + '_ {
        self.files
            .iter()
            .map(|(rel, bytes, mode)| (self.at(rel), bytes.as_slice(), *mode))
    }

    /// The workspace folder the files go into, when they have one of their own.
    pub fn folder(&self) -> Option<&str> {
        self.into.as_deref()
    }

    /// The workspace path of the file at `rel`.
    fn at(&self, rel: &str) -> String {
        match &self.into {
            Some(into) => format!("{into}/{rel}"),
            None => rel.to_string(),
        }
    }

    /// Copies the hidden files into the workspace. Whatever the agent left in their way — a
    /// file, a link or a FIFO where a hidden check or one of its folders goes, a directory where
    /// a check goes — is moved out of the way first (its regular files kept, to be put back by
    /// [`Hidden::remove`]): the agent cannot keep the checks out, nor turn them into a harness
    /// error.
    ///
    /// With a folder of their own ([`Hidden::load_into`]), whatever stands at that folder is
    /// renamed aside whole first, so the folder holds the files and nothing else.
    pub fn place(&self, ws: &Beneath) -> Result<Displaced, HiddenError> {
        let mut displaced = Displaced::default();
        if let Some(into) = &self.into {
            let place = |source| HiddenError::Place {
                rel: into.clone(),
                source,
            };
            if ws.entry(into).map_err(place)?.is_some() {
                let aside = format!(".medin-aside-{:016x}", fastrand::u64(..));
                ws.rename(into, &aside).map_err(place)?;
                displaced.aside = Some(aside);
            }
            for (rel, bytes, mode) in &self.files {
                let at = self.at(rel);
                if let Err(source) = ws.write(&at, bytes, Some(*mode)) {
                    // Nothing half-placed stays; the agent's folder goes back.
                    let _ = self.remove(ws, displaced);
                    return Err(HiddenError::Place { rel: at, source });
                }
            }
            return Ok(displaced);
        }
        for (rel, bytes, mode) in &self.files {
            let place = |source| HiddenError::Place {
                rel: rel.clone(),
                source,
            };
            // Each folder on the way must be a folder; the target itself a file or nothing.
            let parts: Vec<&str> = rel.split('/').collect();
            for i in 1..=parts.len() {
                let at = parts[..i].join("/");
                let is_target = i == parts.len();
                let in_the_way = match ws.entry(&at).map_err(place)? {
                    None => false,
                    Some(m) if m.kind == sandbox::EntryKind::Dir => is_target,
                    Some(m) if m.kind == sandbox::EntryKind::File => {
                        if let Ok(b) = ws.read(&at, MAX_HIDDEN_BYTES) {
                            displaced.files.push((at.clone(), b, m.mode));
                        }
                        !is_target
                    }
                    Some(_) => true,
                };
                if in_the_way {
                    ws.remove(&at).map_err(place)?;
                }
            }
            ws.write(rel, bytes, Some(*mode)).map_err(place)?;
        }
        Ok(displaced)
    }

    /// Takes the hidden files out again and puts back the agent files they displaced (with a
    /// folder of their own: the folder goes, and what the agent had there comes back).
    pub fn remove(&self, ws: &Beneath, displaced: Displaced) -> Result<(), HiddenError> {
        if let Some(into) = &self.into {
            let undo = |source| HiddenError::Remove {
                rel: into.clone(),
                source,
            };
            ws.remove(into).map_err(undo)?;
            if let Some(aside) = &displaced.aside {
                ws.rename(aside, into).map_err(undo)?;
            }
            return Ok(());
        }
        for (rel, _, _) in &self.files {
            ws.remove(rel).map_err(|source| HiddenError::Remove {
                rel: rel.clone(),
                source,
            })?;
        }
        for (rel, bytes, mode) in displaced.files {
            // A folder the checks needed may stand where an agent file was: it goes first.
            if matches!(ws.entry(&rel), Ok(Some(m)) if m.kind == sandbox::EntryKind::Dir) {
                let _ = ws.remove(&rel);
            }
            ws.write(&rel, &bytes, Some(mode))
                .map_err(|source| HiddenError::Remove { rel, source })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, rel: &str, text: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_verifiers_files_get_a_clean_read_only_folder_and_the_agents_come_back() {
        use std::os::unix::fs::PermissionsExt;
        let (src, ws_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(src.path(), "test_calc.py", "real tests\n");
        write(src.path(), "data/in.txt", "input\n");
        let (ws, w) = (Beneath::open(ws_dir.path()).unwrap(), ws_dir.path());
        write(w, "tests/conftest.py", "forged\n");
        write(w, "tests/test_calc.py", "the agent's version\n");
        std::os::unix::fs::symlink("/etc", w.join("tests/etc")).unwrap();
        let hidden = Hidden::load_into(src.path(), "tests").unwrap();
        assert_eq!(hidden.folder(), Some("tests"));
        let displaced = hidden.place(&ws).unwrap();
        let mut now: Vec<String> = walkdir::WalkDir::new(w.join("tests"))
            .into_iter()
            .map(|e| e.unwrap().path().strip_prefix(w).unwrap().display().to_string())
            .collect();
        now.sort();
        assert_eq!(now, ["tests", "tests/data", "tests/data/in.txt", "tests/test_calc.py"]);
        assert_eq!(
            std::fs::read_to_string(w.join("tests/test_calc.py")).unwrap(),
            "real tests\n"
        );
        let mode = std::fs::metadata(w.join("tests/test_calc.py"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o222, 0, "read-only: {mode:o}");
        hidden.remove(&ws, displaced).unwrap();
        assert_eq!(
            std::fs::read_to_string(w.join("tests/conftest.py")).unwrap(),
            "forged\n"
        );
        assert_eq!(
            std::fs::read_to_string(w.join("tests/test_calc.py")).unwrap(),
            "the agent's version\n"
        );
        assert!(std::fs::symlink_metadata(w.join("tests/etc"))
            .unwrap()
            .file_type()
            .is_symlink());
        let left: Vec<_> = std::fs::read_dir(w).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["tests"], "nothing set aside stays behind");
    }

    #[test]
    fn a_folder_of_their_own_is_made_when_the_agent_left_none() {
        let (src, ws_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(src.path(), "t.py", "t\n");
        let ws = Beneath::open(ws_dir.path()).unwrap();
        let hidden = Hidden::load_into(src.path(), "checks").unwrap();
        let displaced = hidden.place(&ws).unwrap();
        assert!(ws_dir.path().join("checks/t.py").is_file());
        hidden.remove(&ws, displaced).unwrap();
        assert!(!ws_dir.path().join("checks").exists());
    }
}
