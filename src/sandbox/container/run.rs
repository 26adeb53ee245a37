//! One attempt's container: started once (`run -d`, the workspace bind-mounted at the task's
//! root, limits as engine flags, no capabilities, no network unless allowed, labelled with the
//! owner and the run), every command `exec`'d into it with the command's timeout and output cap
//! (a timed-out command's process group is killed inside the container, not only its `exec`
//! client), and removed (SIGTERM, grace, SIGKILL) when the attempt ends or the handle drops.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::engine::{own_hard_limit, poll_interval, tail, Engine, Flavour, StartFixes, CALL_TIMEOUT, LABEL};
use super::ContainerError;
use crate::sandbox::capture::StreamReader;
use crate::sandbox::{
    CommandOutcome, ExitKind, FixedMount, FixedPath, Isolation, LimitHit, MountAccess, ResourceLimits, ResourceUsage,
    SandboxConfig, SandboxError,
};

/// The container's first process: a shell that sleeps until SIGTERM and reaps whatever is
/// orphaned to it. The image needs `/bin/sh` and `sleep`.
const KEEPER: &str = "trap 'exit 0' TERM; command -v sleep >/dev/null 2>&1 || { echo 'medin: the image has no sleep' >&2; exit 127; }; while :; do sleep 86400 & wait; done";

/// What every command is run by inside the container: it records its process id (the group
/// it leads: `exec` makes it a session leader) where the harness finds it on a timeout, runs
/// the command with `sh -c`, and forgets the id again. `$0` is the command's id.
const WRAPPER: &str = "echo $$ > /dev/shm/medin-cmd-$0.pid 2>/dev/null; /bin/sh -c \"$1\"; s=$?; rm -f /dev/shm/medin-cmd-$0.pid; exit $s";

/// How long to wait for the output pipes once the `exec` client has ended.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// What an attempt's container is made of.
#[derive(Debug, Clone)]
pub struct ContainerRequest<'a> {
    /// The image (ready: see `image::ready`).
    pub image: &'a str,
    /// The workspace on the host, bind-mounted read-write at `root`.
    pub workspace: &'a Path,
    /// Where commands see it (the task's `environment.root`, default `/app`).
    pub root: &'a FixedPath,
    /// The task's fixed mounts (`environment.mounts`, `outputs`).
    pub mounts: &'a [FixedMount],
    /// Host folders shown at their own paths (the runner's shims and report folders of judged
    /// runs).
    pub host_folders: &'a [(PathBuf, MountAccess)],
    /// Whether commands may use the network.
    pub network: bool,
    /// The task's limits: `memory` and `processes` for the whole container (cgroup), the
    /// others per process (rlimits).
    pub limits: &'a ResourceLimits,
    /// SIGTERM → SIGKILL grace, for commands and for the container itself.
    pub grace: Duration,
    /// The run id and the trial, as labels.
    pub run_id: &'a str,
    pub trial: &'a str,
}

/// A running container, removed when dropped. Shared by every command of the attempt.
#[derive(Debug)]
pub struct Container {
    engine: &'static Engine,
    name: String,
    image: String,
    root: FixedPath,
    workspace: PathBuf,
    grace: Duration,
    /// What starting it took.
    started_in: Duration,
    removed: Mutex<bool>,
    commands: AtomicU64,
}

impl Container {
    /// Starts the container of `request` with `engine`. A start that fails for want of a fix
    /// this machine needs (see `engine::StartFixes`) is retried with it.
    pub fn start(engine: &'static Engine, request: &ContainerRequest<'_>) -> Result<Container, ContainerError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let started = Instant::now();
        let name = format!(
            "medin-{}-{}",
            crate::sandbox::reclaim::owner(),
            COUNTER.fetch_add(1, Ordering::Relaxed) + 1
        );
        let failed = |detail: String| ContainerError::Start {
            image: request.image.to_string(),
            detail,
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            let fixes = engine.fixes();
            let args = run_args(request, &name, fixes).map_err(failed)?;
            let out = engine.call(&args, CALL_TIMEOUT).map_err(failed)?;
            if out.status.success() {
                break;
            }
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            // A container that was created before the failure would block the name.
            let _ = engine.call(["rm", "-f", name.as_str()], CALL_TIMEOUT);
            // Another start of this process may have learnt the fix meanwhile.
            if attempt < 3 && (engine.learn_from(&stderr) || engine.fixes() != fixes) {
                continue;
            }
            return Err(failed(format!(
                "`{} run` failed: {}",
                engine.flavour().as_str(),
                tail(out.stderr.as_slice(), 4)
            )));
        }
        let mut container = Container {
            engine,
            name,
            image: request.image.to_string(),
            root: request.root.clone(),
            workspace: request.workspace.to_path_buf(),
            grace: request.grace,
            started_in: Duration::ZERO,
            removed: Mutex::new(false),
            commands: AtomicU64::new(0),
        };
        // The keeper exits at once when the image cannot keep it (no sleep): say so now, not at
        // the first command.
        let running = engine.call(
            ["inspect", "--format", "{{.State.Running}}", container.name.as_str()],
            CALL_TIMEOUT,
        );
        if !running.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true") {
            let logs = engine
                .call(["logs", container.name.as_str()], CALL_TIMEOUT)
                .map(|o| tail(&[o.stdout, o.stderr].concat(), 3))
                .unwrap_or_default();
            return Err(failed(format!(
                "the container stopped at once ({logs}); the image needs /bin/sh and sleep"
            )));
        }
        container.started_in = started.elapsed();
        Ok(container)
    }

    /// The container's name (`medin-<owner>-<n>`).
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn image(&self) -> &str {
        &self.image
    }

    pub fn engine(&self) -> &'static Engine {
        self.engine
    }

    /// What starting it took (`run -d` until it was seen running).
    pub fn started_in(&self) -> Duration {
        self.started_in
    }

    /// Removes the container: SIGTERM to its first process, `grace`, then SIGKILL to all that is
    /// left. Once; later calls (and the drop) do nothing.
    pub fn remove(&self) {
        let mut removed = self.removed.lock().unwrap_or_else(|p| p.into_inner());
        if *removed {
            return;
        }
        *removed = true;
        let grace = self.grace.as_secs().max(1).to_string();
        let name = self.name.as_str();
        match self.engine.flavour() {
            Flavour::Podman => {
                let _ = self.engine.call(["rm", "-f", "-t", grace.as_str(), name], CALL_TIMEOUT);
            }
            Flavour::Docker => {
                let _ = self.engine.call(["stop", "-t", grace.as_str(), name], CALL_TIMEOUT);
                let _ = self.engine.call(["rm", "-f", name], CALL_TIMEOUT);
            }
        }
    }

    /// Runs `command` with `/bin/sh -c` in the container, in `cwd` (workspace-relative) or the
    /// root, with `cfg`'s environment, timeout and output cap: the counterpart of
    /// `sandbox::run_shell` for a task with a container.
    pub(crate) fn run_shell(
        &self,
        cfg: &SandboxConfig,
        command: &str,
        cwd: Option<&Path>,
    ) -> Result<CommandOutcome, SandboxError> {
        let spawn_err = |source: std::io::Error| SandboxError::Spawn {
            command: command.to_string(),
            workspace: cfg.workspace.clone(),
            source,
        };
        let seen = self.seen_dir(cfg, cwd).map_err(|e| match e {
            Seen::Outside(rel) => SandboxError::OutsideWorkspace(rel),
            Seen::Io(e) => spawn_err(e),
        })?;
        let id = format!("{}-{}", self.name, self.commands.fetch_add(1, Ordering::Relaxed) + 1);
        let mut exec = self.engine.command(["exec"]);
        exec.arg("-w").arg(&seen);
        for (k, v) in exec_env(cfg) {
            exec.arg("-e").arg(format!("{k}={v}"));
        }
        exec.args([self.name.as_str(), "/bin/sh", "-c", WRAPPER, id.as_str(), command]);
        let started = Instant::now();
        let mut child = exec.spawn().map_err(spawn_err)?;
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(spawn_err(std::io::Error::other(
                "the exec client's output could not be piped",
            )));
        };
        let out = StreamReader::start(stdout, cfg.output_cap);
        let err = StreamReader::start(stderr, cfg.output_cap);
        let deadline = started + cfg.timeout;
        let mut timed_out = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() < deadline => std::thread::sleep(poll_interval(started)),
                Ok(None) => {
                    timed_out = true;
                    break self.end_timed_out(&mut child, &id);
                }
                Err(e) => return Err(spawn_err(e)),
            }
        };
        let duration_ms = started.elapsed().as_millis() as u64;
        let stdout = out.finish(DRAIN_WAIT);
        let stderr = err.finish(DRAIN_WAIT);
        let code = std::os::unix::process::ExitStatusExt::signal(&status)
            .map(|s| 128 + s)
            .or(status.code())
            .unwrap_or(-1);
        // 125 is the engine's own failure; when the container is gone it is the harness's, not
        // the command's (a command may exit 125 itself, so the container is asked).
        if code == 125 && !timed_out && !self.running() {
            return Err(SandboxError::Container {
                detail: format!(
                    "the attempt's container {} is not running any more: {}",
                    self.name,
                    stderr.text.trim()
                ),
            });
        }
        let exit = if timed_out && code > 128 && code <= 128 + 64 {
            ExitKind::Signal(code - 128)
        } else {
            ExitKind::Code(code)
        };
        let limit = if timed_out {
            Some(LimitHit::Timeout)
        } else {
            name_limit(&cfg.limits, code, &stderr.text)
        };
        Ok(CommandOutcome {
            exit,
            stdout,
            stderr,
            duration_ms,
            timed_out,
            limit,
            isolation: Isolation::Container,
            usage: ResourceUsage::default(),
        })
    }

    /// Ends a command that ran past its timeout, inside the container: SIGTERM to its process
    /// group, up to `grace` for the group to empty, SIGKILL to what is left (members that
    /// ignored SIGTERM, or outlived their leader); then its `exec` client. Without the recorded
    /// id (the command removed it), every process of the container but its first gets the
    /// signals.
    fn end_timed_out(&self, child: &mut std::process::Child, id: &str) -> std::process::ExitStatus {
        let tenths = (self.grace.as_millis() / 100).max(1);
        let script = format!(
            "f=/dev/shm/medin-cmd-{id}.pid; if read p < $f 2>/dev/null; then t=-$p; else t=-1; fi; \
             kill -TERM $t 2>/dev/null; i=0; \
             while [ $i -lt {tenths} ] && kill -0 $t 2>/dev/null; do sleep 0.1; i=$((i+1)); done; \
             kill -KILL $t 2>/dev/null; rm -f $f; true"
        );
        let _ = self.engine.call(
            ["exec", self.name.as_str(), "/bin/sh", "-c", script.as_str()],
            CALL_TIMEOUT.max(self.grace * 2),
        );
        let until = Instant::now() + Duration::from_secs(2);
        while Instant::now() < until {
            if let Ok(Some(status)) = child.try_wait() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        child
            .wait()
            .unwrap_or_else(|_| std::os::unix::process::ExitStatusExt::from_raw(9))
    }

    /// Whether the container still runs.
    fn running(&self) -> bool {
        self.engine
            .call(
                ["inspect", "--format", "{{.State.Running}}", self.name.as_str()],
                CALL_TIMEOUT,
            )
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true")
    }

    /// Where `cwd` (workspace-relative) is inside the container; a `cwd` that leads out of the
    /// workspace on the host (`..`, a link the agent made) is refused.
    fn seen_dir(&self, cfg: &SandboxConfig, cwd: Option<&Path>) -> Result<PathBuf, Seen> {
        let Some(rel) = cwd else {
            return Ok(self.root.as_path().to_path_buf());
        };
        let host_root = cfg.workspace.canonicalize().map_err(Seen::Io)?;
        let joined = host_root.join(rel);
        let resolved = joined.canonicalize().map_err(|e| {
            Seen::Io(std::io::Error::new(
                e.kind(),
                format!("working directory {}: {e}", joined.display()),
            ))
        })?;
        let below = resolved
            .strip_prefix(&host_root)
            .map_err(|_| Seen::Outside(rel.to_path_buf()))?;
        Ok(if below.as_os_str().is_empty() {
            self.root.as_path().to_path_buf()
        } else {
            self.root.as_path().join(below)
        })
    }

    /// The host workspace the container shows at its root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }
}

enum Seen {
    Outside(PathBuf),
    Io(std::io::Error),
}

impl Drop for Container {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The `run -d` arguments for `request`.
fn run_args(request: &ContainerRequest<'_>, name: &str, fixes: StartFixes) -> Result<Vec<String>, String> {
    let mut a: Vec<String> = vec!["run".into(), "-d".into(), "--name".into(), name.into()];
    for label in [
        format!("{LABEL}=1"),
        format!("{LABEL}.run={}", request.run_id),
        format!("{LABEL}.trial={}", request.trial),
    ] {
        a.extend(["--label".into(), label]);
    }
    if !request.network {
        a.extend(["--network".into(), "none".into()]);
    }
    a.extend([
        "--cap-drop=all".into(),
        "--security-opt".into(),
        "no-new-privileges".into(),
    ]);
    let l = request.limits;
    if let Some(m) = l.memory {
        // The same value for memory and memory+swap: no swap.
        a.extend(["--memory".into(), m.to_string(), "--memory-swap".into(), m.to_string()]);
    }
    if let Some(n) = l.processes {
        a.extend(["--pids-limit".into(), n.to_string()]);
    }
    // Open files: the task's limit, never above what this process may hand on (an engine's
    // default above the hard limit fails to start where CAP_SYS_RESOURCE is withheld).
    let nofile = l
        .open_files
        .unwrap_or(u64::MAX)
        .min(own_hard_limit(nix::sys::resource::Resource::RLIMIT_NOFILE));
    if nofile != u64::MAX {
        a.extend(["--ulimit".into(), format!("nofile={nofile}:{nofile}")]);
    }
    if let Some(n) = fixes.nproc {
        a.extend(["--ulimit".into(), format!("nproc={n}:{n}")]);
    }
    if let Some(f) = l.file_size {
        a.extend(["--ulimit".into(), format!("fsize={f}:{f}")]);
    }
    if let Some(c) = l.cpu_secs {
        a.extend(["--ulimit".into(), format!("cpu={c}:{}", c.saturating_add(1))]);
    }
    if fixes.runc {
        a.extend(["--runtime".into(), "runc".into()]);
    }
    a.extend([
        "-v".into(),
        volume(request.workspace, request.root.as_path(), MountAccess::ReadWrite)?,
    ]);
    for m in request.mounts {
        a.extend(["-v".into(), volume(&m.source, m.at.as_path(), m.access)?]);
    }
    for (folder, access) in request.host_folders {
        a.extend(["-v".into(), volume(folder, folder, *access)?]);
    }
    a.extend([
        "-w".into(),
        request.root.to_string(),
        "--entrypoint".into(),
        "/bin/sh".into(),
        request.image.into(),
        "-c".into(),
        KEEPER.into(),
    ]);
    Ok(a)
}

/// `-v` text for a bind mount of `host` at `at`.
fn volume(host: &Path, at: &Path, access: MountAccess) -> Result<String, String> {
    for p in [host, at] {
        let text = p
            .to_str()
            .ok_or_else(|| format!("the path {} is not UTF-8", p.display()))?;
        if text.contains(':') || text.contains(',') {
            return Err(format!(
                "the path {text} holds `:` or `,`, which a bind mount cannot name; use an output folder without them"
            ));
        }
    }
    let mode = match access {
        MountAccess::ReadOnly => ":ro",
        MountAccess::ReadWrite => "",
    };
    Ok(format!("{}:{}{mode}", host.display(), at.display()))
}

/// The environment a command gets on top of the image's: what a host command gets that makes
/// sense inside (`TERM`, `PYTHONDONTWRITEBYTECODE`), then `cfg.env` — but never the host's
/// `PATH`, which names host folders: the image's `PATH` stays.
fn exec_env(cfg: &SandboxConfig) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vec![
        ("TERM".into(), "dumb".into()),
        ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
    ];
    env.extend(
        cfg.env
            .iter()
            .filter(|(k, _)| k != "PATH" && !k.is_empty() && !k.contains('='))
            .cloned(),
    );
    env
}

/// The limit a command that was not timed out ran into, from how it ended: SIGXCPU and
/// SIGXFSZ (as a shell reports them, 128 + the signal), `File too large`, a failed fork, and a
/// SIGKILL or an allocation failure when a memory limit is set.
fn name_limit(limits: &ResourceLimits, code: i32, stderr: &str) -> Option<LimitHit> {
    let lower = stderr.to_ascii_lowercase();
    if code == 128 + libc::SIGXCPU {
        return Some(LimitHit::CpuLimit);
    }
    if code == 128 + libc::SIGXFSZ || (code != 0 && lower.contains("file too large")) {
        return Some(LimitHit::FileSizeLimit);
    }
    if code != 0
        && (lower.contains("resource temporarily unavailable")
            || lower.contains("can't fork")
            || lower.contains("cannot fork"))
    {
        return Some(LimitHit::ProcessLimit);
    }
    if limits.memory.is_some()
        && (code == 128 + libc::SIGKILL
            || (code != 0 && (lower.contains("cannot allocate memory") || lower.contains("memoryerror"))))
    {
        return Some(LimitHit::MemoryLimit);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_are_named_from_how_a_command_ended() {
        let limits = ResourceLimits::default();
        assert_eq!(name_limit(&limits, 128 + libc::SIGXCPU, ""), Some(LimitHit::CpuLimit));
        assert_eq!(
            name_limit(&limits, 1, "dd: File too large"),
            Some(LimitHit::FileSizeLimit)
        );
        assert_eq!(name_limit(&limits, 2, "sh: can't fork"), Some(LimitHit::ProcessLimit));
        assert_eq!(name_limit(&limits, 137, ""), Some(LimitHit::MemoryLimit));
        let unlimited = ResourceLimits {
            memory: None,
            ..limits.clone()
        };
        assert_eq!(name_limit(&unlimited, 137, ""), None);
        assert_eq!(name_limit(&limits, 0, "file too large"), None);
        assert_eq!(name_limit(&limits, 1, "boom"), None);
    }

    #[test]
    fn mounts_with_separators_are_refused_and_others_spelled_out() {
        assert_eq!(
            volume(Path::new("/w/ws"), Path::new("/app"), MountAccess::ReadWrite).unwrap(),
            "/w/ws:/app"
        );
        assert_eq!(
            volume(Path::new("/w/t"), Path::new("/tests"), MountAccess::ReadOnly).unwrap(),
            "/w/t:/tests:ro"
        );
        assert!(volume(Path::new("/w/a:b"), Path::new("/app"), MountAccess::ReadWrite).is_err());
    }

    #[test]
    fn the_host_path_never_reaches_a_container_command() {
        let mut cfg = SandboxConfig::new("/w");
        cfg.env.push(("PATH".into(), "/host/bin".into()));
        cfg.env.push(("MEDIN_WORKSPACE".into(), "/app".into()));
        let env = exec_env(&cfg);
        assert!(!env.iter().any(|(k, _)| k == "PATH"));
        assert!(env.contains(&("MEDIN_WORKSPACE".into(), "/app".into())));
    }
}
