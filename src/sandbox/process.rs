//! Running one command from start to receipt: prepare its environment, private `TMPDIR` and
//! cgroup, start it ([`super::spawn`]), capture its output, wait for its exit or its deadline,
//! end whatever is left of its tree ([`super::tree`]: SIGTERM, grace, SIGKILL), reap it with
//! its resource usage, and name the limit that ended it.
//!
//! The tree is always ended while the shell is still an unreaped zombie (its exit is observed
//! with a pidfd or `waitid(WNOWAIT)`, or reported by its guardian, which reaps it only at the
//! very end), so the process-group id cannot have been reused by an unrelated process when
//! the signals are sent. Agents take the same start and end: unconfined ([`spawn_piped`]) or
//! at a level like a command ([`spawn_agent`]), with piped stdin and a scratch directory.
//! The first command of a process first takes back what dead medin processes left
//! (`reclaim.rs`).

use std::ffi::OsStr;
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::unistd::Pid;

use super::capture::StreamReader;
use super::spawn::{self, ChildSetup, CommandLine, RawLimits, Stdin};
use super::tree::{after, Marker, Tree, GROUP_WAIT, MARKER_VAR};
use super::{
    CommandOutcome, ExitKind, FixedPath, Isolation, LimitHit, ResourceLimits, ResourceUsage, SandboxConfig,
    SandboxError, SANDBOX_PATH,
};

/// How long to wait for the output pipes to close once the process group is dead.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

/// How long to wait for the output pipes of an attempt's command whose leftovers keep
/// running (they may hold the pipes open until the attempt ends).
const LEFTOVER_DRAIN: Duration = Duration::from_millis(50);

pub(crate) fn run_shell(
    cfg: &SandboxConfig,
    command: &str,
    cwd: Option<&Path>,
) -> Result<CommandOutcome, SandboxError> {
    if cfg.isolation == Isolation::Strict {
        if let Err(reason) = super::probe::strict_available() {
            return Err(SandboxError::Unsupported {
                level: Isolation::Strict,
                reason,
            });
        }
    }
    run_shell_unchecked(cfg, command, cwd)
}

/// [`run_shell`] without asking the probe whether `strict` works (the probe itself uses it).
pub(crate) fn run_shell_unchecked(
    cfg: &SandboxConfig,
    command: &str,
    cwd: Option<&Path>,
) -> Result<CommandOutcome, SandboxError> {
    // Fixed paths exist only in a strict view: never run such a command at the host path.
    super::fixed::require_strict(cfg)?;
    super::reclaim::at_startup();
    let spawn_err = |source: io::Error| SandboxError::Spawn {
        command: command.to_string(),
        workspace: cfg.workspace.clone(),
        source,
    };
    let root = cfg.workspace.canonicalize().map_err(spawn_err)?;
    let dir = match cwd {
        None => root.clone(),
        Some(rel) => {
            let joined = root.join(rel);
            let resolved = joined.canonicalize().map_err(|e| {
                spawn_err(io::Error::new(
                    e.kind(),
                    format!("working directory {}: {e}", joined.display()),
                ))
            })?;
            if !resolved.starts_with(&root) {
                return Err(SandboxError::OutsideWorkspace(rel.to_path_buf()));
            }
            resolved
        }
    };
    let level = cfg.isolation;
    // A command of an attempt with namespaces joins them (see `attempt.rs`): what it leaves
    // running is then the attempt's, and its view, TMPDIR and cgroup may be the attempt's.
    #[cfg(target_os = "linux")]
    let joining = cfg.attempt.as_ref().and_then(|a| a.joining(cfg, &root));
    #[cfg(target_os = "linux")]
    let shares_view = joining.as_ref().is_some_and(|j| j.same_view);
    #[cfg(not(target_os = "linux"))]
    let shares_view = false;
    let own_tmp = if shares_view {
        None
    } else {
        Some(PrivateTmp::create(&root).map_err(spawn_err)?)
    };
    #[cfg(target_os = "linux")]
    let tmp_path: &Path = match (&own_tmp, &joining) {
        (Some(t), _) => t.path(),
        (None, Some(j)) => j.tmp,
        (None, None) => unreachable!("a command without a TMPDIR of its own shares the attempt's"),
    };
    #[cfg(not(target_os = "linux"))]
    let tmp_path: &Path = own_tmp.as_ref().map(PrivateTmp::path).unwrap_or(Path::new("/tmp"));
    let marker = Marker::new();
    let limited = level != Isolation::None;

    #[cfg(target_os = "linux")]
    let cgroup = if limited && cfg.cgroup.unwrap_or(level == Isolation::Strict) {
        super::cgroup::CommandCgroup::create(cfg.limits.processes, cfg.limits.memory).map_err(|e| {
            spawn_err(io::Error::new(
                e.kind(),
                format!("cannot create the command's cgroup: {e}"),
            ))
        })?
    } else {
        None
    };
    // Where the command sees the workspace and its working directory: at the fixed root when
    // the task has one (strict only, checked above), else at their host paths.
    let seen_root = cfg.root.as_ref().map_or(root.as_path(), FixedPath::as_path);
    let seen_dir = match dir.strip_prefix(&root) {
        Ok(below) if cfg.root.is_some() && !below.as_os_str().is_empty() => seen_root.join(below),
        Ok(_) if cfg.root.is_some() => seen_root.to_path_buf(),
        _ => dir.clone(),
    };
    #[cfg(target_os = "linux")]
    let strict = if level == Isolation::Strict {
        let view = super::view::ViewRequest {
            workspace: &root,
            tmp: tmp_path,
            read_paths: &cfg.read_paths,
            write_paths: &cfg.write_paths,
            network: cfg.network,
            cwd: None,
            root: cfg.root.as_ref(),
            mounts: &cfg.mounts,
            enter: cfg.root.is_some().then_some(seen_dir.as_path()),
        };
        let entry = match &joining {
            None => super::strict::Entry::Alone,
            Some(j) => super::strict::Entry::Joined {
                ns: j.ns,
                view: if j.same_view {
                    super::strict::JoinedView::Attempts { enter: &seen_dir }
                } else {
                    super::strict::JoinedView::Own
                },
            },
        };
        let unlimited_by_cgroup = !cgroup.as_ref().is_some_and(|cg| cg.limits_processes());
        Some(
            super::strict::prepare(view, cfg.limits.processes.filter(|_| unlimited_by_cgroup), entry)
                .map_err(|reason| SandboxError::Unsupported { level, reason })?,
        )
    } else {
        None
    };

    let env = command_env(
        cfg,
        seen_root,
        tmp_path,
        cfg.root.is_some().then_some(seen_dir.as_path()),
        &marker,
    );
    let line = CommandLine::new("/bin/sh", &["-c", command], env, &dir).map_err(spawn_err)?;
    // Strict: the first process reports the command's own exit here (see `wait_command`).
    #[cfg(target_os = "linux")]
    let status_pipe = match &strict {
        Some(_) => Some(spawn::cloexec_pipe().map_err(spawn_err)?),
        None => None,
    };
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))] // changed only where cgroups exist
    let mut raw_limits = RawLimits::from(&cfg.limits);
    // With a memory cgroup, the cgroup is the memory limit (resident memory of the whole tree,
    // a hit named by the OOM counter). RLIMIT_AS would only get in the way: it counts address
    // space, which runtimes such as node, the JVM or Go reserve far beyond what they use.
    #[cfg(target_os = "linux")]
    if cgroup.as_ref().is_some_and(|cg| cg.limits_memory()) {
        raw_limits.memory = None;
    }
    let setup = ChildSetup {
        limits: limited.then_some(raw_limits),
        #[cfg(target_os = "linux")]
        cgroup_fds: {
            let mut fds = [-1i32; 2];
            if let Some(cg) = &cgroup {
                for (slot, fd) in fds.iter_mut().zip(cg.join_fds()) {
                    *slot = fd;
                }
            }
            fds
        },
        #[cfg(target_os = "linux")]
        die_with_parent: false,
        #[cfg(target_os = "linux")]
        strict: strict
            .as_ref()
            .map(|s| s.raw(cfg.grace, status_pipe.as_ref().map_or(-1, |(_, w)| w.as_raw_fd()))),
    };
    let start = Instant::now();
    let spawned = spawn::spawn(&line, setup, Stdin::Null).map_err(spawn_err)?;
    // Read while the command runs (off its critical path); the few forks it may already have
    // made cannot matter to the wrap test, which needs thousands.
    let forks_at_start = super::tree::forks_so_far();
    let pgid = spawned.pid;
    let out = StreamReader::start(std::fs::File::from(spawned.stdout), cfg.output_cap);
    let err = StreamReader::start(std::fs::File::from(spawned.stderr), cfg.output_cap);
    #[cfg(target_os = "linux")]
    let mut leader = Leader::new(pgid, spawned.guardian);
    #[cfg(not(target_os = "linux"))]
    let mut leader = Leader::new(pgid);

    #[cfg(target_os = "linux")]
    let status_read = status_pipe.map(|(read, write)| {
        drop(write);
        read
    });
    #[cfg(not(target_os = "linux"))]
    let status_read: Option<std::os::fd::OwnedFd> = None;
    let timed_out = !leader.wait(status_read.as_ref(), after(start, cfg.timeout), cfg.grace + GROUP_WAIT);
    // The shell has exited (it is an unreaped zombie, so its pgid cannot be reused) or the
    // timeout fired: whatever is left of the tree gets SIGTERM, the grace period, SIGKILL.
    let tree = Tree {
        pgid,
        marker: limited.then_some(&marker),
        #[cfg(target_os = "linux")]
        cgroup: cgroup.as_ref(),
        guardian: leader.guardian_pid(),
        leader_exited: !timed_out && leader.exited(),
        forks_at_start,
    };
    // What a command of an attempt leaves running (a service started with `&`) is the
    // attempt's, ended with it; a command that timed out is still ended as a tree.
    #[cfg(target_os = "linux")]
    let leave_to_attempt = joining.is_some() && !timed_out;
    #[cfg(not(target_os = "linux"))]
    let leave_to_attempt = false;
    // A guardian that saw nothing of the tree left has reaped it already: no search needed.
    if !leave_to_attempt && !leader.tree_gone() {
        tree.end(cfg.grace);
    }
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))] // the cgroup adds the peak count
    let (status, mut usage) = leader.reap().map_err(spawn_err)?;
    #[cfg(target_os = "linux")]
    let (pids_hit, oom) = match &cgroup {
        Some(cg) => {
            usage.peak_processes = cg.peak();
            (cg.pids_hit(), cg.oom_killed())
        }
        None => (false, false),
    };
    #[cfg(not(target_os = "linux"))]
    let (pids_hit, oom) = (false, false);
    #[cfg(target_os = "linux")]
    let nproc_limited = strict.as_ref().is_some_and(|s| s.limits_processes_by_rlimit());
    #[cfg(not(target_os = "linux"))]
    let nproc_limited = false;
    let duration_ms = start.elapsed().as_millis() as u64;
    // A service the command left running may hold its output open: what the command itself
    // wrote is in the pipe already, and the reader goes on draining the service's output
    // (so it never meets a closed pipe) without keeping it.
    let drain = if leave_to_attempt { LEFTOVER_DRAIN } else { DRAIN_WAIT };
    let stdout = out.finish(drain);
    let stderr = err.finish(drain);
    // The command's cgroup goes on limiting what it left running; the attempt keeps it
    // (and ends its members) until the attempt ends.
    #[cfg(target_os = "linux")]
    match (cgroup, &cfg.attempt) {
        (Some(cg), Some(attempt)) if leave_to_attempt && !cg.member_pids().is_empty() => attempt.adopt_cgroup(cg),
        (cg, _) => drop(cg),
    }
    drop(own_tmp);
    let exit = exit_kind(status);
    let limit = name_limit(
        &cfg.limits,
        LimitSignals {
            exit,
            timed_out,
            pids_hit,
            nproc_limited,
            oom,
            usage,
            stderr: &stderr.text,
        },
    );
    Ok(CommandOutcome {
        exit,
        stdout,
        stderr,
        duration_ms,
        timed_out,
        limit,
        isolation: level,
        usage,
    })
}

/// The environment every command gets: a scrubbed base (`PATH`, `HOME` = the workspace as
/// the command sees it, `TMPDIR`, `LANG`, `TERM`, no bytecode, no git discovery above the
/// workspace, `PWD` where a fixed root makes the host's wrong), then `cfg.env`, then the
/// marker that finds escaped processes, last so nothing replaces it.
fn command_env<'a>(
    cfg: &'a SandboxConfig,
    seen_root: &'a Path,
    tmp: &'a Path,
    pwd: Option<&'a Path>,
    marker: &'a Marker,
) -> Vec<(&'a OsStr, &'a OsStr)> {
    let mut env: Vec<(&OsStr, &OsStr)> = vec![
        (OsStr::new("PATH"), OsStr::new(SANDBOX_PATH)),
        (OsStr::new("HOME"), seen_root.as_os_str()),
        (OsStr::new("TMPDIR"), tmp.as_os_str()),
        (OsStr::new("LANG"), OsStr::new("C.UTF-8")),
        (OsStr::new("TERM"), OsStr::new("dumb")),
        // No stale bytecode: an edit that keeps a module's size within the same second as its
        // cached .pyc would otherwise run the old code (a fix-and-retest loop does exactly
        // that), and no __pycache__ litter in the workspace.
        (OsStr::new("PYTHONDONTWRITEBYTECODE"), OsStr::new("1")),
    ];
    // git must not discover a repository above the workspace (runs live inside projects).
    if let Some(parent) = seen_root.parent() {
        env.push((OsStr::new("GIT_CEILING_DIRECTORIES"), parent.as_os_str()));
    }
    // The shell would take `PWD` from the host path std entered; name the one it is in.
    if let Some(pwd) = pwd {
        env.push((OsStr::new("PWD"), pwd.as_os_str()));
    }
    env.extend(cfg.env.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v))));
    env.push((OsStr::new(MARKER_VAR), OsStr::new(&marker.0)));
    env
}

/// What a finished command shows, for [`name_limit`].
struct LimitSignals<'a> {
    exit: ExitKind,
    timed_out: bool,
    pids_hit: bool,
    /// The process count was limited by RLIMIT_NPROC (no pids cgroup): a hit shows only as
    /// failed forks.
    nproc_limited: bool,
    oom: bool,
    usage: ResourceUsage,
    stderr: &'a str,
}

/// Names the limit that ended the command (see the module documentation of [`super`]).
fn name_limit(limits: &ResourceLimits, s: LimitSignals<'_>) -> Option<LimitHit> {
    const SIGXCPU: i32 = 24;
    const SIGXFSZ: i32 = 25;
    const SIGKILL: i32 = 9;
    if s.pids_hit {
        return Some(LimitHit::ProcessLimit);
    }
    if s.oom {
        return Some(LimitHit::MemoryLimit);
    }
    if s.timed_out {
        return Some(LimitHit::Timeout);
    }
    let failed = s.exit != ExitKind::Code(0);
    match s.exit {
        ExitKind::Signal(SIGXCPU) | ExitKind::Code(152) if limits.cpu_secs.is_some() => {
            return Some(LimitHit::CpuLimit)
        }
        ExitKind::Signal(SIGXFSZ) | ExitKind::Code(153) if limits.file_size.is_some() => {
            return Some(LimitHit::FileSizeLimit)
        }
        ExitKind::Signal(SIGKILL) | ExitKind::Code(137) => {
            if let Some(cpu) = limits.cpu_secs {
                if s.usage.user_ms + s.usage.system_ms + 50 >= cpu.saturating_mul(1000) {
                    return Some(LimitHit::CpuLimit);
                }
            }
        }
        _ => {}
    }
    if s.nproc_limited {
        let forks_failed = [
            "Resource temporarily unavailable",
            "Cannot fork",
            "can't fork",
            "fork failed",
        ];
        if forks_failed.iter().any(|p| s.stderr.contains(p)) {
            return Some(LimitHit::ProcessLimit);
        }
    }
    // A child killed by SIGXCPU / SIGXFSZ while the shell went on (`head -c 1G > f; ls`): the
    // shell reports the death on stderr, whatever the command's own exit status.
    if limits.cpu_secs.is_some() && s.stderr.contains("CPU time limit exceeded") {
        return Some(LimitHit::CpuLimit);
    }
    if limits.file_size.is_some() && s.stderr.contains("File size limit exceeded") {
        return Some(LimitHit::FileSizeLimit);
    }
    if failed && limits.file_size.is_some() && s.stderr.contains("File too large") {
        return Some(LimitHit::FileSizeLimit);
    }
    if failed && limits.memory.is_some() {
        let lower = s.stderr.to_ascii_lowercase();
        let phrases = [
            "cannot allocate memory",
            "out of memory",
            "memoryerror",
            "memory allocation of",
            "failed to allocate",
            "cannot allocate",
            "memory exhausted",
            "outofmemory",
            "std::bad_alloc",
        ];
        if phrases.iter().any(|p| lower.contains(p)) {
            return Some(LimitHit::MemoryLimit);
        }
    }
    None
}

/// Reaps `pid` (our child) and returns its status and the resources its reaped tree used.
fn wait_with_usage(pid: Pid) -> io::Result<(ExitStatus, ResourceUsage)> {
    let mut status: nix::libc::c_int = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut ru: nix::libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: wait4 on our own child with valid out-pointers.
        let r = unsafe { nix::libc::wait4(pid.as_raw(), &mut status, 0, &mut ru) };
        if r >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    let ms = |tv: nix::libc::timeval| (tv.tv_sec as u64).saturating_mul(1000) + (tv.tv_usec as u64) / 1000;
    let usage = ResourceUsage {
        user_ms: ms(ru.ru_utime),
        system_ms: ms(ru.ru_stime),
        max_rss_kib: ru.ru_maxrss.max(0) as u64,
        peak_processes: None,
    };
    Ok((ExitStatus::from_raw(status), usage))
}

pub(crate) fn spawn_piped(cfg: &SandboxConfig, command: &str, cwd: &Path) -> Result<PipedChild, SandboxError> {
    super::reclaim::at_startup();
    let spawn_err = |source: io::Error| SandboxError::Spawn {
        command: command.to_string(),
        workspace: cwd.to_path_buf(),
        source,
    };
    let marker = Marker::new();
    // The harness's own environment (an agent needs its API keys), `cfg.env`, the tag last.
    let vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os().collect();
    let env = vars
        .iter()
        .map(|(k, v)| (k.as_os_str(), v.as_os_str()))
        .chain(cfg.env.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v))))
        .chain(std::iter::once((OsStr::new(MARKER_VAR), OsStr::new(&marker.0))));
    let line = CommandLine::new("/bin/sh", &["-c", command], env, cwd).map_err(spawn_err)?;
    // Its own session and process group, nothing else: an unconfined agent
    // (`agent_isolation: none`), but under a guardian its tree ends with it.
    let setup = ChildSetup {
        limits: None,
        #[cfg(target_os = "linux")]
        cgroup_fds: [-1, -1],
        #[cfg(target_os = "linux")]
        die_with_parent: false,
        #[cfg(target_os = "linux")]
        strict: None,
    };
    let spawned = spawn::spawn(&line, setup, Stdin::Piped).map_err(spawn_err)?;
    piped_child(spawned, marker, None, spawn_err)
}

/// Starts an agent's own program confined at `cfg.isolation` (see [`super::spawn_agent`]);
/// at `none`, exactly [`spawn_piped`].
pub(crate) fn spawn_agent(cfg: &SandboxConfig, command: &str, cwd: &Path) -> Result<PipedChild, SandboxError> {
    let level = cfg.isolation;
    // Fixed paths exist only in a strict view (an agent's kind leaves them out of a weaker
    // agent's own configuration deliberately, see `agent::process`).
    super::fixed::require_strict(cfg)?;
    if level == Isolation::None {
        return spawn_piped(cfg, command, cwd);
    }
    if level == Isolation::Strict {
        if let Err(reason) = super::probe::strict_available() {
            return Err(SandboxError::Unsupported { level, reason });
        }
    }
    super::reclaim::at_startup();
    let spawn_err = |source: io::Error| SandboxError::Spawn {
        command: command.to_string(),
        workspace: cwd.to_path_buf(),
        source,
    };
    let workspace = cfg.workspace.canonicalize().map_err(spawn_err)?;
    let dir = cwd.canonicalize().map_err(|e| {
        spawn_err(io::Error::new(
            e.kind(),
            format!("the agent's directory {}: {e}", cwd.display()),
        ))
    })?;
    // Its scratch space: TMPDIR and HOME, removed with the agent.
    let scratch = PrivateTmp::create(&workspace).map_err(spawn_err)?;
    let marker = Marker::new();
    let mut env: Vec<(&OsStr, &OsStr)> = vec![
        (OsStr::new("PATH"), OsStr::new(SANDBOX_PATH)),
        (OsStr::new("HOME"), scratch.0.as_os_str()),
        (OsStr::new("TMPDIR"), scratch.0.as_os_str()),
        (OsStr::new("LANG"), OsStr::new("C.UTF-8")),
        (OsStr::new("TERM"), OsStr::new("dumb")),
        (OsStr::new("PYTHONDONTWRITEBYTECODE"), OsStr::new("1")),
    ];
    env.extend(cfg.env.iter().map(|(k, v)| (OsStr::new(k), OsStr::new(v))));
    env.push((OsStr::new(MARKER_VAR), OsStr::new(&marker.0)));
    let line = CommandLine::new("/bin/sh", &["-c", command], env, &dir).map_err(spawn_err)?;
    #[cfg(target_os = "linux")]
    let strict = if level == Isolation::Strict {
        Some(
            super::strict::prepare(
                super::view::ViewRequest {
                    workspace: &workspace,
                    tmp: &scratch.0,
                    read_paths: &cfg.read_paths,
                    write_paths: &cfg.write_paths,
                    network: cfg.network,
                    cwd: Some(&dir),
                    root: cfg.root.as_ref(),
                    mounts: &cfg.mounts,
                    enter: None,
                },
                cfg.limits.processes,
                // An agent of an attempt runs in the attempt's namespaces (its commands'
                // services are on its `localhost`), in a view of its own (its directory).
                match cfg.attempt.as_ref().and_then(|a| a.joining(cfg, &workspace)) {
                    Some(j) => super::strict::Entry::Joined {
                        ns: j.ns,
                        view: super::strict::JoinedView::Own,
                    },
                    None => super::strict::Entry::Alone,
                },
            )
            .map_err(|reason| {
                spawn_err(io::Error::other(format!(
                    "cannot build the agent's strict view: {reason} (its directory and `read:` paths must not hold the system directories or /tmp, nor lie under /proc or /dev)"
                )))
            })?,
        )
    } else {
        None
    };
    // An agent waits for model replies: no CPU-time limit, whatever its commands get. No
    // RLIMIT_AS either: runtimes agents are written in (node, the JVM, Go) reserve address
    // space far beyond what they use, and an agent has no memory cgroup (yet).
    let limits = ResourceLimits {
        cpu_secs: None,
        memory: None,
        ..cfg.limits.clone()
    };
    let setup = ChildSetup {
        limits: Some(RawLimits::from(&limits)),
        #[cfg(target_os = "linux")]
        cgroup_fds: [-1, -1],
        #[cfg(target_os = "linux")]
        die_with_parent: false,
        #[cfg(target_os = "linux")]
        strict: strict.as_ref().map(|s| s.raw(cfg.grace, -1)),
    };
    #[cfg(target_os = "linux")]
    let spawned = if strict.is_some() {
        // The strict chain's first process dies with the thread that forked it (PDEATHSIG),
        // and an agent may outlive the thread that starts it: a thread that lasts as long as
        // the harness forks it.
        lasting::spawn(line, setup).map_err(spawn_err)?
    } else {
        spawn::spawn(&line, setup, Stdin::Piped).map_err(spawn_err)?
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = spawn::spawn(&line, setup, Stdin::Piped).map_err(spawn_err)?;
    #[cfg(target_os = "linux")]
    drop(strict);
    piped_child(spawned, marker, Some(scratch), spawn_err)
}

/// Starts `program` (a shell reading commands on stdin) as a command of `cfg` would run:
/// the same environment, working directory, limits and level, and — under `strict`, for an
/// attempt with namespaces — in the attempt's namespaces and view, so what it starts is the
/// attempt's (see `session.rs`). Its tree ends when the returned child is killed or dropped.
pub(crate) fn spawn_session(cfg: &SandboxConfig, program: &str, args: &[&str]) -> Result<PipedChild, SandboxError> {
    super::fixed::require_strict(cfg)?;
    let level = cfg.isolation;
    if level == Isolation::Strict {
        if let Err(reason) = super::probe::strict_available() {
            return Err(SandboxError::Unsupported { level, reason });
        }
    }
    super::reclaim::at_startup();
    let spawn_err = |source: io::Error| SandboxError::Spawn {
        command: format!("{program} (the persistent shell)"),
        workspace: cfg.workspace.clone(),
        source,
    };
    let root = cfg.workspace.canonicalize().map_err(spawn_err)?;
    #[cfg(target_os = "linux")]
    let joining = cfg
        .attempt
        .as_ref()
        .and_then(|a| a.joining(cfg, &root))
        .filter(|j| j.same_view);
    let own_tmp = {
        #[cfg(target_os = "linux")]
        let shared = joining.is_some();
        #[cfg(not(target_os = "linux"))]
        let shared = false;
        if shared {
            None
        } else {
            Some(PrivateTmp::create(&root).map_err(spawn_err)?)
        }
    };
    #[cfg(target_os = "linux")]
    let tmp_path: PathBuf = match (&own_tmp, &joining) {
        (Some(t), _) => t.path().to_path_buf(),
        (None, Some(j)) => j.tmp.to_path_buf(),
        (None, None) => unreachable!("a shell without a TMPDIR of its own shares the attempt's"),
    };
    #[cfg(not(target_os = "linux"))]
    let tmp_path: PathBuf = own_tmp
        .as_ref()
        .map_or_else(|| PathBuf::from("/tmp"), |t| t.path().to_path_buf());
    let seen_root = cfg
        .root
        .as_ref()
        .map_or(root.as_path(), FixedPath::as_path)
        .to_path_buf();
    let marker = Marker::new();
    let env = command_env(
        cfg,
        &seen_root,
        &tmp_path,
        cfg.root.is_some().then_some(seen_root.as_path()),
        &marker,
    );
    let mut argv: Vec<&str> = vec![program];
    argv.extend_from_slice(args);
    let line = CommandLine::new(program, &argv[1..], env, &root).map_err(spawn_err)?;
    // The shell's cgroup (the task's process and memory limits, for the shell's whole tree)
    // is the attempt's to end.
    #[cfg(target_os = "linux")]
    let cgroup = if level != Isolation::None && cfg.cgroup.unwrap_or(level == Isolation::Strict) {
        super::cgroup::CommandCgroup::create(cfg.limits.processes, cfg.limits.memory).map_err(|e| {
            spawn_err(io::Error::new(
                e.kind(),
                format!("cannot create the persistent shell's cgroup: {e}"),
            ))
        })?
    } else {
        None
    };
    #[cfg(target_os = "linux")]
    let strict = if level == Isolation::Strict {
        let entry = match &joining {
            Some(j) => super::strict::Entry::Joined {
                ns: j.ns,
                view: super::strict::JoinedView::Attempts { enter: &seen_root },
            },
            None => super::strict::Entry::Alone,
        };
        Some(
            super::strict::prepare(
                super::view::ViewRequest {
                    workspace: &root,
                    tmp: &tmp_path,
                    read_paths: &cfg.read_paths,
                    write_paths: &cfg.write_paths,
                    network: cfg.network,
                    cwd: None,
                    root: cfg.root.as_ref(),
                    mounts: &cfg.mounts,
                    enter: cfg.root.is_some().then_some(seen_root.as_path()),
                },
                cfg.limits
                    .processes
                    .filter(|_| !cgroup.as_ref().is_some_and(|cg| cg.limits_processes())),
                entry,
            )
            .map_err(|reason| SandboxError::Unsupported { level, reason })?,
        )
    } else {
        None
    };
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let mut raw_limits = RawLimits::from(&cfg.limits);
    #[cfg(target_os = "linux")]
    if cgroup.as_ref().is_some_and(|cg| cg.limits_memory()) {
        raw_limits.memory = None;
    }
    let setup = ChildSetup {
        limits: (level != Isolation::None).then_some(raw_limits),
        #[cfg(target_os = "linux")]
        cgroup_fds: {
            let mut fds = [-1i32; 2];
            if let Some(cg) = &cgroup {
                for (slot, fd) in fds.iter_mut().zip(cg.join_fds()) {
                    *slot = fd;
                }
            }
            fds
        },
        #[cfg(target_os = "linux")]
        die_with_parent: false,
        #[cfg(target_os = "linux")]
        strict: strict.as_ref().map(|s| s.raw(cfg.grace, -1)),
    };
    #[cfg(target_os = "linux")]
    let spawned = if strict.is_some() {
        lasting::spawn(line, setup).map_err(spawn_err)?
    } else {
        spawn::spawn(&line, setup, Stdin::Piped).map_err(spawn_err)?
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = spawn::spawn(&line, setup, Stdin::Piped).map_err(spawn_err)?;
    #[cfg(target_os = "linux")]
    drop(strict);
    #[cfg(target_os = "linux")]
    if let (Some(cg), Some(attempt)) = (cgroup, &cfg.attempt) {
        attempt.adopt_cgroup(cg);
    }
    piped_child(spawned, marker, own_tmp, spawn_err)
}

/// The handle of an agent process just spawned with piped stdio.
fn piped_child(
    mut spawned: spawn::Spawned,
    marker: Marker,
    scratch: Option<PrivateTmp>,
    spawn_err: impl Fn(io::Error) -> SandboxError,
) -> Result<PipedChild, SandboxError> {
    let pgid = spawned.pid;
    let missing = || spawn_err(io::Error::other("the agent's stdin was not piped"));
    let stdin = ChildStdin::from(spawned.stdin.take().ok_or_else(missing)?);
    Ok(PipedChild {
        #[cfg(target_os = "linux")]
        leader: Leader::new(pgid, spawned.guardian.take()),
        #[cfg(not(target_os = "linux"))]
        leader: Leader::new(pgid),
        pgid,
        stdin: Some(stdin),
        stdout: Some(ChildStdout::from(spawned.stdout)),
        stderr: Some(ChildStderr::from(spawned.stderr)),
        status: None,
        killed: false,
        marker,
        _scratch: scratch,
    })
}

/// The thread that forks strict agents: it lives as long as the harness, so the `PDEATHSIG`
/// of an agent's first process fires only when the harness dies.
#[cfg(target_os = "linux")]
pub(super) mod lasting {
    use std::io;
    use std::sync::mpsc::{self, Sender};
    use std::sync::{Mutex, OnceLock};

    use super::spawn::{self, ChildSetup, CommandLine, Spawned, Stdin};

    type Job = (CommandLine, ChildSetup, Sender<io::Result<Spawned>>);

    static FORKER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();

    /// Forks `line` after `setup` from the lasting thread and returns what it started.
    pub(in crate::sandbox) fn spawn(line: CommandLine, setup: ChildSetup) -> io::Result<Spawned> {
        let forker = FORKER.get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let started = std::thread::Builder::new()
                .name("medin-agent-forker".into())
                .spawn(move || {
                    for (line, setup, reply) in rx {
                        let _ = reply.send(spawn::spawn(&line, setup, Stdin::Piped));
                    }
                });
            if let Err(e) = started {
                eprintln!("medin: cannot start the thread that starts strict agents: {e}");
            }
            Mutex::new(tx)
        });
        let (reply, answer) = mpsc::channel();
        let sent = match forker.lock() {
            Ok(tx) => tx.send((line, setup, reply)),
            Err(poisoned) => poisoned.into_inner().send((line, setup, reply)),
        };
        sent.map_err(|_| io::Error::other("the thread that starts strict agents is gone"))?;
        answer
            .recv()
            .map_err(|_| io::Error::other("the thread that starts strict agents did not answer"))?
    }
}

/// A long-running program in its own session and process group with piped stdio, under a
/// guardian where one can be had (see [`super::spawn_piped`]). Dropping it kills the whole
/// tree.
#[derive(Debug)]
pub struct PipedChild {
    leader: Leader,
    pgid: Pid,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// The leader's status, once known.
    status: Option<ExitStatus>,
    /// The tree was already killed and the leader reaped.
    killed: bool,
    marker: Marker,
    /// A confined agent's scratch space (its `HOME` and `TMPDIR`), removed after its tree.
    _scratch: Option<PrivateTmp>,
}

impl PipedChild {
    /// The program's stdin (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// The program's stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// The program's stderr (once).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.stderr.take()
    }

    /// Process id of the shell, which is also the process-group id.
    pub fn pid(&self) -> u32 {
        self.pgid.as_raw() as u32
    }

    /// The leader's exit status if it has exited (does not block). Processes it started may
    /// still run; [`PipedChild::kill_tree`] or dropping ends them.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.leader.status_by(Some(Instant::now()));
        }
        Ok(self.status)
    }

    /// Blocks until the leader exits or `timeout` passes; `None` when it is still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = self.leader.status_by(Some(after(Instant::now(), timeout)));
        }
        Ok(self.status)
    }

    /// SIGTERM to the whole tree, up to `grace` for it to exit, SIGKILL to what is left, then
    /// reaps the leader and returns its status.
    pub fn kill_tree(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if !self.killed {
            self.tree().end(grace);
            self.killed = true;
            let (status, _) = self.leader.reap()?;
            self.status = Some(status);
        }
        self.status
            .ok_or_else(|| io::Error::other("the agent's exit status is unknown"))
    }

    fn tree(&self) -> Tree<'_> {
        Tree {
            pgid: self.pgid,
            marker: Some(&self.marker),
            #[cfg(target_os = "linux")]
            cgroup: None,
            guardian: self.leader.guardian_pid(),
            leader_exited: false,
            forks_at_start: None,
        }
    }
}

impl Drop for PipedChild {
    fn drop(&mut self) {
        if !self.killed {
            self.tree().kill_now();
            self.killed = true;
            let _ = self.leader.reap();
        }
    }
}

/// The command's first process, as the harness waits for it: its own child, or the child of
/// a guardian (see `guardian.rs`).
#[derive(Debug)]
enum Leader {
    /// Our child, not yet reaped (strict mode; platforms without a guardian).
    Child { pid: Pid, reaped: Option<ExitStatus> },
    #[cfg(target_os = "linux")]
    Guarded(super::guardian::Guardian),
}

impl Leader {
    #[cfg(target_os = "linux")]
    fn new(pid: Pid, guardian: Option<super::guardian::Guardian>) -> Leader {
        match guardian {
            Some(g) => Leader::Guarded(g),
            None => Leader::Child { pid, reaped: None },
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn new(pid: Pid) -> Leader {
        Leader::Child { pid, reaped: None }
    }

    fn guardian_pid(&self) -> Option<Pid> {
        match self {
            Leader::Child { .. } => None,
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => Some(g.pid()),
        }
    }

    /// Waits for the command to end before `deadline`. In strict mode `status` is the pipe on
    /// which the first process reports the command's own exit: once that arrives the command
    /// is done, and its first process gets `linger` more to exit (the reaper's grace for
    /// leftovers) without that counting as a timeout. Returns whether the command ended in
    /// time.
    fn wait(&mut self, status: Option<&std::os::fd::OwnedFd>, deadline: Instant, linger: Duration) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => {
                // A guardian that vanished without a report took its command with it
                // (the command's PDEATHSIG is relative to it).
                g.leader_status(deadline).is_some() || g.gone()
            }
            Leader::Child { pid, .. } => {
                #[cfg(target_os = "linux")]
                if let Some(ended) = wait_end_pidfd(*pid, status, deadline) {
                    if ended == End::CommandDone {
                        wait_exit_until(*pid, after(Instant::now(), linger));
                    }
                    return ended != End::Deadline;
                }
                let _ = status;
                let _ = linger;
                wait_exit_polling(*pid, deadline)
            }
        }
    }

    /// Whether the guardian reported that nothing of the tree is left (it reaped it all).
    fn tree_gone(&mut self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => g.tree_gone(),
            Leader::Child { .. } => false,
        }
    }

    /// Whether the first process has exited (it is not reaped).
    fn exited(&mut self) -> bool {
        match self {
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => g.leader_status(Instant::now()).is_some(),
            Leader::Child { pid, reaped } => reaped.is_some() || has_exited(*pid),
        }
    }

    /// The first process's status once it has exited, waiting until `deadline` at most.
    fn status_by(&mut self, deadline: Option<Instant>) -> Option<ExitStatus> {
        match self {
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => g
                .leader_status(deadline.unwrap_or_else(Instant::now))
                .map(ExitStatus::from_raw),
            Leader::Child { pid, reaped } => {
                if reaped.is_none() {
                    let exited = match deadline {
                        Some(d) => wait_exit_polling(*pid, d),
                        None => has_exited(*pid),
                    };
                    if exited {
                        *reaped = wait_with_usage(*pid).ok().map(|(st, _)| st);
                    }
                }
                *reaped
            }
        }
    }

    /// Reaps the first process (through its guardian, which first kills whatever is left of
    /// the tree) and returns its status and the resources the tree used.
    fn reap(&mut self) -> io::Result<(ExitStatus, ResourceUsage)> {
        match self {
            #[cfg(target_os = "linux")]
            Leader::Guarded(g) => {
                let (status, usage) = g.finish();
                // No report: the guardian was killed, and its command with it (PDEATHSIG).
                let status = status.unwrap_or(libc::SIGKILL);
                Ok((ExitStatus::from_raw(status), usage.unwrap_or_default()))
            }
            Leader::Child { pid, reaped } => match reaped {
                Some(st) => Ok((*st, ResourceUsage::default())),
                None => {
                    let (st, usage) = wait_with_usage(*pid)?;
                    *reaped = Some(st);
                    Ok((st, usage))
                }
            },
        }
    }
}

/// Waits until the process `pid` (our child) has exited, without reaping it, or `deadline`
/// passes. Returns whether it exited. On Linux a pidfd is polled, so the exit is seen at once
/// (polling with sleeps would add milliseconds to every short command).
#[cfg(target_os = "linux")]
pub(super) fn wait_exit_until(pid: Pid, deadline: Instant) -> bool {
    if let Some(ended) = wait_end_pidfd(pid, None, deadline) {
        return ended != End::Deadline;
    }
    wait_exit_polling(pid, deadline)
}

/// How a wait ended.
#[cfg(target_os = "linux")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    /// The process exited.
    Exited,
    /// The command reported its own exit on the status pipe (strict: the process we wait for
    /// lingers while the reaper gives leftovers their grace period).
    CommandDone,
    Deadline,
}

/// `None` when pidfds are not available (Linux < 5.3).
#[cfg(target_os = "linux")]
fn wait_end_pidfd(pid: Pid, status: Option<&std::os::fd::OwnedFd>, deadline: Instant) -> Option<End> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: pidfd_open returns a new descriptor we own, or -1.
    let raw = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid.as_raw(), 0u32) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw as i32) };
    let mut status_fd = status.map_or(-1, |s| s.as_raw_fd());
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Some(End::Deadline);
        }
        let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut fds = [
            nix::libc::pollfd {
                fd: fd.as_raw_fd(),
                events: nix::libc::POLLIN,
                revents: 0,
            },
            nix::libc::pollfd {
                fd: status_fd,
                events: nix::libc::POLLIN,
                revents: 0,
            },
        ];
        let n = if status_fd >= 0 { 2 } else { 1 };
        // SAFETY: poll on `n` valid pollfds.
        let r = unsafe { nix::libc::poll(fds.as_mut_ptr(), n, ms) };
        if r < 0 {
            if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return None;
        }
        if fds[0].revents != 0 {
            return Some(End::Exited);
        }
        if n == 2 && fds[1].revents != 0 {
            let mut word = [0u8; 4];
            // SAFETY: read into a local buffer from a descriptor we own.
            let got = unsafe { nix::libc::read(status_fd, word.as_mut_ptr().cast(), 4) };
            if got == 4 {
                return Some(End::CommandDone);
            }
            // EOF or a short read: no report will come; wait for the exit alone.
            status_fd = -1;
        }
    }
}

/// Whether our child `pid` has exited, without reaping it (`waitid` with `WNOWAIT`, called
/// through libc: nix offers it on Linux only). A child already reaped, or not ours, counts as
/// exited: there is nothing left to wait for.
fn has_exited(pid: Pid) -> bool {
    loop {
        // SAFETY: an all-zero siginfo is valid; waitid fills it when a child is reported.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid on our own child with a valid out-pointer.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid.as_raw() as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT | libc::WNOHANG,
            )
        };
        if r == 0 {
            // With WNOHANG and no state change the kernel leaves the siginfo zeroed.
            return info.si_signo == libc::SIGCHLD;
        }
        if Errno::last() != Errno::EINTR {
            return true;
        }
    }
}

/// Polls until the process `pid` (our child) has exited, without reaping it, or `deadline`
/// passes. Returns whether it exited.
fn wait_exit_polling(pid: Pid, deadline: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        if has_exited(pid) {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

fn exit_kind(status: ExitStatus) -> ExitKind {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitKind::Code(code),
        (None, Some(sig)) => ExitKind::Signal(sig),
        (None, None) => ExitKind::Code(-1),
    }
}

/// A private temporary directory for one command, removed when dropped.
#[derive(Debug)]
pub(super) struct PrivateTmp(PathBuf);

impl PrivateTmp {
    /// A fresh directory under the harness's temp dir — or, when that lies inside `workspace`
    /// (`cd /tmp && medin exec ...`), under the first of `/var/tmp` and `/tmp` that does not: a
    /// command's TMPDIR is never part of its workspace.
    pub(super) fn create(workspace: &Path) -> io::Result<PrivateTmp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::iter::once(std::env::temp_dir())
            .chain(["/var/tmp", "/tmp"].map(PathBuf::from))
            .find(|b| {
                let b = b.canonicalize().unwrap_or_else(|_| b.clone());
                !b.starts_with(workspace) && b.is_dir()
            })
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "every temporary directory lies inside the workspace {}; run from another directory or set TMPDIR outside it",
                        workspace.display()
                    ),
                )
            })?;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            // Named after its owner, so a later medin process removes it if this one dies
            // before it does (`reclaim.rs`).
            let path = base.join(format!("medin-{}-{n}", super::reclaim::owner()));
            let mut builder = std::fs::DirBuilder::new();
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            match builder.create(&path) {
                Ok(()) => return Ok(PrivateTmp(path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot create a private TMPDIR in {}: {e}", base.display()),
                    ))
                }
            }
        }
        Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "cannot find a free name for a private TMPDIR",
        ))
    }
}

impl PrivateTmp {
    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = super::beneath::remove_tree(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals(exit: ExitKind) -> LimitSignals<'static> {
        LimitSignals {
            exit,
            timed_out: false,
            pids_hit: false,
            nproc_limited: false,
            oom: false,
            usage: ResourceUsage::default(),
            stderr: "",
        }
    }

    #[test]
    fn limits_are_named_from_what_the_command_shows() {
        let mut l = ResourceLimits {
            cpu_secs: Some(2),
            ..ResourceLimits::default()
        };
        assert_eq!(name_limit(&l, signals(ExitKind::Code(0))), None);
        assert_eq!(name_limit(&l, signals(ExitKind::Code(1))), None);
        assert_eq!(name_limit(&l, signals(ExitKind::Signal(24))), Some(LimitHit::CpuLimit));
        assert_eq!(name_limit(&l, signals(ExitKind::Code(152))), Some(LimitHit::CpuLimit));
        assert_eq!(
            name_limit(&l, signals(ExitKind::Signal(25))),
            Some(LimitHit::FileSizeLimit)
        );
        // SIGKILL counts as the hard CPU limit only when the CPU time reached the limit.
        assert_eq!(name_limit(&l, signals(ExitKind::Signal(9))), None);
        let mut s = signals(ExitKind::Signal(9));
        s.usage.user_ms = 2100;
        assert_eq!(name_limit(&l, s), Some(LimitHit::CpuLimit));
        let mut s = signals(ExitKind::Code(1));
        s.stderr = "Traceback ...\nMemoryError\n";
        assert_eq!(name_limit(&l, s), Some(LimitHit::MemoryLimit));
        let mut s = signals(ExitKind::Code(1));
        s.stderr = "head: error writing 'big': File too large\n";
        assert_eq!(name_limit(&l, s), Some(LimitHit::FileSizeLimit));
        // Cgroup evidence wins over the timeout; the timeout over exit heuristics.
        let mut s = signals(ExitKind::Signal(9));
        s.timed_out = true;
        assert_eq!(name_limit(&l, s), Some(LimitHit::Timeout));
        let mut s = signals(ExitKind::Signal(9));
        s.timed_out = true;
        s.pids_hit = true;
        assert_eq!(name_limit(&l, s), Some(LimitHit::ProcessLimit));
        let mut s = signals(ExitKind::Signal(9));
        s.oom = true;
        assert_eq!(name_limit(&l, s), Some(LimitHit::MemoryLimit));
        // A child's limit death reported by the shell, though the command went on and exited 0.
        let mut s = signals(ExitKind::Code(0));
        s.stderr = "File size limit exceeded\n";
        assert_eq!(name_limit(&l, s), Some(LimitHit::FileSizeLimit));
        let mut s = signals(ExitKind::Code(0));
        s.stderr = "sh: 1: CPU time limit exceeded\n";
        assert_eq!(name_limit(&l, s), Some(LimitHit::CpuLimit));
        // Under RLIMIT_NPROC (no pids cgroup) a hit shows as failed forks, and only then counts.
        let mut s = signals(ExitKind::Code(2));
        s.stderr = "sh: 1: Cannot fork\n";
        assert_eq!(name_limit(&l, s), None);
        let mut s = signals(ExitKind::Code(2));
        s.stderr = "sh: 1: Cannot fork\n";
        s.nproc_limited = true;
        assert_eq!(name_limit(&l, s), Some(LimitHit::ProcessLimit));
        // Without a CPU limit, SIGXCPU is not ours to name.
        l.cpu_secs = None;
        assert_eq!(name_limit(&l, signals(ExitKind::Signal(24))), None);
    }
}
