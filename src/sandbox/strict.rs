//! Strict isolation on Linux: what is prepared before the fork (the view's mount plan from
//! [`super::view`], the Landlock ruleset, seccomp BPF) and the code that runs in the forked
//! children (namespaces, the PID-1 reaper that builds the view and pivots into it, entering
//! Landlock and seccomp). See the module documentation of [`super`] for the sequence.
//!
//! The Landlock ruleset is defence in depth under the built view: rules attach to inodes, so
//! the parent's rules on host paths (`/usr`, `/etc` leaf by leaf, the workspace, `TMPDIR`,
//! read paths) hold for the binds of those paths inside, while the view's own filesystems
//! (`/`, `/proc`, `/dev`, `/dev/shm`, `/tmp`) are new inodes whose rules `C` adds once they
//! exist. There is no rule for the host's `/dev` any more: nothing of it is in the view but
//! the nodes the view binds.
//!
//! Everything after the fork uses raw, async-signal-safe syscalls on values computed before
//! it: the harness is multi-threaded, so the child must not allocate or take locks.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use landlock::{Access, AccessFs, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope, ABI};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule, TargetArch,
};

/// The system read rules, opened once per process (O_PATH descriptors kept open): the system
/// trees of the view, and `/etc` at leaf granularity — one rule per largest subtree without a
/// hidden entry (see [`super::hostscan::EtcScan`]), so a secret there has no rule at all.
fn system_rules() -> &'static [(PathFd, bool)] {
    static RULES: std::sync::OnceLock<Vec<(PathFd, bool)>> = std::sync::OnceLock::new();
    RULES.get_or_init(|| {
        let mut paths: Vec<(PathBuf, bool)> = super::hostscan::SYSTEM_ENTRIES
            .iter()
            .map(|p| (PathBuf::from(p), true))
            .collect();
        paths.extend(super::hostscan::etc().allowed.iter().cloned());
        paths
            .into_iter()
            .filter_map(|(p, is_dir)| Some((PathFd::new(&p).ok()?, is_dir)))
            .collect()
    })
}

/// `struct landlock_path_beneath_attr` (packed, as in the kernel UAPI).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// LANDLOCK_ACCESS_FS_EXECUTE | READ_FILE | READ_DIR.
const LANDLOCK_READ: u64 = 1 | (1 << 2) | (1 << 3);
/// LANDLOCK_ACCESS_FS_READ_DIR.
const LANDLOCK_READ_DIR: u64 = 1 << 3;
/// The private /dev: LANDLOCK_ACCESS_FS_WRITE_FILE | READ_FILE | READ_DIR | TRUNCATE (no
/// execute, no new nodes).
const LANDLOCK_DEV: u64 = (1 << 1) | (1 << 2) | (1 << 3) | (1 << 14);
/// Every filesystem right of Landlock ABI 3 (the ABI the ruleset handles): bits 0..=14.
const LANDLOCK_ALL_V3: u64 = (1 << 15) - 1;
/// LANDLOCK_RULE_PATH_BENEATH.
const LANDLOCK_RULE_PATH_BENEATH: i32 = 1;

/// Capabilities removed from the bounding set in strict mode (lost at exec).
pub(crate) const STRICT_DROP_CAPS: &[i32] = &[
    1, // CAP_DAC_OVERRIDE (root reads only what file modes let it: a 0700 directory of another
    //     user in /usr or /sys stays closed; the workspace and temp dirs are its own)
    2,  // CAP_DAC_READ_SEARCH (open_by_handle_at)
    9,  // CAP_LINUX_IMMUTABLE
    12, // CAP_NET_ADMIN
    13, // CAP_NET_RAW
    16, // CAP_SYS_MODULE
    17, // CAP_SYS_RAWIO
    18, // CAP_SYS_CHROOT
    19, // CAP_SYS_PTRACE
    21, // CAP_SYS_ADMIN
    22, // CAP_SYS_BOOT
    23, // CAP_SYS_NICE (no real-time scheduling: `chrt -f 99` could starve the host)
    24, // CAP_SYS_RESOURCE
    25, // CAP_SYS_TIME
    27, // CAP_MKNOD
    30, // CAP_AUDIT_CONTROL
    31, // CAP_SETFCAP (no file capabilities planted in the workspace)
    32, // CAP_MAC_OVERRIDE
    33, // CAP_MAC_ADMIN
    34, // CAP_SYSLOG
    38, // CAP_PERFMON
    39, // CAP_BPF
    40, // CAP_CHECKPOINT_RESTORE
];

/// Capabilities removed in `process` mode: only the one that lets root raise its rlimits.
pub(crate) const PROCESS_DROP_CAPS: &[i32] = &[24];

/// Syscalls that fail with EPERM in strict mode.
fn denied_syscalls() -> Vec<i64> {
    use libc::*;
    let mut v = vec![
        SYS_ptrace,
        SYS_process_vm_readv,
        SYS_process_vm_writev,
        SYS_mount,
        SYS_umount2,
        SYS_pivot_root,
        SYS_chroot,
        SYS_unshare,
        SYS_setns,
        SYS_bpf,
        SYS_perf_event_open,
        SYS_keyctl,
        SYS_add_key,
        SYS_request_key,
        SYS_kexec_load,
        SYS_kexec_file_load,
        SYS_io_uring_setup,
        SYS_io_uring_enter,
        SYS_io_uring_register,
        SYS_open_by_handle_at,
        SYS_name_to_handle_at,
        SYS_init_module,
        SYS_finit_module,
        SYS_delete_module,
        SYS_userfaultfd,
        SYS_reboot,
        SYS_swapon,
        SYS_swapoff,
        SYS_fsopen,
        SYS_fsmount,
        SYS_fsconfig,
        SYS_move_mount,
        SYS_open_tree,
        SYS_mount_setattr,
        SYS_pidfd_getfd,
    ];
    v.sort_unstable();
    v.dedup();
    v
}

/// How a strict process tree meets its namespaces (see "Attempt scope" in [`super`]).
pub(crate) enum Entry<'a> {
    /// Namespaces of its own: one command or agent, whose PID-1 reaper ends its tree with it.
    Alone,
    /// An attempt's holder: namespaces of its own, whose PID-1 reaper builds the attempt's
    /// view, reports that it is ready and reaps until the harness ends the attempt.
    Holder,
    /// A process of an attempt: it joins the holder's namespaces.
    Joined { ns: &'a NamespaceFds, view: JoinedView<'a> },
}

/// The filesystem a process of an attempt sees.
pub(crate) enum JoinedView<'a> {
    /// The attempt's own view (its mount namespace, its `/tmp`), entered as it is; the
    /// process starts in `enter`, a path of that view.
    Attempts { enter: &'a Path },
    /// A view of its own, built like a lone command's in a new mount namespace, because it
    /// needs what the attempt's view does not show (a judged run's report folder, an agent's
    /// own directory).
    Own,
}

/// [`Entry`] as the prepared children hold it.
enum PreparedEntry {
    Alone,
    Holder,
    Joined {
        ns: NamespaceFds,
        enter: Option<std::ffi::CString>,
    },
}

/// Descriptors of an attempt's namespaces (`/proc/<holder>/ns/*`), opened once: joining
/// by descriptor needs no path lookup in the child, and a descriptor keeps naming the same
/// namespace even if a pid is reused.
#[derive(Debug)]
pub(crate) struct NamespaceFds {
    /// Only when the holder runs in a user namespace (a harness that is not root).
    user: Option<OwnedFd>,
    mnt: OwnedFd,
    ipc: OwnedFd,
    uts: OwnedFd,
    /// `None` when the attempt uses the host's network (`network: true`).
    net: Option<OwnedFd>,
    pid: OwnedFd,
}

impl NamespaceFds {
    /// Opens the namespaces of process `pid` (the holder's PID-1 reaper, by its pid in the
    /// harness's namespace).
    pub(crate) fn open(pid: i32, user: bool, net: bool) -> io::Result<NamespaceFds> {
        let open = |name: &str| -> io::Result<OwnedFd> {
            let path = format!("/proc/{pid}/ns/{name}");
            std::fs::File::open(&path)
                .map(OwnedFd::from)
                .map_err(|e| io::Error::new(e.kind(), format!("{path}: {e}")))
        };
        Ok(NamespaceFds {
            user: if user { Some(open("user")?) } else { None },
            mnt: open("mnt")?,
            ipc: open("ipc")?,
            uts: open("uts")?,
            net: if net { Some(open("net")?) } else { None },
            pid: open("pid")?,
        })
    }

    /// The network namespace's descriptor, when the attempt has its own.
    pub(crate) fn net(&self) -> Option<&OwnedFd> {
        self.net.as_ref()
    }

    fn dup(&self) -> io::Result<NamespaceFds> {
        Ok(NamespaceFds {
            user: self.user.as_ref().map(OwnedFd::try_clone).transpose()?,
            mnt: self.mnt.try_clone()?,
            ipc: self.ipc.try_clone()?,
            uts: self.uts.try_clone()?,
            net: self.net.as_ref().map(OwnedFd::try_clone).transpose()?,
            pid: self.pid.try_clone()?,
        })
    }
}

/// [`PreparedEntry`] as the forked children read it.
#[derive(Clone, Copy)]
enum RawRole {
    Alone,
    Holder,
    Joined(RawJoin),
}

/// Raw descriptors of the namespaces to join (-1: not joined) and, when the attempt's view is
/// entered as it is, the address of the directory to start in (0 otherwise).
#[derive(Clone, Copy)]
struct RawJoin {
    user: i32,
    mnt: i32,
    ipc: i32,
    uts: i32,
    net: i32,
    pid: i32,
    enter: usize,
}

/// The word the holder's reaper writes when the attempt's namespaces and view are ready.
const HOLDER_READY: i32 = 0x5245_4459;

/// What the strict-mode children need, prepared in the parent.
pub(crate) struct StrictPrep {
    ruleset: OwnedFd,
    /// The filesystem the reaper builds (read by the forked children); `None` for a process
    /// that enters its attempt's view as it is.
    view: Option<super::view::ViewPlan>,
    /// How the children meet their namespaces.
    entry: PreparedEntry,
    deny: &'static BpfProgram,
    nosys: &'static BpfProgram,
    pub(crate) network: bool,
    /// For a harness that is not root: the `uid_map` / `gid_map` lines of the user namespace
    /// the children enter (the caller's own ids, mapped to themselves).
    user_maps: Option<UserMaps>,
    /// RLIMIT_NPROC set right after entering the user namespace, where it counts only the
    /// command's own processes (Linux 5.14+ charges processes per user namespace): the
    /// process limit for a harness that is not root and has no pids cgroup.
    nproc: Option<u64>,
}

impl StrictPrep {
    /// Whether the process count is limited by RLIMIT_NPROC in the user namespace.
    pub(crate) fn limits_processes_by_rlimit(&self) -> bool {
        self.nproc.is_some()
    }
}

/// Whether this kernel charges RLIMIT_NPROC per user namespace (Linux 5.14+, "ucounts").
pub(crate) fn nproc_counts_per_user_namespace() -> bool {
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let mut parts = release.trim().split(|c: char| !c.is_ascii_digit());
    let major: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    (major, minor) >= (5, 14)
}

/// `"<uid> <uid> 1"` and `"<gid> <gid> 1"`, formatted before the fork.
struct UserMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

impl StrictPrep {
    /// The raw values the forked children use; `grace` is what the reaper leaves processes
    /// between SIGTERM and SIGKILL when the command's shell has exited.
    pub(crate) fn raw(&self, grace: std::time::Duration, status_fd: i32) -> RawStrict {
        RawStrict {
            status_fd,
            ruleset_fd: self.ruleset.as_raw_fd(),
            view: self
                .view
                .as_ref()
                .map_or(0, |v| v as *const super::view::ViewPlan as usize),
            role: match &self.entry {
                PreparedEntry::Alone => RawRole::Alone,
                PreparedEntry::Holder => RawRole::Holder,
                PreparedEntry::Joined { ns, enter } => RawRole::Joined(RawJoin {
                    user: ns.user.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                    mnt: ns.mnt.as_raw_fd(),
                    ipc: ns.ipc.as_raw_fd(),
                    uts: ns.uts.as_raw_fd(),
                    net: ns.net.as_ref().map_or(-1, AsRawFd::as_raw_fd),
                    pid: ns.pid.as_raw_fd(),
                    enter: enter.as_ref().map_or(0, |c| c.as_ptr() as usize),
                }),
            },
            deny: (self.deny.as_ptr() as usize, self.deny.len()),
            nosys: (self.nosys.as_ptr() as usize, self.nosys.len()),
            network: self.network,
            nproc: self.nproc,
            user_maps: self.user_maps.as_ref().map(|m| {
                (
                    (m.uid_map.as_ptr() as usize, m.uid_map.len()),
                    (m.gid_map.as_ptr() as usize, m.gid_map.len()),
                )
            }),
            grace: libc::timeval {
                tv_sec: grace.as_secs().min(i32::MAX as u64) as libc::time_t,
                tv_usec: grace.subsec_micros() as libc::suseconds_t,
            },
        }
    }
}

/// Builds the view's mount plan, the Landlock ruleset and the seccomp programs for one
/// command (or agent) from `req` (see [`super::view::ViewRequest`]; its `tmp` is resolved
/// here). `processes_without_cgroup`: the process limit to hold by RLIMIT_NPROC when no pids
/// cgroup does.
pub(crate) fn prepare(
    req: super::view::ViewRequest<'_>,
    processes_without_cgroup: Option<u64>,
    entry: Entry<'_>,
) -> Result<StrictPrep, String> {
    let tmp = req
        .tmp
        .canonicalize()
        .map_err(|e| format!("cannot resolve the private TMPDIR {}: {e}", req.tmp.display()))?;
    let req = super::view::ViewRequest { tmp: &tmp, ..req };
    let (view, entry) = match entry {
        Entry::Alone => (Some(super::view::plan(&req)?), PreparedEntry::Alone),
        Entry::Holder => (Some(super::view::plan(&req)?), PreparedEntry::Holder),
        Entry::Joined {
            ns,
            view: JoinedView::Own,
        } => (
            Some(super::view::plan(&req)?),
            PreparedEntry::Joined {
                ns: ns
                    .dup()
                    .map_err(|e| format!("cannot hold the attempt's namespaces: {e}"))?,
                enter: None,
            },
        ),
        Entry::Joined {
            ns,
            view: JoinedView::Attempts { enter },
        } => (
            None,
            PreparedEntry::Joined {
                ns: ns
                    .dup()
                    .map_err(|e| format!("cannot hold the attempt's namespaces: {e}"))?,
                enter: Some(
                    std::ffi::CString::new(std::os::unix::ffi::OsStrExt::as_bytes(enter.as_os_str()))
                        .map_err(|_| format!("the directory {} holds a NUL byte", enter.display()))?,
                ),
            },
        ),
    };
    let extra_read = view.as_ref().map_or(&[][..], |v| v.extra_read.as_slice());
    // A process of an attempt shares its PID and network namespaces with the attempt's other
    // processes (that is the point: a service started by one command answers the next), so
    // signals between them are not scoped; nothing outside the attempt is in its PID
    // namespace to be signalled. Abstract sockets are per network namespace: scoped only
    // where the host's network namespace is shared.
    let scopes = match &entry {
        PreparedEntry::Joined { .. } if req.network => Scopes::AbstractUnixSocket,
        PreparedEntry::Joined { .. } => Scopes::None,
        _ => Scopes::All,
    };
    let ruleset = landlock_ruleset(&req, extra_read, scopes)?;
    static PROGRAMS: std::sync::OnceLock<Result<(BpfProgram, BpfProgram), String>> = std::sync::OnceLock::new();
    let (deny, nosys) = match PROGRAMS.get_or_init(seccomp_programs) {
        Ok((d, n)) => (d, n),
        Err(e) => return Err(e.clone()),
    };
    // The writer's effective ids are what an unprivileged process may map.
    // SAFETY: geteuid/getegid cannot fail and touch no memory.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let joined = matches!(entry, PreparedEntry::Joined { .. });
    let user_maps = (uid != 0 && !joined).then(|| UserMaps {
        uid_map: format!("{uid} {uid} 1").into_bytes(),
        gid_map: format!("{gid} {gid} 1").into_bytes(),
    });
    let nproc = processes_without_cgroup.filter(|_| user_maps.is_some() && nproc_counts_per_user_namespace());
    Ok(StrictPrep {
        ruleset,
        view,
        entry,
        deny,
        nosys,
        network: req.network,
        user_maps,
        nproc,
    })
}

/// The ruleset for `req`'s view. Rules attach to inodes, so the workspace's rule holds where
/// the view shows it (its host path or the fixed root: a bind of the same directory), and a
/// fixed mount's rule is its source's (read, or all for a writable one).
/// Which Landlock scopes (ABI 6) a ruleset sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scopes {
    /// Abstract Unix sockets and signals: a command alone in its namespaces.
    All,
    /// Abstract Unix sockets only: an attempt's process on the host's network.
    AbstractUnixSocket,
    /// None: an attempt's process in the attempt's own network namespace.
    None,
}

fn landlock_ruleset(
    req: &super::view::ViewRequest<'_>,
    extra_read: &[PathBuf],
    scopes: Scopes,
) -> Result<OwnedFd, String> {
    let (workspace, tmp, read_paths, write_paths) = (req.workspace, req.tmp, req.read_paths, req.write_paths);
    let fixed_reads: Vec<&Path> = req
        .mounts
        .iter()
        .filter(|m| m.access == super::fixed::MountAccess::ReadOnly)
        .map(|m| m.source.as_path())
        .collect();
    let fixed_writes: Vec<&Path> = req
        .mounts
        .iter()
        .filter(|m| m.access == super::fixed::MountAccess::ReadWrite)
        .map(|m| m.source.as_path())
        .collect();
    let abi = ABI::V3;
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    let lerr = |e: landlock::RulesetError| format!("cannot build the Landlock ruleset: {e}");
    let mut rules: Vec<(PathFd, landlock::BitFlags<AccessFs>)> = Vec::new();
    let mut add = |path: &Path, access: landlock::BitFlags<AccessFs>, required: bool| -> Result<(), String> {
        match PathFd::new(path) {
            Ok(fd) => {
                rules.push((fd, access));
                Ok(())
            }
            Err(e) if required => Err(format!("cannot open {} for the Landlock ruleset: {e}", path.display())),
            Err(_) => Ok(()),
        }
    };
    for p in read_paths
        .iter()
        .map(PathBuf::as_path)
        .chain(extra_read.iter().map(PathBuf::as_path))
        .chain(fixed_reads)
    {
        let access = if p.is_dir() {
            read
        } else {
            read & AccessFs::from_file(abi)
        };
        add(p, access, true)?;
    }
    add(workspace, all, true)?;
    add(tmp, all, true)?;
    for p in write_paths.iter().map(PathBuf::as_path).chain(fixed_writes) {
        add(p, all, true)?;
    }
    // Scopes (Landlock ABI 6, Linux 6.12; dropped where the kernel is older): no connecting to
    // abstract Unix sockets made outside the sandbox (dbus, X11 and friends are reachable that
    // way when the network namespace is not created), no signals to processes outside it.
    let handled = Ruleset::default().handle_access(all).map_err(lerr)?;
    let scoped = match scopes {
        Scopes::All => handled.scope(Scope::AbstractUnixSocket | Scope::Signal).map_err(lerr)?,
        Scopes::AbstractUnixSocket => handled.scope(Scope::AbstractUnixSocket).map_err(lerr)?,
        Scopes::None => handled,
    };
    let mut rs = scoped.create().map_err(lerr)?;
    let read_file = read & AccessFs::from_file(abi);
    for (fd, is_dir) in system_rules() {
        let access = if *is_dir { read } else { read_file };
        rs = rs.add_rule(PathBeneath::new(fd, access)).map_err(lerr)?;
    }
    for (fd, access) in rules {
        rs = rs.add_rule(PathBeneath::new(fd, access)).map_err(lerr)?;
    }
    let fd: Option<OwnedFd> = rs.into();
    fd.ok_or_else(|| "Landlock is not supported or not enabled by this kernel".to_string())
}

fn seccomp_programs() -> Result<(BpfProgram, BpfProgram), String> {
    fn serr(e: impl std::fmt::Display) -> String {
        format!("cannot build the seccomp filter: {e}")
    }
    let arch: TargetArch = std::env::consts::ARCH
        .try_into()
        .map_err(|_| format!("seccomp filters are not supported on {}", std::env::consts::ARCH))?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = denied_syscalls().into_iter().map(|s| (s, Vec::new())).collect();
    let ns_flags = [
        libc::CLONE_NEWNS,
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWCGROUP,
    ];
    let mut clone_rules = Vec::new();
    for f in ns_flags {
        let f = f as u64;
        let cond = SeccompCondition::new(0, SeccompCmpArgLen::Qword, SeccompCmpOp::MaskedEq(f), f).map_err(serr)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(serr)?);
    }
    rules.insert(libc::SYS_clone, clone_rules);
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(serr)?;
    let nosys = SeccompFilter::new(
        [(libc::SYS_clone3, Vec::new())].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .map_err(serr)?;
    let deny: BpfProgram = deny.try_into().map_err(serr)?;
    let nosys: BpfProgram = nosys.try_into().map_err(serr)?;
    Ok((deny, nosys))
}

/// Plain values for the children (pointers into the parent's memory, valid in the forked copy).
#[derive(Clone, Copy)]
pub(crate) struct RawStrict {
    ruleset_fd: i32,
    /// Address of the [`super::view::ViewPlan`] in the parent's memory (valid in the copy); 0
    /// when the process enters its attempt's view instead.
    view: usize,
    role: RawRole,
    deny: (usize, usize),
    nosys: (usize, usize),
    network: bool,
    /// Where A writes the command's wait status as soon as the command exits (-1: nowhere).
    status_fd: i32,
    nproc: Option<u64>,
    /// `(uid_map, gid_map)` as (address, length) when the children enter a user namespace.
    user_maps: Option<((usize, usize), (usize, usize))>,
    grace: libc::timeval,
}

fn last_errno() -> i32 {
    nix::errno::Errno::last_raw()
}

/// Writes a fixed message to stderr (async-signal-safe).
fn say(msg: &[u8]) {
    // SAFETY: write(2) on a byte slice we own.
    unsafe {
        libc::write(2, msg.as_ptr().cast(), msg.len());
    }
}

/// Drops capabilities from the bounding set (errors ignored: without CAP_SETPCAP there is
/// nothing to drop for, as the process is not privileged).
pub(crate) fn drop_bounding_caps(caps: &[i32]) {
    for &c in caps {
        // SAFETY: prctl with integer arguments.
        unsafe {
            libc::prctl(libc::PR_CAPBSET_DROP, c as libc::c_ulong, 0, 0, 0);
        }
    }
}

/// Set in the reaper (B) when the harness sent SIGTERM: the grace period is running, so the
/// reaper lets the namespace's processes exit on their own instead of SIGKILLing them as soon
/// as the command's shell is gone (the harness SIGKILLs everything when the grace ends).
static TERM_RECEIVED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

extern "C" fn forward_sigterm(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // Only the harness's SIGTERM counts: it comes from outside the namespace, where the sender
    // has no pid (0). A command inside sending `kill -TERM 1` must not switch the reaper's own
    // grace clock off (Landlock's signal scope stops that too, from ABI 6).
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    if info.is_null() || unsafe { (*info).si_pid() } != 0 {
        return;
    }
    TERM_RECEIVED.store(true, std::sync::atomic::Ordering::SeqCst);
    // SAFETY: kill(2) is async-signal-safe; -1 from PID 1 means every other process of the
    // namespace.
    unsafe {
        libc::kill(-1, libc::SIGTERM);
    }
}

extern "C" fn kill_namespace(_: libc::c_int) {
    // SAFETY: kill(2) is async-signal-safe; -1 from PID 1 means every other process of the
    // namespace.
    unsafe {
        libc::kill(-1, libc::SIGKILL);
    }
}

/// Closes every descriptor except the (up to) two in `keep` (-1 = none). Async-signal-safe.
unsafe fn close_all_except(keep: [i32; 2]) {
    let (lo, hi) = (keep[0].min(keep[1]), keep[0].max(keep[1]));
    let mut next: u32 = 0;
    for k in [lo, hi] {
        if k < 0 {
            continue;
        }
        if k as u32 > next {
            libc::syscall(libc::SYS_close_range, next, k as u32 - 1, 0u32);
        }
        next = k as u32 + 1;
    }
    close_from(next);
}

fn close_from(first: u32) {
    // SAFETY: close_range(2) with plain integers; closes inherited descriptors only.
    unsafe {
        libc::syscall(libc::SYS_close_range, first, u32::MAX, 0u32);
    }
}

/// Writes `bytes` (address, length) to `path` in one `write`, as `/proc/self/*_map` requires.
/// Async-signal-safe.
unsafe fn write_proc_self(path: &std::ffi::CStr, (addr, len): (usize, usize)) -> io::Result<()> {
    let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    let n = libc::write(fd, addr as *const libc::c_void, len);
    let result = if n == len as isize {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    };
    libc::close(fd);
    result
}

/// Runs in process A (the forked child of `Command::spawn`), after setsid/cgroups/rlimits.
/// Returns only in process C, which then execs the command; A and B never return.
///
/// # Safety
/// Must be called in a freshly forked child of a multi-threaded process: only async-signal-safe
/// syscalls are used.
pub(crate) unsafe fn enter(raw: RawStrict) -> io::Result<()> {
    match raw.role {
        RawRole::Joined(j) => join(&j)?,
        RawRole::Alone | RawRole::Holder => unshare_all(&raw)?,
    }
    let mut pipe = [0i32; 2];
    if libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
        return Err(io::Error::last_os_error());
    }
    let b = libc::fork();
    if b < 0 {
        return Err(io::Error::last_os_error());
    }
    if b == 0 {
        libc::close(pipe[0]);
        return match raw.role {
            RawRole::Alone => reaper(raw, pipe[1]),
            RawRole::Holder => holder(raw, pipe[1]),
            RawRole::Joined(j) if j.enter != 0 => {
                // The attempt's view, entered as it is: this process is the command itself
                // (its write end of the pipe closes when it execs, which A reads as "no
                // report", and A waits for it instead).
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
                if libc::chdir(j.enter as *const libc::c_char) != 0 {
                    say(b"medin sandbox: cannot enter the working directory in the attempt's view\n");
                    libc::_exit(126);
                }
                confine(raw)
            }
            RawRole::Joined(_) => reaper(raw, pipe[1]),
        };
    }
    relay(raw, b, pipe)
}

/// Joins the attempt's namespaces (process A of an attempt's command). The user namespace
/// comes first (it owns the others); a command with a view of its own gets a new mount
/// namespace instead of the attempt's, made from the host's like a lone command's; the PID
/// namespace applies to the children A forks next. Async-signal-safe.
unsafe fn join(j: &RawJoin) -> io::Result<()> {
    let set = |fd: i32, kind: libc::c_int| -> io::Result<()> {
        if fd >= 0 && libc::setns(fd, kind) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    set(j.user, libc::CLONE_NEWUSER)?;
    if j.enter != 0 {
        set(j.mnt, libc::CLONE_NEWNS)?;
    }
    set(j.ipc, libc::CLONE_NEWIPC)?;
    set(j.uts, libc::CLONE_NEWUTS)?;
    set(j.net, libc::CLONE_NEWNET)?;
    if j.enter == 0 && libc::unshare(libc::CLONE_NEWNS) != 0 {
        return Err(io::Error::last_os_error());
    }
    set(j.pid, libc::CLONE_NEWPID)
}

/// New namespaces for a lone command or an attempt's holder (process A). Async-signal-safe.
unsafe fn unshare_all(raw: &RawStrict) -> io::Result<()> {
    let mut flags = libc::CLONE_NEWPID | libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWUTS;
    if !raw.network {
        flags |= libc::CLONE_NEWNET;
    }
    // Without root, a user namespace owns the others: inside it this process may mount, set
    // the hostname and create the PID-1 reaper, while every id stays the caller's own (so the
    // command, once it execs, holds no capability at all).
    if raw.user_maps.is_some() {
        flags |= libc::CLONE_NEWUSER;
    }
    if libc::unshare(flags) != 0 {
        return Err(io::Error::last_os_error());
    }
    if let Some((uid_map, gid_map)) = raw.user_maps {
        write_proc_self(c"/proc/self/setgroups", (b"deny".as_ptr() as usize, 4))?;
        write_proc_self(c"/proc/self/uid_map", uid_map)?;
        write_proc_self(c"/proc/self/gid_map", gid_map)?;
        if let Some(n) = raw.nproc {
            // Set only now: the namespace's own ceiling was taken from the limit in force when
            // it was created (unlimited), so the count that binds is this namespace's alone.
            let lim = libc::rlimit {
                rlim_cur: n as libc::rlim_t,
                rlim_max: n as libc::rlim_t,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &lim) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(())
}

/// Process A after forking `b`: relays `b`'s report to the harness and exits as the command
/// did. For a holder the report is "ready", relayed as `b`'s pid (the harness opens its
/// namespaces by it). Never returns.
unsafe fn relay(raw: RawStrict, b: libc::pid_t, pipe: [i32; 2]) -> io::Result<()> {
    libc::close(pipe[1]);
    libc::signal(libc::SIGTERM, libc::SIG_IGN);
    // Nothing but the pipe is needed; closing stdout/stderr and the spawn-error pipe lets the
    // harness see EOF as soon as the command's own tree closes them.
    close_all_except([pipe[0], raw.status_fd]);
    let mut status: i32 = 0;
    let mut got = 0usize;
    let buf = &mut status as *mut i32 as *mut u8;
    while got < 4 {
        let n = libc::read(pipe[0], buf.add(got).cast(), 4 - got);
        if n > 0 {
            got += n as usize;
        } else if n < 0 && last_errno() == libc::EINTR {
            continue;
        } else {
            break;
        }
    }
    // The command's own end, for the harness's clock: B reports it as soon as C exits, before
    // its grace period for leftovers, which must not count against the command's timeout.
    if got == 4 && raw.status_fd >= 0 {
        if matches!(raw.role, RawRole::Holder) && status == HOLDER_READY {
            let pid: i32 = b;
            libc::write(raw.status_fd, (&pid as *const i32).cast(), 4);
        } else {
            libc::write(raw.status_fd, buf.cast(), 4);
        }
        libc::close(raw.status_fd);
    }
    let mut b_status = 0;
    while libc::waitpid(b, &mut b_status, 0) < 0 && last_errno() == libc::EINTR {}
    if got < 4 || matches!(raw.role, RawRole::Holder) {
        status = b_status;
    }
    if libc::WIFEXITED(status) {
        libc::_exit(libc::WEXITSTATUS(status));
    }
    if libc::WIFSIGNALED(status) {
        let sig = libc::WTERMSIG(status);
        libc::signal(sig, libc::SIG_DFL);
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
        libc::kill(libc::getpid(), sig);
        libc::_exit(128 + sig);
    }
    libc::_exit(126)
}

/// Process B: PID 1 of the new namespace.
unsafe fn reaper(raw: RawStrict, report: i32) -> io::Result<()> {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
    let none: *const libc::c_char = std::ptr::null();
    if libc::mount(
        none,
        c"/".as_ptr(),
        none,
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ) != 0
    {
        say(b"medin sandbox: cannot make mounts private in the new mount namespace\n");
        libc::_exit(126);
    }
    // The command's filesystem: a new root built from the allowlist, the host's detached.
    if !super::view::build(&*(raw.view as *const super::view::ViewPlan)) {
        libc::_exit(126);
    }
    let joined = matches!(raw.role, RawRole::Joined(_));
    if !joined {
        let host = b"medin-sandbox";
        libc::sethostname(host.as_ptr().cast(), host.len());
    }
    let c = libc::fork();
    if c < 0 {
        say(b"medin sandbox: cannot fork the command inside the namespace\n");
        libc::_exit(126);
    }
    if c == 0 {
        libc::close(report);
        return confine(raw);
    }
    if joined {
        // Not PID 1 but one process of the attempt's namespace: the harness's SIGTERM reaches
        // the command through its process group; this process waits to report its status.
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
    } else {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction =
            forward_sigterm as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    }
    for fd in 0..3 {
        libc::close(fd);
    }
    libc::syscall(libc::SYS_close_range, 3u32, (report - 1).max(3) as u32, 0u32);
    close_from(report as u32 + 1);
    loop {
        let mut st = 0;
        let r = libc::waitpid(-1, &mut st, 0);
        if r == c {
            // Report C's status now (A relays it to the harness), then see to the leftovers.
            libc::write(report, (&st as *const i32).cast(), 4);
            libc::close(report);
            // The command is done; whatever it left running gets SIGTERM now and SIGKILL when
            // the grace period ends (SIGALRM). After the harness's own SIGTERM (a timeout)
            // the harness runs that clock.
            // What a process of an attempt leaves running is the attempt's: its holder ends it.
            if joined {
                continue;
            }
            if !TERM_RECEIVED.load(std::sync::atomic::Ordering::SeqCst) && libc::kill(-1, libc::SIGTERM) == 0 {
                if raw.grace.tv_sec == 0 && raw.grace.tv_usec == 0 {
                    libc::kill(-1, libc::SIGKILL);
                } else {
                    let mut alarm: libc::sigaction = std::mem::zeroed();
                    alarm.sa_sigaction = kill_namespace as extern "C" fn(libc::c_int) as usize;
                    libc::sigemptyset(&mut alarm.sa_mask);
                    libc::sigaction(libc::SIGALRM, &alarm, std::ptr::null_mut());
                    let timer = libc::itimerval {
                        it_interval: libc::timeval { tv_sec: 0, tv_usec: 0 },
                        it_value: raw.grace,
                    };
                    libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut());
                }
            }
        } else if r < 0 {
            if last_errno() == libc::EINTR {
                continue;
            }
            break;
        }
    }
    libc::_exit(0)
}

/// Process B of an attempt's holder: PID 1 of the attempt's namespaces. It builds the
/// attempt's view, names the host, brings the loopback interface up (a service started by
/// one command answers the next on `localhost`; with the network off nothing else is
/// there), reports that it is ready, and then only reaps: every process an attempt's
/// command leaves running becomes its child. The harness's SIGTERM (sender outside the
/// namespace) is forwarded to every process of the namespace; once nothing is left it
/// exits. The harness SIGKILLs it when the grace period ends, and the kernel then kills
/// whatever is left in the namespace.
unsafe fn holder(raw: RawStrict, report: i32) -> io::Result<()> {
    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
    let none: *const libc::c_char = std::ptr::null();
    if libc::mount(
        none,
        c"/".as_ptr(),
        none,
        libc::MS_REC | libc::MS_PRIVATE,
        std::ptr::null(),
    ) != 0
    {
        say(b"medin sandbox: cannot make mounts private in the attempt's mount namespace\n");
        libc::_exit(126);
    }
    if !super::view::build(&*(raw.view as *const super::view::ViewPlan)) {
        libc::_exit(126);
    }
    let host = b"medin-sandbox";
    libc::sethostname(host.as_ptr().cast(), host.len());
    if !raw.network && !loopback_up() {
        say(b"medin sandbox: cannot bring up the loopback interface of the attempt's network namespace\n");
        libc::_exit(126);
    }
    let mut sa: libc::sigaction = std::mem::zeroed();
    sa.sa_sigaction = forward_sigterm as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
    sa.sa_flags = libc::SA_SIGINFO;
    libc::sigemptyset(&mut sa.sa_mask);
    libc::sigaction(libc::SIGTERM, &sa, std::ptr::null_mut());
    // SIGCHLD wakes the wait below; it stays blocked except inside sigsuspend, so no child's
    // end can slip between a look and the sleep.
    let mut chld: libc::sigaction = std::mem::zeroed();
    chld.sa_sigaction = wake as extern "C" fn(libc::c_int) as usize;
    libc::sigemptyset(&mut chld.sa_mask);
    libc::sigaction(libc::SIGCHLD, &chld, std::ptr::null_mut());
    let mut blocked: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut blocked);
    libc::sigaddset(&mut blocked, libc::SIGCHLD);
    libc::sigprocmask(libc::SIG_BLOCK, &blocked, std::ptr::null_mut());
    close_all_except([report, -1]);
    libc::write(report, (&HOLDER_READY as *const i32).cast(), 4);
    libc::close(report);
    let mut open: libc::sigset_t = std::mem::zeroed();
    libc::sigemptyset(&mut open);
    loop {
        let mut st = 0;
        let r = libc::waitpid(-1, &mut st, libc::WNOHANG);
        if r > 0 {
            continue;
        }
        if r < 0 && last_errno() == libc::ECHILD && TERM_RECEIVED.load(std::sync::atomic::Ordering::SeqCst) {
            libc::_exit(0);
        }
        libc::sigsuspend(&open);
    }
}

extern "C" fn wake(_: libc::c_int) {}

/// `ip link set lo up`, by ioctl. Async-signal-safe.
unsafe fn loopback_up() -> bool {
    let sock = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
    if sock < 0 {
        return false;
    }
    let mut ifr: libc::ifreq = std::mem::zeroed();
    for (slot, byte) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    let mut ok = libc::ioctl(sock, libc::SIOCGIFFLAGS, &mut ifr) == 0;
    if ok {
        ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        ok = libc::ioctl(sock, libc::SIOCSIFFLAGS, &ifr) == 0;
    }
    libc::close(sock);
    ok
}

/// Adds a Landlock "path beneath" rule for `path` to `ruleset_fd`. Returns false when the path
/// cannot be opened (nothing added). Async-signal-safe: no allocation.
unsafe fn add_path_rule(ruleset_fd: libc::c_int, path: &std::ffi::CStr, access: u64) -> io::Result<bool> {
    let fd = libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY);
    if fd < 0 {
        return Ok(false);
    }
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    let added = libc::syscall(
        libc::SYS_landlock_add_rule,
        ruleset_fd,
        LANDLOCK_RULE_PATH_BENEATH,
        &attr as *const PathBeneathAttr,
        0u32,
    ) == 0;
    let err = io::Error::last_os_error();
    libc::close(fd);
    if added {
        Ok(true)
    } else {
        Err(err)
    }
}

/// Process C: Landlock, seccomp, then back to `std`, which execs the command.
unsafe fn confine(raw: RawStrict) -> io::Result<()> {
    // Every signal at its default (std's exec resets SIGPIPE only): the reaper's SIGTERM
    // handling, and whatever the harness was started ignoring, stay behind.
    super::spawn::default_signals().map_err(io::Error::from_raw_os_error)?;
    // A descriptor inherited from the harness would read past Landlock (which checks paths only
    // when they are opened): none may survive the exec.
    super::spawn::cloexec_from(3);
    if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
        return Err(io::Error::last_os_error());
    }
    // The view's own filesystems (its root, /proc, /dev, /dev/shm, /tmp) exist only now (B
    // made them), so their rules are added here: the root may be listed (what it holds is the
    // allowlist; files in it are read only where a rule says so), /proc read, the private
    // /dev read and written (its few nodes; no new ones), /dev/shm and /tmp fully.
    for (path, access) in [
        (c"/", LANDLOCK_READ_DIR),
        (c"/proc", LANDLOCK_READ),
        (c"/dev", LANDLOCK_DEV),
        (c"/dev/shm", LANDLOCK_ALL_V3),
        (c"/tmp", LANDLOCK_ALL_V3),
    ] {
        if !add_path_rule(raw.ruleset_fd, path, access)? {
            return Err(io::Error::last_os_error());
        }
    }
    if libc::syscall(libc::SYS_landlock_restrict_self, raw.ruleset_fd, 0u32) != 0 {
        return Err(io::Error::last_os_error());
    }
    libc::close(raw.ruleset_fd);
    for (ptr, len) in [raw.deny, raw.nosys] {
        let prog = libc::sock_fprog {
            len: len as libc::c_ushort,
            filter: ptr as *mut libc::sock_filter,
        };
        if libc::prctl(
            libc::PR_SET_SECCOMP,
            libc::SECCOMP_MODE_FILTER as libc::c_ulong,
            &prog as *const libc::sock_fprog as libc::c_ulong,
            0,
            0,
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
