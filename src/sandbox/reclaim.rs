//! What a medin process leaves on the host, named so that a later medin process can tell a
//! dead owner's leftovers from a live one's, and takes back when it starts.
//!
//! The owner tag is `<pid>.<start>.<pidns>`: the pid and the start time (clock ticks since boot,
//! field 22 of `/proc/<pid>/stat`) of the medin process, and the inode of its PID namespace. An
//! owner is alive when a process with that pid exists, is not a zombie, and started at that
//! time, so a reused pid never passes for it. Only owners of the caller's own PID namespace are
//! judged at all: a medin in another container that shares the temp directory is left alone.
//! Named with it:
//!
//! - per-command cgroups, `medin-<owner>-<n>` (and `medin-probe-<owner>`), below the harness's
//!   own cgroup in the `pids` and memory hierarchies (`cgroup.rs`);
//! - private `TMPDIR`s, `$TMPDIR/medin-<owner>-<n>` (`process.rs`);
//! - the environment tag of every command and agent, `MEDIN_SANDBOX_RUN=<owner>-<n>` (`tree.rs`);
//! - workspace claims ([`claim_workspace`]): `$TMPDIR/medin-<owner>-claim-<n>`, a file naming a
//!   workspace in use, and `.<name>.medin-owner` next to that workspace, naming the owner.
//!
//! [`at_startup`] runs once per process, before its first command, agent or claim (the walk
//! over processes' environments on a thread of its own, not to delay that command). For every
//! item above whose owner is dead: processes carrying its tag get SIGKILL; its cgroups' members
//! get SIGKILL and the cgroups are removed; its temp directories and claim files are removed;
//! a claimed workspace whose owner file still names it is removed, and a note
//! (`<name>-reclaimed.txt`) says why — the attempt's logs (receipts, transcript) stay. Names
//! from before owners carried a start time (`medin-<pid>-<n>` and `medin-probe-<pid>` cgroups,
//! `medin-sbx-<pid>-…` and `medin-strict-probe-<pid>` temp directories, `<pid>-<n>-<hex>` tags)
//! are taken back when no process with that pid exists: a reused pid only delays it. Nothing
//! of a live owner is touched.
//!
//! It is bounded and cheap: one walk of `/proc` reading each process's environment, one listing of the temp directory and of each cgroup directory, and at
//! most [`MAX_ITEMS`] dead items per start (the rest waits for the next one); a large dead
//! workspace costs its deletion once. Only the current temp directory and the harness's own
//! cgroups are looked at: leftovers of a medin that ran with another `TMPDIR` or in another
//! cgroup (another systemd scope) are not found. Measured on the development machine (76
//! processes, nothing to take back): 0.35-0.6 ms for all of it, once per process; a whole
//! `medin exec -- true` went from 3.3 to 4.0 ms of CPU with this and its guardian. Linux only (elsewhere nothing is named with
//! a start time, and nothing is reclaimed).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

/// Dead items taken back per start at most.
pub(crate) const MAX_ITEMS: usize = 1000;

/// This process's owner tag, `<pid>.<start>.<pidns>` (zeros for what `/proc` cannot tell).
pub(crate) fn owner() -> &'static str {
    static OWNER: OnceLock<String> = OnceLock::new();
    OWNER.get_or_init(|| {
        let pid = std::process::id();
        let start = proc_state(pid).map_or(0, |(_, start)| start);
        format!("{pid}.{start}.{}", pid_namespace())
    })
}

/// The inode of this process's PID namespace (`/proc/self/ns/pid` reads `pid:[N]`), 0 when
/// unknown.
fn pid_namespace() -> u64 {
    static NS: OnceLock<u64> = OnceLock::new();
    *NS.get_or_init(|| {
        fs::read_link("/proc/self/ns/pid")
            .ok()
            .and_then(|l| {
                let l = l.to_string_lossy().into_owned();
                l.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
            })
            .unwrap_or(0)
    })
}

/// State letter and start time of process `pid`, from `/proc/<pid>/stat`.
fn proc_state(pid: u32) -> Option<(char, u64)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid ...`: comm may contain anything; starttime is field 22.
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((state, start))
}

/// Who owns an item, as its name says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Owner {
    /// `<pid>.<start>.<pidns>`.
    Tagged { pid: u32, start: u64, ns: u64 },
    /// An older name with a pid only.
    PidOnly(u32),
}

impl Owner {
    fn parse(tag: &str) -> Option<Owner> {
        let mut parts = tag.split('.');
        let owner = Owner::Tagged {
            pid: parts.next()?.parse().ok()?,
            start: parts.next()?.parse().ok()?,
            ns: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(owner)
    }

    /// Whether the owner may still be running: anything this process cannot judge (another
    /// PID namespace, no `/proc`) counts as alive.
    fn alive(self) -> bool {
        match self {
            Owner::Tagged { pid, start, ns } => {
                ns != pid_namespace()
                    || proc_state(pid).is_some_and(|(state, s)| s == start && state != 'Z' && state != 'X')
            }
            // Without /proc nothing can be known: assume alive.
            Owner::PidOnly(pid) => {
                !Path::new("/proc/self").exists()
                    || proc_state(pid).is_some_and(|(state, _)| state != 'Z' && state != 'X')
            }
        }
    }
}

/// The owner of a directory or file name medin creates, or `None` when `name` is not one.
fn owner_of_name(name: &str) -> Option<Owner> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let pid_only = |s: &str| digits(s).then(|| s.parse().ok().map(Owner::PidOnly)).flatten();
    if let Some(pid) = name.strip_prefix("medin-strict-probe-") {
        return pid_only(pid);
    }
    if let Some(rest) = name.strip_prefix("medin-sbx-") {
        return pid_only(rest.split('-').next()?);
    }
    let rest = name
        .strip_prefix("medin-probe-")
        .or_else(|| name.strip_prefix("medin-"))?;
    let mut parts = rest.splitn(2, '-');
    let first = parts.next()?;
    let tail = parts.next();
    if first.contains('.') {
        // `<owner>` or `<owner>-<n>` or `<owner>-claim-<n>`.
        let owner = Owner::parse(first)?;
        let ok = match tail {
            None => true,
            Some(t) => digits(t) || t.strip_prefix("claim-").is_some_and(digits),
        };
        return ok.then_some(owner);
    }
    // Older cgroups: `medin-<pid>-<n>`, `medin-probe-<pid>`.
    if tail.is_none_or(digits) {
        pid_only(first)
    } else {
        None
    }
}

/// Whether `name` is a name medin gives (`medin-<owner>-<n>`: a container, a cgroup, a temp
/// directory) whose owner is dead. A name of a live owner, of another PID namespace, or none
/// of medin's, is not.
pub(super) fn owner_of_name_is_dead(name: &str) -> bool {
    owner_of_name(name).is_some_and(|owner| !owner.alive())
}

/// The owner named by an environment tag's value (`<owner>-<n>`, or older `<pid>-<n>-<hex>`).
fn owner_of_tag(value: &str) -> Option<Owner> {
    let first = value.split('-').next()?;
    if first.contains('.') {
        return Owner::parse(first);
    }
    first.parse().ok().map(Owner::PidOnly)
}

/// Takes back what dead medin processes left, once per process (see the module documentation):
/// cgroups, temp directories and workspaces before returning; the walk over every process's
/// environment for tagged leftovers (about a millisecond, and needed only if a guardian was
/// itself killed) on a thread of its own, so it does not delay the first command (a process
/// that ends before it is done leaves the rest to the next one).
pub(crate) fn at_startup() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if !cfg!(target_os = "linux") || !Path::new("/proc/self/stat").exists() {
            return;
        }
        let _ = std::thread::Builder::new()
            .name("medin-reclaim".into())
            .spawn(|| kill_tagged(&mut { MAX_ITEMS }));
        reclaim_files(&mut { MAX_ITEMS });
    });
}

/// Cgroups (their members killed first), temp directories and workspaces of dead owners.
fn reclaim_files(budget: &mut usize) {
    #[cfg(target_os = "linux")]
    super::cgroup::reclaim(budget, |name| owner_of_name(name).is_some_and(|o| !o.alive()));
    reclaim_temp(&std::env::temp_dir(), budget);
}

/// SIGKILL to every process whose environment tag names a dead owner (a few rounds, for what
/// such a process forks meanwhile). Returns how many were found.
fn kill_tagged(budget: &mut usize) -> usize {
    let needle = format!("{}=", super::MARKER_VAR);
    let me = std::process::id();
    let mut killed = std::collections::BTreeSet::new();
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        let mut found = false;
        let Ok(dir) = fs::read_dir("/proc") else { break };
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == me || *budget == 0 {
                continue;
            }
            let Ok(env) = fs::read(format!("/proc/{pid}/environ")) else {
                continue;
            };
            let Some(value) = env
                .split(|b| *b == 0)
                .find_map(|kv| kv.strip_prefix(needle.as_bytes()))
                .and_then(|v| std::str::from_utf8(v).ok())
            else {
                continue;
            };
            if owner_of_tag(value).is_some_and(|o| !o.alive()) {
                found = true;
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid as i32),
                    nix::sys::signal::Signal::SIGKILL,
                );
                if killed.insert(pid) {
                    *budget -= 1;
                }
            }
        }
        if !found || Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    killed.len()
}

/// Removes dead owners' temp directories and, through their claim files, their workspaces.
/// Returns (directories, workspaces).
fn reclaim_temp(tmp: &Path, budget: &mut usize) -> (usize, usize) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = fs::read_dir(tmp) else {
        return (0, 0);
    };
    // SAFETY: geteuid cannot fail and touches no memory.
    let me = unsafe { libc::geteuid() };
    let (mut dirs, mut workspaces) = (0, 0);
    let mut claims = Vec::new();
    for e in entries.flatten() {
        if *budget == 0 {
            break;
        }
        let name = e.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(owner) = owner_of_name(name) else { continue };
        let Ok(meta) = fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.uid() != me || owner.alive() {
            continue;
        }
        if meta.is_dir() {
            if super::beneath::remove_tree(&e.path()).is_ok() {
                dirs += 1;
                *budget -= 1;
            }
        } else if meta.is_file() && name.contains("-claim-") {
            claims.push((e.path(), owner));
        }
    }
    for (file, owner) in claims {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        if let Ok(text) = fs::read_to_string(&file) {
            if release_dead_workspace(Path::new(text.trim_end_matches('\n')), owner) {
                workspaces += 1;
            }
        }
        let _ = fs::remove_file(&file);
    }
    (dirs, workspaces)
}

/// Removes `workspace` if its owner file still names `owner` (a later attempt that reuses the
/// path writes its own), and leaves a note. Returns whether it was removed.
fn release_dead_workspace(workspace: &Path, owner: Owner) -> bool {
    let Owner::Tagged { pid, start, ns } = owner else {
        return false;
    };
    // A claim is a file in a shared directory that a command at `process` level can write:
    // only what has the shape of an attempt's workspace (`…/attempt-N/workspace`, reached
    // through no symlink) is ever removed on its word.
    if !is_attempt_workspace(workspace) {
        return false;
    }
    let Some(marker) = owner_file(workspace) else {
        return false;
    };
    let expected = format!("{pid}.{start}.{ns}");
    if fs::read_to_string(&marker)
        .map(|t| t.trim().to_string())
        .ok()
        .as_deref()
        != Some(expected.as_str())
    {
        return false;
    }
    let removed = match fs::symlink_metadata(workspace) {
        Ok(m) if m.is_dir() => super::beneath::remove_tree(workspace).is_ok(),
        Ok(_) => false,
        Err(_) => true,
    };
    let _ = fs::remove_file(&marker);
    if removed {
        if let (Some(parent), Some(name)) = (workspace.parent(), workspace.file_name()) {
            let note = parent.join(format!("{}-reclaimed.txt", name.to_string_lossy()));
            let _ = fs::write(
                note,
                format!(
                    "medin process {pid} ended before this attempt did (it was killed, or crashed); \
                     medin process {} removed the attempt's workspace {} when it started, at {}. \
                     What the attempt logged before that (receipts.jsonl, transcript.jsonl) is kept.\n",
                    std::process::id(),
                    workspace.display(),
                    chrono::Utc::now().to_rfc3339()
                ),
            );
        }
    }
    removed
}

/// Whether `path` is an absolute `…/attempt-<n>/workspace` whose every component is a real
/// directory (no symlink on the way).
fn is_attempt_workspace(path: &Path) -> bool {
    let Some(parent) = path.parent() else { return false };
    let named = path.file_name().is_some_and(|n| n == "workspace")
        && parent
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("attempt-"))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    named
        && path.is_absolute()
        && path.canonicalize().is_ok_and(|c| c == path)
        && fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// `<parent>/.<name>.medin-owner` for workspace `<parent>/<name>`.
fn owner_file(workspace: &Path) -> Option<PathBuf> {
    let parent = workspace.parent()?;
    let name = workspace.file_name()?;
    Some(parent.join(format!(".{}.medin-owner", name.to_string_lossy())))
}

/// A workspace marked as in use by this process (see [`claim_workspace`]); dropping it (the
/// attempt is over, however it ended) releases the mark and keeps the workspace.
#[derive(Debug)]
pub struct WorkspaceClaim {
    claim: PathBuf,
    owner_file: PathBuf,
}

impl Drop for WorkspaceClaim {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.owner_file);
        let _ = fs::remove_file(&self.claim);
    }
}

/// Marks `workspace` (which may not exist yet) as in use by this medin process, so that if
/// the process dies before the claim is dropped, a later medin process removes the workspace
/// (see the module documentation). The attempt's other files stay.
pub fn claim_workspace(workspace: &Path) -> io::Result<WorkspaceClaim> {
    at_startup();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let workspace = std::path::absolute(workspace)?;
    let owner_file = owner_file(&workspace).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} has no parent directory to mark", workspace.display()),
        )
    })?;
    if let Some(parent) = owner_file.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(&owner_file, owner())?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let claim = std::env::temp_dir().join(format!("medin-{}-claim-{n}", owner()));
    let mut text = workspace.as_os_str().as_encoded_bytes().to_vec();
    text.push(b'\n');
    if let Err(e) = fs::write(&claim, text) {
        let _ = fs::remove_file(&owner_file);
        return Err(e);
    }
    Ok(WorkspaceClaim { claim, owner_file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_parsed_into_owners() {
        let t = |pid, start| Some(Owner::Tagged { pid, start, ns: 9 });
        assert_eq!(owner_of_name("medin-12.345.9-7"), t(12, 345));
        assert_eq!(owner_of_name("medin-12.345.9-claim-7"), t(12, 345));
        assert_eq!(owner_of_name("medin-probe-12.345.9"), t(12, 345));
        assert_eq!(owner_of_name("medin-12-7"), Some(Owner::PidOnly(12)));
        assert_eq!(owner_of_name("medin-probe-12"), Some(Owner::PidOnly(12)));
        assert_eq!(owner_of_name("medin-sbx-12-3-1f2e"), Some(Owner::PidOnly(12)));
        assert_eq!(owner_of_name("medin-strict-probe-12"), Some(Owner::PidOnly(12)));
        for other in [
            "medin",
            "medin-",
            "medin-suite.schema.json",
            "medin-12.x.9-1",
            "medin-12.3.9-x",
            "medin-12.345-7",
            "medin-12.3.4.5-1",
            "medin-12-3-4",
            "medin-a-1",
            "medin-12.345.9-claim-",
            "tmp-medin-12-1",
        ] {
            assert_eq!(owner_of_name(other), None, "{other}");
        }
        assert_eq!(owner_of_tag("12.345.9-7"), t(12, 345));
        assert_eq!(owner_of_tag("12-7-1f2e3d"), Some(Owner::PidOnly(12)));
        assert_eq!(owner_of_tag("x-1"), None);
    }

    #[test]
    fn this_process_is_alive_and_a_wrong_start_time_is_not() {
        let tag = owner();
        let owner = Owner::parse(tag).unwrap();
        assert!(owner.alive());
        let Owner::Tagged { pid, start, ns } = owner else {
            unreachable!()
        };
        assert!(!Owner::Tagged {
            pid,
            start: start + 1,
            ns
        }
        .alive());
        assert!(Owner::PidOnly(pid).alive());
        // An owner in another PID namespace cannot be judged from here: left alone.
        let elsewhere = Owner::Tagged {
            pid: 4_194_305,
            start: 1,
            ns: ns + 1,
        };
        assert!(elsewhere.alive());
    }

    #[test]
    fn a_dead_owners_claim_removes_the_workspace_and_a_live_ones_does_not() {
        let tmp = tempfile::tempdir().unwrap();
        let attempt = tmp.path().join("attempt-1");
        let ws = attempt.join("workspace");
        fs::create_dir_all(ws.join("sub")).unwrap();
        fs::write(ws.join("sub/f"), "x").unwrap();
        fs::write(attempt.join("receipts.jsonl"), "{}\n").unwrap();
        // A live owner (this process): kept.
        let claims = tmp.path().join("claims");
        fs::create_dir(&claims).unwrap();
        fs::write(owner_file(&ws).unwrap(), owner()).unwrap();
        fs::write(
            claims.join(format!("medin-{}-claim-1", owner())),
            format!("{}\n", ws.display()),
        )
        .unwrap();
        let mut budget = MAX_ITEMS;
        assert_eq!(reclaim_temp(&claims, &mut budget), (0, 0));
        assert!(ws.join("sub/f").exists());
        // A dead owner whose owner file names it: removed, the logs stay, a note says why.
        let dead = format!("4194305.1.{}", pid_namespace());
        let dead = dead.as_str();
        fs::write(owner_file(&ws).unwrap(), dead).unwrap();
        fs::write(
            claims.join(format!("medin-{dead}-claim-1")),
            format!("{}\n", ws.display()),
        )
        .unwrap();
        assert_eq!(reclaim_temp(&claims, &mut budget), (0, 1));
        assert!(!ws.exists());
        assert!(attempt.join("receipts.jsonl").exists());
        assert!(attempt.join("workspace-reclaimed.txt").exists());
        assert!(!claims.join(format!("medin-{dead}-claim-1")).exists());
        // A forged claim and owner file for a directory that is not an attempt's workspace (a
        // command at `process` level can write both): left alone.
        let victim = tmp.path().join("precious");
        fs::create_dir(&victim).unwrap();
        fs::write(victim.join("data"), "keep").unwrap();
        fs::write(owner_file(&victim).unwrap(), dead).unwrap();
        fs::write(
            claims.join(format!("medin-{dead}-claim-2")),
            format!("{}\n", victim.display()),
        )
        .unwrap();
        assert_eq!(reclaim_temp(&claims, &mut budget), (0, 0));
        assert!(victim.join("data").exists());
        // A dead owner's claim on a path another process has since taken: kept.
        fs::create_dir_all(&ws).unwrap();
        fs::write(owner_file(&ws).unwrap(), owner()).unwrap();
        fs::write(
            claims.join(format!("medin-{dead}-claim-2")),
            format!("{}\n", ws.display()),
        )
        .unwrap();
        assert_eq!(reclaim_temp(&claims, &mut budget), (0, 0));
        assert!(ws.exists());
    }
}
