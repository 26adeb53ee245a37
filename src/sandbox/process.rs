//! Running commands as isolated process trees: spawn with `setsid` and rlimits, wait with a
//! deadline, and kill the whole process group (SIGTERM, grace, SIGKILL) so nothing outlives
//! its command.
//!
//! The group is always killed while the shell is still an unreaped zombie (its exit is
//! observed with `waitid(WNOWAIT)`), so the process-group id cannot have been reused by an
//! unrelated process when the kill is sent.

use std::io;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::{setsid, Pid};

use super::capture::{self, StreamReader};
use super::{
    CommandOutcome, ExitKind, Isolation, LimitHit, ResourceLimits, ResourceUsage, SandboxConfig, SandboxError,
    SANDBOX_PATH,
};

/// How long to wait for SIGKILLed group members to disappear.
const GROUP_WAIT: Duration = Duration::from_secs(1);

/// How long to wait for the output pipes to close once the process group is dead.
const DRAIN_WAIT: Duration = Duration::from_secs(1);

pub(crate) fn run_shell(
    cfg: &SandboxConfig,
    command: &str,
    cwd: Option<&Path>,
) -> Result<CommandOutcome, SandboxError> {
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
    if cfg.isolation == Isolation::Strict {
        if let Err(reason) = super::probe::strict_available() {
            return Err(SandboxError::Unsupported {
                level: Isolation::Strict,
                reason,
            });
        }
    }
    let tmp = PrivateTmp::create().map_err(spawn_err)?;
    let marker = Marker::new();
    let level = cfg.isolation;
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
    #[cfg(target_os = "linux")]
    let strict = if level == Isolation::Strict {
        Some(
            super::strict::prepare(&root, &tmp.0, &cfg.read_paths, cfg.network)
                .map_err(|reason| SandboxError::Unsupported { level, reason })?,
        )
    } else {
        None
    };

    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(&dir)
        .env_clear()
        .env("PATH", SANDBOX_PATH)
        .env("HOME", &root)
        .env("TMPDIR", &tmp.0)
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .env(MARKER_VAR, &marker.0);
    // git must not discover a repository above the workspace (runs live inside projects).
    if let Some(parent) = root.parent() {
        cmd.env("GIT_CEILING_DIRECTORIES", parent);
    }
    cmd.envs(cfg.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child_setup = ChildSetup {
        limits: limited.then(|| RawLimits::from(&cfg.limits)),
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
        strict: strict.as_ref().map(|s| s.raw()),
    };
    // SAFETY: the closure only makes async-signal-safe syscalls on values computed before the
    // fork; it allocates nothing (see ChildSetup::apply and strict::enter).
    unsafe {
        cmd.pre_exec(move || child_setup.apply());
    }
    let start = Instant::now();
    let mut child = cmd.spawn().map_err(spawn_err)?;
    let pgid = Pid::from_raw(child.id() as i32);
    let out = child.stdout.take().map(|s| StreamReader::start(s, cfg.output_cap));
    let err = child.stderr.take().map(|s| StreamReader::start(s, cfg.output_cap));

    let mut timed_out = false;
    if !wait_exit_until(pgid, after(start, cfg.timeout)) {
        timed_out = true;
        let _ = killpg(pgid, Signal::SIGTERM);
        if !wait_group_exit_until(pgid, after(Instant::now(), cfg.grace)) {
            let _ = killpg(pgid, Signal::SIGKILL);
        }
    }
    // The shell has exited (or is dying of SIGKILL) but is not reaped yet: kill whatever it
    // left behind in its group (`sleep 100 &`), then reap it.
    let _ = killpg(pgid, Signal::SIGKILL);
    let (status, mut usage) = wait_with_usage(pgid).map_err(spawn_err)?;
    drop(child);
    wait_group_gone(pgid, GROUP_WAIT);
    #[cfg(target_os = "linux")]
    let (pids_hit, oom) = match &cgroup {
        Some(cg) => {
            let hits = (cg.pids_hit(), cg.oom_killed());
            usage.peak_processes = cg.peak();
            // Members that left the group (setsid, double fork, cleared environment).
            if cg.has_members() {
                cg.kill_all(GROUP_WAIT);
            }
            hits
        }
        None => {
            if limited {
                marker.kill_all_since(Some(pgid.as_raw()));
            }
            (false, false)
        }
    };
    #[cfg(not(target_os = "linux"))]
    let (pids_hit, oom) = {
        marker.kill_all();
        (false, false)
    };
    let duration_ms = start.elapsed().as_millis() as u64;
    let stdout = out.map(|r| r.finish(DRAIN_WAIT)).unwrap_or_else(capture::empty);
    let stderr = err.map(|r| r.finish(DRAIN_WAIT)).unwrap_or_else(capture::empty);
    #[cfg(target_os = "linux")]
    drop(cgroup);
    drop(tmp);
    let exit = exit_kind(status);
    let limit = name_limit(
        &cfg.limits,
        LimitSignals {
            exit,
            timed_out,
            pids_hit,
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

/// What a finished command shows, for [`name_limit`].
struct LimitSignals<'a> {
    exit: ExitKind,
    timed_out: bool,
    pids_hit: bool,
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
    let marker = Marker::new();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(cfg.env.iter().map(|(k, v)| (k, v)))
        .env(MARKER_VAR, &marker.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setsid is an async-signal-safe syscall; nothing is allocated.
    unsafe {
        cmd.pre_exec(|| setsid().map(|_| ()).map_err(errno_to_io));
    }
    let child = cmd.spawn().map_err(|source| SandboxError::Spawn {
        command: command.to_string(),
        workspace: cwd.to_path_buf(),
        source,
    })?;
    let pgid = Pid::from_raw(child.id() as i32);
    Ok(PipedChild {
        child,
        pgid,
        killed: false,
        marker,
    })
}

/// A long-running program in its own process group with piped stdio (see
/// [`super::spawn_piped`]). Dropping it kills the whole group.
#[derive(Debug)]
pub struct PipedChild {
    child: Child,
    pgid: Pid,
    /// The tree was already killed and the leader reaped.
    killed: bool,
    marker: Marker,
}

impl PipedChild {
    /// The program's stdin (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// The program's stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// The program's stderr (once).
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Process id of the shell, which is also the process-group id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The leader's exit status if it has exited (does not block). Processes it started may
    /// still run; [`PipedChild::kill_tree`] or dropping ends them.
    pub fn try_wait(&mut self) -> io::Result<Option<ExitStatus>> {
        self.child.try_wait()
    }

    /// Blocks until the leader exits or `timeout` passes; `None` when it is still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> io::Result<Option<ExitStatus>> {
        let deadline = after(Instant::now(), timeout);
        loop {
            if let Some(status) = self.child.try_wait()? {
                return Ok(Some(status));
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM to the whole group, up to `grace` for the leader to exit, SIGKILL to the group,
    /// then reaps the leader and returns its status.
    pub fn kill_tree(&mut self, grace: Duration) -> io::Result<ExitStatus> {
        if !self.killed {
            let _ = killpg(self.pgid, Signal::SIGTERM);
            wait_group_exit_until(self.pgid, after(Instant::now(), grace));
            let _ = killpg(self.pgid, Signal::SIGKILL);
            self.killed = true;
        }
        let status = self.child.wait();
        wait_group_gone(self.pgid, GROUP_WAIT);
        self.marker.kill_all();
        status
    }
}

impl Drop for PipedChild {
    fn drop(&mut self) {
        if !self.killed {
            let _ = killpg(self.pgid, Signal::SIGKILL);
            self.killed = true;
            let _ = self.child.wait();
            wait_group_gone(self.pgid, GROUP_WAIT);
            self.marker.kill_all();
        }
    }
}

/// After SIGTERM: polls until no live member of group `pgid` is left (the whole tree had its
/// chance to exit cleanly, not only the leader) or `deadline` passes. Returns whether the group
/// is gone. The leader, our unreaped child, counts as gone once it is a zombie.
fn wait_group_exit_until(pgid: Pid, deadline: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        if !group_has_live_members(pgid) {
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

/// Waits until the process `pid` (our child) has exited, without reaping it, or `deadline`
/// passes. Returns whether it exited. On Linux a pidfd is polled, so the exit is seen at once
/// (polling with sleeps would add milliseconds to every short command).
fn wait_exit_until(pid: Pid, deadline: Instant) -> bool {
    #[cfg(target_os = "linux")]
    if let Some(exited) = wait_exit_pidfd(pid, deadline) {
        return exited;
    }
    wait_exit_polling(pid, deadline)
}

/// `None` when pidfds are not available (Linux < 5.3).
#[cfg(target_os = "linux")]
fn wait_exit_pidfd(pid: Pid, deadline: Instant) -> Option<bool> {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    // SAFETY: pidfd_open returns a new descriptor we own, or -1.
    let raw = unsafe { nix::libc::syscall(nix::libc::SYS_pidfd_open, pid.as_raw(), 0u32) };
    if raw < 0 {
        return None;
    }
    // SAFETY: `raw` is a fresh descriptor owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(raw as i32) };
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Some(false);
        }
        let ms = (deadline - now).as_millis().clamp(1, i32::MAX as u128) as i32;
        let mut pfd = nix::libc::pollfd {
            fd: fd.as_raw_fd(),
            events: nix::libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll on one valid pollfd.
        let r = unsafe { nix::libc::poll(&mut pfd, 1, ms) };
        if r > 0 {
            return Some(true);
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Polls until the process `pid` (our child) has exited, without reaping it, or `deadline`
/// passes. Returns whether it exited.
fn wait_exit_polling(pid: Pid, deadline: Instant) -> bool {
    let mut pause = Duration::from_millis(1);
    loop {
        match waitid(
            Id::Pid(pid),
            WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG,
        ) {
            Ok(WaitStatus::StillAlive) => {}
            Ok(_) => return true,
            Err(Errno::EINTR) => continue,
            // ECHILD: already reaped (or not ours): nothing left to wait for.
            Err(_) => return true,
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// The environment variable that tags every process a sandboxed command starts.
pub const MARKER_VAR: &str = "MEDIN_SANDBOX_RUN";

/// A unique tag put in the environment of a command. Processes that left the process group
/// (`setsid cmd &`, daemons) still inherit it, so after the group is killed, `/proc/*/environ`
/// is scanned and every process still carrying the tag is killed too. Best effort: a process
/// that clears its environment (`env -i`) is not found this way.
#[derive(Debug)]
struct Marker(String);

impl Marker {
    fn new() -> Marker {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        Marker(format!("{}-{n}-{nanos:x}", std::process::id()))
    }

    /// SIGKILLs every process whose environment carries this tag (a few passes, so children
    /// forked during a pass are caught by the next).
    fn kill_all(&self) {
        self.kill_all_since(None);
    }

    /// Like [`Marker::kill_all`], but when `first` (the pid of the command's first process) is
    /// known, only pids allocated since then are read: on Linux `/proc/loadavg` names the last
    /// pid allocated, and every descendant's pid lies in the cyclic range `first..=last`
    /// (pids wrap at `pid_max`). This keeps the scan cheap on a machine with many processes.
    fn kill_all_since(&self, first: Option<i32>) {
        let needle = format!("{MARKER_VAR}={}\0", self.0).into_bytes();
        let me = std::process::id() as i32;
        for _ in 0..5 {
            let mut found = false;
            let range = first.and_then(|f| last_pid().map(|l| (f, l)));
            let Ok(dir) = std::fs::read_dir("/proc") else { return };
            for entry in dir.flatten() {
                let name = entry.file_name();
                let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                    continue;
                };
                if pid == me {
                    continue;
                }
                if let Some((f, l)) = range {
                    let inside = if f <= l {
                        pid >= f && pid <= l
                    } else {
                        pid >= f || pid <= l
                    };
                    if !inside {
                        continue;
                    }
                }
                let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
                    continue;
                };
                if env.windows(needle.len()).any(|w| w == needle.as_slice()) {
                    found = true;
                    let _ = nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
            }
            if !found {
                return;
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

/// The last pid the kernel allocated (5th field of `/proc/loadavg`), when readable.
fn last_pid() -> Option<i32> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// After SIGKILL, waits (bounded) until no live process of group `pgid` is left, so the
/// caller can rely on the tree being gone when it returns. Zombies count as gone: they are
/// dead and wait only for their new parent (init) to reap them.
fn wait_group_gone(pgid: Pid, wait: Duration) {
    let deadline = after(Instant::now(), wait);
    while killpg(pgid, None).is_ok() && group_has_live_members(pgid) && Instant::now() < deadline {
        let _ = killpg(pgid, Signal::SIGKILL);
        thread::sleep(Duration::from_millis(2));
    }
}

/// Whether `/proc` shows a process of group `pgid` that is not a zombie. When `/proc` cannot
/// be read, assumes yes (the caller's wait is bounded).
pub(crate) fn group_has_live_members(pgid: Pid) -> bool {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid pgrp ...`; comm may contain spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid.as_raw()) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

/// `start + d`, saturating (a huge timeout from an agent must not overflow `Instant`).
fn after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .or_else(|| start.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(start)
}

fn exit_kind(status: ExitStatus) -> ExitKind {
    match (status.code(), status.signal()) {
        (Some(code), _) => ExitKind::Code(code),
        (None, Some(sig)) => ExitKind::Signal(sig),
        (None, None) => ExitKind::Code(-1),
    }
}

fn errno_to_io(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// Everything the forked child does before exec, prepared before the fork.
#[derive(Clone, Copy)]
struct ChildSetup {
    /// None at isolation `none`.
    limits: Option<RawLimits>,
    /// `cgroup.procs` descriptors to join (-1 = none).
    #[cfg(target_os = "linux")]
    cgroup_fds: [i32; 2],
    #[cfg(target_os = "linux")]
    strict: Option<super::strict::RawStrict>,
}

// SAFETY: RawStrict holds addresses into the parent's memory that only the forked child reads
// (its own copy); the parent never dereferences them.
unsafe impl Send for ChildSetup {}
unsafe impl Sync for ChildSetup {}

impl ChildSetup {
    /// Runs in the forked child: async-signal-safe syscalls only.
    fn apply(&self) -> io::Result<()> {
        setsid().map_err(errno_to_io)?;
        let Some(limits) = self.limits else { return Ok(()) };
        #[cfg(target_os = "linux")]
        {
            // SAFETY: prctl and write(2) with plain integers and a static buffer.
            unsafe {
                nix::libc::prctl(
                    nix::libc::PR_SET_PDEATHSIG,
                    nix::libc::SIGKILL as nix::libc::c_ulong,
                    0,
                    0,
                    0,
                );
                for fd in self.cgroup_fds.iter().filter(|fd| **fd >= 0) {
                    if nix::libc::write(*fd, b"0".as_ptr().cast(), 1) != 1 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
        }
        limits.apply().map_err(errno_to_io)?;
        #[cfg(target_os = "linux")]
        {
            match self.strict {
                None => super::strict::drop_bounding_caps(super::strict::PROCESS_DROP_CAPS),
                Some(raw) => {
                    super::strict::drop_bounding_caps(super::strict::STRICT_DROP_CAPS);
                    // SAFETY: we are the freshly forked child; strict::enter uses raw syscalls only.
                    return unsafe { super::strict::enter(raw) };
                }
            }
        }
        Ok(())
    }
}

/// rlimit values prepared before the fork, so the child only makes syscalls.
#[derive(Clone, Copy)]
struct RawLimits {
    memory: Option<u64>,
    cpu: Option<u64>,
    fsize: Option<u64>,
    nofile: Option<u64>,
}

impl From<&ResourceLimits> for RawLimits {
    fn from(l: &ResourceLimits) -> Self {
        RawLimits {
            memory: l.memory,
            cpu: l.cpu_secs,
            fsize: l.file_size,
            nofile: l.open_files,
        }
    }
}

impl RawLimits {
    /// Runs in the forked child: async-signal-safe syscalls only.
    fn apply(&self) -> Result<(), Errno> {
        set_limit(Resource::RLIMIT_CORE, Some(0))?;
        set_limit(Resource::RLIMIT_AS, self.memory)?;
        if let Some(cpu) = self.cpu {
            // Soft limit: SIGXCPU (named CPU_LIMIT); hard limit one second later: SIGKILL.
            let (_, hard) = getrlimit(Resource::RLIMIT_CPU)?;
            let soft = (cpu as nix::libc::rlim_t).min(hard);
            setrlimit(Resource::RLIMIT_CPU, soft, soft.saturating_add(1).min(hard))?;
        }
        set_limit(Resource::RLIMIT_FSIZE, self.fsize)?;
        set_limit(Resource::RLIMIT_NOFILE, self.nofile)
    }
}

/// Lowers `resource` to `value` (never above the current hard limit, which would fail).
fn set_limit(resource: Resource, value: Option<u64>) -> Result<(), Errno> {
    let Some(value) = value else { return Ok(()) };
    let (_, hard) = getrlimit(resource)?;
    let v = (value as nix::libc::rlim_t).min(hard);
    setrlimit(resource, v, v)
}

/// A private temporary directory for one command, removed when dropped.
struct PrivateTmp(PathBuf);

impl PrivateTmp {
    fn create() -> io::Result<PrivateTmp> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let path = base.join(format!("medin-sbx-{}-{n}-{nanos:08x}", std::process::id()));
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

impl Drop for PrivateTmp {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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
        // Without a CPU limit, SIGXCPU is not ours to name.
        l.cpu_secs = None;
        assert_eq!(name_limit(&l, signals(ExitKind::Signal(24))), None);
    }
}
