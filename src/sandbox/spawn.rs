//! Starting a sandboxed command's first process, and everything that process does between the
//! fork and the `exec` of `/bin/sh` (its own session, `PDEATHSIG`, joining its cgroup, rlimits,
//! dropping capabilities, and in strict mode entering the namespaces and the Landlock/seccomp
//! domain). For `none`/`process` commands and for agents on Linux, the first process is
//! started by a guardian (`guardian.rs`), which runs [`vfork::Prepared::clone_child`] itself;
//! elsewhere, by the calling thread.
//!
//! Why this module exists instead of `std::process::Command::pre_exec`: a `pre_exec` hook
//! forces std onto `fork` + `exec`, which copies the harness's page tables on every command,
//! while a plain `Command` uses `posix_spawn` (a `vfork`-style clone that shares memory and
//! costs almost nothing). Measured here, the difference was 15-20% of a whole `sh -c true`. So
//! on Linux, for the `none` and `process` levels, the child is created the way glibc's
//! `posix_spawn` creates it — `clone(CLONE_VM | CLONE_VFORK)` on a stack of its own, with every
//! signal blocked across the clone and handlers reset to their defaults in the child before
//! anything is unblocked — and the setup steps run there, as raw syscalls. `strict` must fork
//! twice more inside (the PID-1 reaper and the command), which a child sharing the harness's
//! memory must not do, so it keeps std's `fork` + `pre_exec` path, as do other Unixes.
//!
//! Rules for code that runs in the child (both paths): async-signal-safe syscalls only, on
//! values computed before the clone; no allocation, no locks, no panics. In the shared-memory
//! child a failure is written to an atomic the parent reads once the child has exec'd or died.

use std::ffi::{CString, OsStr};
use std::io;
#[cfg(target_os = "linux")]
use std::os::fd::FromRawFd;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use nix::errno::Errno;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use nix::unistd::{setsid, Pid};

use super::ResourceLimits;

/// The command to start, as the C strings `execve` takes (built before the clone).
pub(super) struct CommandLine {
    program: CString,
    argv: Vec<CString>,
    /// `KEY=VALUE`, later duplicates already removed.
    envp: Vec<CString>,
    dir: CString,
}

impl CommandLine {
    /// `program` with `args` (`argv[0]` is the program) in `dir` with exactly `env` (a later
    /// key overrides an earlier one). Fails with `InvalidInput` when any string holds a NUL
    /// byte (a command from an agent may).
    pub(super) fn new<'a>(
        program: &str,
        args: &[&str],
        env: impl IntoIterator<Item = (&'a OsStr, &'a OsStr)>,
        dir: &Path,
    ) -> io::Result<CommandLine> {
        fn c(bytes: &[u8], what: &str) -> io::Result<CString> {
            CString::new(bytes).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("the {what} contains a NUL byte, which no process can receive"),
                )
            })
        }
        let mut vars: Vec<(&OsStr, &OsStr)> = Vec::new();
        for (k, v) in env {
            match vars.iter_mut().find(|(key, _)| *key == k) {
                Some(slot) => slot.1 = v,
                None => vars.push((k, v)),
            }
        }
        let mut envp = Vec::with_capacity(vars.len());
        for (k, v) in vars {
            let mut kv = k.as_bytes().to_vec();
            kv.push(b'=');
            kv.extend_from_slice(v.as_bytes());
            envp.push(c(&kv, "environment")?);
        }
        let mut argv = vec![c(program.as_bytes(), "program")?];
        for a in args {
            argv.push(c(a.as_bytes(), "command")?);
        }
        Ok(CommandLine {
            program: argv[0].clone(),
            argv,
            envp,
            dir: c(dir.as_os_str().as_bytes(), "working directory")?,
        })
    }
}

/// A started command: its first process (the leader of its session and process group), the
/// parent's ends of its stdio, and its guardian when it has one.
///
/// Without a guardian the leader is the caller's child and nobody has waited for it: the
/// caller reaps it. With one, the guardian is the caller's child and the leader is the
/// guardian's (see [`super::guardian::Guardian`] for its status and usage).
pub(super) struct Spawned {
    pub(super) pid: Pid,
    #[cfg(target_os = "linux")]
    pub(super) guardian: Option<super::guardian::Guardian>,
    /// The write end of the command's stdin, when it was asked for ([`Stdin::Piped`]).
    pub(super) stdin: Option<OwnedFd>,
    pub(super) stdout: OwnedFd,
    pub(super) stderr: OwnedFd,
}

/// Where the command's stdin comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stdin {
    /// `/dev/null` (sandboxed commands).
    Null,
    /// A pipe whose write end the caller gets (agents).
    Piped,
}

/// Everything the forked child does before exec, prepared before the fork.
#[derive(Clone, Copy)]
pub(super) struct ChildSetup {
    /// None at isolation `none`.
    pub(super) limits: Option<RawLimits>,
    /// `cgroup.procs` descriptors to join (-1 = none).
    #[cfg(target_os = "linux")]
    pub(super) cgroup_fds: [i32; 2],
    /// `PDEATHSIG` even without limits: set when a guardian (one thread) is the parent. A
    /// thread of the harness is not a safe parent for it: an agent may outlive the thread
    /// that started it. (With limits, the parent is the thread inside `run_shell`, which
    /// waits for the command.)
    #[cfg(target_os = "linux")]
    pub(super) die_with_parent: bool,
    #[cfg(target_os = "linux")]
    pub(super) strict: Option<super::strict::RawStrict>,
}

// SAFETY: RawStrict holds addresses into the parent's memory that only the forked child reads
// (its own copy); the parent never dereferences them.
unsafe impl Send for ChildSetup {}
unsafe impl Sync for ChildSetup {}

impl ChildSetup {
    /// Runs in the child: async-signal-safe syscalls only.
    fn apply(&self) -> io::Result<()> {
        setsid().map_err(errno_to_io)?;
        #[cfg(target_os = "linux")]
        if self.limits.is_some() || self.die_with_parent {
            // SAFETY: prctl with plain integers.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
            }
        }
        let Some(limits) = self.limits else { return Ok(()) };
        #[cfg(target_os = "linux")]
        {
            // SAFETY: write(2) with plain integers and a static buffer.
            unsafe {
                for fd in self.cgroup_fds.iter().filter(|fd| **fd >= 0) {
                    if libc::write(*fd, b"0".as_ptr().cast(), 1) != 1 {
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
pub(super) struct RawLimits {
    /// RLIMIT_AS, bytes.
    pub(super) memory: Option<u64>,
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
    /// Runs in the child: async-signal-safe syscalls only.
    fn apply(&self) -> Result<(), Errno> {
        set_limit(Resource::RLIMIT_CORE, Some(0))?;
        set_limit(ADDRESS_SPACE, self.memory)?;
        if let Some(cpu) = self.cpu {
            // Soft limit: SIGXCPU (named CPU_LIMIT); hard limit one second later: SIGKILL.
            let (_, hard) = getrlimit(Resource::RLIMIT_CPU)?;
            let soft = (cpu as libc::rlim_t).min(hard);
            setrlimit(Resource::RLIMIT_CPU, soft, soft.saturating_add(1).min(hard))?;
        }
        set_limit(Resource::RLIMIT_FSIZE, self.fsize)?;
        set_limit(Resource::RLIMIT_NOFILE, self.nofile)
    }
}

/// The address-space limit (FreeBSD calls it RLIMIT_VMEM).
#[cfg(not(target_os = "freebsd"))]
const ADDRESS_SPACE: Resource = Resource::RLIMIT_AS;
#[cfg(target_os = "freebsd")]
const ADDRESS_SPACE: Resource = Resource::RLIMIT_VMEM;

/// Lowers `resource` to `value` (never above the current hard limit, which would fail).
fn set_limit(resource: Resource, value: Option<u64>) -> Result<(), Errno> {
    let Some(value) = value else { return Ok(()) };
    let (_, hard) = getrlimit(resource)?;
    let v = (value as libc::rlim_t).min(hard);
    setrlimit(resource, v, v)
}

/// Puts every signal's disposition back to its default, in a child about to exec a command:
/// handlers installed by the harness must not run there, and a signal the harness was started
/// ignoring (`nohup medin run` ignores SIGHUP; Rust ignores SIGPIPE) must not be ignored by the
/// task's commands — a verdict cannot depend on how medin was launched. Only `sigaction`
/// calls: safe between `clone`/`fork` and `exec`. `Err` carries the errno.
///
/// # Safety
/// Changes the calling process's signal table: call it only in a child before `exec`.
#[cfg(target_os = "linux")]
pub(super) unsafe fn default_signals() -> Result<(), i32> {
    for sig in 1..=libc::SIGRTMAX() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(sig, std::ptr::null(), &mut current) != 0 {
            continue; // glibc's reserved signals
        }
        if current.sa_sigaction != libc::SIG_DFL {
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            if libc::sigaction(sig, &default, std::ptr::null_mut()) != 0 {
                return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL));
            }
        }
    }
    Ok(())
}

/// Marks every descriptor from `first` up close-on-exec, so nothing the harness inherited
/// without `O_CLOEXEC` (a jobserver pipe, a supervisor's socket, a file opened outside the
/// workspace) reaches the command; descriptors the child still needs before exec stay usable.
/// Async-signal-safe. Before Linux 5.11 (no `CLOSE_RANGE_CLOEXEC`) each descriptor up to the
/// open-files limit is marked one by one.
#[cfg(target_os = "linux")]
pub(super) unsafe fn cloexec_from(first: u32) {
    if libc::syscall(libc::SYS_close_range, first, u32::MAX, libc::CLOSE_RANGE_CLOEXEC) == 0 {
        return;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let top = if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
        lim.rlim_cur.min(65_536) as i32
    } else {
        1024
    };
    for fd in first as i32..top {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
}

pub(super) fn errno_to_io(e: Errno) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// Starts `line` with stdin as asked and stdout/stderr piped, after `setup`: under a guardian
/// where one can be had (Linux, `none`/`process`: see `guardian.rs`), else as the caller's
/// direct child (strict mode, whose PID-namespace reaper does that job; other platforms).
pub(super) fn spawn(line: &CommandLine, setup: ChildSetup, stdin: Stdin) -> io::Result<Spawned> {
    #[cfg(target_os = "linux")]
    if setup.strict.is_none() {
        return vfork::spawn(line, setup, stdin, super::guardian::available());
    }
    spawn_with_fork(line, setup, stdin)
}

/// std's `fork` + `pre_exec` + `exec` (strict mode, non-Linux).
fn spawn_with_fork(line: &CommandLine, setup: ChildSetup, stdin: Stdin) -> io::Result<Spawned> {
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    let os = |c: &CString| OsStr::from_bytes(c.as_bytes()).to_owned();
    let mut cmd = Command::new(os(&line.program));
    cmd.args(line.argv.iter().skip(1).map(os))
        .current_dir(os(&line.dir))
        .env_clear()
        .stdin(match stdin {
            Stdin::Null => Stdio::null(),
            Stdin::Piped => Stdio::piped(),
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for kv in &line.envp {
        let bytes = kv.as_bytes();
        if let Some(eq) = bytes.iter().position(|b| *b == b'=') {
            cmd.env(OsStr::from_bytes(&bytes[..eq]), OsStr::from_bytes(&bytes[eq + 1..]));
        }
    }
    // SAFETY: the closure only makes async-signal-safe syscalls on values computed before the
    // fork; it allocates nothing (see ChildSetup::apply and strict::enter).
    unsafe {
        cmd.pre_exec(move || setup.apply());
    }
    let mut child = cmd.spawn()?;
    let missing = || io::Error::other("the child's output pipes were not created");
    let stdout = OwnedFd::from(child.stdout.take().ok_or_else(missing)?);
    let stderr = OwnedFd::from(child.stderr.take().ok_or_else(missing)?);
    Ok(Spawned {
        pid: Pid::from_raw(child.id() as i32),
        #[cfg(target_os = "linux")]
        guardian: None,
        stdin: child.stdin.take().map(OwnedFd::from),
        stdout,
        stderr,
    })
}

/// A pipe whose both ends close on exec: `(read, write)`.
#[cfg(target_os = "linux")]
pub(super) fn cloexec_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 fills two fresh descriptors that we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and belong to nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(target_os = "linux")]
pub(super) mod vfork {
    //! The shared-memory child (see the module documentation above).

    use std::ffi::CStr;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::sync::atomic::{AtomicI32, Ordering};

    use nix::unistd::Pid;

    use std::os::fd::OwnedFd;

    use super::{cloexec_pipe, ChildSetup, CommandLine, Spawned, Stdin};

    /// Stack for the child: it runs a handful of small frames, then execs.
    const STACK_SIZE: usize = 128 * 1024;

    /// Where the child failed, for the error message.
    const STAGE_SIGNALS: i32 = 1;
    const STAGE_STDIO: i32 = 2;
    const STAGE_CHDIR: i32 = 3;
    const STAGE_SETUP: i32 = 4;
    const STAGE_EXEC: i32 = 5;

    /// What the child reads (all prepared by the parent) and writes back on failure.
    struct ChildArgs<'a> {
        program: &'a CStr,
        argv: *const *const libc::c_char,
        envp: *const *const libc::c_char,
        dir: &'a CStr,
        stdio: [i32; 3],
        setup: ChildSetup,
        errno: AtomicI32,
        stage: AtomicI32,
    }

    /// A stack from `mmap` for a process that shares the harness's memory, with a guard page
    /// at its low end. Dropped, it goes back to a small pool (a fresh mapping costs page faults
    /// on first use and, once the harness has several threads, a TLB shootdown when unmapped),
    /// so it must only be dropped once the process that used it has exec'd or exited.
    pub(in crate::sandbox) struct Stack {
        base: *mut libc::c_void,
        len: usize,
    }

    /// A mapping in the pool.
    struct Mapping {
        base: usize,
        len: usize,
    }

    /// Stacks kept for reuse (at most [`POOLED`]).
    static POOL: std::sync::Mutex<Vec<Mapping>> = std::sync::Mutex::new(Vec::new());
    const POOLED: usize = 16;

    // SAFETY: a Stack is a plain mapping; whoever holds it decides when it is released.
    unsafe impl Send for Stack {}

    impl Stack {
        pub(in crate::sandbox) fn new(len: usize) -> io::Result<Stack> {
            if let Ok(mut pool) = POOL.lock() {
                if let Some(i) = pool.iter().position(|m| m.len == len) {
                    let m = pool.swap_remove(i);
                    return Ok(Stack {
                        base: m.base as *mut libc::c_void,
                        len: m.len,
                    });
                }
            }
            // SAFETY: a fresh anonymous private mapping; checked for failure below.
            let base = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                    -1,
                    0,
                )
            };
            if base == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the first page of our own mapping becomes inaccessible (stack grows down).
            if unsafe { libc::mprotect(base, 4096, libc::PROT_NONE) } != 0 {
                let e = io::Error::last_os_error();
                // SAFETY: our own mapping, used by nobody (not pooled: it has no guard page).
                unsafe {
                    libc::munmap(base, len);
                }
                return Err(e);
            }
            Ok(Stack { base, len })
        }

        /// The initial stack pointer: the high end, 16-byte aligned.
        pub(in crate::sandbox) fn top(&self) -> *mut libc::c_void {
            let end = self.base as usize + self.len;
            (end & !15) as *mut libc::c_void
        }
    }

    impl Drop for Stack {
        fn drop(&mut self) {
            if let Ok(mut pool) = POOL.lock() {
                if pool.len() < POOLED {
                    pool.push(Mapping {
                        base: self.base as usize,
                        len: self.len,
                    });
                    return;
                }
            }
            // SAFETY: our own mapping; the process that used it has exec'd or exited.
            unsafe {
                libc::munmap(self.base, self.len);
            }
        }
    }

    /// Everything the child needs, built by the harness before any clone: its arguments, the
    /// pointer arrays `execve` takes, and its stack. Cloned either by the harness thread
    /// itself or, from a guardian, by [`Prepared::clone_child`].
    pub(in crate::sandbox) struct Prepared<'a> {
        args: ChildArgs<'a>,
        _argv: Vec<*const libc::c_char>,
        _envp: Vec<*const libc::c_char>,
        stack: Stack,
    }

    impl<'a> Prepared<'a> {
        fn new(line: &'a CommandLine, setup: ChildSetup, stdio: [i32; 3]) -> io::Result<Prepared<'a>> {
            let mut argv: Vec<*const libc::c_char> = line.argv.iter().map(|a| a.as_ptr()).collect();
            argv.push(std::ptr::null());
            let mut envp: Vec<*const libc::c_char> = line.envp.iter().map(|e| e.as_ptr()).collect();
            envp.push(std::ptr::null());
            Ok(Prepared {
                args: ChildArgs {
                    program: &line.program,
                    argv: argv.as_ptr(),
                    envp: envp.as_ptr(),
                    dir: &line.dir,
                    stdio,
                    setup,
                    errno: AtomicI32::new(0),
                    stage: AtomicI32::new(0),
                },
                _argv: argv,
                _envp: envp,
                stack: Stack::new(STACK_SIZE)?,
            })
        }

        /// Clones the child (`CLONE_VM | CLONE_VFORK`): returns its pid, or `-errno` when the
        /// clone failed. The caller is suspended until the child has exec'd or exited.
        ///
        /// # Safety
        /// The caller must have every signal blocked (the child resets handlers before it
        /// unblocks them). Callable from a guardian: no allocation, only libc's `clone`.
        pub(in crate::sandbox) unsafe fn clone_child(&self) -> i32 {
            let pid = libc::clone(
                child_main,
                self.stack.top(),
                libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
                &self.args as *const ChildArgs as *mut libc::c_void,
            );
            if pid < 0 {
                -last_errno()
            } else {
                pid
            }
        }

        /// Once the child has exec'd or exited: why it failed, if it did (it then exited 127).
        fn child_error(&self) -> Option<io::Error> {
            let stage = self.args.stage.load(Ordering::SeqCst);
            if stage == 0 {
                return None;
            }
            let os = io::Error::from_raw_os_error(self.args.errno.load(Ordering::SeqCst));
            let what = match stage {
                STAGE_SIGNALS => "resetting signal handlers",
                STAGE_STDIO => "connecting stdin/stdout/stderr",
                STAGE_CHDIR => "entering the working directory",
                STAGE_SETUP => "applying the session, cgroup and resource limits",
                _ => "executing /bin/sh",
            };
            Some(io::Error::new(os.kind(), format!("{what}: {os}")))
        }

        /// The descriptors the child needs until it has exec'd (its stdio and cgroup files).
        fn child_fds(&self) -> [i32; 5] {
            let [a, b, c] = self.args.stdio;
            let [d, e] = self.args.setup.cgroup_fds;
            [a, b, c, d, e]
        }
    }

    /// Blocks every signal of the calling thread until dropped, so no handler of the harness
    /// runs in a child that shares its memory before that child has reset it. The raw
    /// syscall, because glibc's sigfillset leaves out its two internal signals (32, 33).
    pub(in crate::sandbox) struct SignalsBlocked(u64);

    impl SignalsBlocked {
        pub(in crate::sandbox) fn new() -> SignalsBlocked {
            let all: u64 = !0;
            let mut old: u64 = 0;
            // SAFETY: rt_sigprocmask on the calling thread with 8-byte masks we own.
            unsafe {
                libc::syscall(libc::SYS_rt_sigprocmask, libc::SIG_SETMASK, &all, &mut old, 8usize);
            }
            SignalsBlocked(old)
        }
    }

    impl Drop for SignalsBlocked {
        fn drop(&mut self) {
            // SAFETY: restores this thread's signal mask saved in `new`.
            unsafe {
                libc::syscall(
                    libc::SYS_rt_sigprocmask,
                    libc::SIG_SETMASK,
                    &self.0,
                    std::ptr::null_mut::<u64>(),
                    8usize,
                );
            }
        }
    }

    pub(super) fn spawn(line: &CommandLine, mut setup: ChildSetup, stdin: Stdin, guarded: bool) -> io::Result<Spawned> {
        setup.die_with_parent = guarded;
        let (stdin_child, stdin_parent): (OwnedFd, Option<OwnedFd>) = match stdin {
            Stdin::Null => (OwnedFd::from(std::fs::File::open("/dev/null")?), None),
            Stdin::Piped => {
                let (r, w) = cloexec_pipe()?;
                (r, Some(w))
            }
        };
        let (out_r, out_w) = cloexec_pipe()?;
        let (err_r, err_w) = cloexec_pipe()?;
        let prepared = Prepared::new(
            line,
            setup,
            [stdin_child.as_raw_fd(), out_w.as_raw_fd(), err_w.as_raw_fd()],
        )?;
        if guarded {
            let mut guardian = super::super::guardian::Guardian::start(&prepared, prepared.child_fds())?;
            if let Some(e) = prepared.child_error() {
                guardian.finish();
                return Err(e);
            }
            drop((stdin_child, out_w, err_w));
            return Ok(Spawned {
                pid: guardian.leader(),
                guardian: Some(guardian),
                stdin: stdin_parent,
                stdout: out_r,
                stderr: err_r,
            });
        }
        let pid = {
            let _blocked = SignalsBlocked::new();
            // SAFETY: every signal is blocked; CLONE_VFORK suspends this thread until the child
            // has exec'd or exited, so `prepared` outlives every use by the child.
            unsafe { prepared.clone_child() }
        };
        if pid < 0 {
            return Err(io::Error::from_raw_os_error(-pid));
        }
        if let Some(e) = prepared.child_error() {
            let mut status = 0;
            // SAFETY: reaps our own child, which has exited.
            unsafe {
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(e);
        }
        drop((stdin_child, out_w, err_w));
        Ok(Spawned {
            pid: Pid::from_raw(pid),
            guardian: None,
            stdin: stdin_parent,
            stdout: out_r,
            stderr: err_r,
        })
    }

    fn last_errno() -> i32 {
        nix::errno::Errno::last_raw()
    }

    /// The child. Returns only by exec or `_exit`.
    extern "C" fn child_main(arg: *mut libc::c_void) -> libc::c_int {
        // SAFETY: `arg` points at the parent's ChildArgs, alive while the parent is suspended.
        let args = unsafe { &*(arg as *const ChildArgs) };
        let fail = |stage: i32, errno: i32| -> ! {
            args.errno.store(errno, Ordering::SeqCst);
            args.stage.store(stage, Ordering::SeqCst);
            // SAFETY: leaves the child without running any of the harness's exit code.
            unsafe { libc::_exit(127) }
        };
        // SAFETY: raw syscalls on the child's own signal table, descriptors and process state;
        // CLONE_VM without CLONE_SIGHAND/CLONE_FILES gives the child copies of both tables.
        unsafe {
            if let Err(errno) = super::default_signals() {
                fail(STAGE_SIGNALS, errno);
            }
            for (target, &fd) in args.stdio.iter().enumerate() {
                let target = target as i32;
                let ok = if fd == target {
                    libc::fcntl(fd, libc::F_SETFD, 0) == 0
                } else {
                    libc::dup2(fd, target) == target
                };
                if !ok {
                    fail(STAGE_STDIO, last_errno());
                }
            }
            super::cloexec_from(3);
            if libc::chdir(args.dir.as_ptr()) != 0 {
                fail(STAGE_CHDIR, last_errno());
            }
            if let Err(e) = args.setup.apply() {
                fail(STAGE_SETUP, e.raw_os_error().unwrap_or(libc::EINVAL));
            }
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            libc::execve(args.program.as_ptr(), args.argv, args.envp);
            fail(STAGE_EXEC, last_errno())
        }
    }
}
