//! A transaction's checkpoint: the workspace as it was before the first step, copied into a
//! folder of the harness (`<run folder>/transactions/<id>/`), and put back exactly on rollback.
//!
//! Taking it: the workspace is walked beneath its root without following any link
//! ([`Beneath::walk`]); every directory is recorded with its mode, every symlink with its
//! target text (never followed), every FIFO with its mode (recreated empty: a FIFO holds no
//! data), and every regular file is copied, streamed, to the end of the checkpoint's one pack
//! file (a file per copy would cost more than the copying on a busy disk), with its SHA-256,
//! mode and `fstat` stamp. Files are opened `O_NONBLOCK` and checked before a byte is read, so
//! a FIFO never blocks it. A socket or a device cannot be put back: a workspace holding one is
//! refused ([`Refusal::Special`]). The checkpoint is bounded ([`CheckpointLimits`]: bytes and
//! entries); past a bound it is refused before anything is copied, so a transaction is never
//! half-checkpointed. Nothing of `.git` is skipped: a step may commit.
//!
//! Putting it back ([`Checkpoint::restore`]), in rounds until the workspace equals the
//! checkpoint:
//!
//! 1. every entry that is not in the checkpoint, or is of another kind there (a folder that a
//!    step replaced by a symlink to `/etc`, a file made a folder, a socket where a FIFO was),
//!    or a symlink with another target, is removed — the entry itself, never what a link points at;
//! 2. in path order (parents first) what is missing is made again: folders, files (written to
//!    a temporary name and renamed over, so a link or a hard link at the name is replaced,
//!    never written through), symlinks, FIFOs; a file still there is kept when its stamp
//!    (device, inode, size, mode, mtime, ctime — the kernel sets ctime on every change) is the
//!    one the checkpoint saw and was not taken within the racy window, else its content is
//!    compared with the copy and rewritten when it differs;
//! 3. modes are set children first (a read-only folder is filled before it is closed);
//! 4. the workspace is walked again and compared; a difference — a process a step left
//!    running writes meanwhile — starts another round, at most [`RESTORE_ROUNDS`]; a
//!    workspace that does not settle is a [`RestoreError`], never a silent half state.
//!
//! Every operation goes through [`Beneath`]: nothing a step planted can make the harness read
//! or write outside the workspace. What is not put back: timestamps, owners, extended
//! attributes, set-id bits (the harness never writes a set-id file), and hard links between
//! two workspace files that a step broke (each name gets its own copy back).

use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use crate::sandbox::{Beneath, BeneathError, EntryKind, WalkLimits};

/// How much a checkpoint may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointLimits {
    /// Bytes of regular files copied.
    pub max_bytes: u64,
    /// Entries (files, folders, links, FIFOs) below the root.
    pub max_entries: usize,
}

impl Default for CheckpointLimits {
    /// 256 MiB in 50,000 entries (the bound of the change snapshots).
    fn default() -> Self {
        CheckpointLimits {
            max_bytes: 256 * 1024 * 1024,
            max_entries: 50_000,
        }
    }
}

/// Folder levels a checkpoint follows below the root (deeper is refused, never cut).
const MAX_DEPTH: usize = 128;

/// The file in a checkpoint's folder that holds the copies of all its files.
const PACK: &str = "pack";

/// Rounds of putting back before a workspace that keeps changing is reported as unsettled.
pub const RESTORE_ROUNDS: u32 = 3;

/// A stamp changed within this of the checkpoint is not trusted: its content is compared.
const RACY_WINDOW: Duration = Duration::from_millis(100);

/// Why a workspace cannot be checkpointed. The transaction is refused before any step runs.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    #[error("the workspace holds {bytes} bytes of files, more than the {limit} a checkpoint may copy; make the workspace smaller or do the work without a transaction")]
    TooLarge { bytes: u64, limit: u64 },
    #[error("the workspace holds more than {limit} entries, more than a checkpoint may record; do the work without a transaction")]
    TooMany { limit: usize },
    #[error(
        "the workspace is nested deeper than {limit} folders at `{path}`; a checkpoint does not follow it that far"
    )]
    TooDeep { path: String, limit: usize },
    #[error("`{path}` is a {kind}, which a checkpoint cannot put back; remove it before the transaction")]
    Special { path: String, kind: &'static str },
    #[error("cannot read `{path}` for the checkpoint: {source}")]
    Unreadable {
        path: String,
        #[source]
        source: BeneathError,
    },
}

/// Why a checkpoint could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The workspace cannot be checkpointed as it is (the agent's doing): the transaction is
    /// refused with this reason.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The harness could not write its copy (its run folder): a harness failure.
    #[error("cannot write the checkpoint in {path}: {source}")]
    Store {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// A rollback that could not complete: the workspace is in neither state.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error("cannot put `{path}` back: {source}")]
    Failed {
        path: String,
        #[source]
        source: BeneathError,
    },
    #[error("cannot read the checkpoint's copy of `{path}`: {source}")]
    Copy {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the workspace kept changing while it was put back ({rounds} rounds; still different: {})", .differences.join(", "))]
    Unsettled { rounds: u32, differences: Vec<String> },
}

/// What `fstat` says of a file: enough to tell any change to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mode: u32,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl Stamp {
    fn of(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mode: m.mode(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        }
    }

    /// Whether the stamp was set long enough before `at` that a later change must move it.
    fn settled_before(&self, at: SystemTime) -> bool {
        let at_ns = at.duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as i128).unwrap_or(0);
        at_ns - self.mtime_ns.max(self.ctime_ns) >= RACY_WINDOW.as_nanos() as i128
    }
}

/// One entry of the checkpoint.
#[derive(Debug, Clone)]
struct Saved {
    rel: String,
    /// Permission bits (`0o7777`).
    mode: u32,
    what: SavedKind,
}

#[derive(Debug, Clone)]
enum SavedKind {
    Dir,
    File {
        /// Where its copy starts in the checkpoint's pack.
        offset: u64,
        size: u64,
        hash: String,
        /// The stamp as the copy was taken; `None` when it was too recent to trust.
        stamp: Option<Stamp>,
    },
    Symlink {
        target: PathBuf,
    },
    Fifo,
}

impl SavedKind {
    fn matches(&self, kind: EntryKind) -> bool {
        matches!(
            (self, kind),
            (SavedKind::Dir, EntryKind::Dir)
                | (SavedKind::File { .. }, EntryKind::File)
                | (SavedKind::Symlink { .. }, EntryKind::Symlink)
                | (SavedKind::Fifo, EntryKind::Special)
        )
    }
}

/// The workspace as it was, kept until the transaction ends.
#[derive(Debug)]
pub struct Checkpoint {
    store: PathBuf,
    root_mode: u32,
    entries: Vec<Saved>,
    bytes: u64,
}

/// What a rollback did.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Restored {
    /// Entries removed (created by the steps, or of another kind than before).
    pub removed: Vec<String>,
    /// Entries made again or rewritten (removed or changed by the steps).
    pub restored: Vec<String>,
    /// Entries whose mode was put back.
    pub modes: Vec<String>,
    /// Rounds it took to settle.
    pub rounds: u32,
}

impl Checkpoint {
    /// Copies `workspace` into `store` (a folder of the harness, made here; it must not exist
    /// yet). Refused when the workspace breaks `limits` or holds what cannot be put back.
    pub fn take(workspace: &Path, store: &Path, limits: CheckpointLimits) -> Result<Checkpoint, CheckpointError> {
        let unreadable = |path: &str, source: BeneathError| {
            CheckpointError::Refused(Refusal::Unreadable {
                path: path.to_string(),
                source,
            })
        };
        let b = Beneath::open(workspace).map_err(|e| unreadable(".", e))?;
        let root_mode = b.entry(".").ok().flatten().map(|m| m.mode).unwrap_or(0o755);
        let walk = b
            .walk(
                WalkLimits {
                    max_entries: limits.max_entries,
                    max_depth: MAX_DEPTH,
                },
                |_, _| false,
            )
            .map_err(|e| unreadable(".", e))?;
        if walk.truncated {
            return Err(Refusal::TooMany {
                limit: limits.max_entries,
            }
            .into());
        }
        // Every bound is checked before a byte is copied.
        let mut bytes: u64 = 0;
        for e in &walk.entries {
            match e.meta.kind {
                EntryKind::File => bytes = bytes.saturating_add(e.meta.size),
                EntryKind::Dir if e.rel.matches('/').count() >= MAX_DEPTH => {
                    return Err(Refusal::TooDeep {
                        path: e.rel.clone(),
                        limit: MAX_DEPTH,
                    }
                    .into())
                }
                EntryKind::Special if !is_fifo(&b, &e.rel) => {
                    return Err(Refusal::Special {
                        path: e.rel.clone(),
                        kind: "socket or device",
                    }
                    .into())
                }
                _ => {}
            }
        }
        if bytes > limits.max_bytes {
            return Err(Refusal::TooLarge {
                bytes,
                limit: limits.max_bytes,
            }
            .into());
        }
        let store_err = |path: &Path, source: std::io::Error| CheckpointError::Store {
            path: path.to_path_buf(),
            source,
        };
        std::fs::create_dir_all(store.parent().unwrap_or(store)).map_err(|e| store_err(store, e))?;
        std::fs::create_dir(store).map_err(|e| store_err(store, e))?;
        // One pack file holds every copy, end to end: making a file per copy costs more than
        // the copying on a busy disk.
        let pack_path = store.join(PACK);
        let mut pack = std::fs::File::create_new(&pack_path).map_err(|e| store_err(&pack_path, e))?;
        let taken_at = SystemTime::now();
        let mut copied: u64 = 0;
        let mut entries = Vec::with_capacity(walk.entries.len());
        for e in &walk.entries {
            let what = match e.meta.kind {
                EntryKind::Dir => SavedKind::Dir,
                EntryKind::Special => SavedKind::Fifo,
                EntryKind::Symlink => SavedKind::Symlink {
                    target: b.read_link(&e.rel).map_err(|s| unreadable(&e.rel, s))?,
                },
                EntryKind::File => {
                    let (file, _) = b.open_file(&e.rel).map_err(|s| unreadable(&e.rel, s))?;
                    let meta = file.metadata().map_err(|source| {
                        unreadable(
                            &e.rel,
                            BeneathError::Io {
                                op: "inspect",
                                path: e.rel.clone(),
                                source,
                            },
                        )
                    })?;
                    let stamp = Stamp::of(&meta);
                    let budget = limits.max_bytes.saturating_sub(copied);
                    let offset = copied;
                    let (size, hash) = copy_hashed(file, &mut pack, budget).map_err(|c| match c {
                        Copied::Store(e) => store_err(&pack_path, e),
                        Copied::Read(source) => unreadable(
                            &e.rel,
                            BeneathError::Io {
                                op: "read",
                                path: e.rel.clone(),
                                source,
                            },
                        ),
                        Copied::Grew => CheckpointError::Refused(Refusal::TooLarge {
                            bytes: copied.saturating_add(budget).saturating_add(1),
                            limit: limits.max_bytes,
                        }),
                    })?;
                    copied = copied.saturating_add(size);
                    SavedKind::File {
                        offset,
                        size,
                        hash,
                        stamp: (stamp.size == size && stamp.settled_before(taken_at)).then_some(stamp),
                    }
                }
            };
            // Set-id bits are not kept: the harness never makes a set-id file or folder.
            let mode = match what {
                SavedKind::Dir => e.meta.mode & 0o1777,
                _ => e.meta.mode & 0o777,
            };
            entries.push(Saved {
                rel: e.rel.clone(),
                mode,
                what,
            });
        }
        Ok(Checkpoint {
            store: store.to_path_buf(),
            root_mode,
            entries,
            bytes: copied,
        })
    }

    /// What the checkpoint holds, for its receipt.
    pub fn summary(&self) -> serde_json::Value {
        let count = |f: fn(&SavedKind) -> bool| self.entries.iter().filter(|e| f(&e.what)).count();
        serde_json::json!({
            "entries": self.entries.len(),
            "files": count(|k| matches!(k, SavedKind::File { .. })),
            "dirs": count(|k| matches!(k, SavedKind::Dir)),
            "symlinks": count(|k| matches!(k, SavedKind::Symlink { .. })),
            "fifos": count(|k| matches!(k, SavedKind::Fifo)),
            "bytes": self.bytes,
        })
    }

    /// Puts the workspace back as it was when the checkpoint was taken (see the module doc).
    pub fn restore(&self, workspace: &Path) -> Result<Restored, RestoreError> {
        let b = Beneath::open(workspace).map_err(|source| RestoreError::Failed {
            path: ".".into(),
            source,
        })?;
        let mut done = Restored::default();
        let mut differences = Vec::new();
        for round in 1..=RESTORE_ROUNDS {
            done.rounds = round;
            // A round that failed on the way (a process the steps left running took a name
            // meanwhile) is tried again; the last round's failure is the answer.
            let found = self
                .restore_round(&b, &mut done)
                .and_then(|seen| self.differences(&b, &seen));
            match found {
                Ok(d) if d.is_empty() => return Ok(done),
                Ok(d) => differences = d,
                Err(e) if round == RESTORE_ROUNDS => return Err(e),
                Err(e) => differences = vec![e.to_string()],
            }
        }
        Err(RestoreError::Unsettled {
            rounds: RESTORE_ROUNDS,
            differences: differences.into_iter().take(20).collect(),
        })
    }

    /// One round of putting back; returns the stamp of every file as it was left.
    fn restore_round(&self, b: &Beneath, done: &mut Restored) -> Result<HashMap<String, Stamp>, RestoreError> {
        let failed = |path: &str, source: BeneathError| RestoreError::Failed {
            path: path.to_string(),
            source,
        };
        let wanted: HashMap<&str, &Saved> = self.entries.iter().map(|e| (e.rel.as_str(), e)).collect();
        // The root is the harness's to enter and write while it works.
        b.set_mode(".", self.root_mode | 0o700).map_err(|e| failed(".", e))?;
        // 1. What must go.
        let current = walk_all(b).map_err(|e| failed(".", e))?;
        let mut gone: Option<String> = None;
        for e in &current {
            if gone.as_ref().is_some_and(|g| e.rel.starts_with(&format!("{g}/"))) {
                continue;
            }
            let keep = match wanted.get(e.rel.as_str()) {
                None => false,
                Some(saved) if !saved.what.matches(e.meta.kind) => false,
                Some(Saved {
                    what: SavedKind::Symlink { target },
                    ..
                }) => b.read_link(&e.rel).is_ok_and(|t| &t == target),
                // A socket or a device a step put in the FIFO's place goes: the walk calls all
                // three special.
                Some(Saved {
                    what: SavedKind::Fifo, ..
                }) => is_fifo(b, &e.rel),
                Some(_) => true,
            };
            if keep {
                // A folder kept must take what goes back into it.
                if e.meta.kind == EntryKind::Dir && e.meta.mode & 0o700 != 0o700 {
                    b.set_mode(&e.rel, e.meta.mode | 0o700).map_err(|s| failed(&e.rel, s))?;
                }
                continue;
            }
            b.remove(&e.rel).map_err(|s| failed(&e.rel, s))?;
            done.removed.push(e.rel.clone());
            gone = Some(e.rel.clone());
        }
        // 2. What must be there, parents first.
        let mut stamps = HashMap::new();
        let pack_path = self.store.join(PACK);
        let mut pack: Option<std::fs::File> = None;
        for saved in &self.entries {
            let rel = saved.rel.as_str();
            let there = b.entry(rel).map_err(|s| failed(rel, s))?;
            match &saved.what {
                SavedKind::Dir => {
                    if there.is_none() {
                        b.make_dir(rel, 0o700).map_err(|s| failed(rel, s))?;
                        done.restored.push(saved.rel.clone());
                    } else if there.is_some_and(|m| m.mode & 0o700 != 0o700) {
                        b.set_mode(rel, 0o700 | saved.mode).map_err(|s| failed(rel, s))?;
                    }
                }
                SavedKind::Symlink { target } => {
                    if there.is_none() {
                        b.symlink(rel, target).map_err(|s| failed(rel, s))?;
                        done.restored.push(saved.rel.clone());
                    }
                }
                SavedKind::Fifo => {
                    if there.is_none() {
                        b.make_fifo(rel, saved.mode).map_err(|s| failed(rel, s))?;
                        done.restored.push(saved.rel.clone());
                    }
                }
                SavedKind::File {
                    offset,
                    size,
                    hash,
                    stamp,
                } => {
                    let kept = match b.open_file(rel) {
                        Ok((file, _)) => same_file(file, *size, hash, stamp.as_ref()),
                        Err(_) => None,
                    };
                    let now = match kept {
                        Some(now) => now,
                        None => {
                            let copy_err = |source| RestoreError::Copy {
                                path: saved.rel.clone(),
                                source,
                            };
                            let file = match &mut pack {
                                Some(f) => f,
                                None => pack.insert(std::fs::File::open(&pack_path).map_err(copy_err)?),
                            };
                            file.seek(std::io::SeekFrom::Start(*offset)).map_err(copy_err)?;
                            let mut copy = Read::by_ref(file).take(*size);
                            b.write_from(rel, &mut copy, Some(saved.mode))
                                .map_err(|s| failed(rel, s))?;
                            done.restored.push(saved.rel.clone());
                            let (file, _) = b.open_file(rel).map_err(|s| failed(rel, s))?;
                            let meta = file.metadata().map_err(|source| RestoreError::Copy {
                                path: saved.rel.clone(),
                                source,
                            })?;
                            Stamp::of(&meta)
                        }
                    };
                    stamps.insert(saved.rel.clone(), now);
                }
            }
        }
        // 3. Modes, children first.
        for saved in self.entries.iter().rev() {
            let Some(now) = b.entry(&saved.rel).map_err(|s| failed(&saved.rel, s))? else {
                continue;
            };
            if matches!(saved.what, SavedKind::Symlink { .. }) || now.mode & 0o7777 == saved.mode {
                continue;
            }
            b.set_mode(&saved.rel, saved.mode).map_err(|s| failed(&saved.rel, s))?;
            done.modes.push(saved.rel.clone());
            if let Some(stamp) = stamps.get_mut(&saved.rel) {
                if let Ok((file, _)) = b.open_file(&saved.rel) {
                    if let Ok(meta) = file.metadata() {
                        *stamp = Stamp::of(&meta);
                    }
                }
            }
        }
        let root_now = b.entry(".").ok().flatten().map(|m| m.mode);
        if root_now != Some(self.root_mode) {
            b.set_mode(".", self.root_mode).map_err(|e| failed(".", e))?;
        }
        Ok(stamps)
    }

    /// How the workspace differs from the checkpoint now (files judged by the stamps the
    /// round left them with).
    fn differences(&self, b: &Beneath, files: &HashMap<String, Stamp>) -> Result<Vec<String>, RestoreError> {
        let current = walk_all(b).map_err(|source| RestoreError::Failed {
            path: ".".into(),
            source,
        })?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let wanted: HashMap<&str, &Saved> = self.entries.iter().map(|e| (e.rel.as_str(), e)).collect();
        for e in &current {
            seen.insert(e.rel.as_str());
            let Some(saved) = wanted.get(e.rel.as_str()) else {
                out.push(format!("`{}` appeared", e.rel));
                continue;
            };
            if !saved.what.matches(e.meta.kind) {
                out.push(format!("`{}` is a {}", e.rel, e.meta.kind.describe()));
                continue;
            }
            if !matches!(saved.what, SavedKind::Symlink { .. }) && e.meta.mode & 0o7777 != saved.mode {
                out.push(format!("`{}` has mode {:o}", e.rel, e.meta.mode));
                continue;
            }
            match &saved.what {
                SavedKind::Symlink { target } if b.read_link(&e.rel).ok().as_ref() != Some(target) => {
                    out.push(format!("`{}` points elsewhere", e.rel));
                }
                SavedKind::Fifo if !is_fifo(b, &e.rel) => {
                    out.push(format!("`{}` is a socket or a device, not a FIFO", e.rel));
                }
                SavedKind::File { .. } => {
                    let now = b
                        .open_file(&e.rel)
                        .ok()
                        .and_then(|(f, _)| f.metadata().ok())
                        .map(|m| Stamp::of(&m));
                    if now.is_none() || now.as_ref() != files.get(&e.rel) {
                        out.push(format!("`{}` changed", e.rel));
                    }
                }
                _ => {}
            }
        }
        for saved in &self.entries {
            if !seen.contains(saved.rel.as_str()) {
                out.push(format!("`{}` is missing", saved.rel));
            }
        }
        Ok(out)
    }
}

impl Drop for Checkpoint {
    /// The copy is the harness's scratch: it goes with the transaction.
    fn drop(&mut self) {
        let _ = crate::sandbox::remove_tree(&self.store);
    }
}

/// Whether `rel` is a FIFO, not a socket or a device (the walk calls all three special). Told
/// apart by an lstat of the path: only the kind is read, never content.
fn is_fifo(b: &Beneath, rel: &str) -> bool {
    std::fs::symlink_metadata(b.path().join(rel)).is_ok_and(|m| m.file_type().is_fifo())
}

/// Every entry below the root, no link followed, deep enough for any checkpoint.
fn walk_all(b: &Beneath) -> Result<Vec<crate::sandbox::WalkEntry>, BeneathError> {
    b.walk(
        WalkLimits {
            max_entries: usize::MAX,
            max_depth: MAX_DEPTH + 1,
        },
        |_, _| false,
    )
    .map(|w| w.entries)
}

enum Copied {
    Store(std::io::Error),
    Read(std::io::Error),
    /// The file grew past what the checkpoint may still copy.
    Grew,
}

/// Appends `from` to `out`, at most `budget` bytes; returns the size and `sha256:<hex>` of
/// what was copied.
fn copy_hashed(from: std::fs::File, out: &mut std::fs::File, budget: u64) -> Result<(u64, String), Copied> {
    use std::io::Write;
    let mut hasher = Sha256::new();
    let mut reader = from.take(budget.saturating_add(1));
    let mut buf = vec![0u8; 64 * 1024];
    let mut total: u64 = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Copied::Read(e)),
        };
        total += n as u64;
        if total > budget {
            return Err(Copied::Grew);
        }
        hasher.update(&buf[..n]);
        out.write_all(&buf[..n]).map_err(Copied::Store)?;
    }
    out.flush().map_err(Copied::Store)?;
    Ok((total, format!("sha256:{}", hex::encode(hasher.finalize()))))
}

/// The stamp of `file` when it still holds what the checkpoint copied (its stamp unchanged,
/// or else its content equal), `None` when it must be rewritten.
fn same_file(mut file: std::fs::File, size: u64, hash: &str, stamp: Option<&Stamp>) -> Option<Stamp> {
    let meta = file.metadata().ok()?;
    let now = Stamp::of(&meta);
    if now.size != size {
        return None;
    }
    // The mode is set apart (step 3): compare everything else.
    let same_stamp = stamp.is_some_and(|s| Stamp { mode: now.mode, ..*s } == now);
    if same_stamp {
        return Some(now);
    }
    let now_hash = crate::tools::receipt::sha256_read(&mut file, size).ok().flatten()?;
    (now_hash == hash).then_some(now)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(ws: &Path, rel: &str, text: &str) {
        let p = ws.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn a_restore_undoes_writes_removals_creations_and_modes() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        write(&ws, "a.txt", "a\n");
        write(&ws, "src/lib.rs", "fn x() {}\n");
        std::fs::set_permissions(ws.join("a.txt"), std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink("a.txt", ws.join("link")).unwrap();
        let cp = Checkpoint::take(&ws, &dir.path().join("cp"), CheckpointLimits::default()).unwrap();
        write(&ws, "a.txt", "changed\n");
        std::fs::set_permissions(ws.join("a.txt"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::remove_dir_all(ws.join("src")).unwrap();
        write(&ws, "new/deep/file", "x");
        std::fs::remove_file(ws.join("link")).unwrap();
        std::os::unix::fs::symlink("/etc", ws.join("link")).unwrap();
        let done = cp.restore(&ws).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "a\n");
        assert_eq!(
            std::fs::metadata(ws.join("a.txt")).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(), "fn x() {}\n");
        assert!(!ws.join("new").exists());
        assert_eq!(std::fs::read_link(ws.join("link")).unwrap(), Path::new("a.txt"));
        assert_eq!(done.rounds, 1, "{done:?}");
    }

    #[test]
    fn a_folder_replaced_by_a_link_out_is_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let outside = dir.path().join("outside");
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::create_dir(&ws).unwrap();
        write(&ws, "conf/app.cfg", "setting=1\n");
        let cp = Checkpoint::take(&ws, &dir.path().join("cp"), CheckpointLimits::default()).unwrap();
        std::fs::remove_dir_all(ws.join("conf")).unwrap();
        std::os::unix::fs::symlink(&outside, ws.join("conf")).unwrap();
        cp.restore(&ws).unwrap();
        assert!(std::fs::symlink_metadata(ws.join("conf")).unwrap().is_dir());
        assert_eq!(std::fs::read_to_string(ws.join("conf/app.cfg")).unwrap(), "setting=1\n");
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            0,
            "nothing written outside"
        );
    }

    #[test]
    fn a_hard_link_to_an_outside_file_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        write(&ws, "f", "before\n");
        let cp = Checkpoint::take(&ws, &dir.path().join("cp"), CheckpointLimits::default()).unwrap();
        let outside = dir.path().join("outside.txt");
        std::fs::write(&outside, "outside\n").unwrap();
        std::fs::remove_file(ws.join("f")).unwrap();
        std::fs::hard_link(&outside, ws.join("f")).unwrap();
        cp.restore(&ws).unwrap();
        assert_eq!(std::fs::read_to_string(ws.join("f")).unwrap(), "before\n");
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n");
    }

    #[test]
    fn bounds_refuse_before_anything_is_copied() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir(&ws).unwrap();
        write(&ws, "big", &"x".repeat(2000));
        let limits = CheckpointLimits {
            max_bytes: 1000,
            max_entries: 10,
        };
        let err = Checkpoint::take(&ws, &dir.path().join("cp"), limits).unwrap_err();
        assert!(
            matches!(err, CheckpointError::Refused(Refusal::TooLarge { .. })),
            "{err}"
        );
        assert!(!dir.path().join("cp").exists());
    }
}
