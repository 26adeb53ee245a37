//! Watching the evidence while a verdict is taken from it.
//!
//! Under an attempt's namespaces a service the agent started lives on through the final
//! judged phase (the verifier's tests call it), and so does anything else the agent left
//! running: a loop that rewrites the hidden tests or the shipped test files after the harness
//! put them in place, and puts them back before anyone looks. Restoring files before the phase
//! and checking them after cannot see that. So for the length of the phase the harness
//! watches every file the verdict rests on — the protected files it restored, the hidden
//! checks and the verifier's files it placed:
//!
//! - **their folders** (inotify): any write, attribute change, removal, rename or creation of
//!   one of those names, and any move or removal of a folder that holds them;
//! - **the files themselves** (inotify on each inode): a write, a mode change or a new hard
//!   link reaches the inode however it was named — through a link made in another folder,
//!   whose own folder the watch above never sees;
//! - **their content** ([`Evidence`]), compared with what the harness put there once the watch
//!   is in place and again when the phase ends: a change made between the put-back and the
//!   watch's start (a leftover woken by the put-back itself) is seen by the first comparison,
//!   one that leaves no event at all (a write through a shared memory map) by the second,
//!   unless it was undone in between (see the README's security section).
//!
//! Any of these, by anyone (the judged run's own code included, since it is the agent's), is
//! reported as tampering and the attempt cannot pass. Files the runners write next to tests
//! (`__pycache__`, `.pytest_cache`) and new files of other names are not evidence and are not
//! watched; neither is reading. An event queue that overflowed is reported as tampering too:
//! what changed can no longer be known.
//!
//! A write is seen by `IN_MODIFY`, never by `IN_CLOSE_WRITE`: that close event fires when the
//! last reference to a writable descriptor goes, and the harness's own descriptor of a file it
//! just put in place can go late: a child forked by another of its threads while the file
//! was open holds a copy until it execs (close-on-exec closes it then), which may be after the
//! watch began. A close writes nothing; every write through any descriptor is an `IN_MODIFY`.
//!
//! Linux only (inotify); elsewhere nothing of the agent's runs during the phase (there are no
//! attempt namespaces, and the persistent shell is ended before it).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use sha2::{Digest, Sha256};

use super::Tampering;
use crate::sandbox::{Beneath, EntryKind};

/// Largest evidence file compared by content (hidden checks and pristine files are smaller).
const MAX_EVIDENCE_BYTES: u64 = 64 * 1024 * 1024;

/// One file a judged phase rests on, as the harness put it in place.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// Workspace-relative path.
    pub rel: &'a str,
    pub bytes: &'a [u8],
    /// Permission bits it was written with.
    pub mode: u32,
}

/// What a watched name's folder or inode stands for.
enum Watched {
    /// A folder: its workspace path and the names in it that are evidence.
    Folder(String, BTreeSet<OsString>),
    /// An evidence file's inode, by its workspace path.
    File(String),
}

/// An inotify watch over the files one judged phase rests on.
pub struct EvidenceWatch {
    inotify: Inotify,
    watched: BTreeMap<WatchDescriptor, Watched>,
    /// Path → SHA-256 and permission bits of what the harness put there.
    expected: BTreeMap<String, ([u8; 32], u32)>,
    /// What already differed when the watch started.
    early: Vec<Tampering>,
}

impl EvidenceWatch {
    /// Starts watching `evidence` in the workspace `ws`, then compares each file with what the
    /// harness put there. Files that do not exist are watched by name in their folder.
    pub fn start<'a>(ws: &Beneath, evidence: impl IntoIterator<Item = Evidence<'a>>) -> std::io::Result<EvidenceWatch> {
        let root = ws.path();
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).map_err(std::io::Error::from)?;
        let mut by_folder: BTreeMap<String, BTreeSet<OsString>> = BTreeMap::new();
        let mut expected = BTreeMap::new();
        for e in evidence {
            let p = Path::new(e.rel);
            let (Some(name), parent) = (p.file_name(), p.parent()) else {
                continue;
            };
            let folder = parent.map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
            by_folder.entry(folder).or_default().insert(name.to_os_string());
            expected.insert(e.rel.to_string(), (sha256(e.bytes), e.mode & 0o777));
        }
        let mut watched = BTreeMap::new();
        let folder_mask = AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_ATTRIB
            | AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MOVED_FROM
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_DONT_FOLLOW
            | AddWatchFlags::IN_ONLYDIR;
        for (folder, names) in by_folder {
            let dir = if folder.is_empty() {
                root.to_path_buf()
            } else {
                root.join(&folder)
            };
            // A folder that is not there (or is a link: IN_DONT_FOLLOW | IN_ONLYDIR refuse it)
            // holds none of the evidence now; the comparison below reports it.
            if let Ok(wd) = inotify.add_watch(&dir, folder_mask) {
                watched.insert(wd, Watched::Folder(folder, names));
            }
        }
        // Each file's inode: a link count change (a hard link made elsewhere), a write or a mode
        // change through any of its names.
        let file_mask = AddWatchFlags::IN_MODIFY | AddWatchFlags::IN_ATTRIB | AddWatchFlags::IN_DONT_FOLLOW;
        for rel in expected.keys() {
            if let Ok(wd) = inotify.add_watch(&root.join(rel), file_mask) {
                watched.insert(wd, Watched::File(rel.clone()));
            }
        }
        let mut w = EvidenceWatch {
            inotify,
            watched,
            expected,
            early: Vec::new(),
        };
        w.early = w.compare(
            ws,
            "changed after the harness put it in place, before the judged run started",
        );
        Ok(w)
    }

    /// The evidence files whose content, kind or mode is not what the harness put there.
    fn compare(&self, ws: &Beneath, when: &str) -> Vec<Tampering> {
        let mut out = Vec::new();
        for (rel, (hash, mode)) in &self.expected {
            let what = match ws.entry(rel) {
                Ok(Some(m)) if m.kind == EntryKind::File => match ws.read(rel, MAX_EVIDENCE_BYTES) {
                    Ok(bytes) if sha256(&bytes) != *hash => Some("its content differs"),
                    Ok(_) if m.mode & 0o777 != *mode => Some("its mode differs"),
                    Ok(_) => None,
                    Err(_) => Some("it cannot be read"),
                },
                Ok(Some(_)) => Some("it is no longer a regular file"),
                Ok(None) => Some("it is gone"),
                Err(_) => Some("it cannot be reached without following a link"),
            };
            if let Some(what) = what {
                out.push(Tampering {
                    path: rel.clone(),
                    change: format!("{when} ({what}): a process of the agent's was still running"),
                });
            }
        }
        out
    }

    /// Stops watching and returns what changed among the evidence since the harness put it in
    /// place: before the watch started, while it ran, or by the end (see the module docs).
    pub fn finish(self, ws: &Beneath) -> Vec<Tampering> {
        let mut found: BTreeMap<String, BTreeSet<&'static str>> = BTreeMap::new();
        loop {
            let events = match self.inotify.read_events() {
                Ok(ev) if !ev.is_empty() => ev,
                _ => break,
            };
            for ev in events {
                if ev.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    found
                        .entry("(the judged files)".into())
                        .or_default()
                        .insert("changed too often to follow");
                    continue;
                }
                // IN_IGNORED: a watch went away with its inode (the removal itself was seen).
                if ev.mask.contains(AddWatchFlags::IN_IGNORED) {
                    continue;
                }
                match self.watched.get(&ev.wd) {
                    Some(Watched::File(rel)) => {
                        let what = if ev.mask.contains(AddWatchFlags::IN_MODIFY) {
                            "written"
                        } else {
                            "its mode, owner or links changed"
                        };
                        found.entry(rel.clone()).or_default().insert(what);
                    }
                    Some(Watched::Folder(folder, names)) => {
                        if ev
                            .mask
                            .intersects(AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF)
                        {
                            let at = if folder.is_empty() {
                                ".".to_string()
                            } else {
                                folder.clone()
                            };
                            found.entry(at).or_default().insert("its folder was moved or removed");
                            continue;
                        }
                        let Some(name) = ev.name.as_deref() else { continue };
                        if !names.contains(name) {
                            continue;
                        }
                        let shown = {
                            let n = name.to_string_lossy();
                            if folder.is_empty() {
                                n.into_owned()
                            } else {
                                format!("{folder}/{n}")
                            }
                        };
                        let what = if ev.mask.contains(AddWatchFlags::IN_MODIFY) {
                            "written"
                        } else if ev.mask.contains(AddWatchFlags::IN_ATTRIB) {
                            "its mode, owner or links changed"
                        } else if ev
                            .mask
                            .intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM)
                        {
                            "removed or moved away"
                        } else {
                            "replaced"
                        };
                        found.entry(shown).or_default().insert(what);
                    }
                    None => {}
                }
            }
        }
        let mut out: Vec<Tampering> = found
            .into_iter()
            .map(|(path, what)| Tampering {
                path,
                change: format!(
                    "changed while the verdict was taken ({}): a process of the agent's was still running",
                    what.into_iter().collect::<Vec<_>>().join(", ")
                ),
            })
            .collect();
        let seen: BTreeSet<String> = out.iter().map(|t| t.path.clone()).collect();
        let mut rest = self.early.clone();
        rest.extend(self.compare(ws, "not as the harness put it when the judged run ended"));
        let mut said = seen;
        for t in rest {
            if said.insert(t.path.clone()) {
                out.push(t);
            }
        }
        out
    }
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev<'a>(rel: &'a str, bytes: &'a [u8]) -> Evidence<'a> {
        Evidence {
            rel,
            bytes,
            mode: 0o644,
        }
    }

    fn put(root: &Path, rel: &str, bytes: &[u8]) {
        use std::os::unix::fs::PermissionsExt;
        let p = root.join(rel);
        std::fs::write(&p, bytes).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    #[test]
    fn a_write_to_a_watched_file_is_reported_and_other_names_are_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        put(dir.path(), "tests/test_a.py", b"x");
        let ws = Beneath::open(dir.path()).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("tests/test_a.py", b"x")]).unwrap();
        std::fs::create_dir(dir.path().join("tests/__pycache__")).unwrap();
        std::fs::write(dir.path().join("tests/other.txt"), "y").unwrap();
        std::fs::write(dir.path().join("tests/test_a.py"), "forged").unwrap();
        std::fs::write(dir.path().join("tests/test_a.py"), "x").unwrap();
        let found = w.finish(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "tests/test_a.py");
        assert!(found[0].change.contains("written"), "{found:?}");
    }

    /// The harness's own descriptor of a file it put in place, released after the watch began
    /// by a child that another of its threads forked while the file was open: no write, so
    /// no tampering (this once failed an honest attempt in CI).
    #[test]
    fn a_writable_descriptor_released_late_by_a_forked_child_is_not_a_write() {
        use std::io::Write;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("test.sh");
        let mut file = std::fs::File::create(&path).unwrap();
        file.write_all(b"real").unwrap();
        // SAFETY: the child only sleeps and exits; it touches no lock or allocator.
        let child = unsafe { libc::fork() };
        assert!(child >= 0, "fork failed");
        if child == 0 {
            unsafe {
                libc::usleep(300_000);
                libc::_exit(0);
            }
        }
        drop(file);
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
        let ws = Beneath::open(dir.path()).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("test.sh", b"real")]).unwrap();
        let mut status = 0;
        assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
        let found = w.finish(&ws);
        assert!(found.is_empty(), "{found:?}");
        // A real write through a descriptor opened before the watch is still seen.
        let mut held = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("test.sh", b"real")]).unwrap();
        held.write_all(b"fake").unwrap();
        drop(held);
        std::fs::write(&path, b"real").unwrap();
        let found = w.finish(&ws);
        assert!(found.iter().any(|t| t.change.contains("written")), "{found:?}");
    }

    #[test]
    fn nothing_changed_reports_nothing_and_a_moved_folder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("t")).unwrap();
        put(dir.path(), "t/a", b"x");
        let ws = Beneath::open(dir.path()).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("t/a", b"x")]).unwrap();
        let _ = std::fs::read(dir.path().join("t/a")).unwrap();
        assert!(w.finish(&ws).is_empty());
        let w = EvidenceWatch::start(&ws, [ev("t/a", b"x")]).unwrap();
        std::fs::rename(dir.path().join("t"), dir.path().join("u")).unwrap();
        let found = w.finish(&ws);
        assert!(
            found.iter().any(|t| t.path == "t" && t.change.contains("moved")),
            "{found:?}"
        );
    }

    #[test]
    fn a_write_through_a_hard_link_in_another_folder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::create_dir(dir.path().join("side")).unwrap();
        put(dir.path(), "tests/test_a.py", b"real");
        let ws = Beneath::open(dir.path()).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("tests/test_a.py", b"real")]).unwrap();
        std::fs::hard_link(dir.path().join("tests/test_a.py"), dir.path().join("side/l")).unwrap();
        std::fs::write(dir.path().join("side/l"), "forged").unwrap();
        std::fs::write(dir.path().join("side/l"), "real").unwrap();
        std::fs::remove_file(dir.path().join("side/l")).unwrap();
        let found = w.finish(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].change.contains("written"), "{found:?}");
    }

    #[test]
    fn a_change_made_before_the_watch_started_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "test_a.py", b"forged");
        let ws = Beneath::open(dir.path()).unwrap();
        // The harness put back "real"; a leftover rewrote it before the watch began.
        let w = EvidenceWatch::start(&ws, [ev("test_a.py", b"real")]).unwrap();
        let found = w.finish(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].change.contains("before the judged run started"), "{found:?}");
    }

    #[test]
    fn a_change_that_leaves_no_event_is_found_when_the_phase_ends() {
        let dir = tempfile::tempdir().unwrap();
        put(dir.path(), "test_a.py", b"real");
        let ws = Beneath::open(dir.path()).unwrap();
        let w = EvidenceWatch::start(&ws, [ev("test_a.py", b"real")]).unwrap();
        // Drain the queue as if the change had made no event (a write through a memory map).
        put(dir.path(), "test_a.py", b"fake");
        while w.inotify.read_events().is_ok_and(|e| !e.is_empty()) {}
        let found = w.finish(&ws);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].change.contains("when the judged run ended"), "{found:?}");
    }
}
