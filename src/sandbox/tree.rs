//! Ending a command's process tree so that nothing outlives it: find what is left, SIGTERM it,
//! give it the grace period, SIGKILL what remains, and wait until it is gone.
//!
//! "What is left" is found four ways, because a process can leave its process group:
//!
//! - the descendants of the command's guardian (`guardian.rs`), when it has one: complete,
//!   since the guardian is a child subreaper and every orphan of the tree is reparented to it
//!   (found by walking parent links, read from `/proc/<pid>/stat`, up to the guardian);
//! - the process group (the command's shell leads it): everything that did not call `setsid`;
//! - an environment tag ([`MARKER_VAR`]) inherited by every descendant, so a `setsid`
//!   double-forked daemon is still found (one that clears its environment is not); the tag
//!   names the owning medin process (`<pid>.<start>.<pidns>-<n>`), so a later medin can end what a
//!   dead one left (`reclaim.rs`);
//! - the command's cgroup, when it has one: complete, whatever the process did.
//!
//! The group and the tag are what remains where there is no guardian (other platforms), or if
//! a command killed its guardian. The guardian then SIGKILLs whatever is still its child as the
//! last step (`guardian.rs`), which catches what a `/proc` snapshot raced past (a pid hopper).
//!
//! All of it reads `/proc`. To keep a short command cheap, only pids allocated since the
//! command's first process (its guardian's) are read (`/proc/loadavg` names the last pid
//! allocated, and every descendant's pid lies between the two) — one or two reads for `true`
//! instead of a walk over every process of the machine; when the range wrapped or is wide,
//! `/proc` is walked.
//!
//! A zombie is dead and counts as gone (it only waits for its parent, often init, to reap it).
//! The shell is kept unreaped while the tree is ended (by the caller, or by its guardian), so
//! the process-group id cannot be reused by an unrelated process while signals are sent to it.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

/// The environment variable that tags every process a sandboxed command starts.
pub const MARKER_VAR: &str = "MEDIN_SANDBOX_RUN";

/// How long SIGKILLed processes get to disappear.
pub(super) const GROUP_WAIT: Duration = Duration::from_secs(1);

/// Ranges of pids wider than this are not probed one by one; `/proc` is walked instead.
const MAX_PROBED_PIDS: i32 = 4096;

/// A unique tag put in the environment of a command (see the module documentation).
#[derive(Debug)]
pub(super) struct Marker(pub(super) String);

impl Marker {
    pub(super) fn new() -> Marker {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        // The owner tag makes the tag unique and names its medin process (`reclaim.rs`).
        Marker(format!("{}-{n}", super::reclaim::owner()))
    }

    fn needle(&self) -> Vec<u8> {
        format!("{MARKER_VAR}={}\0", self.0).into_bytes()
    }
}

/// One command's process tree, as far as it can be found.
pub(super) struct Tree<'a> {
    /// The process group the command's shell leads (its pid).
    pub(super) pgid: Pid,
    /// The environment tag, when escapees are to be searched for.
    pub(super) marker: Option<&'a Marker>,
    #[cfg(target_os = "linux")]
    pub(super) cgroup: Option<&'a super::cgroup::CommandCgroup>,
    /// The command's guardian, when it has one (`guardian.rs`): every process of the command
    /// is its descendant. The guardian itself is not part of the tree.
    pub(super) guardian: Option<Pid>,
    /// The command's first process has exited (its pidfd said so: its whole thread group is
    /// gone), so it need not be looked at.
    pub(super) leader_exited: bool,
    /// The kernel's fork counter when the command started ([`forks_so_far`]): when more forks
    /// than [`MAX_PROBED_PIDS`] happened since, pids may have wrapped and `/proc` is walked.
    pub(super) forks_at_start: Option<u64>,
}

impl Tree<'_> {
    /// SIGTERM to everything alive in the tree, up to `grace` for it to exit, then SIGKILL to
    /// whatever is left (and to what it forked meanwhile), until nothing is left. Returns at
    /// once when nothing is alive (the usual case: the command left nothing behind).
    pub(super) fn end(&self, grace: Duration) {
        let mut termed = self.live();
        if termed.is_empty() {
            // Nothing seen alive; the group and the cgroup still get their SIGKILL, which costs
            // nothing and reaches what a /proc snapshot can miss.
            let _ = killpg(self.pgid, Signal::SIGKILL);
            #[cfg(target_os = "linux")]
            if let Some(cg) = self.cgroup {
                cg.kill_members();
            }
            return;
        }
        let _ = killpg(self.pgid, Signal::SIGTERM);
        for &pid in &termed {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = after(Instant::now(), grace);
        let mut pause = Duration::from_millis(1);
        loop {
            let left = self.live();
            if left.is_empty() {
                return;
            }
            // Processes forked since the last look get their SIGTERM too (once each).
            for pid in left {
                if termed.insert(pid) {
                    let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
                }
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            thread::sleep(pause.min(deadline - now));
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        self.kill_now();
    }

    /// SIGKILL to the whole tree, repeated until nothing is left (bounded by [`GROUP_WAIT`]).
    pub(super) fn kill_now(&self) {
        let deadline = after(Instant::now(), GROUP_WAIT);
        loop {
            let _ = killpg(self.pgid, Signal::SIGKILL);
            #[cfg(target_os = "linux")]
            if let Some(cg) = self.cgroup {
                cg.kill_members();
            }
            let left = self.live();
            if left.is_empty() || Instant::now() >= deadline {
                return;
            }
            for pid in left {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Pids of the tree that are alive (not zombies), the caller excluded.
    fn live(&self) -> BTreeSet<i32> {
        let me = std::process::id() as i32;
        // The harness's own session: no process of the command can be in it (the command
        // starts in a session of its own, and a session can only be left for a new one), so
        // the harness's threads and other children need no environment read.
        // SAFETY: getsid(0) only reads the caller's session id.
        let my_session = unsafe { libc::getsid(0) };
        let needle = self.marker.map(Marker::needle);
        let guardian = self.guardian.map(Pid::as_raw);
        let mut found = BTreeSet::new();
        // (pid, parent) of every live process outside our session, for the guardian's tree.
        let mut parents: HashMap<i32, i32> = HashMap::new();
        // The guardian was created just before the first process: its pid starts the range.
        let first = guardian.unwrap_or(self.pgid.as_raw());
        for pid in candidates(first, self.forks_at_start) {
            if pid == me || Some(pid) == guardian || (self.leader_exited && pid == self.pgid.as_raw()) {
                continue;
            }
            let Some(stat) = read_stat(pid) else { continue };
            if !stat.alive || stat.session == my_session {
                continue;
            }
            if guardian.is_some() {
                parents.insert(pid, stat.ppid);
            }
            let tagged = || {
                needle
                    .as_ref()
                    .is_some_and(|n| read_environ(pid).windows(n.len()).any(|w| w == n.as_slice()))
            };
            if stat.pgrp == self.pgid.as_raw() || tagged() {
                found.insert(pid);
            }
        }
        if let Some(g) = guardian {
            found.extend(descendants(g, &parents));
        }
        #[cfg(target_os = "linux")]
        if let Some(cg) = self.cgroup {
            found.extend(
                cg.member_pids()
                    .into_iter()
                    .filter(|p| read_stat(*p).is_some_and(|s| s.alive)),
            );
        }
        found
    }
}

/// The pids in `parents` (pid → parent pid) whose chain of parents reaches `root`. A chain
/// only passes through live processes: a process that exits hands its children to the
/// nearest subreaper (the guardian) at once.
fn descendants(root: i32, parents: &HashMap<i32, i32>) -> Vec<i32> {
    let mut known: HashMap<i32, bool> = HashMap::new();
    let mut out = Vec::new();
    for &pid in parents.keys() {
        let mut chain = Vec::new();
        let mut cur = pid;
        let inside = loop {
            if let Some(&k) = known.get(&cur) {
                break k;
            }
            match parents.get(&cur) {
                Some(&parent) if parent == root => break true,
                // A cycle cannot happen (pids are unique), but a snapshot is not atomic.
                Some(&parent) if chain.len() < parents.len() => {
                    chain.push(cur);
                    cur = parent;
                }
                _ => break false,
            }
        };
        known.insert(cur, inside);
        for p in chain {
            known.insert(p, inside);
        }
        if inside {
            out.push(pid);
        }
    }
    out
}

/// What `/proc/<pid>/stat` says that matters here.
struct Stat {
    /// Not a zombie (Z) and not dead (X).
    alive: bool,
    ppid: i32,
    pgrp: i32,
    session: i32,
}

fn read_stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp ...`; comm may contain spaces and parentheses.
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?;
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    // A leader whose main thread exited shows `Z` while its other threads run on.
    let alive = match state {
        "X" => false,
        "Z" => std::fs::read_dir(format!("/proc/{pid}/task")).is_ok_and(|d| d.count() > 1),
        _ => true,
    };
    Some(Stat {
        alive,
        ppid,
        pgrp,
        session,
    })
}

/// The environment of process `pid`; read through one of its live threads when its leader
/// thread has exited (the leader's own file is then empty). Empty when unreadable.
fn read_environ(pid: i32) -> Vec<u8> {
    if let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) {
        if !env.is_empty() {
            return env;
        }
    }
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read(t.path().join("environ")).ok())
        .find(|env| !env.is_empty())
        .unwrap_or_default()
}

/// Pids that may belong to a tree whose first process is `first`: those allocated since, when
/// that range is known and narrow and fewer forks than [`MAX_PROBED_PIDS`] happened since the
/// start (so the pids cannot have wrapped around `pid_max` and come back near `first`), else
/// every pid in `/proc`.
fn candidates(first: i32, forks_at_start: Option<u64>) -> Vec<i32> {
    let forks_since = forks_at_start
        .zip(forks_so_far())
        .map(|(then, now)| now.saturating_sub(then));
    match last_pid() {
        Some(last) if range_is_complete(first, last, forks_since) => (first..=last).collect(),
        _ => all_pids(),
    }
}

/// Whether `first..=last` holds every pid allocated since `first` was: it is narrow, in order,
/// and too few forks happened since for the pids to have wrapped around `pid_max` (at least
/// 32768) and come back near `first`.
fn range_is_complete(first: i32, last: i32, forks_since: Option<u64>) -> bool {
    first <= last && last - first < MAX_PROBED_PIDS && forks_since.is_some_and(|n| n < MAX_PROBED_PIDS as u64)
}

/// Forks (processes and threads) since boot: the `processes` line of `/proc/stat`.
pub(super) fn forks_so_far() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("processes "))
        .and_then(|n| n.trim().parse().ok())
}

/// Every pid listed in `/proc` (empty where there is no `/proc`).
fn all_pids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse().ok()))
        .collect()
}

/// The last pid the kernel allocated (5th field of `/proc/loadavg`), when readable.
fn last_pid() -> Option<i32> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

/// Whether `/proc` shows a process of group `pgid` that is not a zombie. When `/proc` cannot
/// be read, assumes yes (callers' waits are bounded).
pub(crate) fn group_has_live_members(pgid: Pid) -> bool {
    if std::fs::metadata("/proc/self").is_err() {
        return true;
    }
    all_pids()
        .into_iter()
        .any(|pid| read_stat(pid).is_some_and(|s| s.alive && s.pgrp == pgid.as_raw()))
}

/// `start + d`, saturating (a huge timeout from an agent must not overflow `Instant`).
pub(super) fn after(start: Instant, d: Duration) -> Instant {
    start
        .checked_add(d)
        .or_else(|| start.checked_add(Duration::from_secs(100 * 365 * 24 * 3600)))
        .unwrap_or(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pid_range_is_trusted_only_when_it_cannot_have_wrapped() {
        assert!(range_is_complete(1000, 1003, Some(3)));
        // Wide, reversed (wrapped) or unknown: walk /proc.
        assert!(!range_is_complete(1000, 1000 + MAX_PROBED_PIDS, Some(3)));
        assert!(!range_is_complete(30000, 200, Some(3)));
        assert!(!range_is_complete(1000, 1003, None));
        // A full wrap that ended just above the start looks narrow; the fork count tells.
        assert!(!range_is_complete(17908, 18910, Some(40_000)));
    }

    #[test]
    fn the_fork_counter_is_read_and_grows() {
        let before = forks_so_far().expect("/proc/stat has a processes line");
        std::process::Command::new("true").status().unwrap();
        assert!(forks_so_far().unwrap() > before);
    }
}
