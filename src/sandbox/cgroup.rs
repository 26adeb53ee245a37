//! Per-command cgroups (Linux): a `pids` limit that holds for root (RLIMIT_NPROC does not) and a
//! memory limit with an OOM-kill counter, so a hit can be named; membership lets the harness
//! find and kill every process of a command, even one that left its session and cleared its
//! environment. On by default at `strict`, opt-in at `process`, where the guardian contains
//! the tree without one (see the module documentation of `super` for the measured costs).
//!
//! Layouts: cgroup v1 (`/sys/fs/cgroup/pids`, `/sys/fs/cgroup/memory`, each below the cgroup
//! the harness itself is in), or v2 when the controllers are enabled in the harness cgroup's
//! `cgroup.subtree_control`. A command gets `medin-<owner>-<n>` directories (the owner is the
//! medin process, `<pid>.<start>.<pidns>`: `reclaim.rs`) that are removed when the command is
//! over; if the harness dies first, the next medin process removes them ([`reclaim`]). The
//! child joins them itself, before it can fork, by writing `0` to the `cgroup.procs`
//! descriptors opened here (so no fork escapes the limit).

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::thread;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;

/// Where this process's cgroups are, per controller.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layout {
    /// Directory whose children get a `pids.max` (v1 pids hierarchy or v2).
    pub pids: Option<(PathBuf, Version)>,
    /// Directory whose children get a memory limit.
    pub memory: Option<(PathBuf, Version)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Version {
    V1,
    V2,
}

impl Layout {
    /// A short description for `medin doctor`.
    pub(crate) fn describe(&self) -> String {
        let one = |x: &Option<(PathBuf, Version)>| match x {
            Some((p, Version::V1)) => format!("v1 at {}", p.display()),
            Some((p, Version::V2)) => format!("v2 at {}", p.display()),
            None => "unavailable".to_string(),
        };
        format!("pids {}, memory {}", one(&self.pids), one(&self.memory))
    }
}

/// The layout, probed once: a controller counts only if a child cgroup can be created below
/// the harness's own cgroup and has the limit file.
pub(crate) fn layout() -> &'static Layout {
    static LAYOUT: OnceLock<Layout> = OnceLock::new();
    LAYOUT.get_or_init(probe_layout)
}

/// The directories below which this process would create its cgroups (its own cgroup in the
/// v1 `pids` and `memory` hierarchies and in v2), without the probe of [`layout`] (which
/// creates directories): what [`reclaim`] looks through.
fn bases() -> Vec<PathBuf> {
    let Ok(self_cg) = fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in self_cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        let rel = path.trim_start_matches('/');
        if ctrls.is_empty() {
            for root in ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"] {
                if Path::new(root).join("cgroup.controllers").exists() {
                    out.push(Path::new(root).join(rel));
                    break;
                }
            }
        }
        for c in ctrls.split(',').filter(|c| *c == "pids" || *c == "memory") {
            out.push(Path::new("/sys/fs/cgroup").join(c).join(rel));
        }
    }
    out.sort();
    out.dedup();
    out
}

fn probe_layout() -> Layout {
    let Ok(self_cg) = fs::read_to_string("/proc/self/cgroup") else {
        return Layout::default();
    };
    let mut layout = Layout::default();
    let mut v2_path = None;
    for line in self_cg.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, ctrls, path) = match (parts.next(), parts.next(), parts.next()) {
            (Some(a), Some(b), Some(c)) => (a, b, c),
            _ => continue,
        };
        let rel = path.trim_start_matches('/');
        if ctrls.is_empty() {
            v2_path = Some(rel.to_string());
            continue;
        }
        for c in ctrls.split(',') {
            let base = Path::new("/sys/fs/cgroup").join(c).join(rel);
            if c == "pids" && usable(&base, "pids.max") {
                layout.pids = Some((base.clone(), Version::V1));
            }
            if c == "memory" && usable(&base, "memory.limit_in_bytes") {
                layout.memory = Some((base, Version::V1));
            }
        }
    }
    if let Some(rel) = v2_path {
        let root = if Path::new("/sys/fs/cgroup/unified/cgroup.controllers").exists() {
            PathBuf::from("/sys/fs/cgroup/unified")
        } else {
            PathBuf::from("/sys/fs/cgroup")
        };
        let base = root.join(rel);
        let enabled = fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
        let has = |c: &str| enabled.split_whitespace().any(|w| w == c);
        if layout.pids.is_none() && has("pids") && usable(&base, "pids.max") {
            layout.pids = Some((base.clone(), Version::V2));
        }
        if layout.memory.is_none() && has("memory") && usable(&base, "memory.max") {
            layout.memory = Some((base, Version::V2));
        }
    }
    layout
}

/// Whether a child cgroup of `base` can be made and has `file`.
fn usable(base: &Path, file: &str) -> bool {
    let probe = base.join(format!("medin-probe-{}", super::reclaim::owner()));
    if fs::create_dir(&probe).is_err() {
        return false;
    }
    let ok = probe.join(file).exists();
    let _ = fs::remove_dir(&probe);
    ok
}

/// One command's cgroup directories and the open `cgroup.procs` descriptors the child writes
/// `0` to.
#[derive(Debug)]
pub(crate) struct CommandCgroup {
    pids: Option<(PathBuf, Version)>,
    memory: Option<(PathBuf, Version)>,
    join_fds: Vec<OwnedFd>,
}

impl CommandCgroup {
    /// Creates the directories for the limits that are set and available. `Ok(None)` when
    /// neither applies.
    pub(crate) fn create(processes: Option<u64>, memory: Option<u64>) -> io::Result<Option<CommandCgroup>> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let l = layout();
        let name = format!(
            "medin-{}-{}",
            super::reclaim::owner(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let mut cg = CommandCgroup {
            pids: None,
            memory: None,
            join_fds: Vec::new(),
        };
        if let (Some(max), Some((base, v))) = (processes, &l.pids) {
            let dir = base.join(&name);
            fs::create_dir(&dir)?;
            cg.pids = Some((dir.clone(), *v));
            fs::write(dir.join("pids.max"), max.to_string())?;
            cg.join_fds.push(open_procs(&dir)?);
        }
        if let (Some(bytes), Some((base, v))) = (memory, &l.memory) {
            let same = cg
                .pids
                .as_ref()
                .is_some_and(|(p, _)| p.parent() == Some(base.as_path()));
            let dir = base.join(&name);
            if !same {
                fs::create_dir(&dir)?;
            }
            cg.memory = Some((dir.clone(), *v));
            match v {
                Version::V1 => {
                    fs::write(dir.join("memory.limit_in_bytes"), bytes.to_string())?;
                    // Without swap accounting this file is missing; the plain limit still holds.
                    let _ = fs::write(dir.join("memory.memsw.limit_in_bytes"), bytes.to_string());
                }
                Version::V2 => {
                    fs::write(dir.join("memory.max"), bytes.to_string())?;
                    let _ = fs::write(dir.join("memory.swap.max"), "0");
                }
            }
            if !same {
                cg.join_fds.push(open_procs(&dir)?);
            }
        }
        if cg.pids.is_none() && cg.memory.is_none() {
            return Ok(None);
        }
        Ok(Some(cg))
    }

    /// Whether this cgroup limits the process count.
    pub(crate) fn limits_processes(&self) -> bool {
        self.pids.is_some()
    }

    /// Whether this cgroup limits memory.
    pub(crate) fn limits_memory(&self) -> bool {
        self.memory.is_some()
    }

    /// Raw descriptors for the child (valid as long as `self` lives).
    pub(crate) fn join_fds(&self) -> Vec<i32> {
        self.join_fds.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// Whether the process limit was hit (`pids.events`: `max N`, N > 0).
    pub(crate) fn pids_hit(&self) -> bool {
        let Some((dir, _)) = &self.pids else { return false };
        counter(&dir.join("pids.events"), "max") > 0
    }

    /// Whether a process was OOM-killed because of the memory limit.
    pub(crate) fn oom_killed(&self) -> bool {
        match &self.memory {
            Some((dir, Version::V1)) => counter(&dir.join("memory.oom_control"), "oom_kill") > 0,
            Some((dir, Version::V2)) => counter(&dir.join("memory.events"), "oom_kill") > 0,
            None => false,
        }
    }

    /// Peak process count, when the kernel keeps it.
    pub(crate) fn peak(&self) -> Option<u64> {
        let (dir, _) = self.pids.as_ref()?;
        fs::read_to_string(dir.join("pids.peak")).ok()?.trim().parse().ok()
    }

    /// Every member's pid (zombies included, in cgroup v2).
    pub(crate) fn member_pids(&self) -> Vec<i32> {
        self.dirs().flat_map(members).collect()
    }

    /// One SIGKILL to every member.
    pub(crate) fn kill_members(&self) {
        for pid in self.member_pids() {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }

    fn dirs(&self) -> impl Iterator<Item = &Path> {
        self.pids.iter().chain(self.memory.iter()).map(|(p, _)| p.as_path())
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        self.join_fds.clear();
        let dirs: Vec<PathBuf> = self.dirs().map(Path::to_path_buf).collect();
        for d in dirs {
            // A member that is still exiting keeps the directory busy for a moment; one that
            // cannot be removed is taken back by a later medin process (`reclaim.rs`).
            remove_killing_members(&d);
        }
    }
}

/// Removes the cgroups `dead(name)` says belong to a dead medin process, below each directory
/// of the layout, after SIGKILLing their members (`reclaim.rs`). Returns how many went.
pub(crate) fn reclaim(budget: &mut usize, dead: impl Fn(&str) -> bool) -> usize {
    let mut removed = 0;
    for base in bases() {
        let Ok(entries) = fs::read_dir(&base) else { continue };
        for e in entries.flatten() {
            if *budget == 0 {
                return removed;
            }
            let name = e.file_name();
            if !name.to_str().is_some_and(&dead) || !e.path().is_dir() {
                continue;
            }
            *budget -= 1;
            if remove_killing_members(&e.path()) {
                removed += 1;
            }
        }
    }
    removed
}

/// SIGKILL to every member of `dir` until it can be removed (up to about a second).
fn remove_killing_members(dir: &Path) -> bool {
    for _ in 0..500 {
        match fs::remove_dir(dir) {
            Ok(()) => return true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return true,
            Err(_) => {
                for pid in members(dir) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
                }
                thread::sleep(Duration::from_millis(2));
            }
        }
    }
    false
}

fn open_procs(dir: &Path) -> io::Result<OwnedFd> {
    let f = fs::OpenOptions::new().write(true).open(dir.join("cgroup.procs"))?;
    Ok(OwnedFd::from(f))
}

fn members(dir: &Path) -> Vec<i32> {
    fs::read_to_string(dir.join("cgroup.procs"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

/// The number after `key` in a `key value` lines file (0 when absent).
fn counter(file: &Path, key: &str) -> u64 {
    fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .find_map(|l| {
            let mut it = l.split_whitespace();
            (it.next() == Some(key)).then(|| it.next().and_then(|v| v.parse().ok()).unwrap_or(0))
        })
        .unwrap_or(0)
}
