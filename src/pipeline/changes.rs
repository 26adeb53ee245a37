//! What a command changed in the workspace, seen from outside it: a cheap snapshot of the tree
//! (path, kind, size, mode, inode, mtime, ctime) taken before an agent's command runs and again
//! just after, compared path by path. The pipeline adds what changed to the runtime-limit
//! tracker exactly as the file tools' own changes are added, so an agent cannot dodge
//! `max_files` / `max_changes` by writing with `sed -i`, `cp` or a script instead of
//! `write_file`; and it puts the list in the command's receipt (`data.changed`).
//!
//! This module owns the snapshot, its bounds, the comparison and the [`Baseline`] (which
//! snapshot a command starts from); it decides nothing about limits (the
//! [`crate::guard::limits`] tracker does) and runs nothing.
//!
//! **One walk per command.** The snapshot taken after a command is kept ([`Baseline`]) as the
//! next command's starting point as long as nothing else passes the pipeline in between,
//! which the attempt's validation-cache epoch tells (every mutating action moves it). A
//! file tool's write in between moves it, so the next command walks afresh and that write is
//! counted once, by the file tool. What changes between two commands with no action in
//! between — a process the agent left running, or the agent's own process writing into the
//! workspace — is counted at the next command (`data.changed.since: previous_command`):
//! before the baseline, such writes were counted by no one. (After a file tool's write, what
//! a background process wrote before the next command starts is still not counted.)
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
//! descriptor with `O_NOFOLLOW | O_DIRECTORY`, every other entry is examined with
//! `fstatat(AT_SYMLINK_NOFOLLOW)`, and files are hashed through [`Beneath`]: a symlink is an
//! entry like any other, never followed, whatever it points to. A directory the listing
//! names (`d_type`) is opened that way without a stat first (its own key is never compared);
//! if it has become a link or a file, the open fails and it is stat'ed like any other entry.
//!
//! **Cost.** The walk is one `fstatat` per entry and one `getdents` per directory, relative
//! to the parent's descriptor; names and paths go into two buffers for the whole walk, not an
//! allocation per entry. On a 1,000-file workspace the system calls are most of the time
//! (`benches/changes.rs` has the figures).

use std::cell::OnceCell;
use std::ffi::{CStr, CString};
use std::io;
use std::ops::Range;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::{Mutex, PoisonError};
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
    /// Where its path lies in [`Snapshot::paths`]: relative to the root, `/`-separated, as the
    /// file system spells it.
    rel: Range<usize>,
    key: StatKey,
    /// `sha256:<hex>`, for files hashed when the snapshot was taken (racy ones).
    hash: Option<String>,
}

/// The state of a workspace tree at one moment, within [`SnapshotLimits`].
#[derive(Debug, Clone)]
pub struct Snapshot {
    root: PathBuf,
    limits: SnapshotLimits,
    /// Every entry's relative path, one after the other (one allocation, not one per entry).
    paths: Vec<u8>,
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
    if a == b {
        return std::cmp::Ordering::Equal;
    }
    let map = |c: &u8| if *c == b'/' { 0 } else { *c };
    a.iter().map(map).cmp(b.iter().map(map))
}

fn nanos(sec: i64, nsec: i64) -> i128 {
    i128::from(sec) * 1_000_000_000 + i128::from(nsec)
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

/// An open directory stream, opened relative to its parent's descriptor and never through a
/// link; closed when dropped.
struct DirStream(NonNull<libc::DIR>);

impl DirStream {
    /// `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)`, read as a stream (the stream owns the
    /// descriptor: no duplicate per directory).
    fn open_at(dir: i32, name: &CStr) -> io::Result<DirStream> {
        let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NONBLOCK;
        let fd = loop {
            // SAFETY: a valid descriptor and C string.
            let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
            if fd >= 0 {
                break fd;
            }
            let e = last_err();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        };
        // SAFETY: `fd` is ours; on success fdopendir owns it (closed by closedir).
        match NonNull::new(unsafe { libc::fdopendir(fd) }) {
            Some(dirp) => Ok(DirStream(dirp)),
            None => {
                let e = last_err();
                // SAFETY: fdopendir failed, so `fd` is still ours to close.
                unsafe { libc::close(fd) };
                Err(e)
            }
        }
    }

    /// The stream's descriptor, for `fstatat` / `openat` relative to it.
    fn fd(&self) -> i32 {
        // SAFETY: a valid DIR*.
        unsafe { libc::dirfd(self.0.as_ptr()) }
    }
}

impl Drop for DirStream {
    fn drop(&mut self) {
        // SAFETY: a valid DIR*, closed once (this also closes its descriptor).
        unsafe { libc::closedir(self.0.as_ptr()) };
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

/// The key of a directory known from its listing (`d_type`), not stat'ed: a directory's own
/// key is never compared (only what it holds is), so its kind is all that is kept.
const DIR_KEY: StatKey = StatKey {
    kind: Kind::Dir,
    size: 0,
    mode: 0,
    ino: 0,
    mtime_ns: 0,
    ctime_ns: 0,
};

/// One name read from a directory: its bytes in [`Walker::names`] (`len` without the NUL that
/// follows them) and whether the listing says it is a directory.
#[derive(Debug, Clone, Copy)]
struct Listed {
    start: usize,
    len: usize,
    /// `d_type` said directory; `None` when the file system did not say (`DT_UNKNOWN`).
    dir: Option<bool>,
}

/// Hashes files beneath the root through [`Beneath`] (never through a link, never a FIFO),
/// opened on the first file that needs it.
struct ContentHasher<'a> {
    root: &'a Path,
    opened: OnceCell<Option<Beneath>>,
}

impl<'a> ContentHasher<'a> {
    fn new(root: &'a Path) -> Self {
        ContentHasher {
            root,
            opened: OnceCell::new(),
        }
    }

    fn hash(&self, rel: &[u8]) -> Option<String> {
        self.opened
            .get_or_init(|| Beneath::open(self.root).ok())
            .as_ref()?
            .hash(&String::from_utf8_lossy(rel), HASH_LIMIT)
            .ok()
    }
}

/// Walks one tree into a snapshot.
struct Walker<'a> {
    limits: SnapshotLimits,
    snap: &'a mut Snapshot,
    /// Files with a ctime at or after this are hashed (racy).
    racy_from_ns: i128,
    hasher: ContentHasher<'a>,
    /// The names of the directories being listed, NUL-terminated, one after the other: a
    /// stack (a directory's names are dropped once it is walked), so one buffer serves the
    /// whole walk.
    names: Vec<u8>,
    /// The listings on the stack, each sorted by name.
    listing: Vec<Listed>,
}

impl Walker<'_> {
    /// Reads the names in `dir` (not `.` and `..`) onto the stack, sorted; returns where its
    /// listing starts in [`Walker::listing`].
    fn list(&mut self, dir: &DirStream) -> usize {
        let from = self.listing.len();
        loop {
            // SAFETY: readdir on a valid DIR*; the name is copied before the next call.
            let ent = unsafe { libc::readdir(dir.0.as_ptr()) };
            if ent.is_null() {
                break;
            }
            // SAFETY: d_name is a NUL-terminated array inside the entry.
            let name = unsafe { CStr::from_ptr((*ent).d_name.as_ptr()) }.to_bytes_with_nul();
            if name == b".\0" || name == b"..\0" {
                continue;
            }
            // SAFETY: the entry is valid until the next readdir.
            let d_type = unsafe { (*ent).d_type };
            self.listing.push(Listed {
                start: self.names.len(),
                len: name.len() - 1,
                dir: (d_type != libc::DT_UNKNOWN).then_some(d_type == libc::DT_DIR),
            });
            self.names.extend_from_slice(name);
        }
        let names = &self.names;
        self.listing[from..]
            .sort_unstable_by(|a, b| names[a.start..a.start + a.len].cmp(&names[b.start..b.start + b.len]));
        from
    }

    /// Lists `dir` (whose entries live under `prefix`, a range of [`Snapshot::paths`],
    /// `depth` levels below the root); false once the walk is full.
    fn visit(&mut self, dir: &DirStream, prefix: Range<usize>, depth: usize) -> bool {
        let (names_from, from) = (self.names.len(), self.list(dir));
        let to = self.listing.len();
        let full = !self.visit_listed(dir, prefix, depth, from..to);
        self.listing.truncate(from);
        self.names.truncate(names_from);
        !full
    }

    fn visit_listed(&mut self, dir: &DirStream, prefix: Range<usize>, depth: usize, listed: Range<usize>) -> bool {
        for i in listed {
            if self.snap.entries.len() >= self.limits.max_entries {
                self.snap.truncated = true;
                return false;
            }
            let l = self.listing[i];
            let name = &self.names[l.start..=l.start + l.len];
            let Ok(c_name) = CStr::from_bytes_with_nul(name) else {
                continue; // cannot happen: a name read from the kernel, with its NUL
            };
            let bytes = &name[..l.len];
            if l.dir != Some(false) && SKIPPED_DIRS.iter().any(|s| s.as_bytes() == bytes) {
                // A directory by that name is skipped; anything else by that name is not.
                let is_dir = l.dir == Some(true) || stat_at(dir.fd(), c_name).is_ok_and(|k| k.kind == Kind::Dir);
                if is_dir {
                    continue;
                }
            }
            // A directory the listing names is opened (never through a link) rather than
            // stat'ed first; what turns out not to be one is stat'ed like any other entry.
            let mut sub = None;
            let mut unlisted = None;
            let key = if l.dir == Some(true) && depth >= self.limits.max_depth {
                unlisted = Some("deeper than the walk goes");
                DIR_KEY
            } else if l.dir == Some(true) {
                match DirStream::open_at(dir.fd(), c_name) {
                    Ok(s) => {
                        sub = Some(s);
                        DIR_KEY
                    }
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue, // gone meanwhile
                    // Replaced by a link or a file since the listing: not followed, not listed.
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                        match stat_at(dir.fd(), c_name) {
                            Ok(k) if k.kind != Kind::Dir => k,
                            Ok(_) => {
                                unlisted = Some("could not be opened");
                                DIR_KEY
                            }
                            Err(_) => continue,
                        }
                    }
                    Err(_) => {
                        unlisted = Some("could not be opened");
                        DIR_KEY
                    }
                }
            } else {
                let Ok(key) = stat_at(dir.fd(), c_name) else {
                    continue; // gone meanwhile
                };
                key
            };
            let paths = &mut self.snap.paths;
            let start = paths.len();
            if !prefix.is_empty() {
                paths.extend_from_within(prefix.clone());
                paths.push(b'/');
            }
            paths.extend_from_slice(bytes);
            let rel = start..paths.len();
            let hash = (key.kind == Kind::File && key.ctime_ns >= self.racy_from_ns)
                .then(|| self.hasher.hash(&self.snap.paths[rel.clone()]))
                .flatten();
            self.snap.entries.push(Entry {
                rel: rel.clone(),
                key,
                hash,
            });
            if let Some(why) = unlisted {
                self.snap.unlisted.push((display(&self.snap.paths[rel]), why));
                continue;
            }
            if key.kind != Kind::Dir {
                continue;
            }
            // Its kind was not in the listing: a directory found by its stat.
            let sub = match sub {
                Some(s) => s,
                None if depth >= self.limits.max_depth => {
                    self.snap
                        .unlisted
                        .push((display(&self.snap.paths[rel]), "deeper than the walk goes"));
                    continue;
                }
                None => match DirStream::open_at(dir.fd(), c_name) {
                    Ok(s) => s,
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => continue,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                    Err(_) => {
                        self.snap
                            .unlisted
                            .push((display(&self.snap.paths[rel]), "could not be opened"));
                        continue;
                    }
                },
            };
            if !self.visit(&sub, rel, depth + 1) {
                return false;
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
        let dir = DirStream::open_at(libc::AT_FDCWD, &c).map_err(root_err)?;
        let mut snap = Snapshot {
            root: root.to_path_buf(),
            limits,
            paths: Vec::new(),
            entries: Vec::new(),
            truncated: false,
            unlisted: Vec::new(),
        };
        Walker {
            limits,
            snap: &mut snap,
            racy_from_ns,
            // Hashing (racy files only) goes through the same no-link rules as every harness read.
            hasher: ContentHasher::new(root),
            names: Vec::new(),
            listing: Vec::new(),
        }
        .visit(&dir, 0..0, 0);
        Ok(snap)
    }

    /// The relative path of `e`.
    fn rel(&self, e: &Entry) -> &[u8] {
        &self.paths[e.rel.clone()]
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
        let hasher = ContentHasher::new(&after.root);
        let hash_now = |rel: &[u8]| hasher.hash(rel);
        // Compare only up to the first path one of the walks did not reach.
        let frontier: Option<&[u8]> = [self, after]
            .iter()
            .filter(|s| s.truncated)
            .filter_map(|s| s.entries.last().map(|e| s.rel(e)))
            .min_by(|a, b| path_order(a, b));
        let within = |rel: &[u8]| frontier.is_none_or(|f| path_order(rel, f).is_le());
        let mut out = Changes::default();
        let (mut i, mut j) = (0, 0);
        let (old, new) = (&self.entries, &after.entries);
        while i < old.len() || j < new.len() {
            let order = match (old.get(i), new.get(j)) {
                (Some(o), Some(n)) => path_order(self.rel(o), after.rel(n)),
                (Some(_), None) => std::cmp::Ordering::Less,
                _ => std::cmp::Ordering::Greater,
            };
            let change = match order {
                std::cmp::Ordering::Less => {
                    let (o, rel) = (&old[i], self.rel(&old[i]));
                    i += 1;
                    (within(rel) && o.key.kind != Kind::Dir).then(|| PathChange {
                        path: display(rel),
                        change: ChangeKind::Removed,
                        kind: o.key.kind.name(),
                        size: None,
                        sha256: None,
                    })
                }
                std::cmp::Ordering::Greater => {
                    let (n, rel) = (&new[j], after.rel(&new[j]));
                    j += 1;
                    (within(rel) && n.key.kind != Kind::Dir).then(|| PathChange {
                        path: display(rel),
                        change: ChangeKind::Created,
                        kind: n.key.kind.name(),
                        size: Some(n.key.size),
                        sha256: n
                            .hash
                            .clone()
                            .or_else(|| (n.key.kind == Kind::File).then(|| hash_now(rel)).flatten()),
                    })
                }
                std::cmp::Ordering::Equal => {
                    let (o, n, rel) = (&old[i], &new[j], after.rel(&new[j]));
                    i += 1;
                    j += 1;
                    if !within(rel) {
                        None
                    } else {
                        compare(o, n, rel, &hash_now)
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
fn compare(o: &Entry, n: &Entry, rel: &[u8], hash_now: &dyn Fn(&[u8]) -> Option<String>) -> Option<PathChange> {
    if o.key.kind == Kind::Dir && n.key.kind == Kind::Dir {
        return None;
    }
    let changed = |sha256: Option<String>| {
        Some(PathChange {
            path: display(rel),
            change: ChangeKind::Modified,
            kind: n.key.kind.name(),
            size: Some(n.key.size),
            sha256,
        })
    };
    if o.key.kind != n.key.kind || o.key.mode != n.key.mode {
        let h = (n.key.kind == Kind::File).then(|| hash_now(rel)).flatten();
        return changed(h);
    }
    // The same key: unchanged, unless the old entry was racy (then its content decides).
    if o.key == n.key && o.hash.is_none() {
        return None;
    }
    if n.key.kind != Kind::File {
        return changed(None);
    }
    let h = n.hash.clone().or_else(|| hash_now(rel));
    match (&o.hash, &h) {
        // Touched, or rewritten with the same bytes: not a change.
        (Some(a), Some(b)) if a == b => None,
        _ => changed(h),
    }
}

/// Where a command's comparison started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Since {
    /// A snapshot taken as the command started.
    #[default]
    CommandStart,
    /// The snapshot taken after the agent's previous command: nothing passed the pipeline in
    /// between, so what changed meanwhile (a process the agent left running) counts here.
    PreviousCommand,
}

impl Since {
    /// As the receipt's `data.changed.since` says it.
    pub fn name(self) -> &'static str {
        match self {
            Since::CommandStart => "command_start",
            Since::PreviousCommand => "previous_command",
        }
    }
}

/// The workspace as the agent's last command left it, kept as the next command's starting
/// point while nothing else passes the pipeline: then each command costs one walk, not two.
///
/// It is kept with the epoch of the attempt's [`crate::validate::ValidationCache`], the counter
/// that every action which could change the workspace moves on (a file tool's write, any
/// command, a harness note, a judged phase). A command whose epoch is still the kept one
/// starts from the kept snapshot; any other starts from a fresh one, so a `write_file` between
/// two commands is counted once, by the file tool, and never again by the next command.
#[derive(Debug, Default)]
pub struct Baseline {
    kept: Mutex<Option<(u64, Snapshot)>>,
}

impl Baseline {
    /// The snapshot a command's comparison starts from, taken out of the baseline: the kept
    /// one when it was kept at `epoch` for the same root and limits, else a fresh walk.
    pub fn start(&self, root: &Path, limits: SnapshotLimits, epoch: u64) -> Result<(Snapshot, Since), SnapshotError> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner).take();
        match kept {
            Some((at, snap)) if at == epoch && snap.root == root && snap.limits == limits => {
                Ok((snap, Since::PreviousCommand))
            }
            _ => Snapshot::take(root, limits).map(|s| (s, Since::CommandStart)),
        }
    }

    /// Keeps `after` (a snapshot taken after a command) for the next command, valid while
    /// the epoch stays `epoch`.
    pub fn keep(&self, after: Snapshot, epoch: u64) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Some((epoch, after));
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
    /// Where the comparison started (set by whoever chose the starting snapshot).
    pub since: Since,
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
            "since": self.since.name(),
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
        assert!(after.entries.iter().all(|e| !after.rel(e).starts_with(b"out/")));
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
    fn the_baseline_is_reused_only_at_the_epoch_it_was_kept_at() {
        let ws = tempfile::tempdir().unwrap();
        fs::write(ws.path().join("a.txt"), "a").unwrap();
        settle();
        let limits = SnapshotLimits::default();
        let baseline = Baseline::default();
        let (first, since) = baseline.start(ws.path(), limits, 7).unwrap();
        assert_eq!(since, Since::CommandStart);
        baseline.keep(first, 8);
        // What changed after the kept snapshot shows against it.
        fs::write(ws.path().join("b.txt"), "b").unwrap();
        let (kept, since) = baseline.start(ws.path(), limits, 8).unwrap();
        assert_eq!(since, Since::PreviousCommand);
        assert_eq!(summary(&kept.diff(&snap(ws.path()))), [("b.txt".to_string(), "create")]);
        // Taken out: the next start walks afresh.
        assert_eq!(baseline.start(ws.path(), limits, 8).unwrap().1, Since::CommandStart);
        // Another epoch, other limits or another root: a fresh walk.
        baseline.keep(kept.clone(), 8);
        let (fresh, since) = baseline.start(ws.path(), limits, 9).unwrap();
        assert_eq!(since, Since::CommandStart);
        assert!(fresh.diff(&snap(ws.path())).paths.is_empty());
        baseline.keep(kept.clone(), 8);
        let other = SnapshotLimits {
            max_entries: 5,
            ..limits
        };
        assert_eq!(baseline.start(ws.path(), other, 8).unwrap().1, Since::CommandStart);
        let elsewhere = tempfile::tempdir().unwrap();
        baseline.keep(kept, 8);
        assert_eq!(
            baseline.start(elsewhere.path(), limits, 8).unwrap().1,
            Since::CommandStart
        );
    }

    #[test]
    fn a_directory_made_a_link_or_a_file_is_a_change_and_never_followed() {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret"), "s").unwrap();
        fs::create_dir_all(ws.path().join("d")).unwrap();
        fs::write(ws.path().join("d/x"), "x").unwrap();
        fs::create_dir_all(ws.path().join("e")).unwrap();
        settle();
        let before = snap(ws.path());
        fs::remove_dir_all(ws.path().join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("d")).unwrap();
        fs::remove_dir_all(ws.path().join("e")).unwrap();
        fs::write(ws.path().join("e"), "now a file").unwrap();
        let changes = before.diff(&snap(ws.path()));
        assert_eq!(
            summary(&changes),
            [
                ("d".to_string(), "modify"),
                ("d/x".to_string(), "delete"),
                ("e".to_string(), "modify")
            ]
        );
        assert_eq!(changes.paths[0].kind, "symlink");
        assert_eq!(changes.paths[2].kind, "file");
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
