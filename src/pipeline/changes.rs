//! What a command changed in the workspace, seen from outside it: a cheap snapshot of the tree
//! (path, kind, size, mode, inode, mtime, ctime) taken just before an agent's command runs and
//! again just after, compared path by path. The pipeline adds what changed to the runtime-limit
//! tracker exactly as the file tools' own changes are added, so an agent cannot dodge
//! `max_files` / `max_changes` by writing with `sed -i`, `cp` or a script instead of
//! `write_file`; and it puts the list in the command's receipt (`data.changed`).
//!
//! This module owns the snapshot, its bounds and the comparison; it decides nothing about
//! limits (the [`crate::guard::limits`] tracker does) and runs nothing.
//!
//! **A change is seen even when mtime is forged.** The cheap key holds the inode and the
//! *ctime* as well as size and mtime. `touch -d 2001-01-01 f` or `utimensat` sets mtime (and
//! atime) to anything, but the kernel sets ctime to the current time on every write, rename,
//! chmod and utimes, and no unprivileged process can set it (only changing the system clock
//! can, which the sandbox does not allow). `sed -i` writes a new inode. Only entries whose key
//! differs are hashed (SHA-256, through [`Beneath`]: never through a link, never a FIFO).
//! The one window left is git's "racily clean" problem: a file written twice within one tick of
//! the filesystem's coarse clock, the same size both times, with mtime forged back, keeps its
//! key. So a snapshot also hashes the files whose ctime falls within [`RACY_MARGIN`] of the
//! moment it was taken, and such an entry is compared by content, not by key.
//!
//! **What counts.** Regular files, symlinks and special files, created, modified (content,
//! mode, type, or a new inode) or removed. A directory itself is not a file (as for
//! `write_file`, which creates parents freely); what it holds is. A file whose key changed but
//! whose content and mode are known to be the same (a `touch` of a file hashed before) is not a
//! change. Not walked: `.git` (git's own bookkeeping: a commit writes a dozen objects) and
//! Python's `__pycache__` / `.pytest_cache` (every test run rewrites them); see
//! [`SKIPPED_DIRS`].
//!
//! **Bounded.** The walk stops after [`SnapshotLimits::max_entries`] entries, in path order,
//! and does not list directories deeper than [`SnapshotLimits::max_depth`]. Past either bound
//! the comparison covers only what both snapshots saw (entries up to the first path one of them
//! did not reach), says so ([`Changes::complete`] is false, with the reason), and the counts are
//! lower bounds. With the default 50,000 entries a walk of a million-file workspace costs tens
//! of milliseconds, not seconds. Directories the harness cannot open (a non-root harness, a
//! `chmod 000` directory) are reported the same way.
//!
//! **Never through the agent's links.** Each directory is opened relative to its parent's
//! descriptor with `O_NOFOLLOW | O_DIRECTORY`, every entry is examined with
//! `fstatat(AT_SYMLINK_NOFOLLOW)`, and files are hashed through [`Beneath`]: a symlink is an
//! entry like any other, never followed, whatever it points to.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::sandbox::Beneath;
use crate::tools::WouldAffect;

/// Directory names never walked (at any depth): bookkeeping that tools rewrite on their own.
pub const SKIPPED_DIRS: &[&str] = &[".git", "__pycache__", ".pytest_cache"];

/// A file whose ctime is this close to a snapshot's start (or later) is hashed by that
/// snapshot: a second write within the same coarse clock tick could keep its key.
pub const RACY_MARGIN: Duration = Duration::from_millis(50);

/// Files larger than this are compared by key only (a new key is a change).
pub const HASH_LIMIT: u64 = 16 * 1024 * 1024;

/// How many changed paths a receipt lists (the counts cover them all).
pub const LISTED_PATHS: usize = 50;

/// How far a snapshot walks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotLimits {
    /// Entries recorded at most (in path order); the walk stops there.
    pub max_entries: usize,
    /// Directory levels below the root that are listed.
    pub max_depth: usize,
}

impl Default for SnapshotLimits {
    fn default() -> Self {
        SnapshotLimits {
            max_entries: 50_000,
            max_depth: 64,
        }
    }
}

/// Why a snapshot of the workspace could not be taken at all.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot open the workspace {} to see what the command changed: {source}; its changes are not counted toward the task's limits", path.display())]
    Root {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// What an entry is, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Symlink,
    Special,
}

impl Kind {
    #[allow(clippy::unnecessary_cast)] // mode_t is u16 on macOS
    fn of(mode: u32) -> Kind {
        match mode & libc::S_IFMT as u32 {
            m if m == libc::S_IFREG as u32 => Kind::File,
            m if m == libc::S_IFDIR as u32 => Kind::Dir,
            m if m == libc::S_IFLNK as u32 => Kind::Symlink,
            _ => Kind::Special,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "directory",
            Kind::Symlink => "symlink",
            Kind::Special => "special",
        }
    }
}

/// The cheap key of an entry: if none of it changed, neither did the entry (see the module
/// doc for why ctime makes this hold against forged mtimes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct StatKey {
    kind: Kind,
    size: u64,
    /// Permission bits.
    mode: u32,
    ino: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

#[derive(Debug, Clone)]
struct Entry {
    /// Relative to the root, `/`-separated, as the file system spells it.
    rel: Vec<u8>,
    key: StatKey,
    /// `sha256:<hex>`, for files hashed when the snapshot was taken (racy ones).
    hash: Option<String>,
}

/// The state of a workspace tree at one moment, within [`SnapshotLimits`].
#[derive(Debug, Clone)]
pub struct Snapshot {
    root: PathBuf,
    /// In path order, component by component (see [`path_order`]).
    entries: Vec<Entry>,
    /// The walk hit `max_entries`: nothing after the last entry was seen.
    truncated: bool,
    /// Directories not listed: too deep, or not openable.
    unlisted: Vec<(String, &'static str)>,
}

/// Compares two relative paths component by component (`a/x` before `a-b`), the order in
/// which a depth-first walk with sorted names visits them.
fn path_order(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    let map = |c: &u8| if *c == b'/' { 0 } else { *c };
    a.iter().map(map).cmp(b.iter().map(map))
}

fn nanos(sec: i64, nsec: i64) -> i128 {
    i128::from(sec) * 1_000_000_000 + i128::from(nsec)
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

/// `openat(dir, name)` of a directory, never through a link.
fn open_dir_at(dir: i32, name: &CStr) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
    loop {
        // SAFETY: a valid descriptor and C string.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
        if fd >= 0 {
            // SAFETY: a descriptor just returned by the kernel, owned by nobody else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
        }
        let e = last_err();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `fstatat(dir, name, AT_SYMLINK_NOFOLLOW)` as a key.
#[allow(clippy::unnecessary_cast)] // the field types differ between platforms
fn stat_at(dir: i32, name: &CStr) -> io::Result<StatKey> {
    // SAFETY: `st` is written by the kernel before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, C string and buffer.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(last_err());
    }
    let mode = st.st_mode as u32;
    Ok(StatKey {
        kind: Kind::of(mode),
        size: st.st_size.max(0) as u64,
        mode: mode & 0o7777,
        ino: st.st_ino as u64,
        mtime_ns: nanos(st.st_mtime as i64, st.st_mtime_nsec as i64),
        ctime_ns: nanos(st.st_ctime as i64, st.st_ctime_nsec as i64),
    })
}

/// The names in directory `dir` (not `.` and `..`), sorted.
fn sorted_names(dir: &OwnedFd) -> io::Result<Vec<CString>> {
    // fdopendir takes ownership: hand it a duplicate.
    // SAFETY: dup of a valid descriptor.
    let dup = unsafe { libc::fcntl(dir.as_raw_fd(), libc::F_DUPFD_CLOEXEC, 0) };
    if dup < 0 {
        return Err(last_err());
    }
    // SAFETY: `dup` is ours; fdopendir owns it from here (closed by closedir).
    let dirp = unsafe { libc::fdopendir(dup) };
    if dirp.is_null() {
        let e = last_err();
        // SAFETY: fdopendir failed, so `dup` is still ours to close.
        unsafe { libc::close(dup) };
        return Err(e);
    }
    let mut names = Vec::new();
    loop {
        // SAFETY: readdir on a valid DIR*; the name is copied before the next call.
        let ent = unsafe { libc::readdir(dirp) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is a NUL-terminated array inside the entry.
        let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) };
        let b = name.to_bytes();
        if b != b"." && b != b".." {
            names.push(name.to_owned());
        }
    }
    // SAFETY: closes the DIR* and the duplicate descriptor.
    unsafe { libc::closedir(dirp) };
    names.sort();
    Ok(names)
}

/// Walks one tree into a snapshot.
struct Walker<'a> {
    limits: SnapshotLimits,
    snap: &'a mut Snapshot,
    /// Files with a ctime at or after this are hashed (racy).
    racy_from_ns: i128,
    beneath: Option<&'a Beneath>,
}

impl Walker<'_> {
    /// Lists `dir` (at `prefix`, `depth` levels below the root); false once the walk is full.
    fn visit(&mut self, dir: &OwnedFd, prefix: &[u8], depth: usize) -> bool {
        let names = match sorted_names(dir) {
            Ok(n) => n,
            Err(_) => {
                self.snap.unlisted.push((display(prefix), "could not be listed"));
                return true;
            }
        };
        for name in names {
            if self.snap.entries.len() >= self.limits.max_entries {
                self.snap.truncated = true;
                return false;
            }
            let Ok(key) = stat_at(dir.as_raw_fd(), &name) else {
                continue; // gone meanwhile
            };
            let bytes = name.to_bytes();
            if key.kind == Kind::Dir && SKIPPED_DIRS.iter().any(|s| s.as_bytes() == bytes) {
                continue;
            }
            let mut rel = Vec::with_capacity(prefix.len() + 1 + bytes.len());
            if !prefix.is_empty() {
                rel.extend_from_slice(prefix);
                rel.push(b'/');
            }
            rel.extend_from_slice(bytes);
            let hash = match (key.kind, self.beneath) {
                (Kind::File, Some(b)) if key.ctime_ns >= self.racy_from_ns => {
                    b.hash(&String::from_utf8_lossy(&rel), HASH_LIMIT).ok()
                }
                _ => None,
            };
            // Only a directory's path is needed again (as its children's prefix).
            let dir_rel = (key.kind == Kind::Dir).then(|| rel.clone());
            self.snap.entries.push(Entry { rel, key, hash });
            let Some(rel) = dir_rel else {
                continue;
            };
            if depth >= self.limits.max_depth {
                self.snap.unlisted.push((display(&rel), "deeper than the walk goes"));
                continue;
            }
            match open_dir_at(dir.as_raw_fd(), &name) {
                Ok(sub) => {
                    if !self.visit(&sub, &rel, depth + 1) {
                        return false;
                    }
                }
                // Replaced by a link or a file since the stat: not followed, not listed.
                Err(e) if e.raw_os_error() == Some(libc::ELOOP) || e.raw_os_error() == Some(libc::ENOTDIR) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(_) => self.snap.unlisted.push((display(&rel), "could not be opened")),
            }
        }
        true
    }
}

fn display(rel: &[u8]) -> String {
    if rel.is_empty() {
        ".".into()
    } else {
        String::from_utf8_lossy(rel).into_owned()
    }
}

impl Snapshot {
    /// Walks the tree at `root` (never through a link) within `limits`.
    pub fn take(root: &Path, limits: SnapshotLimits) -> Result<Snapshot, SnapshotError> {
        let started = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| i128::try_from(d.as_nanos()).unwrap_or(i128::MAX))
            .unwrap_or(0);
        let racy_from_ns = started - i128::try_from(RACY_MARGIN.as_nanos()).unwrap_or(0);
        let root_err = |source: io::Error| SnapshotError::Root {
            path: root.to_path_buf(),
            source,
        };
        let c = CString::new(root.as_os_str().as_bytes())
            .map_err(|_| root_err(io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte")))?;
        let fd = open_dir_at(libc::AT_FDCWD, &c).map_err(root_err)?;
        // Hashing (racy files only) goes through the same no-link rules as every harness read.
        let beneath = Beneath::open(root).ok();
        let mut snap = Snapshot {
            root: root.to_path_buf(),
            entries: Vec::new(),
            truncated: false,
            unlisted: Vec::new(),
        };
        Walker {
            limits,
            snap: &mut snap,
            racy_from_ns,
            beneath: beneath.as_ref(),
        }
        .visit(&fd, b"", 0);
        Ok(snap)
    }

    /// Entries recorded.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// What changed from `self` (before) to `after` (the same root, later). Files whose key
    /// changed are hashed now.
    pub fn diff(&self, after: &Snapshot) -> Changes {
        let beneath = Beneath::open(&after.root).ok();
        let hash_now = |rel: &[u8]| {
            beneath
                .as_ref()
                .and_then(|b| b.hash(&String::from_utf8_lossy(rel), HASH_LIMIT).ok())
        };
        // Compare only up to the first path one of the walks did not reach.
        let frontier: Option<&[u8]> = [self, after]
            .iter()
            .filter(|s| s.truncated)
            .filter_map(|s| s.entries.last().map(|e| e.rel.as_slice()))
            .min_by(|a, b| path_order(a, b));
        let within = |rel: &[u8]| frontier.is_none_or(|f| path_order(rel, f).is_le());
        let mut out = Changes::default();
        let (mut i, mut j) = (0, 0);
        let (old, new) = (&self.entries, &after.entries);
        while i < old.len() || j < new.len() {
            let order = match (old.get(i), new.get(j)) {
                (Some(o), Some(n)) => path_order(&o.rel, &n.rel),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let change = match order {
                std::cmp::Ordering::Less => {
                    let o = &old[i];
                    i += 1;
                    (within(&o.rel) && o.key.kind != Kind::Dir).then(|| PathChange {
                        path: display(&o.rel),
                        change: ChangeKind::Removed,
                        kind: o.key.kind.name(),
                        size: None,
                        sha256: None,
                    })
                }
                std::cmp::Ordering::Greater => {
                    let n = &new[j];
                    j += 1;
                    (within(&n.rel) && n.key.kind != Kind::Dir).then(|| PathChange {
                        path: display(&n.rel),
                        change: ChangeKind::Created,
                        kind: n.key.kind.name(),
                        size: Some(n.key.size),
                        sha256: n
                            .hash
                            .clone()
                            .or_else(|| (n.key.kind == Kind::File).then(|| hash_now(&n.rel)).flatten()),
                    })
                }
                std::cmp::Ordering::Equal => {
                    let (o, n) = (&old[i], &new[j]);
                    i += 1;
                    j += 1;
                    if !within(&n.rel) {
                        None
                    } else {
                        compare(o, n, &hash_now)
                    }
                }
            };
            out.paths.extend(change);
        }
        let mut incomplete = Vec::new();
        for s in [self, after] {
            if s.truncated {
                incomplete.push(format!(
                    "the workspace holds more entries than the {} a snapshot records: only paths up to `{}` were compared",
                    s.entries.len(),
                    frontier.map(display).unwrap_or_default()
                ));
                break;
            }
        }
        let mut unlisted: Vec<_> = self.unlisted.iter().chain(&after.unlisted).cloned().collect();
        unlisted.sort();
        unlisted.dedup();
        for (dir, why) in unlisted.iter().take(5) {
            incomplete.push(format!("directory `{dir}` {why}: what it holds was not compared"));
        }
        if unlisted.len() > 5 {
            incomplete.push(format!("{} more directories were not compared", unlisted.len() - 5));
        }
        out.incomplete = incomplete;
        out
    }
}

/// The change of an entry present in both snapshots, if any.
fn compare(o: &Entry, n: &Entry, hash_now: &dyn Fn(&[u8]) -> Option<String>) -> Option<PathChange> {
    if o.key.kind == Kind::Dir && n.key.kind == Kind::Dir {
        return None;
    }
    let changed = |sha256: Option<String>| {
        Some(PathChange {
            path: display(&n.rel),
            change: ChangeKind::Modified,
            kind: n.key.kind.name(),
            size: Some(n.key.size),
            sha256,
        })
    };
    if o.key.kind != n.key.kind || o.key.mode != n.key.mode {
        let h = (n.key.kind == Kind::File).then(|| hash_now(&n.rel)).flatten();
        return changed(h);
    }
    // The same key: unchanged, unless the old entry was racy (then its content decides).
    if o.key == n.key && o.hash.is_none() {
        return None;
    }
    if n.key.kind != Kind::File {
        return changed(None);
    }
    let h = n.hash.clone().or_else(|| hash_now(&n.rel));
    match (&o.hash, &h) {
        // Touched, or rewritten with the same bytes: not a change.
        (Some(a), Some(b)) if a == b => None,
        _ => changed(h),
    }
}

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Modified,
    Removed,
}

impl ChangeKind {
    /// The `would_affect` action the limit tracker counts.
    pub fn action(self) -> &'static str {
        match self {
            ChangeKind::Created => "create",
            ChangeKind::Modified => "modify",
            ChangeKind::Removed => "delete",
        }
    }
}

/// One changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub path: String,
    pub change: ChangeKind,
    /// `file`, `symlink` or `special`.
    pub kind: &'static str,
    /// Its size now (not for a removed path).
    pub size: Option<u64>,
    /// `sha256:<hex>` of a file's content now, when it was hashed.
    pub sha256: Option<String>,
}

/// What changed between two snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// In path order.
    pub paths: Vec<PathChange>,
    /// Why the comparison did not cover the whole workspace (empty when it did); the counts
    /// are then lower bounds.
    pub incomplete: Vec<String>,
}

impl Changes {
    /// Whether the comparison covered the whole workspace.
    pub fn complete(&self) -> bool {
        self.incomplete.is_empty()
    }

    fn count(&self, kind: ChangeKind) -> usize {
        self.paths.iter().filter(|p| p.change == kind).count()
    }

    /// The changes as the limit tracker counts a file tool's: one `file` entry per path.
    pub fn affected(&self) -> Vec<WouldAffect> {
        self.paths
            .iter()
            .map(|p| WouldAffect {
                kind: "file".into(),
                target: p.path.clone(),
                action: p.change.action().into(),
            })
            .collect()
    }

    /// The receipt's `data.changed`: counts, and the first [`LISTED_PATHS`] paths.
    pub fn to_json(&self) -> serde_json::Value {
        let listed: Vec<_> = self
            .paths
            .iter()
            .take(LISTED_PATHS)
            .map(|p| {
                let mut v = serde_json::json!({ "path": p.path, "change": p.change.action(), "type": p.kind });
                if let Some(size) = p.size {
                    v["size"] = size.into();
                }
                if let Some(h) = &p.sha256 {
                    v["sha256"] = h.clone().into();
                }
                v
            })
            .collect();
        serde_json::json!({
            "created": self.count(ChangeKind::Created),
            "modified": self.count(ChangeKind::Modified),
            "removed": self.count(ChangeKind::Removed),
            "paths": listed,
            "unlisted": self.paths.len().saturating_sub(LISTED_PATHS),
            "complete": self.complete(),
        })
    }

    /// The warning for the receipt when the comparison was not complete.
    pub fn warning(&self) -> Option<String> {
        (!self.complete()).then(|| {
            format!(
                "what the command changed was only partly checked ({}); the changes counted toward the task's limits are a lower bound",
                self.incomplete.join("; ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::process::Command;

    fn snap(root: &Path) -> Snapshot {
        Snapshot::take(root, SnapshotLimits::default()).unwrap()
    }

    fn sh(root: &Path, script: &str) {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(root)
            .status()
            .unwrap();
        assert!(ok.success(), "{script}");
    }

    fn summary(c: &Changes) -> Vec<(String, &'static str)> {
        c.paths.iter().map(|p| (p.path.clone(), p.change.action())).collect()
    }

    /// Lets the coarse clock move past the racy margin, so keys alone decide.
    fn settle() {
        std::thread::sleep(RACY_MARGIN + Duration::from_millis(30));
    }

    #[test]
    fn created_modified_and_removed_files_are_seen_and_directories_are_not_files() {
        let ws = tempfile::tempdir().unwrap();
        fs::create_dir_all(ws.path().join("src/deep")).unwrap();
        fs::write(ws.path().join("src/a.py"), "a = 1\n").unwrap();
        fs::write(ws.path().join("gone.txt"), "x").unwrap();
        settle();
        let before = snap(ws.path());
        sh(
            ws.path(),
            "sed -i s/1/2/ src/a.py && rm gone.txt && mkdir empty && echo n > src/deep/new.txt",
        );
        let changes = before.diff(&snap(ws.path()));
        assert_eq!(
            summary(&changes),
            [
                ("gone.txt".to_string(), "delete"),
                ("src/a.py".to_string(), "modify"),
                ("src/deep/new.txt".to_string(), "create")
            ]
        );
        assert!(changes.complete());
        let new = &changes.paths[2];
        assert_eq!(new.size, Some(2));
        let expected = format!("sha256:{}", hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"n\n")));
        assert_eq!(new.sha256.as_deref(), Some(expected.as_str()));
        let json = changes.to_json();
        assert_eq!(json["created"], 1);
        assert_eq!(json["modified"], 1);
        assert_eq!(json["removed"], 1);
        assert_eq!(json["complete"], true);
    }

    #[test]
    fn an_mtime_forged_back_with_touch_does_not_hide_a_same_size_rewrite() {
        let ws = tempfile::tempdir().unwrap();
        fs::write(ws.path().join("f.txt"), "aaaa\n").unwrap();
        sh(ws.path(), "touch -d '2001-01-01 00:00:00' f.txt");
        settle();
        let before = snap(ws.path());
        // Same size, in place (same inode), mtime put back to what it was.
        sh(
            ws.path(),
            "printf 'bbbb\\n' 1<> f.txt && touch -d '2001-01-01 00:00:00' f.txt",
        );
        let changes = before.diff(&snap(ws.path()));
        assert_eq!(summary(&changes), [("f.txt".to_string(), "modify")]);
        assert_eq!(fs::read_to_string(ws.path().join("f.txt")).unwrap(), "bbbb\n");
    }

    #[test]
    fn a_racy_file_is_compared_by_content() {
        let ws = tempfile::tempdir().unwrap();
        fs::write(ws.path().join("r.txt"), "one\n").unwrap();
        // Taken at once: r.txt is racy, so hashed by the snapshot.
        let before = snap(ws.path());
        assert!(before.entries[0].hash.is_some());
        // Rewritten with the same bytes: not a change.
        fs::write(ws.path().join("r.txt"), "one\n").unwrap();
        assert!(before.diff(&snap(ws.path())).paths.is_empty());
        fs::write(ws.path().join("r.txt"), "two\n").unwrap();
        assert_eq!(
            summary(&before.diff(&snap(ws.path()))),
            [("r.txt".to_string(), "modify")]
        );
    }

    #[test]
    fn links_are_entries_never_followed_and_skipped_dirs_are_not_walked() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        settle();
        let before = snap(ws.path());
        std::os::unix::fs::symlink(outside.path(), ws.path().join("out")).unwrap();
        sh(
            ws.path(),
            "mkdir -p .git/objects __pycache__ && touch .git/objects/x __pycache__/m.pyc",
        );
        let after = snap(ws.path());
        let changes = before.diff(&after);
        assert_eq!(summary(&changes), [("out".to_string(), "create")]);
        assert_eq!(changes.paths[0].kind, "symlink");
        assert!(after.entries.iter().all(|e| !e.rel.starts_with(b"out/")));
    }

    #[test]
    fn past_the_entry_cap_only_what_both_walks_saw_is_compared_and_it_says_so() {
        let ws = tempfile::tempdir().unwrap();
        for i in 0..20 {
            fs::write(ws.path().join(format!("f{i:02}")), "x").unwrap();
        }
        settle();
        let limits = SnapshotLimits {
            max_entries: 10,
            max_depth: 64,
        };
        let before = Snapshot::take(ws.path(), limits).unwrap();
        sh(ws.path(), "echo y > f03 && echo y > f15 && echo n > a-new");
        let changes = before.diff(&Snapshot::take(ws.path(), limits).unwrap());
        // a-new and f03 are within the first 10 paths; f15 is past the cap.
        assert_eq!(
            summary(&changes),
            [("a-new".to_string(), "create"), ("f03".to_string(), "modify")]
        );
        assert!(!changes.complete());
        assert!(
            changes.warning().unwrap().contains("lower bound"),
            "{:?}",
            changes.warning()
        );
        assert_eq!(changes.to_json()["complete"], false);
    }

    #[test]
    fn directories_past_the_depth_cap_are_named() {
        let ws = tempfile::tempdir().unwrap();
        fs::create_dir_all(ws.path().join("a/b/c")).unwrap();
        let limits = SnapshotLimits {
            max_entries: 100,
            max_depth: 1,
        };
        let before = Snapshot::take(ws.path(), limits).unwrap();
        let changes = before.diff(&Snapshot::take(ws.path(), limits).unwrap());
        assert!(changes.paths.is_empty());
        assert!(changes.incomplete.iter().any(|w| w.contains("`a/b`")), "{changes:?}");
    }

    #[test]
    fn path_order_is_component_by_component() {
        assert!(path_order(b"a/x", b"a-b").is_lt());
        assert!(path_order(b"a", b"a/x").is_lt());
        assert!(path_order(b"a/x", b"b").is_lt());
    }

    #[test]
    fn a_missing_root_is_an_error_that_says_what_is_lost() {
        let err = Snapshot::take(Path::new("/nonexistent/medin-ws"), SnapshotLimits::default()).unwrap_err();
        assert!(err.to_string().contains("not counted"), "{err}");
    }
}
