//! Watching the evidence while a verdict is taken from it.
//!
//! Under an attempt's namespaces a service the agent started lives on through the final
//! judged phase (the verifier's tests call it), and so does anything else the agent left
//! running: a loop that rewrites the hidden tests or the shipped test files after the harness
//! put them in place, and puts them back before anyone looks. Restoring files before the phase
//! and checking them after cannot see that. So for the length of the phase the harness
//! watches, with inotify, every file the verdict rests on — the protected files it restored,
//! the hidden checks and the verifier's files it placed — and the folders that hold them:
//! any write, attribute change, removal, rename or creation of one of those names, and any
//! move or removal of a folder that holds them, by anyone (the judged run's own code
//! included, since it is the agent's), is reported as tampering and the attempt cannot pass.
//!
//! Files the runners write next to tests (`__pycache__`, `.pytest_cache`) and new files of
//! other names are not evidence and are not watched; neither is reading. An event queue that
//! overflowed is reported as tampering too: what changed can no longer be known.
//!
//! Linux only (inotify); elsewhere nothing of the agent's runs during the phase (there are no
//! attempt namespaces, and the persistent shell is ended before it).

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::Path;

use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

use super::Tampering;

/// An inotify watch over the files one judged phase rests on.
pub struct EvidenceWatch {
    inotify: Inotify,
    /// Watched folder → its workspace path and the names in it that are evidence.
    folders: BTreeMap<WatchDescriptor, (String, BTreeSet<OsString>)>,
}

impl EvidenceWatch {
    /// Starts watching the files `rels` (workspace-relative) below `root` (the workspace as
    /// the harness sees it). Files that do not exist are watched by name in their folder.
    pub fn start<'a>(root: &Path, rels: impl IntoIterator<Item = &'a str>) -> std::io::Result<EvidenceWatch> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC).map_err(std::io::Error::from)?;
        let mut by_folder: BTreeMap<String, BTreeSet<OsString>> = BTreeMap::new();
        for rel in rels {
            let p = Path::new(rel);
            let (Some(name), parent) = (p.file_name(), p.parent()) else {
                continue;
            };
            let folder = parent.map(|d| d.to_string_lossy().into_owned()).unwrap_or_default();
            by_folder.entry(folder).or_default().insert(name.to_os_string());
        }
        let mut folders = BTreeMap::new();
        let mask = AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_ATTRIB
            | AddWatchFlags::IN_CLOSE_WRITE
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
            // holds none of the evidence now; the restore before the phase reported it.
            if let Ok(wd) = inotify.add_watch(&dir, mask) {
                folders.insert(wd, (folder, names));
            }
        }
        Ok(EvidenceWatch { inotify, folders })
    }

    /// Stops watching and returns what changed among the evidence since [`EvidenceWatch::start`].
    pub fn finish(self) -> Vec<Tampering> {
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
                let Some((folder, names)) = self.folders.get(&ev.wd) else {
                    continue;
                };
                let shown = |name: &std::ffi::OsStr| {
                    let n = name.to_string_lossy();
                    if folder.is_empty() {
                        n.into_owned()
                    } else {
                        format!("{folder}/{n}")
                    }
                };
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
                let what = if ev
                    .mask
                    .intersects(AddWatchFlags::IN_MODIFY | AddWatchFlags::IN_CLOSE_WRITE)
                {
                    "written"
                } else if ev.mask.contains(AddWatchFlags::IN_ATTRIB) {
                    "its mode or owner changed"
                } else if ev
                    .mask
                    .intersects(AddWatchFlags::IN_DELETE | AddWatchFlags::IN_MOVED_FROM)
                {
                    "removed or moved away"
                } else {
                    "replaced"
                };
                found.entry(shown(name)).or_default().insert(what);
            }
        }
        found
            .into_iter()
            .map(|(path, what)| Tampering {
                path,
                change: format!(
                    "changed while the verdict was taken ({}): a process of the agent's was still running",
                    what.into_iter().collect::<Vec<_>>().join(", ")
                ),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_to_a_watched_file_is_reported_and_other_names_are_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tests")).unwrap();
        std::fs::write(dir.path().join("tests/test_a.py"), "x").unwrap();
        let w = EvidenceWatch::start(dir.path(), ["tests/test_a.py"]).unwrap();
        std::fs::create_dir(dir.path().join("tests/__pycache__")).unwrap();
        std::fs::write(dir.path().join("tests/other.txt"), "y").unwrap();
        std::fs::write(dir.path().join("tests/test_a.py"), "forged").unwrap();
        std::fs::write(dir.path().join("tests/test_a.py"), "x").unwrap();
        let found = w.finish();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].path, "tests/test_a.py");
        assert!(found[0].change.contains("written"), "{found:?}");
    }

    #[test]
    fn nothing_changed_reports_nothing_and_a_moved_folder_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("t")).unwrap();
        std::fs::write(dir.path().join("t/a"), "x").unwrap();
        let w = EvidenceWatch::start(dir.path(), ["t/a"]).unwrap();
        let _ = std::fs::read(dir.path().join("t/a")).unwrap();
        assert!(w.finish().is_empty());
        let w = EvidenceWatch::start(dir.path(), ["t/a"]).unwrap();
        std::fs::rename(dir.path().join("t"), dir.path().join("u")).unwrap();
        let found = w.finish();
        assert!(
            found.iter().any(|t| t.path == "t" && t.change.contains("moved")),
            "{found:?}"
        );
    }
}
