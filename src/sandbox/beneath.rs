//! The harness's own file access inside a tree the agent controls (a workspace): every path is
//! resolved beneath a directory opened once, **without following any symlink**, and only
//! regular files are read, with a size bound.
//!
//! Why: the harness runs as whoever started it (often root) and reads and writes files in the
//! workspace for its own reasons — loop state the agent is shown, L3 reverts, the PRP file,
//! `expect.files`, snapshots, artifacts, protected-file restores. An agent that plants a
//! symlink (`tdd-state -> /etc`, `src/lib.rs -> ../../receipts.jsonl`), a FIFO (blocks a
//! reader forever), or a link to `/dev/zero` (a read that never ends) must not be able to make
//! the harness act for it. So:
//!
//! - a relative path is checked lexically first: absolute paths and `..` that climbs above the
//!   root are refused ([`BeneathError::Outside`]);
//! - on Linux 5.6+ a path is opened with one `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//!   RESOLVE_NO_MAGICLINKS)` relative to the root's descriptor: the kernel refuses any symlink in
//!   any component and any escape, atomically. Elsewhere (older kernels, seccomp-filtered
//!   `openat2`, macOS, FreeBSD) the same walk is done by hand, one `openat(O_NOFOLLOW)` per
//!   component on the descriptor of the previous one; a symlink anywhere is
//!   [`BeneathError::Symlink`];
//! - files are opened `O_NONBLOCK | O_NOCTTY` and checked with `fstat` before any byte is read:
//!   a FIFO, socket or device is [`BeneathError::NotRegular`], never read or written; reads stop
//!   at a caller's bound ([`BeneathError::TooLarge`]);
//! - writes replace whole files: a temporary file is created `O_EXCL | O_NOFOLLOW` in the
//!   (beneath-opened) parent directory and renamed over the name, so a symlink or FIFO at the
//!   target is replaced, never written through; missing parent directories are created one
//!   `mkdirat` at a time;
//! - removal unlinks the entry itself (a symlink, never its target);
//! - [`Beneath::walk`] lists a tree without following links, bounded in entries and depth.
//!
//! The root itself is opened `O_DIRECTORY | O_NOFOLLOW` once: if the agent later replaces the
//! workspace directory with a link, the harness keeps working on the directory it opened.
//!
//! What this does not do: it does not stop a process that is running *concurrently* with the
//! harness from moving a directory the harness holds open to somewhere else (only an unconfined
//! agent process can; see the README's security section).

use std::ffi::{CString, OsStr};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// What a path names, without following it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    /// A FIFO, socket or device: never read or written by the harness.
    Special,
}

impl EntryKind {
    #[allow(clippy::unnecessary_cast)] // mode_t is u16 on macOS
    fn of(mode: u32) -> EntryKind {
        match mode & libc::S_IFMT as u32 {
            m if m == libc::S_IFREG as u32 => EntryKind::File,
            m if m == libc::S_IFDIR as u32 => EntryKind::Dir,
            m if m == libc::S_IFLNK as u32 => EntryKind::Symlink,
            _ => EntryKind::Special,
        }
    }

    /// `file`, `directory`, `symlink`, `fifo, socket or device`.
    pub fn describe(self) -> &'static str {
        match self {
            EntryKind::File => "file",
            EntryKind::Dir => "directory",
            EntryKind::Symlink => "symlink",
            EntryKind::Special => "fifo, socket or device",
        }
    }
}

/// An entry's kind, size and permission bits (`lstat`, never following).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EntryMeta {
    pub kind: EntryKind,
    pub size: u64,
    /// Permission bits (`0o7777`).
    pub mode: u32,
}

/// Why the harness refused or failed a file operation beneath a root.
#[derive(Debug, thiserror::Error)]
pub enum BeneathError {
    #[error("`{0}` is outside the workspace (absolute, or `..` above its root); the harness only touches workspace-relative paths")]
    Outside(String),
    #[error("`{0}` is, or passes through, a symbolic link; the harness does not follow links in the workspace")]
    Symlink(String),
    #[error("`{0}` does not exist")]
    NotFound(String),
    #[error("`{path}` is a {}, not a regular file; the harness only reads and writes regular files", kind.describe())]
    NotRegular { path: String, kind: EntryKind },
    #[error("`{path}` is larger than {limit} bytes, the most the harness reads of it")]
    TooLarge { path: String, limit: u64 },
    #[error("cannot {op} `{path}`: {source}")]
    Io {
        op: &'static str,
        path: String,
        #[source]
        source: io::Error,
    },
}

impl BeneathError {
    /// Whether the entry does not exist (as opposed to being refused or unreadable).
    pub fn is_not_found(&self) -> bool {
        matches!(self, BeneathError::NotFound(_))
    }

    /// Whether the operation failed because someone else changed the tree while the harness
    /// worked on it: a folder refilled while it was removed (for longer than the harness
    /// chases it), a directory moved away mid-removal, a name taken again before a rename.
    /// After the agent has acted, that is a process of the agent's still running, never the
    /// machine failing.
    pub fn changed_meanwhile(&self) -> bool {
        let BeneathError::Io { source, .. } = self else {
            return false;
        };
        matches!(source.raw_os_error(), Some(libc::ENOTEMPTY | libc::EEXIST))
            || source
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<MovedWhileRemoved>().is_some())
    }
}

/// A directory opened once; every operation resolves paths beneath it without following links.
#[derive(Debug)]
pub struct Beneath {
    root: OwnedFd,
    path: PathBuf,
    /// Try `openat2` first (false only in tests of the by-hand walk).
    openat2: bool,
}

/// One entry found by [`Beneath::walk`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalkEntry {
    /// Relative to the root, `/`-separated.
    pub rel: String,
    pub meta: EntryMeta,
}

/// Bounds and filters for [`Beneath::walk`].
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Entries returned at most (the walk stops there; [`Walk::truncated`] says so).
    pub max_entries: usize,
    /// Directory levels below the root.
    pub max_depth: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits {
            max_entries: 20_000,
            max_depth: 64,
        }
    }
}

/// The result of [`Beneath::walk`]: entries sorted by path.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    pub entries: Vec<WalkEntry>,
    /// The walk hit [`WalkLimits::max_entries`] and stopped early.
    pub truncated: bool,
}

/// A directory entry's name as a walk reports it: the name itself when it is UTF-8; else a NUL
/// followed by its bytes in hex. No real name holds a NUL, so the form cannot be taken for
/// one, and every operation here that takes a relative path reads it back to the same bytes:
/// a file a command named `bad\xffname` can be removed, restored or compared like any other.
fn encode_name(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(name) => name.to_string(),
        Err(_) => std::iter::once('\0'.to_string())
            .chain(bytes.iter().map(|b| format!("{b:02x}")))
            .collect(),
    }
}

/// The bytes of a name [`encode_name`] wrote in hex (the text after its NUL).
fn decode_name(hex: &[u8]) -> Option<Vec<u8>> {
    if hex.is_empty() || !hex.len().is_multiple_of(2) {
        return None;
    }
    hex.chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect()
}

/// A relative path checked lexically: its normal components, `.` dropped, `..` applied.
#[derive(Clone)]
struct RelPath {
    parts: Vec<CString>,
    display: String,
}

impl RelPath {
    fn parse(rel: &str) -> Result<RelPath, BeneathError> {
        let outside = || BeneathError::Outside(rel.to_string());
        let p = Path::new(rel);
        let mut parts: Vec<&OsStr> = Vec::new();
        for c in p.components() {
            match c {
                Component::Normal(s) => parts.push(s),
                Component::CurDir => {}
                Component::ParentDir => {
                    parts.pop().ok_or_else(outside)?;
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        let display = parts.iter().map(|s| s.to_string_lossy()).collect::<Vec<_>>().join("/");
        let parts = parts
            .into_iter()
            .map(|s| {
                let bytes = s.as_bytes();
                match bytes.strip_prefix(&[0u8][..]) {
                    // A name that is not UTF-8, as [`encode_name`] wrote it.
                    Some(hex) => decode_name(hex).and_then(|b| CString::new(b).ok()).ok_or_else(outside),
                    None => CString::new(bytes).map_err(|_| outside()),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RelPath {
            parts,
            display: if display.is_empty() { ".".into() } else { display },
        })
    }

    /// The path as one C string (`.` for the root).
    #[cfg(target_os = "linux")]
    fn joined(&self) -> CString {
        if self.parts.is_empty() {
            return c".".to_owned();
        }
        let mut bytes = Vec::new();
        for (i, p) in self.parts.iter().enumerate() {
            if i > 0 {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(p.as_bytes());
        }
        // No component holds a NUL (checked in `parse`).
        CString::new(bytes).unwrap_or_default()
    }
}

const O_CLOEXEC: i32 = libc::O_CLOEXEC;

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

fn owned(fd: i32) -> io::Result<OwnedFd> {
    if fd < 0 {
        Err(last_err())
    } else {
        // SAFETY: a descriptor just returned by the kernel, owned by nobody else.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }
}

/// `openat(dir, name, flags)`.
fn openat(dir: i32, name: &std::ffi::CStr, flags: i32, mode: libc::mode_t) -> io::Result<OwnedFd> {
    loop {
        // SAFETY: a valid C string and plain integers.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | O_CLOEXEC, mode as libc::c_uint) };
        match owned(fd) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

fn fstat(fd: i32) -> io::Result<EntryMeta> {
    // SAFETY: `st` is written by the kernel before it is read.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a stat buffer we own.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return Err(last_err());
    }
    Ok(meta_of(&st))
}

fn fstatat_nofollow(dir: i32, name: &std::ffi::CStr) -> io::Result<EntryMeta> {
    // SAFETY: as in `fstat`.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor, C string and buffer.
    if unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
        return Err(last_err());
    }
    Ok(meta_of(&st))
}

#[allow(clippy::unnecessary_cast)] // st_mode is u16 on macOS, u32 elsewhere
fn meta_of(st: &libc::stat) -> EntryMeta {
    let mode = st.st_mode as u32;
    EntryMeta {
        kind: EntryKind::of(mode),
        size: st.st_size.max(0) as u64,
        mode: mode & 0o7777,
    }
}

#[cfg(target_os = "linux")]
mod linux {
    use std::sync::atomic::{AtomicU8, Ordering};

    /// 0 = not tried yet, 1 = works, 2 = unavailable (ENOSYS, or EPERM from a seccomp filter).
    static OPENAT2: AtomicU8 = AtomicU8::new(0);

    /// `openat2` beneath `dir` refusing every symlink; `None` where the syscall is unavailable.
    pub(super) fn openat2_beneath(
        dir: i32,
        path: &std::ffi::CStr,
        flags: i32,
        mode: libc::mode_t,
    ) -> Option<std::io::Result<std::os::fd::OwnedFd>> {
        if OPENAT2.load(Ordering::Relaxed) == 2 {
            return None;
        }
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (flags | libc::O_CLOEXEC) as u64;
        how.mode = if flags & libc::O_CREAT != 0 { mode as u64 } else { 0 };
        how.resolve = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS;
        loop {
            // SAFETY: a valid C string and an `open_how` of the size we pass.
            let fd = unsafe {
                libc::syscall(
                    libc::SYS_openat2,
                    dir,
                    path.as_ptr(),
                    &how as *const libc::open_how,
                    std::mem::size_of::<libc::open_how>(),
                )
            } as i32;
            if fd >= 0 {
                OPENAT2.store(1, Ordering::Relaxed);
                return Some(super::owned(fd));
            }
            let e = std::io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) | Some(libc::EAGAIN) => continue,
                Some(libc::ENOSYS) => {
                    OPENAT2.store(2, Ordering::Relaxed);
                    return None;
                }
                // A seccomp filter that denies openat2 outright answers EPERM even for a plain
                // path; only trust EPERM as "unavailable" before the syscall ever worked.
                Some(libc::EPERM) if OPENAT2.load(Ordering::Relaxed) == 0 => {
                    OPENAT2.store(2, Ordering::Relaxed);
                    return None;
                }
                _ => return Some(Err(e)),
            }
        }
    }
}

impl Beneath {
    /// Opens `root` (which must be a directory, not a symlink to one).
    pub fn open(root: &Path) -> Result<Beneath, BeneathError> {
        let c = CString::new(root.as_os_str().as_bytes()).map_err(|_| BeneathError::Io {
            op: "open",
            path: root.display().to_string(),
            source: io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"),
        })?;
        let fd = openat(
            libc::AT_FDCWD,
            &c,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW,
            0,
        )
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => BeneathError::Symlink(root.display().to_string()),
            // O_DIRECTORY | O_NOFOLLOW on a symlink answers ENOTDIR.
            Some(libc::ENOTDIR) if std::fs::symlink_metadata(root).is_ok_and(|m| m.file_type().is_symlink()) => {
                BeneathError::Symlink(root.display().to_string())
            }
            Some(libc::ENOENT) => BeneathError::NotFound(root.display().to_string()),
            _ => BeneathError::Io {
                op: "open the directory",
                path: root.display().to_string(),
                source: e,
            },
        })?;
        Ok(Beneath {
            root: fd,
            path: root.to_path_buf(),
            openat2: true,
        })
    }

    /// The path the root was opened at (for messages and for commands that need a path).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A second handle on the same opened directory.
    pub fn try_clone(&self) -> Result<Beneath, BeneathError> {
        let root = self.root.try_clone().map_err(|source| BeneathError::Io {
            op: "duplicate the descriptor of",
            path: self.path.display().to_string(),
            source,
        })?;
        Ok(Beneath {
            root,
            path: self.path.clone(),
            openat2: self.openat2,
        })
    }

    /// The text of symlink `rel` (read, never followed), at most 4 KiB.
    pub fn read_link(&self, rel: &str) -> Result<PathBuf, BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = self.parent_of(&r, false)? else {
            return Err(BeneathError::NotRegular {
                path: r.display,
                kind: EntryKind::Dir,
            });
        };
        let mut buf = [0u8; 4096];
        // SAFETY: valid descriptor, C string and buffer of the length passed.
        let n = unsafe { libc::readlinkat(dir.as_raw_fd(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(self.map_err(last_err(), "read the link", &r));
        }
        Ok(PathBuf::from(OsStr::from_bytes(&buf[..n as usize])))
    }

    /// Opens `rel` with `flags` (O_NOFOLLOW is added), refusing every symlink on the way.
    fn open_rel(&self, rel: &RelPath, flags: i32, mode: libc::mode_t) -> Result<OwnedFd, BeneathError> {
        let flags = flags | libc::O_NOFOLLOW;
        let map = |e: io::Error, op: &'static str| self.map_err(e, op, rel);
        #[cfg(target_os = "linux")]
        if self.openat2 {
            if let Some(r) = linux::openat2_beneath(self.root.as_raw_fd(), &rel.joined(), flags, mode) {
                return r.map_err(|e| map(e, "open"));
            }
        }
        // By hand: every directory component opened O_NOFOLLOW on the previous descriptor.
        let Some((last, dirs)) = rel.parts.split_last() else {
            return openat(self.root.as_raw_fd(), c".", flags, mode).map_err(|e| map(e, "open"));
        };
        let mut cur: Option<OwnedFd> = None;
        for d in dirs {
            let at = cur.as_ref().map_or(self.root.as_raw_fd(), |f| f.as_raw_fd());
            let next =
                openat(at, d, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0).map_err(|e| map(e, "open"))?;
            cur = Some(next);
        }
        let at = cur.as_ref().map_or(self.root.as_raw_fd(), |f| f.as_raw_fd());
        openat(at, last, flags, mode).map_err(|e| map(e, "open"))
    }

    fn map_err(&self, e: io::Error, op: &'static str, rel: &RelPath) -> BeneathError {
        let path = rel.display.clone();
        match e.raw_os_error() {
            // O_DIRECTORY | O_NOFOLLOW on a symlink answers ENOTDIR, as does a file used as a
            // directory: look at the components to tell which.
            Some(libc::ENOTDIR) if self.has_symlink_component(rel) => BeneathError::Symlink(path),
            // O_NOFOLLOW on a symlink, or RESOLVE_NO_SYMLINKS anywhere on the way.
            Some(libc::ELOOP) => BeneathError::Symlink(path),
            // RESOLVE_BENEATH: the resolution would leave the root.
            Some(libc::EXDEV) => BeneathError::Outside(path),
            Some(libc::ENOENT) => BeneathError::NotFound(path),
            _ => BeneathError::Io { op, path, source: e },
        }
    }

    /// Whether some component of `rel` is a symlink (for error messages only: looked at one
    /// component at a time, never followed).
    fn has_symlink_component(&self, rel: &RelPath) -> bool {
        let mut cur: Option<OwnedFd> = None;
        for part in &rel.parts {
            let at = cur.as_ref().map_or(self.root.as_raw_fd(), |f| f.as_raw_fd());
            match fstatat_nofollow(at, part) {
                Ok(m) if m.kind == EntryKind::Symlink => return true,
                Ok(m) if m.kind == EntryKind::Dir => {}
                _ => return false,
            }
            match openat(at, part, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0) {
                Ok(fd) => cur = Some(fd),
                Err(_) => return false,
            }
        }
        false
    }

    /// The parent directory of `rel` (opened beneath) and the final name; `None` for the root.
    fn parent_of(&self, rel: &RelPath, create: bool) -> Result<Option<(OwnedFd, CString)>, BeneathError> {
        let Some((last, dirs)) = rel.parts.split_last() else {
            return Ok(None);
        };
        let parent = RelPath {
            parts: dirs.to_vec(),
            display: rel.display.clone(),
        };
        let fd = if create {
            self.create_dirs(&parent)?
        } else {
            self.open_rel(&parent, libc::O_RDONLY | libc::O_DIRECTORY, 0)?
        };
        Ok(Some((fd, last.clone())))
    }

    /// Opens directory `rel`, creating missing components one `mkdirat` at a time.
    fn create_dirs(&self, rel: &RelPath) -> Result<OwnedFd, BeneathError> {
        let mut cur: Option<OwnedFd> = None;
        for d in &rel.parts {
            let at = cur.as_ref().map_or(self.root.as_raw_fd(), |f| f.as_raw_fd());
            // SAFETY: a valid descriptor and C string.
            let made = unsafe { libc::mkdirat(at, d.as_ptr(), 0o755) };
            if made != 0 {
                let e = last_err();
                if e.raw_os_error() != Some(libc::EEXIST) {
                    return Err(self.map_err(e, "create the directory", rel));
                }
            }
            let next = openat(at, d, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0).map_err(|e| match e
                .raw_os_error()
            {
                Some(libc::ENOTDIR) if fstatat_nofollow(at, d).is_ok_and(|m| m.kind == EntryKind::Symlink) => {
                    BeneathError::Symlink(rel.display.clone())
                }
                Some(libc::ENOTDIR) => BeneathError::Io {
                    op: "create the directories of",
                    path: rel.display.clone(),
                    source: io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "a component exists and is not a directory",
                    ),
                },
                _ => self.map_err(e, "open", rel),
            })?;
            cur = Some(next);
        }
        match cur {
            Some(fd) => Ok(fd),
            None => openat(self.root.as_raw_fd(), c".", libc::O_RDONLY | libc::O_DIRECTORY, 0)
                .map_err(|e| self.map_err(e, "open", rel)),
        }
    }

    /// What `rel` names, without following it; `Ok(None)` when nothing is there. A symlink in a
    /// *parent* component is [`BeneathError::Symlink`]; a symlink as the final component is
    /// reported as [`EntryKind::Symlink`].
    pub fn entry(&self, rel: &str) -> Result<Option<EntryMeta>, BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = (match self.parent_of(&r, false) {
            Ok(p) => p,
            Err(BeneathError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        }) else {
            return fstat(self.root.as_raw_fd())
                .map(Some)
                .map_err(|e| self.map_err(e, "inspect", &r));
        };
        match fstatat_nofollow(dir.as_raw_fd(), &name) {
            Ok(m) => Ok(Some(m)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(self.map_err(e, "inspect", &r)),
        }
    }

    /// Opens regular file `rel` for reading (never blocking on a FIFO, never following a link).
    fn open_regular(&self, r: &RelPath) -> Result<(std::fs::File, EntryMeta), BeneathError> {
        let fd = self.open_rel(r, libc::O_RDONLY | libc::O_NONBLOCK | libc::O_NOCTTY, 0)?;
        let meta = fstat(fd.as_raw_fd()).map_err(|e| self.map_err(e, "inspect", r))?;
        if meta.kind != EntryKind::File {
            return Err(BeneathError::NotRegular {
                path: r.display.clone(),
                kind: meta.kind,
            });
        }
        Ok((std::fs::File::from(fd), meta))
    }

    /// The content of regular file `rel`, at most `limit` bytes (more is [`BeneathError::TooLarge`]).
    pub fn read(&self, rel: &str, limit: u64) -> Result<Vec<u8>, BeneathError> {
        let r = RelPath::parse(rel)?;
        let (file, meta) = self.open_regular(&r)?;
        if meta.size > limit {
            return Err(BeneathError::TooLarge { path: r.display, limit });
        }
        let mut out = Vec::with_capacity(meta.size.min(limit) as usize);
        // One byte more than the bound tells a file that grew after the fstat.
        file.take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| self.map_err(e, "read", &r))?;
        if out.len() as u64 > limit {
            return Err(BeneathError::TooLarge { path: r.display, limit });
        }
        Ok(out)
    }

    /// The first `limit` bytes of regular file `rel`, and whether the file holds more.
    pub fn read_head(&self, rel: &str, limit: u64) -> Result<(Vec<u8>, bool), BeneathError> {
        let r = RelPath::parse(rel)?;
        let (file, meta) = self.open_regular(&r)?;
        let mut out = Vec::with_capacity(meta.size.min(limit) as usize);
        file.take(limit.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(|e| self.map_err(e, "read", &r))?;
        let more = out.len() as u64 > limit;
        out.truncate(limit.min(out.len() as u64) as usize);
        Ok((out, more))
    }

    /// `sha256:<hex>` of regular file `rel`, streamed (no size bound on memory; `limit` bounds
    /// the bytes hashed: a larger file is [`BeneathError::TooLarge`]).
    pub fn hash(&self, rel: &str, limit: u64) -> Result<String, BeneathError> {
        let r = RelPath::parse(rel)?;
        let (mut file, meta) = self.open_regular(&r)?;
        if meta.size > limit {
            return Err(BeneathError::TooLarge { path: r.display, limit });
        }
        match crate::tools::receipt::sha256_read(&mut file, limit) {
            Ok(Some(hash)) => Ok(hash),
            // It grew past the limit since its size was read.
            Ok(None) => Err(BeneathError::TooLarge { path: r.display, limit }),
            Err(e) => Err(self.map_err(e, "read", &r)),
        }
    }

    /// Replaces `rel` with `bytes` as a whole (temporary file + rename in the same directory),
    /// creating missing parent directories. Whatever was at `rel` — a file, a symlink, a FIFO —
    /// is replaced, never written through; a directory there is an error. `mode` defaults to
    /// the replaced regular file's bits, else `0o644`.
    pub fn write(&self, rel: &str, bytes: &[u8], mode: Option<u32>) -> Result<(), BeneathError> {
        self.write_from(rel, &mut &bytes[..], mode)
    }

    /// [`Beneath::write`] with the content streamed from `content` (a checkpoint's copy of a
    /// file is put back without holding it in memory).
    pub fn write_from(&self, rel: &str, content: &mut dyn Read, mode: Option<u32>) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = self.parent_of(&r, true)? else {
            return Err(BeneathError::NotRegular {
                path: r.display,
                kind: EntryKind::Dir,
            });
        };
        let existing = fstatat_nofollow(dir.as_raw_fd(), &name).ok();
        if let Some(m) = existing.filter(|m| m.kind == EntryKind::Dir) {
            return Err(BeneathError::NotRegular {
                path: r.display,
                kind: m.kind,
            });
        }
        // Permission bits only: the harness never writes a setuid, setgid or sticky file.
        let mode = mode
            .or(existing.filter(|m| m.kind == EntryKind::File).map(|m| m.mode))
            .unwrap_or(0o644)
            & 0o777;
        let tmp =
            CString::new(format!(".medin-{}-{:x}.tmp", std::process::id(), fastrand::u64(..))).unwrap_or_default();
        let fd = openat(
            dir.as_raw_fd(),
            &tmp,
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
            mode as libc::mode_t,
        )
        .map_err(|e| self.map_err(e, "create a temporary file for", &r))?;
        let mut file = std::fs::File::from(fd);
        let written = io::copy(content, &mut file)
            .and_then(|_| file.flush())
            .and_then(|_| {
                // The umask may have cut bits the caller asked for.
                // SAFETY: a valid descriptor.
                if unsafe { libc::fchmod(file.as_fd().as_raw_fd(), mode as libc::mode_t) } != 0 {
                    return Err(last_err());
                }
                Ok(())
            })
            .and_then(|_| {
                // SAFETY: valid descriptors and C strings.
                if unsafe { libc::renameat(dir.as_raw_fd(), tmp.as_ptr(), dir.as_raw_fd(), name.as_ptr()) } != 0 {
                    return Err(last_err());
                }
                Ok(())
            });
        if let Err(e) = written {
            // SAFETY: as above; the temporary name is ours.
            unsafe { libc::unlinkat(dir.as_raw_fd(), tmp.as_ptr(), 0) };
            return Err(self.map_err(e, "write", &r));
        }
        Ok(())
    }

    /// Opens regular file `rel` for reading (never blocking on a FIFO, never following a link):
    /// the file and what `fstat` said of it before any byte is read.
    pub fn open_file(&self, rel: &str) -> Result<(std::fs::File, EntryMeta), BeneathError> {
        let r = RelPath::parse(rel)?;
        self.open_regular(&r)
    }

    /// Makes directory `rel` with permission bits `mode` (its parent must exist; nothing is
    /// followed on the way). An entry already at `rel` is an error.
    pub fn make_dir(&self, rel: &str, mode: u32) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = self.parent_of(&r, false)? else {
            return Err(BeneathError::Outside(r.display));
        };
        // SAFETY: a valid descriptor and C string.
        if unsafe { libc::mkdirat(dir.as_raw_fd(), name.as_ptr(), (mode & 0o777) as libc::mode_t) } != 0 {
            return Err(self.map_err(last_err(), "create the directory", &r));
        }
        Ok(())
    }

    /// Makes a FIFO at `rel` with permission bits `mode` (its parent must exist). An entry
    /// already at `rel` is an error.
    pub fn make_fifo(&self, rel: &str, mode: u32) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = self.parent_of(&r, false)? else {
            return Err(BeneathError::Outside(r.display));
        };
        // SAFETY: a valid descriptor and C string.
        if unsafe { libc::mkfifoat(dir.as_raw_fd(), name.as_ptr(), (mode & 0o777) as libc::mode_t) } != 0 {
            return Err(self.map_err(last_err(), "create the FIFO", &r));
        }
        Ok(())
    }

    /// Sets the permission bits of the entry `rel` itself (the root for `.`): opened as a path
    /// only, never through a link, and changed through that descriptor, so a link swapped in
    /// meanwhile cannot redirect the change. A symlink at `rel` is [`BeneathError::Symlink`].
    #[cfg(target_os = "linux")]
    pub fn set_mode(&self, rel: &str, mode: u32) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let fd = self.open_rel(&r, libc::O_PATH, 0)?;
        let meta = fstat(fd.as_raw_fd()).map_err(|e| self.map_err(e, "inspect", &r))?;
        if meta.kind == EntryKind::Symlink {
            return Err(BeneathError::Symlink(r.display));
        }
        let by_fd = CString::new(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default();
        // SAFETY: a valid C string naming the descriptor just opened (the magic link is that
        // inode, not a path that could be swapped).
        if unsafe { libc::chmod(by_fd.as_ptr(), (mode & 0o7777) as libc::mode_t) } != 0 {
            return Err(self.map_err(last_err(), "change the mode of", &r));
        }
        Ok(())
    }

    /// Sets the permission bits of the entry `rel` itself (the root for `.`), never through a
    /// link: where there is no `O_PATH`, through its parent folder's descriptor with
    /// `AT_SYMLINK_NOFOLLOW` after checking that it is not a link. A symlink at `rel` is
    /// [`BeneathError::Symlink`].
    #[cfg(not(target_os = "linux"))]
    pub fn set_mode(&self, rel: &str, mode: u32) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let mode = (mode & 0o7777) as libc::mode_t;
        let Some((dir, name)) = self.parent_of(&r, false)? else {
            // SAFETY: the root's own descriptor.
            if unsafe { libc::fchmod(self.root.as_raw_fd(), mode) } != 0 {
                return Err(self.map_err(last_err(), "change the mode of", &r));
            }
            return Ok(());
        };
        let meta = fstatat_nofollow(dir.as_raw_fd(), &name).map_err(|e| self.map_err(e, "inspect", &r))?;
        if meta.kind == EntryKind::Symlink {
            return Err(BeneathError::Symlink(r.display));
        }
        // SAFETY: valid descriptor and C string; the entry itself, never a link's target.
        if unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), mode, libc::AT_SYMLINK_NOFOLLOW) } != 0 {
            return Err(self.map_err(last_err(), "change the mode of", &r));
        }
        Ok(())
    }

    /// Makes `rel` a symbolic link to `target` (missing parents created, nothing followed on
    /// the way); an entry already at `rel` is an error.
    pub fn symlink(&self, rel: &str, target: &Path) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = self.parent_of(&r, true)? else {
            return Err(BeneathError::NotRegular {
                path: r.display,
                kind: EntryKind::Dir,
            });
        };
        let target = CString::new(target.as_os_str().as_encoded_bytes()).map_err(|_| BeneathError::NotRegular {
            path: r.display.clone(),
            kind: EntryKind::Special,
        })?;
        // SAFETY: valid descriptor and C strings.
        if unsafe { libc::symlinkat(target.as_ptr(), dir.as_raw_fd(), name.as_ptr()) } != 0 {
            return Err(self.map_err(last_err(), "make a link at", &r));
        }
        Ok(())
    }

    /// Renames entry `from` to `to` (both beneath the root; missing parents of `to` are
    /// created). Whatever `to` named is replaced, as `rename(2)` does; neither side is followed.
    pub fn rename(&self, from: &str, to: &str) -> Result<(), BeneathError> {
        let f = RelPath::parse(from)?;
        let t = RelPath::parse(to)?;
        let (Some((fdir, fname)), Some((tdir, tname))) = (self.parent_of(&f, false)?, self.parent_of(&t, true)?) else {
            return Err(BeneathError::Outside(if f.parts.is_empty() {
                f.display
            } else {
                t.display
            }));
        };
        // SAFETY: valid descriptors and C strings.
        if unsafe { libc::renameat(fdir.as_raw_fd(), fname.as_ptr(), tdir.as_raw_fd(), tname.as_ptr()) } != 0 {
            return Err(self.map_err(last_err(), "rename", &f));
        }
        Ok(())
    }

    /// [`Beneath::write`], after clearing the way: whatever is not a directory where one of
    /// `rel`'s folders goes, and a directory where `rel` itself goes, is removed first. For the
    /// harness's own restores (an L3 revert, a protected file): what the agent put in the way
    /// cannot turn them into an error.
    pub fn write_clearing(&self, rel: &str, bytes: &[u8], mode: Option<u32>) -> Result<(), BeneathError> {
        let r = RelPath::parse(rel)?;
        for i in 1..=r.parts.len() {
            let at = RelPath {
                parts: r.parts[..i].to_vec(),
                display: r.display.clone(),
            };
            let Some((dir, name)) = self.parent_of(&at, false).ok().flatten() else {
                break; // a missing folder: `write` creates it
            };
            let is_target = i == r.parts.len();
            match fstatat_nofollow(dir.as_raw_fd(), &name) {
                Ok(m) if (m.kind == EntryKind::Dir) == is_target => {
                    self.remove_at(dir.as_raw_fd(), &name, &at, 0)?;
                }
                _ => {}
            }
        }
        self.write(rel, bytes, mode)
    }

    /// Clears the setuid and setgid bits of every regular file below the root (links not
    /// followed) and returns the files changed: a command that ran as root must not leave a
    /// set-id program behind for whoever can reach the run folder on the host.
    pub fn clear_setid_bits(&self) -> Result<Vec<String>, BeneathError> {
        let walk = self.walk(
            WalkLimits {
                max_entries: 1_000_000,
                max_depth: 256,
            },
            |_, _| false,
        )?;
        let mut changed = Vec::new();
        for e in walk.entries {
            if e.meta.kind != EntryKind::File || e.meta.mode & 0o6000 == 0 {
                continue;
            }
            let r = RelPath::parse(&e.rel)?;
            let Some((dir, name)) = self.parent_of(&r, false)? else {
                continue;
            };
            // Looked at again through the parent: still a regular file, not a link.
            let Ok(now) = fstatat_nofollow(dir.as_raw_fd(), &name) else {
                continue;
            };
            if now.kind != EntryKind::File {
                continue;
            }
            // SAFETY: a valid descriptor and C string; fchmodat on an entry just seen to be a
            // regular file in a directory the harness holds open.
            if unsafe { libc::fchmodat(dir.as_raw_fd(), name.as_ptr(), (now.mode & 0o1777) as libc::mode_t, 0) } != 0 {
                return Err(self.map_err(last_err(), "clear the set-id bits of", &r));
            }
            changed.push(e.rel);
        }
        Ok(changed)
    }

    /// Removes the entry `rel` itself (a file, symlink or special file; a directory with
    /// everything in it). `Ok(false)` when nothing was there.
    pub fn remove(&self, rel: &str) -> Result<bool, BeneathError> {
        let r = RelPath::parse(rel)?;
        let Some((dir, name)) = (match self.parent_of(&r, false) {
            Ok(p) => p,
            Err(BeneathError::NotFound(_)) => return Ok(false),
            Err(e) => return Err(e),
        }) else {
            return Err(BeneathError::Outside(r.display));
        };
        self.remove_at(dir.as_raw_fd(), &name, &r, 0)
    }

    fn remove_at(&self, dir: i32, name: &std::ffi::CStr, r: &RelPath, _depth: usize) -> Result<bool, BeneathError> {
        match remove_entry_at(dir, name) {
            Ok(removed) => Ok(removed),
            Err(e) => Err(self.map_err(e, "remove", r)),
        }
    }

    /// Every entry below the root (not the root itself), depth first, sorted by path, without
    /// following links; `skip(rel, kind)` returning true leaves an entry (and what it holds) out.
    pub fn walk(&self, limits: WalkLimits, skip: impl Fn(&str, EntryKind) -> bool) -> Result<Walk, BeneathError> {
        let mut out = Walk::default();
        // Directories still to list, by path: each is opened (beneath, no links) only when its
        // turn comes, so the walk holds one directory open at a time however wide the tree.
        let mut stack: Vec<(RelPath, usize)> = vec![(
            RelPath {
                parts: Vec::new(),
                display: ".".into(),
            },
            0,
        )];
        while let Some((dir_rel, depth)) = stack.pop() {
            let dir = match self.open_rel(&dir_rel, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
                Ok(d) => d,
                // Removed since it was listed: nothing left to see there.
                Err(BeneathError::NotFound(_)) if depth > 0 => continue,
                Err(e) => return Err(e),
            };
            let mut names = list_dir(dir.as_raw_fd()).map_err(|e| self.map_err(e, "list", &dir_rel))?;
            names.sort();
            // Pushed in reverse so the stack pops them in order.
            let mut subdirs = Vec::new();
            for name in names {
                let Ok(meta) = fstatat_nofollow(dir.as_raw_fd(), &name) else {
                    continue; // gone meanwhile
                };
                let shown = encode_name(name.as_bytes());
                let rel = if dir_rel.parts.is_empty() {
                    shown.clone()
                } else {
                    format!("{}/{shown}", dir_rel.display)
                };
                if skip(&rel, meta.kind) {
                    continue;
                }
                if out.entries.len() >= limits.max_entries {
                    out.truncated = true;
                    break;
                }
                out.entries.push(WalkEntry { rel: rel.clone(), meta });
                if meta.kind == EntryKind::Dir && depth < limits.max_depth {
                    let mut parts = dir_rel.parts.clone();
                    parts.push(name);
                    subdirs.push((RelPath { parts, display: rel }, depth + 1));
                }
            }
            if out.truncated {
                break;
            }
            stack.extend(subdirs.into_iter().rev());
        }
        out.entries.sort_by(|a, b| a.rel.cmp(&b.rel));
        Ok(out)
    }
}

/// How long a tree found refilled while it is being removed (a process still running writes
/// into it) is emptied again, from the first time it was found so; then the removal fails
/// with `ENOTEMPTY` ([`BeneathError::changed_meanwhile`]) instead of chasing the writer forever.
const REFILL_PATIENCE: std::time::Duration = std::time::Duration::from_secs(5);

/// A directory being removed was moved away by someone else meanwhile: the removal stops
/// rather than follow it ([`BeneathError::changed_meanwhile`]).
#[derive(Debug, thiserror::Error)]
#[error("a directory moved while it was being removed")]
struct MovedWhileRemoved;

fn moved_while_removed() -> io::Error {
    io::Error::other(MovedWhileRemoved)
}

/// Removes entry `name` of directory `dir` — a file, a link (never its target) or a whole tree
/// — without recursion and without following links: the tree is walked down one directory
/// descriptor at a time and climbed back through `..`, each step checked against the device
/// and inode it came from, so a 40,000-deep chain of directories costs neither stack nor
/// descriptors. Each directory is listed once (its files unlinked, its subdirectories kept
/// by name to be removed in turn), so a wide directory costs time in proportion to what it
/// holds; one refilled meanwhile is listed again, for at most [`REFILL_PATIENCE`].
/// `Ok(false)` when nothing was there.
fn remove_entry_at(dir: i32, name: &std::ffi::CStr) -> io::Result<bool> {
    let meta = match fstatat_nofollow(dir, name) {
        Ok(m) => m,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(false),
        Err(e) => return Err(e),
    };
    if meta.kind != EntryKind::Dir {
        // SAFETY: valid descriptor and C string; unlinks the entry, never a link's target.
        if unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } != 0 {
            return Err(last_err());
        }
        return Ok(true);
    }
    let dev_ino = |fd: i32| -> io::Result<(u64, u64)> {
        // SAFETY: `st` is written by the kernel before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and buffer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(last_err());
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        Ok((st.st_dev as u64, st.st_ino as u64))
    };
    let mut refilled_since: Option<std::time::Instant> = None;
    let mut refilled = || -> io::Result<()> {
        let since = *refilled_since.get_or_insert_with(std::time::Instant::now);
        if since.elapsed() > REFILL_PATIENCE {
            return Err(io::Error::from_raw_os_error(libc::ENOTEMPTY));
        }
        Ok(())
    };
    let top_parent = dev_ino(dir)?;
    let mut cur = open_dir_to_empty(dir, name)?;
    // The subdirectories of `cur` still to remove, from its last listing (`None`: not listed).
    let mut pending: Option<Vec<CString>> = None;
    // Where we came from: each directory's name in its parent, the parent's identity, and the
    // parent's subdirectories still to remove.
    let mut path: Vec<(CString, (u64, u64), Vec<CString>)> = Vec::new();
    loop {
        let todo = match &mut pending {
            Some(todo) => todo,
            None => {
                let mut subdirs = Vec::new();
                for child in list_dir(cur.as_raw_fd())? {
                    let Ok(m) = fstatat_nofollow(cur.as_raw_fd(), &child) else {
                        continue;
                    };
                    if m.kind == EntryKind::Dir {
                        subdirs.push(child);
                    } else {
                        unlink_entry(cur.as_raw_fd(), &child)?;
                    }
                }
                // Popped from the end: reversed, they go in listing order.
                subdirs.reverse();
                pending.insert(subdirs)
            }
        };
        if let Some(child) = todo.pop() {
            let next = match open_dir_to_empty(cur.as_raw_fd(), &child) {
                Ok(next) => next,
                // Gone since it was listed, or no longer a directory (a file or a link took
                // its place): the next listing of `cur` sees to whatever is there now.
                Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR | libc::ELOOP)) => continue,
                Err(e) => return Err(e),
            };
            let here = dev_ino(cur.as_raw_fd())?;
            path.push((child, here, pending.take().unwrap_or_default()));
            cur = next;
            continue;
        }
        // `cur` was emptied: remove it from its parent, and go on there.
        match path.pop() {
            None => {
                drop(cur);
                if dev_ino(dir)? != top_parent {
                    return Err(moved_while_removed());
                }
                // SAFETY: valid descriptor and C string.
                if unsafe { libc::unlinkat(dir, name.as_ptr(), libc::AT_REMOVEDIR) } == 0 {
                    return Ok(true);
                }
                let e = last_err();
                match e.raw_os_error() {
                    Some(libc::ENOENT) => return Ok(true),
                    Some(libc::ENOTEMPTY | libc::EEXIST) => {
                        refilled()?;
                        cur = open_dir_to_empty(dir, name)?;
                        pending = None;
                    }
                    _ => return Err(e),
                }
            }
            Some((child, parent_id, parent_pending)) => {
                let up = openat(cur.as_raw_fd(), c"..", libc::O_RDONLY | libc::O_DIRECTORY, 0)?;
                if dev_ino(up.as_raw_fd())? != parent_id {
                    return Err(moved_while_removed());
                }
                drop(cur);
                // SAFETY: valid descriptor and C string.
                if unsafe { libc::unlinkat(up.as_raw_fd(), child.as_ptr(), libc::AT_REMOVEDIR) } == 0 {
                    cur = up;
                    pending = Some(parent_pending);
                    continue;
                }
                let e = last_err();
                match e.raw_os_error() {
                    Some(libc::ENOENT) => {
                        cur = up;
                        pending = Some(parent_pending);
                    }
                    Some(libc::ENOTEMPTY | libc::EEXIST) => {
                        refilled()?;
                        cur = open_dir_to_empty(up.as_raw_fd(), &child)?;
                        path.push((child, parent_id, parent_pending));
                        pending = None;
                    }
                    _ => return Err(e),
                }
            }
        }
    }
}

/// Unlinks entry `name` of `dir`, listed as no directory. One already gone, or a directory
/// that took its place since (unlinked later, when the folder is listed again), is fine.
fn unlink_entry(dir: i32, name: &std::ffi::CStr) -> io::Result<()> {
    // SAFETY: valid descriptor and C string; unlinks the entry, never a link's target.
    if unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } != 0 {
        let e = last_err();
        if !matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EISDIR)) {
            return Err(e);
        }
    }
    Ok(())
}

/// Opens directory `name` of `dir` (never through a link) to empty it, with its owner's
/// read, write and search permissions put back first where a command took them away
/// (`chmod 000 d`, `chmod 555 d`): the directory is going anyway, its owner may always change
/// its mode, and a harness not running as root could otherwise neither list nor empty it.
fn open_dir_to_empty(dir: i32, name: &std::ffi::CStr) -> io::Result<OwnedFd> {
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW;
    // (device, inode, permission bits) of an open descriptor.
    let identity = |fd: i32| -> io::Result<(u64, u64, u32)> {
        // SAFETY: `st` is written by the kernel before it is read.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid descriptor and buffer.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(last_err());
        }
        #[allow(clippy::unnecessary_cast)] // the field types differ between platforms
        Ok((st.st_dev as u64, st.st_ino as u64, st.st_mode as u32 & 0o7777))
    };
    let owner_rwx = |mode: u32| mode & 0o700 == 0o700;
    match openat(dir, name, flags, 0) {
        Ok(fd) => {
            let (_, _, mode) = identity(fd.as_raw_fd())?;
            // SAFETY: a valid descriptor of a directory this process opened.
            if !owner_rwx(mode) && unsafe { libc::fchmod(fd.as_raw_fd(), (mode | 0o700) as libc::mode_t) } != 0 {
                return Err(last_err());
            }
            Ok(fd)
        }
        #[cfg(target_os = "linux")]
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            // Unreadable: opened as a path only (which needs no permission on it), its mode
            // changed through that descriptor, then opened for reading as the same directory.
            let handle = openat(dir, name, libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW, 0)?;
            let (dev, ino, mode) = identity(handle.as_raw_fd())?;
            let by_fd = CString::new(format!("/proc/self/fd/{}", handle.as_raw_fd()))
                .map_err(|_| io::Error::other("a descriptor path with a NUL byte"))?;
            // SAFETY: a valid C string; the magic link is the inode just opened, not a path
            // that could be swapped for another.
            if unsafe { libc::chmod(by_fd.as_ptr(), (mode | 0o700) as libc::mode_t) } != 0 {
                return Err(e);
            }
            let fd = openat(dir, name, flags, 0)?;
            let (now_dev, now_ino, _) = identity(fd.as_raw_fd())?;
            if (now_dev, now_ino) != (dev, ino) {
                return Err(moved_while_removed());
            }
            Ok(fd)
        }
        Err(e) => Err(e),
    }
}

/// Removes `path` and everything below it, without following links and without recursion
/// (see [`remove_entry_at`]): for the harness's own trees — private temp dirs, old run folders,
/// what a dead medin left — whose insides a command may have shaped. A missing path is `Ok`.
pub fn remove_tree(path: &Path) -> io::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Some(name) = path.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "refusing to remove a root or `..`",
        ));
    };
    let parent = CString::new(parent.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    let name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the path holds a NUL byte"))?;
    let dir = match openat(libc::AT_FDCWD, &parent, libc::O_RDONLY | libc::O_DIRECTORY, 0) {
        Ok(d) => d,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    remove_entry_at(dir.as_raw_fd(), &name).map(|_| ())
}

/// The names in directory `dir` (without `.` and `..`), read through a duplicate descriptor.
fn list_dir(dir: i32) -> io::Result<Vec<CString>> {
    // fdopendir takes ownership: hand it a duplicate.
    // SAFETY: dup of a valid descriptor.
    let dup = unsafe { libc::fcntl(dir, libc::F_DUPFD_CLOEXEC, 0) };
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
    // SAFETY: rewind the shared offset (a directory read twice through dups shares it).
    unsafe { libc::rewinddir(dirp) };
    let mut names = Vec::new();
    loop {
        // SAFETY: readdir on a valid DIR*; the entry is copied before the next call.
        let ent = unsafe { libc::readdir(dirp) };
        if ent.is_null() {
            break;
        }
        // SAFETY: d_name is a NUL-terminated array inside the entry.
        let name = unsafe { std::ffi::CStr::from_ptr((*ent).d_name.as_ptr()) };
        let b = name.to_bytes();
        if b == b"." || b == b".." {
            continue;
        }
        names.push(name.to_owned());
    }
    // SAFETY: closes the DIR* and the duplicate descriptor.
    unsafe { libc::closedir(dirp) };
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, PathBuf, Beneath) {
        let t = tempfile::tempdir().unwrap();
        let ws = t.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        std::fs::write(t.path().join("secret"), "s3cret").unwrap();
        let b = Beneath::open(&ws).unwrap();
        (t, ws, b)
    }

    /// The same checks with the by-hand walk (what kernels without `openat2` and other Unixes
    /// get).
    #[test]
    fn the_by_hand_walk_refuses_the_same_things() {
        let (t, ws, mut b) = tree();
        b.openat2 = false;
        symlink(t.path().join("secret"), ws.join("final")).unwrap();
        symlink(t.path(), ws.join("dir")).unwrap();
        assert!(matches!(b.read("final", 100), Err(BeneathError::Symlink(_))));
        assert!(matches!(b.read("dir/secret", 100), Err(BeneathError::Symlink(_))));
        assert!(matches!(
            b.write("dir/secret", b"x", None),
            Err(BeneathError::Symlink(_))
        ));
        assert_eq!(std::fs::read_to_string(t.path().join("secret")).unwrap(), "s3cret");
        b.write("a/b.txt", b"ok", None).unwrap();
        assert_eq!(b.read("a/b.txt", 10).unwrap(), b"ok");
        assert!(b.read("missing", 10).unwrap_err().is_not_found());
    }

    #[test]
    fn reads_and_writes_regular_files_beneath() {
        let (_t, ws, b) = tree();
        b.write("a/b/c.txt", b"hi", None).unwrap();
        assert_eq!(std::fs::read(ws.join("a/b/c.txt")).unwrap(), b"hi");
        assert_eq!(b.read("a/./b/../b/c.txt", 10).unwrap(), b"hi");
        assert!(matches!(b.read("a/b/c.txt", 1), Err(BeneathError::TooLarge { .. })));
        assert_eq!(b.entry("a").unwrap().unwrap().kind, EntryKind::Dir);
        assert!(b.entry("nope").unwrap().is_none());
        assert!(b.entry("nope/deeper").unwrap().is_none());
        assert!(b.hash("a/b/c.txt", 10).unwrap().starts_with("sha256:"));
    }

    #[test]
    fn never_follows_links_anywhere() {
        let (t, ws, b) = tree();
        symlink(t.path().join("secret"), ws.join("final")).unwrap();
        symlink(t.path(), ws.join("dir")).unwrap();
        assert!(matches!(b.read("final", 100), Err(BeneathError::Symlink(_))));
        assert!(matches!(b.read("dir/secret", 100), Err(BeneathError::Symlink(_))));
        assert_eq!(b.entry("final").unwrap().unwrap().kind, EntryKind::Symlink);
        assert!(matches!(b.entry("dir/secret"), Err(BeneathError::Symlink(_))));
        // Writing replaces the link itself; the target is untouched.
        b.write("final", b"mine", None).unwrap();
        assert_eq!(std::fs::read_to_string(t.path().join("secret")).unwrap(), "s3cret");
        assert!(!std::fs::symlink_metadata(ws.join("final"))
            .unwrap()
            .file_type()
            .is_symlink());
        // Writing through a linked directory is refused.
        assert!(matches!(
            b.write("dir/secret", b"x", None),
            Err(BeneathError::Symlink(_))
        ));
        assert_eq!(std::fs::read_to_string(t.path().join("secret")).unwrap(), "s3cret");
        assert_eq!(b.read_link("dir").unwrap(), t.path());
        // Removing a link removes the link.
        assert!(b.remove("dir").unwrap());
        assert!(t.path().join("secret").exists());
        assert!(matches!(b.read("../secret", 100), Err(BeneathError::Outside(_))));
        assert!(matches!(b.read("/etc/passwd", 100), Err(BeneathError::Outside(_))));
    }

    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let (_t, ws, b) = tree();
        let fifo = CString::new(ws.join("pipe").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
        assert!(matches!(b.read("pipe", 100), Err(BeneathError::NotRegular { .. })));
        assert!(matches!(b.hash("pipe", 100), Err(BeneathError::NotRegular { .. })));
        symlink("/dev/zero", ws.join("zero")).unwrap();
        assert!(matches!(b.read("zero", 100), Err(BeneathError::Symlink(_))));
    }

    #[test]
    fn walk_lists_without_following_and_respects_skip_and_bounds() {
        let (t, ws, b) = tree();
        std::fs::create_dir_all(ws.join("src/deep")).unwrap();
        std::fs::write(ws.join("src/deep/x.rs"), "x").unwrap();
        std::fs::create_dir(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/HEAD"), "h").unwrap();
        symlink(t.path(), ws.join("out")).unwrap();
        let w = b.walk(WalkLimits::default(), |rel, _| rel == ".git").unwrap();
        let names: Vec<_> = w.entries.iter().map(|e| e.rel.as_str()).collect();
        assert_eq!(names, ["out", "src", "src/deep", "src/deep/x.rs"]);
        assert_eq!(w.entries[0].meta.kind, EntryKind::Symlink);
        let w = b
            .walk(
                WalkLimits {
                    max_entries: 2,
                    max_depth: 64,
                },
                |_, _| false,
            )
            .unwrap();
        assert!(w.truncated);
        assert_eq!(w.entries.len(), 2);
    }

    #[test]
    fn the_opened_root_survives_being_swapped_for_a_link() {
        let (t, ws, b) = tree();
        b.write("f", b"1", None).unwrap();
        std::fs::rename(&ws, t.path().join("moved")).unwrap();
        symlink(t.path(), &ws).unwrap();
        b.write("g", b"2", None).unwrap();
        assert!(t.path().join("moved/g").exists());
        assert!(!t.path().join("g").exists());
        assert!(matches!(Beneath::open(&ws), Err(BeneathError::Symlink(_))));
    }

    #[test]
    fn a_very_deep_tree_is_removed_without_recursion() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("deep");
        std::fs::create_dir(&top).unwrap();
        // 20,000 levels: far past any thread's stack for a recursive removal, and past
        // PATH_MAX, so it is built one level at a time through descriptors.
        let mut fd = openat(
            libc::AT_FDCWD,
            &CString::new(top.as_os_str().as_bytes()).unwrap(),
            libc::O_RDONLY | libc::O_DIRECTORY,
            0,
        )
        .unwrap();
        for i in 0..20_000 {
            // SAFETY: valid descriptor and C string.
            assert_eq!(unsafe { libc::mkdirat(fd.as_raw_fd(), c"d".as_ptr(), 0o755) }, 0);
            if i % 1000 == 0 {
                // SAFETY: as above.
                let f = unsafe {
                    libc::openat(
                        fd.as_raw_fd(),
                        c"f".as_ptr(),
                        libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                        0o644,
                    )
                };
                assert!(f >= 0);
                // SAFETY: a descriptor we own.
                unsafe { libc::close(f) };
            }
            fd = openat(fd.as_raw_fd(), c"d", libc::O_RDONLY | libc::O_DIRECTORY, 0).unwrap();
        }
        drop(fd);
        std::os::unix::fs::symlink(t.path(), top.join("d/link")).unwrap();
        std::fs::write(t.path().join("keep"), "k").unwrap();
        remove_tree(&top).unwrap();
        assert!(!top.exists());
        assert!(t.path().join("keep").exists(), "the link's target survived");
        remove_tree(&top).unwrap();
    }

    #[test]
    fn remove_takes_whole_trees_without_leaving_the_root() {
        let (t, ws, b) = tree();
        std::fs::create_dir_all(ws.join("d/e")).unwrap();
        std::fs::write(ws.join("d/e/f"), "f").unwrap();
        symlink(t.path(), ws.join("d/link")).unwrap();
        assert!(b.remove("d").unwrap());
        assert!(!ws.join("d").exists());
        assert!(t.path().join("secret").exists());
        assert!(!b.remove("d").unwrap());
    }

    #[test]
    fn a_wide_tree_is_removed_in_time_proportional_to_its_size() {
        // Listing a folder again after each of its subdirectories made removal quadratic
        // (minutes for 20,000). Compared, not timed: 8x the entries must cost far less than
        // the 64x a quadratic removal would, whatever the machine's load. A burst of load
        // during one measurement can stretch it (CI saw 41x once, with builds running beside
        // it), so the pair is measured up to three times: a linear removal comes in under the
        // bound on some attempt, a quadratic one never does.
        let (_t, ws, b) = tree();
        let mut ratios = Vec::new();
        for attempt in 0..3 {
            let mut took = Vec::new();
            for n in [1_000usize, 8_000] {
                let name = format!("wide{n}-{attempt}");
                std::fs::create_dir(ws.join(&name)).unwrap();
                for i in 0..n {
                    std::fs::create_dir(ws.join(&name).join(format!("d{i}"))).unwrap();
                }
                let started = std::time::Instant::now();
                assert!(b.remove(&name).unwrap());
                took.push(started.elapsed().as_secs_f64());
                assert!(!ws.join(&name).exists());
            }
            ratios.push(took[1] / took[0].max(1e-6));
            if ratios[attempt] < 32.0 {
                return;
            }
        }
        panic!("8x the entries took {ratios:.1?}x the time in three attempts");
    }

    #[test]
    fn a_tree_refilled_while_it_is_removed_ends_the_removal_instead_of_chasing_it() {
        let (_t, ws, b) = tree();
        std::fs::create_dir(ws.join("busy")).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, ws) = (stop.clone(), ws.clone());
            std::thread::spawn(move || {
                let mut i = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let _ = std::fs::create_dir_all(ws.join(format!("busy/d{i}/e")));
                    let _ = std::fs::write(ws.join(format!("busy/f{i}")), "x");
                    i += 1;
                }
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        let started = std::time::Instant::now();
        let removed = b.remove("busy");
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        // A chase would never end; what follows the patience is deleting what was listed, which
        // a loaded 2-core machine (CI next to other builds) stretches: the bound is generous.
        assert!(started.elapsed() < REFILL_PATIENCE + std::time::Duration::from_secs(90));
        match removed {
            Ok(_) => {}
            Err(e) => assert!(e.changed_meanwhile(), "{e}"),
        }
        let _ = b.remove("busy");
    }
}
