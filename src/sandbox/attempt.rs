//! The attempt's sandbox: what outlives one command but not the attempt.
//!
//! Under `strict`, an attempt gets one set of namespaces — PID, mount, network, IPC, UTS (and
//! a user namespace when the harness is not root) — held by a *holder*: a process chain like
//! a lone command's (A in the harness's namespaces, B the PID-1 reaper inside, see
//! `strict.rs`) that builds the attempt's view once, brings the loopback interface up, and
//! then only reaps. Every command of the attempt joins those namespaces (`setns` by
//! descriptor, before its first fork), so:
//!
//! - **services live**: a server an agent starts with `&` or `nohup` is re-parented to the
//!   holder when its command's shell exits, keeps running across the agent's calls and during
//!   verification, and answers on `localhost` in the same network namespace;
//! - **one filesystem**: commands whose view is the attempt's (the agent's commands, setup,
//!   validators, test and gate runs — the task's workspace, fixed paths, toolchains and
//!   packages) enter the holder's mount namespace as it is: one `/tmp`, one `TMPDIR`, no view
//!   rebuilt per command. A command that needs more than the attempt's view (a judged run's
//!   report folder, an agent program's own directory) gets a view of its own, built like a
//!   lone command's in a new mount namespace, in the attempt's other namespaces; its `/tmp` is
//!   its own;
//! - **nothing outlives the attempt**: when the attempt ends ([`AttemptSandbox::end`], also on
//!   drop and on panic) the holder forwards SIGTERM to every process of the namespace, the
//!   harness waits the grace period, then SIGKILLs the holder, and the kernel kills whatever
//!   is left in the namespace. If the harness dies, `PDEATHSIG` chains harness → A → B, and
//!   B's death ends the namespace. A command that times out is still ended as a tree (its
//!   process group and its tagged processes) at once.
//!
//! Each command keeps its own Landlock domain, seccomp filter, rlimits, cgroup and timeout:
//! the task's limits hold per command as before. A command whose processes outlive it hands
//! its cgroup to the attempt, where it goes on limiting them until the attempt ends (a fork
//! bomb's leftovers fill their own cgroup, not the next command's). Signals between
//! the attempt's processes are not scoped (a later command may `kill` an earlier command's
//! server); nothing outside the attempt is in its PID namespace to be signalled.
//!
//! At `process` and `none` there are no namespaces to share: every command's tree still ends
//! with it, and the attempt holds only its persistent shell ([`AttemptSandbox::session`]),
//! whose tree ends with the attempt.
//!
//! The one place that decides whether a command joins is [`AttemptSandbox::joining`]: it
//! joins when its level, workspace and network are the attempt's (otherwise it runs alone, as
//! every command did before attempts had namespaces), and enters the attempt's view when its
//! read and write paths, fixed root and fixed mounts are the attempt's too.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::session::Session;
#[cfg(target_os = "linux")]
use super::Isolation;
use super::{CommandOutcome, SandboxConfig, SandboxError};

/// The sandbox one attempt's commands share (see the module documentation). Cheap to clone;
/// the last clone dropped ends it.
#[derive(Clone)]
pub struct AttemptSandbox {
    inner: Arc<Inner>,
}

struct Inner {
    #[cfg(target_os = "linux")]
    holder: Option<holder::Holder>,
    /// The persistent shell, started by the first call that asks for it.
    session: Mutex<Option<Session>>,
    /// Cgroups of commands whose processes live on ([`AttemptSandbox::adopt_cgroup`]).
    #[cfg(target_os = "linux")]
    cgroups: Mutex<Vec<super::cgroup::CommandCgroup>>,
    grace: Duration,
}

impl fmt::Debug for AttemptSandbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AttemptSandbox")
            .field("namespaces", &self.has_namespaces())
            .finish()
    }
}

/// How a command joins its attempt (see [`AttemptSandbox::joining`]).
#[cfg(target_os = "linux")]
pub(crate) struct Joining<'a> {
    pub(crate) ns: &'a super::strict::NamespaceFds,
    /// The command's view is the attempt's: it enters the holder's mount namespace.
    pub(crate) same_view: bool,
    /// The attempt's TMPDIR (canonical), shown in the attempt's view at its own path.
    pub(crate) tmp: &'a Path,
}

impl AttemptSandbox {
    /// Starts the sandbox of an attempt whose commands `cfg` describes: under `strict`, the
    /// holder of its namespaces (an error when it cannot start, never a weaker level);
    /// otherwise nothing but a place for its persistent shell.
    pub fn start(cfg: &SandboxConfig) -> Result<AttemptSandbox, SandboxError> {
        // A task in a container has the container as its attempt's sandbox: no holder.
        #[cfg(target_os = "linux")]
        let holder = if cfg.isolation == Isolation::Strict && cfg.container.is_none() {
            Some(holder::Holder::start(cfg)?)
        } else {
            None
        };
        Ok(AttemptSandbox {
            inner: Arc::new(Inner {
                #[cfg(target_os = "linux")]
                holder,
                session: Mutex::new(None),
                #[cfg(target_os = "linux")]
                cgroups: Mutex::new(Vec::new()),
                grace: cfg.grace,
            }),
        })
    }

    /// Whether the attempt has namespaces of its own (strict on Linux).
    pub fn has_namespaces(&self) -> bool {
        #[cfg(target_os = "linux")]
        return self.inner.holder.is_some();
        #[cfg(not(target_os = "linux"))]
        false
    }

    /// The attempt's own network namespace (its holder's), when it has one: under `strict`
    /// with the network off. `None` when commands use the host's network (`network: true`,
    /// `process`, `none`, a container). The descriptor names the namespace for as long as it is
    /// borrowed, even after the attempt ended (nothing runs in it then). The egress proxy binds
    /// its sockets there ([`super::bind_inside`]).
    #[cfg(unix)]
    pub fn network_namespace(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        #[cfg(target_os = "linux")]
        return self
            .inner
            .holder
            .as_ref()
            .and_then(|h| h.ns.net())
            .map(std::os::fd::AsFd::as_fd);
        #[cfg(not(target_os = "linux"))]
        None
    }

    /// Ends every process of the attempt — its services, its persistent shell, what they
    /// left — with SIGTERM, the grace period, then SIGKILL. Idempotent; dropping the last
    /// clone does the same.
    pub fn end(&self) {
        self.inner.end();
    }

    /// Runs `command` in the attempt's persistent shell (started on first use), where `cd`,
    /// `export` and functions persist between calls; `cfg` gives the timeout and output cap
    /// (see [`super::session`]). A call that times out ends the shell, whose state is then lost:
    /// the next call starts a new one.
    pub fn session(
        &self,
        cfg: &SandboxConfig,
        command: &str,
        cwd: Option<&Path>,
    ) -> Result<CommandOutcome, SandboxError> {
        let mut slot = match self.inner.session.lock() {
            Ok(s) => s,
            Err(poisoned) => poisoned.into_inner(),
        };
        let fresh = slot.as_ref().is_none_or(|s| !s.alive());
        if fresh {
            let mut own = cfg.clone();
            own.attempt = Some(self.clone());
            *slot = Some(Session::start(&own)?);
        }
        let Some(session) = slot.as_mut() else {
            return Err(SandboxError::Spawn {
                command: command.to_string(),
                workspace: cfg.workspace.clone(),
                source: std::io::Error::other("the persistent shell did not start"),
            });
        };
        let mut outcome = session.run(cfg, command, cwd)?;
        if !session.alive() {
            *slot = None;
        }
        outcome.usage = Default::default();
        Ok(outcome)
    }

    /// Where `cfg`'s command meets this attempt: `None` when it runs alone (no namespaces
    /// here, or its level, workspace, network, fixed root or mounts are not the attempt's).
    #[cfg(target_os = "linux")]
    pub(crate) fn joining(&self, cfg: &SandboxConfig, workspace: &Path) -> Option<Joining<'_>> {
        let h = self.inner.holder.as_ref().filter(|h| !h.ended())?;
        let base = &h.base;
        // The network namespace is the attempt's either way; what the command sees of the
        // filesystem decides whether it enters the attempt's view or builds its own (a
        // verifier whose output folder is its own, a judged run's report folder).
        let same_place =
            cfg.isolation == Isolation::Strict && cfg.network == base.network && workspace == base.workspace;
        if !same_place {
            return None;
        }
        Some(Joining {
            ns: &h.ns,
            same_view: cfg.read_paths == base.read_paths
                && cfg.write_paths == base.write_paths
                && cfg.root == base.root
                && cfg.mounts == base.mounts,
            tmp: h.tmp(),
        })
    }

    /// Keeps the cgroup of a command whose processes outlive it (a service, a fork bomb's
    /// sleepers): it goes on limiting them, and its members are killed when the attempt
    /// ends. Outside an attempt with namespaces it is dropped at once (its members killed).
    #[cfg(target_os = "linux")]
    pub(crate) fn adopt_cgroup(&self, cgroup: super::cgroup::CommandCgroup) {
        if let Ok(mut kept) = self.inner.cgroups.lock() {
            kept.push(cgroup);
        }
    }

    /// Runs `f` on a thread inside the attempt's network namespace (a validator's port or
    /// HTTP check reaches the attempt's services on `localhost`); on the calling thread when
    /// the attempt has no network namespace of its own.
    pub fn in_network<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        #[cfg(target_os = "linux")]
        if let Some(net) = self.inner.holder.as_ref().and_then(|h| h.ns.net()) {
            use std::os::fd::AsRawFd;
            let fd = net.as_raw_fd();
            return std::thread::scope(|s| {
                let inside = s.spawn(move || {
                    // SAFETY: setns on this thread only (a network namespace is per thread);
                    // the thread ends after `f`, so nothing else runs in the namespace. A
                    // thread that cannot enter (a harness that is not root holds no
                    // capability in the attempt's user namespace) runs `f` on the host's
                    // network, where the attempt's services are not: the check then fails.
                    unsafe {
                        libc::setns(fd, libc::CLONE_NEWNET);
                    }
                    f()
                });
                match inside.join() {
                    Ok(v) => v,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            });
        }
        f()
    }
}

impl Inner {
    fn end(&self) {
        if let Ok(mut s) = self.session.lock() {
            if let Some(mut session) = s.take() {
                session.end(self.grace);
            }
        }
        #[cfg(target_os = "linux")]
        if let Some(h) = &self.holder {
            h.end(self.grace);
        }
        // Dropping a cgroup kills what is left in it and removes it.
        #[cfg(target_os = "linux")]
        if let Ok(mut kept) = self.cgroups.lock() {
            kept.clear();
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.end();
    }
}

/// The view the attempt's holder built: a command whose view is this one enters it.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[derive(Debug, Clone)]
struct BaseView {
    workspace: PathBuf,
    read_paths: Vec<PathBuf>,
    write_paths: Vec<PathBuf>,
    network: bool,
    root: Option<super::FixedPath>,
    mounts: Vec<super::FixedMount>,
}

#[cfg(target_os = "linux")]
mod holder {
    //! Starting and ending the holder's process chain.

    use std::ffi::OsStr;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::path::Path;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use nix::sys::signal::{kill, killpg, Signal};
    use nix::unistd::Pid;

    use super::super::process::{lasting, wait_exit_until, PrivateTmp};
    use super::super::spawn::{self, ChildSetup, CommandLine, RawLimits};
    use super::super::strict::{self, Entry, NamespaceFds};
    use super::super::view::ViewRequest;
    use super::super::{FixedPath, ResourceLimits, SandboxConfig, SandboxError, SANDBOX_PATH};
    use super::BaseView;

    /// How long the holder may take to build the attempt's view and report.
    const READY_WAIT: Duration = Duration::from_secs(20);

    pub(super) struct Holder {
        /// Process A, the harness's child (its process group holds B).
        a: Pid,
        /// Process B, PID 1 of the attempt, by its pid in the harness's namespace.
        b: Pid,
        pub(super) ns: NamespaceFds,
        /// The attempt's TMPDIR (removed after the holder is gone, as fields drop after
        /// [`super::Inner`]'s `end`).
        _tmp: PrivateTmp,
        tmp_canonical: std::path::PathBuf,
        pub(super) base: BaseView,
        ended: AtomicBool,
    }

    impl Holder {
        pub(super) fn start(cfg: &SandboxConfig) -> Result<Holder, SandboxError> {
            if let Err(reason) = super::super::probe::strict_available() {
                return Err(SandboxError::Unsupported {
                    level: super::Isolation::Strict,
                    reason,
                });
            }
            super::super::fixed::require_strict(cfg)?;
            super::super::reclaim::at_startup();
            let what = "the attempt's sandbox (its namespaces' holder)";
            let spawn_err = |source: io::Error| SandboxError::Spawn {
                command: what.to_string(),
                workspace: cfg.workspace.clone(),
                source,
            };
            let workspace = cfg.workspace.canonicalize().map_err(spawn_err)?;
            let tmp = PrivateTmp::create(&workspace).map_err(spawn_err)?;
            let tmp_canonical = tmp.path().canonicalize().map_err(spawn_err)?;
            let seen_root = cfg.root.as_ref().map_or(workspace.as_path(), FixedPath::as_path);
            let prep = strict::prepare(
                ViewRequest {
                    workspace: &workspace,
                    tmp: &tmp_canonical,
                    read_paths: &cfg.read_paths,
                    write_paths: &cfg.write_paths,
                    network: cfg.network,
                    cwd: None,
                    root: cfg.root.as_ref(),
                    mounts: &cfg.mounts,
                    enter: cfg.root.is_some().then_some(seen_root),
                },
                None,
                Entry::Holder,
            )
            .map_err(|reason| SandboxError::Unsupported {
                level: super::Isolation::Strict,
                reason,
            })?;
            let env = [(OsStr::new("PATH"), OsStr::new(SANDBOX_PATH))];
            let line = CommandLine::new("/bin/sh", &["-c", ":"], env, &workspace).map_err(spawn_err)?;
            let (status_read, status_write) = spawn::cloexec_pipe().map_err(spawn_err)?;
            let limits = ResourceLimits {
                cpu_secs: None,
                memory: None,
                ..cfg.limits.clone()
            };
            let setup = ChildSetup {
                limits: Some(RawLimits::from(&limits)),
                cgroup_fds: [-1, -1],
                die_with_parent: false,
                strict: Some(prep.raw(cfg.grace, status_write.as_raw_fd())),
            };
            // Forked from the thread that lasts as long as the harness: the attempt may be
            // ended by another thread than the one that started it.
            let spawned = lasting::spawn(line, setup).map_err(spawn_err)?;
            drop(status_write);
            drop(prep);
            let a = spawned.pid;
            let b = match read_pid(&status_read, Instant::now() + READY_WAIT) {
                Some(b) => b,
                None => {
                    let _ = killpg(a, Signal::SIGKILL);
                    let _ = wait_exit_until(a, Instant::now() + Duration::from_secs(2));
                    reap(a);
                    let said = read_available(&spawned.stderr);
                    return Err(spawn_err(io::Error::other(if said.trim().is_empty() {
                        "the holder did not report ready".to_string()
                    } else {
                        said.trim().to_string()
                    })));
                }
            };
            // SAFETY: geteuid cannot fail and touches no memory.
            let user = unsafe { libc::geteuid() } != 0;
            let ns = match NamespaceFds::open(b.as_raw(), user, !cfg.network) {
                Ok(ns) => ns,
                Err(e) => {
                    let _ = killpg(a, Signal::SIGKILL);
                    reap(a);
                    return Err(spawn_err(e));
                }
            };
            Ok(Holder {
                a,
                b,
                ns,
                _tmp: tmp,
                tmp_canonical,
                base: BaseView {
                    workspace,
                    read_paths: cfg.read_paths.clone(),
                    write_paths: cfg.write_paths.clone(),
                    network: cfg.network,
                    root: cfg.root.clone(),
                    mounts: cfg.mounts.clone(),
                },
                ended: AtomicBool::new(false),
            })
        }

        /// Whether the attempt was ended: a command after that runs alone.
        pub(super) fn ended(&self) -> bool {
            self.ended.load(Ordering::SeqCst)
        }

        pub(super) fn tmp(&self) -> &Path {
            &self.tmp_canonical
        }

        /// SIGTERM to B (which forwards it to the namespace), up to `grace` for everything
        /// to exit, then SIGKILL to B and A's group; reaps A. Idempotent.
        pub(super) fn end(&self, grace: Duration) {
            if self.ended.swap(true, Ordering::SeqCst) {
                return;
            }
            let _ = kill(self.b, Signal::SIGTERM);
            if !wait_exit_until(self.a, Instant::now() + grace) {
                let _ = kill(self.b, Signal::SIGKILL);
                let _ = killpg(self.a, Signal::SIGKILL);
                let _ = wait_exit_until(self.a, Instant::now() + Duration::from_secs(5));
            }
            reap(self.a);
        }
    }

    fn reap(pid: Pid) {
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe {
            libc::waitpid(pid.as_raw(), &mut status, 0);
        }
    }

    /// The 4-byte pid the holder's A relays once B is ready, or `None` at EOF or deadline.
    fn read_pid(fd: &std::os::fd::OwnedFd, deadline: Instant) -> Option<Pid> {
        let mut word = [0u8; 4];
        let mut got = 0;
        while got < 4 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            let mut pfd = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: poll on one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().clamp(1, i32::MAX as u128) as i32) };
            if r < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return None;
            }
            if r == 0 {
                continue;
            }
            // SAFETY: read into our own buffer from a descriptor we own.
            let n = unsafe { libc::read(fd.as_raw_fd(), word[got..].as_mut_ptr().cast(), 4 - got) };
            if n <= 0 {
                return None;
            }
            got += n as usize;
        }
        let pid = i32::from_ne_bytes(word);
        (pid > 0).then(|| Pid::from_raw(pid))
    }

    /// What the holder wrote to stderr before it gave up (non-blocking, bounded).
    fn read_available(fd: &std::os::fd::OwnedFd) -> String {
        let mut buf = vec![0u8; 8192];
        // SAFETY: fcntl and read on a descriptor we own, into our own buffer.
        let n = unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
            libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len())
        };
        buf.truncate(n.max(0) as usize);
        String::from_utf8_lossy(&buf).into_owned()
    }
}
