//! A task's declared environment: the Python and npm packages its commands need, provisioned
//! once into a content-addressed cache and given to the sandbox read-only, and the Debian
//! packages it needs from the host, checked.
//!
//! ```yaml
//! environment:
//!   python: [pytest==8.3.3, requests]   # a venv made from the host's python3
//!   node: [left-pad@1.3.0]              # npm packages, their bins on PATH
//!   apt: [jq]                            # must be installed on the host
//! ```
//!
//! - **One cache entry per package list.** `target/medin/envs/py-<hash>` (a venv: `python3 -m
//!   venv`, then `pip install`) and `node-<hash>` (`npm install --prefix`), the hash over the
//!   kind, the sorted list and the interpreter. An entry is built in place under a lock (trials
//!   and processes that need the same entry wait for the first to build it) and counts only
//!   once it is marked complete, so a crash or a failed install never leaves an entry that is
//!   used half-built. Later trials and runs reuse it at no cost.
//! - **Read-only in the sandbox.** The entry's `bin` is first on the command's `PATH`
//!   (`node_modules/.bin` and `NODE_PATH` for npm); under `strict` the entry is one of the
//!   sandbox's read paths, so a command can run it but not change it. (Under `process` nothing
//!   outside the workspace is protected, as everywhere at that level.)
//! - **Installing is the harness's act, not the agent's.** It runs before the task starts,
//!   outside the sandbox, with the network the host has; the agent never gets that network.
//! - **Missing pieces are infrastructure.** A failed install or a missing apt package ends the
//!   trial as an infrastructure error that names the command to fix it, never as the agent's
//!   failure. Package names are checked against the ecosystems' name syntax first: an entry
//!   that looks like an option (`--index-url …`, `-r file`) is a spec error, not an argument.
//! - **Fixed paths** (`root: /app`, `mounts: { /tests: tests/ }`, `outputs: [/logs/verifier]`)
//!   become the sandbox's [`Layout`] ([`layout`]): the root and the mounts' folders as the
//!   sandbox shows them, each output a fresh folder of the attempt's run folder
//!   (`outputs/logs/verifier`), kept after it — written by the agent's commands, so whoever
//!   reads it reads it as untrusted (`sandbox::Beneath`: no links followed, sizes bounded).
//!   Only `strict` shows them; the runner checks
//!   that before the task starts (`sandbox::check_config`), so a task with fixed paths never
//!   runs at the host path.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::RunError;
use crate::sandbox::{
    Container, ContainerEngine, ContainerRequest, FixedMount, FixedPath, ImageSource, MountAccess, ReadyImage,
    SandboxConfig,
};
use crate::spec::{ContainerSource, EnvironmentSpec};

/// Where a container shows the workspace when the task names no `root`.
pub const CONTAINER_ROOT: &str = "/app";

/// How long one install may take.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// Why an environment could not be provided. Every message names the command that fixes it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvironmentError {
    #[error("the task needs the Debian package(s) {}, which this machine does not have; install them: `apt-get install -y {}` (as root)", missing.join(", "), missing.join(" "))]
    MissingApt { missing: Vec<String> },
    #[error("the task needs {tool} to provide its {kind} packages, and it is not on this machine's PATH; install it (e.g. `apt-get install -y {package}`)")]
    MissingTool {
        tool: &'static str,
        kind: &'static str,
        package: &'static str,
    },
    #[error("installing the task's {kind} packages ({packages}) failed: `{command}` {detail}; run it by hand to see why (no network? a wrong version?)")]
    Install {
        kind: &'static str,
        packages: String,
        command: String,
        detail: String,
    },
    #[error("cannot prepare the environment cache {}: {detail}; check free space and permissions of the output folder", path.display())]
    Cache { path: PathBuf, detail: String },
    #[error("cannot lay out the task's fixed paths: {detail}; check the task's `environment:` with `medin check`")]
    Layout { detail: String },
    #[error("cannot create the output folder {} for {at}: {detail}; check free space and permissions of the run folder", path.display())]
    Output { at: String, path: PathBuf, detail: String },
}

/// What the sandbox shows at fixed paths for one attempt (`environment.root`, `mounts`,
/// `outputs`); empty when the task asks for none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    pub root: Option<FixedPath>,
    pub mounts: Vec<FixedMount>,
}

/// The layout of `spec` for the attempt whose folder is `run_dir`: mount folders resolved
/// from `spec_dir`, and each output folder made afresh as `run_dir/outputs/<path>`. The spec
/// loader has checked every path already; a path that fails here anyway is reported, never
/// dropped.
pub fn layout(spec: &EnvironmentSpec, spec_dir: &Path, run_dir: &Path) -> Result<Layout, EnvironmentError> {
    let parse = |text: &str| FixedPath::parse(text).map_err(|e| EnvironmentError::Layout { detail: e.to_string() });
    let mut out = Layout {
        root: spec.root.as_deref().map(parse).transpose()?,
        mounts: Vec::new(),
    };
    for (at, folder) in &spec.mounts {
        let at = parse(at)?;
        let source = spec_dir
            .join(folder)
            .canonicalize()
            .map_err(|e| EnvironmentError::Layout {
                detail: format!(
                    "the folder `{folder}` for {at} cannot be resolved from {}: {e}",
                    spec_dir.display()
                ),
            })?;
        out.mounts.push(FixedMount {
            at,
            source,
            access: MountAccess::ReadOnly,
        });
    }
    for at in &spec.outputs {
        let at = parse(at)?;
        let relative = at.as_path().strip_prefix("/").unwrap_or(at.as_path());
        let folder = run_dir.join("outputs").join(relative);
        std::fs::create_dir_all(&folder).map_err(|e| EnvironmentError::Output {
            at: at.to_string(),
            path: folder.clone(),
            detail: e.to_string(),
        })?;
        out.mounts.push(FixedMount {
            at,
            source: folder,
            access: MountAccess::ReadWrite,
        });
    }
    crate::sandbox::check_layout(out.root.iter().chain(out.mounts.iter().map(|m| &m.at)))
        .map_err(|e| EnvironmentError::Layout { detail: e.to_string() })?;
    Ok(out)
}

/// An attempt's container, started, and how its image was made ready.
#[derive(Debug)]
pub struct AttemptContainer {
    pub container: Arc<Container>,
    pub image: ReadyImage,
}

impl AttemptContainer {
    /// What the attempt's `medin.container` receipt says.
    pub fn receipt_data(&self) -> serde_json::Value {
        let engine = self.container.engine();
        serde_json::json!({
            "engine": engine.flavour().as_str(),
            "engine_version": engine.version(),
            "image": self.image.name,
            "image_readied": self.image.readied.as_str(),
            "image_ms": self.image.took.as_millis() as u64,
            "container": self.container.name(),
            "start_ms": self.container.started_in().as_millis() as u64,
        })
    }
}

/// Starts the container `spec` names (`image:` or `dockerfile:`), if it names one, for the
/// attempt whose sandbox is `cfg` (its workspace, fixed mounts, network and limits) and whose
/// folder is `run_dir`: the engine probed, the image made ready (pulled or built: the harness's
/// act, before anything of the task runs), the runner's judge folders mounted at their host
/// paths, and `cfg` pointed at it (`container`, and `root`, default [`CONTAINER_ROOT`]).
pub fn start_container(
    spec: &EnvironmentSpec,
    spec_dir: &Path,
    run_dir: &Path,
    cfg: &mut SandboxConfig,
    labels: (&str, &str),
) -> Result<Option<AttemptContainer>, RunError> {
    let Some(source) = spec.container() else {
        return Ok(None);
    };
    let engine = ContainerEngine::get()?;
    let source = match source {
        ContainerSource::Image(name) => ImageSource::Named(name.to_string()),
        // Building the image is the harness's act, before the agent starts, as installing a
        // task's packages is: its `RUN` steps get the host's network (a Terminal-Bench or
        // Harbor Dockerfile installs its packages there). The agent's commands never do unless
        // the task allows it.
        ContainerSource::Dockerfile(file) => ImageSource::Dockerfile {
            file: spec_dir.join(file),
            network: true,
        },
    };
    let image = crate::sandbox::ready_image(engine, &source)?;
    // Judged runs name these folders by their host paths: the shims read-only, the reports
    // writable (see `validate::judged`).
    let (shims, reports) = crate::validate::judged::RunnerShims::folders(run_dir);
    let mut host_folders = Vec::new();
    for (folder, access) in [(shims, MountAccess::ReadOnly), (reports, MountAccess::ReadWrite)] {
        std::fs::create_dir_all(&folder)
            .and_then(|()| folder.canonicalize())
            .map(|folder| host_folders.push((folder, access)))
            .map_err(|e| RunError::harness(format!("cannot create {}", folder.display()), e))?;
    }
    let root = match &cfg.root {
        Some(root) => root.clone(),
        None => FixedPath::parse(CONTAINER_ROOT).map_err(|e| RunError::harness("the container root", e))?,
    };
    let container = Container::start(
        engine,
        &ContainerRequest {
            image: &image.name,
            workspace: &cfg.workspace,
            root: &root,
            mounts: &cfg.mounts,
            host_folders: &host_folders,
            network: cfg.network,
            limits: &cfg.limits,
            grace: cfg.grace,
            run_id: labels.0,
            trial: labels.1,
        },
    )?;
    let container = Arc::new(container);
    cfg.root = Some(root);
    cfg.container = Some(Arc::clone(&container));
    Ok(Some(AttemptContainer { container, image }))
}

/// What the sandbox gets for a provisioned environment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provisioned {
    /// Directories to put first on `PATH`, in order.
    pub path: Vec<PathBuf>,
    /// Extra variables (`NODE_PATH`).
    pub env: Vec<(String, String)>,
    /// Directories the sandbox must let commands read (and only read).
    pub read_paths: Vec<PathBuf>,
}

/// Checks `spec`'s apt packages and provisions its Python and npm packages under `cache`
/// (`target/medin/envs`).
pub fn provision(spec: &EnvironmentSpec, cache: &Path) -> Result<Provisioned, EnvironmentError> {
    let missing: Vec<String> = spec.apt.iter().filter(|p| !apt_installed(p)).cloned().collect();
    if !missing.is_empty() {
        return Err(EnvironmentError::MissingApt { missing });
    }
    let mut out = Provisioned::default();
    if !spec.python.is_empty() {
        let python = host_python().ok_or(EnvironmentError::MissingTool {
            tool: "python3",
            kind: "Python",
            package: "python3 python3-venv",
        })?;
        let entry = cache_entry(cache, "py", &spec.python, &python.display().to_string());
        build_once(&entry, |tmp| {
            run(
                "Python",
                &spec.python,
                Command::new(&python).args(["-m", "venv"]).arg(tmp),
            )?;
            run(
                "Python",
                &spec.python,
                Command::new(tmp.join("bin/python"))
                    .args([
                        "-m",
                        "pip",
                        "install",
                        "--quiet",
                        "--disable-pip-version-check",
                        "--no-input",
                    ])
                    .args(&spec.python),
            )
        })?;
        out.path.push(entry.join("bin"));
        out.read_paths.push(entry);
    }
    if !spec.node.is_empty() {
        let npm = which("npm").ok_or(EnvironmentError::MissingTool {
            tool: "npm",
            kind: "npm",
            package: "npm",
        })?;
        let entry = cache_entry(cache, "node", &spec.node, &npm.display().to_string());
        build_once(&entry, |tmp| {
            run(
                "npm",
                &spec.node,
                Command::new(&npm)
                    .args(["install", "--no-audit", "--no-fund", "--silent", "--prefix"])
                    .arg(tmp)
                    .args(&spec.node),
            )
        })?;
        out.path.push(entry.join("node_modules/.bin"));
        out.env
            .push(("NODE_PATH".into(), entry.join("node_modules").display().to_string()));
        out.read_paths.push(entry);
    }
    Ok(out)
}

/// `cache/<kind>-<hash>`: the hash of the kind, the sorted packages and the tool that builds it.
fn cache_entry(cache: &Path, kind: &str, packages: &[String], tool: &str) -> PathBuf {
    let mut sorted = packages.to_vec();
    sorted.sort();
    sorted.dedup();
    let mut hasher = Sha256::new();
    hasher.update(kind.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    for p in &sorted {
        hasher.update([0]);
        hasher.update(p.as_bytes());
    }
    let digest = hex::encode(hasher.finalize());
    cache.join(format!("{kind}-{}", &digest[..16]))
}

/// The file an entry holds once it is complete.
pub(crate) const COMPLETE: &str = ".medin-complete";

/// Builds `entry` with `build` unless it is complete already. The build happens in place (a
/// venv and the scripts pip installs record their own absolute path), under an exclusive lock
/// on `<entry>.lock`, so processes building the same entry wait for each other; an entry
/// counts only once its completion mark is written, and a half-built one (a crash, a failed
/// install) is removed and built again.
pub(crate) fn build_once(
    entry: &Path,
    build: impl FnOnce(&Path) -> Result<(), EnvironmentError>,
) -> Result<(), EnvironmentError> {
    if entry.join(COMPLETE).is_file() {
        return Ok(());
    }
    let cache_error = |e: std::io::Error| EnvironmentError::Cache {
        path: entry.to_path_buf(),
        detail: e.to_string(),
    };
    let parent = entry.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(cache_error)?;
    let mut lock_path = entry.as_os_str().to_owned();
    lock_path.push(".lock");
    let lock = std::fs::File::create(PathBuf::from(lock_path)).map_err(cache_error)?;
    // Held until this function returns (dropping the guard unlocks).
    let _held = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive)
        .map_err(|(_, errno)| cache_error(std::io::Error::from(errno)))?;
    if entry.join(COMPLETE).is_file() {
        return Ok(());
    }
    if entry.exists() {
        std::fs::remove_dir_all(entry).map_err(cache_error)?;
    }
    std::fs::create_dir_all(entry).map_err(cache_error)?;
    match build(entry) {
        Ok(()) => std::fs::write(entry.join(COMPLETE), b"").map_err(cache_error),
        Err(e) => {
            let _ = std::fs::remove_dir_all(entry);
            Err(e)
        }
    }
}

/// Runs one install command with a time limit; its failure names the command and the tail of
/// what it printed.
pub(crate) fn run(kind: &'static str, packages: &[String], command: &mut Command) -> Result<(), EnvironmentError> {
    let shown = format!(
        "{} {}",
        command.get_program().to_string_lossy(),
        command
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let failed = |detail: String| EnvironmentError::Install {
        kind,
        packages: packages.join(" "),
        command: shown.clone(),
        detail,
    };
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .spawn()
        .map_err(|e| failed(format!("could not start: {e}")))?;
    let output = wait_with_timeout(child, INSTALL_TIMEOUT).map_err(|e| failed(e.to_string()))?;
    if output.status.success() {
        return Ok(());
    }
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let tail: Vec<&str> = text.lines().rev().take(8).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(failed(format!("exited with {}: {}", output.status, tail.join(" | "))))
}

/// Waits for `child` at most `limit`, killing it then.
fn wait_with_timeout(mut child: std::process::Child, limit: Duration) -> std::io::Result<std::process::Output> {
    let started = std::time::Instant::now();
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let readers = [
        std::thread::spawn(move || read_all(out.as_mut())),
        std::thread::spawn(move || read_all(err.as_mut())),
    ];
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other(format!(
                "did not finish within {}s",
                limit.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let [stdout, stderr] = readers.map(|r| r.join().unwrap_or_default());
    Ok(std::process::Output { status, stdout, stderr })
}

fn read_all(stream: Option<&mut impl std::io::Read>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(s) = stream {
        let _ = s.read_to_end(&mut buf);
    }
    buf
}

/// Whether Debian package `name` is installed.
fn apt_installed(name: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", name])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
}

/// The host's real python3 (a pyenv shim resolved), found once.
pub(crate) fn host_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let out = Command::new(which("python3")?)
                .args(["-c", "import sys; print(sys.executable)"])
                .stdin(Stdio::null())
                .output()
                .ok()?;
            let exe = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            exe.is_file().then_some(exe)
        })
        .clone()
}

pub(crate) fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(python: &[&str], node: &[&str], apt: &[&str]) -> EnvironmentSpec {
        let list = |l: &[&str]| l.iter().map(|s| s.to_string()).collect();
        EnvironmentSpec {
            python: list(python),
            node: list(node),
            apt: list(apt),
            ..EnvironmentSpec::default()
        }
    }

    #[test]
    fn a_layout_resolves_mounts_and_makes_each_output_folder_in_the_run_folder() {
        let dir = tempfile::tempdir().unwrap();
        let (spec_dir, run_dir) = (dir.path().join("suite"), dir.path().join("run"));
        std::fs::create_dir_all(spec_dir.join("tests")).unwrap();
        let env = EnvironmentSpec {
            root: Some("/app".into()),
            mounts: [("/tests".to_string(), "tests/".to_string())].into_iter().collect(),
            outputs: vec!["/logs/verifier".into()],
            ..EnvironmentSpec::default()
        };
        let l = layout(&env, &spec_dir, &run_dir).unwrap();
        assert_eq!(l.root.as_ref().map(ToString::to_string).as_deref(), Some("/app"));
        assert_eq!(l.mounts.len(), 2);
        assert_eq!(l.mounts[0].source, spec_dir.join("tests").canonicalize().unwrap());
        assert_eq!(l.mounts[0].access, MountAccess::ReadOnly);
        assert_eq!(l.mounts[1].source, run_dir.join("outputs/logs/verifier"));
        let missing = EnvironmentSpec {
            mounts: [("/data".to_string(), "data".to_string())].into_iter().collect(),
            ..EnvironmentSpec::default()
        };
        assert!(layout(&missing, &spec_dir, &run_dir)
            .unwrap_err()
            .to_string()
            .contains("/data"));
        assert_eq!(l.mounts[1].access, MountAccess::ReadWrite);
        assert!(run_dir.join("outputs/logs/verifier").is_dir());
        // What the loader refuses is refused here too, never dropped.
        let nested = EnvironmentSpec {
            outputs: vec!["/app/logs".into()],
            ..env.clone()
        };
        assert!(matches!(
            layout(&nested, &spec_dir, &run_dir),
            Err(EnvironmentError::Layout { .. })
        ));
        let reserved = EnvironmentSpec {
            root: Some("/tmp/app".into()),
            ..EnvironmentSpec::default()
        };
        assert!(layout(&reserved, &spec_dir, &run_dir)
            .unwrap_err()
            .to_string()
            .contains("/tmp"));
    }

    #[test]
    fn the_cache_key_is_the_sorted_list_and_the_tool() {
        let cache = Path::new("/c");
        let a = cache_entry(cache, "py", &["b".into(), "a".into()], "/usr/bin/python3");
        assert_eq!(
            a,
            cache_entry(cache, "py", &["a".into(), "b".into(), "a".into()], "/usr/bin/python3")
        );
        assert_ne!(a, cache_entry(cache, "py", &["a".into()], "/usr/bin/python3"));
        assert_ne!(a, cache_entry(cache, "py", &["a".into(), "b".into()], "/opt/python3"));
        assert!(a.file_name().unwrap().to_str().unwrap().starts_with("py-"));
    }

    #[test]
    fn a_missing_apt_package_names_the_command_that_installs_it() {
        let e = provision(&spec(&[], &[], &["medin-no-such-package"]), Path::new("/nonexistent")).unwrap_err();
        assert!(
            e.to_string().contains("apt-get install -y medin-no-such-package"),
            "{e}"
        );
    }

    #[test]
    fn a_failed_build_leaves_nothing_and_a_finished_one_is_reused() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("py-x");
        let e = build_once(&entry, |tmp| {
            std::fs::write(tmp.join("half"), "x").unwrap();
            Err(EnvironmentError::Cache {
                path: tmp.to_path_buf(),
                detail: "boom".into(),
            })
        });
        assert!(e.is_err());
        assert!(!entry.exists(), "no half entry is left");
        build_once(&entry, |tmp| {
            std::fs::write(tmp.join("done"), "x").map_err(|e| EnvironmentError::Cache {
                path: tmp.to_path_buf(),
                detail: e.to_string(),
            })
        })
        .unwrap();
        assert!(entry.join("done").is_file());
        build_once(&entry, |_| panic!("a complete entry is not built again")).unwrap();
        std::fs::remove_file(entry.join(COMPLETE)).unwrap();
        build_once(&entry, |tmp| {
            assert!(
                !tmp.join("done").exists(),
                "an entry never marked complete is built afresh"
            );
            Ok(())
        })
        .unwrap();
    }

    #[test]
    fn a_failing_install_names_its_command_and_the_tail_of_its_output() {
        let e = run(
            "Python",
            &["nothing".into()],
            Command::new("sh").args(["-c", "echo first; echo 'ERROR: No matching distribution' >&2; exit 3"]),
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.contains("sh -c") && text.contains("No matching distribution"),
            "{text}"
        );
    }
}
